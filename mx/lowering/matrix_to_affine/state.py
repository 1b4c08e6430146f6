"""What the patterns of `convert-matrix-to-affine` share: the lowering state
(buffers, fusion plan, kernel choices) and the base pattern."""

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field

from xdsl.dialects import func
from xdsl.ir import Attribute, Block, Operation, SSAValue
from xdsl.pattern_rewriter import RewritePattern
from xdsl.rewriter import InsertPoint, Rewriter

from mx.dialects.matrix import (
    ConstantOp,
    LoadOp,
    MatrixType,
    SplatOp,
    StoreOp,
    TransposeOp,
)
from mx.lowering.matrix_to_affine.abi import abi_value
from mx.lowering.matrix_to_affine.blocked import Blocking
from mx.lowering.matrix_to_affine.buffers import Allocator, element_bytes
from mx.lowering.matrix_to_affine.elements import (
    Emitter,
    FunctionConstants,
    as_matrix,
    buffer_of,
)
from mx.lowering.matrix_to_affine.fusion import FusionPlan, decodes_packed, is_decode
from mx.lowering.matrix_to_affine.kernel_remarks import KernelRemark
from mx.lowering.matrix_to_affine.vectors import (
    copy_blocks,
    lanes,
    readable,
    vectorizable,
)


@dataclass
class LoweringState:
    """What the patterns of one pass run share."""

    plan: FusionPlan
    vector_bits: int
    """Bits of a machine vector (0: scalar loop nests only)."""
    blocking: Blocking
    row_major: bool = False
    """Matrices cross function boundaries in row-major buffers (abi.py)."""
    allocator: Allocator = field(default_factory=Allocator)
    owned: set[SSAValue] = field(default_factory=set[SSAValue])
    """Buffers of op results that nothing else refers to (insert may update
    them in place)."""
    writes: dict[Operation, dict[int, SSAValue]] = field(
        default_factory=dict[Operation, dict[int, SSAValue]]
    )
    """Per terminator, the buffer each matrix operand (by index) is copied
    into."""
    out_params: dict[func.FuncOp, list[SSAValue]] = field(
        default_factory=dict[func.FuncOp, list[SSAValue]]
    )
    destinations: dict[SSAValue, SSAValue] = field(
        default_factory=dict[SSAValue, SSAValue]
    )
    """Returned values computed straight into their out-parameter (no copy
    at the return; functions.py says which)."""
    emitted: dict[func.FuncOp, Counter[str]] = field(
        default_factory=dict[func.FuncOp, Counter[str]]
    )
    """Per function, the `transposes` (copies reading a buffer with swapped
    indices) and `temporaries` (buffers filled with a copy of a value that
    exists elsewhere) emitted, for `matrix-lowering-remarks`."""

    constants: dict[func.FuncOp, FunctionConstants] = field(
        default_factory=dict[func.FuncOp, FunctionConstants]
    )
    kernels: list[KernelRemark] = field(default_factory=list[KernelRemark])
    """The kernel of each contraction, for `matrix-lowering-remarks`."""

    def choose(
        self,
        op: Operation,
        kernel: str,
        fastest: str | None = None,
        reason: str | None = None,
        note: str | None = None,
    ) -> None:
        """Record that `op` gets `kernel` (not `fastest`, for `reason`)."""
        self.kernels.append(KernelRemark.of(op, kernel, fastest, reason, note))

    def no_vectors(self, t: Attribute) -> str:
        """Why a contraction summing in `t` gets no vectors."""
        if self.vector_bits == 0:
            return "vector-bits=0"
        return f"{t} elements are not vectorized"

    def emitter(self, op: Operation) -> Emitter:
        return Emitter.before(op, self.plan.fused, self._constants(op))

    def _constants(self, op: Operation) -> FunctionConstants | None:
        function = self.allocator.enclosing_function(op)
        if function is None or (entry := function.body.first_block) is None:
            return None
        constants = self.constants.get(function)
        if constants is None:
            constants = self.constants[function] = FunctionConstants(entry)
        return constants

    def buffer(self, t: MatrixType, at: Operation, owned: bool = True) -> SSAValue:
        buffer = self.allocator.allocate(t, at)
        if owned:
            self.owned.add(buffer)
        return buffer

    def result_buffer(self, value: SSAValue, at: Operation) -> SSAValue:
        """The buffer `at` computes its result `value` into: the function's
        out-parameter if `value` is returned (`destinations`), else its own."""
        if (out := self.destinations.get(value)) is not None:
            return out
        return self.buffer(matrix_type(value), at)

    def temporary(self, t: MatrixType, at: Operation) -> SSAValue:
        """A buffer for a copy of a value that exists elsewhere."""
        self._count("temporaries", at)
        return self.buffer(t, at)

    def count_temporary(self, at: Operation) -> None:
        """Counts a temporary that `at`'s lowering allocates itself."""
        self._count("temporaries", at)

    def _count(self, key: str, at: Operation) -> None:
        if (function := self.allocator.enclosing_function(at)) is not None:
            self.emitted.setdefault(function, Counter())[key] += 1

    def _transposes(self, value: SSAValue) -> bool:
        """True if computing `value` reads a matrix through a fused transpose
        (of anything but a splat, which has no layout)."""
        pending = [value]
        while pending:
            op = pending.pop().owner
            if not isinstance(op, Operation) or op not in self.plan.fused:
                continue
            if isinstance(op, TransposeOp) and not isinstance(
                op.input.owner, SplatOp | ConstantOp
            ):
                return True
            pending += [x for x in op.operands if is_matrix(x)]
        return False

    def materialize(self, value: SSAValue, target: SSAValue | StoreOp, at: Operation):
        """Write every element of `value` into a buffer or a matrix store's
        memory before `at`: in vector blocks where possible."""
        if self._transposes(value):
            self._count("transposes", at)
        e = self.emitter(at)
        if copy_blocks(e, value, target, self.vector_bits):
            return
        if isinstance(target, StoreOp):
            store = target

            def body(f: Emitter, r: SSAValue, c: SSAValue) -> None:
                f.store_memory(f.element(value, r, c), store, r, c)

            e.for_each_element(matrix_type(value), body)
        else:
            e.materialize_into(value, target)

    def as_buffer(self, value: SSAValue, at: Operation) -> SSAValue:
        """A buffer holding `value`: its own, or a temporary filled before `at`."""
        if (buffer := buffer_of(value)) is not None:
            return buffer
        buffer = self.temporary(matrix_type(value), at)
        self.materialize(value, buffer, at)
        return buffer

    def readable_along_rows(self, value: SSAValue, at: Operation) -> SSAValue:
        """`value`, or a copy of it in a buffer if its columns cannot be read
        as vectors. A fused dequantization keeps being decoded where it is
        read: only the narrow data it reads across is copied."""
        if readable(value, self.plan.fused, True):
            return value
        loads = self._loads_across(value)
        if loads is not None:
            for load in loads:
                buffer = self.buffer(matrix_type(load.result), at)
                self.materialize(load.result, buffer, at)
                # (the buffer is allocated at function entry: the cast may
                # stand where the load did)
                cast = as_matrix(buffer, matrix_type(load.result))
                Rewriter.insert_op(cast, InsertPoint.after(load))
                load.result.replace_all_uses_with(cast.results[0])
            if readable(value, self.plan.fused, True):
                return value
        return as_matrix_before(self.as_buffer(value, at), value, at)

    def _loads_across(self, value: SSAValue) -> list[LoadOp] | None:
        """The row-major loads of the fused dequantization computing
        `value`, if copying them takes fewer bytes than copying `value`."""
        loads: list[LoadOp] = []
        pending = [value]
        while pending:
            op = pending.pop().owner
            if not isinstance(op, Operation) or op not in self.plan.fused:
                continue
            if isinstance(op, LoadOp):
                if not op.COLUMN_MAJOR:
                    loads.append(op)
                continue
            if not is_decode(op):
                return None
            pending += [x for x in op.operands if is_matrix(x)]
        size = sum(
            element_bytes(matrix_type(load.result).element_type) for load in loads
        )
        if not loads or size >= element_bytes(matrix_type(value).element_type):
            return None
        return loads

    def decoded_in_place(self, value: SSAValue) -> bool:
        """True if `value` reads packed memory and cannot be read in vector
        blocks along rows: it is then read element by element (decoded in
        registers), never copied into a buffer of its wider type."""
        fused = self.plan.fused
        return decodes_packed(value, fused) and not readable(value, fused, True)

    def lanes(self, t: MatrixType) -> int:
        """Elements per machine vector; 0 if `t` stays scalar."""
        if self.vector_bits == 0 or not vectorizable(t.element_type):
            return 0
        return lanes(t.element_type, self.vector_bits)

    def reads(self, value: SSAValue, buffers: Sequence[SSAValue]) -> bool:
        """True if computing `value` reads one of `buffers`."""
        pending, seen = [value], {value}
        while pending:
            value = pending.pop()
            if (buffer := buffer_of(value)) is not None:
                if buffer in buffers:
                    return True
            elif isinstance(op := value.owner, Operation):
                fresh = [x for x in op.operands if is_matrix(x) and x not in seen]
                seen.update(fresh)
                pending += fresh
        return False

    def copy_to_targets(
        self,
        values: Sequence[SSAValue],
        targets: Sequence[SSAValue | None],
        at: Operation,
    ) -> None:
        """Assign values[i] to targets[i] (a parallel copy) before `at`."""
        written = [t for t in targets if t is not None]
        sources: list[SSAValue | None] = []
        for value, target in zip(values, targets, strict=True):
            if target is None or buffer_of(value) is target:
                sources.append(None)
            elif self.reads(value, written):
                temp = self.temporary(matrix_type(value), at)
                self.materialize(value, temp, at)
                sources.append(as_matrix_before(temp, value, at))
            else:
                sources.append(value)
        for source, target in zip(sources, targets, strict=True):
            if source is not None and target is not None:
                self.materialize(source, target, at)


def matrix_type(value: SSAValue) -> MatrixType:
    t = value.type
    assert isinstance(t, MatrixType)
    return t


def as_matrix_before(buffer: SSAValue, like: SSAValue, at: Operation) -> SSAValue:
    cast = as_matrix(buffer, matrix_type(like))
    Rewriter.insert_op(cast, InsertPoint.before(at))
    return cast.results[0]


def replace_block_arg(block: Block, index: int, buffer: SSAValue) -> None:
    """Replace a matrix block argument by the matrix held in `buffer`."""
    arg = block.args[index]
    cast = as_matrix(buffer, matrix_type(arg))
    Rewriter.insert_op(cast, InsertPoint.at_start(block))
    arg.replace_all_uses_with(cast.results[0])
    block.erase_arg(arg)


def is_matrix(value: SSAValue) -> bool:
    return isinstance(value.type, MatrixType)


@dataclass
class MatrixPattern(RewritePattern):
    state: LoweringState

    def _abi_value(self, value: SSAValue, at: Operation) -> SSAValue:
        return abi_value(value, self.state.row_major, at, self.state.plan.fused)

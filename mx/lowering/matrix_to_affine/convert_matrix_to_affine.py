"""`convert-matrix-to-affine`: matrix values -> memref buffers + affine loop nests.

Buffer layout and allocation: `matrix_to_affine/buffers.py` (column-major
`memref<CxRxT>`, stack up to 64 KiB, heap above, rejected above 4 GiB;
buffers whose lifetimes do not overlap are shared, and at most `stack-bytes`
per function stay on the stack).
Fusion: `matrix_to_affine/fusion.py` (elementwise chains and views emit no
buffer; their elements are computed inside the consumer's loop nest).
Vectors (`matrix_to_affine/vectors.py`, option `vector-bits`, default 512):
elementwise nests and copies of every arithmetic element type (f16, bf16,
f32, f64, i8..i64) work on vector blocks along the contiguous dimension
(transposing copies on square tiles in registers), and products are
register-blocked (`matrix_to_affine/products.py`); i4/i6 containers, and
`vector-bits=0`, keep scalar loop nests. Products whose operands
take at least `blocked-min-bytes` (default 96 KiB) are cache-blocked and
packed (`matrix_to_affine/blocked.py`), with block sizes derived from the
`l1-bytes`/`l2-bytes`/`l3-bytes` options (default: the target's caches,
`matrix_to_affine/caches.py`: the host's in the JIT, one core of an Intel
Sapphire Rapids for mx-opt: 48 KiB, 2 MiB, and 32 MiB of L3).

Functions: a matrix argument becomes a `memref<CxRxT>` argument (the caller's
column-major buffer, never written by the callee; with `layout=row-major` a
`memref<RxCxT>` row-major buffer, see `matrix_to_affine/abi.py`); each matrix result becomes
an out-parameter `memref<CxRxT>` appended after the arguments, in result order,
written by `func.return`; the other results stay results. After
`convert-to-llvm` every such memref is one bare `ptr`, so
`func.func @f(%a: !matrix.matrix<2x3xf32>) -> !matrix.matrix<3x2xf32>` is
callable from C as `void f(const float *a, float *out)` with `a` and `out`
column-major and `out` not aliasing any argument. `func.call` passes operand
buffers and fresh result buffers.

Control flow: a matrix carried by `scf.for`, `scf.while` or returned by
`scf.if` lives in one buffer allocated before the op; terminators copy into
it (through a temporary when the copy reads a buffer it overwrites). Every
buffer is allocated at function entry, so loops reuse their buffers.

The ops are rewritten in program order (definitions before uses, a region's
owner before the region): the patterns below are applied by the pass in a
single forward walk, sharing one `LoweringState`.
"""

from collections import Counter
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field

from xdsl.context import Context
from xdsl.dialects import cf, func, vector
from xdsl.dialects.builtin import (
    BFloat16Type,
    DictionaryAttr,
    Float16Type,
    FunctionType,
    ModuleOp,
    UnrealizedConversionCastOp,
    VectorType,
)
from xdsl.ir import Attribute, Block, Operation, Region, SSAValue
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import (
    GreedyRewritePatternApplier,
    PatternRewriter,
    RewritePattern,
    op_type_rewrite_pattern,
)
from xdsl.rewriter import InsertPoint, Rewriter

from mx.diagnostics import OpDiagnostic
from mx.dialects.arbfp import ScaledConvertToOp
from mx.dialects.matrix import (
    ConstantOp,
    ExtractOp,
    InsertOp,
    LoadOp,
    MatmulAddOp,
    MatmulOp,
    MatrixType,
    MatvecOp,
    OuterProductOp,
    SplatOp,
    StoreOp,
    TransposeOp,
    element_type_of,
)
from mx.lowering.matrix_to_affine.abi import (
    LAYOUTS,
    abi_type,
    abi_value,
    matrix_of_abi_buffer,
)
from mx.lowering.matrix_to_affine.block_scaled import quantize_into
from mx.lowering.matrix_to_affine.blocked import (
    Blocking,
    Gemm,
    Gemv,
    blocked_gemm,
    blocked_matvec,
)
from mx.lowering.matrix_to_affine.buffers import (
    DEFAULT_STACK_BYTES,
    Allocator,
    element_bytes,
)
from mx.lowering.matrix_to_affine.caches import target_caches
from mx.lowering.matrix_to_affine.carriers import (
    Slot,
    block_slots,
    rebuild,
    region_slots,
    successor_operands,
)
from mx.lowering.matrix_to_affine.decoded_matvec import (
    Weights,
    decoded_matvec,
    fused_kernel,
    match_weights,
)
from mx.lowering.matrix_to_affine.elements import (
    Emitter,
    Index,
    IndexConstants,
    as_matrix,
    buffer_of,
    narrow,
    widen,
)
from mx.lowering.matrix_to_affine.fusion import (
    BLOCK_SCALED,
    ELEMENTWISE,
    FusionPlan,
    decodes_packed,
    is_decode,
)
from mx.lowering.matrix_to_affine.kernel_remarks import (
    CACHE_BLOCKED,
    ELEMENT_BY_ELEMENT,
    SCALAR,
    UNREADABLE_PACKED,
    VECTORIZED,
    VERSIONED,
    KernelRemark,
    record,
)
from mx.lowering.matrix_to_affine.legality import check_lowerable
from mx.lowering.matrix_to_affine.products import (
    Product,
    accumulation_type,
    blocked_product,
    dot,
)
from mx.lowering.matrix_to_affine.vectors import (
    copy_blocks,
    for_each_block,
    lanes,
    read_block,
    readable,
    vectorizable,
    write_block,
)
from mx.lowering.walk import walk


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
    emitted: dict[func.FuncOp, Counter[str]] = field(
        default_factory=dict[func.FuncOp, Counter[str]]
    )
    """Per function, the `transposes` (copies reading a buffer with swapped
    indices) and `temporaries` (buffers filled with a copy of a value that
    exists elsewhere) emitted, for `matrix-lowering-remarks`."""

    constants: dict[func.FuncOp, IndexConstants] = field(
        default_factory=dict[func.FuncOp, IndexConstants]
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

    def _constants(self, op: Operation) -> IndexConstants | None:
        function = self.allocator.enclosing_function(op)
        if function is None or (entry := function.body.first_block) is None:
            return None
        constants = self.constants.get(function)
        if constants is None:
            constants = self.constants[function] = IndexConstants(entry)
        return constants

    def buffer(self, t: MatrixType, at: Operation, owned: bool = True) -> SSAValue:
        buffer = self.allocator.allocate(t, at)
        if owned:
            self.owned.add(buffer)
        return buffer

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
            pending += [x for x in op.operands if _is_matrix(x)]
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

            e.for_each_element(_matrix(value), body)
        else:
            e.materialize_into(value, target)

    def as_buffer(self, value: SSAValue, at: Operation) -> SSAValue:
        """A buffer holding `value`: its own, or a temporary filled before `at`."""
        if (buffer := buffer_of(value)) is not None:
            return buffer
        buffer = self.temporary(_matrix(value), at)
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
                buffer = self.buffer(_matrix(load.result), at)
                self.materialize(load.result, buffer, at)
                # (the buffer is allocated at function entry: the cast may
                # stand where the load did)
                cast = as_matrix(buffer, _matrix(load.result))
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
            pending += [x for x in op.operands if _is_matrix(x)]
        size = sum(element_bytes(_matrix(load.result).element_type) for load in loads)
        if not loads or size >= element_bytes(_matrix(value).element_type):
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
                fresh = [x for x in op.operands if _is_matrix(x) and x not in seen]
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
                temp = self.temporary(_matrix(value), at)
                self.materialize(value, temp, at)
                sources.append(as_matrix_before(temp, value, at))
            else:
                sources.append(value)
        for source, target in zip(sources, targets, strict=True):
            if source is not None and target is not None:
                self.materialize(source, target, at)


def _matrix(value: SSAValue) -> MatrixType:
    t = value.type
    assert isinstance(t, MatrixType)
    return t


def as_matrix_before(buffer: SSAValue, like: SSAValue, at: Operation) -> SSAValue:
    cast = as_matrix(buffer, _matrix(like))
    Rewriter.insert_op(cast, InsertPoint.before(at))
    return cast.results[0]


def _replace_block_arg(block: Block, index: int, buffer: SSAValue) -> None:
    """Replace a matrix block argument by the matrix held in `buffer`."""
    arg = block.args[index]
    cast = as_matrix(buffer, _matrix(arg))
    Rewriter.insert_op(cast, InsertPoint.at_start(block))
    arg.replace_all_uses_with(cast.results[0])
    block.erase_arg(arg)


def _is_matrix(value: SSAValue) -> bool:
    return isinstance(value.type, MatrixType)


@dataclass
class MatrixPattern(RewritePattern):
    state: LoweringState

    def _abi_value(self, value: SSAValue, at: Operation) -> SSAValue:
        return abi_value(value, self.state.row_major, at, self.state.plan.fused)


# ---------------------------------------------------------------------------
# Values computed into their own buffer
# ---------------------------------------------------------------------------


@dataclass
class MaterializeElementwise(MatrixPattern):
    """%r = <elementwise op or load> (not fused) ->
    %buf = memref.alloca; affine.for %c { affine.for %r { buf[c, r] = element } }."""

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter, /) -> None:
        if not isinstance(op, (*ELEMENTWISE, *BLOCK_SCALED, OuterProductOp, LoadOp)):
            return
        if op in self.state.plan.fused or not _is_matrix(op.results[0]):
            return
        t = _matrix(op.results[0])
        buffer = self.state.buffer(t, op)
        # Computed as if fused into a copy of its value into the buffer.
        self.state.plan.fused.add(op)
        self.state.materialize(op.results[0], buffer, op)
        self.state.plan.fused.remove(op)
        rewriter.replace(op, as_matrix(buffer, t))


@dataclass
class LowerScaledConvertTo(MatrixPattern):
    """%q, %s = arbfp.scaled_convert_to %x -> two buffers written by one loop
    nest over rows and blocks (`block_scaled.py`)."""

    @op_type_rewrite_pattern
    def match_and_rewrite(
        self, op: ScaledConvertToOp, rewriter: PatternRewriter, /
    ) -> None:
        if not _is_matrix(op.input):
            return
        elements = self.state.buffer(_matrix(op.result), op)
        scales = self.state.buffer(_matrix(op.scales), op)
        lanes = self.state.lanes(_matrix(op.input))
        quantize_into(self.state.emitter(op), op, elements, scales, lanes)
        casts = [
            as_matrix(elements, _matrix(op.result)),
            as_matrix(scales, _matrix(op.scales)),
        ]
        rewriter.replace(op, casts, [c.results[0] for c in casts])


@dataclass
class MaterializeConstant(MatrixPattern):
    """%m = matrix.constant dense<...> (not a splat) -> a buffer with one
    affine.store per element."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: ConstantOp, rewriter: PatternRewriter, /) -> None:
        if op in self.state.plan.fused:
            return
        t = _matrix(op.result)
        buffer = self.state.buffer(t, op)
        e = self.state.emitter(op)
        values = op.row_major_values()
        for r in range(t.rows):
            for c in range(t.cols):
                value = e.scalar_constant(values[r * t.cols + c], t.element_type)
                e.store_buffer(value, buffer, r, c)
        rewriter.replace(op, as_matrix(buffer, t))


@dataclass
class LowerMatmul(MatrixPattern):
    """%c = matrix.matmul %a, %b (or matmul_add %a, %b, %acc) -> the
    register-blocked vector product into a buffer (%a and %acc read as
    column vectors, copied first if they cannot be); without vectors, a loop
    nest over (c, r) around an affine.for over k carrying the sum
    (products.py). Factors are widened where they are read, to the result
    type or to the `accumulation_type` the sum is kept in, but for the B of
    an f16/bf16 product summed in f32, widened once into a temporary."""

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter, /) -> None:
        if not isinstance(op, MatmulOp | MatmulAddOp):
            return
        t = _matrix(op.result)
        depth = _matrix(op.lhs).cols
        acc = op.acc if isinstance(op, MatmulAddOp) else None
        buffer = self.state.buffer(t, op)
        unsigned = op.unsigned is not None
        compute = accumulation_type(t.element_type, op.fastmath)

        def factor(e: Emitter, x: SSAValue) -> SSAValue:
            return widen(e, x, compute, unsigned)

        lanes = self.state.lanes(t.with_element_type(compute))
        if lanes and self.state.decoded_in_place(op.lhs):
            lanes = 0
            self.state.choose(op, ELEMENT_BY_ELEMENT, VECTORIZED, UNREADABLE_PACKED)
        elif not lanes:
            self.state.choose(op, SCALAR, VECTORIZED, self.state.no_vectors(compute))
        if lanes:
            lhs = self.state.readable_along_rows(op.lhs, op)
            acc = None if acc is None else self.state.readable_along_rows(acc, op)
            # The packed kernel reads factors of the result type only, and
            # sums in it: f16/bf16 keep the register-blocked kernel.
            if (
                not op.is_mixed()
                and not isinstance(t.element_type, Float16Type | BFloat16Type)
                and self.state.blocking.applies(t.rows, t.cols, depth, t.element_type)
            ):
                gemm = Gemm(
                    t.rows,
                    t.cols,
                    depth,
                    lhs,
                    op.rhs,
                    acc,
                    buffer,
                    t.element_type,
                    op.fastmath,
                    lanes,
                    factor,
                    readable(op.rhs, self.state.plan.fused, True),
                    readable(op.rhs, self.state.plan.fused, False),
                )
                self.state.choose(op, CACHE_BLOCKED)
                blocked_gemm(
                    self.state.emitter(op),
                    gemm,
                    self.state.blocking,
                    lambda m: self.state.temporary(m, op),
                    lambda: self.state.count_temporary(op),
                )
                rewriter.replace(op, as_matrix(buffer, t))
                return
            self.state.choose(op, VECTORIZED)

            def rhs(e: Emitter, k: Index, c: Index) -> SSAValue:
                return factor(e, e.element(op.rhs, k, c))

            if compute != t.element_type and not op.is_mixed():
                wide = self._widened(op.rhs, compute, lanes, op)

                def rhs(e: Emitter, k: Index, c: Index) -> SSAValue:
                    return e.load_buffer(wide, k, c)

            product = Product(
                t.rows,
                t.cols,
                depth,
                lambda e, r, k, w: factor(e, read_block(e, lhs, r, k, w, True)),
                rhs,
                None
                if acc is None
                else lambda e, r, c, w, a=acc: factor(
                    e, read_block(e, a, r, c, w, True)
                ),
                lambda e, v, r, c: write_block(
                    e, narrow(e, v, t.element_type), buffer, r, c
                ),
                compute,
                op.fastmath,
                lanes,
                self.state.blocking.parallel(t.rows * t.cols * depth),
            )
            blocked_product(self.state.emitter(op), product)
            rewriter.replace(op, as_matrix(buffer, t))
            return

        def body(e: Emitter, r: SSAValue, c: SSAValue) -> None:
            total = dot(
                e,
                lambda f, k: factor(f, f.element(op.lhs, r, k)),
                lambda f, k: factor(f, f.element(op.rhs, k, c)),
                depth,
                op.fastmath,
                None if acc is None else lambda f, a=acc: factor(f, f.element(a, r, c)),
            )
            e.store_buffer(narrow(e, total, t.element_type), buffer, r, c)

        self.state.emitter(op).for_each_element(t, body)
        rewriter.replace(op, as_matrix(buffer, t))

    def _widened(
        self, value: SSAValue, compute: Attribute, lanes: int, at: Operation
    ) -> SSAValue:
        """A temporary holding `value` (the B of an f16/bf16 product summed in
        f32) widened to `compute` by vector conversions: the product then
        broadcasts each element from memory (on AVX-512, a memory operand of
        its FMA) instead of converting it once per row block. Mixed-precision
        products keep widening in registers (no matrix of the wider type)."""
        t = _matrix(value)
        source = self.state.readable_along_rows(value, at)
        wide = self.state.temporary(t.with_element_type(compute), at)

        def block(f: Emitter, r: Index, c: SSAValue, width: int) -> None:
            narrow_block = read_block(f, source, r, c, width, True)
            write_block(f, widen(f, narrow_block, compute, False), wide, r, c)

        for_each_block(self.state.emitter(at), t, True, lanes, block)
        return wide


@dataclass
class LowerMatvec(MatrixPattern):
    """%y = matrix.matvec %m, %x[, %b] -> the blocked product of %m by %x
    as a one-column matrix (%x, %b and %y in one-column buffers); without
    vectors, affine.for %r iter_args(%v) { dot product over k; vector.insert
    into %v }. Factors are widened where they are read (as for matmul)."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: MatvecOp, rewriter: PatternRewriter, /) -> None:
        m = _matrix(op.matrix)
        result = op.result_element
        compute = accumulation_type(result, op.fastmath)
        vector_type = op.result.type
        assert isinstance(vector_type, VectorType)
        e = self.state.emitter(op)
        lanes = self.state.lanes(MatrixType(m.rows, 1, compute))
        weights = match_weights(op, self.state.plan.fused, lanes)
        if isinstance(weights, Weights):
            note = VERSIONED if weights.versioned else None
            self.state.choose(op, fused_kernel(op.matrix), note=note)
            y = decoded_matvec(
                e,
                op,
                weights,
                lanes,
                lambda t: self.state.temporary(t, op),
                lambda f: self._by_elements(op, m, compute, f),
                self.state.blocking.parallel(m.rows * m.cols),
            )
            rewriter.replace(op, [], [y])
            return
        # (a dequantization the fused kernel does not take: why not)
        fastest = None if weights is None else fused_kernel(op.matrix)
        if self.state.decoded_in_place(op.matrix) and not readable(
            op.matrix, self.state.plan.fused, False
        ):
            self.state.choose(
                op,
                ELEMENT_BY_ELEMENT,
                fastest or VECTORIZED,
                weights or UNREADABLE_PACKED,
            )
            rewriter.replace(op, [], [self._by_elements(op, m, compute)])
            return
        if lanes:
            if self.state.blocking.applies(m.rows, 1, m.cols, result) or self._by_tiles(
                op.matrix, lanes
            ):
                self.state.choose(op, CACHE_BLOCKED, fastest, weights)
                rewriter.replace(op, [], [self._cache_blocked(op, m, lanes)])
                return
            self.state.choose(op, VECTORIZED, fastest, weights)
            rewriter.replace(op, [], [self._blocked(op, m, compute, lanes)])
            return
        self.state.choose(
            op, SCALAR, fastest or VECTORIZED, weights or self.state.no_vectors(compute)
        )
        zero = e.scalar_constant(0, result)
        init = e.emit(vector.BroadcastOp(zero, vector_type))
        bias = op.bias
        unsigned = op.unsigned is not None

        def row(f: Emitter, r: SSAValue, carried: Sequence[SSAValue]) -> list[SSAValue]:
            def element_of(g: Emitter, v: SSAValue, i: Index) -> SSAValue:
                x = g.emit(vector.ExtractOp(v, [i], element_type_of(v.type)))
                return widen(g, x, compute, unsigned)

            total = dot(
                f,
                lambda g, k: widen(g, g.element(op.matrix, r, k), compute, unsigned),
                lambda g, k: element_of(g, op.vector, k),
                m.cols,
                op.fastmath,
                None if bias is None else lambda g, b=bias: element_of(g, b, r),
            )
            rounded = narrow(f, total, result)
            return [f.emit(vector.InsertOp(rounded, carried[0], [r]))]

        (result_vector,) = e.loop(0, m.rows, [init], row)
        rewriter.replace(op, [], [result_vector])

    def _by_tiles(self, matrix: SSAValue, lanes: int) -> bool:
        """True if `matrix` is contiguous only along its rows (a row-major
        load, possibly decoded) and has a full tile of rows: read in tiles
        transposed in registers rather than copied into a buffer (of the
        wider type, for dequantized data)."""
        fused = self.state.plan.fused
        return (
            _matrix(matrix).rows >= lanes
            and not readable(matrix, fused, True)
            and readable(matrix, fused, False)
        )

    def _by_elements(
        self,
        op: MatvecOp,
        m: MatrixType,
        compute: Attribute,
        e: Emitter | None = None,
    ) -> SSAValue:
        """One dot product per row, reading the matrix element by element
        (decoded in registers), %x and %y in one-column buffers; emitted
        with `e` (default: before `op`)."""
        e = e or self.state.emitter(op)
        result = op.result_element
        unsigned = op.unsigned is not None
        x = self.state.buffer(
            MatrixType(m.cols, 1, element_type_of(op.vector.type)), op
        )
        y = self.state.buffer(MatrixType(m.rows, 1, result), op)
        zero = e.index(0)
        e.builder.insert(vector.StoreOp(op.vector, x, [zero, zero]))
        if op.bias is not None:
            e.builder.insert(vector.StoreOp(op.bias, y, [zero, zero]))

        def row(f: Emitter, r: SSAValue, _: Sequence[SSAValue]) -> list[SSAValue]:
            total = dot(
                f,
                lambda g, k: widen(g, g.element(op.matrix, r, k), compute, unsigned),
                lambda g, k: widen(g, g.load_buffer(x, k, 0), compute, unsigned),
                m.cols,
                op.fastmath,
                None
                if op.bias is None
                else lambda g: widen(g, g.load_buffer(y, r, 0), compute, unsigned),
            )
            f.store_buffer(narrow(f, total, result), y, r, 0)
            return []

        e.loop(0, m.rows, [], row)
        return e.emit(vector.LoadOp(y, [zero, zero], op.result.type))

    def _cache_blocked(self, op: MatvecOp, m: MatrixType, lanes: int) -> SSAValue:
        fused = self.state.plan.fused
        along_rows = readable(op.matrix, fused, True) or not readable(
            op.matrix, fused, False
        )
        matrix = (
            self.state.readable_along_rows(op.matrix, op) if along_rows else op.matrix
        )
        result = op.result_element
        unsigned = op.unsigned is not None
        gemv = Gemv(
            m.rows,
            m.cols,
            matrix,
            op.vector,
            op.bias,
            result,
            op.fastmath,
            lanes,
            lambda f, x: widen(f, x, result, unsigned),
        )
        return blocked_matvec(
            self.state.emitter(op),
            gemv,
            along_rows,
            self.state.blocking,
            lambda t: self.state.temporary(t, op),
        )

    def _blocked(
        self, op: MatvecOp, m: MatrixType, compute: Attribute, lanes: int
    ) -> SSAValue:
        e = self.state.emitter(op)
        result = op.result_element
        unsigned = op.unsigned is not None
        column = MatrixType(m.cols, 1, element_type_of(op.vector.type))
        x = self.state.temporary(column, op)
        y = self.state.buffer(MatrixType(m.rows, 1, result), op)
        zero = e.index(0)
        e.builder.insert(vector.StoreOp(op.vector, x, [zero, zero]))
        if op.bias is not None:
            e.builder.insert(vector.StoreOp(op.bias, y, [zero, zero]))
        matrix = self.state.readable_along_rows(op.matrix, op)
        product = Product(
            m.rows,
            1,
            m.cols,
            lambda f, r, k, w: widen(
                f, read_block(f, matrix, r, k, w, True), compute, unsigned
            ),
            lambda f, k, _: widen(f, f.load_buffer(x, k, 0), compute, unsigned),
            None
            if op.bias is None
            else lambda f, r, _, w: widen(
                f,
                f.emit(
                    vector.LoadOp(y, [f.index(0), f.index(r)], VectorType(result, [w]))
                ),
                compute,
                unsigned,
            ),
            lambda f, v, r, c: write_block(f, narrow(f, v, result), y, r, c),
            compute,
            op.fastmath,
            lanes,
        )
        blocked_product(e, product)
        return e.emit(vector.LoadOp(y, [zero, zero], op.result.type))


# ---------------------------------------------------------------------------
# Element access and stores
# ---------------------------------------------------------------------------


@dataclass
class LowerExtract(MatrixPattern):
    """%e = matrix.extract %m[%i, %j] -> element (i, j) of %m (a load from its
    buffer, or the fused chain computed for that one element)."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: ExtractOp, rewriter: PatternRewriter, /) -> None:
        r, c = op.indices()
        value = self.state.emitter(op).element(op.matrix, r, c)
        rewriter.replace(op, [], [value])


@dataclass
class LowerInsert(MatrixPattern):
    """%n = matrix.insert %e, %m[%i, %j] -> store %e into %m's buffer if %m is
    used only here (same block, own buffer), else into a copy of %m."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: InsertOp, rewriter: PatternRewriter, /) -> None:
        t = _matrix(op.result)
        source = op.matrix
        buffer = buffer_of(source)
        e = self.state.emitter(op)
        in_place = (
            buffer is not None
            and buffer in self.state.owned
            and source.has_one_use()
            and source.owner.parent_block() is op.parent_block()  # pyright: ignore
        )
        if not in_place or buffer is None:
            buffer = self.state.temporary(t, op)
            self.state.materialize(source, buffer, op)
        r, c = op.indices()
        e.store_buffer(op.element, buffer, r, c)
        rewriter.replace(op, as_matrix(buffer, t))


@dataclass
class LowerStore(MatrixPattern):
    """matrix.<layout>_store %m, %mem[%off] stride %s -> a loop nest writing
    element (r, c) of %m to %mem[%off + c*%s + r] (or r*%s + c): only the
    addressed elements."""

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter, /) -> None:
        if not isinstance(op, StoreOp):
            return
        self.state.materialize(op.value, op, op)
        rewriter.erase(op)


# ---------------------------------------------------------------------------
# Functions
# ---------------------------------------------------------------------------


@dataclass
class LowerFuncSignature(MatrixPattern):
    """func.func @f(%a: !matrix<RxC>) -> !matrix<PxQ> ->
    func.func @f(%a: memref<CxR>, %out: memref<QxP>) (see the module docs)."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: func.FuncOp, rewriter: PatternRewriter, /) -> None:
        inputs = op.function_type.inputs.data
        outputs = op.function_type.outputs.data
        if not any(isinstance(t, MatrixType) for t in (*inputs, *outputs)):
            return
        outs = [t for t in outputs if isinstance(t, MatrixType)]
        row_major = self.state.row_major
        op.function_type = FunctionType.from_lists(
            [abi_type(t, row_major) if isinstance(t, MatrixType) else t for t in inputs]
            + [abi_type(t, row_major) for t in outs],
            [t for t in outputs if not isinstance(t, MatrixType)],
        )
        if op.arg_attrs is not None:
            op.arg_attrs = op.arg_attrs.__class__(
                [*op.arg_attrs.data, *(DictionaryAttr({}) for _ in outs)]
            )
        if op.res_attrs is not None:
            op.res_attrs = op.res_attrs.__class__(
                [
                    a
                    for a, t in zip(op.res_attrs.data, outputs, strict=True)
                    if not isinstance(t, MatrixType)
                ]
            )
        rewriter.has_done_action = True
        block = op.body.first_block
        if block is None:
            return
        for index, t in enumerate(inputs):
            if isinstance(t, MatrixType):
                buffer = block.insert_arg(abi_type(t, row_major), index)
                old = block.args[index + 1]
                old.replace_all_uses_with(
                    matrix_of_abi_buffer(
                        buffer,
                        t,
                        row_major,
                        InsertPoint.at_start(block),
                        self.state.plan.fused,
                    )
                )
                block.erase_arg(old)
        self.state.out_params[op] = [
            block.insert_arg(abi_type(t, row_major), len(block.args)) for t in outs
        ]


@dataclass
class LowerReturn(MatrixPattern):
    """func.return %m, %x -> write %m into its out-parameter; func.return %x."""

    @op_type_rewrite_pattern
    def match_and_rewrite(
        self, op: func.ReturnOp, rewriter: PatternRewriter, /
    ) -> None:
        function = op.parent_op()
        if (
            not isinstance(function, func.FuncOp)
            or function not in self.state.out_params
        ):
            return
        outs = iter(self.state.out_params[function])
        for value in op.arguments:
            if _is_matrix(value):
                self.state.materialize(self._abi_value(value, op), next(outs), op)
        rewriter.replace(
            op, func.ReturnOp(*(v for v in op.arguments if not _is_matrix(v)))
        )


@dataclass
class LowerCall(MatrixPattern):
    """%r = func.call @f(%m) -> func.call @f(%m_buffer, %r_buffer)."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: func.CallOp, rewriter: PatternRewriter, /) -> None:
        if not any(_is_matrix(v) for v in (*op.arguments, *op.res)):
            return
        row_major = self.state.row_major
        arguments = [
            self.state.as_buffer(self._abi_value(v, op), op) if _is_matrix(v) else v
            for v in op.arguments
        ]
        results = {
            i: self.state.buffer(
                _matrix(r).transposed() if row_major else _matrix(r), op
            )
            for i, r in enumerate(op.res)
            if _is_matrix(r)
        }
        call = func.CallOp(
            op.callee,
            [*arguments, *results.values()],
            [r.type for r in op.res if not _is_matrix(r)],
        )
        rewriter.insert(call)
        scalars = iter(call.res)
        matrices = {
            i: matrix_of_abi_buffer(
                b,
                _matrix(op.res[i]),
                row_major,
                InsertPoint.before(op),
                self.state.plan.fused,
            )
            for i, b in results.items()
        }
        rewriter.replace(
            op,
            [],
            [
                matrices[i] if i in matrices else next(scalars)
                for i in range(len(op.res))
            ],
        )


# ---------------------------------------------------------------------------
# Control flow (carriers.py)
# ---------------------------------------------------------------------------


def _carry(
    state: LoweringState, slots: Sequence[Slot], op: Operation
) -> list[SSAValue]:
    """One buffer per slot (allocated for `op`): initialized before `op`,
    read by the slot's block arguments (erased), written by its terminators
    when they are lowered."""
    buffers: list[SSAValue] = []
    for slot in slots:
        buffer = state.buffer(slot.type, op, owned=False)
        if slot.init is not None:
            state.materialize(op.operands[slot.init], buffer, op)
        for arg in slot.args:
            _replace_block_arg(arg.block, arg.index, buffer)
        for terminator, index in slot.writes:
            state.writes.setdefault(terminator, {})[index] = buffer
        buffers.append(buffer)
    return buffers


@dataclass
class LowerCarryingOp(MatrixPattern):
    """%r = scf.for/affine.for/scf.while/scf.if/scf.index_switch/affine.if
    carrying matrices -> the same op without them: one buffer per carried
    matrix, filled with its initial value before the op, read by the block
    arguments and the results, written by the terminators."""

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter, /) -> None:
        slots = region_slots(op) if op.regions else None
        if not slots:
            return
        buffers = _carry(self.state, slots, op)
        new = rebuild(
            op,
            [s.init for s in slots if s.init is not None],
            [s.result for s in slots if s.result is not None],
        )
        by_result = {
            s.result: b
            for s, b in zip(slots, buffers, strict=True)
            if s.result is not None
        }
        others = iter(new.results)
        casts: list[Operation] = []
        values: list[SSAValue] = []
        for i, result in enumerate(op.results):
            if i in by_result:
                casts.append(as_matrix(by_result[i], _matrix(result)))
                values.append(casts[-1].results[0])
            else:
                values.append(next(others))
        rewriter.replace(op, [new, *casts], values)


@dataclass
class LowerCarriedTerminator(MatrixPattern):
    """scf.yield/affine.yield/scf.condition/cf.br/cf.cond_br with matrix
    operands -> copy them into their slots' buffers (a parallel copy) and
    drop them. A branch with several successors copies on the edge: in a
    new block, branching on to the successor, so that the edges not taken
    write nothing."""

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter, /) -> None:
        targets = self.state.writes.pop(op, None)
        if targets is None:
            return
        edges = successor_operands(op) if op.successors else None
        if edges is None or len(edges) == 1:
            self._copy(op, targets, op)
            rewriter.replace(op, rebuild(op, list(targets)))
            return
        successors = list(op.successors)
        dropped: list[int] = []
        for i, indices in enumerate(edges):
            if not any(k in targets for k in indices):
                continue
            parent = op.parent_block()
            assert parent is not None and parent.parent is not None
            edge = Block()
            parent.parent.insert_block_after(edge, parent)
            branch = cf.BranchOp(
                successors[i], *(op.operands[k] for k in indices if k not in targets)
            )
            edge.add_op(branch)
            self._copy(op, {k: targets[k] for k in indices if k in targets}, branch)
            successors[i] = edge
            dropped += indices
        rewriter.replace(op, rebuild(op, dropped, successors=successors))

    def _copy(self, op: Operation, targets: dict[int, SSAValue], at: Operation) -> None:
        indices = sorted(targets)
        self.state.copy_to_targets(
            [op.operands[k] for k in indices], [targets[k] for k in indices], at
        )


def _patterns(state: LoweringState) -> list[RewritePattern]:
    return [
        LowerFuncSignature(state),
        LowerReturn(state),
        LowerCall(state),
        LowerCarryingOp(state),
        LowerCarriedTerminator(state),
        MaterializeConstant(state),
        MaterializeElementwise(state),
        LowerScaledConvertTo(state),
        LowerMatmul(state),
        LowerMatvec(state),
        LowerExtract(state),
        LowerInsert(state),
        LowerStore(state),
    ]


def _blocks_in_order(region: Region) -> list[Block]:
    """The blocks of `region` in reverse post-order of its branches (each
    after the blocks that dominate it), then the unreachable ones."""
    blocks = list(region.blocks)
    if len(blocks) < 2:
        return blocks

    def successors(block: Block) -> Iterator[Block]:
        return iter(block.last_op.successors if block.last_op is not None else ())

    seen = {blocks[0]}
    post: list[Block] = []
    stack = [(blocks[0], successors(blocks[0]))]
    while stack:
        block, pending = stack[-1]
        following = next((b for b in pending if b not in seen), None)
        if following is None:
            post.append(block)
            stack.pop()
        else:
            seen.add(following)
            stack.append((following, successors(following)))
    return post[::-1] + [b for b in blocks if b not in seen]


def _program_order(top: Operation) -> list[Operation]:
    """The ops nested in `top`, each before the ops of its regions, and the
    definitions of a block's arguments and values before their uses."""
    order: list[Operation] = []
    stack = [top]
    while stack:
        op = stack.pop()
        if op is not top:
            order.append(op)
        nested = [
            inner
            for region in op.regions
            for block in _blocks_in_order(region)
            for inner in block.ops
        ]
        stack.extend(reversed(nested))
    return order


def _erase_fused(module: ModuleOp, state: LoweringState) -> None:
    """Erase the fused ops and the buffer casts once nothing uses them; a
    matrix value still in use is one no pattern could lower."""
    for op in reversed(list(walk(module))):
        matrix_cast = isinstance(op, UnrealizedConversionCastOp) and any(
            _is_matrix(r) for r in op.results
        )
        if (op in state.plan.fused or matrix_cast) and all(
            not r.uses for r in op.results
        ):
            Rewriter.erase_op(op)
    # Every value is a result or a block argument, defined before its uses in
    # this order: the first op defining a matrix value is the first to have
    # a matrix operand or result.
    for op in walk(module):
        defined = [a for r in op.regions for b in r.blocks for a in b.args]
        if any(_is_matrix(v) for v in (*op.results, *defined)):
            raise OpDiagnostic(
                op, f"'{op.name}' with a matrix operand or result cannot be lowered"
            )


@dataclass(frozen=True)
class ConvertMatrixToAffinePass(ModulePass):
    """Lowers the matrix dialect to memref buffers and affine loop nests."""

    name = "convert-matrix-to-affine"

    vector_bits: int = 512
    """Bits of the target's vector registers (512: AVX-512); elementwise
    nests, copies and products of f16/bf16/f32/f64/i8..i64 matrices work on
    vectors of that many bits (0: scalar loop nests only)."""

    l1_bytes: int = 0
    """Bytes of the L1 data cache of one core (0: the target's, see
    `matrix_to_affine/caches.py`: the host's in the JIT, 48 KiB for mx-opt).
    This and the next two options shape the cache-blocked products
    (`matrix_to_affine/blocked.py`): a panel of packed A (one vector of rows
    x KC) takes at most half of L1."""

    l2_bytes: int = 0
    """Bytes of one core's L2 (0: the target's; 2 MiB for mx-opt): the MC x
    NC block of the result and a KC x NC block of packed B take half."""

    l3_bytes: int = 0
    """Bytes of L3 one core may use (0: the target's; 32 MiB for mx-opt):
    the MC rows of A (all of the depth) take half."""

    blocked_min_bytes: int = 96 * 1024
    """Products (matmul, matmul_add) whose operands and result take at least
    this many bytes are cache-blocked and packed; smaller ones keep the
    register-blocked kernel. 96 KiB: on a Sapphire Rapids core the blocked
    product is the faster one from f32 96x96 and f64 64x64 up, the
    register-blocked one up to f32 64x64 and f64 48x48."""

    parallel_min_work: int = 1 << 18
    """Cache-blocked products (matmul, matmul_add, matvec) of at least this
    many multiply-adds run their blocks on threads: their block loop is
    marked `mx.parallel` for `outline-parallel-loops` (0: never). 2^18 (64^3)
    is where bench/threads.py's sweep measured 2 threads winning (see
    docs/python-api.md#threads)."""

    stack_bytes: int = DEFAULT_STACK_BYTES
    """Most bytes of buffers one function keeps on the stack; beyond it the
    largest buffers go to the heap (`matrix_to_affine/buffers.py`)."""

    layout: str = "column-major"
    """How matrix arguments and results are laid out at function boundaries:
    `column-major` (Clang's) or `row-major` (NumPy's, C arrays')."""

    def __post_init__(self) -> None:
        if self.layout not in LAYOUTS:
            raise ValueError(
                f"layout must be one of {', '.join(LAYOUTS)}, got '{self.layout}'"
            )

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        self.lower(op)

    def lower(self, op: ModuleOp) -> LoweringState:
        """Lowers `op` in place; returns what the lowering shared, for
        `matrix-lowering-remarks`."""
        check_lowerable(op)
        plan = FusionPlan()
        plan.analyze(op)
        target = target_caches()
        blocking = Blocking(
            self.l1_bytes or target.l1_bytes,
            self.l2_bytes or target.l2_bytes,
            self.l3_bytes or target.l3_bytes,
            self.blocked_min_bytes,
            self.parallel_min_work,
        )
        state = LoweringState(
            plan, self.vector_bits, blocking, self.layout == "row-major"
        )
        order = _program_order(op)
        for child in order:
            for region in child.regions:
                for block in list(region.blocks)[1:]:
                    if slots := block_slots(block):
                        assert block.first_op is not None
                        _carry(state, slots, block.first_op)
        applier = GreedyRewritePatternApplier(_patterns(state))
        for child in order:
            if child.parent is None:
                continue
            applier.match_and_rewrite(child, PatternRewriter(child))
        _erase_fused(op, state)
        state.allocator.finish(self.stack_bytes)
        record(state.kernels)
        return state

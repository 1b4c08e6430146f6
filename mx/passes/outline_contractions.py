"""`outline-contractions`: one called function per repeated large contraction.

`convert-matrix-to-affine` emits a whole kernel (hundreds of loop and vector
ops, ~800 lines of LLVM IR for a 128×128 f32 matmul) for every contraction,
so a chain of N equal products costs N times its lowering and its LLVM
compilation. This pass rewrites the contractions (`matmul`, `matmul_add`,
`matvec`, mixed-precision ones included) that occur at least twice with the
same signature into calls of one private function per signature:

    %r = matrix.matmul %a, %t : T, T -> T        (twice or more)

becomes

    %r = func.call @f__matmul_0(%a, %t) : (T, T) -> T
    func.func private @f__matmul_0(%x: T, %y: T) -> T attributes {mx.outlined} {
      %0 = matrix.matmul %x, %y : T, T -> T
      func.return %0 : T
    }

(`f` is the function of the first such op). The signature is the op, its
operand and result types (shapes, element types) and properties (fastmath,
unsigned). An operand that the lowering reads where it is computed (fused:
`FusionPlan`) and that is one op of one matrix operand (a transpose, a
widening cast, an arbfp decode) goes into the function with the contraction
(and into its signature): the function takes that op's operand, so the
operand is still read in place, not copied into a buffer for the call. A
contraction with another fused operand (a load, a splat, a longer chain)
stays inline. The function computes what the op computed, with the same
kernel and the same reduction order, so results are bit-identical;
`convert-matrix-to-affine` passes its matrices by buffer.

Only contractions of at least `min-work` multiply-adds are outlined: the
call costs nothing measurable there (docs/passes.md); smaller ones, whose
results may stay in registers, are left inline.
"""

from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field

from xdsl.context import Context
from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp, UnitAttr
from xdsl.ir import Attribute, Block, Operation, Region, SSAValue
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import (
    PatternRewriter,
    PatternRewriteWalker,
    RewritePattern,
)
from xdsl.rewriter import InsertPoint, Rewriter

from mx.dialects.matrix import ContractionOp, MatrixType, MatvecOp
from mx.lowering.matrix_to_affine.fusion import FusionPlan
from mx.lowering.matrix_to_affine.kernel_remarks import OUTLINED
from mx.lowering.walk import walk
from mx.passes.outline_parallel_loops import fresh_function_name

DEFAULT_MIN_WORK = 8192
"""Multiply-adds from which a repeated contraction is outlined: 16×16×16
products (4096) ran 1 % slower called than inline, 24×24×24 (13824) and up
the same (docs/passes.md)."""

Signature = tuple[Attribute | tuple[object, ...], ...]


@dataclass(frozen=True)
class Candidate:
    """A contraction to outline and the fused producers of its operands
    that go into the function with it (None: the operand itself is passed)."""

    op: ContractionOp
    producers: tuple[Operation | None, ...]

    @property
    def arguments(self) -> list[SSAValue]:
        """The values the call passes."""
        return [
            x if p is None else p.operands[0]
            for x, p in zip(self.op.operands, self.producers, strict=True)
        ]

    @property
    def signature(self) -> Signature:
        """Equal for contractions that the same function computes."""
        operands = tuple(
            x.type if p is None else _op_signature(p)
            for x, p in zip(self.op.operands, self.producers, strict=True)
        )
        return (_op_signature(self.op), *operands)


def _op_signature(op: Operation) -> tuple[object, ...]:
    return (
        op.name,
        tuple(x.type for x in op.operands),
        tuple(r.type for r in op.results),
        tuple(sorted(op.properties.items())),
        tuple(sorted(op.attributes.items())),
    )


def work(op: ContractionOp) -> int:
    """Multiply-adds of `op`: R·C·K for a product, R·K for a matvec."""
    a = op.factors[0].type
    assert isinstance(a, MatrixType)
    if isinstance(op, MatvecOp):
        return a.rows * a.cols
    b = op.factors[1].type
    assert isinstance(b, MatrixType)
    return a.rows * a.cols * b.cols


def enclosing_function(op: Operation) -> func.FuncOp | None:
    parent = op.parent_op()
    while parent is not None and not isinstance(parent, func.FuncOp):
        parent = parent.parent_op()
    return parent


def _is_fused(value: SSAValue, fused: set[Operation]) -> bool:
    return isinstance(value.owner, Operation) and value.owner in fused


def _movable_producer(value: SSAValue, fused: set[Operation]) -> Operation | None:
    """The op computing `value` if it is fused and one op of one matrix
    operand that is not itself fused (it moves into the function), else
    None."""
    p = value.owner
    assert isinstance(p, Operation)
    if (
        len(p.operands) == 1
        and len(p.results) == 1
        and not p.regions
        and isinstance(p.operands[0].type, MatrixType)
        and not _is_fused(p.operands[0], fused)
    ):
        return p
    return None


def _candidates(module: ModuleOp, min_work: int) -> Iterator[Candidate]:
    """The contractions of `module`'s functions of at least `min_work`
    multiply-adds whose operands are passed or moved without a copy."""
    plan = FusionPlan()
    plan.analyze(module)
    for op in walk(module):
        if (
            not isinstance(op, ContractionOp)
            or work(op) < min_work
            or enclosing_function(op) is None
        ):
            continue
        producers: list[Operation | None] = []
        for x in op.operands:
            producer = None
            if _is_fused(x, plan.fused):
                producer = _movable_producer(x, plan.fused)
                if producer is None:
                    break
            producers.append(producer)
        else:
            yield Candidate(op, tuple(producers))


@dataclass
class OutlineContraction(RewritePattern):
    """`%r = matrix.<contraction> %x...` of a repeated signature ->
    `%r = func.call @F(%x...)`, with `@F` the private function computing
    that contraction of its arguments (made at the first such op); a moved
    producer `%x = P %y` is computed in `@F`, which takes `%y`, and is
    erased once it has no other use."""

    module: ModuleOp
    chosen: dict[Operation, Candidate]
    functions: dict[Signature, str] = field(default_factory=dict[Signature, str])
    last: dict[Operation, Operation] = field(default_factory=dict[Operation, Operation])
    """Per calling function, the last function defined for it (the next
    one goes after it, so that they are in order of first use)."""

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter, /) -> None:
        candidate = self.chosen.get(op)
        if candidate is None:
            return
        key = candidate.signature
        if key not in self.functions:
            self.functions[key] = self._define(candidate)
        call = func.CallOp(
            self.functions[key], candidate.arguments, [candidate.op.result.type]
        )
        call.location = op.location
        rewriter.replace(op, call)
        for producer in _distinct(candidate.producers):
            if not producer.results[0].uses:
                rewriter.erase(producer)

    def _define(self, candidate: Candidate) -> str:
        """A private function computing `candidate`'s contraction of its
        arguments, named after the op's function and inserted after it (and
        after those defined before for it)."""
        op = candidate.op
        caller = enclosing_function(op)
        assert caller is not None
        types = [x.type for x in candidate.arguments]
        entry = Block(arg_types=types)
        operands: list[SSAValue] = []
        for p, arg in zip(candidate.producers, entry.args, strict=True):
            if p is None:
                operands.append(arg)
                continue
            copy = p.clone({p.operands[0]: arg})
            entry.add_op(copy)
            operands.append(copy.results[0])
        kernel = op.clone(dict(zip(op.operands, operands, strict=True)))
        entry.add_ops([kernel, func.ReturnOp(kernel.result)])
        name = fresh_function_name(
            self.module, f"{caller.sym_name.data}__{op.name.removeprefix('matrix.')}"
        )
        function = func.FuncOp(
            name, (types, [op.result.type]), Region(entry), "private"
        )
        function.attributes[OUTLINED] = UnitAttr()
        Rewriter.insert_op(function, InsertPoint.after(self.last.get(caller, caller)))
        self.last[caller] = function
        return name


def _distinct(ops: Sequence[Operation | None]) -> list[Operation]:
    return list(dict.fromkeys(p for p in ops if p is not None))


@dataclass(frozen=True)
class OutlineContractionsPass(ModulePass):
    """Calls one private function per repeated large contraction (module docs)."""

    name = "outline-contractions"

    min_work: int = DEFAULT_MIN_WORK
    """Multiply-adds (R·C·K of a product, R·K of a matvec) from which a
    contraction occurring at least twice is outlined; 0: never."""

    def __post_init__(self) -> None:
        if self.min_work < 0:
            raise ValueError(f"min-work must be 0 or more, got {self.min_work}")

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        if self.min_work == 0:
            return
        groups: dict[Signature, list[Candidate]] = {}
        for candidate in _candidates(op, self.min_work):
            groups.setdefault(candidate.signature, []).append(candidate)
        chosen: dict[Operation, Candidate] = {
            c.op: c for group in groups.values() if len(group) > 1 for c in group
        }
        if chosen:
            PatternRewriteWalker(
                OutlineContraction(op, chosen), apply_recursively=False
            ).rewrite_module(op)

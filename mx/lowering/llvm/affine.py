"""`affine` -> `llvm`, without going through `scf`, `arith` or `memref`.

Every affine map is expanded into `i64` arithmetic (dims and symbols are the
map operands, SSA values included), folding the terms that are constants;
loop bounds with several results take the max (lower) / min (upper) as in
MLIR. `affine.for` becomes a loop header block taking the `i64` induction
variable and the loop-carried values, as `scf.for` lowers to `cf`;
`affine.if` becomes an `scf.if` on the conjunction of its constraints.
"""

from collections.abc import Callable, Sequence
from typing import TypeVar

from xdsl.dialects import affine, arith, llvm, scf
from xdsl.dialects.builtin import IndexType, i1, i64
from xdsl.ir import Operation, SSAValue
from xdsl.ir.affine import (
    AffineBinaryOpExpr,
    AffineBinaryOpKind,
    AffineConstantExpr,
    AffineDimExpr,
    AffineExpr,
    AffineMap,
    AffineSymExpr,
)
from xdsl.ir.affine.affine_set import AffineConstraintKind
from xdsl.pattern_rewriter import (
    PatternRewriter,
    RewritePattern,
    op_type_rewrite_pattern,
)
from xdsl.rewriter import BlockInsertPoint, InsertPoint

from mx.lowering.llvm.build import branch, cond_branch, icmp, integer_binary
from mx.lowering.llvm.func import convert_block_arguments
from mx.lowering.llvm.memref import (
    constant_value,
    element_pointer,
    load_value,
    store_value,
)
from mx.lowering.llvm.types import from_llvm, integer_constant, to_llvm
from mx.semantics.index import wrap_index

Index = SSAValue | int
"""An `i64` value, or an index known at compile time."""

V = TypeVar("V")
"""The values of `evaluate_affine_expr` (an index is one of them, or an `int`
known at compile time)."""


def _value(index: Index, rewriter: PatternRewriter) -> SSAValue:
    if isinstance(index, int):
        return integer_constant(index, i64, rewriter)
    return index


def _operand(value: SSAValue, rewriter: PatternRewriter) -> Index:
    known = constant_value(value)
    return wrap_index(known) if known is not None else to_llvm(value, rewriter)


def _icmp(
    lhs: SSAValue, rhs: SSAValue, flag: str, rewriter: PatternRewriter
) -> SSAValue:
    return rewriter.insert(icmp(lhs, rhs, flag)).res


def _fold(kind: AffineBinaryOpKind, lhs: int, rhs: int) -> int | None:
    match kind:
        case AffineBinaryOpKind.Add:
            return wrap_index(lhs + rhs)
        case AffineBinaryOpKind.Mul:
            return wrap_index(lhs * rhs)
        case _ if rhs == 0:  # undefined when executed: left to run time
            return None
        case AffineBinaryOpKind.FloorDiv:
            return wrap_index(lhs // rhs)
        case AffineBinaryOpKind.CeilDiv:
            return wrap_index(-(-lhs // rhs))
        case AffineBinaryOpKind.Mod:
            return wrap_index(lhs - (lhs // rhs) * rhs)


_DIVISIONS: dict[
    AffineBinaryOpKind, type[arith.FloorDivSIOp] | type[arith.CeilDivSIOp]
] = {
    AffineBinaryOpKind.FloorDiv: arith.FloorDivSIOp,
    AffineBinaryOpKind.CeilDiv: arith.CeilDivSIOp,
    AffineBinaryOpKind.Mod: arith.FloorDivSIOp,
}


def simplify_affine_binary(
    kind: AffineBinaryOpKind, lhs: V | int, rhs: V | int
) -> V | int | None:
    """`lhs kind rhs` folded when both are constants (a division by zero is
    left to run time) or when one is the identity of `+`/`*`; None when it
    takes an instruction. Shared with `mx.targets.direct_llvm_ir`."""
    if isinstance(lhs, int) and isinstance(rhs, int):
        folded = _fold(kind, lhs, rhs)
        if folded is not None:
            return folded
    if kind == AffineBinaryOpKind.Add and (lhs == 0 or rhs == 0):
        return rhs if lhs == 0 else lhs
    if kind == AffineBinaryOpKind.Mul and (lhs == 1 or rhs == 1):
        return rhs if lhs == 1 else lhs
    return None


def evaluate_affine_expr(
    expr: AffineExpr,
    dims: Sequence[V | int],
    symbols: Sequence[V | int],
    binary: Callable[[AffineBinaryOpKind, V | int, V | int], V | int],
) -> V | int:
    """The value of `expr` (MLIR semantics: `mod` is non-negative and
    `floordiv`/`ceildiv` round toward -inf/+inf), constants folded, the
    other operations computed by `binary`."""
    match expr:
        case AffineConstantExpr(value=value):
            return wrap_index(value)
        case AffineDimExpr(position=position):
            return dims[position]
        case AffineSymExpr(position=position):
            return symbols[position]
        case AffineBinaryOpExpr(kind=kind, lhs=lhs_expr, rhs=rhs_expr):
            lhs = evaluate_affine_expr(lhs_expr, dims, symbols, binary)
            rhs = evaluate_affine_expr(rhs_expr, dims, symbols, binary)
            simplified = simplify_affine_binary(kind, lhs, rhs)
            if simplified is not None:
                return simplified
            return binary(kind, lhs, rhs)
        case _:
            raise AssertionError(f"unknown affine expression {expr}")


def _binary(
    kind: AffineBinaryOpKind, lhs: Index, rhs: Index, rewriter: PatternRewriter
) -> Index:
    """`lhs kind rhs` with `llvm` ops (not foldable, see `evaluate_affine_expr`)."""
    if kind == AffineBinaryOpKind.Add:
        op: Operation = integer_binary(
            llvm.AddOp, _value(lhs, rewriter), _value(rhs, rewriter)
        )
    elif kind == AffineBinaryOpKind.Mul:
        op = integer_binary(llvm.MulOp, _value(lhs, rewriter), _value(rhs, rewriter))
    else:
        # Rounding divisions: arith's, which convert-to-llvm lowers later
        # (floordiv/ceildiv round toward -inf/+inf; mod is lhs - floordiv * rhs,
        # non-negative).
        index = IndexType()
        lhs_index = from_llvm(_value(lhs, rewriter), index, rewriter)
        rhs_index = from_llvm(_value(rhs, rewriter), index, rewriter)
        quotient = rewriter.insert(_DIVISIONS[kind](lhs_index, rhs_index)).result
        quotient = to_llvm(quotient, rewriter)
        if kind != AffineBinaryOpKind.Mod:
            return quotient
        product = rewriter.insert(
            integer_binary(llvm.MulOp, quotient, _value(rhs, rewriter))
        ).res
        op = integer_binary(llvm.SubOp, _value(lhs, rewriter), product)
    return rewriter.insert(op).results[0]


def expand_affine_expr(
    expr: AffineExpr,
    dims: Sequence[Index],
    symbols: Sequence[Index],
    rewriter: PatternRewriter,
) -> Index:
    """The `i64` value of `expr`, built with `llvm` ops where it is not a
    constant."""
    return evaluate_affine_expr(
        expr, dims, symbols, lambda kind, lhs, rhs: _binary(kind, lhs, rhs, rewriter)
    )


def expand_affine_map(
    map_: AffineMap, operands: Sequence[SSAValue], rewriter: PatternRewriter
) -> list[Index]:
    """One `i64` value per result of `map_` applied to `operands`."""
    values = [_operand(v, rewriter) for v in operands]
    dims = values[: map_.num_dims]
    symbols = values[map_.num_dims :]
    return [expand_affine_expr(e, dims, symbols, rewriter) for e in map_.results]


def _reduce(values: list[Index], intrinsic: str, rewriter: PatternRewriter) -> Index:
    """The signed min (`llvm.smin`) or max (`llvm.smax`) of `values`."""
    if all(isinstance(v, int) for v in values):
        pick = min if intrinsic == "llvm.smin" else max
        return pick(v for v in values if isinstance(v, int))
    result = values[0]
    for value in values[1:]:
        operands = [_value(result, rewriter), _value(value, rewriter)]
        call = llvm.CallIntrinsicOp(intrinsic, operands, [i64])
        result = rewriter.insert(call).results[0]
    return result


class AffineApplyLowering(RewritePattern):
    """affine.apply map(operands) -> the i64 arithmetic computing the map."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: affine.ApplyOp, rewriter: PatternRewriter, /):
        (value,) = expand_affine_map(op.map.data, op.mapOperands, rewriter)
        result = from_llvm(_value(value, rewriter), op.result.type, rewriter)
        rewriter.replace(op, [], [result])


class AffineMinLowering(RewritePattern):
    """affine.min map(operands) -> llvm.smin over the map's results."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: affine.MinOp, rewriter: PatternRewriter, /):
        values = expand_affine_map(op.map.data, op.arguments, rewriter)
        least = _value(_reduce(values, "llvm.smin", rewriter), rewriter)
        rewriter.replace(op, [], [from_llvm(least, op.result.type, rewriter)])


class AffineLoadLowering(RewritePattern):
    """affine.load %m[map(operands)] -> llvm.load (gep %m[...]), as memref.load."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: affine.LoadOp, rewriter: PatternRewriter, /):
        indices = expand_affine_map(op.map.data, op.indices, rewriter)
        pointer = element_pointer(op.memref, indices, op, rewriter)
        value = load_value(pointer, op.result.type, rewriter)
        rewriter.replace(op, [], [from_llvm(value, op.result.type, rewriter)])


class AffineStoreLowering(RewritePattern):
    """affine.store %v, %m[map(operands)] -> llvm.store %v, (gep %m[...]), as
    memref.store."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: affine.StoreOp, rewriter: PatternRewriter, /):
        indices = expand_affine_map(op.map.data, op.indices, rewriter)
        pointer = element_pointer(op.memref, indices, op, rewriter)
        value = to_llvm(op.value, rewriter)
        rewriter.replace(op, store_value(value, pointer, rewriter))


class AffineForLowering(RewritePattern):
    """affine.for -> `llvm.br ^header(lb, inits)`; the header (the body's
    block, whose arguments are the i64 induction variable and the carried
    values) ends in `llvm.cond_br (iv < ub), ^body, ^end`; the body ends in
    `llvm.br ^header(iv + step, yielded)`. Bounds: max(lb map), min(ub map)."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: affine.ForOp, rewriter: PatternRewriter, /):
        lower = expand_affine_map(
            op.lowerBoundMap.data, op.lowerBoundOperands, rewriter
        )
        upper = expand_affine_map(
            op.upperBoundMap.data, op.upperBoundOperands, rewriter
        )
        lower_bound = _value(_reduce(lower, "llvm.smax", rewriter), rewriter)
        upper_bound = _value(_reduce(upper, "llvm.smin", rewriter), rewriter)
        inits = [to_llvm(v, rewriter) for v in op.inits]
        init_block = op.parent_block()
        assert init_block is not None
        end_block = init_block.split_before(op)

        convert_block_arguments(op.body, rewriter)
        header = op.body.block
        yield_ = header.last_op
        assert isinstance(yield_, affine.YieldOp)
        body = header.split_before(header.first_op or yield_)
        rewriter.inline_region(op.body, BlockInsertPoint.before(end_block))
        iv = header.args[0]

        rewriter.insertion_point = InsertPoint.before(yield_)
        step = integer_constant(op.step.value.data, i64, rewriter)
        stepped = rewriter.insert(integer_binary(llvm.AddOp, iv, step)).res
        carried = [to_llvm(v, rewriter) for v in yield_.arguments]
        rewriter.replace(yield_, branch(header, [stepped, *carried]))

        rewriter.insert(
            branch(header, [lower_bound, *inits]), InsertPoint.at_end(init_block)
        )
        rewriter.insertion_point = InsertPoint.at_end(header)
        in_range = _icmp(iv, upper_bound, "slt", rewriter)
        rewriter.insert(cond_branch(in_range, body, [], end_block, []))

        rewriter.insertion_point = InsertPoint.before(op)
        results = [
            from_llvm(arg, result.type, rewriter)
            for arg, result in zip(header.args[1:], op.results, strict=True)
        ]
        rewriter.replace(op, [], results)


_CONSTRAINT_PREDICATES = {
    AffineConstraintKind.ge: "sge",
    AffineConstraintKind.le: "sle",
    AffineConstraintKind.eq: "eq",
}


class AffineIfLowering(RewritePattern):
    """affine.if set(operands) -> scf.if on the conjunction of the set's
    constraints (`e >= 0`, `e <= 0` or `e == 0` for each expression)."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: affine.IfOp, rewriter: PatternRewriter, /):
        condition_set = op.condition.data
        values = [_operand(v, rewriter) for v in op.args]
        dims = values[: condition_set.num_dims]
        symbols = values[condition_set.num_dims :]
        condition: SSAValue | None = None
        for constraint in condition_set.constraints:
            lhs = expand_affine_expr(constraint.lhs, dims, symbols, rewriter)
            rhs = expand_affine_expr(constraint.rhs, dims, symbols, rewriter)
            difference = rewriter.insert(
                integer_binary(llvm.SubOp, _value(lhs, rewriter), _value(rhs, rewriter))
            ).res
            holds = _icmp(
                difference,
                integer_constant(0, i64, rewriter),
                _CONSTRAINT_PREDICATES[constraint.kind],
                rewriter,
            )
            condition = (
                holds
                if condition is None
                else rewriter.insert(llvm.AndOp(condition, holds)).res
            )
        if condition is None:  # an empty set is always true
            condition = integer_constant(1, i1, rewriter)
        then_region = rewriter.move_region_contents_to_new_regions(op.then_region)
        else_region = rewriter.move_region_contents_to_new_regions(op.else_region)
        rewriter.replace(
            op,
            scf.IfOp(
                condition,
                op.result_types,
                then_region,
                else_region if else_region.blocks else None,
            ),
        )


AFFINE_STRUCTURE_PATTERNS: tuple[RewritePattern, ...] = (
    AffineForLowering(),
    AffineIfLowering(),
)
"""Loops and conditionals, lowered with `scf`'s (their `affine.yield`s go
with them)."""

AFFINE_ACCESS_PATTERNS: tuple[RewritePattern, ...] = (
    AffineApplyLowering(),
    AffineMinLowering(),
    AffineLoadLowering(),
    AffineStoreLowering(),
)
"""Index computations and memory accesses, lowered with `memref`'s."""

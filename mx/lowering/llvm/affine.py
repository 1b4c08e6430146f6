"""`affine` -> `scf` + `arith` + `memref`.

Every affine map is expanded into `arith` ops on `index` values (dims and
symbols are the map operands, SSA values included); loop bounds with several
results take the max (lower) / min (upper) as in MLIR.
"""

from collections.abc import Sequence

from xdsl.dialects import affine, arith, memref, scf
from xdsl.dialects.builtin import IndexType, IntegerAttr
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


def _const(value: int, rewriter: PatternRewriter) -> SSAValue:
    return rewriter.insert(arith.ConstantOp(IntegerAttr(value, IndexType()))).result


def _floordiv(lhs: SSAValue, rhs: SSAValue, rewriter: PatternRewriter) -> SSAValue:
    return rewriter.insert(arith.FloorDivSIOp(lhs, rhs)).result


def expand_affine_expr(
    expr: AffineExpr,
    dims: Sequence[SSAValue],
    symbols: Sequence[SSAValue],
    rewriter: PatternRewriter,
) -> SSAValue:
    """Builds `arith` ops computing `expr` (MLIR semantics: `mod` is
    non-negative and `floordiv`/`ceildiv` round toward -inf/+inf)."""
    match expr:
        case AffineConstantExpr(value=value):
            return _const(value, rewriter)
        case AffineDimExpr(position=position):
            return dims[position]
        case AffineSymExpr(position=position):
            return symbols[position]
        case AffineBinaryOpExpr(kind=kind, lhs=lhs_expr, rhs=rhs_expr):
            lhs = expand_affine_expr(lhs_expr, dims, symbols, rewriter)
            rhs = expand_affine_expr(rhs_expr, dims, symbols, rewriter)
            match kind:
                case AffineBinaryOpKind.Add:
                    op: Operation = arith.AddiOp(lhs, rhs)
                case AffineBinaryOpKind.Mul:
                    op = arith.MuliOp(lhs, rhs)
                case AffineBinaryOpKind.FloorDiv:
                    op = arith.FloorDivSIOp(lhs, rhs)
                case AffineBinaryOpKind.CeilDiv:
                    op = arith.CeilDivSIOp(lhs, rhs)
                case AffineBinaryOpKind.Mod:
                    # lhs - floordiv(lhs, rhs) * rhs is the non-negative remainder.
                    quotient = _floordiv(lhs, rhs, rewriter)
                    product = rewriter.insert(arith.MuliOp(quotient, rhs)).result
                    op = arith.SubiOp(lhs, product)
            return rewriter.insert(op).results[0]
        case _:
            raise AssertionError(f"unknown affine expression {expr}")


def expand_affine_map(
    map_: AffineMap, operands: Sequence[SSAValue], rewriter: PatternRewriter
) -> list[SSAValue]:
    """One `index` value per result of `map_` applied to `operands`."""
    dims = operands[: map_.num_dims]
    symbols = operands[map_.num_dims :]
    return [expand_affine_expr(e, dims, symbols, rewriter) for e in map_.results]


def _reduce(
    values: list[SSAValue],
    combine: type[arith.MaxSIOp] | type[arith.MinSIOp],
    rewriter: PatternRewriter,
) -> SSAValue:
    result = values[0]
    for value in values[1:]:
        result = rewriter.insert(combine(result, value)).result
    return result


class AffineApplyLowering(RewritePattern):
    """affine.apply map(operands) -> the arith ops computing the map."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: affine.ApplyOp, rewriter: PatternRewriter, /):
        (value,) = expand_affine_map(op.map.data, op.mapOperands, rewriter)
        rewriter.replace(op, [], [value])


class AffineMinLowering(RewritePattern):
    """affine.min map(operands) -> arith.minsi over the map's results."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: affine.MinOp, rewriter: PatternRewriter, /):
        values = expand_affine_map(op.map.data, op.arguments, rewriter)
        rewriter.replace(op, [], [_reduce(values, arith.MinSIOp, rewriter)])


class AffineLoadLowering(RewritePattern):
    """affine.load %m[map(operands)] -> memref.load %m[indices]."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: affine.LoadOp, rewriter: PatternRewriter, /):
        indices = expand_affine_map(op.map.data, op.indices, rewriter)
        rewriter.replace(op, memref.LoadOp.get(op.memref, indices))


class AffineStoreLowering(RewritePattern):
    """affine.store %v, %m[map(operands)] -> memref.store %v, %m[indices]."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: affine.StoreOp, rewriter: PatternRewriter, /):
        indices = expand_affine_map(op.map.data, op.indices, rewriter)
        rewriter.replace(op, memref.StoreOp.get(op.value, op.memref, indices))


class AffineForLowering(RewritePattern):
    """affine.for -> scf.for with bounds max(lb map) / min(ub map)."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: affine.ForOp, rewriter: PatternRewriter, /):
        lower = expand_affine_map(
            op.lowerBoundMap.data, op.lowerBoundOperands, rewriter
        )
        upper = expand_affine_map(
            op.upperBoundMap.data, op.upperBoundOperands, rewriter
        )
        step = _const(op.step.value.data, rewriter)
        body = rewriter.move_region_contents_to_new_regions(op.body)
        rewriter.replace(
            op,
            scf.ForOp(
                _reduce(lower, arith.MaxSIOp, rewriter),
                _reduce(upper, arith.MinSIOp, rewriter),
                step,
                op.inits,
                body,
            ),
        )


class AffineIfLowering(RewritePattern):
    """affine.if set(operands) -> scf.if on the conjunction of the set's
    constraints (`e >= 0`, `e <= 0` or `e == 0` for each expression)."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: affine.IfOp, rewriter: PatternRewriter, /):
        condition_set = op.condition.data
        dims = op.args[: condition_set.num_dims]
        symbols = op.args[condition_set.num_dims :]
        zero = _const(0, rewriter)
        condition: SSAValue | None = None
        for constraint in condition_set.constraints:
            lhs = expand_affine_expr(constraint.lhs, dims, symbols, rewriter)
            rhs = expand_affine_expr(constraint.rhs, dims, symbols, rewriter)
            difference = rewriter.insert(arith.SubiOp(lhs, rhs)).result
            predicate = {
                AffineConstraintKind.ge: "sge",
                AffineConstraintKind.le: "sle",
                AffineConstraintKind.eq: "eq",
            }[constraint.kind]
            holds = rewriter.insert(arith.CmpiOp(difference, zero, predicate)).result
            condition = (
                holds
                if condition is None
                else rewriter.insert(arith.AndIOp(condition, holds)).result
            )
        if condition is None:  # an empty set is always true
            condition = rewriter.insert(
                arith.ConstantOp.from_int_and_width(1, 1)
            ).result
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


class AffineYieldLowering(RewritePattern):
    """affine.yield -> scf.yield."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: affine.YieldOp, rewriter: PatternRewriter, /):
        rewriter.replace(op, scf.YieldOp(*op.arguments))


AFFINE_PATTERNS: tuple[RewritePattern, ...] = (
    AffineApplyLowering(),
    AffineMinLowering(),
    AffineLoadLowering(),
    AffineStoreLowering(),
    AffineForLowering(),
    AffineIfLowering(),
    AffineYieldLowering(),
)

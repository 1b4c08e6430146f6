"""`matrix-fold-transposes`: remove, sink and lift `matrix.transpose`.

Rewrites (every one of LLVM LowerMatrixIntrinsics' transpose optimizations,
plus layout folding):

- `(Aᵀ)ᵀ → A`; a 1x1 transpose is the identity; `splatᵀ → splat`;
  `constantᵀ → constant` (the canonicalization folders, reused);
- sinking `transpose(op(...)) → op'(...ᵀ)` through the elementwise ops (add,
  sub, mul, div, neg, fma, cast; so `(k·A)ᵀ → k·Aᵀ` and `(A±B)ᵀ → Aᵀ±Bᵀ`) and
  through products: `(A·B)ᵀ → Bᵀ·Aᵀ`, `(A·B + C)ᵀ → Bᵀ·Aᵀ + Cᵀ`;
- lifting `op(Aᵀ, Bᵀ) → (op'(A, B))ᵀ`: `Aᵀ·Bᵀ → (B·A)ᵀ`, `Aᵀ+Bᵀ → (A+B)ᵀ`, ...;
- `transpose(column_major_load) → row_major_load` (and row → column) with the
  same offset and stride, when the load has no other user;
- `column_major_store(Aᵀ) → row_major_store(A)` (and row → column);
- `extract(Aᵀ, [i, j]) → extract(A, [j, i])`.

All of them are exact: `(A·B)ᵀ[i][j]` and `(Bᵀ·Aᵀ)[i][j]` multiply the same
pairs and add them in the same order of k.

Cost model. The lowering (`convert-matrix-to-affine`) reads a transposed
operand of an elementwise op, of a product (matmul, matmul_add, matvec) and
of an extract by swapping the indices, so such a transpose costs nothing; a
transpose feeding a store, or another transpose, is folded away by this pass.
Every other use (func.return, func.call, insert, scf.yield, block arguments,
any op outside this dialect) needs the transposed matrix in memory: the
transpose is then *materialized*. The cost of a function is the pair
(materialized transposes, all transposes), compared lexicographically. Each
rewrite computes its exact effect on that pair and is applied only if it
strictly lowers it, so the greedy walk never applies a rewrite and its inverse,
terminates, and never increases the number of materialized transposes. In
particular a sink fires when it removes a materialized transpose (moving it
onto operands the consumer absorbs) or when the operands' transposes cancel;
a lift fires when it removes more operand transposes than it creates and the
lifted transpose is not materialized (or cancels against a transpose user).
An op whose result has other users is never rewritten into a copy (no
duplicated work).

Option `report=true` prints, per function, a remark with the transpose counts
before and after to stderr.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import builtin, func
from xdsl.ir import Operation, SSAValue, Use
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import (
    GreedyRewritePatternApplier,
    PatternRewriter,
    PatternRewriteWalker,
    RewritePattern,
    op_type_rewrite_pattern,
)
from xdsl.rewriter import InsertPoint

from mx.dialects.matrix import (
    AddOp,
    CastOp,
    ColumnMajorLoadOp,
    ColumnMajorStoreOp,
    ConstantOp,
    DivOp,
    ExtractOp,
    FmaOp,
    LoadOp,
    MatmulAddOp,
    MatmulOp,
    MatrixType,
    MatvecOp,
    MulOp,
    NegOp,
    RowMajorLoadOp,
    RowMajorStoreOp,
    SplatOp,
    StoreOp,
    SubOp,
    TransposeOp,
)
from mx.passes.canonicalization.matrix import (
    ExtractOfTranspose,
    TransposeOfSplat,
    transposed_constant,
)

ELEMENTWISE = (AddOp, SubOp, MulOp, DivOp, NegOp, FmaOp, CastOp)
"""Ops computing element (i, j) from element (i, j) of each operand."""

ABSORBING = (
    *ELEMENTWISE,
    MatmulOp,
    MatmulAddOp,
    MatvecOp,
    ExtractOp,
    TransposeOp,
    StoreOp,
)
"""Users that read a transposed operand without a materialized copy."""


def absorbs(use: Use) -> bool:
    return isinstance(use.operation, ABSORBING)


def is_materialized(op: TransposeOp) -> bool:
    """Does some user need this transpose as a matrix of its own?"""
    return any(not absorbs(use) for use in op.result.uses)


def transpose_cost(root: Operation) -> tuple[int, int]:
    """(materialized transposes, all transposes) inside `root`."""
    transposes = [op for op in root.walk() if isinstance(op, TransposeOp)]
    return sum(map(is_materialized, transposes)), len(transposes)


def _only_used_by(value: SSAValue, op: Operation) -> bool:
    return all(use.operation is op for use in value.uses)


def _flipped_load(load: LoadOp) -> LoadOp:
    """The load of the transposed matrix: same memory, offset and stride."""
    t = load.result.type
    assert isinstance(t, MatrixType)
    flipped = RowMajorLoadOp if load.COLUMN_MAJOR else ColumnMajorLoadOp
    new = flipped(
        load.memref, t.transposed(), load.offset(), load.stride(), load.is_packed
    )
    new.attributes.update(load.attributes)
    return new


def _transposes_for_free(value: SSAValue, user: Operation) -> bool:
    """Can `value`ᵀ be had without a transpose op, once `user` is gone?"""
    owner = value.owner
    if isinstance(owner, TransposeOp | SplatOp):
        return True
    if isinstance(owner, ConstantOp):
        return transposed_constant(owner) is not None
    return isinstance(owner, LoadOp) and _only_used_by(value, user)


def _build_transposed_operands(
    op: Operation, rewriter: PatternRewriter
) -> list[SSAValue]:
    """Each operand of `op` transposed (each distinct operand once)."""
    built: dict[SSAValue, SSAValue] = {}
    for v in op.operands:
        if v not in built:
            built[v] = _build_transposed(v, rewriter, op)
    return [built[v] for v in op.operands]


def _build_transposed(
    value: SSAValue, rewriter: PatternRewriter, user: Operation
) -> SSAValue:
    """`value`ᵀ for `user`, folded into its definition where
    `_transposes_for_free` says so; new ops go before `user`."""
    owner = value.owner
    if isinstance(owner, TransposeOp):
        return owner.input
    new: Operation
    if isinstance(owner, SplatOp):
        t = value.type
        assert isinstance(t, MatrixType)
        new = SplatOp(owner.input, t.transposed())
    elif isinstance(owner, ConstantOp) and (c := transposed_constant(owner)):
        new = c
    elif isinstance(owner, LoadOp) and _only_used_by(value, user):
        # Insert at the load: moving a read past a store would change it.
        new = _flipped_load(owner)
        rewriter.insert(new, InsertPoint.before(owner))
        return new.results[0]
    else:
        new = TransposeOp(value)
    rewriter.insert(new, InsertPoint.before(user))
    return new.results[0]


def _erase_dead(values: Sequence[SSAValue], rewriter: PatternRewriter) -> None:
    """Erase the transposes and loads defining `values` that this pass orphaned."""
    for op in {v.owner for v in values}:
        if isinstance(op, TransposeOp | LoadOp) and not op.results[0].uses:
            rewriter.erase(op)


def _rebuild(
    op: Operation, operands: Sequence[SSAValue], result_type: MatrixType
) -> Operation:
    """`op` on new (transposed) operands, with the transposed result type."""
    if isinstance(op, MatmulOp | MatmulAddOp):
        # (A·B)ᵀ = Bᵀ·Aᵀ: swap the factors; the accumulator stays last.
        operands = [operands[1], operands[0], *operands[2:]]
    return type(op).create(
        operands=list(operands),
        result_types=[result_type],
        properties=dict(op.properties),
        attributes=dict(op.attributes),
    )


SINKABLE = (*ELEMENTWISE, MatmulOp, MatmulAddOp)
"""Ops a transpose moves through: their transposed result is the same op on
transposed operands (products with the factors swapped)."""


def _replacement_count(operands: Sequence[SSAValue], op: Operation) -> int:
    """New transpose ops needed to transpose these operands of `op`."""
    return sum(not _transposes_for_free(v, op) for v in set(operands))


def _removed_count(operands: Sequence[SSAValue], op: Operation) -> int:
    """Operand transposes that die once `op` no longer uses them."""
    return sum(
        isinstance(v.owner, TransposeOp) and _only_used_by(v, op) for v in set(operands)
    )


class SinkTranspose(RewritePattern):
    """`transpose(op(a, b, ...)) → op'(aᵀ, bᵀ, ...)` when it lowers the cost (see
    the module docstring); `op` must have no other user."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: TransposeOp, rewriter: PatternRewriter) -> None:
        inner = op.input.owner
        if not isinstance(inner, SINKABLE) or not op.input.has_one_use():
            return
        operands = list(inner.operands)
        d_materialized = -int(is_materialized(op))
        d_total = (
            -1 + _replacement_count(operands, inner) - _removed_count(operands, inner)
        )
        if (d_materialized, d_total) >= (0, 0):
            return
        result_type = op.result.type
        assert isinstance(result_type, MatrixType)
        new_operands = _build_transposed_operands(inner, rewriter)
        new = _rebuild(inner, new_operands, result_type)
        rewriter.insert(new, InsertPoint.before(inner))
        rewriter.replace(op, [], new.results)
        rewriter.erase(inner)
        _erase_dead(operands, rewriter)


class LiftTranspose(RewritePattern):
    """`op(aᵀ, bᵀ, ...) → (op'(a, b, ...))ᵀ` when it lowers the cost: e.g.
    `Aᵀ·Bᵀ → (B·A)ᵀ`, `Aᵀ + Bᵀ → (A + B)ᵀ`. Transpose users of the result then
    read `op'` directly."""

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter, /) -> None:
        if not isinstance(op, SINKABLE):
            return
        operands = list(op.operands)
        if not any(isinstance(v.owner, TransposeOp) for v in operands):
            return
        users = [use.operation for use in op.results[0].uses]
        transpose_users = [u for u in users if isinstance(u, TransposeOp)]
        others = [
            use
            for use in op.results[0].uses
            if not isinstance(use.operation, TransposeOp)
        ]
        d_total = (
            _replacement_count(operands, op)
            - _removed_count(operands, op)
            + (1 if others else 0)
            - len(transpose_users)
        )
        d_materialized = int(any(not absorbs(u) for u in others)) - sum(
            map(is_materialized, transpose_users)
        )
        if (d_materialized, d_total) >= (0, 0):
            return
        result_type = op.results[0].type
        assert isinstance(result_type, MatrixType)
        new_operands = _build_transposed_operands(op, rewriter)
        new = _rebuild(op, new_operands, result_type.transposed())
        rewriter.insert(new, InsertPoint.before(op))
        for user in transpose_users:
            rewriter.replace(user, [], new.results)
        if others:
            lifted = TransposeOp(new.results[0])
            rewriter.replace(op, lifted)
        else:
            rewriter.erase(op)
        _erase_dead(operands, rewriter)


class TransposeOfLoad(RewritePattern):
    """`transpose(column_major_load) → row_major_load` (and the converse), same
    offset and stride, when the load has no other user."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: TransposeOp, rewriter: PatternRewriter) -> None:
        load = op.input.owner
        if isinstance(load, LoadOp) and op.input.has_one_use():
            new = _flipped_load(load)
            rewriter.insert(new, InsertPoint.before(load))
            rewriter.replace(op, [], new.results)
            rewriter.erase(load)


class StoreOfTranspose(RewritePattern):
    """`column_major_store(Aᵀ) → row_major_store(A)` (and the converse), same
    offset and stride."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: StoreOp, rewriter: PatternRewriter) -> None:
        t = op.value.owner
        if not isinstance(t, TransposeOp):
            return
        flipped = RowMajorStoreOp if op.COLUMN_MAJOR else ColumnMajorStoreOp
        new = flipped(t.input, op.memref, op.offset(), op.stride(), op.is_packed)
        new.attributes.update(op.attributes)
        rewriter.replace(op, new)
        _erase_dead([op.value], rewriter)


class FoldTransposeOfTranspose(RewritePattern):
    """`(Aᵀ)ᵀ → A`, `1x1ᵀ → itself`, `constantᵀ → constant` (the op's folder)."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: TransposeOp, rewriter: PatternRewriter) -> None:
        inner = op.input.owner
        t = op.input.type
        assert isinstance(t, MatrixType)
        if t.shape == (1, 1):
            rewriter.replace(op, [], [op.input])
        elif isinstance(inner, TransposeOp):
            rewriter.replace(op, [], [inner.input])
        elif isinstance(inner, ConstantOp) and (c := transposed_constant(inner)):
            rewriter.replace(op, c)
        else:
            return
        _erase_dead([op.input], rewriter)


@dataclass(frozen=True)
class MatrixFoldTransposesPass(ModulePass):
    """Removes, sinks and lifts matrix transposes (see the module docstring)."""

    name = "matrix-fold-transposes"

    report: bool = False
    """Print per function the transpose counts before and after, to stderr."""

    def apply(self, ctx: Context, op: builtin.ModuleOp) -> None:
        functions = [f for f in op.walk() if isinstance(f, func.FuncOp)]
        before = {f: transpose_cost(f) for f in functions}
        PatternRewriteWalker(
            GreedyRewritePatternApplier(
                [
                    FoldTransposeOfTranspose(),
                    TransposeOfSplat(),
                    TransposeOfLoad(),
                    StoreOfTranspose(),
                    ExtractOfTranspose(),
                    SinkTranspose(),
                    LiftTranspose(),
                ]
            )
        ).rewrite_module(op)
        if self.report:
            for f in functions:
                (m0, n0), (m1, n1) = before[f], transpose_cost(f)
                print(
                    f"remark: matrix-fold-transposes: @{f.sym_name.data}: "
                    f"transposes {n0} -> {n1}, materialized {m0} -> {m1}",
                    file=sys.stderr,
                )

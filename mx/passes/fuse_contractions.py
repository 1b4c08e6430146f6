"""`matrix-fuse-contractions`: fuse multiplies into the adds that consume them.

Rewrites (`c` may be either operand of a commutative add):

- `add(matmul(a, b), c) → matmul_add(a, b, c)`;
  `arith.addf/addi(matvec(m, x), bias) → matvec(m, x, bias)`. Always legal:
  the fused op rounds exactly as the pair (docs/matrix-dialect.md). It carries
  the fastmath flags both ops share, and a mixed-precision product keeps its
  narrower factors and `{unsigned}`.
- `add(mul(a, b), c) → fma(a, b, c)`; `sub(mul(a, b), c) → fma(a, b, neg(c))`;
  `sub(c, mul(a, b)) → fma(neg(a), b, c)` (negation is exact, so these are
  a·b - c and c - a·b rounded once). A splat operand of the `mul` is the scalar
  form `s·A + B`. These change the rounding, so they need `contract` on every
  op involved, unless `mode=matrix` (Clang's proposed `-ffp-contract=matrix`)
  asks to contract matrix ops regardless of their flags. `mode=off` fuses
  only the rounding-preserving forms.

A product with another user is never fused: the fused op would recompute it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import ClassVar, TypeVar

from xdsl.context import Context
from xdsl.dialects import arith, builtin
from xdsl.dialects.arith import FastMathFlagsAttr
from xdsl.dialects.utils.fast_math import FastMathFlag
from xdsl.ir import Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import (
    GreedyRewritePatternApplier,
    PatternRewriter,
    PatternRewriteWalker,
    RewritePattern,
    op_type_rewrite_pattern,
)

from mx.dialects.matrix import (
    AddOp,
    FmaOp,
    MatmulAddOp,
    MatmulOp,
    MatrixOp,
    MatvecOp,
    MulOp,
    NegOp,
    SubOp,
    is_float_element,
)
from mx.passes.options import check_option_choices

MODES = ("fastmath", "matrix", "off")


def shared_flags(*ops: Operation) -> FastMathFlagsAttr:
    """The fastmath flags every one of `ops` carries."""
    flags: frozenset[FastMathFlag] | None = None
    for op in ops:
        attr = op.properties.get("fastmath")
        own = attr.data if isinstance(attr, FastMathFlagsAttr) else frozenset()
        flags = own if flags is None else flags & own
    return FastMathFlagsAttr(flags or frozenset())


_Op = TypeVar("_Op", bound=Operation)


def _sole_product(value: SSAValue, kind: type[_Op]) -> _Op | None:
    """The `kind` op defining `value` if this is its only use."""
    owner = value.owner
    if isinstance(owner, kind) and value.has_one_use():
        return owner
    return None


class AddOfMatmul(RewritePattern):
    """`add(matmul(a, b), c)` or `add(c, matmul(a, b))` → `matmul_add(a, b, c)`."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: AddOp, rewriter: PatternRewriter) -> None:
        for product, acc in ((op.lhs, op.rhs), (op.rhs, op.lhs)):
            if (mm := _sole_product(product, MatmulOp)) is not None:
                fused = MatmulAddOp(
                    mm.lhs,
                    mm.rhs,
                    acc,
                    shared_flags(mm, op),
                    unsigned=mm.unsigned is not None,
                )
                rewriter.replace(op, fused)
                rewriter.erase(mm)
                return


class AddOfMatvec(RewritePattern):
    """`arith.addf/addi(matvec(m, x), bias)` (either order) → `matvec(m, x, bias)`."""

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter, /) -> None:
        if not isinstance(op, arith.AddfOp | arith.AddiOp):
            return
        for product, bias in ((op.lhs, op.rhs), (op.rhs, op.lhs)):
            mv = _sole_product(product, MatvecOp)
            if mv is not None and mv.bias is None:
                flags = shared_flags(mv, op)
                fused = MatvecOp(
                    mv.matrix,
                    mv.vector,
                    bias,
                    flags,
                    mv.result_element,
                    unsigned=mv.unsigned is not None,
                )
                rewriter.replace(op, fused)
                rewriter.erase(mv)
                return


@dataclass(frozen=True)
class FuseMulAdd(RewritePattern):
    """`add(mul(a, b), c) → fma(a, b, c)`; `sub(mul(a, b), c) → fma(a, b, neg(c))`;
    `sub(c, mul(a, b)) → fma(neg(a), b, c)`; only with `contract` on every op
    involved, or always under `mode=matrix`."""

    ignore_flags: bool

    def _allowed(self, *ops: MatrixOp) -> bool:
        return self.ignore_flags or all(
            FastMathFlag.ALLOW_CONTRACT in op.fastmath_flags().data for op in ops
        )

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter, /) -> None:
        if not isinstance(op, AddOp | SubOp):
            return
        t = op.result.type
        if not is_float_element(t.element_type):
            return
        candidates = [(op.lhs, op.rhs, False)]
        candidates.append((op.rhs, op.lhs, isinstance(op, SubOp)))
        for product, other, negate_product in candidates:
            mul = _sole_product(product, MulOp)
            if mul is None or not self._allowed(mul, op):
                continue
            flags = shared_flags(mul, op)
            a, b, c = mul.lhs, mul.rhs, other
            new_ops: list[Operation] = []
            if negate_product:
                # c - a·b = (-a)·b + c
                neg = NegOp(a, fastmath=flags)
                neg.result.name_hint = "neg"
                new_ops.append(neg)
                a = neg.result
            elif isinstance(op, SubOp):
                # a·b - c = a·b + (-c)
                neg = NegOp(c, fastmath=flags)
                neg.result.name_hint = "neg"
                new_ops.append(neg)
                c = neg.result
            new_ops.append(FmaOp(a, b, c, fastmath=flags))
            rewriter.replace(op, new_ops)
            rewriter.erase(mul)
            return


@dataclass(frozen=True)
class MatrixFuseContractionsPass(ModulePass):
    """Fuses products into the sums that consume them (see the module docstring)."""

    name = "matrix-fuse-contractions"

    mode: str = "fastmath"
    """`fastmath`: fuse into fma only with `contract` on every op; `matrix`:
    regardless of flags (-ffp-contract=matrix); `off`: never into fma."""

    option_choices: ClassVar[dict[str, Sequence[object]]] = {"mode": MODES}

    def __post_init__(self) -> None:
        check_option_choices(self)

    def apply(self, ctx: Context, op: builtin.ModuleOp) -> None:
        patterns: list[RewritePattern] = [AddOfMatmul(), AddOfMatvec()]
        if self.mode != "off":
            patterns.append(FuseMulAdd(ignore_flags=self.mode == "matrix"))
        PatternRewriteWalker(GreedyRewritePatternApplier(patterns)).rewrite_module(op)

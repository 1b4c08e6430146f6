"""Legalizes f16/bf16 arithmetic before lowering to LLVM.

Applied on `arith`/`math`/`vector` ops, before the `llvm` patterns:
- bf16 arithmetic is promoted to f32 and rounded back with integer
  arithmetic (f32 keeps enough bits that +, -, *, / and sqrt round correctly
  twice: 24 >= 2*8+2); LLVM never sees a bf16 `fptrunc` or bf16 arithmetic;
- conversions that LLVM would lower to libcalls or round twice (f64 -> f16,
  f64/f32/f16 -> bf16, integer -> bf16, f16 -> f64) get exact expansions;
- fma on f16/bf16 is computed with a single rounding (exact product in f64,
  sum rounded to odd, then narrowed).
"""

from typing import ClassVar

from xdsl.dialects import arith, math, vector
from xdsl.dialects.builtin import (
    BFloat16Type,
    Float16Type,
    Float64Type,
    IntegerAttr,
    IntegerType,
    VectorType,
    f32,
    f64,
)
from xdsl.ir import Attribute, Operation, SSAValue
from xdsl.pattern_rewriter import (
    PatternRewriter,
    RewritePattern,
    op_type_rewrite_pattern,
)
from xdsl.utils.exceptions import VerifyException

from mx.lowering.bf16 import (
    add_round_to_odd_f64,
    extf_bf16_to_f32,
    round_f64_to_odd_f32,
    truncf_to_bf16,
)
from mx.lowering.dispatch import OpClasses


def _element(type_: Attribute) -> Attribute:
    return type_.element_type if isinstance(type_, VectorType) else type_


def _with_element(type_: Attribute, element: Attribute) -> Attribute:
    if isinstance(type_, VectorType):
        return VectorType(element, type_.get_shape())
    return element


def _insert(
    rewriter: PatternRewriter, built: tuple[list[Operation], SSAValue]
) -> SSAValue:
    ops, value = built
    rewriter.insert(ops)
    return value


def _extend(value: SSAValue, target: Attribute, rewriter: PatternRewriter) -> SSAValue:
    """Exact widening of an f16/bf16/f32 value to f32 or f64 (`target`)."""
    element = _element(value.type)
    if isinstance(element, BFloat16Type):
        value = _insert(rewriter, extf_bf16_to_f32(value))
    elif isinstance(element, Float16Type):
        value = rewriter.insert(
            arith.ExtFOp(value, _with_element(value.type, f32))
        ).result
    if target == f64:
        value = rewriter.insert(
            arith.ExtFOp(value, _with_element(value.type, f64))
        ).result
    return value


def _narrow(value: SSAValue, target: Attribute, rewriter: PatternRewriter) -> SSAValue:
    """Single-rounding narrowing of an f32/f64 value to f16 or bf16."""
    if isinstance(target, BFloat16Type):
        return _insert(rewriter, truncf_to_bf16(value))
    if isinstance(_element(value.type), Float64Type):
        value = _insert(rewriter, round_f64_to_odd_f32(value))
    return rewriter.insert(
        arith.TruncFOp(value, _with_element(value.type, target))
    ).result


_PROMOTED_BF16_OPS = (
    arith.FloatingPointLikeBinaryOperation
    | arith.NegfOp
    | arith.CmpfOp
    | arith.FPToSIOp
    | arith.FPToUIOp
    | math.FloatingPointLikeUnaryMathOperation
    | math.FloatingPointLikeBinaryMathOperation
    | math.FPowIOp
)


class PromoteBF16Arithmetic(RewritePattern):
    """op(bf16...) -> truncf(op(extf(...) : f32)) : bf16, for ops LLVM cannot
    be trusted with on bf16 (all float arithmetic, comparisons, conversions
    to integers and math functions)."""

    source: ClassVar[OpClasses] = _PROMOTED_BF16_OPS
    """The op classes tried (see `OpTypeDispatchApplier`)."""

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter, /):
        if not isinstance(op, _PROMOTED_BF16_OPS) or isinstance(op, math.FmaOp):
            return
        if not any(isinstance(_element(v.type), BFloat16Type) for v in op.operands):
            return
        operands = [
            _extend(v, f32, rewriter)
            if isinstance(_element(v.type), BFloat16Type)
            else v
            for v in op.operands
        ]
        result_types = [
            _with_element(r.type, f32)
            if isinstance(_element(r.type), BFloat16Type)
            else r.type
            for r in op.results
        ]
        promoted = rewriter.insert(
            type(op).create(
                operands=operands,
                result_types=result_types,
                properties=dict(op.properties),
                attributes=dict(op.attributes),
            )
        )
        results = [
            _narrow(
                new,
                old.type.element_type if isinstance(old.type, VectorType) else old.type,
                rewriter,
            )
            if isinstance(_element(old.type), BFloat16Type)
            else new
            for old, new in zip(op.results, promoted.results, strict=False)
        ]
        rewriter.replace(op, [], results)


class ExpandTruncF(RewritePattern):
    """arith.truncf to bf16, or from f64 to f16 -> exact integer expansion
    (LLVM would use AVX512-BF16, a libcall, or round twice)."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: arith.TruncFOp, rewriter: PatternRewriter, /):
        target = _element(op.result.type)
        source = _element(op.input.type)
        if isinstance(target, BFloat16Type) or (
            isinstance(target, Float16Type) and isinstance(source, Float64Type)
        ):
            rewriter.replace(op, [], [_narrow(op.input, target, rewriter)])


class ExpandExtF(RewritePattern):
    """arith.extf from bf16 (shift + bitcast), or f16 -> f64 through f32
    (avoids the `__extendhfdf2` libcall)."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: arith.ExtFOp, rewriter: PatternRewriter, /):
        source = _element(op.input.type)
        target = _element(op.result.type)
        if isinstance(source, BFloat16Type) or (
            isinstance(source, Float16Type) and isinstance(target, Float64Type)
        ):
            rewriter.replace(op, [], [_extend(op.input, target, rewriter)])


class ExpandIntToBF16(RewritePattern):
    """arith.sitofp / arith.uitofp to bf16 -> exact f64 (split in two halves
    above 32 bits), summed with rounding to odd, then narrowed once."""

    source: ClassVar[OpClasses] = arith.SIToFPOp | arith.UIToFPOp

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter, /):
        if not isinstance(op, arith.SIToFPOp | arith.UIToFPOp):
            return
        if not isinstance(_element(op.result.type), BFloat16Type):
            return
        signed = isinstance(op, arith.SIToFPOp)
        to_f64 = arith.SIToFPOp if signed else arith.UIToFPOp
        source = op.input
        width = _element(source.type)
        assert isinstance(width, IntegerType)
        f64_type = _with_element(source.type, f64)
        if width.width.data <= 32:
            wide = rewriter.insert(to_f64(source, f64_type)).result  # pyright: ignore[reportArgumentType]
        elif width.width.data <= 64:
            wide = self._split_sum(source, signed, rewriter)
        else:
            raise VerifyException(
                f"'{op.name}': conversion of {width} to bf16 is not supported"
            )
        rewriter.replace(
            op,
            [],
            [
                _narrow(
                    wide,
                    op.result.type
                    if not isinstance(op.result.type, VectorType)
                    else op.result.type.element_type,
                    rewriter,
                )
            ],
        )

    @staticmethod
    def _split_sum(
        source: SSAValue, signed: bool, rewriter: PatternRewriter
    ) -> SSAValue:
        i64_type = _with_element(source.type, IntegerType(64))
        f64_type = _with_element(source.type, f64)
        extend = arith.ExtSIOp if signed else arith.ExtUIOp
        if _element(source.type) != IntegerType(64):
            source = rewriter.insert(extend(source, i64_type)).result  # pyright: ignore[reportArgumentType]

        def splat(value: int) -> SSAValue:
            if isinstance(i64_type, VectorType):
                from xdsl.dialects.builtin import DenseIntOrFPElementsAttr

                attr: Attribute = DenseIntOrFPElementsAttr.from_list(i64_type, [value])
            else:
                attr = IntegerAttr(value, 64)
            return rewriter.insert(arith.ConstantOp(attr)).result

        shift = splat(32)
        high = rewriter.insert(
            (arith.ShRSIOp if signed else arith.ShRUIOp)(source, shift)
        ).result
        low = rewriter.insert(arith.AndIOp(source, splat(0xFFFFFFFF))).result
        high_f = rewriter.insert(
            (arith.SIToFPOp if signed else arith.UIToFPOp)(high, f64_type)  # pyright: ignore[reportArgumentType]
        ).result
        # high * 2**32 is exact: an integer of at most 32 significant bits.
        scaled = rewriter.insert(
            arith.MulfOp(
                high_f,
                rewriter.insert(arith.UIToFPOp(splat(1 << 32), f64_type)).result,  # pyright: ignore[reportArgumentType]
            )
        ).result
        low_f = rewriter.insert(arith.UIToFPOp(low, f64_type)).result  # pyright: ignore[reportArgumentType]
        return _insert(rewriter, add_round_to_odd_f64(scaled, low_f))


class ExpandNarrowFma(RewritePattern):
    """math.fma / vector.fma on f16 or bf16 -> single rounding: the product
    is exact in f64, the sum is rounded to odd, then narrowed once (LLVM
    promotes an f16 fma to an f32 fma and rounds twice)."""

    source: ClassVar[OpClasses] = math.FmaOp | vector.FMAOp

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter, /):
        if not isinstance(op, math.FmaOp | vector.FMAOp):
            return
        element = _element(op.results[0].type)
        if not isinstance(element, Float16Type | BFloat16Type):
            return
        a, b, c = (_extend(v, f64, rewriter) for v in op.operands)
        product = rewriter.insert(arith.MulfOp(a, b)).result
        total = _insert(rewriter, add_round_to_odd_f64(product, c))
        rewriter.replace(op, [], [_narrow(total, element, rewriter)])


NARROW_FLOAT_PATTERNS: tuple[RewritePattern, ...] = (
    PromoteBF16Arithmetic(),
    ExpandTruncF(),
    ExpandExtF(),
    ExpandIntToBF16(),
    ExpandNarrowFma(),
)

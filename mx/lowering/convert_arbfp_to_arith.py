"""`convert-arbfp-to-arith`: branch-free integer lowering of arbfp's conversions.

convert_from builds the f32 bits of the value: the encoding's exponent and
mantissa fields are placed in an f32 and scaled by 2^(127 - bias) (an exact
multiply that also produces subnormals), then NaN/inf/sign are patched in with
selects; f64 is an exact `extf`, f16 a single `truncf` (the only rounding
arbfp.md allows), bf16 the high half of the (bf16-exact) f32 bits.

convert_to extends the source exactly to f64 and rounds its integer significand
with shifts and compares, as `mx.semantics.arbfp.encode` does.

`emit_convert_from` / `emit_convert_to` return the ops to insert and the result
value, for scalars (what the matrix lowering calls per element). Vectors are
not lowered yet: xDSL 0.75's `arith.cmpi` only has an `i1` result, so the
selects would need to become integer masks.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, cast

from xdsl.context import Context
from xdsl.dialects import arith
from xdsl.dialects.builtin import (
    BFloat16Type,
    Float16Type,
    Float64Type,
    IntegerType,
    ModuleOp,
    VectorType,
    f32,
    f64,
)
from xdsl.ir import Attribute, Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import (
    GreedyRewritePatternApplier,
    PatternRewriter,
    PatternRewriteWalker,
    RewritePattern,
    op_type_rewrite_pattern,
)

from mx.dialects.arbfp import ConvertFromOp, ConvertToOp
from mx.lowering.bf16 import _Emitter, extf_bf16_to_f32
from mx.semantics.arbfp import FloatFormat, NanEncoding, Rounding

i32 = IntegerType(32)
i64 = IntegerType(64)


def _element(t: Attribute) -> Attribute:
    return cast(VectorType, t).element_type if isinstance(t, VectorType) else t


def emit_convert_from(
    fmt: FloatFormat, bits: SSAValue, float_type: Attribute
) -> tuple[list[Operation], SSAValue]:
    """Ops computing convert_from of the scalar `bits` (iN) into `float_type`
    (f16/bf16/f32/f64)."""
    e = _Emitter(bits.type)
    p = fmt.mantissa_bits
    x = e.add(arith.ExtUIOp(bits, cast(Any, e.type(i32))))
    magnitude = e.add(arith.AndIOp(x, e.const((1 << fmt.magnitude_bits) - 1, 32)))
    placed = e.add(arith.ShLIOp(magnitude, e.const(23 - p, 32)))
    if not fmt.has_zero:  # exponent field 0 is 2^-127: the f32 subnormal 0x00400000
        is_zero = e.cmpi(magnitude, e.const(0, 32), "eq")
        placed = e.select(is_zero, e.const(0x00400000, 32), placed)
    if fmt.has_zero and fmt.bias != 127:
        scale = e.bitcast(e.const((254 - fmt.bias) << 23, 32), f32)  # 2^(127 - bias)
        value = e.add(arith.MulfOp(e.bitcast(placed, f32), scale))
        result = e.bitcast(value, i32)
    else:
        result = placed
    if fmt.signed:
        sign = e.add(arith.AndIOp(x, e.const(fmt.sign_bit, 32)))
        moved = e.add(arith.ShLIOp(sign, e.const(31 - fmt.magnitude_bits, 32)))
        result = e.add(arith.OrIOp(result, moved))
    if fmt.inf_magnitude is not None:
        is_inf = e.cmpi(magnitude, e.const(fmt.inf_magnitude, 32), "eq")
        inf = e.add(
            arith.OrIOp(
                e.const(0x7F800000, 32),
                e.add(arith.AndIOp(result, e.const(1 << 31, 32))),
            )
        )
        result = e.select(is_inf, inf, result)
    match fmt.nan:
        case NanEncoding.IEEE:
            is_nan = e.cmpi(magnitude, e.const(cast(int, fmt.inf_magnitude), 32), "ugt")
        case NanEncoding.ALL_ONES:
            is_nan = e.cmpi(magnitude, e.const((1 << fmt.magnitude_bits) - 1, 32), "eq")
        case NanEncoding.NEG_ZERO:
            is_nan = e.cmpi(x, e.const(fmt.sign_bit, 32), "eq")
        case NanEncoding.NONE:
            is_nan = None
    if is_nan is not None:
        result = e.select(is_nan, e.const(0x7FC00000, 32), result)
    element = _element(float_type)
    if isinstance(element, BFloat16Type):  # exact: every value fits bf16
        high = e.add(arith.ShRUIOp(result, e.const(16, 32)))
        narrow = e.add(arith.TruncIOp(high, cast(Any, e.type(IntegerType(16)))))
        return e.ops, e.bitcast(narrow, element)
    value = e.bitcast(result, f32)
    if isinstance(element, Float64Type):
        value = e.add(arith.ExtFOp(value, e.type(f64)))
    elif isinstance(element, Float16Type):
        value = e.add(arith.TruncFOp(value, e.type(element)))
    return e.ops, value


def emit_convert_to(
    fmt: FloatFormat,
    value: SSAValue,
    rounding: Rounding = Rounding.NEAREST_EVEN,
    saturate: bool = False,
) -> tuple[list[Operation], SSAValue]:
    """Ops computing convert_to of the scalar `value` (f16/bf16/f32/f64) into
    the format's iN container."""
    ops: list[Operation] = []
    element = _element(value.type)
    if isinstance(element, BFloat16Type):
        ops, value = extf_bf16_to_f32(value)
        element = f32
    e = _Emitter(value.type)
    e.ops = ops
    if not isinstance(element, Float64Type):
        value = e.add(arith.ExtFOp(value, e.type(f64)))  # exact
    p = fmt.mantissa_bits

    def c(v: int) -> SSAValue:
        return e.const(v, 64)

    def op(cls: type[Any], a: SSAValue, b: SSAValue) -> SSAValue:
        return e.add(cls(a, b))

    u = e.bitcast(value, i64)
    negative = e.cmpi(u, c(0), "slt")
    a = op(arith.AndIOp, u, c((1 << 63) - 1))
    is_nan = e.cmpi(a, c(0x7FF << 52), "ugt")
    is_inf = e.cmpi(a, c(0x7FF << 52), "eq")
    field = op(arith.ShRUIOp, a, c(52))
    mantissa = op(arith.AndIOp, a, c((1 << 52) - 1))
    is_normal = e.cmpi(field, c(0), "ne")
    significand = e.select(is_normal, op(arith.OrIOp, mantissa, c(1 << 52)), mantissa)
    # value = significand * 2^(exponent - 52); round at 2^(E - p), E = max(exponent, emin)
    exponent = op(arith.SubiOp, op(arith.MaxSIOp, field, c(1)), c(1023))
    target = op(arith.MaxSIOp, exponent, c(fmt.emin))
    shift = op(arith.AddiOp, op(arith.SubiOp, target, exponent), c(52 - p))
    shift = op(arith.MinSIOp, shift, c(60))  # beyond 53 every bit is dropped anyway
    n = op(arith.ShRUIOp, significand, shift)
    one = c(1)
    remainder = op(
        arith.AndIOp, significand, op(arith.SubiOp, op(arith.ShLIOp, one, shift), one)
    )
    half = op(arith.ShLIOp, one, op(arith.SubiOp, shift, one))
    inexact = e.cmpi(remainder, c(0), "ne")
    match rounding:
        case Rounding.NEAREST_EVEN:
            odd = e.cmpi(op(arith.AndIOp, n, one), c(0), "ne")
            tie = e.cmpi(remainder, half, "eq")
            above = e.cmpi(remainder, half, "ugt")
            up = op(arith.OrIOp, above, op(arith.AndIOp, tie, odd))
        case Rounding.NEAREST_AWAY:
            up = e.cmpi(remainder, half, "uge")
        case Rounding.TOWARD_ZERO:
            up = e.cmpi(remainder, remainder, "ne")  # false
        case Rounding.UPWARD:
            up = op(arith.AndIOp, inexact, e.cmpi(u, c(0), "sge"))
        case Rounding.DOWNWARD:
            up = op(arith.AndIOp, inexact, negative)
    n = op(arith.AddiOp, n, e.add(arith.ExtUIOp(up, cast(Any, e.type(i64)))))
    biased = op(arith.AddiOp, target, c(fmt.bias - 1))
    encoded = op(arith.AddiOp, op(arith.ShLIOp, biased, c(p)), n)
    if not fmt.has_zero:
        encoded = op(arith.MaxSIOp, encoded, c(0))
    overflow = e.cmpi(encoded, c(fmt.max_magnitude), "sgt")
    match rounding:
        case Rounding.NEAREST_EVEN | Rounding.NEAREST_AWAY:
            to_inf = op(arith.OrIOp, is_inf, overflow)
        case Rounding.TOWARD_ZERO:
            to_inf = is_inf
        case Rounding.UPWARD:
            positive = e.cmpi(u, c(0), "sge")
            to_inf = op(arith.OrIOp, is_inf, op(arith.AndIOp, overflow, positive))
        case Rounding.DOWNWARD:
            to_inf = op(arith.OrIOp, is_inf, op(arith.AndIOp, overflow, negative))
    sign = e.select(negative, c(fmt.sign_bit), c(0))
    max_code = op(arith.OrIOp, sign, c(fmt.max_magnitude))
    if saturate:
        inf_code = max_code
    elif fmt.inf_magnitude is not None:
        inf_code = op(arith.OrIOp, sign, c(fmt.inf_magnitude))
    elif fmt.nan_encoding is not None:
        inf_code = c(fmt.nan_encoding)
    else:
        inf_code = max_code
    if not fmt.has_neg_zero:
        sign = e.select(e.cmpi(encoded, c(0), "eq"), c(0), sign)
    result = e.select(overflow, max_code, op(arith.OrIOp, encoded, sign))
    result = e.select(to_inf, inf_code, result)
    invalid = c(0 if saturate or fmt.nan_encoding is None else fmt.nan_encoding)
    if not fmt.signed and fmt.has_zero:  # f8e5m3fnu
        bad = op(arith.AndIOp, negative, e.cmpi(result, c(0), "ne"))
        result = e.select(bad, invalid, result)
    if not fmt.has_zero:  # f8e8m0fnu
        bad = op(arith.OrIOp, negative, e.cmpi(a, c(0), "eq"))
        result = e.select(bad, invalid, result)
    result = e.select(is_nan, c(fmt.nan_encoding or 0), result)
    narrow = e.add(arith.TruncIOp(result, cast(Any, e.type(IntegerType(fmt.bits)))))
    return e.ops, narrow


class LowerConvertFrom(RewritePattern):
    """arbfp.convert_from on a scalar or vector -> arith integer/bit ops."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: ConvertFromOp, rewriter: PatternRewriter) -> None:
        if not isinstance(op.input.type, IntegerType):
            return  # matrices: convert-matrix-to-affine calls emit_convert_from
            # (vectors: not yet, xDSL 0.75's arith.cmpi has no vector form)
        ops, value = emit_convert_from(op.float_format, op.input, op.float_type)
        rewriter.replace(op, ops, [value])


class LowerConvertTo(RewritePattern):
    """arbfp.convert_to on a scalar or vector -> arith integer/bit ops."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: ConvertToOp, rewriter: PatternRewriter) -> None:
        if isinstance(op.result.type, IntegerType):  # scalars, as above
            ops, value = emit_convert_to(
                op.float_format, op.input, op.rounding_mode, op.saturating
            )
            rewriter.replace(op, ops, [value])


@dataclass(frozen=True)
class ConvertArbfpToArithPass(ModulePass):
    """Lowers arbfp conversions of scalars and vectors to branch-free arith."""

    name = "convert-arbfp-to-arith"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        PatternRewriteWalker(
            GreedyRewritePatternApplier([LowerConvertFrom(), LowerConvertTo()])
        ).rewrite_module(op)

"""`convert-arbfp-to-arith`: branch-free integer lowering of arbfp's conversions.

convert_from places the bits of a format that is a native type's upper bits
(f8e5m2 into f16) directly. Otherwise it builds the f32 bits of the value: the
encoding's exponent and mantissa fields are placed in an f16 (formats with
fewer exponent bits than f16: converted by the hardware, then scaled by an
exact multiply) or in an f32, the exponent rebiased by an integer add
(subnormal encodings: an exact subtraction of two normal f32 values), so no
f32 subnormal is ever an operand; then NaN/inf/sign are patched in; f64 is an exact `extf`, f16 a single `truncf`
(the only rounding docs/arbfp-dialect.md allows), bf16 the high half of the (bf16-exact)
f32 bits.

convert_to rounds with an unbounded exponent, then settles overflow, inf,
NaN and sign. It rounds the bits of f16/bf16/f32 sources (extended exactly to
f32) in i32, of f64 sources (narrowing them would round twice) in i64, with
fixed shifts and one float add in the format's subnormal range
(`_round_fixed`); f8e8m0fnu rounds f64 bits with variable shifts, as
`mx.semantics.arbfp.encode` does (`_round_with_shifts`). The float add, like
convert_from's subtraction, assumes the default floating-point environment
(round to nearest even, no flush of subnormals to zero).

Every condition is an integer mask (`mx.lowering.bitwise`), never an
`arith.cmpi`/`select` on `i1`, so the same ops lower scalars and vectors (xDSL
0.75's `arith.cmpi` has no vector result). `emit_convert_from` /
`emit_convert_to` return the ops to insert and the result value;
convert-matrix-to-affine calls them for the scalar conversions in its loops.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import cast

from xdsl.context import Context
from xdsl.dialects import arith, func, memref, scf, vector
from xdsl.dialects.builtin import (
    BFloat16Type,
    Float16Type,
    Float64Type,
    IndexType,
    IntegerAttr,
    IntegerType,
    ModuleOp,
    UnrealizedConversionCastOp,
    VectorType,
    bf16,
    f16,
    f32,
    f64,
)
from xdsl.ir import Attribute, Block, Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import (
    PatternRewriter,
    RewritePattern,
    op_type_rewrite_pattern,
)
from xdsl.rewriter import InsertPoint

from mx.dialects.arbfp import (
    ConvertFromOp,
    ConvertToOp,
    ScaledConvertFromOp,
    ScaledConvertToOp,
)
from mx.lowering import build
from mx.lowering.bf16 import extf_bf16_to_f32
from mx.lowering.bitwise import BitwiseEmitter, IntegerConstant, integer_width
from mx.lowering.dispatch import OpTypeDispatchApplier, erase_dead_ops, rewrite_once
from mx.semantics.arbfp import (
    FORMATS,
    SCALE_NAN,
    FloatFormat,
    NanEncoding,
    Rounding,
    ScaleRule,
)


def _element(t: Attribute) -> Attribute:
    return cast(VectorType, t).element_type if isinstance(t, VectorType) else t


@dataclass(frozen=True)
class _Binary:
    """A native float type's layout: `width` bits, `mantissa` stored fraction
    bits, exponent `bias`."""

    type: Attribute
    width: int
    mantissa: int
    bias: int

    @property
    def exponent(self) -> int:
        return self.width - self.mantissa - 1


_F16 = _Binary(f16, 16, 10, 15)
_BF16 = _Binary(bf16, 16, 7, 127)
_F32 = _Binary(f32, 32, 23, 127)
_F64 = _Binary(f64, 64, 52, 1023)


def emit_convert_from(
    fmt: FloatFormat,
    bits: SSAValue,
    float_type: Attribute,
    constant: Callable[[IntegerConstant], SSAValue] | None = None,
) -> tuple[list[Operation], SSAValue]:
    """Ops computing convert_from of `bits` (iN or a vector of iN) into
    `float_type` (f16/bf16/f32/f64, or a vector of the same shape); their
    constants from `constant` if given (`BitwiseEmitter`)."""
    e = BitwiseEmitter(bits.type, constant)
    element = _element(float_type)
    b = next(b for b in (_F16, _BF16, _F32, _F64) if b.type == element)
    if (
        (fmt.exponent_bits, fmt.bias) == (b.exponent, b.bias)
        and fmt.has_inf
        and fmt.signed
    ):
        # The format is the destination's upper bits (f8e5m2 of f16):
        # subnormals, inf and NaN included, so placing the bits is exact.
        placed = e.shl(e.ext_unsigned(bits, b.width), b.width - fmt.bits)
        return e.ops, e.bitcast(placed, element)
    x = e.ext_unsigned(bits, 32)
    magnitude = e.and_(x, (1 << fmt.magnitude_bits) - 1)
    if fmt.exponent_bits < _F16.exponent:
        result = _through_f16(e, fmt, bits)
    else:
        result = _magnitude_rebiased(e, fmt, magnitude)
        if fmt.signed:
            sign = e.and_(x, fmt.sign_bit)
            result = e.or_(result, e.shl(sign, 31 - fmt.magnitude_bits))
    if fmt.inf_magnitude is not None:
        # The inf encoding scales to 2^(emax+1), whose f32 mantissa is zero.
        infinite = e.and_(e.equal(magnitude, fmt.inf_magnitude), 0x7F800000)
        result = e.or_(result, infinite)
    match fmt.nan:
        case NanEncoding.IEEE:
            is_nan = e.less(cast(int, fmt.inf_magnitude), magnitude)
        case NanEncoding.ALL_ONES:
            is_nan = e.equal(magnitude, (1 << fmt.magnitude_bits) - 1)
        case NanEncoding.NEG_ZERO:
            is_nan = e.equal(x, fmt.sign_bit)
        case NanEncoding.NONE:
            is_nan = None
    if is_nan is not None:
        result = e.select(is_nan, 0x7FC00000, result)
    if isinstance(element, BFloat16Type):  # exact: every value fits bf16
        narrow = e.trunc(e.shr(result, 16), 16)
        return e.ops, e.bitcast(narrow, element)
    value = e.bitcast(result, f32)
    if isinstance(element, Float64Type):
        value = e.add(arith.ExtFOp(value, e.type(f64)))
    elif isinstance(element, Float16Type):
        value = e.add(arith.TruncFOp(value, e.type(element)))
    return e.ops, value


def _through_f16(e: BitwiseEmitter, fmt: FloatFormat, bits: SSAValue) -> SSAValue:
    """The f32 bits of the value (sign included) of a format with fewer
    exponent bits than f16: its fields placed in an f16 are the value times
    2^(bias - 15), subnormals included, never f16's inf or NaN; the hardware conversion to
    f32 (F16C, no assist for f16 subnormals) and an exact multiply by
    2^(15 - bias) of a normal f32 give it (the inf encoding gives 2^(emax+1),
    whose f32 mantissa is zero, as the integer path's)."""
    x = e.resize_unsigned(bits, 16)  # the encoding may come in an i32 lane
    magnitude = e.and_(x, (1 << fmt.magnitude_bits) - 1)
    placed = e.shl(magnitude, _F16.mantissa - fmt.mantissa_bits)
    if fmt.signed:
        placed = e.or_(placed, e.shl(e.and_(x, fmt.sign_bit), 15 - fmt.magnitude_bits))
    half = e.bitcast(placed, f16)
    value = e.add(arith.ExtFOp(half, e.type(f32)))
    if fmt.bias != _F16.bias:
        scale = e.bitcast(e.const((127 + _F16.bias - fmt.bias) << 23, 32), f32)
        value = e.add(arith.MulfOp(value, scale))
    return e.bitcast(value, IntegerType(32))


def _magnitude_rebiased(
    e: BitwiseEmitter, fmt: FloatFormat, magnitude: SSAValue
) -> SSAValue:
    """The f32 bits of |value| from the encoding's magnitude bits (i32): its
    fields placed in an f32, the exponent rebiased by an integer add.
    Subnormal encodings (exponent field 0): 2^(1-bias)·(1 + m/2^p) minus
    2^(1-bias), both normal f32 values, so the subtraction is exact and no
    f32 subnormal is ever an operand (Intel cores take a microcode assist of
    ~100 cycles for each such multiply)."""
    placed = e.shl(magnitude, 23 - fmt.mantissa_bits)
    if not fmt.has_zero:  # exponent field 0 is 2^-127: the f32 subnormal 0x00400000
        return e.or_(placed, e.and_(e.is_zero(magnitude), 0x00400000))
    if fmt.bias == 127:
        return placed
    normal = e.addi(placed, (127 - fmt.bias) << 23)
    offset = e.bitcast(e.addi(placed, (128 - fmt.bias) << 23), f32)
    least = e.bitcast(e.const((128 - fmt.bias) << 23, 32), f32)  # 2^(1-bias)
    subnormal = e.bitcast(e.add(arith.SubfOp(offset, least)), IntegerType(32))
    exponent_field = ((1 << fmt.exponent_bits) - 1) << 23
    is_subnormal = e.is_zero(e.and_(placed, exponent_field))
    return e.select(is_subnormal, subnormal, normal)


def _round_up(
    e: BitwiseEmitter,
    rounding: Rounding,
    n: SSAValue,
    remainder: SSAValue,
    half: SSAValue,
    negative: SSAValue,
) -> SSAValue | None:
    """Mask of the values whose truncated significand `n` must grow by one
    unit (`remainder` is what was cut off, `half` half a unit)."""
    match rounding:
        case Rounding.NEAREST_EVEN:  # above half, or a tie with odd n
            return e.less(e.subi(half, e.and_(n, 1)), remainder)
        case Rounding.NEAREST_AWAY:
            return e.less(e.subi(half, 1), remainder)
        case Rounding.TOWARD_ZERO:
            return None
        case Rounding.UPWARD:
            return e.and_(e.nonzero(remainder), e.not_(negative))
        case Rounding.DOWNWARD:
            return e.and_(e.nonzero(remainder), negative)


def _round_with_shifts(
    e: BitwiseEmitter,
    fmt: FloatFormat,
    b: _Binary,
    a: SSAValue,
    negative: SSAValue,
    rounding: Rounding,
) -> SSAValue:
    """The encoding of |x| (bits `a` of layout `b`) rounded to the format's
    precision with an unbounded exponent, in any mode, for f8e8m0fnu (used
    for no other format)."""
    p = fmt.mantissa_bits
    field = e.shr(a, b.mantissa)
    significand = e.or_(
        e.and_(a, (1 << b.mantissa) - 1), e.shl(e.min(field, 1), b.mantissa)
    )
    # value = significand * 2^(exponent - M); round at 2^(E - p), E = max(exponent, emin)
    exponent = e.subi(e.max(field, 1), b.bias)
    target = e.max(exponent, fmt.emin)
    shift = e.addi(e.subi(target, exponent), b.mantissa - p)
    shift = e.min(shift, b.width - 4)  # beyond M + 1 every bit is dropped anyway
    n = e.shr(significand, shift)
    remainder = e.and_(significand, e.subi(e.shl(e.const(1, b.width), shift), 1))
    half = e.shl(e.const(1, b.width), e.subi(shift, 1))
    up = _round_up(e, rounding, n, remainder, half, negative)
    if up is not None:
        n = e.subi(n, up)  # the mask is -1 where rounding up
    encoded = e.addi(e.shl(e.addi(target, fmt.bias - 1), p), n)
    return e.max(encoded, 0)  # no zero: below 2^emin is 2^emin


def _round_fixed(
    e: BitwiseEmitter,
    fmt: FloatFormat,
    b: _Binary,
    a: SSAValue,
    negative: SSAValue,
    rounding: Rounding,
) -> SSAValue:
    """`_round_with_shifts` with fixed shifts, for formats with subnormals and
    layouts whose normal range contains 2^(emin - p - 1). At or above 2^emin,
    adding a mode's increment below the format's last mantissa bit rounds the
    bits there (a carry moves into the exponent), which are then rebiased.
    Below it, adding C = 2^(emin - p + M) as a float rounds |x| to nearest
    even (the hardware's mode) at 2^(emin - p), the format's subnormal step,
    which then sits in the sum's low bits; the exact difference
    d = |x| - (sum - C) tells the other modes how to correct."""
    p = fmt.mantissa_bits
    s = b.mantissa - p
    ulp = (1 << s) - 1
    match rounding:
        case Rounding.NEAREST_EVEN:
            increment = e.addi(e.and_(e.shr(a, s), 1), (1 << (s - 1)) - 1)
        case Rounding.NEAREST_AWAY:
            increment = e.const(1 << (s - 1), b.width)
        case Rounding.TOWARD_ZERO:
            increment = e.const(0, b.width)
        case Rounding.UPWARD:
            increment = e.and_(e.not_(negative), ulp)
        case Rounding.DOWNWARD:
            increment = e.and_(negative, ulp)
    normal = e.shr(e.addi(a, increment), s)  # (only a NaN may wrap the sign bit)
    normal = e.subi(normal, (b.bias - fmt.bias) << p)

    def power_bits(exponent: int) -> int:
        assert 1 - b.bias <= exponent <= b.bias
        return (exponent + b.bias) << b.mantissa

    bits_type = IntegerType(b.width)
    magic_bits = e.const(power_bits(fmt.emin - p + b.mantissa), b.width)
    magic = e.bitcast(magic_bits, b.type)
    x = e.bitcast(a, b.type)
    total = e.add(arith.AddfOp(x, magic))
    tiny = e.subi(e.bitcast(total, bits_type), magic_bits)
    if rounding is not Rounding.NEAREST_EVEN:
        # Both subtractions are exact (Sterbenz; then multiples of ulp(|x|)
        # at most half a step apart), and d is never -0.
        nearest = e.add(arith.SubfOp(total, magic))
        d = e.bitcast(e.add(arith.SubfOp(x, nearest)), bits_type)
        below = e.sign_mask(d)  # rounded up: one less toward zero
        match rounding:
            case Rounding.NEAREST_AWAY:  # a tie went to the even one below
                tiny = e.subi(tiny, e.equal(d, power_bits(fmt.emin - p - 1)))
            case Rounding.TOWARD_ZERO:
                tiny = e.addi(tiny, below)
            case Rounding.UPWARD | Rounding.DOWNWARD:
                away = negative if rounding is Rounding.DOWNWARD else e.not_(negative)
                tiny = e.addi(tiny, e.and_(below, e.not_(away)))
                tiny = e.subi(tiny, e.and_(e.less(0, d), away))
    return e.select(e.less(a, power_bits(fmt.emin)), tiny, normal)


def emit_convert_to(
    fmt: FloatFormat,
    value: SSAValue,
    rounding: Rounding = Rounding.NEAREST_EVEN,
    saturate: bool = False,
) -> tuple[list[Operation], SSAValue]:
    """Ops computing convert_to of `value` (f16/bf16/f32/f64, or a vector of
    one) into the format's iN container (or a vector of the same shape)."""
    ops: list[Operation] = []
    if isinstance(_element(value.type), BFloat16Type):
        ops, value = extf_bf16_to_f32(value)
    e = BitwiseEmitter(value.type)
    e.ops = ops
    # f16/bf16/f32 round in i32 (twice the vector lanes of i64), f64 in i64.
    # f8e8m0fnu (no subnormals, a 1-bit significand whose ties go up, 2^-127
    # below f32's normal range) takes variable shifts on f64 bits.
    wide = isinstance(_element(value.type), Float64Type) or not fmt.has_zero
    b = _F64 if wide else _F32
    if _element(value.type) != b.type:
        value = e.add(arith.ExtFOp(value, e.type(b.type)))  # exact
    u = e.bitcast(value, IntegerType(b.width))
    negative = e.sign_mask(u)
    a = e.and_(u, (1 << (b.width - 1)) - 1)
    inf_bits = ((1 << (b.width - b.mantissa - 1)) - 1) << b.mantissa
    is_nan = e.less(inf_bits, a)
    if fmt.has_zero:
        encoded = _round_fixed(e, fmt, b, a, negative, rounding)
    else:
        encoded = _round_with_shifts(e, fmt, b, a, negative, rounding)
    # ±inf always overflows (its encoding is beyond max_magnitude), so only
    # the directed modes that keep other overflows finite test for it.
    sign = e.and_(negative, fmt.sign_bit)
    if saturate:
        inf_code = None
    elif fmt.inf_magnitude is not None:
        inf_code = e.or_(sign, fmt.inf_magnitude)
    elif fmt.nan_encoding is not None:
        inf_code = e.const(fmt.nan_encoding, b.width)
    else:
        inf_code = None
    rounded_sign = sign
    if not fmt.has_neg_zero:
        rounded_sign = e.and_(sign, e.nonzero(encoded))
    if inf_code is None:  # every overflow gives the largest finite value
        result = e.or_(e.min(encoded, fmt.max_magnitude), rounded_sign)
    else:
        overflow = e.less(fmt.max_magnitude, encoded)
        match rounding:
            case Rounding.NEAREST_EVEN | Rounding.NEAREST_AWAY:
                to_inf = overflow
            case Rounding.TOWARD_ZERO:
                to_inf = e.equal(a, inf_bits)
            case Rounding.UPWARD:
                to_inf = e.and_(overflow, e.not_(negative))
                to_inf = e.or_(e.equal(a, inf_bits), to_inf)
            case Rounding.DOWNWARD:
                to_inf = e.or_(e.equal(a, inf_bits), e.and_(overflow, negative))
        max_code = e.or_(sign, fmt.max_magnitude)
        result = e.select(overflow, max_code, e.or_(encoded, rounded_sign))
        result = e.select(to_inf, inf_code, result)
    invalid = 0 if saturate or fmt.nan_encoding is None else fmt.nan_encoding
    if not fmt.signed and fmt.has_zero:  # f8e5m3fnu
        result = e.select(e.and_(negative, e.nonzero(result)), invalid, result)
    if not fmt.has_zero:  # f8e8m0fnu
        result = e.select(e.or_(negative, e.is_zero(a)), invalid, result)
    result = e.select(is_nan, fmt.nan_encoding or 0, result)
    return e.ops, e.trunc(result, fmt.bits)


# Block-scaled conversions. Their scalar building blocks below take the scale
# (or scale code) of each element in the element's own shape: the matrix
# lowering calls them per element, the vector lowering after broadcasting
# each block's scale to its lanes.

_E8M0 = FORMATS["f8e8m0fnu"]


def _work_layout(float_type: Attribute) -> _Binary:
    """f64 for f64, else f32: the precision the block-scaled ops compute in."""
    return _F64 if isinstance(_element(float_type), Float64Type) else _F32


def emit_scaled_convert_from(
    fmt: FloatFormat,
    scale_fmt: FloatFormat,
    bits: SSAValue,
    scale_bits: SSAValue,
    float_type: Attribute,
) -> tuple[list[Operation], SSAValue]:
    """Ops computing element value x scale value (`bits` and `scale_bits` of
    one shape) rounded once into `float_type`.

    Both values are exact in f32 (2^-127 is an f32 subnormal), so one f32
    multiply rounds the exact product once; f16/bf16 then narrow it, which
    is still a single rounding: the product has at most 9 significant bits,
    so f32 rounds only products below 2^-140, far below both types' least
    subnormal. f64 multiplies exactly in f64.
    """
    e = BitwiseEmitter(bits.type)
    work = e.type(_work_layout(float_type).type)
    value_ops, value = emit_convert_from(fmt, bits, work)
    scale_ops, scale = emit_convert_from(scale_fmt, scale_bits, work)
    e.ops = [*value_ops, *scale_ops]
    product = e.add(arith.MulfOp(value, scale))
    if _element(float_type) != _element(work):
        product = e.add(arith.TruncFOp(product, float_type))
    return e.ops, product


def _widen_to_work(value: SSAValue) -> tuple[list[Operation], SSAValue, _Binary]:
    """`value` extended exactly to its work layout (`_work_layout`)."""
    b = _work_layout(value.type)
    ops: list[Operation] = []
    if isinstance(_element(value.type), BFloat16Type):
        ops, value = extf_bf16_to_f32(value)
    elif _element(value.type) != b.type:
        e = BitwiseEmitter(value.type)
        value = e.add(arith.ExtFOp(value, e.type(b.type)))
        ops = e.ops
    return ops, value, b


def emit_magnitude_bits(value: SSAValue) -> tuple[list[Operation], SSAValue]:
    """|value| as the bits of its work layout (an integer of that width):
    the operand of a block's running maximum (integer order is float order
    on magnitudes, and a NaN's bits exceed inf's)."""
    ops, wide, b = _widen_to_work(value)
    e = BitwiseEmitter(wide.type)
    e.ops = ops
    bits = e.bitcast(wide, IntegerType(b.width))
    return e.ops, e.and_(bits, (1 << (b.width - 1)) - 1)


def emit_block_scale(
    fmt: FloatFormat, amax: SSAValue, rule: ScaleRule
) -> tuple[list[Operation], SSAValue]:
    """The f8e8m0fnu scale code (i8) of blocks whose largest magnitude has
    the bits `amax` (`emit_magnitude_bits`): 0xFF for a NaN or inf in the
    block, 0x00 for an all-zero block, else 2^e with e of `rule` clamped to
    [-127, 127], computed on the exponent and mantissa fields."""
    e = BitwiseEmitter(amax.type)
    b = _F64 if integer_width(amax) == 64 else _F32
    inf_bits = ((1 << b.exponent) - 1) << b.mantissa
    special = e.less(inf_bits - 1, amax)
    max_significand, max_exponent = math.frexp(fmt.max_finite)
    # floor(log2 amax) = field - bias (a subnormal amax clamps anyway)
    exponent = e.subi(e.shr(amax, b.mantissa), b.bias + max_exponent - 1)
    if rule is ScaleRule.CEIL:
        # one more where amax's significand exceeds the largest finite's
        max_mantissa = int((2 * max_significand - 1) * (1 << b.mantissa))
        mantissa = e.and_(amax, (1 << b.mantissa) - 1)
        exponent = e.subi(exponent, e.less(max_mantissa, mantissa))
    exponent = e.max(e.min(exponent, 127), -127)
    code = e.select(e.is_zero(amax), 0, e.addi(exponent, 127))
    code = e.select(special, SCALE_NAN, code)
    return e.ops, e.trunc(code, 8)


def emit_scaled_elements(
    fmt: FloatFormat, value: SSAValue, code: SSAValue, rounding: Rounding
) -> tuple[list[Operation], SSAValue]:
    """The element encodings of `value` in blocks with scale codes `code`
    (i8, one per element): x / 2^e converted with `rounding`, saturating,
    and 0 in NaN-scaled blocks.

    x * 2^-e is exact unless it falls below the work type's normal range;
    there only its sign and being non-zero matter to the rounding (every
    element format's least subnormal is above 2^-18), so a product that
    flushed to zero is replaced by the least subnormal of its sign.
    """
    ops, x, b = _widen_to_work(value)
    e = BitwiseEmitter(x.type)
    e.ops = ops
    inverse = e.subi(_E8M0.max_magnitude, code)  # the code of 2^-e (i8)
    factor_ops, factor = emit_convert_from(_E8M0, inverse, x.type)
    e.ops += factor_ops
    bits_type = IntegerType(b.width)
    magnitude = (1 << (b.width - 1)) - 1
    x_bits = e.bitcast(x, bits_type)
    y_bits = e.bitcast(e.add(arith.MulfOp(x, factor)), bits_type)
    flushed = e.and_(
        e.is_zero(e.and_(y_bits, magnitude)), e.nonzero(e.and_(x_bits, magnitude))
    )
    y_bits = e.or_(y_bits, e.and_(flushed, 1))
    special = e.equal(e.ext_unsigned(code, b.width), SCALE_NAN)
    y_bits = e.select(special, 0, y_bits)
    convert_ops, encoded = emit_convert_to(
        fmt, e.bitcast(y_bits, b.type), rounding, saturate=True
    )
    return e.ops + convert_ops, encoded


def _broadcast_blocks(
    value: SSAValue, block: int, length: int
) -> tuple[list[Operation], SSAValue]:
    """The vector of `length` lanes holding lane i // block of `value`."""
    vt = cast(VectorType, value.type)
    lanes = [i // block for i in range(length)]
    shuffle = build.shuffle(value, value, lanes, VectorType(vt.element_type, [length]))
    return [shuffle], shuffle.results[0]


class LowerScaledConvertFrom(RewritePattern):
    """arbfp.scaled_convert_from on 1-D vectors -> the scales broadcast to the
    elements' lanes (one vector.shuffle), then branch-free arith."""

    @op_type_rewrite_pattern
    def match_and_rewrite(
        self, op: ScaledConvertFromOp, rewriter: PatternRewriter
    ) -> None:
        if not isinstance(op.input.type, VectorType):
            return  # (matrices: convert-matrix-to-affine computes each element)
        (length,) = op.input.type.get_shape()
        ops, scales = _broadcast_blocks(op.scales, op.block_size, length)
        value_ops, value = emit_scaled_convert_from(
            op.float_format, op.scale_float_format, op.input, scales, op.result.type
        )
        rewriter.replace(op, [*ops, *value_ops], [value])


class LowerScaledConvertTo(RewritePattern):
    """arbfp.scaled_convert_to on 1-D vectors -> each block's largest
    magnitude (a maximum over N shuffles picking lane t of every block),
    its scale code, the codes broadcast to the lanes, then the elements."""

    @op_type_rewrite_pattern
    def match_and_rewrite(
        self, op: ScaledConvertToOp, rewriter: PatternRewriter
    ) -> None:
        if not isinstance(op.input.type, VectorType):
            return  # (matrices: convert-matrix-to-affine loops over blocks)
        (length,) = op.input.type.get_shape()
        block = op.block_size
        ops, magnitudes = emit_magnitude_bits(op.input)
        e = BitwiseEmitter(VectorType(IntegerType(8), [length // block]))
        amax: SSAValue | None = None
        for t in range(block):
            lanes = build.shuffle(
                magnitudes,
                magnitudes,
                range(t, length, block),
                VectorType(
                    cast(VectorType, magnitudes.type).element_type, [length // block]
                ),
            )
            ops.append(lanes)
            amax = lanes.results[0] if amax is None else e.max(amax, lanes.results[0])
            ops += e.ops
            e.ops = []
        assert amax is not None
        code_ops, codes = emit_block_scale(op.float_format, amax, op.rule)
        broadcast_ops, lane_codes = _broadcast_blocks(codes, block, length)
        element_ops, elements = emit_scaled_elements(
            op.float_format, op.input, lane_codes, op.rounding_mode
        )
        rewriter.replace(
            op, [*ops, *code_ops, *broadcast_ops, *element_ops], [elements, codes]
        )


class LowerConvertFrom(RewritePattern):
    """arbfp.convert_from on a scalar or vector -> arith integer/bit ops."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: ConvertFromOp, rewriter: PatternRewriter) -> None:
        if isinstance(op.input.type, IntegerType | VectorType):
            # (matrices: convert-matrix-to-affine emits scalar conversions)
            ops, value = emit_convert_from(op.float_format, op.input, op.float_type)
            rewriter.replace(op, ops, [value])


class LowerConvertTo(RewritePattern):
    """arbfp.convert_to on a scalar or vector -> arith integer/bit ops."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: ConvertToOp, rewriter: PatternRewriter) -> None:
        if isinstance(op.result.type, IntegerType | VectorType):
            ops, value = emit_convert_to(
                op.float_format, op.input, op.rounding_mode, op.saturating
            )
            rewriter.replace(op, ops, [value])


CHUNK_ELEMENTS = 64
"""Elements a conversion of a long vector converts per loop iteration (four
AVX-512 vectors of f32): longer vectors are converted by a loop."""

_CONVERSION_OPS = ConvertFromOp | ConvertToOp | ScaledConvertFromOp | ScaledConvertToOp


def _container(t: VectorType) -> VectorType:
    """The vector type `t` is kept in memory as: i1..i7 lanes in i8."""
    element = t.element_type
    if isinstance(element, IntegerType) and element.width.data < 8:
        return VectorType(IntegerType(8), t.get_shape())
    return t


def _to_container(value: SSAValue) -> tuple[list[Operation], SSAValue]:
    """`value` widened to its memory type (`_container`)."""
    if _container(cast(VectorType, value.type)) == value.type:
        return [], value
    e = BitwiseEmitter(value.type)
    return e.ops, e.ext_unsigned(value, 8)


def _from_container(value: SSAValue, t: VectorType) -> tuple[list[Operation], SSAValue]:
    """`value` of `t`'s memory type narrowed back to `t`."""
    if value.type == t:
        return [], value
    e = BitwiseEmitter(value.type)
    return e.ops, e.trunc(value, cast(IntegerType, t.element_type).width.data)


def _index(value: int) -> arith.ConstantOp:
    return arith.ConstantOp(IntegerAttr(value, IndexType()))


@dataclass
class ConvertLongVectorInChunks(RewritePattern):
    """A conversion of a vector longer than `CHUNK_ELEMENTS` lanes -> its
    operands stored to stack buffers (sub-byte lanes widened to bytes), an
    `scf.for` converting one chunk per iteration (the same op on
    `CHUNK_ELEMENTS` lanes, rounded down to whole blocks, at least one block)
    into result buffers, the same op on the last partial chunk, and the
    results loaded back: code size independent of the vector's length (each
    lane of a block-scaled conversion reads its whole block: on the whole
    vector, the blocks' maxima take one shuffle of every block per lane).
    An operand that a chunked conversion computed is read from that
    conversion's buffer: sub-byte lanes (i4 encodings) are never widened or
    narrowed as a whole vector, which xDSL 0.75's casts do lane by lane."""

    buffers: dict[SSAValue, SSAValue] = field(default_factory=dict[SSAValue, SSAValue])
    """The buffer holding each result of a chunked conversion."""

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter, /) -> None:
        chunk = _chunk(op)
        if chunk is None:
            return
        (length,) = cast(VectorType, op.operands[0].type).get_shape()
        block = (
            op.block_size
            if isinstance(op, ScaledConvertFromOp | ScaledConvertToOp)
            else 1
        )
        types = [cast(VectorType, v.type) for v in (*op.operands, *op.results)]
        allocations = [
            memref.AllocaOp.get(_container(t).element_type, 64, t.get_shape())
            for t in types
        ]
        entry = _entry_block(op)
        rewriter.insert(
            allocations,
            InsertPoint.at_start(entry) if entry else InsertPoint.before(op),
        )
        buffers: list[SSAValue] = [a.memref for a in allocations]
        zero = rewriter.insert(_index(0))
        for i, value in enumerate(op.operands):
            if (computed := self.buffers.get(value)) is not None:
                buffers[i] = computed
                continue
            ops, stored = _to_container(value)
            rewriter.insert([*ops, vector.StoreOp(stored, buffers[i], [zero])])

        def convert(offset: SSAValue, lanes: int) -> list[Operation]:
            """`op` on lanes [offset, offset + lanes) of the buffers (the
            scales' lanes [offset / block, ...))."""
            ops: list[Operation] = []
            scale_offset = offset
            if block > 1:
                divisor = _index(block)
                quotient = arith.DivUIOp(offset, divisor)
                ops += [divisor, quotient]
                scale_offset = quotient.result
            pieces: list[VectorType] = []
            starts: list[SSAValue] = []
            for t in types:
                scales = t.get_shape() != (length,)
                pieces.append(
                    VectorType(t.element_type, [lanes // block if scales else lanes])
                )
                starts.append(scale_offset if scales else offset)
            operands: list[SSAValue] = []
            for i in range(len(op.operands)):
                load = vector.LoadOp(buffers[i], [starts[i]], _container(pieces[i]))
                narrow_ops, value = _from_container(load.result, pieces[i])
                ops += [load, *narrow_ops]
                operands.append(value)
            converted = type(op).create(
                operands=operands,
                result_types=pieces[len(op.operands) :],
                properties=dict(op.properties),
                attributes=dict(op.attributes),
            )
            ops.append(converted)
            for i, result in enumerate(converted.results, len(op.operands)):
                wide_ops, stored = _to_container(result)
                ops += [*wide_ops, vector.StoreOp(stored, buffers[i], [starts[i]])]
            return ops

        full = length // chunk * chunk
        upper, step = _index(full), _index(chunk)
        body = Block(arg_types=[IndexType()])
        body.add_ops([*convert(body.args[0], chunk), scf.YieldOp()])
        rewriter.insert([upper, step, scf.ForOp(zero, upper, step, [], body)])
        if length > full:
            rest = rewriter.insert(_index(full))
            rewriter.insert(convert(rest.result, length - full))
        results: list[SSAValue] = []
        for i, result in enumerate(op.results, len(op.operands)):
            t = cast(VectorType, result.type)
            if all(_chunk(use.operation) for use in result.uses):
                # Read from the buffer by its users only: a placeholder.
                placeholder = UnrealizedConversionCastOp.get([buffers[i]], [t])
                rewriter.insert(placeholder)
                value = placeholder.results[0]
            else:
                load = vector.LoadOp(buffers[i], [zero], _container(t))
                narrow_ops, value = _from_container(load.result, t)
                rewriter.insert([load, *narrow_ops])
            results.append(value)
            self.buffers[value] = buffers[i]
        rewriter.replace(op, [], results)


def _chunk(op: Operation) -> int | None:
    """Lanes per iteration if `op` is a conversion of a vector long enough to
    convert in a loop (`ConvertLongVectorInChunks`), else None."""
    if not isinstance(op, _CONVERSION_OPS) or not isinstance(
        t := op.operands[0].type, VectorType
    ):
        return None
    block = (
        op.block_size if isinstance(op, ScaledConvertFromOp | ScaledConvertToOp) else 1
    )
    chunk = max(block, CHUNK_ELEMENTS // block * block)
    (length,) = cast(VectorType[Attribute], t).get_shape()
    return chunk if length > chunk else None


def _entry_block(op: Operation) -> Block | None:
    """The entry block of the function around `op` (stack buffers go there,
    never into a loop), or None outside functions."""
    parent = op.parent_op()
    while parent is not None and not isinstance(parent, func.FuncOp):
        parent = parent.parent_op()
    return None if parent is None else parent.body.first_block


# Applied once to each conversion, and to the conversions a scaled one emits
# (built once: the dispatcher caches its patterns by op class).
_CONVERSIONS = OpTypeDispatchApplier(
    (
        LowerConvertFrom(),
        LowerConvertTo(),
        LowerScaledConvertFrom(),
        LowerScaledConvertTo(),
    )
)


@dataclass(frozen=True)
class ConvertArbfpToArithPass(ModulePass):
    """Lowers arbfp conversions of scalars and vectors (block-scaled ones of
    1-D vectors) to branch-free arith."""

    name = "convert-arbfp-to-arith"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        rewrite_once(op, OpTypeDispatchApplier((ConvertLongVectorInChunks(),)))
        rewrite_once(op, _CONVERSIONS)
        # The expansions compute fields some formats do not use.
        erase_dead_ops(op)

"""Exact narrowing to `bf16` (and friends) with `arith` integer operations.

LLVM's own `fptrunc` to bfloat is unusable here (AVX512-BF16 flushes
subnormals; elsewhere it calls `__truncsfbf2`, absent from Debian 12's
libgcc), so rounding is done on the bits. Every builder returns the new
operations (to insert, in order) and the resulting value; all work on
scalars and on vectors alike (conditions are integer masks, see
`mx.lowering.bitwise`).

Round-to-odd helpers make two-step narrowing exact: rounding to odd into a
format with at least two more significand bits, then to nearest even into
the target, equals a single round-to-nearest-even (Boldo & Melquiond).
"""

from xdsl.dialects import arith
from xdsl.dialects.builtin import (
    BFloat16Type,
    Float32Type,
    Float64Type,
    IntegerType,
    VectorType,
    bf16,
    f32,
    f64,
)
from xdsl.ir import Operation, SSAValue

from mx.lowering.bitwise import BitwiseEmitter, integer_width


def _nudge_to_odd(
    e: BitwiseEmitter, bits: SSAValue, inexact: SSAValue, away: SSAValue
) -> SSAValue:
    """`bits` (a float's bits, rounded to nearest) made odd when inexact.

    `inexact` and `away` are masks; `away` tells whether the exact value is
    farther from zero than `bits`, so the odd neighbour on that side is one
    unit in the last place away (+1), else one unit nearer zero (-1).
    """
    even = e.is_zero(e.and_(bits, 1))
    step = e.or_(e.not_(away), 1)  # +1 where away, -1 elsewhere
    return e.addi(bits, e.and_(step, e.and_(inexact, even)))


def _magnitude(e: BitwiseEmitter, bits: SSAValue) -> SSAValue:
    return e.and_(bits, (1 << (integer_width(bits) - 1)) - 1)


def round_f64_to_odd_f32(value: SSAValue) -> tuple[list[Operation], SSAValue]:
    """f64 -> f32 rounded to odd (NaNs stay NaNs, infinities stay infinite)."""
    e = BitwiseEmitter(value.type)
    nearest = e.add(arith.TruncFOp(value, e.type(f32)))
    back = e.bitcast(e.add(arith.ExtFOp(nearest, e.type(f64))), IntegerType(64))
    exact_bits = e.bitcast(value, IntegerType(64))
    inexact = e.nonzero(e.xor(back, exact_bits))
    # The exact value lies beyond the rounded one iff its magnitude is larger.
    away = e.less(_magnitude(e, back), _magnitude(e, exact_bits))
    bits = _nudge_to_odd(
        e, e.bitcast(nearest, IntegerType(32)), e.trunc(inexact, 32), e.trunc(away, 32)
    )
    return e.ops, e.bitcast(bits, f32)


def add_round_to_odd_f64(
    lhs: SSAValue, rhs: SSAValue
) -> tuple[list[Operation], SSAValue]:
    """`lhs + rhs` in f64, rounded to odd instead of to nearest even.

    The rounding error of the nearest sum is recovered exactly with Knuth's
    TwoSum; an overflowing sum is left as the infinity it rounded to.
    """
    e = BitwiseEmitter(lhs.type)
    total = e.add(arith.AddfOp(lhs, rhs))
    rhs_part = e.add(arith.SubfOp(total, lhs))
    lhs_part = e.add(arith.SubfOp(total, rhs_part))
    error = e.add(
        arith.AddfOp(
            e.add(arith.SubfOp(lhs, lhs_part)), e.add(arith.SubfOp(rhs, rhs_part))
        )
    )
    total_bits = e.bitcast(total, IntegerType(64))
    error_bits = e.bitcast(error, IntegerType(64))
    exponent_mask = 0x7FF << 52
    finite = e.nonzero(e.xor(e.and_(total_bits, exponent_mask), exponent_mask))
    inexact = e.and_(finite, e.nonzero(_magnitude(e, error_bits)))
    same_sign = e.not_(e.sign_mask(e.xor(total_bits, error_bits)))
    bits = _nudge_to_odd(e, total_bits, inexact, same_sign)
    return e.ops, e.bitcast(bits, f64)


def truncf_f32_to_bf16(value: SSAValue) -> tuple[list[Operation], SSAValue]:
    """f32 -> bf16, round to nearest even; NaNs become quiet NaNs."""
    e = BitwiseEmitter(value.type)
    bits = e.bitcast(value, IntegerType(32))
    high = e.shr(bits, 16)
    bias = e.addi(e.and_(high, 1), 0x7FFF)
    rounded = e.shr(e.addi(bits, bias), 16)
    is_nan = e.less(0x7F800000, _magnitude(e, bits))
    chosen = e.select(is_nan, e.or_(high, 0x40), rounded)
    return e.ops, e.bitcast(e.trunc(chosen, 16), bf16)


def extf_bf16_to_f32(value: SSAValue) -> tuple[list[Operation], SSAValue]:
    """bf16 -> f32 (exact): the bf16 bits are the high half of the f32's."""
    e = BitwiseEmitter(value.type)
    bits = e.ext_unsigned(e.bitcast(value, IntegerType(16)), 32)
    return e.ops, e.bitcast(e.shl(bits, 16), f32)


def truncf_to_bf16(value: SSAValue) -> tuple[list[Operation], SSAValue]:
    """Any float (f16, f32, f64) -> bf16 with a single rounding to nearest."""
    type_ = value.type
    element = type_.element_type if isinstance(type_, VectorType) else type_
    ops: list[Operation] = []
    if isinstance(element, Float64Type):
        ops, value = round_f64_to_odd_f32(value)
    elif not isinstance(element, Float32Type | BFloat16Type):
        e = BitwiseEmitter(type_)
        value = e.add(arith.ExtFOp(value, e.type(f32)))
        ops = e.ops
    elif isinstance(element, BFloat16Type):
        return [], value
    more, result = truncf_f32_to_bf16(value)
    return ops + more, result

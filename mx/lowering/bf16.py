"""Exact narrowing to `bf16` (and friends) with `arith` integer operations.

LLVM's own `fptrunc` to bfloat is unusable here (AVX512-BF16 flushes
subnormals; elsewhere it calls `__truncsfbf2`, absent from Debian 12's
libgcc), so rounding is done on the bits. Every builder returns the new
operations (to insert, in order) and the resulting value; all work on
scalars and on vectors alike.

Round-to-odd helpers make two-step narrowing exact: rounding to odd into a
format with at least two more significand bits, then to nearest even into
the target, equals a single round-to-nearest-even (Boldo & Melquiond).
"""

from xdsl.dialects import arith
from xdsl.dialects.builtin import (
    BFloat16Type,
    DenseIntOrFPElementsAttr,
    Float32Type,
    Float64Type,
    IntegerAttr,
    IntegerType,
    VectorType,
    bf16,
    f32,
    f64,
)
from xdsl.ir import Attribute, Operation, SSAValue


class _Emitter:
    """Collects arith ops built on values of one shape (scalar or vector)."""

    def __init__(self, like: Attribute):
        self.shape = like.get_shape() if isinstance(like, VectorType) else None
        self.ops: list[Operation] = []

    def type(self, element: Attribute) -> Attribute:
        return element if self.shape is None else VectorType(element, self.shape)

    def add(self, op: Operation) -> SSAValue:
        self.ops.append(op)
        return op.results[0]

    def const(self, value: int, width: int) -> SSAValue:
        element = IntegerType(width)
        if self.shape is None:
            return self.add(arith.ConstantOp(IntegerAttr(value, element)))
        vector = VectorType(element, self.shape)
        return self.add(
            arith.ConstantOp(DenseIntOrFPElementsAttr.from_list(vector, [value]))
        )

    def bitcast(self, value: SSAValue, element: Attribute) -> SSAValue:
        return self.add(arith.BitcastOp(value, self.type(element)))

    def cmpi(self, lhs: SSAValue, rhs: SSAValue, predicate: str) -> SSAValue:
        return self.add(arith.CmpiOp(lhs, rhs, predicate))

    def select(self, cond: SSAValue, lhs: SSAValue, rhs: SSAValue) -> SSAValue:
        return self.add(arith.SelectOp(cond, lhs, rhs))


def _width(value: SSAValue) -> int:
    type_ = value.type
    element = type_.element_type if isinstance(type_, VectorType) else type_
    assert isinstance(element, IntegerType)
    return element.width.data


def _nudge_to_odd(
    e: _Emitter, bits: SSAValue, inexact: SSAValue, away: SSAValue
) -> SSAValue:
    """`bits` (a float's bits, rounded to nearest) made odd when inexact.

    `away` tells whether the exact value is farther from zero than `bits`;
    the odd neighbour on that side is one unit in the last place away.
    """
    width = _width(bits)
    one = e.const(1, width)
    even = e.cmpi(e.add(arith.AndIOp(bits, one)), e.const(0, width), "eq")
    step = e.select(away, one, e.const(-1, width))
    nudged = e.add(arith.AddiOp(bits, step))
    return e.select(e.add(arith.AndIOp(inexact, even)), nudged, bits)


def _magnitude(e: _Emitter, bits: SSAValue) -> SSAValue:
    width = _width(bits)
    return e.add(arith.AndIOp(bits, e.const((1 << (width - 1)) - 1, width)))


def round_f64_to_odd_f32(value: SSAValue) -> tuple[list[Operation], SSAValue]:
    """f64 -> f32 rounded to odd (NaNs stay NaNs, infinities stay infinite)."""
    e = _Emitter(value.type)
    nearest = e.add(arith.TruncFOp(value, e.type(f32)))
    back = e.bitcast(e.add(arith.ExtFOp(nearest, e.type(f64))), IntegerType(64))
    exact_bits = e.bitcast(value, IntegerType(64))
    inexact = e.cmpi(back, exact_bits, "ne")
    # The exact value lies beyond the rounded one iff its magnitude is larger.
    away = e.cmpi(_magnitude(e, exact_bits), _magnitude(e, back), "ugt")
    bits = _nudge_to_odd(e, e.bitcast(nearest, IntegerType(32)), inexact, away)
    return e.ops, e.bitcast(bits, f32)


def add_round_to_odd_f64(
    lhs: SSAValue, rhs: SSAValue
) -> tuple[list[Operation], SSAValue]:
    """`lhs + rhs` in f64, rounded to odd instead of to nearest even.

    The rounding error of the nearest sum is recovered exactly with Knuth's
    TwoSum; an overflowing sum is left as the infinity it rounded to.
    """
    e = _Emitter(lhs.type)
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
    exponent_mask = e.const(0x7FF << 52, 64)
    finite = e.cmpi(e.add(arith.AndIOp(total_bits, exponent_mask)), exponent_mask, "ne")
    nonzero_error = e.cmpi(_magnitude(e, error_bits), e.const(0, 64), "ne")
    inexact = e.add(arith.AndIOp(finite, nonzero_error))
    same_sign = e.cmpi(
        e.add(arith.XOrIOp(total_bits, error_bits)), e.const(0, 64), "sge"
    )
    bits = _nudge_to_odd(e, total_bits, inexact, same_sign)
    return e.ops, e.bitcast(bits, f64)


def truncf_f32_to_bf16(value: SSAValue) -> tuple[list[Operation], SSAValue]:
    """f32 -> bf16, round to nearest even; NaNs become quiet NaNs."""
    e = _Emitter(value.type)
    bits = e.bitcast(value, IntegerType(32))
    sixteen = e.const(16, 32)
    high = e.add(arith.ShRUIOp(bits, sixteen))
    lsb = e.add(arith.AndIOp(high, e.const(1, 32)))
    bias = e.add(arith.AddiOp(lsb, e.const(0x7FFF, 32)))
    rounded = e.add(arith.ShRUIOp(e.add(arith.AddiOp(bits, bias)), sixteen))
    quiet_nan = e.add(arith.OrIOp(high, e.const(0x40, 32)))
    is_nan = e.cmpi(_magnitude(e, bits), e.const(0x7F800000, 32), "ugt")
    chosen = e.select(is_nan, quiet_nan, rounded)
    narrow = e.add(arith.TruncIOp(chosen, e.type(IntegerType(16))))  # pyright: ignore[reportArgumentType]
    return e.ops, e.bitcast(narrow, bf16)


def extf_bf16_to_f32(value: SSAValue) -> tuple[list[Operation], SSAValue]:
    """bf16 -> f32 (exact): the bf16 bits are the high half of the f32's."""
    e = _Emitter(value.type)
    bits = e.add(
        arith.ExtUIOp(e.bitcast(value, IntegerType(16)), e.type(IntegerType(32)))  # pyright: ignore[reportArgumentType]
    )
    wide = e.add(arith.ShLIOp(bits, e.const(16, 32)))
    return e.ops, e.bitcast(wide, f32)


def truncf_to_bf16(value: SSAValue) -> tuple[list[Operation], SSAValue]:
    """Any float (f16, f32, f64) -> bf16 with a single rounding to nearest."""
    type_ = value.type
    element = type_.element_type if isinstance(type_, VectorType) else type_
    ops: list[Operation] = []
    if isinstance(element, Float64Type):
        ops, value = round_f64_to_odd_f32(value)
    elif not isinstance(element, Float32Type | BFloat16Type):
        e = _Emitter(type_)
        value = e.add(arith.ExtFOp(value, e.type(f32)))
        ops = e.ops
    elif isinstance(element, BFloat16Type):
        return [], value
    more, result = truncf_f32_to_bf16(value)
    return ops + more, result

"""NaNs of f16, bf16 and f32 held exactly in a Python float (a double).

The hardware's conversions between float widths quiet a signalling NaN, where
MLIR's constants and a compiled program's moves keep every bit. A double holds
each such NaN exactly: the payload at the top of its fraction, as widening
puts it, and the quiet bit as it was. `nan_to_double` and `nan_bits` convert
that way, and are each other's inverse.
"""

import struct

FRACTION_BITS = {"f16": 10, "bf16": 7, "f32": 23, "f64": 52}
"""Stored fraction bits of each IEEE-style float type, by its MLIR name."""


def nan_to_double(bits: int, fraction_bits: int, width: int) -> float:
    """The double holding the NaN `bits` of a `width`-bit float exactly."""
    fraction = bits & ((1 << fraction_bits) - 1)
    double = (bits >> (width - 1)) << 63 | 0x7FF << 52
    double |= fraction << (52 - fraction_bits)
    return struct.unpack("<d", double.to_bytes(8, "little"))[0]


def nan_bits(value: float, fraction_bits: int, width: int) -> int:
    """The NaN of a `width`-bit float that a NaN double narrows to: exactly
    the one `nan_to_double` widened, else the top of its payload, quieted (as
    the hardware's conversion gives it)."""
    double = int.from_bytes(struct.pack("<d", value), "little")
    shift = 52 - fraction_bits
    fraction = (double & ((1 << 52) - 1)) >> shift
    if double & ((1 << shift) - 1) or not fraction:
        fraction |= 1 << (fraction_bits - 1)
    exponent = (1 << (width - 1 - fraction_bits)) - 1
    return (double >> 63) << (width - 1) | exponent << fraction_bits | fraction

"""Numerical semantics of `arbfp` (docs/arbfp-dialect.md): the format table, decode and encode.

Every property of a format is derived from its row in `FORMATS`. Decoding uses a
per-format table of exact float64 values; encoding rounds in float64, which holds
every f16/bf16/f32/f64 input exactly, so f64 sources are rounded once (no double
rounding through f32).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from enum import Enum
from functools import cache
from typing import Any

import numpy as np
import numpy.typing as npt
from xdsl.utils.str_enum import StrEnum

from mx.semantics.bfloat16 import bf16_dtype, is_bf16


class NanEncoding(Enum):
    """Which encodings of a format are NaN."""

    IEEE = "ieee"
    """Exponent all ones, mantissa non-zero (and all-ones exponent, zero mantissa is inf)."""
    ALL_ONES = "all_ones"
    """Exponent and mantissa all ones, either sign."""
    NEG_ZERO = "neg_zero"
    """Only the sign bit set (the encoding IEEE would use for -0)."""
    NONE = "none"


@dataclass(frozen=True)
class FloatFormat:
    """One small floating-point format, as in docs/arbfp-dialect.md's table."""

    keyword: str
    bits: int
    exponent_bits: int
    mantissa_bits: int
    bias: int
    signed: bool
    nan: NanEncoding
    has_zero: bool = True
    """False only for f8e8m0fnu, whose zero exponent field is the normal 2^-bias."""

    @property
    def has_inf(self) -> bool:
        return self.nan is NanEncoding.IEEE

    @property
    def has_nan(self) -> bool:
        return self.nan is not NanEncoding.NONE

    @property
    def has_neg_zero(self) -> bool:
        return self.signed and self.nan is not NanEncoding.NEG_ZERO

    @property
    def magnitude_bits(self) -> int:
        """Width of the exponent and mantissa fields together."""
        return self.exponent_bits + self.mantissa_bits

    @property
    def sign_bit(self) -> int:
        """The sign bit's mask (0 for unsigned formats)."""
        return 1 << self.magnitude_bits if self.signed else 0

    @property
    def emin(self) -> int:
        """Exponent of the smallest normal value (no subnormals without a zero)."""
        return 1 - self.bias if self.has_zero else -self.bias

    @property
    def max_magnitude(self) -> int:
        """Encoding of the largest finite value (sign bit clear)."""
        all_ones = (1 << self.magnitude_bits) - 1
        match self.nan:
            case NanEncoding.IEEE:
                return all_ones - (1 << self.mantissa_bits)
            case NanEncoding.ALL_ONES:
                return all_ones - 1
            case NanEncoding.NEG_ZERO | NanEncoding.NONE:
                return all_ones

    @property
    def inf_magnitude(self) -> int | None:
        """Encoding of +inf, if the format has one."""
        if not self.has_inf:
            return None
        return ((1 << self.exponent_bits) - 1) << self.mantissa_bits

    @property
    def nan_encoding(self) -> int | None:
        """The NaN this implementation produces (sign and payload are unspecified)."""
        match self.nan:
            case NanEncoding.IEEE | NanEncoding.ALL_ONES:
                return (1 << self.magnitude_bits) - 1
            case NanEncoding.NEG_ZERO:
                return 1 << self.magnitude_bits
            case NanEncoding.NONE:
                return None

    @property
    def max_finite(self) -> float:
        return _magnitude_value(self, self.max_magnitude)


FORMATS: dict[str, FloatFormat] = {
    f.keyword: f
    for f in (
        FloatFormat("f8e5m2", 8, 5, 2, 15, True, NanEncoding.IEEE),
        FloatFormat("f8e4m3fn", 8, 4, 3, 7, True, NanEncoding.ALL_ONES),
        FloatFormat("f8e5m3fnu", 8, 5, 3, 15, False, NanEncoding.ALL_ONES),
        FloatFormat("f8e5m2fnuz", 8, 5, 2, 16, True, NanEncoding.NEG_ZERO),
        FloatFormat("f8e4m3fnuz", 8, 4, 3, 8, True, NanEncoding.NEG_ZERO),
        FloatFormat("f8e4m3", 8, 4, 3, 7, True, NanEncoding.IEEE),
        FloatFormat("f8e3m4", 8, 3, 4, 3, True, NanEncoding.IEEE),
        FloatFormat(
            "f8e8m0fnu",
            8,
            8,
            0,
            127,
            False,
            NanEncoding.ALL_ONES,
            has_zero=False,
        ),
        FloatFormat("f6e3m2fn", 6, 3, 2, 3, True, NanEncoding.NONE),
        FloatFormat("f6e2m3fn", 6, 2, 3, 1, True, NanEncoding.NONE),
        FloatFormat("f4e2m1fn", 4, 2, 1, 1, True, NanEncoding.NONE),
    )
}


class Rounding(StrEnum):
    """convert_to rounding modes (docs/arbfp-dialect.md)."""

    NEAREST_EVEN = "nearest_even"
    NEAREST_AWAY = "nearest_away"
    TOWARD_ZERO = "toward_zero"
    UPWARD = "upward"
    DOWNWARD = "downward"


FLOAT_TYPES = ("f16", "bf16", "f32", "f64")
"""The float types convert_from/convert_to support, by MLIR spelling."""


def float_dtype(name: str) -> np.dtype[Any]:
    """The NumPy dtype of one of `FLOAT_TYPES` (bf16 loads ml_dtypes)."""
    if name == "bf16":
        return bf16_dtype()
    return np.dtype({"f16": np.float16, "f32": np.float32, "f64": np.float64}[name])


def _magnitude_value(fmt: FloatFormat, magnitude: int) -> float:
    """The value of a (sign-less) finite encoding."""
    p = fmt.mantissa_bits
    exponent_field, mantissa = magnitude >> p, magnitude & ((1 << p) - 1)
    if exponent_field == 0 and fmt.has_zero:
        return math.ldexp(mantissa, fmt.emin - p)
    return math.ldexp((1 << p) + mantissa, exponent_field - fmt.bias - p)


def decode_scalar(fmt: FloatFormat, bits: int) -> float:
    """The exact value of an encoding (low `fmt.bits` bits of `bits`) as a Python float."""
    bits &= (1 << fmt.bits) - 1
    magnitude = bits & ((1 << fmt.magnitude_bits) - 1)
    negative = bool(bits & fmt.sign_bit)
    match fmt.nan:
        case NanEncoding.IEEE if magnitude >= fmt.inf_magnitude:  # type: ignore[operator]
            if magnitude == fmt.inf_magnitude:
                return -math.inf if negative else math.inf
            return math.nan
        case NanEncoding.ALL_ONES if magnitude == (1 << fmt.magnitude_bits) - 1:
            return math.nan
        case NanEncoding.NEG_ZERO if bits == fmt.sign_bit:
            return math.nan
        case _:
            value = _magnitude_value(fmt, magnitude)
            return -value if negative else value


@cache
def _value_table(fmt: FloatFormat) -> npt.NDArray[np.float64]:
    table = np.array(
        [decode_scalar(fmt, b) for b in range(1 << fmt.bits)], dtype=np.float64
    )
    table.flags.writeable = False
    return table


def decode(fmt: FloatFormat, bits: npt.ArrayLike, dtype: npt.DTypeLike) -> np.ndarray:
    """convert_from: encodings in the low bits of an integer array -> values of `dtype`.

    Exact wherever `dtype` can hold the value; into f16 the few values outside its
    range round to nearest even (NumPy's float64 -> float16 cast rounds once).
    """
    # The low byte holds every encoding (at most 8 bits): uint8 indices keep
    # the temporaries small (decoding 16M weights: 0.1 s, not 0.6 s).
    index = np.asarray(bits).astype(np.uint8) & ((1 << fmt.bits) - 1)
    with np.errstate(over="ignore"):  # the f16 overflow to inf is intended
        return np.take(_value_table(fmt), index).astype(dtype, copy=False)


def encode(
    fmt: FloatFormat,
    values: npt.ArrayLike,
    rounding: Rounding = Rounding.NEAREST_EVEN,
    saturate: bool = False,
) -> npt.NDArray[np.uint8]:
    """convert_to: float array (f16, bf16, f32 or f64) -> encodings as uint8 (low bits)."""
    with np.errstate(invalid="ignore"):  # ml_dtypes warns on casting a bf16 NaN
        x = np.asarray(values).astype(np.float64)  # exact for every supported source
    negative = np.signbit(x)
    is_nan = np.isnan(x)
    is_inf = np.isinf(x)
    magnitude = np.where(is_nan | is_inf, 0.0, np.abs(x))
    p = fmt.mantissa_bits

    # Round |x| to an integer significand n at the quantum 2^(e - p) of its binade e,
    # where e is never below emin (subnormals); the exponent is otherwise unbounded.
    _, frexp_exponent = np.frexp(magnitude)
    exponent = np.where(
        magnitude == 0, fmt.emin, np.maximum(frexp_exponent - 1, fmt.emin)
    ).astype(np.int64)
    scaled = np.ldexp(magnitude, (p - exponent).astype(np.int32))  # exact
    n = np.floor(scaled)
    fraction = scaled - n
    inexact = fraction > 0
    match rounding:
        case Rounding.NEAREST_EVEN:
            up = (fraction > 0.5) | ((fraction == 0.5) & (np.fmod(n, 2) == 1))
        case Rounding.NEAREST_AWAY:
            up = fraction >= 0.5
        case Rounding.TOWARD_ZERO:
            up = np.zeros_like(inexact)
        case Rounding.UPWARD:
            up = inexact & ~negative
        case Rounding.DOWNWARD:
            up = inexact & negative
    n = n.astype(np.int64) + up
    # (exponent field << p) + mantissa, with the carry of n == 2^(p+1) into the
    # exponent for free; subnormals have exponent == emin and n < 2^p.
    encoded = ((exponent + fmt.bias - 1) << p) + n
    if not fmt.has_zero:
        encoded = np.maximum(encoded, 0)  # below the smallest value: 0x00 in every mode

    overflow = encoded > fmt.max_magnitude
    match rounding:
        case Rounding.NEAREST_EVEN | Rounding.NEAREST_AWAY:
            away_from_zero = np.ones_like(negative)
        case Rounding.TOWARD_ZERO:
            away_from_zero = np.zeros_like(negative)
        case Rounding.UPWARD:
            away_from_zero = ~negative
        case Rounding.DOWNWARD:
            away_from_zero = negative
    to_inf = is_inf | (overflow & away_from_zero)
    sign = np.where(negative, fmt.sign_bit, 0)
    max_code = fmt.max_magnitude | sign
    if saturate:
        inf_code = max_code
    elif fmt.has_inf:
        inf_code = fmt.inf_magnitude | sign
    elif fmt.nan_encoding is not None:
        inf_code = np.full_like(sign, fmt.nan_encoding)
    else:
        inf_code = max_code
    if not fmt.has_neg_zero:
        sign = np.where(encoded == 0, 0, sign)  # -0 -> +0
    encoded = np.where(overflow, max_code, encoded | sign)
    encoded = np.where(to_inf, inf_code, encoded)

    # Special inputs of the unsigned formats; NaN last.
    invalid = 0 if saturate or fmt.nan_encoding is None else fmt.nan_encoding
    if not fmt.signed and fmt.has_zero:  # f8e5m3fnu: negatives that do not round to 0
        encoded = np.where(negative & (encoded != 0), invalid, encoded)
    if not fmt.has_zero:  # f8e8m0fnu: zeros and negatives
        encoded = np.where(negative | (x == 0), invalid, encoded)
    encoded = np.where(is_nan, fmt.nan_encoding or 0, encoded)
    return encoded.astype(np.uint8)


# Block-scaled formats (OCP Microscaling).


class ScaleRule(StrEnum):
    """How scaled_convert_to picks a block's scale exponent."""

    FLOOR = "floor"
    """e = floor(log2 amax) - emax (OCP MX v1.0, section 6.3)."""
    CEIL = "ceil"
    """e = ceil(log2(amax / max finite)): no element saturates (cuBLAS)."""


SCALE_FORMATS = ("f8e8m0fnu", "f8e4m3fn")
"""Scale formats of scaled_convert_from; scaled_convert_to computes the first only."""

SCALE_NAN = 0xFF
"""f8e8m0fnu's NaN: the scale of a block holding a NaN or an infinity."""

_SCALE_EXPONENT_RANGE = (-127, 127)


def _blocks(values: np.ndarray, block: int) -> np.ndarray:
    """`values` with its last axis split into (blocks, block)."""
    return values.reshape(*values.shape[:-1], values.shape[-1] // block, block)


def scaled_decode(
    fmt: FloatFormat,
    scale_fmt: FloatFormat,
    bits: npt.ArrayLike,
    scale_bits: npt.ArrayLike,
    block: int,
    dtype: npt.DTypeLike,
) -> np.ndarray:
    """scaled_convert_from: element value x scale value, rounded once to `dtype`.

    Blocks of `block` elements run along the last axis of `bits`, whose last
    axis is `block` times that of `scale_bits`. Both values and their product
    are exact in float64 (at most 9 significant bits, |exponent| < 150); NumPy's
    float64 -> f16/f32 casts round once. For bf16 the product goes through
    f32 first, which rounds only products below 2^-140 (more than 8 bits
    under the least bf16 subnormal), whose bf16 result is ±0 either way.
    """
    elements = decode(fmt, bits, np.float64)
    scales = decode(scale_fmt, scale_bits, np.float64)
    with np.errstate(invalid="ignore"):  # inf x 0 is NaN, as intended
        product = _blocks(elements, block) * scales[..., None]
    product = product.reshape(elements.shape)
    with np.errstate(over="ignore", invalid="ignore"):  # overflow to inf is intended
        if is_bf16(dtype):
            return product.astype(np.float32).astype(dtype)
        return product.astype(dtype, copy=False)


def _scale_exponents(
    fmt: FloatFormat, amax: np.ndarray, rule: ScaleRule
) -> npt.NDArray[np.int64]:
    """The clamped scale exponent e of blocks with largest magnitude `amax` > 0,
    computed exactly from the float64 representation."""
    significand, exponent = np.frexp(amax)  # amax = significand * 2^exponent
    max_significand, max_exponent = math.frexp(fmt.max_finite)
    if rule is ScaleRule.FLOOR:
        e = exponent - max_exponent  # floor(log2 amax) - emax
    else:
        # amax / max_finite lies in (2^(d-1), 2^(d+1)) with d the exponent
        # difference; the comparison of significands tells which power bounds it.
        e = exponent - max_exponent + (significand > max_significand)
    return np.clip(e, *_SCALE_EXPONENT_RANGE).astype(np.int64)


def scaled_encode(
    fmt: FloatFormat,
    values: npt.ArrayLike,
    block: int,
    rounding: Rounding = Rounding.NEAREST_EVEN,
    rule: ScaleRule = ScaleRule.FLOOR,
) -> tuple[npt.NDArray[np.uint8], npt.NDArray[np.uint8]]:
    """scaled_convert_to: floats -> (element encodings, f8e8m0fnu scale encodings).

    Blocks of `block` values run along the last axis. A block holding a NaN or
    an infinity gets the NaN scale and zero elements; an all-zero block the
    scale 2^-127; any other the scale 2^e of `_scale_exponents`, its elements
    being x / 2^e converted with `rounding`, saturating.
    """
    with np.errstate(invalid="ignore"):  # ml_dtypes warns on casting a bf16 NaN
        x = _blocks(np.asarray(values).astype(np.float64), block)
    special = ~np.asarray(np.isfinite(x).all(axis=-1))
    magnitudes = np.where(np.isfinite(x), np.abs(x), 0.0)
    amax = magnitudes.max(axis=-1)
    zero = amax == 0
    e = np.where(zero, _SCALE_EXPONENT_RANGE[0], _scale_exponents(fmt, amax, rule))
    scales = np.where(special, SCALE_NAN, e + 127).astype(np.uint8)
    finite = np.where(special[..., None], 0.0, x)
    scaled = np.ldexp(finite, -e[..., None])
    # Below float64's range (an f64 input far below its block's amax) only
    # the sign and being non-zero matter to the rounding: keep both.
    underflow = (scaled == 0) & (finite != 0)
    scaled = np.where(underflow, np.copysign(math.ulp(0.0), finite), scaled)
    bits = encode(fmt, scaled, rounding, saturate=True)
    bits = np.where(special[..., None], 0, bits).astype(np.uint8)
    return bits.reshape(np.shape(values)), scales

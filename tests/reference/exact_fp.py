"""Exact reference for arbfp's formats, written from docs/arbfp-dialect.md with `fractions.Fraction`.

Shares no code with `mx.semantics`. Values are `Fraction`s, with the strings
"-0", "inf", "-inf" and "nan" for the values a Fraction cannot express. Encodings
are plain ints; where docs/arbfp-dialect.md leaves a result's NaN payload or sign unspecified,
`same_result` accepts every encoding with that meaning.
"""

from __future__ import annotations

import itertools
from bisect import bisect_right
from dataclasses import dataclass
from fractions import Fraction
from functools import cache

import numpy as np

Exact = Fraction | str

MODES = ("nearest_even", "nearest_away", "toward_zero", "upward", "downward")


@dataclass(frozen=True)
class Spec:
    """A format as docs/arbfp-dialect.md's table describes it."""

    width: int
    exponent_bits: int
    mantissa_bits: int
    bias: int
    signed: bool
    inf: bool  # IEEE-style: exponent all ones is inf (mantissa 0) or NaN
    nan: str  # "ieee", "all_ones" (S.1..1.1..1), "0x80"-style "sign_only", or "none"
    zero: bool = True  # f8e8m0fnu has no zero (and no subnormals)


SPECS: dict[str, Spec] = {
    "f8e5m2": Spec(8, 5, 2, 15, True, True, "ieee"),
    "f8e4m3fn": Spec(8, 4, 3, 7, True, False, "all_ones"),
    "f8e5m3fnu": Spec(8, 5, 3, 15, False, False, "all_ones"),
    "f8e5m2fnuz": Spec(8, 5, 2, 16, True, False, "sign_only"),
    "f8e4m3fnuz": Spec(8, 4, 3, 8, True, False, "sign_only"),
    "f8e4m3": Spec(8, 4, 3, 7, True, True, "ieee"),
    "f8e3m4": Spec(8, 3, 4, 3, True, True, "ieee"),
    "f8e8m0fnu": Spec(8, 8, 0, 127, False, False, "all_ones", zero=False),
    "f6e3m2fn": Spec(6, 3, 2, 3, True, False, "none"),
    "f6e2m3fn": Spec(6, 2, 3, 1, True, False, "none"),
    "f4e2m1fn": Spec(4, 2, 1, 1, True, False, "none"),
    # Not an arbfp format: IEEE half, to round convert_from's results into f16.
    "f16": Spec(16, 5, 10, 15, True, True, "ieee"),
}

MAX_FINITE = {
    "f8e5m2": Fraction(57344),
    "f8e4m3fn": Fraction(448),
    "f8e5m3fnu": Fraction(114688),
    "f8e5m2fnuz": Fraction(57344),
    "f8e4m3fnuz": Fraction(240),
    "f8e4m3": Fraction(240),
    "f8e3m4": Fraction(31, 2),
    "f8e8m0fnu": Fraction(2**127),
    "f6e3m2fn": Fraction(28),
    "f6e2m3fn": Fraction(15, 2),
    "f4e2m1fn": Fraction(6),
    "f16": Fraction(65504),
}
"""docs/arbfp-dialect.md's "max finite" column, checked against the decoded encodings."""


def decode(name: str, bits: int) -> Exact:
    """The value an encoding stands for."""
    s = SPECS[name]
    m = s.mantissa_bits
    magnitude_width = s.exponent_bits + m
    negative = s.signed and bool(bits >> magnitude_width & 1)
    magnitude = bits & ((1 << magnitude_width) - 1)
    exponent, mantissa = magnitude >> m, magnitude & ((1 << m) - 1)
    top = (1 << s.exponent_bits) - 1
    if s.nan == "ieee" and exponent == top:
        if mantissa:
            return "nan"
        return "-inf" if negative else "inf"
    if s.nan == "all_ones" and magnitude == (1 << magnitude_width) - 1:
        return "nan"
    if s.nan == "sign_only" and negative and magnitude == 0:
        return "nan"
    if not s.zero:
        value = Fraction(2) ** (exponent - s.bias)
    elif exponent == 0:
        value = Fraction(mantissa, 1 << m) * Fraction(2) ** (1 - s.bias)
    else:
        value = (1 + Fraction(mantissa, 1 << m)) * Fraction(2) ** (exponent - s.bias)
    if negative:
        return "-0" if value == 0 else -value
    return value


@cache
def _magnitudes(name: str) -> tuple[list[Fraction], list[int]]:
    """The non-negative finite values, ascending, and their encodings."""
    s = SPECS[name]
    pairs: dict[Fraction, int] = {}
    for bits in range(1 << (s.width - 1 if s.signed else s.width)):
        value = decode(name, bits)
        if isinstance(value, Fraction):
            pairs[value] = bits
    values = sorted(pairs)
    assert values[-1] == MAX_FINITE[name], name
    return values, [pairs[v] for v in values]


def _is_even(name: str, value: Fraction) -> bool:
    """Whether `value` (> 0, on the format's grid) has an even integer significand."""
    s = SPECS[name]
    exponent = _binade(value)
    emin = 1 - s.bias
    quantum = Fraction(2) ** (max(exponent, emin) - s.mantissa_bits)
    significand = value / quantum
    assert significand.denominator == 1
    return significand.numerator % 2 == 0


@cache
def _grid(name: str) -> list[Fraction]:
    """The finite magnitudes and the next value of the format's precision above them."""
    values, _ = _magnitudes(name)
    top = values[-1]
    exponent = _binade(top)
    return [*values, top + Fraction(2) ** (exponent - SPECS[name].mantissa_bits)]


SCALE = 200


@cache
def _scaled_grid(name: str) -> list[int]:
    scaled = [g * 2**SCALE for g in _grid(name)]
    assert all(v.denominator == 1 for v in scaled)
    return [int(v) for v in scaled]


def _binade(value: Fraction) -> int:
    """floor(log2(value)) for value > 0."""
    exponent = value.numerator.bit_length() - value.denominator.bit_length()
    return exponent - 1 if Fraction(2) ** exponent > value else exponent


def _round_magnitude(name: str, a: Fraction, up: bool | None) -> Fraction:
    """Rounds a > 0 to the format's precision, exponent unbounded above.

    `up` is True (away from zero), False (toward zero) or None (to nearest, ties
    to even; ties away is handled by the caller). A result above the maximum
    finite value means overflow.
    """
    s = SPECS[name]
    grid = _grid(name)
    beyond = grid[-1]
    if a >= beyond:
        return beyond
    # Every grid value is an integer multiple of 2^-SCALE, so comparing floor(a * 2^SCALE)
    # with the scaled grid finds the same neighbours as comparing Fractions, faster.
    i = bisect_right(_scaled_grid(name), a.numerator * 2**SCALE // a.denominator) - 1
    lo = grid[i]
    if lo == a:
        return a
    hi = grid[i + 1]
    if up is True:
        return hi
    if up is False:
        return lo
    middle = (lo + hi) / 2
    if a != middle:
        return lo if a < middle else hi
    if s.mantissa_bits == 0:  # one-bit significand: ties go up (docs/arbfp-dialect.md)
        return hi
    return lo if lo == 0 or _is_even(name, lo) else hi


@cache
def _encodings(name: str) -> dict[Fraction, int]:
    return dict(zip(*_magnitudes(name), strict=True))


def _encoding(name: str, value: Fraction, negative: bool) -> int:
    s = SPECS[name]
    bits = _encodings(name)[value]
    if negative:
        bits |= 1 << (s.width - 1)
    return bits


@cache
def _nan(name: str) -> int | None:
    s = SPECS[name]
    for bits in range(1 << s.width):
        if decode(name, bits) == "nan":
            return bits
    return None


def encode(
    name: str, x: Exact, mode: str = "nearest_even", saturate: bool = False
) -> int:
    """arbfp.convert_to of the exact value x: one encoding with the right meaning."""
    s = SPECS[name]
    nan = _nan(name)
    invalid = 0 if saturate or nan is None else nan  # for the unsigned formats
    if isinstance(x, str):
        negative = x.startswith("-")
        if x == "nan":
            return nan if nan is not None else 0
        if x == "-0":
            if not s.zero:  # f8e8m0fnu
                return invalid
            return _encoding(name, Fraction(0), s.signed and s.nan != "sign_only")
        if negative and not s.signed:  # -inf into f8e5m3fnu, f8e8m0fnu
            return invalid
        return _overflow(name, negative, True, saturate)
    negative = x.numerator < 0
    if not s.zero:  # f8e8m0fnu: zeros, negatives, and values below 2^-127
        if x.numerator <= 0:
            return invalid
        if x < _magnitudes(name)[0][0]:
            return 0x00
    magnitude = abs(_round_signed(name, x, mode))
    if not s.signed and negative:  # f8e5m3fnu
        return 0 if magnitude == 0 else invalid
    if magnitude > MAX_FINITE[name]:
        toward_inf = mode in ("nearest_even", "nearest_away") or (
            mode == ("downward" if negative else "upward")
        )
        return _overflow(name, negative, toward_inf, saturate)
    if magnitude == 0 and s.nan == "sign_only":  # no -0
        return 0
    return _encoding(name, magnitude, negative)


def _overflow(name: str, negative: bool, toward_inf: bool, saturate: bool) -> int:
    """The result of an overflow: "inf" or the largest finite value of that sign."""
    s = SPECS[name]
    if toward_inf and not saturate:
        if s.inf:
            return _encoding_of_inf(name, negative)
        if (nan := _nan(name)) is not None:
            return nan
    return _encoding(name, MAX_FINITE[name], negative)


def _round_signed(name: str, x: Fraction, mode: str) -> Fraction:
    """x rounded in `mode` (unbounded exponent); the sign of a zero result is dropped."""
    if x.numerator == 0:
        return x
    negative = x.numerator < 0
    a = -x if negative else x
    match mode:
        case "toward_zero":
            r = _round_magnitude(name, a, False)
        case "upward":
            r = _round_magnitude(name, a, not negative)
        case "downward":
            r = _round_magnitude(name, a, negative)
        case "nearest_even":
            r = _round_magnitude(name, a, None)
        case "nearest_away":
            lo = _round_magnitude(name, a, False)
            hi = _round_magnitude(name, a, True)
            r = hi if a - lo >= hi - a else lo
        case _:
            raise ValueError(mode)
    return -r if negative else r


@cache
def _encoding_of_inf(name: str, negative: bool) -> int:
    want = "-inf" if negative else "inf"
    s = SPECS[name]
    return next(b for b in range(1 << s.width) if decode(name, b) == want)


def exact(x: float) -> Exact:
    """A Python float (any f16/bf16/f32/f64 value) as an exact value."""
    if x != x:
        return "nan"
    if x in (float("inf"), float("-inf")):
        return "inf" if x > 0 else "-inf"
    if x == 0 and str(x).startswith("-"):
        return "-0"
    return Fraction(x)


def same_result(name: str, got: int, want: int, input_is_nan: bool = False) -> bool:
    """Equal encodings, or two with a meaning docs/arbfp-dialect.md does not pin down further."""
    if got == want:
        return True
    got_value, want_value = decode(name, got), decode(name, want)
    if got_value == want_value == "nan":
        return True
    # NaN into a format without NaN: 0 of either sign.
    return input_is_nan and got_value in (0, "-0") and want_value in (0, "-0")


def to_f16(x: Exact) -> Exact:
    """An exact value rounded to IEEE half to nearest even (convert_from into f16)."""
    if not isinstance(x, Fraction) or x == 0:
        return x
    bits = encode("f16", x)
    return decode("f16", bits)


@cache
def _pieces(name: str) -> tuple[np.ndarray, list[Fraction], list[Fraction]]:
    """The points where the exact rounding can change, and one value between each two.

    Between two consecutive points (format values, midpoints, 0) every mode gives
    the same result, so `encode_array` evaluates `encode` once per piece.
    """
    grid = sorted({Fraction(0), *_grid(name)})
    middles = ((a + b) / 2 for a, b in itertools.pairwise(grid))
    positives = sorted({*grid[1:], *middles})
    points = [*(-p for p in reversed(positives)), Fraction(0), *positives]
    floats = np.array([float(p) for p in points], dtype=np.float64)
    assert all(Fraction(f) == p for f, p in zip(floats.tolist(), points, strict=True))
    between = [
        points[0] * 2,
        *((a + b) / 2 for a, b in itertools.pairwise(points)),
        points[-1] * 2,
    ]
    return floats, points, between


@cache
def _piece_results(
    name: str, mode: str, saturate: bool
) -> tuple[np.ndarray, np.ndarray, dict[str, int]]:
    _, points, between = _pieces(name)
    on_points = np.array([encode(name, p, mode, saturate) for p in points])
    inside = np.array([encode(name, b, mode, saturate) for b in between])
    specials = {
        v: encode(name, v, mode, saturate) for v in ("nan", "inf", "-inf", "-0")
    }
    return on_points, inside, specials


def encode_array(
    name: str, xs: np.ndarray, mode: str = "nearest_even", saturate: bool = False
) -> np.ndarray:
    """`encode` of every element of a float array (exact: every input is a float64)."""
    with np.errstate(invalid="ignore"):  # ml_dtypes warns on casting a bf16 NaN
        x = np.asarray(xs).astype(np.float64)
    floats, _, _ = _pieces(name)
    on_points, inside, specials = _piece_results(name, mode, saturate)
    i = np.searchsorted(floats, x, side="left")  # floats[i - 1] < x <= floats[i]
    hit = floats[np.minimum(i, len(floats) - 1)] == x
    result = np.where(hit, on_points[np.minimum(i, len(floats) - 1)], inside[i])
    result = np.where(np.isnan(x), specials["nan"], result)
    result = np.where(x == np.inf, specials["inf"], result)
    result = np.where(x == -np.inf, specials["-inf"], result)
    return np.where((x == 0) & np.signbit(x), specials["-0"], result)


def same_results(
    name: str, got: np.ndarray, want: np.ndarray, xs: np.ndarray
) -> np.ndarray:
    """`same_result` elementwise."""
    nans = np.array([decode(name, b) == "nan" for b in range(1 << SPECS[name].width)])
    zeros = np.array(
        [decode(name, b) in (0, "-0") for b in range(1 << SPECS[name].width)]
    )
    got, want = np.asarray(got).astype(np.int64), np.asarray(want).astype(np.int64)
    with np.errstate(invalid="ignore"):
        input_nan = np.isnan(np.asarray(xs).astype(np.float64))
    return (
        (got == want)
        | (nans[got] & nans[want])
        | (input_nan & zeros[got] & zeros[want])
    )

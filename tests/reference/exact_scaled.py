"""Exact reference for arbfp's block-scaled conversions (OCP Microscaling),
written from docs/arbfp-block-scaled.md's "Block-scaled formats" with `fractions.Fraction`.

Shares no code with `mx`; builds on `exact_fp` (the per-element reference).
Exact values are `exact_fp.Exact`: Fractions, or "-0", "inf", "-inf", "nan".
Also holds `microxcaling_quantize`, a second, float64 formulation of OCP MX
v1.0 section 6.3 in the style of Microsoft's microxcaling `_quantize_mx`.
"""

from __future__ import annotations

from fractions import Fraction

import numpy as np

from . import exact_fp as ref
from .exact_fp import Exact

IEEE_LAYOUTS = {"f16": (10, -14, 15), "bf16": (7, -126, 127), "f32": (23, -126, 127)}
IEEE_LAYOUTS["f64"] = (52, -1022, 1023)
"""Stored fraction bits, emin and emax of each destination type."""


def _negative(x: Exact) -> bool:
    return x.startswith("-") if isinstance(x, str) else x < 0


def multiply(a: Exact, b: Exact) -> Exact:
    """The exact IEEE product: NaN propagates, inf x 0 is NaN, signs xor."""
    if a == "nan" or b == "nan":
        return "nan"
    negative = _negative(a) != _negative(b)
    a_inf, b_inf = a in ("inf", "-inf"), b in ("inf", "-inf")
    a_zero, b_zero = a in (0, "-0"), b in (0, "-0")
    if (a_inf and b_zero) or (b_inf and a_zero):
        return "nan"
    if a_inf or b_inf:
        return "-inf" if negative else "inf"
    if a_zero or b_zero:
        return "-0" if negative else Fraction(0)
    assert isinstance(a, Fraction) and isinstance(b, Fraction)
    return a * b


def _floor_log2(a: Fraction) -> int:
    """floor(log2 a) for a > 0."""
    e = a.numerator.bit_length() - a.denominator.bit_length()
    return e - 1 if Fraction(2) ** e > a else e


def round_to(x: Exact, destination: str) -> Exact:
    """x rounded to nearest even into f16/bf16/f32/f64 (overflow gives inf)."""
    if not isinstance(x, Fraction) or x == 0:
        return x
    fraction_bits, emin, emax = IEEE_LAYOUTS[destination]
    a = abs(x)
    quantum = Fraction(2) ** (max(_floor_log2(a), emin) - fraction_bits)
    n, remainder = divmod(a, quantum)
    if remainder > quantum / 2 or (remainder == quantum / 2 and n % 2 == 1):
        n += 1
    rounded = n * quantum
    largest = (2 - Fraction(1, 2**fraction_bits)) * Fraction(2) ** emax
    if rounded > largest:
        return "-inf" if x < 0 else "inf"
    if rounded == 0:
        return "-0" if x < 0 else Fraction(0)
    return -rounded if x < 0 else rounded


def scaled_decode(
    name: str, scale_name: str, bits: int, scale_bits: int, destination: str
) -> Exact:
    """scaled_convert_from of one element with its block's scale."""
    product = multiply(ref.decode(name, bits), ref.decode(scale_name, scale_bits))
    return round_to(product, destination)


def emax(name: str) -> int:
    """Exponent of the format's largest finite value."""
    return _floor_log2(ref.MAX_FINITE[name])


def scale_exponent(name: str, amax: Fraction, rule: str) -> int:
    """The unclamped scale exponent of a block with largest magnitude amax > 0."""
    if rule == "floor":
        return _floor_log2(amax) - emax(name)
    ratio = amax / ref.MAX_FINITE[name]
    e = _floor_log2(ratio)
    return e if Fraction(2) ** e == ratio else e + 1


def scaled_encode_block(
    name: str, block: list[Exact], mode: str = "nearest_even", rule: str = "floor"
) -> tuple[int, list[int]]:
    """scaled_convert_to of one block: (f8e8m0fnu scale encoding, element encodings)."""
    if any(x in ("nan", "inf", "-inf") for x in block):
        return 0xFF, [0] * len(block)
    magnitudes = [abs(x) for x in block if isinstance(x, Fraction)]
    amax = max(magnitudes, default=Fraction(0))
    e = -127 if amax == 0 else min(max(scale_exponent(name, amax, rule), -127), 127)
    elements: list[int] = []
    for x in block:
        scaled = x if isinstance(x, str) else x / Fraction(2) ** e
        elements.append(ref.encode(name, scaled, mode, saturate=True))
    return e + 127, elements


def scaled_encode(
    name: str, xs: np.ndarray, block: int, mode: str, rule: str
) -> tuple[np.ndarray, np.ndarray]:
    """`scaled_encode_block` over a 1-D float array (blocks of `block`).

    Elements whose quotient x / 2^e is a float64 go through
    `exact_fp.encode_array` (exact, vectorized); the others (an f64 far below
    its block's largest value) through `exact_fp.encode` on the Fraction.
    """
    with np.errstate(invalid="ignore"):  # ml_dtypes warns on casting a bf16 NaN
        x = np.asarray(xs).astype(np.float64)
    blocks = x.reshape(-1, block)
    scales = np.empty(blocks.shape[0], dtype=np.int64)
    exponents = np.empty(blocks.shape[0], dtype=np.int64)
    # A block's largest magnitude is one of its float64 values (abs and max
    # are exact): one Fraction per block, not one per element.
    finite: list[bool] = np.all(np.isfinite(blocks), axis=1).tolist()
    largest: list[float] = np.abs(blocks).max(axis=1).tolist()
    for i, (all_finite, amax) in enumerate(zip(finite, largest, strict=True)):
        if not all_finite:
            scales[i], exponents[i] = 0xFF, 0
            continue
        e = -127 if amax == 0 else scale_exponent(name, Fraction(amax), rule)
        exponents[i] = min(max(e, -127), 127)
        scales[i] = exponents[i] + 127
    e = np.repeat(exponents, block)
    quotient = np.ldexp(x, -e)
    with np.errstate(invalid="ignore", over="ignore"):
        exact = np.ldexp(quotient, e) == x
    elements = ref.encode_array(name, quotient, mode, saturate=True)
    for i in np.flatnonzero(~exact & np.isfinite(x)).tolist():
        scaled = Fraction(float(x[i])) / Fraction(2) ** int(e[i])
        elements[i] = ref.encode(name, scaled, mode, saturate=True)
    elements = np.where(np.repeat(scales == 0xFF, block), 0, elements)
    return elements, scales


# A second formulation of OCP MX v1.0 section 6.3, in float64 NumPy, after
# microxcaling's `_quantize_mx` (shared exponent from the block's largest
# magnitude, then an element quantizer that rounds the significand scaled to an
# integer with np.rint and clamps to the largest normal).

_ELEMENT_PARAMETERS = {
    "f8e4m3fn": (3, 448.0, -6),
    "f8e5m2": (2, 57344.0, -14),
    "f6e3m2fn": (2, 28.0, -2),
    "f6e2m3fn": (3, 7.5, 0),
    "f4e2m1fn": (1, 6.0, 0),
}
"""(fraction bits, largest normal, smallest normal exponent) of the OCP MX
element formats."""


def _floor_log2_array(a: np.ndarray | float) -> np.ndarray:
    """floor(log2 a) of positive floats, from the exponent (np.log2 may round
    up to an integer just below a power of two)."""
    return np.frexp(a)[1] - 1.0


def microxcaling_quantize(name: str, xs: np.ndarray, block: int) -> np.ndarray:
    """Quantize-dequantize (element value x scale) of finite blocks, nearest
    even, scale rule floor, with the shared exponent unclamped (callers keep
    to blocks that need no clamp)."""
    fraction_bits, max_normal, min_exponent = _ELEMENT_PARAMETERS[name]
    a = np.asarray(xs, dtype=np.float64).reshape(-1, block)
    amax = np.max(np.abs(a), axis=1, keepdims=True)
    shared = _floor_log2_array(np.where(amax == 0, 1.0, amax))
    shared = np.where(amax == 0, -127.0, shared - _floor_log2_array(max_normal))
    scaled = a / 2.0**shared
    private = _floor_log2_array(np.maximum(np.abs(scaled), 2.0**min_exponent))
    step = 2.0 ** (private - fraction_bits)
    quantized = np.clip(np.rint(scaled / step) * step, -max_normal, max_normal)
    return (quantized * 2.0**shared).reshape(np.shape(xs))

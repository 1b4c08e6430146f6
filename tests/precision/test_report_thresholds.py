"""Exact counts on crafted inputs placed on both sides of each threshold:
block-scaled conversions to every element format (the largest finite value
times the block's scale, half the smallest subnormal times it, a scale
clamped at 2^-127) under both scale rules, against the exact rational
reference of OCP MX (tests/reference/exact_scaled.py); f16 and bf16 ops
(their largest finite value and rounding-to-inf boundary, half their
smallest subnormal) against NumPy/ml_dtypes casts (docs/precision-report.md)."""

import math
from fractions import Fraction
from typing import Any

import ml_dtypes
import numpy as np
import pytest

from tests.precision.test_precision_report import (
    _assert_errors,
    _both,
    _errors,
    _scaled_round_trip,
)
from tests.reference import exact_fp as ref
from tests.reference import exact_scaled

Array = np.ndarray[Any, Any]

BLOCK = 32
ELEMENT_FORMATS = [f for f in ref.MAX_FINITE if f not in ("f8e8m0fnu", "f16")]


def _f32(x: float | Fraction) -> float:
    return float(np.float32(float(x)))


def _next(x: float, toward: float) -> float:
    return float(np.nextafter(np.float32(x), np.float32(toward)))


def _smallest(fmt: str) -> Fraction:
    """The format's smallest positive value."""
    return min(
        v
        for b in range(1 << ref.SPECS[fmt].width)
        if isinstance(v := ref.decode(fmt, b), Fraction) and v > 0
    )


def _crafted_blocks(fmt: str, rng: np.random.Generator) -> Array:
    """One block per row. With scale 2^k (k = 0, -5), amax at the largest
    finite value times 2^k, just below, just above (clipped under floor;
    ceil doubles the scale) and halfway to the next power of two; each
    block also holds half the smallest subnormal times 2^k and its f32
    neighbours (the round-to-zero boundary), the smallest value times 2^k,
    ±0 and random values. Then a block of f32 subnormals (scale clamped at
    2^-127), a block with NaN, one with -inf, an all-zero block and one of
    negative values (zero under an unsigned format)."""
    largest, tiny = ref.MAX_FINITE[fmt], _smallest(fmt)
    rows: list[list[float]] = []
    for k in (0, -5):
        top = _f32(largest * Fraction(2) ** k)
        binade = Fraction(2) ** (exact_scaled.emax(fmt) + 1 + k)
        half = _f32(tiny * Fraction(2) ** k / 2)
        edges = [half, _next(half, 1), _next(half, 0), -half, -_next(half, 1)]
        edges += [_f32(tiny * Fraction(2) ** k), 0.0, -0.0]
        for amax in (
            top,
            _next(top, 0),
            _next(top, math.inf),
            _f32((top + binade) / 2),
        ):
            fill = rng.uniform(-1, 1, BLOCK - len(edges) - 2) * float(top) / 2
            rows.append([amax, -_next(amax, 0), *edges, *fill.tolist()])
    subnormal = float(np.float32(2.0**-140))
    rows.append([subnormal * (i + 1) for i in range(BLOCK)])
    rows.append([math.nan] + [1.0] * (BLOCK - 1))
    rows.append([2.0] * (BLOCK - 1) + [-math.inf])
    rows.append([0.0] * BLOCK)
    rows.append((-rng.uniform(0.1, 3, BLOCK)).tolist())
    return np.array(rows, np.float32)


def _float(value: ref.Exact) -> float:
    if isinstance(value, str):
        return {"nan": math.nan, "inf": math.inf, "-inf": -math.inf, "-0": -0.0}[value]
    return float(value)


def _expected(x: Array, fmt: str, rule: str) -> tuple[dict[str, int], Array]:
    """The counts of scaled_convert_to under `rule` and its values, from the
    exact reference (saturated: |x| above the largest finite value times
    the block's scale, compared as rationals)."""
    elements, scales = exact_scaled.scaled_encode(
        fmt, x.ravel(), BLOCK, "nearest_even", rule
    )
    scale_of = np.repeat(scales, BLOCK)
    values = np.array(
        [
            _float(exact_scaled.scaled_decode(fmt, "f8e8m0fnu", int(b), int(s), "f64"))
            for b, s in zip(elements.tolist(), scale_of.tolist(), strict=True)
        ]
    )
    over = np.array(
        [
            s != 0xFF
            and math.isfinite(v)
            and abs(Fraction(v)) > ref.MAX_FINITE[fmt] * Fraction(2) ** (s - 127)
            for v, s in zip(x.ravel().tolist(), scale_of.tolist(), strict=True)
        ]
    )
    finite = np.isfinite(x.ravel())
    counts = {
        "count": x.size,
        "saturated": int(over.sum()),
        "underflow": int((finite & (x.ravel() != 0) & (values == 0)).sum()),
        "nan": int(np.isnan(values).sum()),
        "inf": int(np.isinf(values).sum()),
        "clipped_blocks": int(over.reshape(-1, BLOCK).any(axis=1).sum()),
    }
    return counts, values


@pytest.mark.parametrize("fmt", ELEMENT_FORMATS)
def test_block_scaled_counts_at_every_threshold(fmt: str) -> None:
    """scaled_convert_to (floor, with the counts of both rules) and
    scaled_convert_from, compiled and interpreted, on the crafted blocks."""
    x = _crafted_blocks(fmt, np.random.default_rng(28))
    expected = {rule: _expected(x, fmt, rule) for rule in ("floor", "ceil")}
    floor, ceil = expected["floor"][0], expected["ceil"][0]
    assert floor["saturated"] >= 4 and floor["clipped_blocks"] >= 4
    assert ceil["saturated"] == 0 and floor["underflow"] >= 8
    shadow = x.astype(np.float64).ravel()
    text = _scaled_round_trip(fmt, x.shape[0], BLOCK, "floor")
    for report in _both(text, "q", x):
        to, decoded = report.values[:2]
        assert to["op"] == "arbfp.scaled_convert_to" and to["blocks"] == x.shape[0]
        for rule, (counts, values) in expected.items():
            got = to["rules"][rule]
            assert {k: got[k] for k in counts if k != "count"} == {
                k: v for k, v in counts.items() if k != "count"
            }, rule
            _assert_errors(got, _errors(values, shadow))
        assert {k: to[k] for k in floor} == floor
        assert {k: decoded[k] for k in floor} == floor
        _assert_errors(decoded, _errors(expected["floor"][1], shadow))


NARROW_OPS = """
func.func @narrow(%x: vector<{n}xf32>, %a: vector<{n}x{t}>, %b: vector<{n}x{t}>) -> (vector<{n}x{t}>, vector<{n}x{t}>) {{
  %h = arith.truncf %x : vector<{n}xf32> to vector<{n}x{t}>
  %p = arith.mulf %a, %b : vector<{n}x{t}>
  func.return %h, %p : vector<{n}x{t}>, vector<{n}x{t}>
}}
"""

DTYPES = {"f16": np.dtype(np.float16), "bf16": np.dtype(ml_dtypes.bfloat16)}


@pytest.mark.parametrize("t", ["f16", "bf16"])
def test_f16_bf16_ops_at_their_thresholds(t: str) -> None:
    """arith.truncf from f32 and arith.mulf of two f16/bf16 vectors, with
    exact values (the f32 input; the product, exact in f64) at the largest
    finite value, inside the band that still rounds to it, at the boundary
    that rounds to inf, and at half the smallest subnormal with its
    neighbours; counts and errors against NumPy/ml_dtypes casts."""
    dtype = DTYPES[t]
    info = ml_dtypes.finfo(dtype)
    largest, tiny = float(info.max), float(info.smallest_subnormal)
    ulp = largest - float(np.nextafter(dtype.type(largest), dtype.type(0)))
    to_inf = largest + ulp / 2  # the least magnitude that rounds to inf
    half = tiny / 2
    edges = [largest, _next(largest, math.inf), largest + ulp / 4, _next(to_inf, 0)]
    edges += [to_inf, _next(to_inf, math.inf), half, _next(half, 1), _next(half, 0)]
    edges += [tiny, 1.0, 0.0, math.inf, math.nan]
    x = np.array(edges + [-e for e in edges], np.float32)
    # products: a · b with b = 2^-j exact, a chosen so that a · b straddles
    # the thresholds; and b = 1 + ulp(1) for the band below inf
    one_up = float(np.nextafter(dtype.type(1), dtype.type(2)))
    pairs = [
        (largest, 1.0),
        (largest, one_up),
        (largest, 2.0),
        (float(np.nextafter(dtype.type(largest), dtype.type(0))), one_up),
        (tiny, 0.5),
        (float(np.nextafter(dtype.type(tiny), dtype.type(1))), 0.5),
        (tiny * 3, 0.5),
        (tiny, 0.25),
        (2.0, 3.0),
        (-largest, 2.0),
        (math.inf, 0.0),
    ]
    pairs += [(-p, q) for p, q in pairs[:8]]
    pairs += [(1.0, 1.0)] * (x.size - len(pairs))
    a = np.array([p for p, _ in pairs], dtype)
    b = np.array([q for _, q in pairs], dtype)
    text = NARROW_OPS.format(n=x.size, t=t)
    reports = _both(text, "narrow", x, a, b)
    with np.errstate(over="ignore", invalid="ignore"):
        cases = {
            "arith.truncf": (x.astype(np.float64), x.astype(dtype)),
            "arith.mulf": (
                a.astype(np.float64) * b.astype(np.float64),
                (a.astype(np.float64) * b.astype(np.float64)).astype(dtype),
            ),
        }
    for op, (exact, rounded) in cases.items():
        value = rounded.astype(np.float64)
        finite = np.isfinite(exact)
        expected = {
            "count": x.size,
            "saturated": int((finite & (np.abs(exact) > largest)).sum()),
            "underflow": int((finite & (exact != 0) & (value == 0)).sum()),
            "nan": int(np.isnan(value).sum()),
            "inf": int(np.isinf(value).sum()),
        }
        assert expected["saturated"] >= 4 and expected["underflow"] >= 2, op
        for report in reports:
            record = next(v for v in report.values if v["op"] == op)
            assert {k: record[k] for k in expected} == expected, op
            _assert_errors(record, _errors(value, exact))

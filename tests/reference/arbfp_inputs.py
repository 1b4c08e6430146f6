"""Inputs for arbfp's convert_to tests, shared by the semantics, interpreter,
folder and JIT tests: every f16 and bf16 value, and fixed-seed f32/f64 samples
with the edge cases of each format. MX_LONG_TESTS=1 raises the random samples
from 5*10^4 to 10^6 bit patterns (plus as many values near 1).
"""

from __future__ import annotations

from functools import cache

import ml_dtypes
import numpy as np

from tests.sampling import LONG

from . import exact_fp as ref

SAMPLE = 1_000_000 if LONG else 50_000

ML_DTYPES = {
    "f8e5m2": ml_dtypes.float8_e5m2,
    "f8e4m3fn": ml_dtypes.float8_e4m3fn,
    "f8e5m2fnuz": ml_dtypes.float8_e5m2fnuz,
    "f8e4m3fnuz": ml_dtypes.float8_e4m3fnuz,
    "f8e4m3": ml_dtypes.float8_e4m3,
    "f8e3m4": ml_dtypes.float8_e3m4,
    "f8e8m0fnu": ml_dtypes.float8_e8m0fnu,
    "f6e3m2fn": ml_dtypes.float6_e3m2fn,
    "f6e2m3fn": ml_dtypes.float6_e2m3fn,
    "f4e2m1fn": ml_dtypes.float4_e2m1fn,
}
"""Every format but f8e5m3fnu, which ml_dtypes lacks."""

ALL_F16 = np.arange(1 << 16, dtype=np.uint16).view(np.float16)
ALL_BF16 = np.arange(1 << 16, dtype=np.uint16).view(ml_dtypes.bfloat16)


def edge_cases(name: str, dtype: np.dtype) -> np.ndarray:
    """Each format value and midpoint (ties), ±1 ulp of the source type, both signs."""
    points = [float(p) for p in ref._pieces(name)[1]]  # exact: checked there
    with np.errstate(over="ignore"):  # f8e8m0fnu's 2^128 is inf in f32
        base = np.array(points, dtype=np.float64).astype(dtype)
    inf = np.array(np.inf, dtype=dtype)
    cases = [base, np.nextafter(base, inf), np.nextafter(base, -inf)]
    specials = np.array([0.0, -0.0, np.inf, -np.inf, np.nan], dtype=dtype)
    return np.concatenate([*cases, specials])


def random_sample(dtype: np.dtype, seed: int) -> np.ndarray:
    """Random bit patterns (every exponent equally likely) plus values near 1."""
    rng = np.random.default_rng(seed)
    width = np.dtype(dtype).itemsize * 8
    bits = rng.integers(0, 1 << width, SAMPLE, dtype=np.uint64, endpoint=False)
    patterns = bits.astype(f"uint{width}").view(dtype)
    near_one = (rng.standard_normal(SAMPLE) * 8).astype(dtype)
    return np.concatenate([patterns, near_one])


@cache
def sources(name: str) -> dict[str, np.ndarray]:
    """convert_to inputs into format `name`, by source type."""
    f32, f64 = np.dtype(np.float32), np.dtype(np.float64)
    return {
        "f16": ALL_F16,
        "bf16": ALL_BF16,
        "f32": np.concatenate([random_sample(f32, 1), edge_cases(name, f32)]),
        "f64": np.concatenate([random_sample(f64, 2), edge_cases(name, f64)]),
    }


def ml_dtypes_agrees(name: str, x: np.ndarray, got: np.ndarray) -> np.ndarray:
    """Where `got` (encodings of nearest_even convert_to, no saturation) agrees
    with ml_dtypes' cast (and where docs/arbfp-dialect.md knowingly differs from it)."""
    with np.errstate(invalid="ignore"):
        want = x.astype(ML_DTYPES[name]).view(np.uint8)
    same = ref.same_results(name, got, want, x)
    if name == "f8e8m0fnu":
        # ml_dtypes rounds values in [2^-127, 2^-126) (f32 subnormals) up to 2^-126;
        # docs/arbfp-dialect.md (and the exact reference) round them to nearest.
        with np.errstate(invalid="ignore"):
            same |= np.abs(x.astype(np.float64)) < 2.0**-126
    return same

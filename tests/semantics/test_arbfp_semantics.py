"""mx.semantics.arbfp against ml_dtypes and the exact Fraction reference.

Every encoding of every format is decoded to every float type; convert_to is
checked over every f16 and every bf16 input and a fixed-seed f32/f64 sample with
the edge cases of each format, in every rounding mode, with and without
saturation (inputs: `reference.arbfp_inputs`; MX_LONG_TESTS=1 raises the random
samples to 10^6 values).
"""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import pytest

from mx.semantics.arbfp import (
    FLOAT_TYPES,
    FORMATS,
    Rounding,
    decode,
    encode,
    float_dtype,
)
from tests.reference import arbfp_inputs as inputs
from tests.reference import exact_fp as ref


def test_format_table_matches_the_spec() -> None:
    assert list(FORMATS) == list(ref.SPECS)[:-1]  # the reference adds f16
    for name, fmt in FORMATS.items():
        spec = ref.SPECS[name]
        assert (fmt.bits, fmt.bias, fmt.signed) == (spec.width, spec.bias, spec.signed)
        assert Fraction(fmt.max_finite) == ref.MAX_FINITE[name]
        assert fmt.has_inf == spec.inf
        assert fmt.has_nan == (spec.nan != "none")


@pytest.mark.parametrize("dtype", FLOAT_TYPES)
@pytest.mark.parametrize("name", FORMATS)
def test_decode_every_encoding(name: str, dtype: str) -> None:
    fmt = FORMATS[name]
    encodings = np.arange(1 << fmt.bits)
    got = decode(fmt, encodings, float_dtype(dtype)).astype(np.float64)
    for bits, value in zip(encodings.tolist(), got.tolist(), strict=True):
        want = ref.decode(name, bits)
        if dtype == "f16":
            want = ref.to_f16(
                want
            )  # the only inexact destination (docs/arbfp-dialect.md)
        assert ref.exact(value) == want, (name, dtype, hex(bits), value, want)
    if name in inputs.ML_DTYPES:
        encoded = encodings.astype(np.uint8).view(inputs.ML_DTYPES[name])
        expected = encoded.astype(float_dtype(dtype)).astype(np.float64)
        np.testing.assert_array_equal(got, expected)  # NaN == NaN here


def test_decode_containers_ignore_high_bits() -> None:
    fmt = FORMATS["f4e2m1fn"]
    low = np.arange(16)
    for high in (0x10, 0xF0, -256):
        np.testing.assert_array_equal(
            decode(fmt, low | high, np.float32), decode(fmt, low, np.float32)
        )


@pytest.mark.parametrize("source", ["f16", "bf16", "f32"])
@pytest.mark.parametrize("name", inputs.ML_DTYPES)
def test_encode_matches_ml_dtypes(name: str, source: str) -> None:
    x = inputs.sources(name)[source]
    got = encode(FORMATS[name], x)
    same = inputs.ml_dtypes_agrees(name, x, got)
    assert same.all(), (x[~same][:8], got[~same][:8])


@pytest.mark.parametrize("saturate", [False, True])
@pytest.mark.parametrize("mode", list(Rounding))
@pytest.mark.parametrize("name", FORMATS)
def test_encode_matches_exact_reference(
    name: str, mode: Rounding, saturate: bool
) -> None:
    for source, x in inputs.sources(name).items():
        got = encode(FORMATS[name], x, mode, saturate)
        want = ref.encode_array(name, x, mode.value, saturate)
        same = ref.same_results(name, got, want, x)
        assert same.all(), (source, x[~same][:8], got[~same][:8], want[~same][:8])


def test_f64_is_rounded_once() -> None:
    # docs/arbfp-dialect.md: through f32 this would be 1.0; rounded once it is 1.125 (0x39).
    x = np.array([1 + 2.0**-4 + 2.0**-30])
    assert encode(FORMATS["f8e4m3fn"], x).tolist() == [0x39]
    assert (
        ref.encode("f8e4m3fn", Fraction(1) + Fraction(1, 16) + Fraction(1, 2**30))
        == 0x39
    )


@pytest.mark.parametrize("mode", list(Rounding))
def test_special_rules(mode: Rounding) -> None:
    """Spot checks of docs/arbfp-dialect.md's rules, independent of both implementations."""
    fnu = FORMATS["f8e5m3fnu"]
    e8m0 = FORMATS["f8e8m0fnu"]
    tiny = np.array([-1e-30])
    # A negative value rounding to zero gives +0 in f8e5m3fnu, else NaN (0 saturated).
    expected_tiny = 0xFF if mode == Rounding.DOWNWARD else 0
    assert encode(fnu, tiny, mode).tolist() == [expected_tiny]
    assert encode(fnu, np.array([-1.0]), mode).tolist() == [0xFF]
    assert encode(fnu, np.array([-1.0]), mode, saturate=True).tolist() == [0]
    # f8e8m0fnu: zeros and negatives are NaN (0 saturated); tiny positives 2^-127.
    assert encode(e8m0, np.array([0.0, -0.0, -4.0]), mode).tolist() == [0xFF] * 3
    assert encode(e8m0, np.array([0.0, -4.0]), mode, saturate=True).tolist() == [0, 0]
    assert encode(e8m0, np.array([1e-300]), mode).tolist() == [0]
    # ±inf: inf, or NaN, or the largest finite value; saturate: the largest finite.
    infs = np.array([np.inf, -np.inf])
    assert encode(FORMATS["f8e5m2"], infs, mode).tolist() == [0x7C, 0xFC]
    assert encode(FORMATS["f8e5m2"], infs, mode, True).tolist() == [0x7B, 0xFB]
    assert encode(FORMATS["f8e4m3fnuz"], infs, mode).tolist() == [0x80, 0x80]
    assert encode(FORMATS["f4e2m1fn"], infs, mode).tolist() == [0x7, 0xF]
    # -0 into formats without -0 is +0.
    assert encode(FORMATS["f8e5m2fnuz"], np.array([-0.0]), mode).tolist() == [0]
    assert encode(FORMATS["f8e5m2"], np.array([-0.0]), mode).tolist() == [0x80]

"""The tracing front end (`@mx.function`, mx/tracing/) against NumPy and
ml_dtypes, op by op, bit for bit: every traced op is compiled and run by the
JIT. Float references are NumPy's own arithmetic in the element type (its
+ - * / are correctly rounded in float16/bfloat16/float32/float64), products
are accumulated in mx's documented order (k = 0, 1, ...) with NumPy, the
small-float conversions are ml_dtypes' or the exact references of
tests/reference/ (rounding modes, saturation, block scaling)."""

# The traced functions are lambdas of traced values, written as a user would:
# pyright: reportUnknownLambdaType=false

from __future__ import annotations

import operator
import os
import subprocess
import sys
from collections.abc import Callable
from fractions import Fraction
from typing import Any

import ml_dtypes
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import mx
from mx.errors import ArgumentError, CompileError
from mx.tracing.function import python_located
from tests.reference import exact_fp as ref
from tests.reference import exact_scaled as scaled_ref

Array = np.ndarray[Any, Any]
BF16 = np.dtype(ml_dtypes.bfloat16)
FLOATS = [np.dtype(np.float16), BF16, np.dtype(np.float32), np.dtype(np.float64)]


def _random(rng: np.random.Generator, shape: tuple[int, ...], dtype: Any) -> Array:
    if np.dtype(dtype).kind == "i":
        return rng.integers(-100, 100, shape).astype(dtype)
    return rng.standard_normal(shape).astype(dtype)


def _same(got: Any, want: Any) -> None:
    got, want = np.asarray(got), np.asarray(want)
    assert got.dtype == want.dtype, (got.dtype, want.dtype)
    assert got.shape == want.shape, (got.shape, want.shape)
    if got.dtype.kind in "fV":  # a NaN's sign and payload are unspecified
        with np.errstate(invalid="ignore"):
            nan = np.isnan(got.astype(np.float64))
            assert np.array_equal(nan, np.isnan(want.astype(np.float64))), (got, want)
        got, want = got[~nan], want[~nan]
    assert got.tobytes() == want.tobytes(), f"\n{got}\n!=\n{want}"


def _in_order_matmul(a: Array, b: Array) -> Array:
    """mx's matmul: acc = a[r,0]*b[0,c], then acc + a[r,k]*b[k,c], each step
    rounded to the element type (NumPy's vector ops in that type)."""
    acc = a[..., :, :1] * b[..., :1, :]
    for k in range(1, a.shape[-1]):
        acc = acc + a[..., :, k : k + 1] * b[..., k : k + 1, :]
    return acc


def _line_of(marker: str) -> int:
    """The line of this file holding `marker`."""
    with open(__file__) as source:
        return next(
            i
            for i, line in enumerate(source, 1)
            if marker in line and "_line_of" not in line
        )


def _line() -> int:
    """The caller's line: where the expression of an error test is written."""
    return sys._getframe(1).f_lineno  # pyright: ignore[reportPrivateUsage]


# Elementwise arithmetic ---------------------------------------------------------------


@pytest.mark.parametrize("dtype", FLOATS, ids=lambda d: d.name)
def test_float_elementwise_ops_match_numpy(dtype: np.dtype[Any]) -> None:
    rng = np.random.default_rng(1)
    a, b = _random(rng, (5, 7), dtype), _random(rng, (5, 7), dtype)

    @mx.function
    def ops(x: Any, y: Any) -> Any:
        return x + y, x - y, x * y, x / y, -x, x * 0.1 + 3, 2.5 / y, 1 - x

    got = ops(a, b)
    with np.errstate(over="ignore"):
        want = (a + b, a - b, a * b, a / b, -a, a * 0.1 + 3, 2.5 / b, 1 - a)
    for g, w in zip(got, want, strict=True):
        _same(g, w)


def test_integer_elementwise_ops_wrap_as_numpy() -> None:
    rng = np.random.default_rng(2)
    a = rng.integers(-(2**31), 2**31, (4, 6), dtype=np.int32)
    b = rng.integers(-(2**31), 2**31, (4, 6), dtype=np.int32)
    ops = mx.function(lambda x, y: (x + y, x - y, x * y, -x, x * 3 - 7))
    for g, w in zip(ops(a, b), (a + b, a - b, a * b, -a, a * 3 - 7), strict=True):
        _same(g, w)


def test_python_number_arguments_are_weak_as_in_numpy() -> None:
    """A Python float argument takes the matrix's dtype (NEP 50): rounded
    once to bfloat16/float16, as NumPy converts it."""
    rng = np.random.default_rng(3)
    scale = mx.function(lambda x, s, k: x * s + k)
    for dtype in FLOATS:
        a = _random(rng, (3, 4), dtype)
        _same(scale(a, 0.1, 3), a * 0.1 + 3)
    i = rng.integers(-50, 50, (3, 4)).astype(np.int16)
    _same(mx.function(lambda x, k: x * k)(i, 300), i * 300)
    _same(mx.function(lambda s, t: s * t + 1)(2.5, 3), np.float64(8.5))


@pytest.mark.parametrize("dtype", [*FLOATS, np.dtype(np.int16)], ids=lambda d: d.name)
def test_scalars_and_vectors(dtype: np.dtype[Any]) -> None:
    rng = np.random.default_rng(4)
    u, v = _random(rng, (9,), dtype), _random(rng, (9,), dtype)
    s = dtype.type(3)
    if dtype.kind == "i":
        ops = mx.function(lambda x, y, s: (x + y, x * s, -y, x[3] * y[-1] - s))
        want = (u + v, u * s, -v, u[3] * v[-1] - s)
    else:
        ops = mx.function(lambda x, y, s: (x + y, x * s, -y, x / y - s, x[3] * y[-1]))
        want = (u + v, u * s, -v, u / v - s, u[3] * v[-1])
    for g, w in zip(ops(u, v, s), want, strict=True):
        _same(g, w)
    zero_d = np.array(2.0, dtype=np.float32)
    _same(mx.function(lambda x, y: x * y)(zero_d, np.float32(3.0)), np.float32(6.0))


def test_fma_rounds_once() -> None:
    """Against exact rational arithmetic, rounded once to float32."""
    rng = np.random.default_rng(5)
    a, b, c = (_random(rng, (3, 3), np.float32) for _ in range(3))
    got = mx.fma(a, b, c)  # run eagerly: traced and compiled on the spot
    exact = [
        Fraction(float(x)) * Fraction(float(y)) + Fraction(float(z))
        for x, y, z in zip(a.ravel(), b.ravel(), c.ravel(), strict=True)
    ]
    want = np.array([_round_f32(e) for e in exact], dtype=np.float32).reshape(3, 3)
    _same(got, want)
    traced = mx.function(lambda x, y, z: mx.fma(x, y, z) * 2)(a, b, c)
    _same(traced, want * 2)


def _round_f32(x: Fraction) -> np.float32:
    """x rounded to nearest-even float32 (x is far from float32's limits)."""
    nearest = np.float32(float(x))  # float(x) is the nearest double
    below, above = (
        (np.nextafter(nearest, np.float32(-np.inf)), nearest)
        if Fraction(float(nearest)) > x
        else (nearest, np.nextafter(nearest, np.float32(np.inf)))
    )
    low, high = Fraction(float(below)), Fraction(float(above))
    if x - low != high - x:
        return below if x - low < high - x else above
    return below if int(below.view(np.uint32)) % 2 == 0 else above


# Products, transposes, elements --------------------------------------------------


@pytest.mark.parametrize("dtype", [*FLOATS, np.dtype(np.int32)], ids=lambda d: d.name)
def test_products_in_mx_order(dtype: np.dtype[Any]) -> None:
    rng = np.random.default_rng(6)
    a, b = _random(rng, (3, 5), dtype), _random(rng, (5, 4), dtype)
    x, y = _random(rng, (5,), dtype), _random(rng, (3,), dtype)
    products = mx.function(lambda a, b, x, y: (a @ b, a @ x, y @ a, a.T @ y, b.T @ a.T))
    want = (
        _in_order_matmul(a, b),
        _in_order_matmul(a, x[:, None])[:, 0],
        _in_order_matmul(a.T, y[:, None])[:, 0],
        _in_order_matmul(a.T, y[:, None])[:, 0],
        _in_order_matmul(b.T, a.T),
    )
    for g, w in zip(products(a, b, x, y), want, strict=True):
        _same(g, w)


def test_mixed_precision_product_widens_exactly() -> None:
    rng = np.random.default_rng(7)
    a16 = _random(rng, (4, 6), np.float16)
    b32 = _random(rng, (6, 3), np.float32)
    bb = _random(rng, (6, 3), BF16)
    got = mx.function(lambda a, b, c: (a @ b, a @ c))(a16, b32, bb)
    _same(got[0], _in_order_matmul(a16.astype(np.float32), b32))
    # float16 @ bfloat16 promotes to float32 (ml_dtypes' promotion), both exact
    _same(got[1], _in_order_matmul(a16.astype(np.float32), bb.astype(np.float32)))


def test_transposes_and_constant_indexing() -> None:
    rng = np.random.default_rng(8)
    a = _random(rng, (3, 5), np.float64)
    f = mx.function(
        lambda a: (a.T, mx.transpose(a), np.transpose(a), a[2, 4], a[-1, 0], a.T[4, 1])
    )
    for g, w in zip(f(a), (a.T, a.T, a.T, a[2, 4], a[-1, 0], a.T[4, 1]), strict=True):
        _same(g, w)


def test_constant_arrays_in_the_function() -> None:
    rng = np.random.default_rng(9)
    w = _random(rng, (4, 4), np.float32)
    a = _random(rng, (4, 4), np.float32)
    f = mx.function(lambda x: (x + w, w - x, np.add(x, x), np.multiply(w, x)))
    for g, want in zip(f(a), (a + w, w - a, a + a, w * a), strict=True):
        _same(g, want)


def test_batches_broadcast_as_for_jit_functions() -> None:
    rng = np.random.default_rng(10)
    a = _random(rng, (2, 3, 4, 4), np.float32)
    b = _random(rng, (3, 4, 4), np.float32)
    c = _random(rng, (4, 4), np.float32)
    got = mx.function(lambda a, b, c: a @ b + c)(a, b, c)
    _same(got, _in_order_matmul(a, np.broadcast_to(b, a.shape)) + c)


# Conversions ---------------------------------------------------------------------


@pytest.mark.parametrize(
    ("source", "target"),
    [
        (np.float32, np.float16),
        (np.float32, ml_dtypes.bfloat16),
        (np.float64, np.float32),
        (np.float16, np.float64),
        (np.int32, np.float32),
        (np.float32, np.int16),
        (np.int8, np.int64),
        (np.int64, np.int8),
    ],
    ids=str,
)
def test_astype_between_native_types(source: Any, target: Any) -> None:
    rng = np.random.default_rng(11)
    a = (rng.standard_normal((4, 5)) * 1000).astype(source)
    v = (rng.standard_normal(7) * 1000).astype(source)
    s = np.asarray(rng.standard_normal() * 1000).astype(source)[()]
    got = mx.function(lambda a, s: (a.astype(target), s.astype(target)))(a, s)
    for g, w in zip(got, (a.astype(target), s.astype(target)), strict=True):
        _same(g, w)
    convert = mx.function(lambda v: v.astype(target))
    if np.dtype(source).kind in "fV" and np.dtype(target).kind in "fV":
        _same(convert(v), v.astype(target))
    else:  # xDSL's casts between integers and floats take scalars only
        assert "of a vector of" in _error(lambda: convert(v))


SMALL_FLOATS = [
    ml_dtypes.float8_e4m3fn,
    ml_dtypes.float8_e5m2,
    ml_dtypes.float8_e4m3,
    ml_dtypes.float8_e3m4,
    ml_dtypes.float8_e4m3fnuz,
    ml_dtypes.float8_e5m2fnuz,
    ml_dtypes.float6_e2m3fn,
    ml_dtypes.float6_e3m2fn,
    ml_dtypes.float4_e2m1fn,
]


@pytest.mark.parametrize("small", SMALL_FLOATS, ids=lambda d: np.dtype(d).name)
def test_small_float_round_trip_matches_ml_dtypes(small: Any) -> None:
    """Encoding (nearest-even, within the format's range) and decoding of
    every code, as ml_dtypes does; FP4/FP6/FP8 arrays come back as
    ml_dtypes arrays."""
    rng = np.random.default_rng(12)
    largest = float(ml_dtypes.finfo(small).max)
    x = np.clip(rng.standard_normal((4, 8)) * largest / 3, -largest, largest).astype(
        np.float32
    )
    bits = ml_dtypes.finfo(small).bits
    all_codes = np.arange(1 << bits, dtype=np.uint8).view(small).reshape(1, -1)
    f = mx.function(
        lambda x, c: (x.astype(small), c.astype(np.float32), c.astype(np.float16))
    )
    encoded, decoded, decoded16 = f(x, all_codes)
    _same(encoded, x.astype(small))
    with np.errstate(over="ignore", invalid="ignore"):
        _same(decoded, all_codes.astype(np.float32))
        # ml_dtypes widens to float32 first; every code is exact there and
        # float32 -> float16 rounds once
        _same(decoded16, all_codes.astype(np.float32).astype(np.float16))


@pytest.mark.parametrize(
    "mode", ["nearest_even", "nearest_away", "toward_zero", "upward", "downward"]
)
def test_astype_rounding_and_saturation_keywords(mode: str) -> None:
    rng = np.random.default_rng(13)
    x = (rng.standard_normal((4, 16)) * 300).astype(np.float32)
    x[0, :4] = [1000.0, -1000.0, np.inf, np.nan]
    f = mx.function(
        lambda x: (
            x.astype(ml_dtypes.float8_e4m3fn, rounding=mode),
            x.astype(ml_dtypes.float8_e4m3fn, rounding=mode, saturate=True),
            x.astype(ml_dtypes.float4_e2m1fn, rounding=mode),
        )
    )
    plain, saturated, fp4 = f(x)
    for got, name, saturate in (
        (plain, "f8e4m3fn", False),
        (saturated, "f8e4m3fn", True),
        (fp4, "f4e2m1fn", False),
    ):
        want = ref.encode_array(name, x, mode, saturate)
        got_bits = got.view(np.uint8).astype(np.int64)
        for g, w, value in zip(got_bits.ravel(), want.ravel(), x.ravel(), strict=True):
            assert ref.same_result(name, int(g), int(w), bool(np.isnan(value))), (
                mode,
                name,
                value,
                g,
                w,
            )


# Block-scaled formats ------------------------------------------------------------


def _pack(codes: Array, bits: int) -> Array:
    """Codes (one per byte, row-major) as a little-endian bit stream per row."""
    rows, cols = codes.shape
    stream = np.zeros((rows, cols * bits), dtype=np.uint8)
    for b in range(bits):
        stream[:, b::bits] = (codes >> b) & 1
    return np.packbits(stream, axis=1, bitorder="little")


@pytest.mark.parametrize(
    ("fmt", "small"),
    [
        ("f4e2m1fn", ml_dtypes.float4_e2m1fn),
        ("f6e2m3fn", ml_dtypes.float6_e2m3fn),
        ("f8e4m3fn", ml_dtypes.float8_e4m3fn),
    ],
)
def test_quantize_and_dequantize_mx(fmt: str, small: Any) -> None:
    rng = np.random.default_rng(14)
    w = (rng.standard_normal((6, 64)) * np.exp2(rng.integers(-8, 8, (6, 1)))).astype(
        np.float32
    )
    w[1, :32] = 0.0
    codes, scales = mx.quantize_mx(w, fmt, block=32)
    want_codes, want_scales = scaled_ref.scaled_encode(
        fmt, w.ravel(), 32, "nearest_even", "floor"
    )
    want_codes = want_codes.reshape(6, 64).astype(np.uint8)
    bits = ml_dtypes.finfo(small).bits
    assert scales.dtype == np.dtype(ml_dtypes.float8_e8m0fnu)
    _same(scales.view(np.uint8), want_scales.reshape(6, 2).astype(np.uint8))
    if bits < 8:
        _same(codes, _pack(want_codes, bits))  # packed by default
    else:
        _same(codes.view(np.uint8), want_codes)
    unpacked, _ = (
        mx.quantize_mx(w, fmt, block=32, packed=False) if bits < 8 else (codes, scales)
    )
    assert unpacked.dtype == np.dtype(small)
    _same(unpacked.view(np.uint8), want_codes)
    # decoding: code value x 2^(scale - 127), exact in float64, rounded once
    values = want_codes.view(small).astype(np.float64) * np.exp2(
        np.repeat(want_scales.reshape(6, 2), 32, axis=1).astype(np.float64) - 127
    )
    for dtype in (np.float32, ml_dtypes.bfloat16):
        _same(
            mx.dequantize_mx(codes, scales, fmt, block=32, dtype=dtype),
            values.astype(dtype),
        )
        _same(
            mx.dequantize_mx(unpacked, scales, fmt, block=32, dtype=dtype),
            values.astype(dtype),
        )


def test_quantize_options_and_traced_round_trip() -> None:
    rng = np.random.default_rng(15)
    w = (rng.standard_normal((2, 32)) * 10).astype(np.float32)

    @mx.function
    def round_trip(w: Any) -> Any:
        q, s = mx.quantize_mx(
            w, "f4e2m1fn", block=16, rounding="toward_zero", scale_rule="ceil"
        )
        return mx.dequantize_mx(q, s, "f4e2m1fn", block=16), q

    decoded, packed = round_trip(w)
    codes, scales = scaled_ref.scaled_encode(
        "f4e2m1fn", w.ravel(), 16, "toward_zero", "ceil"
    )
    _same(packed, _pack(codes.reshape(2, 32).astype(np.uint8), 4))
    values = codes.astype(np.uint8).view(ml_dtypes.float4_e2m1fn).astype(np.float64)
    values *= np.exp2(np.repeat(scales.astype(np.float64) - 127, 16))
    _same(decoded, values.reshape(2, 32).astype(np.float32))


def test_dequantized_arguments_are_read_from_memory() -> None:
    """Codes and scales passed to mx.dequantize_mx are memref parameters read
    by row-major loads (packed for FP4), the form the decoded matvec kernel
    reads in place; such functions are not batched."""
    rng = np.random.default_rng(17)
    w = rng.standard_normal((32, 64)).astype(np.float32)
    x = rng.standard_normal(64).astype(np.float32)
    wq, s = mx.quantize_mx(w, "f4e2m1fn", block=32)

    @mx.function
    def decode(wq: Any, s: Any, x: Any) -> Any:
        return mx.dequantize_mx(wq, s, "f4e2m1fn", block=32) @ x

    text = decode.mlir(wq, s, x)
    assert "(%wq: memref<1024xi8>, %s: memref<64xi8>, %x: vector<64xf32>)" in text, text
    assert (
        "matrix.row_major_load %wq[0] packed : memref<1024xi8> -> !matrix.matrix<32x64xi4>"
        in text
    )
    assert (
        "matrix.row_major_load %s[0] : memref<64xi8> -> !matrix.matrix<32x2xi8>" in text
    )
    decoded = mx.dequantize_mx(wq, s, "f4e2m1fn", block=32)
    _same(decode(wq, s, x), _in_order_matmul(decoded, x[:, None])[:, 0])
    message = _error(lambda: decode(np.stack([wq, wq]), s, x))
    assert "is not batched; got an argument of shape (2, 32, 32)" in message
    # scales used as a matrix before: they stay a matrix parameter
    both = mx.function(
        lambda q, s: (
            s.astype(np.float32),
            mx.dequantize_mx(q, s, "f4e2m1fn", block=32),
        )
    )
    assert "%s: !matrix.matrix<32x2xi8>" in both.mlir(wq, s)
    _same(both(wq, s)[1], decoded)


def test_import_mx_does_not_import_the_tracer() -> None:
    """`import mx` stays cheap: mx.function and the others import mx.tracing
    (and with it the JIT) on first use."""
    check = (
        "import sys, mx\n"
        "assert 'mx.tracing' not in sys.modules and 'mx.jit' not in sys.modules\n"
        "assert callable(mx.function) and 'mx.tracing' in sys.modules\n"
    )
    subprocess.run([sys.executable, "-c", check], check=True)


# Tracing and the cache -------------------------------------------------------------


def test_traced_once_per_signature() -> None:
    traces: list[tuple[int, ...]] = []

    @mx.function
    def f(a: Any, b: Any) -> Any:
        traces.append(a.shape)
        return a @ b

    a = np.ones((4, 4), np.float32)
    for args in (
        (a, a),
        (np.asfortranarray(a), a),
        (np.ones((5, 4, 4), np.float32), a),
        (a, a),
    ):
        f(*args)
    assert traces == [(4, 4)]
    f(np.ones((2, 4), np.float32), a)  # a new core shape
    f(a.astype(np.float64), a.astype(np.float64))  # a new dtype
    assert traces == [(4, 4), (2, 4), (4, 4)]
    f.mlir(a, a)  # the module of a known signature: no new trace
    assert len(traces) == 3


def test_repeated_calls_check_the_signature() -> None:
    """The shortcut for a repeated call never runs another signature's code:
    a NumPy float64 (strong) after a Python float (weak), an int after a
    float, another dtype or shape, a batch."""
    scale = mx.function(lambda x, s: x * s)
    a = np.full((2, 2), 3, np.float32)
    _same(scale(a, 0.5), a * 0.5)
    _same(scale(a, 0.5), a * 0.5)
    assert "dtype mismatch in '*': float32 and float64" in _error(
        lambda: scale(a, np.float64(0.5))
    )
    _same(scale(a, 2), a * 2)
    # NumPy float64 scalars (a subclass of float) are strong in the body too
    constant = mx.function(lambda x: x * np.float64(0.5))  # the constant
    assert "dtype mismatch in '*': float32 and float64" in _error(lambda: constant(a))
    _same(scale(a.astype(np.float64), 0.5), a.astype(np.float64) * 0.5)
    _same(scale(np.stack([a, a]), 0.5), np.stack([a, a]) * 0.5)
    _same(scale(a[:1], 0.5), a[:1] * 0.5)
    with pytest.raises(mx.MXError, match="argument #1 is a 'list'"):
        scale(a, [0.5])
    _same(scale(a, 0.25), a * 0.25)


NATIVE_DTYPES = [
    *FLOATS,
    *(np.dtype(f"int{w}") for w in (8, 16, 32, 64)),
]


@pytest.mark.parametrize("dtype", NATIVE_DTYPES, ids=lambda d: d.name)
def test_numpy_scalars_are_strong(dtype: np.dtype[Any]) -> None:
    """A NumPy scalar (argument or constant) keeps its dtype, whatever
    Python type its class derives from (numpy.float64 is a float)."""
    one = dtype.type(1)
    other = np.dtype(np.float32 if dtype != np.float32 else np.float64)
    a = np.full((2, 2), 3, dtype)
    same = mx.function(lambda x, s: (x * s, x * one))
    for got in same(a, one):
        _same(got, a * one)
    mismatch = f"dtype mismatch in '*': {other.name} and {dtype.name}"
    assert mismatch in _error(
        lambda: mx.function(lambda x, s: x * s)(a.astype(other), one)
    )
    assert mismatch in _error(lambda: mx.function(lambda x: x * one)(a.astype(other)))


def test_mlir_is_the_obvious_program() -> None:
    m = np.zeros((4, 4), np.float32)
    text = mx.function(lambda a, b, c: a @ b.T + c).mlir(m, m, m)
    ops = [
        line.split("=")[-1].split()[0] for line in text.splitlines() if " = " in line
    ]
    assert ops == ["matrix.transpose", "matrix.matmul", "matrix.add"], text
    located = mx.function(lambda a: -a).mlir(m, debuginfo=True)
    assert f'loc("{__file__}":{_line() - 1}:' in located


# Errors at the user's line ---------------------------------------------------------


def _error(call: Callable[[], object]) -> str:
    with pytest.raises(mx.MXError) as info:
        call()
    return str(info.value)


def test_shape_and_dtype_mismatches_name_the_python_line() -> None:
    a, b = np.ones((4, 4), np.float32), np.ones((4, 3), np.float32)

    def shapes(x: Any, y: Any) -> Any:
        s = x * 2
        return s + y  # the offending line

    message = _error(lambda: mx.function(shapes)(a, b))
    assert message.startswith(
        f"{__file__}:{_line_of('# the offending line')}:16: error: shape mismatch in '+': (4, 4) and (4, 3)"
    )
    assert "return s + y  # the offending line" in message
    product = mx.function(lambda x, y: x @ y)  # the product
    message = _error(lambda: product(b, b))
    assert message.startswith(f"{__file__}:{_line_of('# the product')}:"), message
    assert "inner dimensions of '@' do not agree: (4, 3) @ (4, 3)" in message
    difference = mx.function(lambda x, y: x - y)  # the difference
    message = _error(lambda: difference(a, a.astype(np.float16)))
    assert message.startswith(f"{__file__}:{_line_of('# the difference')}:"), message
    assert "dtype mismatch in '-': float32 and float16" in message


@pytest.mark.parametrize(
    ("fn", "expected"),
    [
        (lambda a: np.exp(a), "numpy.exp is not supported"),
        (lambda a: a.sum(), "'.sum' is not supported"),
        (lambda a: a**2, "'**' is not supported"),
        (lambda a: a < 2, "'<' is not supported"),
        (lambda a: a == a, "'==' is not supported"),
        (lambda a: a[0], "indexing a matrix with 0"),
        (lambda a: a[:, 1], "indexing a matrix with"),
        (lambda a: a[4, 0], "index 4 is out of bounds for a dimension of size 4"),
        (lambda a: 1 if a else 0, "truth value"),
        (lambda a: a.astype(np.int32) / 2, "'/' on int32 values"),
        (
            lambda a: a.astype(ml_dtypes.float8_e4m3fn) * 2,
            "'*' on float8_e4m3fn values",
        ),
        (
            lambda a: a.astype(np.float16, saturate=True),
            "rounding= and saturate= apply",
        ),
        (
            lambda a: a.astype(ml_dtypes.float8_e4m3fn, rounding="sideways"),
            "unknown rounding mode 'sideways'",
        ),
        (
            lambda a: mx.quantize_mx(a, "f4e2m1fn", block=3),
            "block 3 does not divide the 4 columns",
        ),
        (lambda a: mx.quantize_mx(a, "f9", block=2), "unknown element format 'f9'"),
        (lambda a: a.astype(np.int32) + 0.5, "the Python float 0.5 meets int32 values"),
        (
            lambda a: a.astype(np.int8) + 300,
            "the Python integer 300 is out of bounds for int8",
        ),
        (lambda a: 3.0, "returns a 'float'"),
    ],
)
def test_unsupported_operations_are_named(
    fn: Callable[[Any], Any], expected: str
) -> None:
    message = _error(lambda: mx.function(fn)(np.ones((4, 4), np.float32)))
    assert message.startswith(f"{__file__}:"), message
    assert expected in message, message


def test_packed_rows_fill_whole_bytes() -> None:
    x = np.ones((3, 2), np.float32)
    message = _error(lambda: mx.quantize_mx(x, "f6e2m3fn", block=2))
    assert "a row of 2 packed 6-bit codes does not fill whole bytes" in message
    codes, _ = mx.quantize_mx(x, "f6e2m3fn", block=2, packed=False)
    assert codes.shape == (3, 2) and codes.dtype == np.dtype(ml_dtypes.float6_e2m3fn)


def test_bad_arguments() -> None:
    f = mx.function(lambda a: a)
    assert "argument #0 is a 'str'" in _error(lambda: f("x"))
    assert "argument #0 is a bool" in _error(lambda: f(True))
    assert "dtype uint16, which mx does not support" in _error(
        lambda: f(np.ones((2, 2), np.uint16))
    )
    assert "empty shape" in _error(lambda: f(np.ones((0, 2), np.float32)))


def test_call_errors_point_at_the_call() -> None:
    """An argument error of the compiled function (batch shapes that do not
    broadcast) is an ArgumentError at the Python call, not at the traced
    module's text."""
    f = mx.function(lambda a, b: a @ b)
    a, b = np.ones((3, 4, 4), np.float32), np.ones((5, 4, 4), np.float32)
    with pytest.raises(ArgumentError) as info:
        f(a, b)  # the call
    message = str(info.value)
    assert message.startswith(
        f"{__file__}:{_line_of('# the call')}:9: error: @lambda: "
    ), message
    assert (
        "the batch shapes of the arguments (3, 4, 4), (5, 4, 4) do not broadcast"
        in message
    )


def test_compile_errors_point_at_python_lines() -> None:
    """Errors of the compiler stay CompileErrors; a diagnostic located at a
    line of the traced module's text is moved to the Python line of the op
    written there."""
    f = mx.function(lambda a: a + a, pipeline="no-such-pass")
    with pytest.raises(CompileError, match="unknown pass 'no-such-pass'"):
        f(np.ones((2, 2), np.float32))
    m = np.ones((2, 2), np.float32)
    g = mx.function(lambda a: a * a)
    line = _line() - 1
    text = g.mlir(m)
    at = 1 + next(i for i, t in enumerate(text.splitlines()) if "matrix.mul" in t)
    error = CompileError(
        [f"<string>:{at}:5: error: 'matrix.mul' op refused\n<the line>\n    ^"]
    )
    (moved,) = python_located(error, g.trace(m).module)
    assert moved.startswith(f"{__file__}:{line}:31: error: 'matrix.mul' op refused"), (
        moved
    )


# Random expression trees -------------------------------------------------------------

_SIZE = 3


Tree = tuple[Any, ...]
"""(leaf,) with a leaf "a", "b", "c" or "lit", or (op, subtree, ...)."""


def _expressions(depth: int) -> st.SearchStrategy[Tree]:
    leaves: st.SearchStrategy[Tree] = st.sampled_from(
        [("a",), ("b",), ("c",), ("lit",)]
    )
    if depth == 0:
        return leaves
    sub = _expressions(depth - 1)
    return st.one_of(
        leaves,
        st.tuples(st.sampled_from(["+", "-", "*", "@"]), sub, sub),
        st.tuples(st.sampled_from(["neg", "T"]), sub),
        st.tuples(st.just("fma"), sub, sub, sub),
    )


_BINARY: dict[str, Callable[[Any, Any], Any]] = {
    "+": operator.add,
    "-": operator.sub,
    "*": operator.mul,
    "@": operator.matmul,
}


def _evaluate(
    tree: tuple[Any, ...], env: dict[str, Any], lit: Callable[[], Any]
) -> Any:
    """The tree's value with `env`'s leaves and functions; `lit()` gives the
    next literal."""
    match tree:
        case ("lit",):
            return lit()
        case (name,):
            return env[name]
        case ("neg", x):
            return -_evaluate(x, env, lit)
        case ("T", x):
            return _evaluate(x, env, lit).T
        case ("fma", x, y, z):
            args = [_evaluate(t, env, lit) for t in (x, y, z)]
            return env["fma"](*args)
        case (op, x, y):
            lhs, rhs = _evaluate(x, env, lit), _evaluate(y, env, lit)
            return _BINARY[op](lhs, rhs)
        case _:
            raise AssertionError(tree)


def _has_matrix(tree: tuple[Any, ...]) -> bool:
    return tree[0] in ("a", "b", "c") or any(
        isinstance(t, tuple) and _has_matrix(t) for t in tree[1:]
    )


def _well_formed(tree: tuple[Any, ...]) -> bool:
    """'@', '.T' and mx.fma on matrices only (Python numbers have no '@' or
    '.T'; NumPy has no fma to compare scalars with)."""
    if tree[0] in ("fma", "@", "T") and not all(_has_matrix(t) for t in tree[1:]):
        return False
    return all(_well_formed(t) for t in tree[1:])


def _numpy_fma(x: Array, y: Array, z: Array) -> Array:
    """float32 fma through float64: the f32 product is exact in f64, and the
    sum rounded to f64 then f32 rounds as once except in double-rounding
    ties, which the property test's small integers never produce."""
    return (x.astype(np.float64) * y + z).astype(np.float32)


@settings(
    max_examples=int(os.environ.get("MX_TRACING_EXAMPLES", "12")),
    deadline=None,
)
@given(_expressions(3).filter(lambda t: _has_matrix(t) and _well_formed(t)))
def test_random_expression_trees_match_numpy(tree: tuple[Any, ...]) -> None:
    """Random trees of + - * @, unary -, .T, mx.fma and literals over float32
    matrices of small integers (every result exact below 2^24, so any
    correct evaluation order agrees bit for bit with NumPy's)."""
    rng = np.random.default_rng(16)
    env = {k: rng.integers(-3, 4, (_SIZE, _SIZE)).astype(np.float32) for k in "abc"}
    numbers = iter([2.0, -1.0, 3.0, 0.5] * 50)
    want = _evaluate(
        tree, {**env, "fma": _numpy_fma}, lambda: np.float32(next(numbers))
    )
    if not np.all(np.abs(want) < 2**20):
        return  # too large to be exact in every order: nothing to compare
    literals = iter([2.0, -1.0, 3.0, 0.5] * 50)

    def traced(a: Any, b: Any, c: Any) -> Any:
        return _evaluate(
            tree, {"a": a, "b": b, "c": c, "fma": mx.fma}, lambda: next(literals)
        )

    got = mx.function(traced)(env["a"], env["b"], env["c"])
    _same(got, np.asarray(want, dtype=np.float32))

"""JIT tests: standard-dialect kernels compiled by mx.jit against NumPy,
ml_dtypes and exact `Fraction` arithmetic (bit-exact for f16/bf16)."""

from collections.abc import Callable
from fractions import Fraction

import ml_dtypes
import numpy as np
import pytest

from mx.jit import compile_module

BF16 = ml_dtypes.bfloat16


def _unary_kernel(op: str, src: str, dst: str) -> str:
    return f"""
    func.func @k(%a: memref<?x{src}>, %b: memref<?x{dst}>, %n: index) {{
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      scf.for %i = %c0 to %n step %c1 {{
        %x = memref.load %a[%i] : memref<?x{src}>
        %y = {op} %x : {src} to {dst}
        memref.store %y, %b[%i] : memref<?x{dst}>
      }}
      func.return
    }}"""


def _binary_kernel(op: str, t: str) -> str:
    return f"""
    func.func @k(%a: memref<?x{t}>, %b: memref<?x{t}>, %c: memref<?x{t}>, %n: index) {{
      affine.for %i = 0 to %n {{
        %x = affine.load %a[%i] : memref<?x{t}>
        %y = affine.load %b[%i] : memref<?x{t}>
        %z = {op} %x, %y : {t}
        affine.store %z, %c[%i] : memref<?x{t}>
      }}
      func.return
    }}"""


def _bits(a: np.ndarray) -> np.ndarray:
    return a.view(np.uint16 if a.itemsize == 2 else np.uint32)


def _round_exact(value: Fraction, dtype: type) -> np.generic:
    """Correct rounding (nearest, ties to even) of an exact rational."""
    info = ml_dtypes.finfo(dtype)
    largest = Fraction(float(info.max))
    half_ulp = (largest - Fraction(float(np.nextafter(dtype(info.max), dtype(0))))) / 2
    if abs(value) >= largest + half_ulp:
        return dtype(np.inf if value > 0 else -np.inf)
    guess = dtype(float(value))
    candidates = [
        guess,
        np.nextafter(guess, dtype(np.inf)),
        np.nextafter(guess, dtype(-np.inf)),
    ]
    candidates = [c for c in candidates if np.isfinite(c)]

    def key(c: np.generic) -> tuple[Fraction, int]:
        return abs(Fraction(float(c)) - value), int(np.array(c).view(np.uint16)) & 1

    best: np.generic = min(candidates, key=key)
    if best == 0 and value < 0:
        return dtype(-0.0)
    return best


def _random_f32(rng: np.random.Generator, count: int) -> np.ndarray:
    bits = rng.integers(0, 2**32, size=count, dtype=np.uint64).astype(np.uint32)
    specials = np.array(
        [0, 0x80000000, 0x7F800000, 0xFF800000, 0x7FC00000, 0x7F800001, 0x00000001,
         0x007FFFFF, 0x00800000, 0x7F7FFFFF, 0x3F808000, 0x3F818000, 0x3F80FFFF,
         0x7F7F8000, 0x0000FFFF, 0x00008000],
        dtype=np.uint32,
    )  # fmt: skip
    return np.concatenate([specials, bits]).view(np.float32)


def test_truncf_f32_to_bf16_matches_ml_dtypes(rng: np.random.Generator) -> None:
    m = compile_module(_unary_kernel("arith.truncf", "f32", "bf16"))
    x = _random_f32(rng, 1 << 18)
    out = np.zeros(x.size, BF16)
    m.k(x, out, x.size)
    expected = x.astype(BF16)
    nan = np.isnan(x)
    assert np.array_equal(_bits(out)[~nan], _bits(expected)[~nan])
    assert np.isnan(out[nan].astype(np.float32)).all()
    assert (_bits(out)[nan] & 0x40).all(), "NaNs must be quiet"


def test_extf_bf16_exhaustive() -> None:
    m = compile_module(_unary_kernel("arith.extf", "bf16", "f32"))
    x = np.arange(1 << 16, dtype=np.uint16).view(BF16)
    out = np.zeros(x.size, np.float32)
    m.k(x, out, x.size)
    assert np.array_equal(_bits(out), _bits(x.astype(np.float32)))


@pytest.mark.parametrize("target", ["f16", "bf16"])
def test_truncf_f64_single_rounding(target: str, rng: np.random.Generator) -> None:
    dtype = np.float16 if target == "f16" else BF16
    m = compile_module(_unary_kernel("arith.truncf", "f64", target))
    # Values just off the midpoints between neighbours: double rounding
    # through f32 gets these wrong.
    base = rng.standard_normal(3000) * 100
    narrow = base.astype(dtype)
    up = np.nextafter(narrow, dtype(np.inf))
    mid = (narrow.astype(np.float64) + up.astype(np.float64)) / 2
    x = np.concatenate(
        [base, np.nextafter(mid, np.inf), np.nextafter(mid, -np.inf), mid]
    )
    out = np.zeros(x.size, dtype)
    m.k(x, out, x.size)
    expected = np.array([_round_exact(Fraction(float(v)), dtype) for v in x], dtype)
    assert np.array_equal(_bits(out), _bits(expected))


@pytest.mark.parametrize("op", ["arith.addf", "arith.subf", "arith.mulf", "arith.divf"])
@pytest.mark.parametrize("t", ["f16", "bf16"])
def test_narrow_float_arithmetic_bit_exact(
    op: str, t: str, rng: np.random.Generator
) -> None:
    dtype = np.float16 if t == "f16" else BF16
    m = compile_module(_binary_kernel(op, t))
    n = 1 << 14
    a = rng.integers(0, 1 << 16, n, dtype=np.uint16).view(dtype)
    b = rng.integers(0, 1 << 16, n, dtype=np.uint16).view(dtype)
    c = np.zeros(n, dtype)
    m.k(a, b, c, n)
    reference = {
        "arith.addf": np.add, "arith.subf": np.subtract,
        "arith.mulf": np.multiply, "arith.divf": np.divide,
    }[op]  # fmt: skip
    with np.errstate(all="ignore"):
        expected = reference(a.astype(np.float64), b.astype(np.float64))
    exact = np.array(
        [
            # Exact zeros keep their IEEE sign, which a Fraction cannot carry.
            _round_exact(Fraction(float(v)), dtype)
            if np.isfinite(v) and v != 0
            else dtype(v)
            for v in expected
        ],
        dtype,
    )
    nan = np.isnan(exact.astype(np.float32))
    assert np.isnan(c[nan].astype(np.float32)).all()
    assert np.array_equal(_bits(c)[~nan], _bits(exact)[~nan])


@pytest.mark.parametrize("t", ["f16", "bf16"])
def test_fma_single_rounding(t: str, rng: np.random.Generator) -> None:
    dtype = np.float16 if t == "f16" else BF16
    m = compile_module(
        f"""
        func.func @k(%a: memref<?x{t}>, %b: memref<?x{t}>, %c: memref<?x{t}>, %n: index) {{
          affine.for %i = 0 to %n {{
            %x = affine.load %a[%i] : memref<?x{t}>
            %y = affine.load %b[%i] : memref<?x{t}>
            %z = affine.load %c[%i] : memref<?x{t}>
            %r = math.fma %x, %y, %z : {t}
            affine.store %r, %c[%i] : memref<?x{t}>
          }}
          func.return
        }}"""
    )
    n = 2000
    a = (rng.standard_normal(n) * 4).astype(dtype)
    b = (rng.standard_normal(n) * 4).astype(dtype)
    c = (rng.standard_normal(n) * 4).astype(dtype)
    # Hard cases: (1 + odd * 2**-7) * 3 is a bf16 midpoint (and, scaled, an f16
    # one), so a tiny addend far below f64's precision alone decides the rounding.
    k = 2 * rng.integers(0, 64, 200) + 1
    scale = 2.0 ** rng.integers(-4, 4, 200)
    tiny_exponent = -60 if t == "bf16" else -24
    hard_a = ((1 + k * 2.0**-7) * scale).astype(dtype)
    hard_b = np.full(200, 3, dtype)
    sign = np.where(np.arange(200) % 2 == 0, 1.0, -1.0)
    hard_c = (sign * 2.0**tiny_exponent).astype(dtype)
    a, b, c = (np.concatenate(p) for p in ((a, hard_a), (b, hard_b), (c, hard_c)))
    n = a.size
    expected = np.array(
        [
            _round_exact(
                Fraction(float(x)) * Fraction(float(y)) + Fraction(float(z)), dtype
            )
            for x, y, z in zip(a, b, c, strict=False)
        ],
        dtype,
    )
    out = c.copy()
    m.k(a, b, out, n)
    assert np.array_equal(_bits(out), _bits(expected))


def test_sitofp_i64_to_bf16_single_rounding(rng: np.random.Generator) -> None:
    m = compile_module(_unary_kernel("arith.sitofp", "i64", "bf16"))
    x = np.concatenate([
        rng.integers(-(2**63), 2**63 - 1, 3000, dtype=np.int64),
        np.array([2**30 + 2**22 + 1, -(2**30 + 2**22 + 1), 2**62 + 2**54 + 1, 0, -1, 2**63 - 1, -(2**63)], np.int64),
    ])  # fmt: skip
    out = np.zeros(x.size, BF16)
    m.k(x, out, x.size)
    expected = np.array([_round_exact(Fraction(int(v)), BF16) for v in x], BF16)
    assert np.array_equal(_bits(out), _bits(expected))


def _trunc_div(a: int, b: int) -> int:
    return abs(a) // abs(b) * (1 if (a < 0) == (b < 0) else -1)


def _trunc_rem(a: int, b: int) -> int:
    return a - b * _trunc_div(a, b)


def _floor_div(a: int, b: int) -> int:
    return a // b


def _ceil_div(a: int, b: int) -> int:
    return -(-a // b)


INT_DIV = """
func.func @k(%a: i32, %b: i32) -> i32 {
  %r = OP %a, %b : i32
  func.return %r : i32
}"""


@pytest.mark.parametrize(
    ("op", "reference"),
    [
        ("arith.divsi", _trunc_div),
        ("arith.remsi", _trunc_rem),
        ("arith.floordivsi", _floor_div),
        ("arith.ceildivsi", _ceil_div),
    ],
)
def test_integer_division(op: str, reference: Callable[[int, int], int]) -> None:
    k = compile_module(INT_DIV.replace("OP", op)).k
    for a in [-7, -6, -1, 0, 1, 6, 7, 2**31 - 1, -(2**31) + 1]:
        for b in [-3, -2, -1, 1, 2, 3, 7]:
            assert k(a, b) == reference(a, b), (op, a, b)


def test_scalar_types_and_casts() -> None:
    m = compile_module(
        """
        func.func @widen(%a: i8, %b: i16) -> i64 {
          %x = arith.extsi %a : i8 to i64
          %y = arith.extui %b : i16 to i64
          %r = arith.addi %x, %y : i64
          func.return %r : i64
        }
        func.func @tofloat(%a: i32) -> f64 {
          %f = arith.sitofp %a : i32 to f64
          func.return %f : f64
        }
        func.func @toint(%a: f32) -> i32 {
          %i = arith.fptosi %a : f32 to i32
          func.return %i : i32
        }
        func.func @idx(%n: index) -> index {
          %c = arith.constant 3 : index
          %r = arith.muli %n, %c : index
          func.return %r : index
        }
        func.func @pick(%c: i1, %a: f16, %b: f16) -> f16 {
          %r = arith.select %c, %a, %b : f16
          func.return %r : f16
        }
        func.func @mx(%a: f32, %b: f32) -> f32 {
          %r = arith.maximumf %a, %b : f32
          func.return %r : f32
        }
        """
    )
    assert m.widen(-3, 0xFFFF) == -3 + 0xFFFF
    assert m.tofloat(-(2**31)) == float(-(2**31))
    assert m.toint(np.float32(-7.9)) == -7
    assert m.idx(-5) == -15
    assert m.pick(True, np.float16(1.5), np.float16(2.5)) == np.float16(1.5)
    assert m.pick(False, np.float16(1.5), np.float16(2.5)) == np.float16(2.5)
    assert np.isnan(m.mx(np.float32("nan"), np.float32(1)))
    assert np.signbit(m.mx(np.float32(-0.0), np.float32(0.0))) == False  # noqa: E712
    assert m.mx(np.float32(-2), np.float32(3)) == 3


def test_vectors() -> None:
    m = compile_module(
        """
        func.func @axpy(%a: f32, %x: vector<4xf32>, %y: vector<4xf32>) -> vector<4xf32> {
          %s = vector.broadcast %a : f32 to vector<4xf32>
          %r = vector.fma %s, %x, %y : vector<4xf32>
          func.return %r : vector<4xf32>
        }
        func.func @lane(%v: vector<4xf32>, %m: memref<8xf32>) -> f32 {
          %c2 = arith.constant 2 : index
          %w = vector.load %m[%c2] : memref<8xf32>, vector<4xf32>
          %s = arith.addf %v, %w : vector<4xf32>
          %e = vector.extract %s[1] : f32 from vector<4xf32>
          func.return %e : f32
        }
        """
    )
    x = np.array([1, 2, 3, 4], np.float32)
    y = np.array([10, 20, 30, 40], np.float32)
    assert np.array_equal(m.axpy(np.float32(2), x, y), 2 * x + y)
    buffer = np.arange(8, dtype=np.float32)
    assert m.lane(x, buffer) == x[1] + buffer[3]


MATMUL_4X4 = """
func.func @mm(%a: memref<4x4xf32>, %b: memref<4x4xf32>, %c: memref<4x4xf32>) {
  affine.for %i = 0 to 4 {
    affine.for %j = 0 to 4 {
      %z = arith.constant 0.0 : f32
      %acc = affine.for %k = 0 to 4 iter_args(%s = %z) -> (f32) {
        %x = affine.load %a[%i, %k] : memref<4x4xf32>
        %y = affine.load %b[%k, %j] : memref<4x4xf32>
        %p = arith.mulf %x, %y : f32
        %t = arith.addf %s, %p : f32
        affine.yield %t : f32
      }
      affine.store %acc, %c[%i, %j] : memref<4x4xf32>
    }
  }
  func.return
}
"""


def test_matmul_4x4_is_correct_and_cached(rng: np.random.Generator) -> None:
    m = compile_module(MATMUL_4X4 + "// fresh\n")
    a = rng.standard_normal((4, 4)).astype(np.float32)
    b = rng.standard_normal((4, 4)).astype(np.float32)
    c = np.zeros((4, 4), np.float32)
    m.mm(a, b, c)
    assert np.allclose(c, a @ b, rtol=1e-5)
    assert compile_module(MATMUL_4X4 + "// fresh\n") is m, "compiled modules are cached"


def test_argument_errors() -> None:
    m = compile_module(MATMUL_4X4)
    good = np.zeros((4, 4), np.float32)
    with pytest.raises(TypeError, match="dtype"):
        m.mm(good, good, np.zeros((4, 4), np.float64))
    with pytest.raises(ValueError, match="16 elements"):
        m.mm(good, good, np.zeros(8, np.float32))
    with pytest.raises(ValueError, match="contiguous"):
        m.mm(good, good, np.zeros((4, 8), np.float32)[:, ::2])
    with pytest.raises(TypeError, match="3 arguments"):
        m.mm(good)
    k = compile_module(INT_DIV.replace("OP", "arith.addi")).k
    with pytest.raises(ValueError, match="does not fit"):
        k(2**32, 1)
    with pytest.raises(TypeError, match="int16"):
        k(np.int16(1), 1)

"""The matrix interpreter (mx.interpreters) against independent references.

Every op runs as MLIR text through `run_function`. References are computed
here with Python integers, `fractions.Fraction` (exact) and a rounding to the
element type by nearest-neighbour search over bit patterns, which shares no
code or algorithm with `mx.semantics.matrix`. Matmul is checked against an
explicit loop in docs/matrix-dialect.md's order, rounding every step.

`MX_LONG_TESTS=1` multiplies the hypothesis example counts by 20.
"""

from __future__ import annotations

import math
import zlib
from collections.abc import Callable, Sequence
from fractions import Fraction
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from xdsl.dialects.builtin import ModuleOp
from xdsl.parser import Parser

from mx.frontend import mx_context
from mx.interpreters import UndefinedBehaviorError, run_function
from mx.interpreters import vector as vector_interpreter
from tests.reference.element_types import ELEMENT_DTYPES
from tests.sampling import LONG

DTYPES = ELEMENT_DTYPES
FLOATS = ["f16", "bf16", "f32", "f64"]
INTS = ["i8", "i16", "i32", "i64"]
SHAPES = [(1, 1), (1, 5), (5, 1), (2, 3), (4, 4), (3, 7)]

# Bit pattern of the largest finite value, and the unsigned view dtype.
MAX_FINITE_BITS = {"f16": 0x7BFF, "bf16": 0x7F7F, "f32": 0x7F7FFFFF}
MAX_FINITE_BITS["f64"] = 0x7FEFFFFFFFFFFFFF
UNSIGNED = {2: np.uint16, 4: np.uint32, 8: np.uint64}


def stable_seed(*parts: object) -> int:
    """A seed from the test's parameters, the same in every run (unlike
    `hash`, which `PYTHONHASHSEED` changes)."""
    return zlib.crc32(repr(parts).encode())


def examples(n: int) -> int:
    return n * 20 if LONG else n


# ---------------------------------------------------------------------------
# Running IR
# ---------------------------------------------------------------------------


CTX = mx_context()


def parse(text: str) -> ModuleOp:
    module = Parser(CTX, text).parse_module()
    module.verify()
    return module


def mt(shape: tuple[int, int], t: str) -> str:
    return f"!matrix.matrix<{shape[0]}x{shape[1]}x{t}>"


def run_body(body: str, arg_types: Sequence[str], result_type: str, *args: Any) -> Any:
    """Run `body` (which defines %r) in a function of the given argument types."""
    params = ", ".join(f"%a{i}: {t}" for i, t in enumerate(arg_types))
    text = (
        f"func.func @f({params}) -> {result_type} {{\n{body}\n"
        f"  func.return %r : {result_type}\n}}\n"
    )
    (result,) = run_function(parse(text), "f", *args)
    return result


# ---------------------------------------------------------------------------
# Independent references
# ---------------------------------------------------------------------------


def bits_of(x: Any, t: str) -> int:
    dtype = DTYPES[t]
    return int(np.array(x, dtype=dtype).view(UNSIGNED[dtype.itemsize])[()])


def from_bits(bits: int, t: str) -> float:
    dtype = DTYPES[t]
    array = np.array(bits, dtype=UNSIGNED[dtype.itemsize]).view(dtype)
    return float(array.astype(np.float64)[()])


def ref_round(x: Fraction, t: str) -> float:
    """x rounded to nearest-even in type t: the closest of the candidates
    around a first approximation, by exact comparison; overflow gives inf."""
    if x == 0:
        return 0.0
    sign = -1.0 if x < 0 else 1.0
    magnitude = abs(x)
    max_bits = MAX_FINITE_BITS[t]
    largest = Fraction(from_bits(max_bits, t))
    half_ulp = (largest - Fraction(from_bits(max_bits - 1, t))) / 2
    if magnitude >= largest + half_ulp:
        return sign * math.inf
    approx = bits_of(min(float(magnitude), float(largest)), t)
    candidates = [b for b in (approx - 1, approx, approx + 1) if 0 <= b <= max_bits]
    best = min(
        candidates,
        key=lambda b: (abs(Fraction(from_bits(b, t)) - magnitude), b % 2),
    )
    return sign * from_bits(best, t)


def wrap(value: int, t: str) -> int:
    bits = DTYPES[t].itemsize * 8
    value %= 1 << bits
    return value - (1 << bits) if value >= 1 << (bits - 1) else value


def c_div(a: int, b: int) -> int:
    q = abs(a) // abs(b)
    return q if (a < 0) == (b < 0) else -q


def same(actual: Any, expected: Sequence[Any] | Any, t: str) -> None:
    """Bitwise equality of two arrays of type t (NaNs compare by NaN-ness)."""
    actual = np.asarray(actual)
    expected = np.asarray(expected, dtype=np.float64 if t in FLOATS else object)
    assert actual.dtype == DTYPES[t]
    assert actual.shape == expected.shape
    for got, want in zip(actual.reshape(-1), expected.reshape(-1), strict=True):
        if t in FLOATS and math.isnan(want):
            assert math.isnan(float(got))
        elif t in FLOATS:
            assert bits_of(got, t) == bits_of(want, t), (float(got), want)
        else:
            assert int(got) == want


def random_matrix(
    rng: np.random.Generator, shape: tuple[int, ...], t: str, small: bool = False
) -> np.ndarray[Any, Any]:
    if t in FLOATS:
        scale = rng.choice([1e-3, 1.0, 100.0]) if not small else 1.0
        values = rng.standard_normal(shape) * scale
        return values.astype(np.float32).astype(DTYPES[t])
    info = np.iinfo(DTYPES[t])
    low, high = (-10, 10) if small else (int(info.min), int(info.max))
    return rng.integers(low, high, size=shape, endpoint=True, dtype=DTYPES[t])


def exact(x: Any) -> Fraction:
    return Fraction(float(x))


# ---------------------------------------------------------------------------
# Elementwise ops
# ---------------------------------------------------------------------------

FLOAT_OPS: dict[str, Callable[[Fraction, Fraction], Fraction]] = {
    "add": lambda a, b: a + b,
    "sub": lambda a, b: a - b,
    "mul": lambda a, b: a * b,
    "div": lambda a, b: a / b,
}
INT_OPS: dict[str, Callable[[int, int], int]] = {
    "add": lambda a, b: a + b,
    "sub": lambda a, b: a - b,
    "mul": lambda a, b: a * b,
    "div": c_div,
}


PYTHON_FLOAT_OPS: dict[str, Callable[[float, float], float]] = {
    "add": lambda a, b: a + b,
    "sub": lambda a, b: a - b,
    "mul": lambda a, b: a * b,
    "div": lambda a, b: a / b,
}


def ref_float_op(op: str, x: Any, y: Any, t: str) -> float:
    """x op y rounded once to t. Infinities, NaNs and an exact zero's sign do
    not depend on rounding: Python's f64 arithmetic gives them."""
    if not (math.isfinite(x) and math.isfinite(y)):
        return PYTHON_FLOAT_OPS[op](float(x), float(y))
    value = FLOAT_OPS[op](exact(x), exact(y))
    if value == 0:
        return PYTHON_FLOAT_OPS[op](float(x), float(y))
    return ref_round(value, t)


def elementwise_reference(
    op: str, a: np.ndarray[Any, Any], b: np.ndarray[Any, Any], t: str
) -> np.ndarray[Any, Any]:
    out = np.empty(a.shape, dtype=object)
    for index in np.ndindex(a.shape):
        if t in FLOATS:
            out[index] = ref_float_op(op, a[index], b[index], t)
        else:
            out[index] = wrap(INT_OPS[op](int(a[index]), int(b[index])), t)
    return out


def nonzero(m: np.ndarray[Any, Any], t: str) -> np.ndarray[Any, Any]:
    one = np.array(1, dtype=DTYPES[t])
    return np.where(m == 0, one, m).astype(DTYPES[t])


@pytest.mark.parametrize("t", FLOATS + INTS)
@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("op", ["add", "sub", "mul", "div"])
def test_elementwise(op: str, shape: tuple[int, int], t: str) -> None:
    rng = np.random.default_rng(stable_seed(op, shape, t))
    a, b = random_matrix(rng, shape, t), random_matrix(rng, shape, t)
    if op == "div":
        b = nonzero(b, t)
        if t in INTS:
            b = np.where((a == np.iinfo(a.dtype).min) & (b == -1), 1, b).astype(a.dtype)
    m = mt(shape, t)
    result = run_body(f"  %r = matrix.{op} %a0, %a1 : {m}", [m, m], m, a, b)
    same(result, elementwise_reference(op, a, b, t), t)


@pytest.mark.parametrize("t", INTS)
def test_unsigned_div(t: str) -> None:
    rng = np.random.default_rng(7)
    a, b = random_matrix(rng, (3, 4), t), nonzero(random_matrix(rng, (3, 4), t), t)
    m = mt((3, 4), t)
    result = run_body(f"  %r = matrix.div %a0, %a1 {{unsigned}} : {m}", [m, m], m, a, b)
    bits = DTYPES[t].itemsize * 8
    expected = [
        [
            wrap((int(x) % 2**bits) // (int(y) % 2**bits), t)
            for x, y in zip(ra, rb, strict=True)
        ]
        for ra, rb in zip(a, b, strict=True)
    ]
    same(result, expected, t)


@pytest.mark.parametrize("t", FLOATS)
def test_neg_and_specials(t: str) -> None:
    values = [0.0, -0.0, 1.5, -2.0, math.inf, -math.inf, math.nan]
    a = np.array([values], dtype=DTYPES[t])
    m = mt((1, len(values)), t)
    same(run_body(f"  %r = matrix.neg %a0 : {m}", [m], m, a), [[-v for v in values]], t)
    ones = np.ones_like(a)
    zeros = np.zeros_like(a)
    quotient = run_body(f"  %r = matrix.div %a0, %a1 : {m}", [m, m], m, ones, zeros)
    same(quotient, [[math.inf] * len(values)], t)
    total = run_body(f"  %r = matrix.add %a0, %a1 : {m}", [m, m], m, a, -a)
    # x + (-x) is +0 for finite x (including -0 + +0) and NaN for inf/NaN.
    same(total, [[0.0, 0.0, 0.0, 0.0, math.nan, math.nan, math.nan]], t)


def float_matrices(t: str, shape: tuple[int, int]) -> st.SearchStrategy[Any]:
    width = 16 if t == "f16" else 32 if t in ("bf16", "f32") else 64
    element = st.floats(allow_nan=False, allow_infinity=False, width=width)
    count = shape[0] * shape[1]
    return st.lists(element, min_size=count, max_size=count).map(
        lambda v: np.array(v, dtype=np.float64).reshape(shape).astype(DTYPES[t])
    )


def int_matrices(t: str, shape: tuple[int, int]) -> st.SearchStrategy[Any]:
    info = np.iinfo(DTYPES[t])
    element = st.integers(int(info.min), int(info.max))
    count = shape[0] * shape[1]
    return st.lists(element, min_size=count, max_size=count).map(
        lambda v: np.array(v, dtype=DTYPES[t]).reshape(shape)
    )


@st.composite
def elementwise_case(draw: st.DrawFn) -> tuple[str, str, Any, Any]:
    t = draw(st.sampled_from(FLOATS + INTS))
    op = draw(st.sampled_from(["add", "sub", "mul", "div"]))
    shape = (draw(st.integers(1, 3)), draw(st.integers(1, 3)))
    matrices = float_matrices if t in FLOATS else int_matrices
    a, b = draw(matrices(t, shape)), draw(matrices(t, shape))
    if op == "div":
        b = nonzero(b, t)
        if t in INTS:
            b = np.where((a == np.iinfo(a.dtype).min) & (b == -1), 1, b).astype(a.dtype)
    return op, t, a, b


@settings(max_examples=examples(150), deadline=None)
@given(elementwise_case())
def test_elementwise_property(case: tuple[str, str, Any, Any]) -> None:
    op, t, a, b = case
    m = mt(a.shape, t)
    result = run_body(f"  %r = matrix.{op} %a0, %a1 : {m}", [m, m], m, a, b)
    same(result, elementwise_reference(op, a, b, t), t)


@pytest.mark.parametrize("t", FLOATS)
@pytest.mark.parametrize("shape", [(1, 4), (3, 2)])
def test_fma_single_rounding(shape: tuple[int, int], t: str) -> None:
    rng = np.random.default_rng(11)
    a, b = random_matrix(rng, shape, t, small=True), random_matrix(rng, shape, t)
    # c close to -a*b makes the single rounding visible.
    c = (-(a.astype(np.float64) * b.astype(np.float64))).astype(DTYPES[t])
    m = mt(shape, t)
    result = run_body(f"  %r = matrix.fma %a0, %a1, %a2 : {m}", [m, m, m], m, a, b, c)
    expected = [
        ref_round(exact(x) * exact(y) + exact(z), t)
        for x, y, z in zip(a.reshape(-1), b.reshape(-1), c.reshape(-1), strict=True)
    ]
    same(result, np.array(expected).reshape(shape), t)


@pytest.mark.parametrize("t", ["f32", "f64"])
def test_fma_no_double_rounding(t: str) -> None:
    """f32: a*b + c = 1 + 2^-23 + 2^-24 - 2^-70 lies just below a tie; rounding
    the sum to f64 first would make it a tie and round it up to even.
    f64: (1 + 2^-52)(1 - 2^-52) - 1 = -2^-104, which a rounded product loses."""
    if t == "f32":
        a, b, c = 2**-12 * (1 + 2**-23), 2**-12 * (1 - 2**-23), 1 + 2**-23
        expected = 1 + 2**-23
    else:
        a, b, c, expected = 1 + 2**-52, 1 - 2**-52, -1.0, -(2.0**-104)
    m = mt((1, 1), t)
    result = run_body(
        f"  %r = matrix.fma %a0, %a1, %a2 : {m}", [m, m, m], m, [[a]], [[b]], [[c]]
    )
    assert ref_round(exact(a) * exact(b) + exact(c), t) == expected
    same(result, [[expected]], t)


@settings(max_examples=examples(100), deadline=None)
@given(
    st.sampled_from(FLOATS).flatmap(
        lambda t: st.tuples(st.just(t), *(float_matrices(t, (1, 3)) for _ in range(3)))
    )
)
def test_fma_property(case: tuple[str, Any, Any, Any]) -> None:
    t, a, b, c = case
    m = mt((1, 3), t)
    result = run_body(f"  %r = matrix.fma %a0, %a1, %a2 : {m}", [m, m, m], m, a, b, c)
    expected = []
    for x, y, z in zip(a.reshape(-1), b.reshape(-1), c.reshape(-1), strict=True):
        if not all(math.isfinite(float(v)) for v in (x, y, z)):
            # A bf16 cast of a large finite f32 can give inf; IEEE inf/NaN
            # results do not depend on rounding.
            expected.append(float(x) * float(y) + float(z))
            continue
        value = exact(x) * exact(y) + exact(z)
        if value == 0:  # IEEE: +0 unless both addends are -0 (exactly)
            product_negative = (math.copysign(1, x) * math.copysign(1, y)) < 0
            both_negative = product_negative and math.copysign(1, z) < 0
            expected.append(-0.0 if both_negative else 0.0)
        else:
            expected.append(ref_round(value, t))
    same(result, [expected], t)


# ---------------------------------------------------------------------------
# Products
# ---------------------------------------------------------------------------


def matmul_reference(
    a: np.ndarray[Any, Any], b: np.ndarray[Any, Any], t: str
) -> list[list[Any]]:
    """docs/matrix-dialect.md: acc = A[r][0]*B[0][c]; acc = acc + A[r][k]*B[k][c], each rounded."""
    rows, inner = a.shape
    cols = b.shape[1]
    out: list[list[Any]] = []
    for r in range(rows):
        row: list[Any] = []
        for c in range(cols):
            if t in FLOATS:
                acc = ref_float_op("mul", a[r, 0], b[0, c], t)
                for k in range(1, inner):
                    product = ref_float_op("mul", a[r, k], b[k, c], t)
                    acc = ref_float_op("add", acc, product, t)
            else:
                acc = wrap(int(a[r, 0]) * int(b[0, c]), t)
                for k in range(1, inner):
                    acc = wrap(acc + wrap(int(a[r, k]) * int(b[k, c]), t), t)
            row.append(acc)
        out.append(row)
    return out


@pytest.mark.parametrize("t", FLOATS + INTS)
@pytest.mark.parametrize(
    "dims", [(1, 1, 1), (1, 4, 1), (4, 1, 3), (2, 3, 4), (4, 4, 4), (5, 2, 1)]
)
def test_matmul(dims: tuple[int, int, int], t: str) -> None:
    rows, inner, cols = dims
    rng = np.random.default_rng(stable_seed(dims, t))
    a = random_matrix(rng, (rows, inner), t)
    b = random_matrix(rng, (inner, cols), t)
    ta, tb, tr = mt((rows, inner), t), mt((inner, cols), t), mt((rows, cols), t)
    result = run_body(
        f"  %r = matrix.matmul %a0, %a1 : {ta}, {tb} -> {tr}", [ta, tb], tr, a, b
    )
    same(result, matmul_reference(a, b, t), t)


@st.composite
def matmul_case(draw: st.DrawFn) -> tuple[str, Any, Any]:
    t = draw(st.sampled_from(FLOATS + INTS))
    rows, inner, cols = (draw(st.integers(1, 4)) for _ in range(3))
    matrices = float_matrices if t in FLOATS else int_matrices
    return t, draw(matrices(t, (rows, inner))), draw(matrices(t, (inner, cols)))


@settings(max_examples=examples(100), deadline=None)
@given(matmul_case())
def test_matmul_property(case: tuple[str, Any, Any]) -> None:
    t, a, b = case
    ta, tb = mt(a.shape, t), mt(b.shape, t)
    tr = mt((a.shape[0], b.shape[1]), t)
    result = run_body(
        f"  %r = matrix.matmul %a0, %a1 : {ta}, {tb} -> {tr}", [ta, tb], tr, a, b
    )
    same(result, matmul_reference(a, b, t), t)


def test_matmul_order_is_visible() -> None:
    """f16: (2048 + 1) + 1 = 2048 left to right, while 2048 + (1 + 1) = 2050."""
    a = np.array([[2048.0, 1.0, 1.0]], dtype=np.float16)
    b = np.ones((3, 1), dtype=np.float16)
    ta, tb, tr = mt((1, 3), "f16"), mt((3, 1), "f16"), mt((1, 1), "f16")
    result = run_body(
        f"  %r = matrix.matmul %a0, %a1 : {ta}, {tb} -> {tr}", [ta, tb], tr, a, b
    )
    assert float(result[0, 0]) == 2048.0


@pytest.mark.parametrize("t", FLOATS + INTS)
def test_matmul_add_matvec_outer(t: str) -> None:
    rng = np.random.default_rng(3)
    a, b = random_matrix(rng, (3, 2), t), random_matrix(rng, (2, 4), t)
    c = random_matrix(rng, (3, 4), t)
    ta, tb, tc = mt((3, 2), t), mt((2, 4), t), mt((3, 4), t)
    result = run_body(
        f"  %r = matrix.matmul_add %a0, %a1, %a2 : {ta}, {tb}, {tc} -> {tc}",
        [ta, tb, tc],
        tc,
        a,
        b,
        c,
    )
    product = np.array(matmul_reference(a, b, t), dtype=object)
    expected = elementwise_reference("add", product.astype(DTYPES[t]), c, t)
    same(result, expected, t)

    x, bias = random_matrix(rng, (2,), t), random_matrix(rng, (3,), t)
    vx, vb = f"vector<2x{t}>", f"vector<3x{t}>"
    y = run_body(
        f"  %r = matrix.matvec %a0, %a1 : {ta}, {vx} -> {vb}", [ta, vx], vb, a, x
    )
    column = np.array(matmul_reference(a, x.reshape(2, 1), t), dtype=object)
    same(y, column.reshape(-1), t)
    y_bias = run_body(
        f"  %r = matrix.matvec %a0, %a1, %a2 : {ta}, {vx}, {vb} -> {vb}",
        [ta, vx, vb],
        vb,
        a,
        x,
        bias,
    )
    expected_bias = elementwise_reference(
        "add", column.reshape(1, -1).astype(DTYPES[t]), bias.reshape(1, -1), t
    )
    same(y_bias, expected_bias.reshape(-1), t)

    u, v = random_matrix(rng, (3,), t), random_matrix(rng, (5,), t)
    vu, vv, to = f"vector<3x{t}>", f"vector<5x{t}>", mt((3, 5), t)
    outer = run_body(
        f"  %r = matrix.outer_product %a0, %a1 : {vu}, {vv} -> {to}",
        [vu, vv],
        to,
        u,
        v,
    )
    expected_outer = elementwise_reference(
        "mul", np.repeat(u.reshape(3, 1), 5, 1), np.repeat(v.reshape(1, 5), 3, 0), t
    )
    same(outer, expected_outer, t)


# ---------------------------------------------------------------------------
# Structure: transpose, splat, constant, extract, insert
# ---------------------------------------------------------------------------


@pytest.mark.parametrize("t", [*FLOATS, *INTS, "i4", "i6"])
@pytest.mark.parametrize("shape", SHAPES)
def test_transpose_extract_insert(shape: tuple[int, int], t: str) -> None:
    rows, cols = shape
    if t in ("i4", "i6"):
        bits = int(t[1:])
        values = [
            [(r * cols + c) % (1 << bits) for c in range(cols)] for r in range(rows)
        ]
        a = np.array(values, dtype=np.uint8)
    else:
        a = random_matrix(np.random.default_rng(5), shape, t)
    m, tt = mt(shape, t), mt((cols, rows), t)
    transposed = run_body(f"  %r = matrix.transpose %a0 : {m} -> {tt}", [m], tt, a)
    assert transposed.shape == (cols, rows)
    assert all(transposed[c, r] == a[r, c] for r in range(rows) for c in range(cols))
    r, c = rows - 1, cols // 2
    body = (
        f"  %e = matrix.extract %a0[%a1, {c}] : {m}\n"
        f"  %r = matrix.insert %e, %a2[0, %a3] : {m}"
    )
    target = np.zeros_like(a)
    result = run_body(body, [m, "index", m, "index"], m, a, r, target, cols - 1)
    expected = np.zeros_like(a)
    expected[0, cols - 1] = a[r, c]
    assert result.dtype == a.dtype and np.array_equal(result, expected)


@pytest.mark.parametrize("t", FLOATS + INTS)
def test_splat_and_constant(t: str) -> None:
    m = mt((2, 3), t)
    literal = "-2.5" if t in FLOATS else "-3"
    value = -2.5 if t in FLOATS else -3
    body = (
        f"  %x = arith.constant {literal} : {t}\n"
        f"  %s = matrix.splat %x : {m}\n"
        f"  %c = matrix.constant dense<[[1, 2, 3], [4, 5, 6]]> : {m}\n"
        f"  %r = matrix.add %s, %c : {m}"
    )
    result = run_body(body, [], m)
    same(
        result,
        [[value + 1, value + 2, value + 3], [value + 4, value + 5, value + 6]],
        t,
    )


def test_container_splat_insert_keep_low_bits() -> None:
    m = mt((1, 3), "i4")
    body = (
        "  %x = arith.constant -1 : i4\n"
        f"  %s = matrix.splat %x : {m}\n"
        "  %y = arith.constant 5 : i4\n"
        f"  %r = matrix.insert %y, %s[0, 2] : {m}"
    )
    result = run_body(body, [], m)
    assert result.dtype == np.uint8 and result.tolist() == [[15, 15, 5]]


# ---------------------------------------------------------------------------
# Casts
# ---------------------------------------------------------------------------


def cast_reference(value: Any, source: str, target: str, unsigned: bool) -> Any:
    if source in INTS:
        n = int(value)
        if unsigned:
            n %= 1 << (DTYPES[source].itemsize * 8)
        return wrap(n, target) if target in INTS else ref_round(Fraction(n), target)
    x = float(value)
    if target in FLOATS:
        return x if math.isnan(x) or math.isinf(x) else ref_round(Fraction(x), target)
    return wrap(math.trunc(x), target)


def cast_input(
    rng: np.random.Generator, source: str, target: str, unsigned: bool
) -> Any:
    """Inputs whose conversion is defined (float -> int stays in range)."""
    if source in INTS or target in FLOATS:
        a = random_matrix(rng, (3, 4), source)
        if source in FLOATS:
            a[0, 0] = np.inf
        return a
    bits = DTYPES[target].itemsize * 8
    low, high = (
        (0, 2.0**bits) if unsigned else (-(2.0 ** (bits - 1)), 2.0 ** (bits - 1))
    )
    values = rng.uniform(max(low, -6e4), min(high, 6e4), size=(3, 4))
    a = values.astype(DTYPES[source])
    in_range = (np.trunc(a.astype(np.float64)) >= low) & (
        np.trunc(a.astype(np.float64)) < high
    )
    return np.where(in_range, a, np.zeros_like(a)).astype(DTYPES[source])


CAST_CASES = [
    (source, target, unsigned)
    for source in FLOATS + INTS
    for target in FLOATS + INTS
    for unsigned in (False, True)
    # 'unsigned' needs an integer source or result
    if not (unsigned and source in FLOATS and target in FLOATS)
]


@pytest.mark.parametrize(("source", "target", "unsigned"), CAST_CASES)
def test_cast(source: str, target: str, unsigned: bool) -> None:
    rng = np.random.default_rng(stable_seed(source, target, unsigned))
    a = cast_input(rng, source, target, unsigned)
    ts, tt = mt((3, 4), source), mt((3, 4), target)
    flag = " {unsigned}" if unsigned else ""
    result = run_body(f"  %r = matrix.cast %a0{flag} : {ts} to {tt}", [ts], tt, a)
    expected = [[cast_reference(v, source, target, unsigned) for v in row] for row in a]
    same(result, expected, target)


def test_cast_large_integers_round_once() -> None:
    """int -> bf16/f32 of values f64 cannot hold: one rounding, not two."""
    values = [2**24 + 2**16 + 1, 2**62 + 2**54 + 1, -(2**63), 2**53 + 1, 2**63 - 1]
    a = np.array([values], dtype=np.int64)
    for target in ("bf16", "f32", "f16", "f64"):
        ts, tt = mt((1, 5), "i64"), mt((1, 5), target)
        result = run_body(f"  %r = matrix.cast %a0 : {ts} to {tt}", [ts], tt, a)
        same(result, [[ref_round(Fraction(v), target) for v in values]], target)


def test_cast_f64_to_bf16_rounds_once() -> None:
    """1 + 2^-8 + 2^-30 is above the bf16 halfway point: 1 + 2^-7 (not 1)."""
    values = [1 + 2**-8 + 2**-30, 1 + 2**-8, 1 + 3 * 2**-8, -(1 + 2**-8 + 2**-40)]
    a = np.array([values], dtype=np.float64)
    ts, tt = mt((1, 4), "f64"), mt((1, 4), "bf16")
    result = run_body(f"  %r = matrix.cast %a0 : {ts} to {tt}", [ts], tt, a)
    same(result, [[ref_round(Fraction(v), "bf16") for v in values]], "bf16")


# ---------------------------------------------------------------------------
# Loads and stores
# ---------------------------------------------------------------------------


@pytest.mark.parametrize("column_major", [True, False])
@pytest.mark.parametrize("shape", [(1, 4), (4, 1), (2, 3), (3, 3)])
@pytest.mark.parametrize("t", ["f32", "bf16", "i16", "i64"])
def test_load_store_touch_only_addressed(
    t: str, shape: tuple[int, int], column_major: bool
) -> None:
    rows, cols = shape
    leading = rows if column_major else cols
    stride, offset = leading + 2, 3
    size = offset + stride * ((cols if column_major else rows) - 1) + leading + 4
    rng = np.random.default_rng(stable_seed(t, shape, column_major))
    memory = random_matrix(rng, (size,), t, small=True)
    kind = "column_major" if column_major else "row_major"
    m, mem_type = mt(shape, t), f"memref<?x{t}>"

    def position(r: int, c: int) -> int:
        return offset + (c * stride + r if column_major else r * stride + c)

    loaded = run_body(
        f"  %r = matrix.{kind}_load %a0[{offset}] stride %a1 : {mem_type} -> {m}",
        [mem_type, "index"],
        m,
        memory,
        stride,
    )
    assert all(
        loaded[r, c] == memory[position(r, c)] for r in range(rows) for c in range(cols)
    )

    value = random_matrix(rng, shape, t, small=True)
    before = memory.copy()
    text = (
        f"func.func @f(%m: {m}, %mem: {mem_type}, %off: index) {{\n"
        f"  matrix.{kind}_store %m, %mem[%off] stride {stride} : {m}, {mem_type}\n"
        "  func.return\n}\n"
    )
    assert run_function(parse(text), "f", value, memory, offset) == ()
    addressed = {position(r, c): value[r, c] for r in range(rows) for c in range(cols)}
    for i in range(size):
        assert memory[i] == addressed.get(i, before[i])


def test_container_memory_is_low_bits() -> None:
    """i4 in memory: loads ignore a byte's high bits, stores write them as zero."""
    memory = np.array([0xF3, 0x2A, 0x77, 0xFF], dtype=np.uint8)
    m = mt((2, 2), "i4")
    text = (
        f"func.func @f(%mem: memref<4xi4>) -> {m} {{\n"
        f"  %x = matrix.row_major_load %mem[0] : memref<4xi4> -> {m}\n"
        f"  %t = matrix.transpose %x : {m} -> {m}\n"
        f"  matrix.row_major_store %t, %mem[0] : {m}, memref<4xi4>\n"
        f"  func.return %x : {m}\n}}\n"
    )
    (loaded,) = run_function(parse(text), "f", memory)
    assert loaded.tolist() == [[0x3, 0xA], [0x7, 0xF]]
    assert memory.tolist() == [0x3, 0x7, 0xA, 0xF]

    store = (
        f"func.func @g(%m: {m}, %mem: memref<4xi4>) {{\n"
        f"  matrix.column_major_store %m, %mem[0] : {m}, memref<4xi4>\n"
        "  func.return\n}\n"
    )
    run_function(parse(store), "g", np.array([[0xF1, 0x32], [0x0C, 0x84]]), memory)
    assert memory.tolist() == [0x1, 0xC, 0x2, 0x4]


# ---------------------------------------------------------------------------
# Undefined behaviour
# ---------------------------------------------------------------------------


def ub(text: str, *args: Any) -> UndefinedBehaviorError:
    with pytest.raises(UndefinedBehaviorError) as info:
        run_function(parse(text), "f", *args)
    return info.value


@pytest.mark.parametrize("t", INTS)
@pytest.mark.parametrize("unsigned", [False, True])
def test_division_by_zero_is_ub(t: str, unsigned: bool) -> None:
    m = mt((1, 2), t)
    flag = " {unsigned}" if unsigned else ""
    text = (
        f"func.func @f(%a: {m}, %b: {m}) -> {m} {{\n"
        f"  %r = matrix.div %a, %b{flag} : {m}\n  func.return %r : {m}\n}}\n"
    )
    err = ub(text, np.array([[1, 2]]), np.array([[3, 0]]))
    assert err.op is not None and err.op.name == "matrix.div"
    assert "division by zero" in err.message
    if not unsigned:
        int_min = int(np.iinfo(DTYPES[t]).min)
        err = ub(text, np.array([[int_min, 4]]), np.array([[-1, 2]]))
        assert "overflow" in err.message
    else:  # INT_MIN / -1 is fine unsigned
        (r,) = run_function(parse(text), "f", np.array([[-1, 4]]), np.array([[-1, 2]]))
        assert r.tolist() == [[1, 2]]


@pytest.mark.parametrize(("row", "col"), [(2, 0), (0, 3), (-1, 0), (0, -1), (5, 7)])
def test_dynamic_index_out_of_range_is_ub(row: int, col: int) -> None:
    m = mt((2, 3), "f32")
    extract = (
        f"func.func @f(%m: {m}, %i: index, %j: index) -> f32 {{\n"
        f"  %e = matrix.extract %m[%i, %j] : {m}\n  func.return %e : f32\n}}\n"
    )
    err = ub(extract, np.zeros((2, 3)), row, col)
    assert err.op is not None and err.op.name == "matrix.extract"
    insert = (
        f"func.func @f(%m: {m}, %i: index, %j: index) -> {m} {{\n"
        "  %x = arith.constant 1.0 : f32\n"
        f"  %r = matrix.insert %x, %m[%i, %j] : {m}\n  func.return %r : {m}\n}}\n"
    )
    err = ub(insert, np.zeros((2, 3)), row, col)
    assert err.op is not None and err.op.name == "matrix.insert"


@pytest.mark.parametrize("unsigned", [False, True])
@pytest.mark.parametrize("target", INTS)
@pytest.mark.parametrize("source", FLOATS)
def test_float_to_int_out_of_range_is_ub(
    source: str, target: str, unsigned: bool
) -> None:
    bits = DTYPES[target].itemsize * 8
    too_big = 2.0**bits if unsigned else 2.0 ** (bits - 1)
    m_s, m_t = mt((1, 1), source), mt((1, 1), target)
    flag = " {unsigned}" if unsigned else ""
    text = (
        f"func.func @f(%a: {m_s}) -> {m_t} {{\n"
        f"  %r = matrix.cast %a{flag} : {m_s} to {m_t}\n  func.return %r : {m_t}\n}}\n"
    )
    bad = [math.nan, math.inf, -math.inf, -1.0 if unsigned else -too_big * 2]
    with np.errstate(over="ignore"):  # f16 cannot hold 2^32 and up: inf
        if float(np.array(too_big, dtype=DTYPES[source])) == too_big:
            bad.append(too_big)  # the first value past the top (if representable)
        for value in bad:
            ub(text, np.array([[value]]).astype(DTYPES[source]))
    # The truncation happens first: -0.9 -> 0 is fine even unsigned.
    (r,) = run_function(parse(text), "f", np.array([[-0.9]]))
    assert int(r[0, 0]) == 0


def test_memory_access_out_of_range_is_ub() -> None:
    m = mt((2, 2), "f32")
    text = (
        f"func.func @f(%mem: memref<?xf32>, %off: index, %s: index) -> {m} {{\n"
        f"  %r = matrix.column_major_load %mem[%off] stride %s : memref<?xf32> -> {m}\n"
        f"  func.return %r : {m}\n}}\n"
    )
    memory = np.arange(6, dtype=np.float32)
    (ok,) = run_function(parse(text), "f", memory, 1, 3)
    assert ok.tolist() == [[1.0, 4.0], [2.0, 5.0]]
    assert "past the end" in ub(text, memory, 2, 3).message
    assert "negative" in ub(text, memory, -1, 2).message
    assert "stride 1" in ub(text, memory, 0, 1).message


# ---------------------------------------------------------------------------
# Scalar arith/math additions (mx.interpreters.arith)
# ---------------------------------------------------------------------------


def run_scalar(body: str, result_type: str) -> Any:
    return run_body(body, [], result_type)


@pytest.mark.parametrize("t", FLOATS)
def test_scalar_float_ops_round_to_their_type(t: str) -> None:
    """extract/splat and scalar arith agree: each scalar op rounds to its type."""
    third = run_scalar(
        f"  %a = arith.constant 1.0 : {t}\n  %b = arith.constant 3.0 : {t}\n"
        f"  %r = arith.divf %a, %b : {t}",
        t,
    )
    assert third == ref_round(Fraction(1, 3), t)
    fused = run_scalar(
        f"  %a = arith.constant 3.0 : {t}\n  %b = arith.constant {third!r} : {t}\n"
        f"  %c = arith.constant -1.0 : {t}\n  %r = math.fma %a, %b, %c : {t}",
        t,
    )
    assert fused == ref_round(3 * Fraction(third) - 1, t)
    negated = run_scalar(
        f"  %a = arith.constant 0.0 : {t}\n  %r = arith.negf %a : {t}", t
    )
    assert math.copysign(1.0, negated) == -1.0


def test_scalar_conversions() -> None:
    assert (
        run_scalar(
            "  %a = arith.constant -7.9 : f32\n  %r = arith.fptosi %a : f32 to i8", "i8"
        )
        == -7
    )
    assert (
        run_scalar(
            "  %a = arith.constant -1 : i8\n  %r = arith.uitofp %a : i8 to f32", "f32"
        )
        == 255.0
    )
    big = 2**24 + 2**16 + 1
    assert run_scalar(
        f"  %a = arith.constant {big} : i64\n  %r = arith.sitofp %a : i64 to bf16",
        "bf16",
    ) == ref_round(Fraction(big), "bf16")
    assert run_scalar(
        "  %a = arith.constant 1.00048828125 : f64\n  %r = arith.truncf %a : f64 to f16",
        "f16",
    ) == ref_round(Fraction(1.00048828125), "f16")
    assert (
        run_scalar(
            "  %a = arith.constant -7 : i32\n  %b = arith.constant 2 : i32\n"
            "  %r = arith.remsi %a, %b : i32",
            "i32",
        )
        == -1
    )
    with pytest.raises(UndefinedBehaviorError):
        run_scalar(
            "  %a = arith.constant 1 : i32\n  %b = arith.constant 0 : i32\n"
            "  %r = arith.divui %a, %b : i32",
            "i32",
        )
    with pytest.raises(UndefinedBehaviorError):
        run_scalar(
            "  %a = arith.constant 300.0 : f32\n  %r = arith.fptoui %a : f32 to i8",
            "i8",
        )


def test_vector_constant_feeds_matvec() -> None:
    m = mt((2, 2), "f32")
    body = (
        f"  %m = matrix.constant dense<[[1.0, 2.0], [3.0, 4.0]]> : {m}\n"
        "  %x = arith.constant dense<[10.0, 100.0]> : vector<2xf32>\n"
        f"  %r = matrix.matvec %m, %x : {m}, vector<2xf32> -> vector<2xf32>"
    )
    result = run_scalar(body, "vector<2xf32>")
    assert result.dtype == np.float32 and result.tolist() == [210.0, 430.0]


@pytest.mark.parametrize("width", [8, 16, 32, 64])
@pytest.mark.parametrize(
    "name", ["addi", "subi", "muli", "andi", "ori", "xori", "shli", "shrsi", "shrui"]
)
def test_whole_vector_bitwise_ops_equal_python_integers(
    name: str, width: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The ops the interpreter computes on whole vectors (not lane by lane)
    against Python's integers: every lane's bits, wrapped to the width (the
    extremes included), and shift amounts from 0 to the width - 1 (a larger
    amount is undefined behaviour, as for a scalar)."""
    rng = np.random.default_rng(width)
    lanes = 2 * width
    dtype = np.dtype(f"int{width}")
    info = np.iinfo(dtype)
    a = rng.integers(info.min, info.max, lanes, dtype=dtype, endpoint=True)
    a[:4] = [info.min, info.max, -1, 0]
    if name.startswith("sh"):
        b = np.arange(lanes, dtype=dtype) % width
    else:
        b = rng.integers(info.min, info.max, lanes, dtype=dtype, endpoint=True)
    vt = f"vector<{lanes}xi{width}>"
    body = f"  %r = arith.{name} %a0, %a1 : {vt}"

    def lane_by_lane(*_: Any) -> Any:
        raise AssertionError("ran lane by lane")

    with monkeypatch.context() as patch:
        patch.setattr(vector_interpreter, "run_lanes", lane_by_lane)
        result = run_body(body, [vt, vt], vt, a, b)
    mask = (1 << width) - 1

    def expected(x: int, y: int) -> int:
        u, amount = x & mask, y & mask
        match name:
            case "addi":
                bits = x + y
            case "subi":
                bits = x - y
            case "muli":
                bits = x * y
            case "andi":
                bits = x & y
            case "ori":
                bits = x | y
            case "xori":
                bits = x ^ y
            case "shli":
                bits = u << amount
            case "shrsi":
                bits = x >> amount
            case _:
                bits = u >> amount
        bits &= mask
        return bits - (1 << width) if bits >> (width - 1) else bits

    assert result.dtype == dtype
    assert result.tolist() == [
        expected(int(x), int(y)) for x, y in zip(a, b, strict=True)
    ]
    if name.startswith("sh"):
        b[-1] = width
        with pytest.raises(UndefinedBehaviorError):
            run_body(body, [vt, vt], vt, a, b)


@pytest.mark.parametrize(
    ("source", "target"),
    [("i16", "f16"), ("f16", "i16"), ("i16", "bf16"), ("i32", "f32"), ("f64", "i64")],
)
def test_whole_vector_bitcasts_keep_every_bit(
    source: str, target: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A bitcast of a vector, computed on the whole vector, keeps every bit
    of every lane: NaN payloads (signalling ones too), subnormals, -0."""
    width = int(source.lstrip("ibf"))
    rng = np.random.default_rng(width)
    bits = rng.integers(0, 1 << width, 64, dtype=np.uint64, endpoint=False)
    top = 1 << (width - 1)
    bits[:6] = [0, top, 1, top - 1, (1 << width) - 1, top | 1]
    raw = bits.astype(f"uint{width}")
    value = (
        raw.view(f"int{width}") if source.startswith("i") else raw.view(f"float{width}")
    )
    vs, vt = f"vector<64x{source}>", f"vector<64x{target}>"

    def lane_by_lane(*_: Any) -> Any:
        raise AssertionError("ran lane by lane")

    monkeypatch.setattr(vector_interpreter, "run_lanes", lane_by_lane)
    result = run_body(f"  %r = arith.bitcast %a0 : {vs} to {vt}", [vs], vt, value)
    assert result.dtype.itemsize * 8 == width
    assert result.tobytes() == raw.tobytes()

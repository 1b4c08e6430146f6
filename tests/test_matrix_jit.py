"""convert-matrix-to-affine end to end: JIT-compiled matrix ops against NumPy.

Each test builds one module with many functions (one per op and shape) that
load their operands from column-major arrays, apply the op and store the
result, compiles it once through `mx-lower-to-llvm` and compares every result
bit for bit with a reference computed here with NumPy/ml_dtypes scalars and
exact `Fraction` arithmetic (never with mx code). `MX_LONG_TESTS=1` adds
shapes.
"""

import os
from collections.abc import Callable, Sequence
from fractions import Fraction
from typing import Any

import ml_dtypes
import numpy as np
import pytest

from mx.jit import compile_module

PIPELINE = "mx-lower-to-llvm"
Array = np.ndarray[Any, Any]

DTYPES: dict[str, Any] = {
    "f16": np.float16,
    "bf16": ml_dtypes.bfloat16,
    "f32": np.float32,
    "f64": np.float64,
    "i8": np.int8,
    "i16": np.int16,
    "i32": np.int32,
    "i64": np.int64,
}
FLOATS = ("f16", "bf16", "f32", "f64")
INTS = ("i8", "i16", "i32", "i64")
SHAPES = [(1, 1), (2, 3), (4, 4), (3, 5)]
if os.environ.get("MX_LONG_TESTS"):
    SHAPES += [(1, 7), (8, 1), (9, 13), (16, 16)]


def _matrix(t: str, r: int, c: int) -> str:
    return f"!matrix.matrix<{r}x{c}x{t}>"


def _mem(t: str, n: int) -> str:
    return f"memref<{n}x{t}>"


def _load(name: str, arg: str, t: str, r: int, c: int) -> str:
    return (
        f"    %{name} = matrix.column_major_load %{arg}[0] : {_mem(t, r * c)} -> "
        f"{_matrix(t, r, c)}\n"
    )


def _store(name: str, out: str, t: str, r: int, c: int) -> str:
    return (
        f"    matrix.column_major_store %{name}, %{out}[0] : {_matrix(t, r, c)}, "
        f"{_mem(t, r * c)}\n"
    )


def _function(name: str, params: Sequence[str], body: str) -> str:
    return f"func.func @{name}({', '.join(params)}) {{\n{body}    return\n}}\n"


def elementwise(
    name: str, op: str, t: str, r: int, c: int, arity: int, suffix: str = ""
) -> str:
    """`out = op(a, b, ...)` on column-major arrays."""
    args = "abc"[:arity]
    params = [f"%{a}_mem: {_mem(t, r * c)}" for a in args] + [
        f"%out: {_mem(t, r * c)}"
    ]
    body = "".join(_load(a, f"{a}_mem", t, r, c) for a in args)
    operands = ", ".join(f"%{a}" for a in args)
    body += f"    %res = matrix.{op} {operands}{suffix} : {_matrix(t, r, c)}\n"
    body += _store("res", "out", t, r, c)
    return _function(name, params, body)


def column_major(m: Array) -> Array:
    return np.ascontiguousarray(m.flatten(order="F"))


def from_column_major(flat: Array, r: int, c: int) -> Array:
    return flat.reshape((c, r)).T


def random_matrix(rng: np.random.Generator, t: str, r: int, c: int) -> Array:
    dtype = DTYPES[t]
    if t in INTS:
        info = np.iinfo(dtype)
        return rng.integers(info.min, info.max, size=(r, c), endpoint=True, dtype=dtype)
    values = rng.standard_normal((r, c)) * 4.0
    return values.astype(np.float32).astype(dtype)


def same_bits(actual: Array, expected: Array) -> bool:
    a = np.asarray(actual)
    e = np.asarray(expected).astype(a.dtype)
    return a.tobytes() == e.tobytes()


def round_exact(x: Fraction, t: str) -> Any:
    """`x` rounded to nearest-even in type `t` (finite, in range)."""
    dtype = DTYPES[t]
    candidate = dtype(float(x))
    best = candidate
    for neighbour in (
        np.nextafter(candidate, dtype(np.inf)) if t != "bf16" else _bf16_step(candidate, 1),
        np.nextafter(candidate, dtype(-np.inf)) if t != "bf16" else _bf16_step(candidate, -1),
    ):
        d_best = abs(Fraction(float(best)) - x)
        d_new = abs(Fraction(float(neighbour)) - x)
        even = int(np.array(neighbour, dtype).view(f"u{np.dtype(dtype).itemsize}")) % 2 == 0
        if d_new < d_best or (d_new == d_best and even):
            best = neighbour
    return dtype(best)


def _bf16_step(x: Any, direction: int) -> Any:
    bits = np.array(x, ml_dtypes.bfloat16).view(np.uint16).astype(np.int32)
    sign = -1 if bits & 0x8000 else 1
    if bits & 0x7FFF == 0:
        return ml_dtypes.bfloat16(direction * 2.0**-133)
    bits = bits + direction * sign
    return np.array(bits, np.uint16).view(ml_dtypes.bfloat16)[()]


# ---------------------------------------------------------------------------
# References (NumPy scalars round once per operation in their own type)
# ---------------------------------------------------------------------------


def trunc_div(a: Array, b: Array, unsigned: bool) -> Array:
    out = np.empty_like(a)
    for index in np.ndindex(a.shape):
        x, y = int(a[index]), int(b[index])
        if unsigned:
            bits = a.dtype.itemsize * 8
            x, y = x % (1 << bits), y % (1 << bits)
            q = x // y
        else:
            q = abs(x) // abs(y) * (1 if (x < 0) == (y < 0) else -1)
        out[index] = np.array(q).astype(np.uint64).astype(a.dtype)
    return out


def fma_reference(a: Array, b: Array, c: Array, t: str) -> Array:
    out = np.empty_like(a)
    for index in np.ndindex(a.shape):
        exact = Fraction(float(a[index])) * Fraction(float(b[index])) + Fraction(
            float(c[index])
        )
        out[index] = round_exact(exact, t)
    return out


def matmul_reference(
    a: Array, b: Array, t: str, contract: bool, acc: Array | None = None
) -> Array:
    """acc = a[r,0]*b[0,c]; acc = acc + a[r,k]*b[k,c] (k = 1..K-1), then + acc."""
    dtype = DTYPES[t]
    rows, depth = a.shape
    cols = b.shape[1]
    out = np.empty((rows, cols), dtype)
    with np.errstate(over="ignore"):
        for i in range(rows):
            for j in range(cols):
                s = a[i, 0] * b[0, j]
                for k in range(1, depth):
                    if contract:
                        s = round_exact(
                            Fraction(float(a[i, k])) * Fraction(float(b[k, j]))
                            + Fraction(float(s)),
                            t,
                        )
                    else:
                        s = dtype(s + dtype(a[i, k] * b[k, j]))
                if acc is not None:
                    s = s + acc[i, j]
                out[i, j] = s
    return out


# ---------------------------------------------------------------------------
# Tests
# ---------------------------------------------------------------------------

BINARY: dict[str, Callable[[Array, Array], Array]] = {
    "add": lambda a, b: a + b,
    "sub": lambda a, b: a - b,
    "mul": lambda a, b: a * b,
}


def _run_all(
    source: str, cases: Sequence[tuple[str, list[Array], Array, int, int]]
) -> None:
    module = compile_module(source, PIPELINE)
    failures: list[str] = []
    for name, inputs, expected, r, c in cases:
        out = np.zeros(r * c, expected.dtype)
        module[name](*(column_major(x) for x in inputs), out)
        actual = from_column_major(out, r, c)
        if not same_bits(actual, expected):
            failures.append(f"{name}:\nexpected\n{expected}\ngot\n{actual}")
    assert not failures, "\n".join(failures)


@pytest.mark.parametrize("t", list(DTYPES))
def test_elementwise(t: str) -> None:
    rng = np.random.default_rng(1)
    source = ""
    cases: list[tuple[str, list[Array], Array, int, int]] = []
    with np.errstate(all="ignore"):
        for r, c in SHAPES:
            a, b = random_matrix(rng, t, r, c), random_matrix(rng, t, r, c)
            for op, ref in BINARY.items():
                name = f"{op}_{r}x{c}"
                source += elementwise(name, op, t, r, c, 2)
                cases.append((name, [a, b], ref(a, b), r, c))
            if t in FLOATS:
                name = f"div_{r}x{c}"
                source += elementwise(name, "div", t, r, c, 2)
                cases.append((name, [a, b], a / b, r, c))
                name = f"neg_{r}x{c}"
                source += elementwise(name, "neg", t, r, c, 1)
                cases.append((name, [a], -a, r, c))
                name = f"fma_{r}x{c}"
                z = random_matrix(rng, t, r, c)
                source += elementwise(name, "fma", t, r, c, 3)
                cases.append((name, [a, b, z], fma_reference(a, b, z, t), r, c))
            else:
                divisor = np.where((b == 0) | (b == -1), 3, b).astype(b.dtype)
                name = f"div_{r}x{c}"
                source += elementwise(name, "div", t, r, c, 2)
                cases.append((name, [a, divisor], trunc_div(a, divisor, False), r, c))
                name = f"udiv_{r}x{c}"
                source += elementwise(name, "div", t, r, c, 2, " {unsigned}")
                cases.append((name, [a, divisor], trunc_div(a, divisor, True), r, c))
    _run_all(source, cases)


@pytest.mark.parametrize("t", list(DTYPES))
def test_matmul(t: str) -> None:
    rng = np.random.default_rng(2)
    source = ""
    cases: list[tuple[str, list[Array], Array, int, int]] = []
    shapes = [(1, 1, 1), (2, 3, 4), (4, 4, 4), (3, 5, 2)]
    flags = ["", " fastmath<contract>"] if t in FLOATS else [""]
    for m, k, n in shapes:
        a, b = random_matrix(rng, t, m, k), random_matrix(rng, t, k, n)
        acc = random_matrix(rng, t, m, n)
        for flag in flags:
            contract = bool(flag)
            tag = f"{m}x{k}x{n}{'_c' if contract else ''}"
            ma, mb, mc = _matrix(t, m, k), _matrix(t, k, n), _matrix(t, m, n)
            params = [
                f"%a_mem: {_mem(t, m * k)}",
                f"%b_mem: {_mem(t, k * n)}",
                f"%out: {_mem(t, m * n)}",
            ]
            body = _load("a", "a_mem", t, m, k) + _load("b", "b_mem", t, k, n)
            body += f"    %res = matrix.matmul %a, %b{flag} : {ma}, {mb} -> {mc}\n"
            source += _function(f"matmul_{tag}", params, body + _store("res", "out", t, m, n))
            cases.append(
                (f"matmul_{tag}", [a, b], matmul_reference(a, b, t, contract), m, n)
            )
            params.insert(2, f"%c_mem: {_mem(t, m * n)}")
            body = body.replace(
                f"    %res = matrix.matmul %a, %b{flag} : {ma}, {mb} -> {mc}\n", ""
            ) + _load("c", "c_mem", t, m, n)
            body += (
                f"    %res = matrix.matmul_add %a, %b, %c{flag} : {ma}, {mb}, {mc}"
                f" -> {mc}\n"
            )
            source += _function(
                f"matmul_add_{tag}", params, body + _store("res", "out", t, m, n)
            )
            cases.append(
                (
                    f"matmul_add_{tag}",
                    [a, b, acc],
                    matmul_reference(a, b, t, contract, acc),
                    m,
                    n,
                )
            )
    with np.errstate(all="ignore"):
        _run_all(source, cases)

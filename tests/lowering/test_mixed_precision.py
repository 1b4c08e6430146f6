"""Mixed-precision contractions (matmul, matmul_add, matvec with factors
narrower than the result): compiled code equals the interpreter bit for bit
on every exact widening pair, signed and unsigned, in the vector lowering and
in the scalar one, over shapes that leave vector tails; the interpreter equals
an independent reference (widen with NumPy, then products in Python ints or
exact rationals rounded once per step).

The scalar lowering (`vector-bits=0`) has no tails: its loops are the same
ops for every shape (the same op counts for both `SHAPES` in every case),
so it compiles the first shape only; `MX_LONG_TESTS=1` compiles both."""

from collections import Counter
from fractions import Fraction
from typing import Any

import numpy as np
import pytest
from xdsl.context import Context
from xdsl.dialects.func import FuncOp
from xdsl.parser import Parser

from mx.frontend import mx_context
from mx.interpreters import run_function
from mx.jit import compile_module
from mx.lowering.matrix_to_affine.convert_matrix_to_affine import (
    ConvertMatrixToAffinePass,
)
from mx.passes.mx_lower_to_llvm import PIPELINE
from tests.reference.element_types import BF16, ELEMENT_DTYPES
from tests.sampling import LONG

DTYPES = ELEMENT_DTYPES
WIDENINGS = {
    "i8": ("i16", "i32", "i64"),
    "i16": ("i32", "i64"),
    "i32": ("i64",),
    "f16": ("f32", "f64"),
    "bf16": ("f32", "f64"),
    "f32": ("f64",),
}
"""docs/matrix-dialect.md's exact widenings."""

# (lhs, rhs, result): each widening pair with both factors narrower, one
# narrower factor on either side, and factors of two different types.
CASES = [(s, s, r) for s, targets in WIDENINGS.items() for r in targets] + [
    ("i8", "i32", "i32"),
    ("i64", "i16", "i64"),
    ("i8", "i16", "i32"),
    ("f16", "bf16", "f32"),
    ("f32", "f16", "f32"),
    ("bf16", "f64", "f64"),
    ("f16", "f32", "f64"),
]
SCALAR_PIPELINE = ",".join(
    "convert-matrix-to-affine{vector-bits=0}" if p == "convert-matrix-to-affine" else p
    for p in PIPELINE
)
SHAPES = ((5, 7, 3), (17, 9, 4))
SCALAR_SHAPES = range(len(SHAPES) if LONG else 1)


def _parse(text: str) -> Any:
    return Parser(mx_context(), text).parse_module()


def _m(rows: int, cols: int, t: str) -> str:
    return f"!matrix.matrix<{rows}x{cols}x{t}>"


def _module(
    a: str, b: str, r: str, unsigned: bool, contract: bool, shapes: range
) -> str:
    """The three contractions in each of `SHAPES[n]` for n in `shapes`."""
    attrs = (" fastmath<contract>" if contract else "") + (
        " {unsigned}" if unsigned else ""
    )
    out: list[str] = []
    for n in shapes:
        rows, depth, cols = SHAPES[n]
        ta, tb, tc = _m(rows, depth, a), _m(depth, cols, b), _m(rows, cols, r)
        x, y = f"vector<{depth}x{b}>", f"vector<{rows}x{r}>"
        out.append(
            f"func.func @matmul{n}(%a: {ta}, %b: {tb}) -> {tc} {{\n"
            f"  %r = matrix.matmul %a, %b{attrs} : {ta}, {tb} -> {tc}\n"
            f"  func.return %r : {tc}\n}}\n"
            f"func.func @matmul_add{n}(%a: {ta}, %b: {tb}, %c: {tc}) -> {tc} {{\n"
            f"  %r = matrix.matmul_add %a, %b, %c{attrs} : {ta}, {tb}, {tc} -> {tc}\n"
            f"  func.return %r : {tc}\n}}\n"
            f"func.func @matvec{n}(%a: {ta}, %x: {x}, %c: {y}) -> {y} {{\n"
            f"  %r = matrix.matvec %a, %x, %c{attrs} : {ta}, {x}, {y} -> {y}\n"
            f"  func.return %r : {y}\n}}\n"
        )
    return "\n".join(out)


def _random(t: str, shape: tuple[int, ...], rng: np.random.Generator) -> Any:
    dtype = DTYPES[t]
    if dtype.kind == "i":
        info = np.iinfo(dtype)
        return rng.integers(info.min, info.max, shape, dtype=dtype, endpoint=True)
    values = rng.standard_normal(shape) * 2.0 ** rng.integers(-12, 12, shape)
    out = values.astype(dtype)
    flat = out.reshape(-1)
    flat[rng.integers(0, flat.size, 2)] = dtype.type(-0.0)
    return out


def _arguments(
    kind: str, n: int, a: str, b: str, r: str, rng: np.random.Generator
) -> list[Any]:
    rows, depth, cols = SHAPES[n]
    if kind == "matvec":
        return [
            _random(a, (rows, depth), rng),
            _random(b, (depth,), rng),
            _random(r, (rows,), rng),
        ]
    args = [_random(a, (rows, depth), rng), _random(b, (depth, cols), rng)]
    return [*args, _random(r, (rows, cols), rng)] if kind == "matmul_add" else args


def _same(x: Any, y: Any) -> bool:
    x, y = np.asarray(x), np.asarray(y)
    if x.dtype.kind == "f" or x.dtype == BF16:
        nan = np.isnan(x.astype(np.float64)) & np.isnan(y.astype(np.float64))
        bits = x.view(f"u{x.itemsize}") == y.view(f"u{y.itemsize}")
        return x.shape == y.shape and bool(np.all(nan | bits))
    return bool(np.array_equal(x, y))


def _reference(kind: str, args: list[Any], r: str, unsigned: bool) -> Any:
    """Independent of mx: widen with NumPy views/casts, then sum in order in
    Python integers (wrapped) or exact rationals, each product and each sum
    rounded to the result type (the strict order). `float()` rounds a
    rational once to f64; for an f32 result the second rounding is innocuous
    (one + or x of f32 values, 53 >= 2*24 + 2 bits)."""
    dtype = DTYPES[r]

    def widen(x: Any) -> Any:
        if x.dtype.kind == "i":
            return (
                x.view(f"u{x.itemsize}").astype(object)
                if unsigned
                else x.astype(object)
            )
        return x.astype(np.float64).astype(object)

    def rounded(value: Any) -> Any:
        if dtype.kind == "i":
            bits = 8 * dtype.itemsize
            value = int(value) % (1 << bits)
            return value - (1 << bits) if value >> (bits - 1) else value
        return float(np.array(float(value), np.float64).astype(dtype))

    a = widen(args[0])
    b = widen(args[1]).reshape(a.shape[1], -1)
    c = args[2].reshape(a.shape[0], -1).astype(object) if len(args) > 2 else None

    def product(i: int, k: int, j: int) -> Any:
        return rounded(Fraction(a[i, k]) * Fraction(b[k, j]))

    out = np.empty((a.shape[0], b.shape[1]), dtype=object)
    for i in range(a.shape[0]):
        for j in range(b.shape[1]):
            acc = product(i, 0, j)
            for k in range(1, a.shape[1]):
                acc = rounded(Fraction(acc) + Fraction(product(i, k, j)))
            if c is not None:
                acc = rounded(Fraction(acc) + Fraction(c[i, j]))
            out[i, j] = acc
    result = out.astype(dtype)
    return result.reshape(-1) if kind == "matvec" else result


def _cases() -> list[tuple[str, str, str, bool]]:
    cases: list[tuple[str, str, str, bool]] = []
    for a, b, r in CASES:
        cases.append((a, b, r, False))
        if r.startswith("i"):
            cases.append((a, b, r, True))
    return cases


@pytest.mark.ci_sample(12)
@pytest.mark.parametrize(("a", "b", "r", "unsigned"), _cases())
def test_jit_equals_interpreter(a: str, b: str, r: str, unsigned: bool) -> None:
    # Both factors narrower than a float result: products are exact, so
    # `contract` (one FMA per step) rounds exactly as the strict order.
    exact_products = r.startswith("f") and a != r and b != r
    variants = [False, True] if exact_products else [False]
    rng = np.random.default_rng(sum(map(ord, a + b + r)) + unsigned)
    for contract in variants:
        text = _module(a, b, r, unsigned, contract, range(len(SHAPES)))
        module = _parse(text)
        vector = compile_module(text)
        scalar = compile_module(
            _module(a, b, r, unsigned, contract, SCALAR_SHAPES), SCALAR_PIPELINE
        )
        for n in range(len(SHAPES)):
            for kind in ("matmul", "matmul_add", "matvec"):
                name = f"{kind}{n}"
                args = _arguments(kind, n, a, b, r, rng)
                (expected,) = run_function(module, name, *args)
                if n == 0 and not contract:
                    reference = _reference(kind, args, r, unsigned)
                    assert _same(expected, reference), (name, expected, reference)
                for jit in [vector, scalar] if n in SCALAR_SHAPES else [vector]:
                    got = jit[name](*args)
                    assert _same(got, expected), (name, contract, got, expected)


@pytest.mark.parametrize(
    ("a", "b", "r", "unsigned", "contract"),
    [
        ("i8", "i16", "i32", True, False),
        ("f16", "bf16", "f32", False, True),
        ("bf16", "f64", "f64", False, False),
    ],
)
def test_the_scalar_lowering_is_the_same_ops_for_every_shape(
    a: str, b: str, r: str, unsigned: bool, contract: bool
) -> None:
    """Why the scalar pipeline compiles one shape (`SCALAR_SHAPES`): its
    loops hold the same ops whatever the shape (no vector tails)."""
    module = _parse(_module(a, b, r, unsigned, contract, range(len(SHAPES))))
    ConvertMatrixToAffinePass(vector_bits=0).apply(Context(), module)
    ops = {
        f.sym_name.data: Counter(op.name for op in f.walk())
        for f in module.ops
        if isinstance(f, FuncOp)
    }
    for kind in ("matmul", "matmul_add", "matvec"):
        assert ops[f"{kind}0"] == ops[f"{kind}1"], kind

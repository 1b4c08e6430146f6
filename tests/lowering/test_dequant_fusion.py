"""Dequantization fused into its consumer: an `arbfp.convert_from`, an exact
widening `cast` and a multiply by a splat scale feeding a product are decoded
in registers (no buffer of the wider type: the lowered code allocates only
the product's own buffers), and the compiled code equals the interpreter bit
for bit, with column-major and row-major weights (row-major ones read in
tiles transposed in registers, remainders included)."""

import re

import numpy as np
import pytest
from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.parser import Parser

from mx.frontend import mx_context
from mx.interpreters import run_function
from mx.jit import compile_module
from mx.lowering.matrix_to_affine.convert_matrix_to_affine import (
    ConvertMatrixToAffinePass,
)

ROWS, DEPTH, COLS = 40, 40, 6
"""Two tiles of 16 rows and 8 more; two steps of 16 columns and 8 more."""


def _module(layout: str) -> str:
    q = f"!matrix.matrix<{ROWS}x{DEPTH}xi8>"
    h = f"!matrix.matrix<{ROWS}x{DEPTH}xf16>"
    w = f"!matrix.matrix<{ROWS}x{DEPTH}xf32>"
    wi = f"!matrix.matrix<{ROWS}x{DEPTH}xi32>"
    b = f"!matrix.matrix<{DEPTH}x{COLS}xf32>"
    c = f"!matrix.matrix<{ROWS}x{COLS}xf32>"
    x, xi, y, yi = (
        f"vector<{DEPTH}xf32>",
        f"vector<{DEPTH}xi32>",
        f"vector<{ROWS}xf32>",
        f"vector<{ROWS}xi32>",
    )
    return f"""
func.func @fp8_matvec(%mem: memref<?xi8>, %x: {x}, %s: f32) -> {y} {{
  %q = matrix.{layout}_load %mem[0] : memref<?xi8> -> {q}
  %d = arbfp.convert_from f8e4m3fn %q : {q} to {w}
  %k = matrix.splat %s : {w}
  %m = matrix.mul %d, %k : {w}
  %y = matrix.matvec %m, %x : {w}, {x} -> {y}
  func.return %y : {y}
}}
func.func @fp8_matmul(%mem: memref<?xi8>, %b: {b}) -> {c} {{
  %q = matrix.{layout}_load %mem[0] : memref<?xi8> -> {q}
  %d = arbfp.convert_from f8e5m2 %q : {q} to {w}
  %y = matrix.matmul %d, %b : {w}, {b} -> {c}
  func.return %y : {c}
}}
func.func @f16_matvec(%mem: memref<?xf16>, %x: {x}) -> {y} {{
  %h = matrix.{layout}_load %mem[0] : memref<?xf16> -> {h}
  %d = matrix.cast %h : {h} to {w}
  %y = matrix.matvec %d, %x : {w}, {x} -> {y}
  func.return %y : {y}
}}
func.func @u8_matvec(%mem: memref<?xi8>, %x: {xi}) -> {yi} {{
  %q = matrix.{layout}_load %mem[0] : memref<?xi8> -> {q}
  %d = matrix.cast %q {{unsigned}} : {q} to {wi}
  %y = matrix.matvec %d, %x : {wi}, {xi} -> {yi}
  func.return %y : {yi}
}}
"""


def _parse(text: str) -> ModuleOp:
    return Parser(mx_context(), text).parse_module()


@pytest.mark.parametrize("layout", ["column_major", "row_major"])
def test_no_wider_temporary(layout: str) -> None:
    # The lowering alone (no canonicalization, which would turn the casts
    # into mixed-precision products): it decodes in registers.
    module = _parse(_module(layout))
    ConvertMatrixToAffinePass().apply(Context(), module)
    text = str(module)
    allocations = re.findall(r"memref\.alloca?\(\).*: (memref<[^>]*>)", text)
    assert allocations, "the products' own buffers"
    whole = [a for a in allocations if a.startswith(f"memref<{DEPTH}x{ROWS}x")]
    # Row-major weights: matvec reads them in tiles, matmul from a
    # column-major copy of the bytes (decoded where the product reads them).
    narrow_copies = [f"memref<{DEPTH}x{ROWS}xi8>"] if layout == "row_major" else []
    assert whole == narrow_copies, allocations
    # (the f8e4m3fn matvec has a kernel of its own, decoded_matvec.py; the
    # f8e5m2 product decodes vector blocks)
    assert re.search(r"arbfp.convert_from f8e5m2 %\S+ : vector<\d+xi8>", text)


def _fp8_codes(rng: np.random.Generator, n: int) -> np.ndarray:
    """Every finite f8e4m3fn/f8e5m2 encoding class, subnormals included."""
    codes = rng.integers(0, 256, n).astype(np.uint8)
    codes[(codes & 0x7F) >= 0x7C] = 0x01  # no inf/NaN: compared bit for bit
    return codes


@pytest.mark.parametrize("layout", ["column_major", "row_major"])
def test_jit_equals_interpreter(layout: str) -> None:
    text = _module(layout)
    module = _parse(text)
    compiled = compile_module(text)
    rng = np.random.default_rng(3)
    codes = _fp8_codes(rng, ROWS * DEPTH)
    halves = (rng.standard_normal(ROWS * DEPTH) * 8).astype(np.float16)
    x = rng.standard_normal(DEPTH).astype(np.float32)
    xi = rng.integers(-1000, 1000, DEPTH).astype(np.int32)
    b = rng.standard_normal((DEPTH, COLS)).astype(np.float32)
    for name, args in (
        ("fp8_matvec", [codes, x, np.float32(0.125)]),
        ("fp8_matmul", [codes, b]),
        ("f16_matvec", [halves, x]),
        ("u8_matvec", [codes, xi]),
    ):
        (expected,) = run_function(module, name, *args)
        got = np.asarray(compiled[name](*args))
        want = np.asarray(expected, dtype=got.dtype)
        assert np.array_equal(got.view(np.uint32), want.view(np.uint32)), name


def test_row_major_fp8_matvec_equals_numpy() -> None:
    """A reference that shares nothing with mx: ml_dtypes decodes, NumPy
    sums each row in k order in f32 (mx's strict order)."""
    import ml_dtypes

    compiled = compile_module(_module("row_major"))
    rng = np.random.default_rng(5)
    codes = _fp8_codes(rng, ROWS * DEPTH)
    x = rng.standard_normal(DEPTH).astype(np.float32)
    scale = np.float32(0.375)
    weights = codes.view(ml_dtypes.float8_e4m3fn).astype(np.float32)
    m = weights.reshape(ROWS, DEPTH) * scale
    want = m[:, 0] * x[0]
    for k in range(1, DEPTH):
        want = want + m[:, k] * x[k]
    got = np.asarray(compiled["fp8_matvec"](codes, x, scale))
    assert np.array_equal(got.view(np.uint32), want.view(np.uint32))

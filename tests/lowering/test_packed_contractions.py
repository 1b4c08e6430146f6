"""MX matvec/matmul: a packed i4 load feeding `arbfp.scaled_convert_from`
feeding a contraction is decoded in registers inside the product's loop
nest (vector blocks for a column-major packed operand with even offset and
stride, element by element otherwise). The JIT must agree with the
interpreter bit for bit (no fastmath: the rounding order is fixed), NaN
blocks, zero and extreme scales included.
"""

from typing import Any

import numpy as np
import numpy.typing as npt
import pytest
from xdsl.parser import Parser

from mx.frontend import mx_context
from mx.interpreters import run_function
from mx.jit import compile_module

Array = npt.NDArray[Any]


def _parse(source: str) -> Any:
    return Parser(mx_context(), source).parse_module()


def _scales(rng: np.random.Generator, count: int, scale: str) -> Array:
    """Mostly moderate scales, with NaN and the extremes mixed in."""
    if scale == "f8e8m0fnu":
        codes = rng.integers(112, 142, count)
        special = [0xFF, 0x00, 0xFE, 0x01]
    else:  # f8e4m3fn: a signed multiplier
        codes = rng.integers(0x20, 0x60, count) | (rng.integers(0, 2, count) << 7)
        special = [0x7F, 0x00, 0x80, 0x7E]
    codes[rng.choice(count, size=min(count, 4), replace=False)] = special[:count]
    return codes.astype(np.uint8)


def _same(actual: Any, expected: Any) -> bool:
    a, b = np.asarray(actual), np.asarray(expected)
    return a.shape == b.shape and a.tobytes() == b.tobytes()


MATVECS = [
    # rows, cols, layout, offset, stride, block, scale format, bias
    (48, 64, "column_major", 0, 48, 32, "f8e8m0fnu", False),
    (48, 64, "column_major", 2, 50, 32, "f8e8m0fnu", True),
    (33, 32, "column_major", 0, 34, 16, "f8e4m3fn", False),
    (20, 64, "row_major", 0, 64, 32, "f8e8m0fnu", True),
    (16, 32, "column_major", 1, 16, 32, "f8e8m0fnu", False),
]


@pytest.mark.parametrize("case", MATVECS, ids=str)
def test_mx_matvec_matches_the_interpreter(
    case: tuple[int, int, str, int, int, int, str, bool],
) -> None:
    rows, cols, layout, offset, stride, block, scale, bias = case
    w = f"!matrix.matrix<{rows}x{cols}xi4>"
    s = f"!matrix.matrix<{rows}x{cols // block}xi8>"
    f = f"!matrix.matrix<{rows}x{cols}xf32>"
    b_arg = f", %b: vector<{rows}xf32>" if bias else ""
    b_use, b_type = (", %b", f", vector<{rows}xf32>") if bias else ("", "")
    source = f"""
func.func @mv(%w: memref<?xi8>, %s: memref<?xi8>, %x: vector<{cols}xf32>{b_arg}) -> vector<{rows}xf32> {{
  %q = matrix.{layout}_load %w[{offset}] stride {stride} packed : memref<?xi8> -> {w}
  %sc = matrix.column_major_load %s[0] : memref<?xi8> -> {s}
  %f = arbfp.scaled_convert_from f4e2m1fn %q, %sc block {block} scale {scale} : {w}, {s} to {f}
  %y = matrix.matvec %f, %x{b_use} : {f}, vector<{cols}xf32>{b_type} -> vector<{rows}xf32>
  func.return %y : vector<{rows}xf32>
}}
"""
    rng = np.random.default_rng(rows * cols + offset)
    leading = rows if layout == "column_major" else cols
    major = cols if layout == "column_major" else rows
    size = (offset + (major - 1) * stride + leading + 1) // 2 + 1
    args: list[Array] = [
        rng.integers(0, 256, size).astype(np.uint8),
        _scales(rng, rows * cols // block, scale),
        rng.standard_normal(cols).astype(np.float32),
    ]
    if bias:
        args.append(rng.standard_normal(rows).astype(np.float32))
    actual = compile_module(source).mv(*(a.copy() for a in args))
    (expected,) = run_function(_parse(source), "mv", *(a.copy() for a in args))
    assert _same(actual, expected)
    assert np.isnan(expected).any() and np.isfinite(expected).any()


def test_mx_matmul_factors_match_the_interpreter() -> None:
    """Block-scaled packed weights as the left factor (column-major: vector
    blocks) and as the right factor (row-major, NVFP4 scales: elements)."""
    source = """
func.func @mm(%w: memref<?xi8>, %s: memref<?xi8>, %b: !matrix.matrix<64x8xf32>, %w2: memref<?xi8>, %s2: memref<?xi8>, %a: !matrix.matrix<8x32xf32>) -> (!matrix.matrix<32x8xf32>, !matrix.matrix<8x64xf32>) {
  %q = matrix.column_major_load %w[0] packed : memref<?xi8> -> !matrix.matrix<32x64xi4>
  %sc = matrix.column_major_load %s[0] : memref<?xi8> -> !matrix.matrix<32x2xi8>
  %f = arbfp.scaled_convert_from f4e2m1fn %q, %sc block 32 : !matrix.matrix<32x64xi4>, !matrix.matrix<32x2xi8> to !matrix.matrix<32x64xf32>
  %y = matrix.matmul %f, %b : !matrix.matrix<32x64xf32>, !matrix.matrix<64x8xf32> -> !matrix.matrix<32x8xf32>
  %q2 = matrix.row_major_load %w2[2] stride 68 packed : memref<?xi8> -> !matrix.matrix<32x64xi4>
  %sc2 = matrix.row_major_load %s2[0] : memref<?xi8> -> !matrix.matrix<32x4xi8>
  %f2 = arbfp.scaled_convert_from f4e2m1fn %q2, %sc2 block 16 scale f8e4m3fn : !matrix.matrix<32x64xi4>, !matrix.matrix<32x4xi8> to !matrix.matrix<32x64xf32>
  %z = matrix.matmul %a, %f2 : !matrix.matrix<8x32xf32>, !matrix.matrix<32x64xf32> -> !matrix.matrix<8x64xf32>
  func.return %y, %z : !matrix.matrix<32x8xf32>, !matrix.matrix<8x64xf32>
}
"""
    rng = np.random.default_rng(7)
    args = [
        rng.integers(0, 256, 32 * 64 // 2).astype(np.uint8),
        _scales(rng, 64, "f8e8m0fnu"),
        rng.standard_normal((64, 8)).astype(np.float32),
        rng.integers(0, 256, (2 + 31 * 68 + 64) // 2 + 1).astype(np.uint8),
        _scales(rng, 128, "f8e4m3fn"),
        rng.standard_normal((8, 32)).astype(np.float32),
    ]
    actual = compile_module(source).mm(*(a.copy() for a in args))
    expected = run_function(_parse(source), "mm", *(a.copy() for a in args))
    for a, e in zip(actual, expected, strict=True):
        assert _same(a, e)
        assert np.isnan(e).any() and np.isfinite(e).any()

"""Calling JIT-compiled functions whose arguments and results are matrices."""

import ml_dtypes
import numpy as np
import pytest

from mx.errors import CompileError
from mx.jit import compile_module

SOURCE = """
func.func @f(%a: !matrix.matrix<2x3xf32>, %b: !matrix.matrix<3x4xf32>, %s: f32)
    -> (!matrix.matrix<2x4xf32>, f32, !matrix.matrix<3x2xf32>) {
  %p = matrix.matmul %a, %b : !matrix.matrix<2x3xf32>, !matrix.matrix<3x4xf32> -> !matrix.matrix<2x4xf32>
  %t = matrix.transpose %a : !matrix.matrix<2x3xf32> -> !matrix.matrix<3x2xf32>
  %e = matrix.extract %a[1, 2] : !matrix.matrix<2x3xf32>
  %x = arith.addf %e, %s : f32
  func.return %p, %x, %t : !matrix.matrix<2x4xf32>, f32, !matrix.matrix<3x2xf32>
}

func.func @scale(%a: !matrix.matrix<3x3xbf16>, %k: bf16) -> !matrix.matrix<3x3xbf16> {
  %s = matrix.splat %k : !matrix.matrix<3x3xbf16>
  %r = matrix.mul %a, %s : !matrix.matrix<3x3xbf16>
  func.return %r : !matrix.matrix<3x3xbf16>
}
"""


def test_matrix_arguments_and_results_are_2d_arrays() -> None:
    module = compile_module(SOURCE)
    rng = np.random.default_rng(7)
    a = rng.standard_normal((2, 3)).astype(np.float32)
    b = rng.standard_normal((3, 4)).astype(np.float32)
    product, element, transposed = module.f(a, b, np.float32(0.25))
    expected = np.zeros((2, 4), np.float32)
    for r in range(
        2
    ):  # docs/matrix-dialect.md's order: ((a0*b0 + a1*b1) + a2*b2), rounded to f32
        for c in range(4):
            acc = a[r, 0] * b[0, c]
            for k in range(1, 3):
                acc = np.float32(acc + a[r, k] * b[k, c])
            expected[r, c] = acc
    assert product.shape == (2, 4) and product.dtype == np.float32
    np.testing.assert_array_equal(product, expected)
    assert element == np.float32(a[1, 2] + np.float32(0.25))
    np.testing.assert_array_equal(transposed, a.T)
    # The caller's arrays are not touched, whatever their memory order.
    a_f = np.asfortranarray(a)
    np.testing.assert_array_equal(module.f(a_f, b, np.float32(0))[0], expected)


def test_bf16_matrix_result() -> None:
    bf16 = np.dtype(ml_dtypes.bfloat16)
    a = (np.arange(9, dtype=np.float32).reshape(3, 3) / 7).astype(bf16)
    k = np.float32(3.3).astype(bf16)
    result = compile_module(SOURCE).scale(a, k)
    # ml_dtypes multiplies bf16 through f32 and rounds once: exact here.
    expected = (a.astype(np.float32) * np.float32(k)).astype(bf16)
    np.testing.assert_array_equal(result.view(np.uint16), expected.view(np.uint16))


def test_matrix_argument_checks() -> None:
    module = compile_module(SOURCE)
    b = np.zeros((3, 4), np.float32)
    with pytest.raises(ValueError, match=r"expected shape \(2, 3\)"):
        module.f(np.zeros((3, 2), np.float32), b, np.float32(0))
    with pytest.raises(TypeError, match="expected a 2x3 array of float32"):
        module.f(np.zeros((2, 3), np.float64), b, np.float32(0))


def test_invalid_input_is_rejected_before_lowering() -> None:
    """A terminator in the middle of a block must not become invalid LLVM IR."""
    source = """
func.func @f(%a: f32) -> f32 {
  func.return %a : f32
  %b = arith.addf %a, %a : f32
}
"""
    with pytest.raises(CompileError, match="must be the last operation") as error:
        compile_module(source)
    assert str(error.value).startswith("<string>:3:3: error: ")


def test_sub_byte_vectors_cross_the_boundary_one_element_per_byte() -> None:
    """`vector<16xi4>` is passed as one byte per element (LLVM's `<16 x i8>`,
    not its packed `<16 x i4>`); the callee ignores each byte's high bits and
    results have them zero."""
    module = compile_module(
        """
func.func @decode(%q: vector<16xi4>) -> vector<16xf32> {
  %r = arbfp.convert_from f4e2m1fn %q : vector<16xi4> to vector<16xf32>
  func.return %r : vector<16xf32>
}
func.func @negate(%q: vector<16xi4>) -> vector<16xi4> {
  %z = arith.constant dense<0> : vector<16xi4>
  %r = arith.subi %z, %q : vector<16xi4>
  func.return %r : vector<16xi4>
}
"""
    )
    codes = np.arange(16, dtype=np.uint8)
    expected = codes.view(ml_dtypes.float4_e2m1fn).astype(np.float32)
    np.testing.assert_array_equal(module.decode(codes), expected)
    np.testing.assert_array_equal(module.decode(codes | 0xF0), expected)
    negated = module.negate(codes.view(np.int8))
    assert negated.dtype == np.int8
    # -q in 4-bit two's complement, in the low bits of each byte.
    np.testing.assert_array_equal(negated, (16 - codes) % 16)


ONE_COLUMN = """
func.func @f(%w: !matrix.matrix<32x1xi8>, %x: vector<1xf32>) -> vector<32xf32> {
  %d = arbfp.convert_from f8e4m3fn %w : !matrix.matrix<32x1xi8> to !matrix.matrix<32x1xf32>
  %y = matrix.matvec %d, %x : !matrix.matrix<32x1xf32>, vector<1xf32> -> vector<32xf32>
  func.return %y : vector<32xf32>
}

func.func @column(%a: !matrix.matrix<1x5xf32>) -> !matrix.matrix<5x1xf32> {
  %t = matrix.transpose %a : !matrix.matrix<1x5xf32> -> !matrix.matrix<5x1xf32>
  func.return %t : !matrix.matrix<5x1xf32>
}
"""


def test_one_row_or_column_crosses_the_boundary_as_it_is() -> None:
    """A matrix of one row or one column is the same bytes C- or F-ordered:
    it crosses the boundary untransposed in every order, so the C-ordered
    32x1 FP8 weights NumPy makes get the fused kernel (as their transpose, a
    row-major matrix of 1-code rows, they got the cache-blocked one)."""
    module = compile_module(ONE_COLUMN)
    (remark,) = module.f.remarks
    assert "kernel: fused decode vector" in remark, remark
    codes = np.random.default_rng(3).integers(0, 256, (32, 1)).astype(np.uint8)
    x = np.array([0.375], np.float32)
    decoded = codes.view(ml_dtypes.float8_e4m3fn).astype(np.float32)
    # (a NaN code's product is a NaN, whatever its bits)
    want = (decoded[:, 0] * x[0]).astype(np.float32)
    for w in (codes, np.asfortranarray(codes), codes.T.copy().T):
        got = module.f(w, x)
        np.testing.assert_array_equal(got, want)
    a = np.arange(5, dtype=np.float32).reshape(1, 5)
    out = np.zeros((5, 1), np.float32, order="F")
    module.column(a, out=out)
    np.testing.assert_array_equal(out, a.T)
    np.testing.assert_array_equal(module.column(np.asfortranarray(a)), a.T)

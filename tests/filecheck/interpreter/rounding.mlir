// RUN: mx-run %s | filecheck %s
// Each step rounds to the element type: f16 and bf16 lose what f32 keeps,
// overflow goes to inf, and fma rounds once where mul then sub rounds twice.

func.func @main() -> (!matrix.matrix<1x3xf16>, !matrix.matrix<1x3xbf16>, !matrix.matrix<1x2xf32>) {
  // 2048 + 1 is not an f16 (11-bit significand): ties to even, 2048.
  %a = matrix.constant dense<[[2048.0, 2048.0, 65504.0]]> : !matrix.matrix<1x3xf16>
  %b = matrix.constant dense<[[1.0, 3.0, 65504.0]]> : !matrix.matrix<1x3xf16>
  %s = matrix.add %a, %b : !matrix.matrix<1x3xf16>
  // 256 + 1 is not a bf16 (8-bit significand).
  %c = matrix.constant dense<[[256.0, 256.0, 3.0e38]]> : !matrix.matrix<1x3xbf16>
  %d = matrix.constant dense<[[1.0, 3.0, 3.0e38]]> : !matrix.matrix<1x3xbf16>
  %t = matrix.add %c, %d : !matrix.matrix<1x3xbf16>
  // x = 1 + 2^-12: x*x = 1 + 2^-11 + 2^-24 rounds to 1 + 2^-11 in f32.
  %one_plus = arith.constant 1.000244140625 : f32
  %y = arith.constant -1.00048828125 : f32
  %x = matrix.splat %one_plus : !matrix.matrix<1x2xf32>
  %z = matrix.splat %y : !matrix.matrix<1x2xf32>
  %fused = matrix.fma %x, %x, %z : !matrix.matrix<1x2xf32>
  %p = matrix.mul %x, %x : !matrix.matrix<1x2xf32>
  %separate = matrix.add %p, %z : !matrix.matrix<1x2xf32>
  %e = matrix.extract %separate[0, 0] : !matrix.matrix<1x2xf32>
  %both = matrix.insert %e, %fused[0, 1] : !matrix.matrix<1x2xf32>
  func.return %s, %t, %both : !matrix.matrix<1x3xf16>, !matrix.matrix<1x3xbf16>, !matrix.matrix<1x2xf32>
}

// CHECK:      result #0 : !matrix.matrix<1x3xf16> =
// CHECK-NEXT:   [2048.0, 2052.0, inf]
// CHECK-NEXT: result #1 : !matrix.matrix<1x3xbf16> =
// CHECK-NEXT:   [256.0, 260.0, inf]
// CHECK-NEXT: result #2 : !matrix.matrix<1x2xf32> =
// CHECK-NEXT:   [5.9604645e-08, 0.0]

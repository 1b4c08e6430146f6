// RUN: mx-run %s | filecheck %s
// Integer matrices wrap; div truncates toward zero (signed) or divides the
// unsigned reinterpretation ({unsigned}); casts follow C.

func.func @main() -> (!matrix.matrix<2x3xi8>, !matrix.matrix<2x3xi8>, !matrix.matrix<2x3xi8>, !matrix.matrix<2x3xi8>, !matrix.matrix<2x3xf32>, !matrix.matrix<2x3xi16>, !matrix.matrix<2x3xi8>) {
  %a = matrix.constant dense<[[127, -128, -7], [7, 100, -1]]> : !matrix.matrix<2x3xi8>
  %b = matrix.constant dense<[[1, 2, 2], [-2, 3, 3]]> : !matrix.matrix<2x3xi8>
  %sum = matrix.add %a, %b : !matrix.matrix<2x3xi8>
  %prod = matrix.mul %a, %b : !matrix.matrix<2x3xi8>
  %q = matrix.div %a, %b : !matrix.matrix<2x3xi8>
  %uq = matrix.div %a, %b {unsigned} : !matrix.matrix<2x3xi8>
  %f = matrix.cast %a {unsigned} : !matrix.matrix<2x3xi8> to !matrix.matrix<2x3xf32>
  %w = matrix.cast %a : !matrix.matrix<2x3xi8> to !matrix.matrix<2x3xi16>
  %g = matrix.constant dense<[[-1.9, 1.9, -0.5], [127.9, -128.9, 0.0]]> : !matrix.matrix<2x3xf32>
  %t = matrix.cast %g : !matrix.matrix<2x3xf32> to !matrix.matrix<2x3xi8>
  func.return %sum, %prod, %q, %uq, %f, %w, %t : !matrix.matrix<2x3xi8>, !matrix.matrix<2x3xi8>, !matrix.matrix<2x3xi8>, !matrix.matrix<2x3xi8>, !matrix.matrix<2x3xf32>, !matrix.matrix<2x3xi16>, !matrix.matrix<2x3xi8>
}

// CHECK:      result #0 : !matrix.matrix<2x3xi8> =
// CHECK-NEXT:   [-128, -126,   -5]
// CHECK-NEXT:   [   5,  103,    2]
// CHECK-NEXT: result #1 : !matrix.matrix<2x3xi8> =
// CHECK-NEXT:   [127,   0, -14]
// CHECK-NEXT:   [-14,  44,  -3]
// CHECK-NEXT: result #2 : !matrix.matrix<2x3xi8> =
// CHECK-NEXT:   [127, -64,  -3]
// CHECK-NEXT:   [ -3,  33,   0]
// CHECK-NEXT: result #3 : !matrix.matrix<2x3xi8> =
// CHECK-NEXT:   [127,  64, 124]
// CHECK-NEXT:   [  0,  33,  85]
// CHECK-NEXT: result #4 : !matrix.matrix<2x3xf32> =
// CHECK-NEXT:   [127.0, 128.0, 249.0]
// CHECK-NEXT:   [  7.0, 100.0, 255.0]
// CHECK-NEXT: result #5 : !matrix.matrix<2x3xi16> =
// CHECK-NEXT:   [ 127, -128,   -7]
// CHECK-NEXT:   [   7,  100,   -1]
// CHECK-NEXT: result #6 : !matrix.matrix<2x3xi8> =
// CHECK-NEXT:   [  -1,    1,    0]
// CHECK-NEXT:   [ 127, -128,    0]

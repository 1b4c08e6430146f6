// RUN: mx-opt %s -p canonicalize | filecheck %s
// One rewrite per function (a fold is shown on several values where the
// rounding rules need them).

// Conversions of constants fold to constants (values worked out by hand from docs/arbfp-dialect.md).

// CHECK-LABEL: func.func @from_scalar
func.func @from_scalar() -> (f32, f16, bf16, f64, f16) {
  // 0x38 = 0.0111.000 in f8e4m3fn is 1.0
  %c38 = arith.constant 56 : i8
  // 0xFF is f8e8m0fnu's NaN
  %cff = arith.constant -1 : i8
  // 0x21 = 1.00.001 in f6e2m3fn is -(1/8 * 2^0) = -0.125 (subnormal)
  %c21 = arith.constant -31 : i6
  // 0xF0 = 11110.000 in f8e5m3fnu is 2^(30-15) = 32768
  %cf0 = arith.constant -16 : i8
  // 0xF8 in f8e5m3fnu is 2^16 = 65536: too large for f16, +inf
  %cf8 = arith.constant -8 : i8
  // CHECK-DAG: %[[ONE:.*]] = arith.constant 1.000000e+00 : f32
  // CHECK-DAG: %[[NAN:.*]] = arith.constant 0x{{.*}} : f16
  // CHECK-DAG: %[[NEG:.*]] = arith.constant -1.250000e-01 : bf16
  // CHECK-DAG: %[[BIG:.*]] = arith.constant 3.276800e+04 : f64
  // CHECK-DAG: %[[INF:.*]] = arith.constant 0x7c00 : f16
  // CHECK-NOT: arbfp
  // CHECK: func.return %[[ONE]], %[[NAN]], %[[NEG]], %[[BIG]], %[[INF]]
  %a = arbfp.convert_from f8e4m3fn %c38 : i8 to f32
  %b = arbfp.convert_from f8e8m0fnu %cff : i8 to f16
  %c = arbfp.convert_from f6e2m3fn %c21 : i6 to bf16
  %d = arbfp.convert_from f8e5m3fnu %cf0 : i8 to f64
  %e = arbfp.convert_from f8e5m3fnu %cf8 : i8 to f16
  func.return %a, %b, %c, %d, %e : f32, f16, bf16, f64, f16
}

// CHECK-LABEL: func.func @to_scalar
func.func @to_scalar() -> (i8, i8, i8, i8, i8, i4, i8, i8) {
  %x = arith.constant 500.0 : f32
  %y = arith.constant -1.0e+06 : f64
  %t = arith.constant 1.75 : f16
  // 1 + 2^-4 + 2^-30 rounds once to 1.125 in f8e4m3fn (0x39); through f32 it would be 1.0
  %z = arith.constant 1.0625000009313226 : f64
  %n = arith.constant -3.0 : f32
  // CHECK-DAG: %[[INF:.*]] = arith.constant 127 : i8
  // CHECK-DAG: %[[MAX:.*]] = arith.constant 126 : i8
  // CHECK-DAG: %[[NEGMAX:.*]] = arith.constant -5 : i8
  // CHECK-DAG: %[[UP:.*]] = arith.constant -128 : i8
  // CHECK-DAG: %[[ONCE:.*]] = arith.constant 57 : i8
  // CHECK-DAG: %[[FOUR:.*]] = arith.constant 6 : i4
  // CHECK-DAG: %[[UNAN:.*]] = arith.constant -1 : i8
  // CHECK-DAG: %[[ZERO:.*]] = arith.constant 0 : i8
  // CHECK-NOT: arbfp
  // CHECK: func.return %[[INF]], %[[MAX]], %[[NEGMAX]], %[[UP]], %[[ONCE]], %[[FOUR]], %[[UNAN]], %[[ZERO]]
  // 500 overflows f8e4m3fn (max 448): NaN (0x7F) to nearest, 448 (0x7E) toward zero
  %a = arbfp.convert_to f8e4m3fn %x : f32 to i8
  %b = arbfp.convert_to f8e4m3fn %x rounding toward_zero : f32 to i8
  // -1e6 saturates to f8e5m2's -57344 = 1.11110.11 = 0xFB
  %c = arbfp.convert_to f8e5m2 %y saturate : f64 to i8
  // 1.75 upward in f8e8m0fnu is 2 = 2^(128-127) = 0x80 (printed as -128)
  %d = arbfp.convert_to f8e8m0fnu %t rounding upward : f16 to i8
  %e = arbfp.convert_to f8e4m3fn %z : f64 to i8
  // 5.0 is the tie between f4e2m1fn's 4 (0.11.0, even) and 6 (0.11.1): 4 = 0x6
  %five = arith.constant 5.0 : f32
  %f = arbfp.convert_to f4e2m1fn %five : f32 to i4
  // negative into the unsigned f8e5m3fnu: NaN, or 0 with saturate
  %g = arbfp.convert_to f8e5m3fnu %n : f32 to i8
  %h = arbfp.convert_to f8e5m3fnu %n saturate : f32 to i8
  func.return %a, %b, %c, %d, %e, %f, %g, %h : i8, i8, i8, i8, i8, i4, i8, i8
}

// CHECK-LABEL: func.func @vectors
func.func @vectors() -> (vector<3xf16>, vector<2xi4>) {
  %v = arith.constant dense<[127, -1, 1]> : vector<3xi8>
  %w = arith.constant dense<[7.0, -0.2]> : vector<2xf64>
  // f8e5m2: 0x7F and 0xFF are NaN, 0x01 is 2^-16
  // CHECK-DAG: %{{.*}} = arith.constant dense<[0x7e00, 0x7e00, 1.525880e-05]> : vector<3xf16>
  // 7 rounds to f4e2m1fn's max 6 (0x7); -0.2 rounds to -0 (0x8)
  // CHECK-DAG: %{{.*}} = arith.constant dense<[7, -8]> : vector<2xi4>
  // CHECK-NOT: arbfp
  %g = arbfp.convert_from f8e5m2 %v : vector<3xi8> to vector<3xf16>
  %h = arbfp.convert_to f4e2m1fn %w : vector<2xf64> to vector<2xi4>
  func.return %g, %h : vector<3xf16>, vector<2xi4>
}

// Non-constant operands stay.
// CHECK-LABEL: func.func @not_constant
// CHECK-NEXT: arbfp.convert_from f8e4m3fn %b : i8 to f32
func.func @not_constant(%b: i8) -> f32 {
  %f = arbfp.convert_from f8e4m3fn %b : i8 to f32
  func.return %f : f32
}

// Matrix constants fold to matrix constants, element by element (row by row).
// CHECK-LABEL: func.func @matrices
func.func @matrices() -> (!matrix.matrix<2x3xf32>, !matrix.matrix<2x2xi4>, !matrix.matrix<1x2xi8>) {
  // f8e4m3fn: 0x38 = 1.0, 0xFF = NaN, 0x00 = 0, 0x01 = 2^-9, 0x7F = NaN, 0x80 = -0
  // CHECK-DAG: %[[A:.*]] = matrix.constant dense<{{\[}}[1.000000e+00, 0x7fc00000, 0.000000e+00], [0.001953125, 0x7fc00000, -0.000000e+00]]> : !matrix.matrix<2x3xf32>
  // 5 ties to 4 (0x6), -0.2 rounds to -0 (0x8), 7 and 1e30 overflow to the max 6 (0x7)
  // CHECK-DAG: %[[B:.*]] = matrix.constant dense<{{\[}}[6, -8], [7, 7]]> : !matrix.matrix<2x2xi4>
  // toward_zero saturate into f8e5m2: 1e6 -> 57344 (0x7B), -1.5 -> 0xBE (printed -66)
  // CHECK-DAG: %[[C:.*]] = matrix.constant dense<{{\[}}[123, -66]]> : !matrix.matrix<1x2xi8>
  // CHECK-NOT: arbfp
  // CHECK: func.return %[[A]], %[[B]], %[[C]]
  %q = matrix.constant dense<[[56, -1, 0], [1, 127, -128]]> : !matrix.matrix<2x3xi8>
  %a = arbfp.convert_from f8e4m3fn %q : !matrix.matrix<2x3xi8> to !matrix.matrix<2x3xf32>
  %x = matrix.constant dense<[[5.0, -0.2], [7.0, 1.0e30]]> : !matrix.matrix<2x2xf64>
  %b = arbfp.convert_to f4e2m1fn %x : !matrix.matrix<2x2xf64> to !matrix.matrix<2x2xi4>
  %y = matrix.constant dense<[[1.0e6, -1.5]]> : !matrix.matrix<1x2xbf16>
  %c = arbfp.convert_to f8e5m2 %y rounding toward_zero saturate : !matrix.matrix<1x2xbf16> to !matrix.matrix<1x2xi8>
  func.return %a, %b, %c : !matrix.matrix<2x3xf32>, !matrix.matrix<2x2xi4>, !matrix.matrix<1x2xi8>
}

// A conversion of a constant splat converts its one scalar, whatever the
// matrix's size.
// CHECK-LABEL: func.func @constant_splats
func.func @constant_splats() -> (!matrix.matrix<2x2xbf16>, !matrix.matrix<1000x1000xf16>) {
  // 0x21 in f6e2m3fn is -0.125
  // CHECK-DAG: %[[S:.*]] = arith.constant -1.250000e-01 : bf16
  // CHECK-DAG: %[[A:.*]] = matrix.splat %[[S]] : !matrix.matrix<2x2xbf16>
  // CHECK-DAG: %[[ONE:.*]] = arith.constant 1.000000e+00 : f16
  // CHECK-DAG: %[[B:.*]] = matrix.splat %[[ONE]] : !matrix.matrix<1000x1000xf16>
  // CHECK-NOT: arbfp
  // CHECK: func.return %[[A]], %[[B]]
  %c21 = arith.constant -31 : i6
  %s = matrix.splat %c21 : !matrix.matrix<2x2xi6>
  %a = arbfp.convert_from f6e2m3fn %s : !matrix.matrix<2x2xi6> to !matrix.matrix<2x2xbf16>
  %c38 = arith.constant 56 : i8
  %big = matrix.splat %c38 : !matrix.matrix<1000x1000xi8>
  %b = arbfp.convert_from f8e4m3fn %big : !matrix.matrix<1000x1000xi8> to !matrix.matrix<1000x1000xf16>
  func.return %a, %b : !matrix.matrix<2x2xbf16>, !matrix.matrix<1000x1000xf16>
}

// A conversion of a splat of a variable becomes a splat of the scalar's conversion.
// CHECK-LABEL: func.func @variable_splat
// CHECK-NEXT: %[[X:.*]] = arbfp.convert_to f8e4m3fn %x rounding upward : f32 to i8
// CHECK-NEXT: %[[C:.*]] = matrix.splat %[[X]] : !matrix.matrix<3x3xi8>
// CHECK-NEXT: func.return %[[C]]
func.func @variable_splat(%x: f32) -> !matrix.matrix<3x3xi8> {
  %xs = matrix.splat %x : !matrix.matrix<3x3xf32>
  %c = arbfp.convert_to f8e4m3fn %xs rounding upward : !matrix.matrix<3x3xf32> to !matrix.matrix<3x3xi8>
  func.return %c : !matrix.matrix<3x3xi8>
}

// Matrix constants fold up to 4096 elements (as the matrix folds)...
// CHECK-LABEL: func.func @size_limit_folds
// CHECK-NEXT: %[[SMALL:.*]] = matrix.constant dense<1.000000e+00> : !matrix.matrix<64x64xf32>
// CHECK-NEXT: func.return %[[SMALL]]
func.func @size_limit_folds() -> !matrix.matrix<64x64xf32> {
  %q = matrix.constant dense<56> : !matrix.matrix<64x64xi8>
  %a = arbfp.convert_from f8e4m3fn %q : !matrix.matrix<64x64xi8> to !matrix.matrix<64x64xf32>
  func.return %a : !matrix.matrix<64x64xf32>
}

// ...larger ones stay.
// CHECK-LABEL: func.func @size_limit_stays
// CHECK-NEXT: %[[LARGE:.*]] = matrix.constant dense<56> : !matrix.matrix<65x64xi8>
// CHECK-NEXT: %[[B:.*]] = arbfp.convert_from f8e4m3fn %[[LARGE]] : !matrix.matrix<65x64xi8> to !matrix.matrix<65x64xf32>
// CHECK-NEXT: func.return %[[B]]
func.func @size_limit_stays() -> !matrix.matrix<65x64xf32> {
  %r = matrix.constant dense<56> : !matrix.matrix<65x64xi8>
  %b = arbfp.convert_from f8e4m3fn %r : !matrix.matrix<65x64xi8> to !matrix.matrix<65x64xf32>
  func.return %b : !matrix.matrix<65x64xf32>
}

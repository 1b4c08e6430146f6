// NaN, infinities and hexadecimal literals survive printing: a printed module
// parses back to the same bits (MLIR reads a hexadecimal element of a float
// `dense<>` as its bit pattern, per element or as the whole raw data).
// RUN: mx-opt %s | filecheck %s
// RUN: mx-opt %s | mx-opt | filecheck %s

// CHECK-LABEL: func.func @per_element
// CHECK: matrix.constant dense<{{\[\[}}0x7fc00000, 0xff800000], [0x7f800000, 0x7fa00001]]> : !matrix.matrix<2x2xf32>
func.func @per_element() -> !matrix.matrix<2x2xf32> {
  %c = matrix.constant dense<[[0x7fc00000, 0xff800000], [0x7F800000, 0x7fa00001]]> : !matrix.matrix<2x2xf32>
  func.return %c : !matrix.matrix<2x2xf32>
}

// A finite value given in hex prints in decimal.
// CHECK-LABEL: func.func @hex_finite
// CHECK: matrix.constant dense<{{\[\[}}1.000000e+00, -2.000000e+00]]> : !matrix.matrix<1x2xf16>
func.func @hex_finite() -> !matrix.matrix<1x2xf16> {
  %c = matrix.constant dense<[[0x3c00, 0xc000]]> : !matrix.matrix<1x2xf16>
  func.return %c : !matrix.matrix<1x2xf16>
}

// CHECK-LABEL: func.func @splat_nan_payload
// CHECK: matrix.constant dense<0x7c01> : !matrix.matrix<2x2xf16>
// CHECK: matrix.constant dense<0xff81> : !matrix.matrix<1x3xbf16>
// CHECK: matrix.constant dense<0x7ff0000000000001> : !matrix.matrix<1x1xf64>
func.func @splat_nan_payload() -> (!matrix.matrix<2x2xf16>, !matrix.matrix<1x3xbf16>, !matrix.matrix<1x1xf64>) {
  %a = matrix.constant dense<0x7c01> : !matrix.matrix<2x2xf16>
  %b = matrix.constant dense<0xff81> : !matrix.matrix<1x3xbf16>
  %c = matrix.constant dense<0x7ff0000000000001> : !matrix.matrix<1x1xf64>
  func.return %a, %b, %c : !matrix.matrix<2x2xf16>, !matrix.matrix<1x3xbf16>, !matrix.matrix<1x1xf64>
}

// The whole literal as a hexadecimal string of the raw little-endian data.
// CHECK-LABEL: func.func @raw_data
// CHECK: matrix.constant dense<{{\[\[}}1.000000e+00, 0x7fc00000]]> : !matrix.matrix<1x2xf32>
// CHECK: matrix.constant dense<0xfc00> : !matrix.matrix<2x2xf16>
func.func @raw_data() -> (!matrix.matrix<1x2xf32>, !matrix.matrix<2x2xf16>) {
  %a = matrix.constant dense<"0x0000803F0000C07F"> : !matrix.matrix<1x2xf32>
  %b = matrix.constant dense<"0x00FC"> : !matrix.matrix<2x2xf16>
  func.return %a, %b : !matrix.matrix<1x2xf32>, !matrix.matrix<2x2xf16>
}

// Above the type's range rounds to infinity, as arith.constant does.
// CHECK-LABEL: func.func @overflow
// CHECK: matrix.constant dense<{{\[\[}}0x7c00, 0xfc00, 6.550400e+04]]> : !matrix.matrix<1x3xf16>
// CHECK: arith.constant dense<[0x7c00, 1.000000e+00]> : vector<2xf16>
func.func @overflow() -> (!matrix.matrix<1x3xf16>, vector<2xf16>) {
  %a = matrix.constant dense<[[70000.0, -1.0e10, 65504.0]]> : !matrix.matrix<1x3xf16>
  %b = arith.constant dense<[70000.0, 1.0]> : vector<2xf16>
  func.return %a, %b : !matrix.matrix<1x3xf16>, vector<2xf16>
}

// Builtin dense attributes follow the same rules.
// CHECK-LABEL: func.func @builtin_dense
// CHECK: arith.constant dense<[0x7fc00000, 0xff800000, 2.000000e+00]> : vector<3xf32>
func.func @builtin_dense() -> vector<3xf32> {
  %a = arith.constant dense<[0x7fc00000, 0xff800000, 2.0]> : vector<3xf32>
  func.return %a : vector<3xf32>
}

// RUN: mx-opt %s -p canonicalize | filecheck %s

// Block-scaled conversions of constants fold to constants (values worked out by hand from docs/arbfp-block-scaled.md).

// CHECK-LABEL: func.func @decode_vector
func.func @decode_vector() -> vector<6xf32> {
  // f4e2m1fn 0x1 = 0.5, 0x2 = 1.0, 0x7 = 6.0, 0xF = -6.0, 0x3 = 1.5;
  // e8m0 scales 0x7F = 1, 0x80 = 2, 0xFF = NaN (the whole block)
  %q = arith.constant dense<[1, 2, 7, -1, 3, 0]> : vector<6xi4>
  %s = arith.constant dense<[127, -128, -1]> : vector<3xi8>
  // CHECK: %[[D:.*]] = arith.constant dense<[5.000000e-01, 1.000000e+00, 1.200000e+01, -1.200000e+01, 0x7fc00000, 0x7fc00000]> : vector<6xf32>
  // CHECK-NEXT: func.return %[[D]]
  %d = arbfp.scaled_convert_from f4e2m1fn %q, %s block 2 : vector<6xi4>, vector<3xi8> to vector<6xf32>
  func.return %d : vector<6xf32>
}

// CHECK-LABEL: func.func @decode_matrix
func.func @decode_matrix() -> !matrix.matrix<2x2xf64> {
  // e4m3fn scales (NVFP4-style): 0xB8 = -1.0, 0x01 = 2^-9 (subnormal)
  %q = matrix.constant dense<[[3, -5], [7, 1]]> : !matrix.matrix<2x2xi4>
  %s = matrix.constant dense<[[-72], [1]]> : !matrix.matrix<2x1xi8>
  // 1.5 * -1 = -1.5; 0xB = -1.5 * -1 = 1.5; 6 * 2^-9; 0.5 * 2^-9
  // CHECK: matrix.constant dense<{{\[\[}}-1.500000e+00, 1.500000e+00], [0.01171875, 0.0009765625]]> : !matrix.matrix<2x2xf64>
  %d = arbfp.scaled_convert_from f4e2m1fn %q, %s block 2 scale f8e4m3fn : !matrix.matrix<2x2xi4>, !matrix.matrix<2x1xi8> to !matrix.matrix<2x2xf64>
  func.return %d : !matrix.matrix<2x2xf64>
}

// CHECK-LABEL: func.func @encode_vector
func.func @encode_vector() -> (vector<4xi4>, vector<2xi8>) {
  // block [0.1, -3]: amax 3 = 1.5 * 2^1, emax 2, scale 2^-1 (0x7E): 0.2 -> 0, -6 -> 0xF
  // block [6, 12]: amax 12 = 1.5 * 2^3, scale 2^1 (0x80): 3 -> 0x5, 6 -> 0x7
  %x = arith.constant dense<[0.1, -3.0, 6.0, 12.0]> : vector<4xf32>
  // CHECK-DAG: %[[Q:.*]] = arith.constant dense<[0, -1, 5, 7]> : vector<4xi4>
  // CHECK-DAG: %[[S:.*]] = arith.constant dense<[126, -128]> : vector<2xi8>
  // CHECK: func.return %[[Q]], %[[S]]
  %q, %s = arbfp.scaled_convert_to f4e2m1fn %x block 2 : vector<4xf32> to vector<4xi4>, vector<2xi8>
  func.return %q, %s : vector<4xi4>, vector<2xi8>
}

// CHECK-LABEL: func.func @encode_ceil_and_modes
func.func @encode_ceil_and_modes() -> (vector<1xi4>, vector<1xi8>, vector<1xi4>, vector<1xi8>, vector<1xi4>, vector<1xi8>) {
  // 13: floor rule scale 2^1 (0x80), 6.5 saturates to 6 (0x7);
  // ceil rule: 13 / 6 > 2 -> scale 2^2 (0x81), 3.25 -> 3 (0x5), upward 4 (0x6)
  %x = arith.constant dense<13.0> : vector<1xf32>
  // CHECK-DAG: %[[Q1:.*]] = arith.constant dense<7> : vector<1xi4>
  // CHECK-DAG: %[[S1:.*]] = arith.constant dense<-128> : vector<1xi8>
  // CHECK-DAG: %[[Q2:.*]] = arith.constant dense<5> : vector<1xi4>
  // CHECK-DAG: %[[S2:.*]] = arith.constant dense<-127> : vector<1xi8>
  // CHECK-DAG: %[[Q3:.*]] = arith.constant dense<6> : vector<1xi4>
  // CHECK-DAG: %[[S3:.*]] = arith.constant dense<-127> : vector<1xi8>
  // CHECK: func.return %[[Q1]], %[[S1]], %[[Q2]], %[[S2]], %[[Q3]], %[[S3]]
  %q1, %s1 = arbfp.scaled_convert_to f4e2m1fn %x block 1 : vector<1xf32> to vector<1xi4>, vector<1xi8>
  %q2, %s2 = arbfp.scaled_convert_to f4e2m1fn %x block 1 scale_rule ceil : vector<1xf32> to vector<1xi4>, vector<1xi8>
  %q3, %s3 = arbfp.scaled_convert_to f4e2m1fn %x block 1 rounding upward scale_rule ceil : vector<1xf32> to vector<1xi4>, vector<1xi8>
  func.return %q1, %s1, %q2, %s2, %q3, %s3 : vector<1xi4>, vector<1xi8>, vector<1xi4>, vector<1xi8>, vector<1xi4>, vector<1xi8>
}

// CHECK-LABEL: func.func @encode_special_blocks
func.func @encode_special_blocks() -> (!matrix.matrix<2x2xi8>, !matrix.matrix<2x1xi8>, vector<4xi8>, vector<2xi8>) {
  // an all-zero block: scale 0x00 (2^-127), ±0 kept;
  // 2^-140 clamps at 2^-127: 2^-13 is below half f8e4m3fn's least subnormal 2^-9 -> 0
  %x = matrix.constant dense<[[0.0, -0.0], [7.17464814e-43, 1.0e-45]]> : !matrix.matrix<2x2xf32>
  // CHECK-DAG: matrix.constant dense<{{\[\[}}0, -128], [0, 0]]> : !matrix.matrix<2x2xi8>
  // CHECK-DAG: matrix.constant dense<0> : !matrix.matrix<2x1xi8>
  %q, %s = arbfp.scaled_convert_to f8e4m3fn %x block 2 : !matrix.matrix<2x2xf32> to !matrix.matrix<2x2xi8>, !matrix.matrix<2x1xi8>
  // an inf block and a NaN block, made by a fold: f8e5m2 0x7C is inf, 0x3C is 1.0,
  // scale 0xFF is NaN; then scale 0xFF and elements 0 for both
  %e = arith.constant dense<[124, 60, 60, 60]> : vector<4xi8>
  %c = arith.constant dense<[127, -1]> : vector<2xi8>
  %y = arbfp.scaled_convert_from f8e5m2 %e, %c block 2 : vector<4xi8>, vector<2xi8> to vector<4xf32>
  // CHECK-DAG: arith.constant dense<0> : vector<4xi8>
  // CHECK-DAG: arith.constant dense<-1> : vector<2xi8>
  %p, %t = arbfp.scaled_convert_to f8e4m3fn %y block 2 : vector<4xf32> to vector<4xi8>, vector<2xi8>
  func.return %q, %s, %p, %t : !matrix.matrix<2x2xi8>, !matrix.matrix<2x1xi8>, vector<4xi8>, vector<2xi8>
}

// CHECK-LABEL: func.func @not_constant
func.func @not_constant(%q: vector<2xi4>) -> vector<2xf32> {
  %s = arith.constant dense<127> : vector<1xi8>
  // CHECK: arbfp.scaled_convert_from f4e2m1fn %q, %s block 2
  %d = arbfp.scaled_convert_from f4e2m1fn %q, %s block 2 : vector<2xi4>, vector<1xi8> to vector<2xf32>
  func.return %d : vector<2xf32>
}

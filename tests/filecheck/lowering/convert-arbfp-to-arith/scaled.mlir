// RUN: mx-opt %s -p convert-arbfp-to-arith | filecheck %s

// Block-scaled conversions of 1-D vectors: the scales are broadcast to the
// element lanes with one vector.shuffle; a block's largest magnitude is the
// maximum of N shuffles, each picking lane t of every block. Branch-free:
// no compare, no select, no arbfp op left.

// CHECK-LABEL: func.func @decode
func.func @decode(%q: vector<4xi8>, %s: vector<2xi8>) -> vector<4xf32> {
  // CHECK:      vector.shuffle %s, %s [0, 0, 1, 1] : vector<2xi8>, vector<2xi8>
  // (element value and scale value in f32, one multiply: a single rounding)
  // CHECK:      arith.extf {{.*}} : vector<4xf16> to vector<4xf32>
  // CHECK:      arith.mulf {{.*}} : vector<4xf32>
  // CHECK:      %[[P:.*]] = arith.mulf {{.*}} : vector<4xf32>
  // CHECK-NEXT: func.return %[[P]] : vector<4xf32>
  // CHECK-NOT:  arbfp
  %r = arbfp.scaled_convert_from f8e4m3fn %q, %s block 2 : vector<4xi8>, vector<2xi8> to vector<4xf32>
  func.return %r : vector<4xf32>
}

// CHECK-LABEL: func.func @decode_bf16
func.func @decode_bf16(%q: vector<2xi8>, %s: vector<1xi8>) -> vector<2xbf16> {
  // CHECK:      vector.shuffle %s, %s [0, 0] : vector<1xi8>, vector<1xi8>
  // (the product in f32, narrowed once: still a single rounding)
  // CHECK:      arith.mulf {{.*}} : vector<2xf32>
  // CHECK:      %[[N:.*]] = arith.truncf %{{.*}} : vector<2xf32> to vector<2xbf16>
  // CHECK-NEXT: func.return %[[N]]
  %r = arbfp.scaled_convert_from f8e5m2 %q, %s block 2 : vector<2xi8>, vector<1xi8> to vector<2xbf16>
  func.return %r : vector<2xbf16>
}

// CHECK-LABEL: func.func @decode_f64
func.func @decode_f64(%q: vector<2xi8>, %s: vector<2xi8>) -> vector<2xf64> {
  // CHECK: vector.shuffle %s, %s [0, 1]
  // CHECK: arith.mulf {{.*}} : vector<2xf64>
  %r = arbfp.scaled_convert_from f8e4m3fn %q, %s block 1 scale f8e4m3fn : vector<2xi8>, vector<2xi8> to vector<2xf64>
  func.return %r : vector<2xf64>
}

// CHECK-LABEL: func.func @encode
func.func @encode(%x: vector<6xf32>) -> vector<6xi8> {
  // |x| bits, then lane t of each of the two blocks of 3, and their maximum
  // CHECK:      %[[ABS:.*]] = arith.andi {{.*}} : vector<6xi32>
  // CHECK-NEXT: %[[L0:.*]] = vector.shuffle %[[ABS]], %[[ABS]] [0, 3] : vector<6xi32>, vector<6xi32>
  // CHECK-NEXT: %[[L1:.*]] = vector.shuffle %[[ABS]], %[[ABS]] [1, 4] : vector<6xi32>, vector<6xi32>
  // CHECK-NEXT: %[[M1:.*]] = arith.maxsi %[[L0]], %[[L1]] : vector<2xi32>
  // CHECK-NEXT: %[[L2:.*]] = vector.shuffle %[[ABS]], %[[ABS]] [2, 5] : vector<6xi32>, vector<6xi32>
  // CHECK-NEXT: %[[AMAX:.*]] = arith.maxsi %[[M1]], %[[L2]] : vector<2xi32>
  // the exponent field, clamped to [-127, 127]
  // CHECK:      arith.shrui %[[AMAX]]
  // CHECK:      %[[LOW:.*]] = arith.minsi {{.*}} : vector<2xi32>
  // CHECK:      arith.maxsi %[[LOW]], {{.*}} : vector<2xi32>
  // the codes broadcast to the lanes, x times 2^-e, then the saturating convert
  // CHECK:      vector.shuffle {{.*}} [0, 0, 0, 1, 1, 1] : vector<2xi8>, vector<2xi8>
  // CHECK:      arith.mulf %x, {{.*}} : vector<6xf32>
  // CHECK-NOT:  arbfp
  // CHECK-NOT:  arith.cmpi
  // CHECK-NOT:  arith.select
  // CHECK:      func.return
  %q, %s = arbfp.scaled_convert_to f8e4m3fn %x block 3 : vector<6xf32> to vector<6xi8>, vector<2xi8>
  func.return %q : vector<6xi8>
}

// CHECK-LABEL: func.func @encode_f64_ceil
func.func @encode_f64_ceil(%x: vector<2xf64>) -> (vector<2xi4>, vector<1xi8>) {
  // the ceil rule compares amax's mantissa with that of the largest finite
  // value (6 = 1.5 * 2^2: 0x8000000000000)
  // CHECK: arith.andi {{.*}} : vector<1xi64>
  // CHECK: arith.constant dense<2251799813685248> : vector<1xi64>
  // CHECK: arith.mulf %x, {{.*}} : vector<2xf64>
  %q, %s = arbfp.scaled_convert_to f4e2m1fn %x block 2 scale_rule ceil : vector<2xf64> to vector<2xi4>, vector<1xi8>
  func.return %q, %s : vector<2xi4>, vector<1xi8>
}

// Matrices are left to convert-matrix-to-affine.
// CHECK-LABEL: func.func @matrices
func.func @matrices(%q: !matrix.matrix<2x4xi4>, %s: !matrix.matrix<2x1xi8>) -> !matrix.matrix<2x4xf32> {
  // CHECK-NEXT: arbfp.scaled_convert_from f4e2m1fn %q, %s block 4
  %r = arbfp.scaled_convert_from f4e2m1fn %q, %s block 4 : !matrix.matrix<2x4xi4>, !matrix.matrix<2x1xi8> to !matrix.matrix<2x4xf32>
  func.return %r : !matrix.matrix<2x4xf32>
}

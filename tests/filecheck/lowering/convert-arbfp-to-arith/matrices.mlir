// RUN: mx-opt %s -p convert-matrix-to-affine,convert-arbfp-to-arith | filecheck %s

// A matrix conversion becomes one scalar conversion per element inside the
// loop nest of convert-matrix-to-affine, which convert-arbfp-to-arith then
// expands in place: straight-line integer code in the innermost loop.

// CHECK-LABEL: func.func @dequantize
// CHECK-SAME: (%[[Q:.*]]: memref<3x2xi4>, %[[OUT:.*]]: memref<3x2xf32>)
// CHECK: affine.for %[[C:.*]] = 0 to 3 {
// CHECK-NEXT: affine.for %[[R:.*]] = 0 to 2 {
// CHECK-NEXT: %[[B:.*]] = affine.load %[[Q]][%[[C]], %[[R]]] : memref<3x2xi4>
// CHECK-NEXT: arith.extui %[[B]] : i4 to i16
// CHECK-NOT: arbfp
// CHECK-NOT: affine.for
// CHECK: arith.extf %{{.*}} : f16 to f32
// CHECK: arith.mulf %{{.*}}, %{{.*}} : f32
// CHECK: %[[F:.*]] = arith.bitcast %{{.*}} : i32 to f32
// CHECK-NEXT: affine.store %[[F]], %[[OUT]][%[[C]], %[[R]]] : memref<3x2xf32>
func.func @dequantize(%q: !matrix.matrix<2x3xi4>) -> !matrix.matrix<2x3xf32> {
  %f = arbfp.convert_from f4e2m1fn %q : !matrix.matrix<2x3xi4> to !matrix.matrix<2x3xf32>
  return %f : !matrix.matrix<2x3xf32>
}

// Quantize after an elementwise op, fused into the same loop body.
// CHECK-LABEL: func.func @scale_and_quantize
// CHECK: affine.for
// CHECK-NEXT: affine.for
// CHECK: %[[P:.*]] = arith.mulf %{{.*}}, %{{.*}} : f16
// CHECK-NEXT: arith.extf %[[P]] : f16 to f32
// CHECK-NOT: arbfp
// CHECK-NOT: arith.cmpi
// CHECK-NOT: arith.select
// CHECK: %[[E:.*]] = arith.trunci %{{.*}} : i32 to i8
// CHECK-NEXT: affine.store %[[E]]
func.func @scale_and_quantize(%a: !matrix.matrix<4x4xf16>, %s: !matrix.matrix<4x4xf16>) -> !matrix.matrix<4x4xi8> {
  %p = matrix.mul %a, %s : !matrix.matrix<4x4xf16>
  %q = arbfp.convert_to f8e5m2 %p rounding toward_zero saturate : !matrix.matrix<4x4xf16> to !matrix.matrix<4x4xi8>
  return %q : !matrix.matrix<4x4xi8>
}

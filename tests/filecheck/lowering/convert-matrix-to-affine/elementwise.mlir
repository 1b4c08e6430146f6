// RUN: mx-opt %s -p "convert-matrix-to-affine{vector-bits=0}" | filecheck %s

// A chain of elementwise ops with a scalar broadcast and a transposed operand
// is one loop nest (columns outer, rows inner) with no intermediate buffer;
// the transposed operand is read with swapped indices.
// CHECK-LABEL: func.func @chain
// CHECK-SAME: (%[[A:.*]]: memref<3x2xf32>, %[[B:.*]]: memref<2x3xf32>, %[[S:.*]]: f32, %[[OUT:.*]]: memref<3x2xf32>)
// CHECK-NOT: memref.alloca
// CHECK: affine.for %[[C:.*]] = 0 to 3 {
// CHECK-NEXT: affine.for %[[R:.*]] = 0 to 2 {
// CHECK-NEXT: %[[X:.*]] = affine.load %[[A]][%[[C]], %[[R]]] : memref<3x2xf32>
// CHECK-NEXT: %[[Y:.*]] = affine.load %[[B]][%[[R]], %[[C]]] : memref<2x3xf32>
// CHECK-NEXT: %[[SUM:.*]] = arith.addf %[[X]], %[[Y]] : f32
// CHECK-NEXT: %[[P:.*]] = arith.mulf %[[SUM]], %[[S]] : f32
// CHECK-NEXT: %[[N:.*]] = arith.negf %[[P]] : f32
// CHECK-NEXT: affine.store %[[N]], %[[OUT]][%[[C]], %[[R]]] : memref<3x2xf32>
// CHECK-NOT: affine.for
// CHECK: func.return
func.func @chain(%a: !matrix.matrix<2x3xf32>, %b: !matrix.matrix<3x2xf32>, %s: f32) -> !matrix.matrix<2x3xf32> {
  %bt = matrix.transpose %b : !matrix.matrix<3x2xf32> -> !matrix.matrix<2x3xf32>
  %k = matrix.splat %s : !matrix.matrix<2x3xf32>
  %x = matrix.add %a, %bt : !matrix.matrix<2x3xf32>
  %y = matrix.mul %x, %k : !matrix.matrix<2x3xf32>
  %z = matrix.neg %y : !matrix.matrix<2x3xf32>
  return %z : !matrix.matrix<2x3xf32>
}

// A value used twice gets a buffer; its consumers read it.
// CHECK-LABEL: func.func @shared
// CHECK: %[[BUF:.*]] = memref.alloca() {alignment = 64 : i64} : memref<2x2xi32>
// CHECK: arith.muli
// CHECK: affine.store %{{.*}}, %[[BUF]]
// CHECK: affine.load %[[BUF]]
// CHECK: affine.load %[[BUF]]
// CHECK: arith.addi
func.func @shared(%a: !matrix.matrix<2x2xi32>) -> !matrix.matrix<2x2xi32> {
  %m = matrix.mul %a, %a : !matrix.matrix<2x2xi32>
  %s = matrix.add %m, %m : !matrix.matrix<2x2xi32>
  return %s : !matrix.matrix<2x2xi32>
}

// Integer ops, signed and unsigned division, fma and fastmath flags.
// CHECK-LABEL: func.func @ops
// CHECK: arith.subi
// CHECK: arith.divsi
// CHECK: arith.divui
// CHECK-LABEL: func.func @float_ops
// CHECK: arith.divf %{{.*}}, %{{.*}} fastmath<nnan> : f16
// CHECK: math.fma %{{.*}}, %{{.*}}, %{{.*}} : f16
func.func @ops(%a: !matrix.matrix<2x2xi8>, %b: !matrix.matrix<2x2xi8>) -> !matrix.matrix<2x2xi8> {
  %d = matrix.sub %a, %b : !matrix.matrix<2x2xi8>
  %q = matrix.div %d, %b : !matrix.matrix<2x2xi8>
  %u = matrix.div %q, %b {unsigned} : !matrix.matrix<2x2xi8>
  return %u : !matrix.matrix<2x2xi8>
}
func.func @float_ops(%a: !matrix.matrix<2x2xf16>, %b: !matrix.matrix<2x2xf16>) -> !matrix.matrix<2x2xf16> {
  %q = matrix.div %a, %b fastmath<nnan> : !matrix.matrix<2x2xf16>
  %f = matrix.fma %q, %a, %b : !matrix.matrix<2x2xf16>
  return %f : !matrix.matrix<2x2xf16>
}

// Casts: the C conversions; f16 -> bf16 goes exactly through f32.
// CHECK-LABEL: func.func @casts
// CHECK: arith.sitofp %{{.*}} : i32 to f16
// CHECK: arith.extf %{{.*}} : f16 to f32
// CHECK: arith.truncf %{{.*}} : f32 to bf16
// CHECK: arith.fptoui %{{.*}} : bf16 to i8
// CHECK: arith.extui %{{.*}} : i8 to i64
func.func @casts(%a: !matrix.matrix<2x2xi32>) -> !matrix.matrix<2x2xi64> {
  %h = matrix.cast %a : !matrix.matrix<2x2xi32> to !matrix.matrix<2x2xf16>
  %b = matrix.cast %h : !matrix.matrix<2x2xf16> to !matrix.matrix<2x2xbf16>
  %i = matrix.cast %b {unsigned} : !matrix.matrix<2x2xbf16> to !matrix.matrix<2x2xi8>
  %l = matrix.cast %i {unsigned} : !matrix.matrix<2x2xi8> to !matrix.matrix<2x2xi64>
  return %l : !matrix.matrix<2x2xi64>
}

// A non-splat constant gets a buffer with one store per element (row by row
// in the literal, column-major in the buffer); a splat constant is a scalar.
// CHECK-LABEL: func.func @constants
// CHECK: %[[K:.*]] = memref.alloca() {alignment = 64 : i64} : memref<2x1xf64>
// CHECK: %[[ONE:.*]] = arith.constant 1.000000e+00 : f64
// CHECK: affine.store %[[ONE]], %[[K]][0, 0]
// CHECK: %[[TWO:.*]] = arith.constant 2.000000e+00 : f64
// CHECK: affine.store %[[TWO]], %[[K]][1, 0]
// CHECK: affine.for
// CHECK: %[[HALF:.*]] = arith.constant 5.000000e-01 : f64
// CHECK: arith.addf %{{.*}}, %[[HALF]]
func.func @constants() -> !matrix.matrix<1x2xf64> {
  %k = matrix.constant dense<[[1.0, 2.0]]> : !matrix.matrix<1x2xf64>
  %h = matrix.constant dense<0.5> : !matrix.matrix<1x2xf64>
  %s = matrix.add %k, %h : !matrix.matrix<1x2xf64>
  return %s : !matrix.matrix<1x2xf64>
}

// arbfp conversions of matrices are elementwise: one scalar conversion per
// element inside the fused loop nest (convert-arbfp-to-arith lowers it).
// CHECK-LABEL: func.func @arbfp
// CHECK-NOT: memref.alloca
// CHECK: %[[Q:.*]] = affine.load %{{.*}} : memref<2x2xi4>
// CHECK-NEXT: %[[F:.*]] = arbfp.convert_from f4e2m1fn %[[Q]] : i4 to bf16
// CHECK-NEXT: %[[D:.*]] = arith.negf %[[F]] : bf16
// CHECK-NEXT: %[[E:.*]] = arbfp.convert_to f8e4m3fn %[[D]] saturate : bf16 to i8
// CHECK-NEXT: affine.store %[[E]]
func.func @arbfp(%q: !matrix.matrix<2x2xi4>) -> !matrix.matrix<2x2xi8> {
  %f = arbfp.convert_from f4e2m1fn %q : !matrix.matrix<2x2xi4> to !matrix.matrix<2x2xbf16>
  %d = matrix.neg %f : !matrix.matrix<2x2xbf16>
  %e = arbfp.convert_to f8e4m3fn %d saturate : !matrix.matrix<2x2xbf16> to !matrix.matrix<2x2xi8>
  return %e : !matrix.matrix<2x2xi8>
}

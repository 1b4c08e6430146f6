// RUN: mx-opt %s -p "convert-matrix-to-affine{vector-bits=0}" | filecheck %s

// Without contract: acc = a[r][0]*b[0][c], then acc + a[r][k]*b[k][c] for
// k = 1..K-1 with separate mulf/addf and no fastmath flags, no fma.
// CHECK-LABEL: func.func @matmul
// CHECK-SAME: (%[[A:.*]]: memref<3x2xf32>, %[[B:.*]]: memref<4x3xf32>, %[[OUT:.*]]: memref<4x2xf32>)
// CHECK: affine.for %[[C:.*]] = 0 to 4 {
// CHECK-NEXT: affine.for %[[R:.*]] = 0 to 2 {
// CHECK-NEXT: %[[A0:.*]] = affine.load %[[A]][0, %[[R]]]
// CHECK-NEXT: %[[B0:.*]] = affine.load %[[B]][%[[C]], 0]
// CHECK-NEXT: %[[P0:.*]] = arith.mulf %[[A0]], %[[B0]] : f32
// CHECK-NEXT: %[[SUM:.*]] = affine.for %[[K:.*]] = 1 to 3 iter_args(%[[ACC:.*]] = %[[P0]]) -> (f32) {
// CHECK-NEXT: %[[AK:.*]] = affine.load %[[A]][%[[K]], %[[R]]]
// CHECK-NEXT: %[[BK:.*]] = affine.load %[[B]][%[[C]], %[[K]]]
// CHECK-NEXT: %[[PK:.*]] = arith.mulf %[[AK]], %[[BK]] : f32
// CHECK-NEXT: %[[NEXT:.*]] = arith.addf %[[ACC]], %[[PK]] : f32
// CHECK-NEXT: affine.yield %[[NEXT]] : f32
// CHECK: affine.store %[[SUM]], %{{.*}}[%[[C]], %[[R]]]
// CHECK-NOT: math.fma
// CHECK-NOT: fastmath
// CHECK: func.return
func.func @matmul(%a: !matrix.matrix<2x3xf32>, %b: !matrix.matrix<3x4xf32>) -> !matrix.matrix<2x4xf32> {
  %c = matrix.matmul %a, %b : !matrix.matrix<2x3xf32>, !matrix.matrix<3x4xf32> -> !matrix.matrix<2x4xf32>
  return %c : !matrix.matrix<2x4xf32>
}

// With contract each step is one math.fma; matmul_add adds the accumulator last.
// CHECK-LABEL: func.func @matmul_add_contract
// CHECK: %[[P0:.*]] = arith.mulf %{{.*}}, %{{.*}} fastmath<contract> : f64
// CHECK: affine.for %{{.*}} = 1 to 3 iter_args(%[[ACC:.*]] = %[[P0]]) -> (f64) {
// CHECK: %[[F:.*]] = math.fma %{{.*}}, %{{.*}}, %[[ACC]] fastmath<contract> : f64
// CHECK-NEXT: affine.yield %[[F]] : f64
// CHECK: %[[C:.*]] = affine.load
// CHECK-NEXT: arith.addf %{{.*}}, %[[C]] fastmath<contract> : f64
func.func @matmul_add_contract(%a: !matrix.matrix<2x3xf64>, %b: !matrix.matrix<3x2xf64>, %c: !matrix.matrix<2x2xf64>) -> !matrix.matrix<2x2xf64> {
  %d = matrix.matmul_add %a, %b, %c fastmath<contract> : !matrix.matrix<2x3xf64>, !matrix.matrix<3x2xf64>, !matrix.matrix<2x2xf64> -> !matrix.matrix<2x2xf64>
  return %d : !matrix.matrix<2x2xf64>
}

// With reassoc the accumulator starts the sum.
// CHECK-LABEL: func.func @matmul_add_reassoc
// CHECK-SAME: %[[ACC:[^:]*]]: memref<2x2xf32>, %{{.*}}: memref<2x2xf32>)
// CHECK: %[[C:.*]] = affine.load %[[ACC]]
// CHECK: %[[P:.*]] = arith.mulf
// CHECK: arith.addf %[[C]], %[[P]] fastmath<reassoc>
func.func @matmul_add_reassoc(%a: !matrix.matrix<2x1xf32>, %b: !matrix.matrix<1x2xf32>, %c: !matrix.matrix<2x2xf32>) -> !matrix.matrix<2x2xf32> {
  %d = matrix.matmul_add %a, %b, %c fastmath<reassoc> : !matrix.matrix<2x1xf32>, !matrix.matrix<1x2xf32>, !matrix.matrix<2x2xf32> -> !matrix.matrix<2x2xf32>
  return %d : !matrix.matrix<2x2xf32>
}

// Integers: muli/addi; a transposed operand is read with swapped indices.
// CHECK-LABEL: func.func @int_matmul_transposed
// CHECK-SAME: (%[[A:[^:]*]]: memref<2x3xi16>,
// CHECK: affine.load %[[A]][%{{.*}}, 0]
// CHECK: arith.muli
// CHECK: arith.addi
func.func @int_matmul_transposed(%a: !matrix.matrix<3x2xi16>, %b: !matrix.matrix<3x2xi16>) -> !matrix.matrix<2x2xi16> {
  %at = matrix.transpose %a : !matrix.matrix<3x2xi16> -> !matrix.matrix<2x3xi16>
  %c = matrix.matmul %at, %b : !matrix.matrix<2x3xi16>, !matrix.matrix<3x2xi16> -> !matrix.matrix<2x2xi16>
  return %c : !matrix.matrix<2x2xi16>
}

// matvec carries the result vector through the row loop.
// CHECK-LABEL: func.func @matvec
// CHECK: %[[INIT:.*]] = vector.broadcast
// CHECK: affine.for %[[R:.*]] = 0 to 2 iter_args(%[[V:.*]] = %[[INIT]]) -> (vector<2xf32>) {
// CHECK: vector.extract %{{.*}}[0] : f32 from vector<3xf32>
// CHECK: vector.insert %{{.*}}, %[[V]] [%[[R]]] : f32 into vector<2xf32>
func.func @matvec(%m: !matrix.matrix<2x3xf32>, %x: vector<3xf32>) -> vector<2xf32> {
  %y = matrix.matvec %m, %x : !matrix.matrix<2x3xf32>, vector<3xf32> -> vector<2xf32>
  return %y : vector<2xf32>
}

// RUN: mx-opt %s -p "convert-matrix-to-affine{vector-bits=0}" | filecheck %s

// Static offset and stride: each element (r, c) is read from and written to
// off + c*stride + r (column-major) / off + r*stride + c (row-major); the loop
// nest touches only the R*C addressed elements. The load feeds the store
// through an elementwise op without a buffer: same memref, layout, offset and
// stride, so no element is overwritten before it is read.
// CHECK-LABEL: func.func @in_place
// CHECK-NOT: memref.alloca
// CHECK: affine.for %[[C:.*]] = 0 to 3 {
// CHECK-NEXT: affine.for %[[R:.*]] = 0 to 2 {
// CHECK-NEXT: %[[X:.*]] = affine.load %{{.*}}[%[[C]] * 5 + 4 + %[[R]]] : memref<20xf32>
// CHECK-NEXT: %[[N:.*]] = arith.negf %[[X]] : f32
// CHECK-NEXT: affine.store %[[N]], %{{.*}}[%[[C]] * 5 + 4 + %[[R]]] : memref<20xf32>
func.func @in_place(%mem: memref<20xf32>) {
  %m = matrix.column_major_load %mem[4] stride 5 : memref<20xf32> -> !matrix.matrix<2x3xf32>
  %n = matrix.neg %m : !matrix.matrix<2x3xf32>
  matrix.column_major_store %n, %mem[4] stride 5 : !matrix.matrix<2x3xf32>, memref<20xf32>
  return
}

// Different memrefs may alias: the load is copied to a buffer first, and the
// row-major store with dynamic offset and stride computes its addresses.
// CHECK-LABEL: func.func @may_alias
// CHECK-SAME: (%[[SRC:[^:]*]]: memref<?xi32>, %[[DST:[^:]*]]: memref<?xi32>, %[[OFF:[^:]*]]: index, %[[S:[^:]*]]: index)
// CHECK: %[[BUF:.*]] = memref.alloca() {alignment = 64 : i64} : memref<3x2xi32>
// CHECK: affine.for %[[C:.*]] = 0 to 3 {
// CHECK-NEXT: affine.for %[[R:.*]] = 0 to 2 {
// CHECK-NEXT: %[[X:.*]] = affine.load %[[SRC]][%[[R]] * 3 + %[[C]]] : memref<?xi32>
// CHECK-NEXT: affine.store %[[X]], %[[BUF]][%[[C]], %[[R]]]
// CHECK: affine.for %[[C2:.*]] = 0 to 3 {
// CHECK-NEXT: affine.for %[[R2:.*]] = 0 to 2 {
// CHECK-NEXT: %[[Y1:.*]] = affine.load %[[BUF]][%[[C2]], %[[R2]]]
// CHECK-NEXT: %[[Y2:.*]] = affine.load %[[BUF]][%[[C2]], %[[R2]]]
// CHECK-NEXT: %[[Z:.*]] = arith.addi %[[Y1]], %[[Y2]]
// CHECK-NEXT: %[[RS:.*]] = arith.muli %[[R2]], %[[S]] : index
// CHECK-NEXT: %[[A1:.*]] = arith.addi %[[OFF]], %[[RS]] : index
// CHECK-NEXT: %[[A2:.*]] = arith.addi %[[A1]], %[[C2]] : index
// CHECK-NEXT: memref.store %[[Z]], %[[DST]][%[[A2]]] : memref<?xi32>
func.func @may_alias(%src: memref<?xi32>, %dst: memref<?xi32>, %off: index, %s: index) {
  %m = matrix.row_major_load %src[0] : memref<?xi32> -> !matrix.matrix<2x3xi32>
  %d = matrix.add %m, %m : !matrix.matrix<2x3xi32>
  matrix.row_major_store %d, %dst[%off] stride %s : !matrix.matrix<2x3xi32>, memref<?xi32>
  return
}

// A store between a load and its use keeps the load where it is.
// CHECK-LABEL: func.func @store_between
// CHECK: memref.alloca() {alignment = 64 : i64} : memref<1x2xf64>
// CHECK: affine.load %{{.*}}[%{{.*}} * 2 + %{{.*}}] : memref<8xf64>
// CHECK: affine.store
func.func @store_between(%mem: memref<8xf64>, %other: !matrix.matrix<2x1xf64>) -> !matrix.matrix<2x1xf64> {
  %m = matrix.column_major_load %mem[0] : memref<8xf64> -> !matrix.matrix<2x1xf64>
  matrix.column_major_store %other, %mem[0] : !matrix.matrix<2x1xf64>, memref<8xf64>
  %n = matrix.neg %m : !matrix.matrix<2x1xf64>
  return %n : !matrix.matrix<2x1xf64>
}

// extract computes one element of a fused chain; insert into a value used
// only once updates its buffer in place.
// CHECK-LABEL: func.func @extract_insert
// CHECK-SAME: (%[[A:[^:]*]]: memref<2x2xi8>, %[[I:[^:]*]]: index,
// CHECK: %[[BUF:.*]] = memref.alloca() {alignment = 64 : i64} : memref<2x2xi8>
// CHECK: %[[E:.*]] = memref.load %[[A]][%{{.*}}, %[[I]]] : memref<2x2xi8>
// CHECK: %[[F:.*]] = memref.load %[[A]][%{{.*}}, %[[I]]] : memref<2x2xi8>
// CHECK-NEXT: %[[E2:.*]] = arith.muli %[[E]], %[[F]] : i8
// CHECK: affine.for
// CHECK: affine.store %{{.*}}, %[[BUF]]
// CHECK: affine.store %[[E2]], %[[BUF]][1, 0] : memref<2x2xi8>
// CHECK-NOT: memref.alloca
func.func @extract_insert(%a: !matrix.matrix<2x2xi8>, %i: index) -> !matrix.matrix<2x2xi8> {
  %sq = matrix.mul %a, %a : !matrix.matrix<2x2xi8>
  %e = matrix.extract %sq[%i, 1] : !matrix.matrix<2x2xi8>
  %d = matrix.add %a, %a : !matrix.matrix<2x2xi8>
  %t = matrix.transpose %d : !matrix.matrix<2x2xi8> -> !matrix.matrix<2x2xi8>
  %m = matrix.sub %t, %a : !matrix.matrix<2x2xi8>
  %n = matrix.insert %e, %m[0, 1] : !matrix.matrix<2x2xi8>
  return %n : !matrix.matrix<2x2xi8>
}

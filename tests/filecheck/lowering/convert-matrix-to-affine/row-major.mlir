// RUN: mx-opt %s -p "convert-matrix-to-affine{vector-bits=0 layout=row-major}" | filecheck %s

// With layout=row-major a matrix R×C crosses a function boundary as the
// row-major memref<RxCxT> (the column-major buffer of its C×R transpose):
// element (r, c) of an argument is %a[r, c], and results are stored so.
// CHECK-LABEL: func.func @f
// CHECK-SAME: (%[[A:[^:]*]]: memref<2x3xf32>, %[[OUT:[^:]*]]: memref<3x2xf32>)
// CHECK: affine.for %[[R:.*]] = 0 to 3 {
// CHECK-NEXT: affine.for %[[C:.*]] = 0 to 2 {
// CHECK-NEXT: %[[X:.*]] = affine.load %[[A]][%[[C]], %[[R]]] : memref<2x3xf32>
// CHECK-NEXT: affine.store %[[X]], %[[OUT]][%[[R]], %[[C]]] : memref<3x2xf32>
func.func @f(%a: !matrix.matrix<2x3xf32>) -> !matrix.matrix<3x2xf32> {
  %t = matrix.transpose %a : !matrix.matrix<2x3xf32> -> !matrix.matrix<3x2xf32>
  func.return %t : !matrix.matrix<3x2xf32>
}

// A call passes row-major buffers and reads its row-major result buffer.
// CHECK-LABEL: func.func @g
// CHECK-SAME: (%[[A:[^:]*]]: memref<2x3xf32>) -> f32
// CHECK: %[[R:.*]] = memref.alloca() {alignment = 64 : i64} : memref<3x2xf32>
// CHECK: func.call @f(%{{.*}}, %[[R]]) : (memref<2x3xf32>, memref<3x2xf32>) -> ()
// CHECK: %[[E:.*]] = affine.load %[[R]][2, 1] : memref<3x2xf32>
// CHECK: func.return %[[E]] : f32
func.func @g(%a: !matrix.matrix<2x3xf32>) -> f32 {
  %t = func.call @f(%a) : (!matrix.matrix<2x3xf32>) -> !matrix.matrix<3x2xf32>
  %e = matrix.extract %t[2, 1] : !matrix.matrix<3x2xf32>
  func.return %e : f32
}

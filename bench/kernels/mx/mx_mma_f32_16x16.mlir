builtin.module {
func.func @mx_mma_f32_16x16(%a: memref<?xf32>, %b: memref<?xf32>, %c: memref<?xf32>, %d: memref<?xf32>, %n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %sz = arith.constant 256 : index
  scf.for %i = %c0 to %n step %c1 {
    %off = arith.muli %i, %sz : index
    %ma = matrix.column_major_load %a[%off] : memref<?xf32> -> !matrix.matrix<16x16xf32>
    %mb = matrix.column_major_load %b[%off] : memref<?xf32> -> !matrix.matrix<16x16xf32>
    %mc = matrix.column_major_load %c[%off] : memref<?xf32> -> !matrix.matrix<16x16xf32>
    %r = matrix.matmul_add %ma, %mb, %mc : !matrix.matrix<16x16xf32>, !matrix.matrix<16x16xf32>, !matrix.matrix<16x16xf32> -> !matrix.matrix<16x16xf32>
    matrix.column_major_store %r, %d[%off] : !matrix.matrix<16x16xf32>, memref<?xf32>
  }
  func.return
}
}

builtin.module {
func.func @mx_mma_f64_8x8(%a: memref<?xf64>, %b: memref<?xf64>, %c: memref<?xf64>, %d: memref<?xf64>, %n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %sz = arith.constant 64 : index
  scf.for %i = %c0 to %n step %c1 {
    %off = arith.muli %i, %sz : index
    %ma = matrix.column_major_load %a[%off] : memref<?xf64> -> !matrix.matrix<8x8xf64>
    %mb = matrix.column_major_load %b[%off] : memref<?xf64> -> !matrix.matrix<8x8xf64>
    %mc = matrix.column_major_load %c[%off] : memref<?xf64> -> !matrix.matrix<8x8xf64>
    %r = matrix.matmul_add %ma, %mb, %mc : !matrix.matrix<8x8xf64>, !matrix.matrix<8x8xf64>, !matrix.matrix<8x8xf64> -> !matrix.matrix<8x8xf64>
    matrix.column_major_store %r, %d[%off] : !matrix.matrix<8x8xf64>, memref<?xf64>
  }
  func.return
}
}

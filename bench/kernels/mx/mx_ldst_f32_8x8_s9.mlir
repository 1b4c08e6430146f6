builtin.module {
func.func @mx_ldst_f32_8x8_s9(%a: memref<?xf32>, %d: memref<?xf32>, %n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %sz = arith.constant 72 : index
  scf.for %i = %c0 to %n step %c1 {
    %off = arith.muli %i, %sz : index
    %ma = matrix.column_major_load %a[%off] stride 9 : memref<?xf32> -> !matrix.matrix<8x8xf32>
    matrix.column_major_store %ma, %d[%off] stride 9 : !matrix.matrix<8x8xf32>, memref<?xf32>
  }
  func.return
}
}

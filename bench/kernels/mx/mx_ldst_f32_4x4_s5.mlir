builtin.module {
func.func @mx_ldst_f32_4x4_s5(%a: memref<?xf32>, %d: memref<?xf32>, %n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %sz = arith.constant 20 : index
  scf.for %i = %c0 to %n step %c1 {
    %off = arith.muli %i, %sz : index
    %ma = matrix.column_major_load %a[%off] stride 5 : memref<?xf32> -> !matrix.matrix<4x4xf32>
    matrix.column_major_store %ma, %d[%off] stride 5 : !matrix.matrix<4x4xf32>, memref<?xf32>
  }
  func.return
}
}

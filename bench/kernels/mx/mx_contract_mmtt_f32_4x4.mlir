builtin.module {
func.func @mx_contract_mmtt_f32_4x4(%a: memref<?xf32>, %b: memref<?xf32>, %d: memref<?xf32>, %n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %sz = arith.constant 16 : index
  scf.for %i = %c0 to %n step %c1 {
    %off = arith.muli %i, %sz : index
    %ma = matrix.column_major_load %a[%off] : memref<?xf32> -> !matrix.matrix<4x4xf32>
    %mb = matrix.column_major_load %b[%off] : memref<?xf32> -> !matrix.matrix<4x4xf32>
    %ta = matrix.transpose %ma : !matrix.matrix<4x4xf32> -> !matrix.matrix<4x4xf32>
    %tb = matrix.transpose %mb : !matrix.matrix<4x4xf32> -> !matrix.matrix<4x4xf32>
    %r = matrix.matmul %ta, %tb fastmath<contract> : !matrix.matrix<4x4xf32>, !matrix.matrix<4x4xf32> -> !matrix.matrix<4x4xf32>
    matrix.column_major_store %r, %d[%off] : !matrix.matrix<4x4xf32>, memref<?xf32>
  }
  func.return
}
}

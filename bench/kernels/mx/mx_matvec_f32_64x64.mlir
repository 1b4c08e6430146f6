builtin.module {
func.func @mx_matvec_f32_64x64(%m: memref<?xf32>, %x: memref<?xf32>, %y: memref<?xf32>, %n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %vn = arith.constant 64 : index
  %sz = arith.constant 4096 : index
  scf.for %i = %c0 to %n step %c1 {
    %off = arith.muli %i, %sz : index
    %xoff = arith.muli %i, %vn : index
    %mm = matrix.column_major_load %m[%off] : memref<?xf32> -> !matrix.matrix<64x64xf32>
    %vx = vector.load %x[%xoff] : memref<?xf32>, vector<64xf32>
    %vy = matrix.matvec %mm, %vx : !matrix.matrix<64x64xf32>, vector<64xf32> -> vector<64xf32>
    vector.store %vy, %y[%xoff] : memref<?xf32>, vector<64xf32>
  }
  func.return
}
}

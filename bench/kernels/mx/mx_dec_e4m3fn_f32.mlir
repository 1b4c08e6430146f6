builtin.module {
func.func @mx_dec_e4m3fn_f32(%in: memref<?xi8>, %out: memref<?xf32>, %n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  scf.for %i = %c0 to %n step %c1 {
    %x = memref.load %in[%i] : memref<?xi8>
    %y = arbfp.convert_from f8e4m3fn %x : i8 to f32
    memref.store %y, %out[%i] : memref<?xf32>
  }
  func.return
}
}

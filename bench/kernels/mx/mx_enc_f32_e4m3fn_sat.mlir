builtin.module {
func.func @mx_enc_f32_e4m3fn_sat(%in: memref<?xf32>, %out: memref<?xi8>, %n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  scf.for %i = %c0 to %n step %c1 {
    %x = memref.load %in[%i] : memref<?xf32>
    %y = arbfp.convert_to f8e4m3fn %x saturate : f32 to i8
    memref.store %y, %out[%i] : memref<?xi8>
  }
  func.return
}
}

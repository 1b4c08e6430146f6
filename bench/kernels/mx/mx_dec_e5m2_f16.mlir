builtin.module {
func.func @mx_dec_e5m2_f16(%in: memref<?xi8>, %out: memref<?xf16>, %n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  scf.for %i = %c0 to %n step %c1 {
    %x = memref.load %in[%i] : memref<?xi8>
    %y = arbfp.convert_from f8e5m2 %x : i8 to f16
    memref.store %y, %out[%i] : memref<?xf16>
  }
  func.return
}
}

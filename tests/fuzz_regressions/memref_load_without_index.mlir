// fuzz-args: -p canonicalize
func.func @dynamic(%a: memref<?xf64>) -> f64 {
  %v = memref.load %a[] : memref<?xf64>
  func.return %v : f64
}

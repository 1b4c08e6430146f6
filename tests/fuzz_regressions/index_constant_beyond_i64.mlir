// fuzz-args: -p mx-lower-to-llvm -t llvm
func.func @load_huge_offset() -> !matrix.matrix<2x2xf32> {
  %mem = memref.alloc() : memref<8xf32>
  %off = arith.constant 99999999999999999999999999 : index
  %s = arith.constant 4611686018427387904 : index
  %m = matrix.column_major_load %mem[%off] stride %s : memref<8xf32> -> !matrix.matrix<2x2xf32>
  func.return %m : !matrix.matrix<2x2xf32>
}

// A memref whose layout is not row-major and contiguous is refused, as the
// lowering refuses to address it (it once read it as if contiguous); a
// strided layout with the row-major strides is the same as none.
// RUN: mx-run %s --entry row_major --arg '[[1, 2], [3, 4]]' | filecheck %s --check-prefix=ROW
// RUN: not mx-run %s --entry strided --arg '[[1, 2], [3, 4]]' 2>&1 | filecheck %s --check-prefix=STRIDED

func.func @row_major(%a: memref<2x2xf32, strided<[2, 1]>>) -> f32 {
  %c1 = arith.constant 1 : index
  %v = memref.load %a[%c1, %c1] : memref<2x2xf32, strided<[2, 1]>>
  return %v : f32
}
// ROW: result #0 : f32 = 4.0

func.func @strided(%a: memref<2x2xf32, strided<[8, 1]>>) -> f32 {
  %c1 = arith.constant 1 : index
  %v = memref.load %a[%c1, %c1] : memref<2x2xf32, strided<[8, 1]>>
  return %v : f32
}
// STRIDED: strided.mlir:[[# @LINE - 5]]:1: error: 'func.func' op argument #0 (memref<2x2xf32, strided<[8, 1]>>): only row-major contiguous layouts are supported (the interpreter and the lowering address memrefs so)

// A value too large for the interpreter to hold is a located error with exit
// status 1, before any memory is allocated; the program itself is valid.
// RUN: not mx-run %s --entry splat_constant 2>&1 | filecheck %s --check-prefix=CONSTANT
// RUN: not mx-run %s --entry splat --arg 3 2>&1 | filecheck %s --check-prefix=SPLAT
// RUN: not mx-run %s --entry alloc 2>&1 | filecheck %s --check-prefix=ALLOC

func.func @splat_constant() -> f32 {
  %m = matrix.constant dense<1.0> : !matrix.matrix<1048575x1048575xf32>
  %e = matrix.extract %m[0, 0] : !matrix.matrix<1048575x1048575xf32>
  func.return %e : f32
}
// CONSTANT: limits.mlir:[[# @LINE - 4]]:3: error: 'matrix.constant' op runtime error: interpreter limit: a 1048575x1048575 value of 'f32' needs 4398038122500 bytes, more than the interpreter's 1073741824 bytes

func.func @splat(%x: i8) -> i8 {
  %m = matrix.splat %x : !matrix.matrix<1048575x1048575xi8>
  %e = matrix.extract %m[0, 0] : !matrix.matrix<1048575x1048575xi8>
  func.return %e : i8
}
// SPLAT: limits.mlir:[[# @LINE - 4]]:3: error: 'matrix.splat' op runtime error: interpreter limit: a 1048575x1048575 value of 'i8'

func.func @alloc() {
  %m = memref.alloc() : memref<1099511627776xf64>
  func.return
}
// ALLOC: limits.mlir:[[# @LINE - 3]]:3: error: 'memref.alloc' op runtime error: interpreter limit: a 1099511627776 value of 'f64'

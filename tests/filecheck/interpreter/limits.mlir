// A value too large for the interpreter to hold is a located error with exit
// status 1, before any memory is allocated; the program itself is valid. A
// splat of any size is held as its one element: only what needs a huge splat's
// elements one by one (an insert, a load of that size) reaches the limit.
// RUN: not mx-run %s --entry insert_into_splat_constant --arg 2.0 2>&1 | filecheck %s --check-prefix=CONSTANT
// RUN: not mx-run %s --entry insert_into_splat --arg 3 2>&1 | filecheck %s --check-prefix=SPLAT
// RUN: not mx-run %s --entry alloc 2>&1 | filecheck %s --check-prefix=ALLOC

func.func @insert_into_splat_constant(%x: f32) -> f32 {
  %m = matrix.constant dense<1.0> : !matrix.matrix<1048575x1048575xf32>
  %n = matrix.insert %x, %m[3, 4] : !matrix.matrix<1048575x1048575xf32>
  %e = matrix.extract %n[0, 0] : !matrix.matrix<1048575x1048575xf32>
  func.return %e : f32
}
// CONSTANT: limits.mlir:[[# @LINE - 4]]:3: error: 'matrix.insert' op runtime error: interpreter limit: a 1048575x1048575 value of 'f32' needs 4398038122500 bytes, more than the interpreter's 1073741824 bytes

func.func @insert_into_splat(%x: i8) -> i8 {
  %m = matrix.splat %x : !matrix.matrix<1048575x1048575xi8>
  %n = matrix.insert %x, %m[3, 4] : !matrix.matrix<1048575x1048575xi8>
  %e = matrix.extract %n[0, 0] : !matrix.matrix<1048575x1048575xi8>
  func.return %e : i8
}
// SPLAT: limits.mlir:[[# @LINE - 4]]:3: error: 'matrix.insert' op runtime error: interpreter limit: a 1048575x1048575 value of 'i8'

func.func @alloc() {
  %m = memref.alloc() : memref<1099511627776xf64>
  func.return
}
// ALLOC: limits.mlir:[[# @LINE - 3]]:3: error: 'memref.alloc' op runtime error: interpreter limit: a 1099511627776 value of 'f64'

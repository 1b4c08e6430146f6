// mx-run passes command-line values to the entry function: one --arg per
// parameter, numbers for scalars, lists written as in dense<...> literals.
// RUN: mx-run %s --entry scale --arg '[[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]' --arg 0.5 | filecheck %s --check-prefix=SCALE
// RUN: mx-run %s --entry scale --arg 'dense<2.0>' --arg 0x3F800000 | filecheck %s --check-prefix=SPLAT
// RUN: mx-run %s --entry scalars --arg -3 --arg 255 --arg true --arg nan --arg 0x7FFF | filecheck %s --check-prefix=SCALARS
// RUN: mx-run %s --entry memory --arg '[10, 20, 30, 40]' --arg 2 | filecheck %s --check-prefix=MEMORY
// RUN: mx-run %s --entry vectors --arg '[1.5, -2.0, 3.0]' --arg '[true, false, true]' | filecheck %s --check-prefix=VECTORS
// RUN: not mx-run %s --entry scale --arg 1.0 2>&1 | filecheck %s --check-prefix=COUNT
// RUN: not mx-run %s --entry scale --arg '[[1.0, 2.0], [3.0, 4.0]]' --arg 1 2>&1 | filecheck %s --check-prefix=SHAPE
// RUN: not mx-run %s --entry scalars --arg 128 --arg 256 --arg true --arg 1 --arg 1 2>&1 | filecheck %s --check-prefix=RANGE
// RUN: not mx-run %s --entry scalars --arg 1 --arg 1 --arg 2 --arg 1 --arg 1 2>&1 | filecheck %s --check-prefix=BOOL
// RUN: not mx-run %s --entry scale --arg '[[1.0, 2.0, 3.0], [4.0, 5.0]]' --arg 1 2>&1 | filecheck %s --check-prefix=RAGGED
// RUN: not mx-run %s --entry scale --arg '[[1.0, 2.0, 3.0], [4.0, 5.0, x]]' --arg 1 2>&1 | filecheck %s --check-prefix=NUMBER

func.func @scale(%a: !matrix.matrix<2x3xf32>, %s: f32) -> !matrix.matrix<2x3xf32> {
  %k = matrix.splat %s : !matrix.matrix<2x3xf32>
  %r = matrix.mul %a, %k : !matrix.matrix<2x3xf32>
  func.return %r : !matrix.matrix<2x3xf32>
}
// SCALE:      result #0 : !matrix.matrix<2x3xf32> =
// SCALE-NEXT:   [0.5, 1.0, 1.5]
// SCALE-NEXT:   [2.0, 2.5, 3.0]
// SPLAT:      result #0 : !matrix.matrix<2x3xf32> =
// SPLAT-NEXT:   [2.0, 2.0, 2.0]
// SPLAT-NEXT:   [2.0, 2.0, 2.0]
// COUNT: arguments.mlir:[[# @LINE - 11]]:1: error: 'func.func' op @scale takes 2 arguments, got 1 (give one --arg per parameter)
// SHAPE: error: 'func.func' op argument #0 (!matrix.matrix<2x3xf32>): '{{.*}}' has shape (2, 2), expected (2, 3) (a 2x3 matrix)
// RAGGED: error: 'func.func' op argument #0 (!matrix.matrix<2x3xf32>): the lists of '{{.*}}' differ in length
// NUMBER: error: 'func.func' op argument #0 (!matrix.matrix<2x3xf32>): 'x' is not a number

// Integers may be given in the signed or the unsigned range; a hexadecimal
// float is the type's bit pattern (0x7FFF is a NaN of f16).
func.func @scalars(%i: i8, %u: i8, %b: i1, %x: f64, %h: f16) -> (i8, i8, i1, f64, f16) {
  func.return %i, %u, %b, %x, %h : i8, i8, i1, f64, f16
}
// SCALARS:      result #0 : i8 = -3
// SCALARS-NEXT: result #1 : i8 = -1
// SCALARS-NEXT: result #2 : i1 = true
// SCALARS-NEXT: result #3 : f64 = nan
// SCALARS-NEXT: result #4 : f16 = nan
// RANGE: error: 'func.func' op argument #1 (i8): 256 does not fit in i8
// BOOL: error: 'func.func' op argument #2 (i1): 2 does not fit in i1

// Stores into a memref argument are printed after the results.
func.func @memory(%m: memref<4xi32>, %i: index) -> i32 {
  %x = memref.load %m[%i] : memref<4xi32>
  %y = arith.addi %x, %x : i32
  memref.store %y, %m[%i] : memref<4xi32>
  func.return %x : i32
}
// MEMORY:      result #0 : i32 = 30
// MEMORY-NEXT: argument #0 : memref<4xi32> = [10, 20, 60, 40]

func.func @vectors(%v: vector<3xf32>, %mask: vector<3xi1>) -> (vector<3xf32>, vector<3xi1>) {
  %z = arith.constant dense<[2.0, 0.0, -0.0]> : vector<3xf32>
  %d = arith.divf %v, %z : vector<3xf32>
  %t = arith.constant dense<true> : vector<3xi1>
  %n = arith.xori %mask, %t : vector<3xi1>
  func.return %d, %n : vector<3xf32>, vector<3xi1>
}
// VECTORS:      result #0 : vector<3xf32> = [0.75, -inf, -inf]
// VECTORS-NEXT: result #1 : vector<3xi1> = [false, true, false]

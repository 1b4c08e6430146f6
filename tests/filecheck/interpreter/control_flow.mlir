// RUN: mx-run %s | filecheck %s
// Matrices flow through func.call, scf.for iteration arguments and scf.if,
// with dynamic indices from the loop.

func.func @step(%m: !matrix.matrix<3x3xi32>, %i: index) -> !matrix.matrix<3x3xi32> {
  %one = arith.constant 1 : i32
  %e = matrix.extract %m[%i, %i] : !matrix.matrix<3x3xi32>
  %f = arith.addi %e, %one : i32
  %n = matrix.insert %f, %m[%i, %i] : !matrix.matrix<3x3xi32>
  func.return %n : !matrix.matrix<3x3xi32>
}

func.func @main() -> (!matrix.matrix<3x3xi32>, i32) {
  %zero = arith.constant 0 : i32
  %m0 = matrix.splat %zero : !matrix.matrix<3x3xi32>
  %lb = arith.constant 0 : index
  %ub = arith.constant 3 : index
  %c1 = arith.constant 1 : index
  %m = scf.for %i = %lb to %ub step %c1 iter_args(%acc = %m0) -> (!matrix.matrix<3x3xi32>) {
    %a = func.call @step(%acc, %i) : (!matrix.matrix<3x3xi32>, index) -> !matrix.matrix<3x3xi32>
    %b = func.call @step(%a, %i) : (!matrix.matrix<3x3xi32>, index) -> !matrix.matrix<3x3xi32>
    scf.yield %b : !matrix.matrix<3x3xi32>
  }
  %sq = matrix.matmul %m, %m : !matrix.matrix<3x3xi32>, !matrix.matrix<3x3xi32> -> !matrix.matrix<3x3xi32>
  %cond = arith.constant true
  %r = scf.if %cond -> (!matrix.matrix<3x3xi32>) {
    %t = matrix.transpose %sq : !matrix.matrix<3x3xi32> -> !matrix.matrix<3x3xi32>
    %s = matrix.add %t, %m : !matrix.matrix<3x3xi32>
    scf.yield %s : !matrix.matrix<3x3xi32>
  } else {
    scf.yield %sq : !matrix.matrix<3x3xi32>
  }
  %e = matrix.extract %r[%c1, %c1] : !matrix.matrix<3x3xi32>
  func.return %r, %e : !matrix.matrix<3x3xi32>, i32
}

// CHECK:      result #0 : !matrix.matrix<3x3xi32> =
// CHECK-NEXT:   [6, 0, 0]
// CHECK-NEXT:   [0, 6, 0]
// CHECK-NEXT:   [0, 0, 6]
// CHECK-NEXT: result #1 : i32 = 6

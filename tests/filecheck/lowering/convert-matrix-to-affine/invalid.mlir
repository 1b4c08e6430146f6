// RUN: mx-opt %s -p convert-matrix-to-affine --split-input-file --verify-diagnostics

// expected-error@+1 {{'func.func' uses a memref or vector of matrices, which cannot be lowered: a matrix is a value, not a memory element type}}
func.func @memref_of_matrices(%a: memref<4x!matrix.matrix<2x2xf32>>) {
  func.return
}

// -----

func.func @vector_of_matrices() {
  // expected-error@+1 {{'memref.alloca' uses a memref or vector of matrices, which cannot be lowered: a matrix is a value, not a memory element type}}
  %m = memref.alloca() : memref<vector<2x!matrix.matrix<2x2xf32>>>
  func.return
}

// -----

func.func @unknown_op() -> !matrix.matrix<2x2xf32> {
  // expected-error@+1 {{'test.op' with a matrix operand or result cannot be lowered}}
  %m = "test.op"() : () -> !matrix.matrix<2x2xf32>
  func.return %m : !matrix.matrix<2x2xf32>
}

// -----

func.func @unknown_region_op(%a: !matrix.matrix<2x2xf32>) {
  // expected-error@+1 {{'test.op' with a matrix operand or result cannot be lowered}}
  "test.op"() ({
  ^bb0(%m: !matrix.matrix<2x2xf32>):
    "test.termop"() : () -> ()
  }) : () -> ()
  func.return
}

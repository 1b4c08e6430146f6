// mx-lower-to-llvm{remarks=true}: the remarks of its steps, in order, on
// stderr; without the option it prints none. --print-between-passes and
// --time-passes show the steps, the remark step among them.
// RUN: mx-opt %s -p 'mx-lower-to-llvm{remarks=true}' -o /dev/null 2>&1 | filecheck %s
// RUN: mx-opt %s -p mx-lower-to-llvm -o /dev/null 2>&1 | filecheck %s --check-prefix=QUIET --allow-empty
// RUN: mx-opt %s -p 'mx-lower-to-llvm{remarks=true}' --print-between-passes -o /dev/null 2>&1 | filecheck %s --check-prefix=STEPS

// CHECK: remark: matrix-fold-transposes: @product_transposed: transposes 3 -> 0, materialized 1 -> 0
// CHECK-NEXT: remark: @product_transposed: lowered with 0 loads, 0 stores, 64 multiplies, 48 adds, 0 fmas, 0 divides, 0 transposes
// The kernel of the product (which matrix-fold-transposes rebuilt: located
// at its function).
// CHECK-NEXT: mx-lower-to-llvm.mlir:[[# @LINE + 11]]:1: remark: 'matrix.matmul' op kernel: vectorized{{$}}
// CHECK-NOT: remark

// QUIET-NOT: remark

// STEPS: remark: matrix-fold-transposes: @product_transposed
// STEPS: IR Dump After matrix-fold-transposes
// STEPS: IR Dump After canonicalize
// STEPS: remark: @product_transposed: lowered with
// STEPS: IR Dump After matrix-lowering-remarks
// STEPS: IR Dump After convert-matrix-to-affine
func.func @product_transposed(%a: !matrix.matrix<4x4xf32>, %b: !matrix.matrix<4x4xf32>) -> !matrix.matrix<4x4xf32> {
  %at = matrix.transpose %a : !matrix.matrix<4x4xf32> -> !matrix.matrix<4x4xf32>
  %bt = matrix.transpose %b : !matrix.matrix<4x4xf32> -> !matrix.matrix<4x4xf32>
  %p = matrix.matmul %bt, %at : !matrix.matrix<4x4xf32>, !matrix.matrix<4x4xf32> -> !matrix.matrix<4x4xf32>
  %r = matrix.transpose %p : !matrix.matrix<4x4xf32> -> !matrix.matrix<4x4xf32>
  func.return %r : !matrix.matrix<4x4xf32>
}

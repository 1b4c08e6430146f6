// The tracing front end writes `a @ b.T + c` as the obvious program, and the
// usual passes take it from there: the product and the sum fuse into one
// matmul_add, and the lowering reads the transposed operand in place.

// RUN: python %S/Inputs/trace_gemm.py | filecheck %s --check-prefix=TRACED
// RUN: python %S/Inputs/trace_gemm.py | mx-opt -p matrix-fold-transposes,matrix-fuse-contractions | filecheck %s --check-prefix=FUSED
// RUN: python %S/Inputs/trace_gemm.py | mx-opt -p 'mx-lower-to-llvm{remarks=true}' -o /dev/null 2>&1 | filecheck %s --check-prefix=LOWERED

// TRACED-LABEL: func.func @gemm(%a: !matrix.matrix<4x4xf32>, %b: !matrix.matrix<4x4xf32>, %c: !matrix.matrix<4x4xf32>) -> !matrix.matrix<4x4xf32> {
// TRACED-NEXT:    %[[T:.*]] = matrix.transpose %b : !matrix.matrix<4x4xf32> -> !matrix.matrix<4x4xf32>
// TRACED-NEXT:    %[[P:.*]] = matrix.matmul %a, %[[T]] : !matrix.matrix<4x4xf32>, !matrix.matrix<4x4xf32> -> !matrix.matrix<4x4xf32>
// TRACED-NEXT:    %[[S:.*]] = matrix.add %[[P]], %c : !matrix.matrix<4x4xf32>
// TRACED-NEXT:    func.return %[[S]] : !matrix.matrix<4x4xf32>
// TRACED-NEXT:  }

// FUSED-LABEL: func.func @gemm(
// FUSED-NEXT:    %[[T:.*]] = matrix.transpose %b
// FUSED-NEXT:    %[[R:.*]] = matrix.matmul_add %a, %[[T]], %c : !matrix.matrix<4x4xf32>, !matrix.matrix<4x4xf32>, !matrix.matrix<4x4xf32> -> !matrix.matrix<4x4xf32>
// FUSED-NEXT:    func.return %[[R]]

// The transpose is folded into the product's loads: no transpose, no temporary.
// LOWERED: remark: matrix-fold-transposes: @gemm: transposes 1 -> 1, materialized 0 -> 0
// LOWERED: remark: @gemm: lowered with 0 loads, 0 stores, 64 multiplies, 64 adds, 0 fmas, 0 divides, 0 transposes, 0 temporaries

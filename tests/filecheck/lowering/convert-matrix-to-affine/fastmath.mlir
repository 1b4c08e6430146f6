// RUN: mx-opt %s -p convert-matrix-to-affine | filecheck %s
// RUN: mx-opt %s -p mx-lower-to-llvm -t llvm | filecheck %s --check-prefix=LLVM
// RUN: mx-opt %s -p mx-lower-to-llvm | mx-opt -t llvm | filecheck %s --check-prefix=LLVM

// The fastmath flags of matrix ops become the `fastmath` property of the ops
// they lower to (printed `fastmath<...>`, never a discardable
// `{fastmath = ...}` attribute, which the LLVM lowering ignores), and so reach
// LLVM's instructions.

// CHECK-LABEL: func.func @neg
// CHECK: arith.negf %{{.*}} fastmath<fast> : vector<4xf32>
// CHECK-NOT: {fastmath
// LLVM-LABEL: define void @neg
// LLVM: fneg fast <4 x float>
func.func @neg(%a: !matrix.matrix<4x4xf32>) -> !matrix.matrix<4x4xf32> {
  %r = matrix.neg %a fastmath<fast> : !matrix.matrix<4x4xf32>
  func.return %r : !matrix.matrix<4x4xf32>
}

// CHECK-LABEL: func.func @fma
// CHECK: math.fma %{{.*}}, %{{.*}}, %{{.*}} fastmath<nnan,ninf> : vector<4xf32>
// CHECK-NOT: {fastmath
// LLVM-LABEL: define void @fma
// LLVM: call nnan ninf <4 x float> @llvm.fma.v4f32
func.func @fma(%a: !matrix.matrix<4x4xf32>, %b: !matrix.matrix<4x4xf32>, %c: !matrix.matrix<4x4xf32>) -> !matrix.matrix<4x4xf32> {
  %r = matrix.fma %a, %b, %c fastmath<nnan,ninf> : !matrix.matrix<4x4xf32>
  func.return %r : !matrix.matrix<4x4xf32>
}

// f16 and bf16 fma keep their flags at the affine level (convert-to-llvm then
// expands them to round once, see docs/passes.md).
// CHECK-LABEL: func.func @fma_f16
// CHECK: math.fma %{{.*}}, %{{.*}}, %{{.*}} fastmath<nsz> : vector<4xf16>
// CHECK-NOT: {fastmath
func.func @fma_f16(%a: !matrix.matrix<4x4xf16>, %b: !matrix.matrix<4x4xf16>, %c: !matrix.matrix<4x4xf16>) -> !matrix.matrix<4x4xf16> {
  %r = matrix.fma %a, %b, %c fastmath<nsz> : !matrix.matrix<4x4xf16>
  func.return %r : !matrix.matrix<4x4xf16>
}

// CHECK-LABEL: func.func @fma_bf16
// CHECK: math.fma %{{.*}}, %{{.*}}, %{{.*}} fastmath<nsz> : vector<2xbf16>
// CHECK-NOT: {fastmath
func.func @fma_bf16(%a: !matrix.matrix<2x2xbf16>, %b: !matrix.matrix<2x2xbf16>, %c: !matrix.matrix<2x2xbf16>) -> !matrix.matrix<2x2xbf16> {
  %r = matrix.fma %a, %b, %c fastmath<nsz> : !matrix.matrix<2x2xbf16>
  func.return %r : !matrix.matrix<2x2xbf16>
}

// A product with contract: each step is one fma with the op's flags.
// CHECK-LABEL: func.func @matmul_contract
// CHECK: math.fma %{{.*}}, %{{.*}}, %{{.*}} fastmath<nnan,contract>
// CHECK-NOT: {fastmath
// LLVM-LABEL: define void @matmul_contract
// LLVM: call nnan contract <4 x float> @llvm.fma.v4f32
func.func @matmul_contract(%a: !matrix.matrix<4x4xf32>, %b: !matrix.matrix<4x4xf32>) -> !matrix.matrix<4x4xf32> {
  %r = matrix.matmul %a, %b fastmath<nnan,contract> : !matrix.matrix<4x4xf32>, !matrix.matrix<4x4xf32> -> !matrix.matrix<4x4xf32>
  func.return %r : !matrix.matrix<4x4xf32>
}

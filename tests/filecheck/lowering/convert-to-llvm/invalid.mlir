// RUN: mx-opt %s --split-input-file --verify-diagnostics -p convert-to-llvm

// Types that no LLVM function can take or return are reported at the function.

// expected-error @+1 {{'func.func' op LLVM function argument #1 has incompatible type 'complex<f32>'}}
func.func @complex_argument(%x: f32, %a: complex<f32>) {
  return
}

// -----

// expected-error @+1 {{'func.func' op LLVM function result #0 has incompatible type 'vector<2x2xf32>'}}
func.func private @two_dimensional_vector_result() -> vector<2x2xf32>

// -----

// An op without a lowering is reported where it is.
func.func @unknown_op() -> f32 {
  // expected-error @+1 {{convert-to-llvm: cannot lower 'test.op'}}
  %c = "test.op"() : () -> f32
  return %c : f32
}

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

// -----

// A memref a bare pointer cannot address is reported at the op that accesses it.
func.func @dynamic_inner_dimension(%a: memref<?x?xf32>, %i: index) -> f32 {
  // expected-error @+1 {{'memref.load' op only the leading dimension of a memref may be dynamic with bare pointers, got memref<?x?xf32>}}
  %v = memref.load %a[%i, %i] : memref<?x?xf32>
  return %v : f32
}

// -----

func.func @strided_layout(%a: memref<4x4xf32, strided<[8, 1]>>, %i: index) {
  // expected-error @+1 {{'memref.prefetch' op only identity-layout memrefs lower to bare pointers, got memref<4x4xf32, strided<[8, 1]>>}}
  memref.prefetch %a[%i, %i], read, locality<3>, data : memref<4x4xf32, strided<[8, 1]>>
  return
}

// -----

func.func @dynamic_copy(%a: memref<?xf32>, %b: memref<?xf32>) {
  // expected-error @+1 {{'memref.copy' op copying a dynamic memref needs its size, which a bare pointer does not carry}}
  "memref.copy"(%a, %b) : (memref<?xf32>, memref<?xf32>) -> ()
  return
}

// -----

// A bf16 op is first rewritten in f32 (its extension and truncation are new ops):
// the leftover op is reported at the source line, not unlocated.
func.func @tanh_bf16(%a: bf16) -> bf16 {
  // expected-error @+1 {{'math.tanh' op convert-to-llvm: cannot lower 'math.tanh'}}
  %c = math.tanh %a : bf16
  func.return %c : bf16
}

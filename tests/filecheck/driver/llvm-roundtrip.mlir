// The output of convert-to-llvm parses back: mx's context knows the LLVM ops
// mx adds to xDSL's llvm dialect (llvm.fptosi, llvm.extractelement, ...).
// RUN: mx-opt -p convert-to-llvm %s | mx-opt | filecheck %s

// CHECK-LABEL: llvm.func @casts
// CHECK: llvm.fptosi
// CHECK: llvm.uitofp
// CHECK: llvm.extractelement
func.func @casts(%a: f32, %b: i32, %v: vector<4xf32>, %i: index) -> f32 {
  %x = arith.fptosi %a : f32 to i32
  %y = arith.uitofp %x : i32 to f32
  %e = vector.extract %v[%i] : f32 from vector<4xf32>
  %s = arith.addf %y, %e : f32
  func.return %s : f32
}

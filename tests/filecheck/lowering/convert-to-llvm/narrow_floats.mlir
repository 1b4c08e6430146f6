// RUN: mx-opt %s -p convert-to-llvm --split-input-file | filecheck %s

// No bf16 fptrunc and no bf16 arithmetic reach LLVM: bf16 is computed in f32
// and rounded to nearest even on the bits.
// CHECK-LABEL: llvm.func @bf16_add
func.func @bf16_add(%a: bf16, %b: bf16) -> bf16 {
  // CHECK-NOT: llvm.fptrunc
  // CHECK: llvm.shl %{{.*}}, %{{.*}} : i32
  // CHECK: llvm.fadd %{{.*}}, %{{.*}} : f32
  // CHECK: %[[LSB:.*]] = llvm.and %{{.*}}, %{{.*}} : i32
  // CHECK: %[[BIAS:.*]] = llvm.add %[[LSB]], %{{.*}} : i32
  // The NaN test is a mask (mx.lowering.bitwise): sign of a no-wrap difference.
  // CHECK: llvm.sub %{{.*}}, %{{.*}} overflow<nsw> : i32
  // CHECK: llvm.ashr
  // CHECK: llvm.trunc %{{.*}} : i32 to i16
  // CHECK: %[[R:.*]] = llvm.bitcast %{{.*}} : i16 to bf16
  // CHECK-NOT: llvm.fptrunc
  // CHECK: llvm.return %[[R]] : bf16
  %r = arith.addf %a, %b : bf16
  func.return %r : bf16
}

// -----

// f64 -> f16 goes through f32 rounded to odd (no __truncdfhf2 libcall, no
// double rounding).
// CHECK-LABEL: llvm.func @f64_to_f16
func.func @f64_to_f16(%x: f64) -> f16 {
  // CHECK: llvm.fptrunc %{{.*}} : f64 to f32
  // CHECK: llvm.fpext %{{.*}} : f32 to f64
  // CHECK: llvm.ashr
  // CHECK: llvm.fptrunc %{{.*}} : f32 to f16
  // CHECK-NOT: f64 to f16
  %r = arith.truncf %x : f64 to f16
  func.return %r : f16
}

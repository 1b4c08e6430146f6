// RUN: mx-opt %s -p convert-to-llvm --split-input-file | filecheck %s

// Loops become branches with an i64 induction variable in a block argument.
// CHECK-LABEL: llvm.func @loop
// CHECK-SAME: (%[[A:.*]]: !llvm.ptr, %[[N:.*]]: i64)
func.func @loop(%a: memref<?xf32>, %n: index) {
  %c = arith.constant 2.0 : f32
  // CHECK: llvm.br ^[[HEAD:.*]](%{{.*}} : i64)
  // CHECK: ^[[HEAD]](%[[IV:.*]]: i64):
  // CHECK: %[[CMP:.*]] = llvm.icmp "slt" %[[IV]], %[[N]] : i64
  // CHECK: llvm.cond_br %[[CMP]], ^[[BODY:.*]], ^[[EXIT:.*]]
  affine.for %i = 1 to %n step 2 {
    // d0 * 2 + 1 on the induction variable.
    // CHECK: ^[[BODY]]:
    // CHECK: llvm.mul %[[IV]], %{{.*}} : i64
    %v = affine.load %a[%i * 2 + 1] : memref<?xf32>
    %w = arith.mulf %v, %c : f32
    affine.store %w, %a[%i] : memref<?xf32>
  }
  // CHECK: ^[[EXIT]]:
  // CHECK-NEXT: llvm.return
  func.return
}

// -----

// CHECK-LABEL: llvm.func @apply_mod
func.func @apply_mod(%i: index) -> index {
  // mod is non-negative: i - floordiv(i, 4) * 4, floordiv rounding to -inf.
  // CHECK: llvm.sdiv
  // CHECK: llvm.srem
  // CHECK: llvm.sub
  %r = affine.apply affine_map<(d0) -> (d0 mod 4)>(%i)
  func.return %r : index
}

// -----

// CHECK-LABEL: llvm.func @if_and_min
func.func @if_and_min(%i: index, %n: index, %a: memref<8xindex>) -> index {
  // CHECK: llvm.icmp "sge"
  // CHECK: llvm.cond_br
  "affine.if"(%i, %n) ({
    memref.store %i, %a[%i] : memref<8xindex>
    "affine.yield"() : () -> ()
  }, {
  }) {condition = affine_set<(d0)[s0] : (s0 - d0 - 1 >= 0)>} : (index, index) -> ()
  // CHECK: llvm.call_intrinsic "llvm.smin"
  %m = affine.min affine_map<(d0) -> (d0, 8)>(%i)
  func.return %m : index
}

// RUN: mx-opt %s -p "convert-matrix-to-affine{vector-bits=0}" | filecheck %s
// RUN: mx-opt %s -p "convert-matrix-to-affine{vector-bits=0 stack-bytes=128}" | filecheck %s --check-prefix=CAP

// Buffers of the same type whose lifetimes do not overlap are one buffer:
// %c is dead once %d is computed, so %e is written into %c's buffer (and %f,
// returned, into the out-parameter).
// CHECK-LABEL: func.func @chain
// CHECK-SAME: %[[OUT:[^:]*]]: memref<4x4xf32>)
// CHECK-NEXT: %[[FIRST:.*]] = memref.alloca() {alignment = 64 : i64} : memref<4x4xf32>
// CHECK-NEXT: %[[SECOND:.*]] = memref.alloca() {alignment = 64 : i64} : memref<4x4xf32>
// CHECK-NOT: memref.alloc
// CHECK: affine.store %{{.*}}, %[[SECOND]]
// CHECK: affine.store %{{.*}}, %[[FIRST]]
// CHECK: affine.store %{{.*}}, %[[SECOND]]
// CHECK: affine.store %{{.*}}, %[[OUT]]
// CHECK: func.return
func.func @chain(%a: !matrix.matrix<4x4xf32>, %b: !matrix.matrix<4x4xf32>) -> !matrix.matrix<4x4xf32> {
  %c = matrix.matmul %a, %b : !matrix.matrix<4x4xf32>, !matrix.matrix<4x4xf32> -> !matrix.matrix<4x4xf32>
  %d = matrix.matmul %c, %b : !matrix.matrix<4x4xf32>, !matrix.matrix<4x4xf32> -> !matrix.matrix<4x4xf32>
  %e = matrix.matmul %d, %b : !matrix.matrix<4x4xf32>, !matrix.matrix<4x4xf32> -> !matrix.matrix<4x4xf32>
  %f = matrix.matmul %e, %b : !matrix.matrix<4x4xf32>, !matrix.matrix<4x4xf32> -> !matrix.matrix<4x4xf32>
  return %f : !matrix.matrix<4x4xf32>
}

// A buffer read inside a loop lives through the whole loop (%c, and the
// iter_args' buffer): only the loop body's own temporaries share (%p3 in
// %p1's buffer).
// CHECK-LABEL: func.func @loop
// CHECK-NEXT: %[[P2:.*]] = memref.alloca() {alignment = 64 : i64} : memref<2x2xf32>
// CHECK-NEXT: %[[P1:.*]] = memref.alloca() {alignment = 64 : i64} : memref<2x2xf32>
// CHECK-NEXT: %[[ACC:.*]] = memref.alloca() {alignment = 64 : i64} : memref<2x2xf32>
// CHECK-NEXT: %[[C:.*]] = memref.alloca() {alignment = 64 : i64} : memref<2x2xf32>
// CHECK-NOT: memref.alloc
// CHECK: affine.store %{{.*}}, %[[C]]
// CHECK: affine.store %{{.*}}, %[[ACC]]
// CHECK: scf.for
// CHECK: affine.store %{{.*}}, %[[P1]]
// CHECK: affine.store %{{.*}}, %[[P2]]
// CHECK: affine.store %{{.*}}, %[[P1]]
// CHECK: affine.store %{{.*}}, %[[ACC]]
func.func @loop(%a: !matrix.matrix<2x2xf32>, %b: !matrix.matrix<2x2xf32>, %n: index) -> !matrix.matrix<2x2xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c = matrix.matmul %a, %b : !matrix.matrix<2x2xf32>, !matrix.matrix<2x2xf32> -> !matrix.matrix<2x2xf32>
  %r = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %a) -> (!matrix.matrix<2x2xf32>) {
    %p1 = matrix.matmul %acc, %c : !matrix.matrix<2x2xf32>, !matrix.matrix<2x2xf32> -> !matrix.matrix<2x2xf32>
    %p2 = matrix.matmul %p1, %b : !matrix.matrix<2x2xf32>, !matrix.matrix<2x2xf32> -> !matrix.matrix<2x2xf32>
    %p3 = matrix.matmul %p2, %b : !matrix.matrix<2x2xf32>, !matrix.matrix<2x2xf32> -> !matrix.matrix<2x2xf32>
    scf.yield %p3 : !matrix.matrix<2x2xf32>
  }
  return %r : !matrix.matrix<2x2xf32>
}

// Three live 64-byte buffers: with the default budget all on the stack; with
// `stack-bytes=128` one goes to the heap, freed before every return.
// CHECK-LABEL: func.func @capped
// CHECK-COUNT-3: memref.alloca() {alignment = 64 : i64} : memref<4x4xf32>
// CHECK-NOT: memref.alloc
// CHECK-NOT: memref.dealloc
// CHECK: func.return
// CAP-LABEL: func.func @capped
// CAP-DAG: memref.alloca() {alignment = 64 : i64} : memref<4x4xf32>
// CAP-DAG: %[[HEAP:.*]] = memref.alloc() {alignment = 64 : i64} : memref<4x4xf32>
// CAP-DAG: memref.alloca() {alignment = 64 : i64} : memref<4x4xf32>
// CAP-NOT: memref.alloc
// CAP: affine.store %{{.*}}, %[[HEAP]]
// CAP: ^left:
// CAP: affine.store
// CAP-NEXT: }
// CAP-NEXT: }
// CAP-NEXT: memref.dealloc %[[HEAP]] : memref<4x4xf32>
// CAP-NEXT: func.return
// CAP-NEXT: ^right:
// CAP: affine.store
// CAP-NEXT: }
// CAP-NEXT: }
// CAP-NEXT: memref.dealloc %[[HEAP]] : memref<4x4xf32>
// CAP-NEXT: func.return
func.func @capped(%a: !matrix.matrix<4x4xf32>, %b: !matrix.matrix<4x4xf32>, %flag: i1) -> !matrix.matrix<4x4xf32> {
  %c = matrix.matmul %a, %b : !matrix.matrix<4x4xf32>, !matrix.matrix<4x4xf32> -> !matrix.matrix<4x4xf32>
  %d = matrix.matmul %c, %b : !matrix.matrix<4x4xf32>, !matrix.matrix<4x4xf32> -> !matrix.matrix<4x4xf32>
  %e = matrix.matmul %d, %c : !matrix.matrix<4x4xf32>, !matrix.matrix<4x4xf32> -> !matrix.matrix<4x4xf32>
  cf.cond_br %flag, ^left, ^right
^left:
  return %e : !matrix.matrix<4x4xf32>
^right:
  %f = matrix.add %e, %d : !matrix.matrix<4x4xf32>
  return %f : !matrix.matrix<4x4xf32>
}

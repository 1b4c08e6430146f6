// RUN: mx-opt %s -p "convert-matrix-to-affine{vector-bits=0}" --split-input-file --verify-diagnostics | filecheck %s

// Matrix arguments become memref<CxRxT> arguments; matrix results become
// out-parameters appended in result order; other results stay.
// CHECK-LABEL: func.func private @ext(memref<3x2xf32>, i32, memref<4x4xbf16>, memref<1x1xi4>) -> i32
func.func private @ext(!matrix.matrix<2x3xf32>, i32) -> (!matrix.matrix<4x4xbf16>, i32, !matrix.matrix<1x1xi4>)

// func.call passes the operand's buffer (or a temporary holding a fused value)
// and result buffers: the caller's out-parameter for the result it returns
// (written in place, nothing copied at the return), a fresh buffer otherwise.
// CHECK-LABEL: func.func @caller
// CHECK-SAME: (%[[A:[^:]*]]: memref<3x2xf32>, %[[OUT:[^:]*]]: memref<4x4xbf16>) -> i32
// CHECK-NOT: alloca{{.*}}memref<4x4xbf16>
// CHECK: %[[R1:.*]] = memref.alloca() {alignment = 64 : i64} : memref<1x1xi4>
// CHECK-NOT: alloca{{.*}}memref<4x4xbf16>
// CHECK: %[[X:.*]] = func.call @ext(%[[A]], %{{.*}}, %[[OUT]], %[[R1]]) : (memref<3x2xf32>, i32, memref<4x4xbf16>, memref<1x1xi4>) -> i32
// CHECK-NOT: affine.store
// CHECK: func.return %[[X]] : i32
func.func @caller(%a: !matrix.matrix<2x3xf32>) -> (!matrix.matrix<4x4xbf16>, i32) {
  %c = arith.constant 7 : i32
  %m, %x, %q = func.call @ext(%a, %c) : (!matrix.matrix<2x3xf32>, i32) -> (!matrix.matrix<4x4xbf16>, i32, !matrix.matrix<1x1xi4>)
  return %m, %x : !matrix.matrix<4x4xbf16>, i32
}

// -----

// scf.for: the carried matrix lives in one buffer allocated at function entry,
// filled with the initial value; the body reads it (here also transposed) and
// the yielded value is copied into it at the end of each iteration.
// CHECK-LABEL: func.func @loop
// CHECK-SAME: (%[[A:[^:]*]]: memref<2x2xf32>, %{{.*}}: index, %[[OUT:[^:]*]]: memref<2x2xf32>)
// CHECK: %[[SUM:.*]] = memref.alloca() {alignment = 64 : i64} : memref<2x2xf32>
// CHECK: %[[CARRY:.*]] = memref.alloca() {alignment = 64 : i64} : memref<2x2xf32>
// CHECK: affine.load %[[A]]
// CHECK: affine.store %{{.*}}, %[[CARRY]]
// CHECK: scf.for %{{.*}} = %{{.*}} to %{{.*}} step %{{.*}} {
// CHECK: affine.load %[[CARRY]][%[[R:.*]], %[[C:.*]]]
// CHECK: affine.load %[[CARRY]][%[[C]], %[[R]]]
// CHECK: affine.store %{{.*}}, %[[SUM]]
// CHECK: affine.load %[[SUM]]
// CHECK: affine.store %{{.*}}, %[[CARRY]]
// CHECK-NOT: scf.yield
// CHECK: }
// CHECK: affine.load %[[CARRY]]
// CHECK: affine.store %{{.*}}, %[[OUT]]
func.func @loop(%a: !matrix.matrix<2x2xf32>, %n: index) -> !matrix.matrix<2x2xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %r = scf.for %i = %c0 to %n step %c1 iter_args(%m = %a) -> (!matrix.matrix<2x2xf32>) {
    %t = matrix.transpose %m : !matrix.matrix<2x2xf32> -> !matrix.matrix<2x2xf32>
    %s = matrix.add %t, %m : !matrix.matrix<2x2xf32>
    scf.yield %s : !matrix.matrix<2x2xf32>
  }
  return %r : !matrix.matrix<2x2xf32>
}

// -----

// Large buffers go to the heap and are freed before each return.
// CHECK-LABEL: func.func @large
// CHECK: %[[H:.*]] = memref.alloc() {alignment = 64 : i64} : memref<128x128xf64>
// CHECK: memref.dealloc %[[H]] : memref<128x128xf64>
// CHECK-NEXT: func.return
func.func @large(%a: !matrix.matrix<128x128xf64>) -> !matrix.matrix<128x128xf64> {
  %p = matrix.matmul %a, %a : !matrix.matrix<128x128xf64>, !matrix.matrix<128x128xf64> -> !matrix.matrix<128x128xf64>
  %s = matrix.add %p, %p : !matrix.matrix<128x128xf64>
  return %s : !matrix.matrix<128x128xf64>
}

// A splat of any size that is only stored needs no buffer at all.
// CHECK-LABEL: func.func @huge_splat
// CHECK-NOT: memref.alloc
// CHECK: affine.for %{{.*}} = 0 to 1048575 {
func.func @huge_splat(%x: f32, %mem: memref<?xf32>) {
  %s = matrix.splat %x : !matrix.matrix<1048575x1048575xf32>
  matrix.column_major_store %s, %mem[0] : !matrix.matrix<1048575x1048575xf32>, memref<?xf32>
  return
}

// -----

func.func @too_large(%a: !matrix.matrix<1048575x1048575xf32>) -> !matrix.matrix<1048575x1048575xf32> {
  // expected-error@+1 {{matrix of 1048575x1048575 elements (4398038122500 bytes) is too large to be materialized (the limit is 4294967296 bytes)}}
  %n = matrix.mul %a, %a : !matrix.matrix<1048575x1048575xf32>
  %m = matrix.add %n, %n : !matrix.matrix<1048575x1048575xf32>
  return %m : !matrix.matrix<1048575x1048575xf32>
}

// -----

// A returned product is computed straight into the out-parameter: no buffer
// of its own, no copy before the return.
// CHECK-LABEL: func.func @product_in_place
// CHECK-SAME: (%{{[^:]*}}: memref<3x2xf32>, %{{[^:]*}}: memref<2x3xf32>, %[[OUT:[^:]*]]: memref<2x2xf32>)
// CHECK-NOT: memref.alloca
// CHECK: affine.store %{{.*}}, %[[OUT]]
// CHECK-NOT: affine.load %[[OUT]]
// CHECK: func.return
func.func @product_in_place(%a: !matrix.matrix<2x3xf32>, %b: !matrix.matrix<3x2xf32>) -> !matrix.matrix<2x2xf32> {
  %p = matrix.matmul %a, %b : !matrix.matrix<2x3xf32>, !matrix.matrix<3x2xf32> -> !matrix.matrix<2x2xf32>
  return %p : !matrix.matrix<2x2xf32>
}

// Returned twice: the first out-parameter holds it, the second gets a copy.
// CHECK-LABEL: func.func @returned_twice
// CHECK-SAME: %[[OUT0:[^:]*]]: memref<2x2xf32>, %[[OUT1:[^:]*]]: memref<2x2xf32>)
// CHECK-NOT: memref.alloca
// CHECK: affine.store %{{.*}}, %[[OUT0]]
// CHECK: %[[V:.*]] = affine.load %[[OUT0]]
// CHECK: affine.store %[[V]], %[[OUT1]]
// CHECK: func.return
func.func @returned_twice(%a: !matrix.matrix<2x3xf32>, %b: !matrix.matrix<3x2xf32>) -> (!matrix.matrix<2x2xf32>, !matrix.matrix<2x2xf32>) {
  %p = matrix.matmul %a, %b : !matrix.matrix<2x3xf32>, !matrix.matrix<3x2xf32> -> !matrix.matrix<2x2xf32>
  return %p, %p : !matrix.matrix<2x2xf32>, !matrix.matrix<2x2xf32>
}

// A returned value that other ops read is read from its out-parameter.
// CHECK-LABEL: func.func @read_after_written
// CHECK-SAME: (%[[A:[^:]*]]: memref<2x2xf32>, %[[OUT0:[^:]*]]: memref<2x2xf32>, %[[OUT1:[^:]*]]: memref<2x2xf32>)
// CHECK-NOT: memref.alloca
// CHECK: affine.store %{{.*}}, %[[OUT0]]
// CHECK: affine.load %[[OUT0]]
// CHECK: affine.store %{{.*}}, %[[OUT1]]
// CHECK-NOT: affine.load %[[OUT1]]
// CHECK: func.return
func.func @read_after_written(%a: !matrix.matrix<2x2xf32>) -> (!matrix.matrix<2x2xf32>, !matrix.matrix<2x2xf32>) {
  %s = matrix.add %a, %a : !matrix.matrix<2x2xf32>
  %p = matrix.matmul %s, %s : !matrix.matrix<2x2xf32>, !matrix.matrix<2x2xf32> -> !matrix.matrix<2x2xf32>
  return %s, %p : !matrix.matrix<2x2xf32>, !matrix.matrix<2x2xf32>
}

// With branches another return may hand back another value in the same
// position: each value keeps its buffer and is copied at its return.
// CHECK-LABEL: func.func @branches
// CHECK-SAME: %[[OUT:[^:]*]]: memref<2x2xf32>)
// CHECK-COUNT-2: memref.alloca() {alignment = 64 : i64} : memref<2x2xf32>
// CHECK: affine.store %{{.*}}, %[[P:[^\[]+]][
// CHECK: affine.store %{{.*}}, %[[Q:[^\[]+]][
// CHECK: cf.cond_br
// CHECK: affine.load %[[P]]
// CHECK: affine.store %{{.*}}, %[[OUT]]
// CHECK: affine.load %[[Q]]
// CHECK: affine.store %{{.*}}, %[[OUT]]
func.func @branches(%a: !matrix.matrix<2x2xf32>, %flag: i1) -> !matrix.matrix<2x2xf32> {
  %p = matrix.matmul %a, %a : !matrix.matrix<2x2xf32>, !matrix.matrix<2x2xf32> -> !matrix.matrix<2x2xf32>
  %q = matrix.matmul %p, %a : !matrix.matrix<2x2xf32>, !matrix.matrix<2x2xf32> -> !matrix.matrix<2x2xf32>
  cf.cond_br %flag, ^left, ^right
^left:
  return %p : !matrix.matrix<2x2xf32>
^right:
  return %q : !matrix.matrix<2x2xf32>
}

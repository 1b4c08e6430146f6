// RUN: mx-opt %s -p convert-to-llvm --split-input-file | filecheck %s

// Memrefs are bare pointers; a 2-D access is one GEP over the array type of
// a row (row-major), constant indices in the GEP itself.
// CHECK-LABEL: llvm.func @load_store
// CHECK-SAME: (%[[A:.*]]: !llvm.ptr, %[[I:.*]]: i64, %[[J:.*]]: i64)
func.func @load_store(%a: memref<3x5xf32>, %i: index, %j: index) {
  // CHECK-NOT: llvm.mul
  // CHECK: %[[P:.*]] = llvm.getelementptr inbounds %[[A]][%[[I]], %[[J]]] : (!llvm.ptr, i64, i64) -> !llvm.ptr, !llvm.array<5 x f32>
  // CHECK-NEXT: %[[V:.*]] = llvm.load %[[P]] : !llvm.ptr -> f32
  %v = memref.load %a[%i, %j] : memref<3x5xf32>
  // CHECK-NEXT: %[[Q:.*]] = llvm.getelementptr inbounds %[[A]][%[[J]], 2] : (!llvm.ptr, i64) -> !llvm.ptr, !llvm.array<5 x f32>
  // CHECK-NEXT: llvm.store %[[V]], %[[Q]] : f32, !llvm.ptr
  %c2 = arith.constant 2 : index
  memref.store %v, %a[%j, %c2] : memref<3x5xf32>
  // All-constant indices are one element offset: 1 * 5 + 3.
  // CHECK-NEXT: %[[R:.*]] = llvm.getelementptr inbounds %[[A]][8] : (!llvm.ptr) -> !llvm.ptr, f32
  // CHECK-NEXT: llvm.store %[[V]], %[[R]] : f32, !llvm.ptr
  %c1 = arith.constant 1 : index
  %c3 = arith.constant 3 : index
  memref.store %v, %a[%c1, %c3] : memref<3x5xf32>
  // CHECK-NEXT: llvm.store %[[V]], %[[A]] : f32, !llvm.ptr
  %c0 = arith.constant 0 : index
  memref.store %v, %a[%c0, %c0] : memref<3x5xf32>
  func.return
}

// -----

// All-constant indices fold to one offset computed as index arithmetic is, in
// 64 bits: 2^62 * 4 + 1 wraps to 1. (A dynamic index out of range is undefined
// behaviour when executed, not an error; the fold raised one.)
// CHECK-LABEL: llvm.func @constant_offset_wraps
// CHECK-SAME: (%[[A:.*]]: !llvm.ptr)
func.func @constant_offset_wraps(%a: memref<?x4xf32>) -> f32 {
  // CHECK: llvm.getelementptr inbounds %[[A]][1] : (!llvm.ptr) -> !llvm.ptr, f32
  %big = arith.constant 4611686018427387904 : index
  %c1 = arith.constant 1 : index
  %v = memref.load %a[%big, %c1] : memref<?x4xf32>
  func.return %v : f32
}

// -----

// A constant index beyond i32 is an i64 constant operand.
// CHECK-LABEL: llvm.func @large_index
// CHECK-SAME: (%[[A:.*]]: !llvm.ptr, %[[I:.*]]: i64)
func.func @large_index(%a: memref<?x4xf32>, %i: index) -> f32 {
  // CHECK: %[[BIG:.*]] = llvm.mlir.constant(4294967296) : i64
  // CHECK: llvm.getelementptr inbounds %[[A]][%[[BIG]], %[[I]]] : (!llvm.ptr, i64, i64) -> !llvm.ptr, !llvm.array<4 x f32>
  %big = arith.constant 4294967296 : index
  %v = memref.load %a[%big, %i] : memref<?x4xf32>
  func.return %v : f32
}

// -----

// CHECK-LABEL: llvm.func @dynamic
// CHECK-SAME: (%[[A:.*]]: !llvm.ptr, %[[I:.*]]: i64) -> f64
func.func @dynamic(%a: memref<?xf64>, %i: index) -> f64 {
  // CHECK: llvm.getelementptr inbounds %[[A]][%[[I]]] : (!llvm.ptr, i64) -> !llvm.ptr, f64
  %v = memref.load %a[%i] : memref<?xf64>
  func.return %v : f64
}

// -----

// The allocation functions are declared once, at the top of the module.
// CHECK-DAG: llvm.func @free(!llvm.ptr)
// CHECK-DAG: llvm.func @malloc(i64) -> !llvm.ptr
// CHECK-LABEL: llvm.func @buffers
func.func @buffers(%n: index) {
  // Integer constants are shared by the function, at the start of its body.
  // CHECK-DAG: %[[C4:.*]] = llvm.mlir.constant(4) : i64
  // CHECK-DAG: %[[C16:.*]] = llvm.mlir.constant(16) : i64
  // CHECK: llvm.alloca %[[C16]] x i32 {alignment = 16 : i64} : (i64) -> !llvm.ptr
  %s = memref.alloca() : memref<4x4xi32>
  // CHECK: %[[COUNT:.*]] = llvm.mul %{{.*}}, %{{.*}} : i64
  // CHECK-NEXT: %[[BYTES:.*]] = llvm.mul %[[COUNT]], %[[C4]] : i64
  // CHECK-NEXT: %[[H:.*]] = llvm.call @malloc(%[[BYTES]]) : (i64) -> !llvm.ptr
  %h = memref.alloc(%n) : memref<?xi32>
  // CHECK: llvm.call @free(%[[H]]) : (!llvm.ptr) -> ()
  memref.dealloc %h : memref<?xi32>
  func.return
}

// -----

// An alignment beyond malloc's 16 bytes: aligned_alloc, of the size rounded
// up to a multiple of the alignment (24 bytes -> 64).
// CHECK-LABEL: llvm.func @aligned
func.func @aligned() {
  // CHECK-DAG: %[[C64:.*]] = llvm.mlir.constant(64) : i64
  // CHECK-DAG: %[[MASK:.*]] = llvm.mlir.constant(-64) : i64
  // CHECK-DAG: %[[C63:.*]] = llvm.mlir.constant(63) : i64
  // CHECK: %[[BYTES:.*]] = llvm.mul %{{.*}}, %{{.*}} : i64
  // CHECK-NEXT: %[[UP:.*]] = llvm.add %[[BYTES]], %[[C63]] : i64
  // CHECK-NEXT: %[[SIZE:.*]] = llvm.and %[[UP]], %[[MASK]] : i64
  // CHECK-NEXT: llvm.call @aligned_alloc(%[[C64]], %[[SIZE]]) : (i64, i64) -> !llvm.ptr
  %h = memref.alloc() {alignment = 64 : i64} : memref<3x2xf32>
  memref.dealloc %h : memref<3x2xf32>
  func.return
}

// -----

// CHECK-LABEL: llvm.func @copy
func.func @copy(%a: memref<8xf16>, %b: memref<8xf16>) {
  // 8 halves are 16 bytes.
  // CHECK: %[[N:.*]] = llvm.mlir.constant(16) : i64
  // CHECK: llvm.call_intrinsic "llvm.memcpy"(%{{.*}}, %{{.*}}, %[[N]], %{{.*}}) : (!llvm.ptr, !llvm.ptr, i64, i1) -> ()
  "memref.copy"(%a, %b) : (memref<8xf16>, memref<8xf16>) -> ()
  func.return
}

// -----

// A prefetch is the llvm.prefetch intrinsic on the element's address, with
// its hints as i32 operands (rw: 0 read, 1 write; locality 0..3; cache: 1
// data, 0 instructions): the function's shared constants.
// CHECK-LABEL: llvm.func @prefetch
// CHECK-SAME: (%[[A:.*]]: !llvm.ptr, %[[I:.*]]: i64, %[[J:.*]]: i64)
func.func @prefetch(%a: memref<3x5xf32>, %i: index, %j: index) {
  // CHECK-DAG: %[[ONE:.*]] = llvm.mlir.constant(1 : i32) : i32
  // CHECK-DAG: %[[LOC:.*]] = llvm.mlir.constant(2 : i32) : i32
  // CHECK: %[[P:.*]] = llvm.getelementptr inbounds %[[A]][%[[I]], %[[J]]] : (!llvm.ptr, i64, i64) -> !llvm.ptr, !llvm.array<5 x f32>
  // CHECK: llvm.call_intrinsic "llvm.prefetch"(%[[P]], %[[ONE]], %[[LOC]], %[[ONE]]) : (!llvm.ptr, i32, i32, i32) -> ()
  memref.prefetch %a[%i, %j], write, locality<2>, data : memref<3x5xf32>
  func.return
}

// -----

// A strided layout with the row-major strides and offset 0 is no layout at all.
// CHECK-LABEL: llvm.func @row_major_strides
func.func @row_major_strides(%a: memref<?x4xf32, strided<[4, 1]>>, %i: index) -> f32 {
  // CHECK: llvm.getelementptr inbounds %{{.*}}[%{{.*}}, %{{.*}}] : (!llvm.ptr, i64, i64) -> !llvm.ptr, !llvm.array<4 x f32>
  // CHECK: llvm.load
  %v = memref.load %a[%i, %i] : memref<?x4xf32, strided<[4, 1]>>
  func.return %v : f32
}

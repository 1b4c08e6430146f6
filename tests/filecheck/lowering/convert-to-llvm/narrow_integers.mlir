// RUN: mx-opt %s -p convert-to-llvm --split-input-file | filecheck %s
// RUN: mx-opt %s -p convert-to-llvm --split-input-file -t llvm | filecheck %s --check-prefix=IR

// In memory an i4/i6 container takes one byte, value in the low bits (C's
// uint8_t): every load reads the byte and truncates, every store zero-extends
// and writes the byte. Addresses step over bytes.

// CHECK-LABEL: llvm.func @memref_scalars
// CHECK-SAME: (%[[A:.*]]: !llvm.ptr, %[[B:.*]]: !llvm.ptr, %[[I:.*]]: i64)
func.func @memref_scalars(%a: memref<8xi4>, %b: memref<8xi6>, %i: index) {
  // CHECK: %[[P:.*]] = llvm.getelementptr inbounds %[[A]][%[[I]]] : (!llvm.ptr, i64) -> !llvm.ptr, i8
  // CHECK-NEXT: %[[BYTE:.*]] = llvm.load %[[P]] : !llvm.ptr -> i8
  // CHECK-NEXT: %[[X:.*]] = llvm.trunc %[[BYTE]] : i8 to i4
  %x = memref.load %a[%i] : memref<8xi4>
  %y = arith.extui %x : i4 to i6
  // CHECK: %[[Q:.*]] = llvm.getelementptr inbounds %[[B]][%[[I]]] : (!llvm.ptr, i64) -> !llvm.ptr, i8
  // CHECK-NEXT: %[[WIDE:.*]] = llvm.zext %{{.*}} : i6 to i8
  // CHECK-NEXT: llvm.store %[[WIDE]], %[[Q]] : i8, !llvm.ptr
  memref.store %y, %b[%i] : memref<8xi6>
  // CHECK-NOT: llvm.load %{{.*}} -> i4
  // CHECK-NOT: llvm.store %{{.*}} : i6
  func.return
}

// IR-LABEL: define void @memref_scalars(ptr %{{.*}}, ptr %{{.*}}, i64 %{{.*}})
// IR: getelementptr inbounds i8, ptr
// IR-NEXT: %[[BYTE:.*]] = load i8, ptr
// IR-NEXT: trunc i8 %[[BYTE]] to i4
// IR: %[[WIDE:.*]] = zext i6 %{{.*}} to i8
// IR-NEXT: store i8 %[[WIDE]], ptr
// IR-NOT: load i4
// IR-NOT: store i6

// -----

// CHECK-LABEL: llvm.func @affine_accesses
func.func @affine_accesses(%a: memref<4x3xi6>, %i: index) {
  // CHECK: llvm.getelementptr inbounds %{{.*}}[%{{.*}}, 2] : (!llvm.ptr, i64) -> !llvm.ptr, !llvm.array<3 x i8>
  // CHECK-NEXT: %[[BYTE:.*]] = llvm.load %{{.*}} : !llvm.ptr -> i8
  // CHECK-NEXT: %[[X:.*]] = llvm.trunc %[[BYTE]] : i8 to i6
  %x = affine.load %a[%i, 2] : memref<4x3xi6>
  // CHECK: %[[WIDE:.*]] = llvm.zext %[[X]] : i6 to i8
  // CHECK-NEXT: llvm.store %[[WIDE]], %{{.*}} : i8, !llvm.ptr
  affine.store %x, %a[%i + 1, 0] : memref<4x3xi6>
  func.return
}

// -----

// vector<8xi4> in memory is 8 bytes, not the 4 of LLVM's packed <8 x i4>.
// CHECK-LABEL: llvm.func @vectors
func.func @vectors(%a: memref<16xi4>, %i: index) {
  // CHECK: %[[BYTES:.*]] = llvm.load %{{.*}} {alignment = 1 : i64} : !llvm.ptr -> vector<8xi8>
  // CHECK-NEXT: %[[V:.*]] = llvm.trunc %[[BYTES]] : vector<8xi8> to vector<8xi4>
  %v = vector.load %a[%i] : memref<16xi4>, vector<8xi4>
  // CHECK: %[[WIDE:.*]] = llvm.zext %[[V]] : vector<8xi4> to vector<8xi8>
  // CHECK-NEXT: llvm.store %[[WIDE]], %{{.*}} {alignment = 1 : i64} : vector<8xi8>, !llvm.ptr
  vector.store %v, %a[%i] : memref<16xi4>, vector<8xi4>
  func.return
}

// IR-LABEL: define void @vectors
// IR: %[[BYTES:.*]] = load <8 x i8>, ptr %{{.*}}, align 1
// IR-NEXT: trunc <8 x i8> %[[BYTES]] to <8 x i4>
// IR: %[[WIDE:.*]] = zext <8 x i4> %{{.*}} to <8 x i8>
// IR-NEXT: store <8 x i8> %[[WIDE]], ptr %{{.*}}, align 1

// -----

// i1 is no exception: a vector<8xi1> in memory is 8 bytes (one bool each).
// CHECK-LABEL: llvm.func @bools
func.func @bools(%a: memref<8xi1>) -> vector<8xi1> {
  %c0 = arith.constant 0 : index
  // CHECK: %[[BYTES:.*]] = llvm.load %{{.*}} {alignment = 1 : i64} : !llvm.ptr -> vector<8xi8>
  // CHECK-NEXT: llvm.trunc %[[BYTES]] : vector<8xi8> to vector<8xi1>
  %v = vector.load %a[%c0] : memref<8xi1>, vector<8xi1>
  func.return %v : vector<8xi1>
}

// -----

// Buffers and globals hold bytes; global values are the zero-extended bits.
// CHECK: llvm.mlir.global private constant @table(dense<[15, 7, 8]> : tensor<3xi8>) {addr_space = 0 : i32} : !llvm.array<3 x i8>
// IR: @table = private constant [3 x i8] [i8 15, i8 7, i8 8]
"memref.global"() <{sym_name = "table", sym_visibility = "private", type = memref<3xi4>, initial_value = dense<[-1, 7, 8]> : tensor<3xi4>, constant}> : () -> ()

// CHECK-LABEL: llvm.func @buffers
func.func @buffers(%i: index) -> i4 {
  // CHECK: llvm.alloca %{{.*}} x i8 {alignment = 16 : i64} : (i64) -> !llvm.ptr
  %s = memref.alloca() : memref<4x4xi4>
  %g = memref.get_global @table : memref<3xi4>
  // CHECK: %[[BYTE:.*]] = llvm.load %{{.*}} : !llvm.ptr -> i8
  // CHECK-NEXT: llvm.trunc %[[BYTE]] : i8 to i4
  %x = memref.load %g[%i] : memref<3xi4>
  func.return %x : i4
}

// -----

// Scalars and vectors of containers cross calls as bytes too: the C signature
// of @callee is `uint8_t callee(uint8_t)` (the callee ignores the high bits of
// its argument, the result's are zero).
// CHECK-LABEL: llvm.func @callee
// CHECK-SAME: (%[[ARG:.*]]: i8) -> i8
func.func @callee(%x: i4) -> i6 {
  // CHECK: %[[X:.*]] = llvm.trunc %[[ARG]] : i8 to i4
  // CHECK: %[[Y:.*]] = llvm.zext %[[X]] : i4 to i6
  %y = arith.extui %x : i4 to i6
  // CHECK: %[[R:.*]] = llvm.zext %[[Y]] : i6 to i8
  // CHECK-NEXT: llvm.return %[[R]] : i8
  func.return %y : i6
}

// CHECK-LABEL: llvm.func @caller
// CHECK-SAME: (%[[X:.*]]: i8, %[[V:.*]]: vector<4xi8>, %{{.*}}: !llvm.ptr) -> vector<4xi8>
func.func @caller(%x: i4, %v: vector<4xi4>, %m: memref<i6>) -> vector<4xi4> {
  // CHECK-DAG: %[[VN:.*]] = llvm.trunc %[[V]] : vector<4xi8> to vector<4xi4>
  // CHECK-DAG: %[[XN:.*]] = llvm.trunc %[[X]] : i8 to i4
  // CHECK: %[[XW:.*]] = llvm.zext %[[XN]] : i4 to i8
  // CHECK-NEXT: %[[R:.*]] = llvm.call @callee(%[[XW]]) : (i8) -> i8
  // CHECK-NEXT: %[[RN:.*]] = llvm.trunc %[[R]] : i8 to i6
  %r = func.call @callee(%x) : (i4) -> i6
  // CHECK-NEXT: %[[RW:.*]] = llvm.zext %[[RN]] : i6 to i8
  // CHECK-NEXT: llvm.store %[[RW]]
  memref.store %r, %m[] : memref<i6>
  // CHECK: %[[VW:.*]] = llvm.zext %[[VN]] : vector<4xi4> to vector<4xi8>
  // CHECK-NEXT: llvm.return %[[VW]] : vector<4xi8>
  func.return %v : vector<4xi4>
}

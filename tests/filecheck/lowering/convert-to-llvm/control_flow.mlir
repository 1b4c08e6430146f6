// RUN: mx-opt %s -p convert-to-llvm --split-input-file | filecheck %s

// CHECK-LABEL: llvm.func @while
func.func @while(%n: i32) -> i32 {
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  // CHECK: llvm.br ^[[BEFORE:.*]](%{{.*}} : i32)
  // CHECK: ^[[BEFORE]](%[[X:.*]]: i32):
  // CHECK: %[[C:.*]] = llvm.icmp "slt" %[[X]], %{{.*}} : i32
  // CHECK: llvm.cond_br %[[C]], ^[[AFTER:.*]](%[[X]] : i32), ^[[DONE:.*]](%[[X]] : i32)
  %r = scf.while (%x = %c0) : (i32) -> i32 {
    %c = arith.cmpi slt, %x, %n : i32
    scf.condition(%c) %x : i32
  } do {
  ^bb0(%y: i32):
    // CHECK: ^[[AFTER]](%[[Y:.*]]: i32):
    // CHECK: %[[NEXT:.*]] = llvm.add %[[Y]], %{{.*}} : i32
    // CHECK: llvm.br ^[[BEFORE]](%[[NEXT]] : i32)
    %z = arith.addi %y, %c1 : i32
    scf.yield %z : i32
  }
  // CHECK: ^[[DONE]](%[[R:.*]]: i32):
  // CHECK: llvm.return %[[R]] : i32
  func.return %r : i32
}

// -----

// CHECK-LABEL: llvm.func @if_yield
func.func @if_yield(%c: i1, %a: f32, %b: f32) -> f32 {
  // CHECK: llvm.cond_br %{{.*}}, ^[[T:.*]], ^[[F:.*]]
  %r = scf.if %c -> (f32) {
    scf.yield %a : f32
  } else {
    scf.yield %b : f32
  }
  // CHECK: llvm.br ^[[JOIN:.*]](%{{.*}} : f32)
  // CHECK: llvm.br ^[[JOIN]](%{{.*}} : f32)
  // CHECK: ^[[JOIN]](%[[R:.*]]: f32):
  func.return %r : f32
}

// -----

// CHECK: llvm.func @callee(!llvm.ptr, i64) -> f32
func.func private @callee(memref<?xf32>, index) -> f32
// CHECK-LABEL: llvm.func @caller
func.func @caller(%m: memref<?xf32>, %i: index) -> f32 {
  // CHECK: %[[R:.*]] = llvm.call @callee(%{{.*}}, %{{.*}}) : (!llvm.ptr, i64) -> f32
  %r = func.call @callee(%m, %i) : (memref<?xf32>, index) -> f32
  // CHECK: llvm.return %[[R]] : f32
  func.return %r : f32
}

// -----

// Several results travel in one struct, as in MLIR's LLVM lowering.
// CHECK-LABEL: llvm.func @pair(%{{.*}}: f32, %{{.*}}: i32) -> !llvm.struct<(f32, i32)>
// CHECK:         %[[U:.*]] = llvm.mlir.undef : !llvm.struct<(f32, i32)>
// CHECK-NEXT:    %[[S0:.*]] = llvm.insertvalue %a, %[[U]][0] : !llvm.struct<(f32, i32)>
// CHECK-NEXT:    %[[S1:.*]] = llvm.insertvalue %b, %[[S0]][1] : !llvm.struct<(f32, i32)>
// CHECK-NEXT:    llvm.return %[[S1]] : !llvm.struct<(f32, i32)>
func.func @pair(%a: f32, %b: i32) -> (f32, i32) {
  func.return %a, %b : f32, i32
}

// CHECK-LABEL: llvm.func @second
// CHECK:         %[[R:.*]] = llvm.call @pair(%{{.*}}, %{{.*}}) : (f32, i32) -> !llvm.struct<(f32, i32)>
// CHECK-NEXT:    %[[Y:.*]] = llvm.extractvalue %[[R]][1] : !llvm.struct<(f32, i32)>
// CHECK-NEXT:    llvm.return %[[Y]] : i32
func.func @second(%a: f32, %b: i32) -> i32 {
  %x, %y = func.call @pair(%a, %b) : (f32, i32) -> (f32, i32)
  func.return %y : i32
}

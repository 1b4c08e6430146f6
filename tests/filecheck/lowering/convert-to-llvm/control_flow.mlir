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

// -----

// scf.index_switch: one comparison per case, in the cases' order, each
// falling through to the next; the last one to the default.
// CHECK-LABEL: llvm.func @index_switch
// CHECK-SAME: (%[[I:.*]]: i64, %[[A:.*]]: f32, %[[B:.*]]: f32)
// CHECK-DAG: %[[MINUS1:.*]] = llvm.mlir.constant(-1) : i64
// CHECK-DAG: %[[FOUR:.*]] = llvm.mlir.constant(4) : i64
// CHECK: %[[IS4:.*]] = llvm.icmp "eq" %[[I]], %[[FOUR]] : i64
// CHECK-NEXT: llvm.cond_br %[[IS4]], ^[[CASE4:.*]], ^[[NEXT:.*]]
// CHECK-NEXT: ^[[NEXT]]:
// CHECK-NEXT: %[[ISM1:.*]] = llvm.icmp "eq" %[[I]], %[[MINUS1]] : i64
// CHECK-NEXT: llvm.cond_br %[[ISM1]], ^[[CASEM1:.*]], ^[[DEFAULT:.*]]
// CHECK-NEXT: ^[[CASE4]]:
// CHECK-NEXT: llvm.br ^[[JOIN:.*]](%[[B]] : f32)
// CHECK-NEXT: ^[[CASEM1]]:
// CHECK-NEXT: %[[S:.*]] = llvm.fadd %[[A]], %[[B]] : f32
// CHECK-NEXT: llvm.br ^[[JOIN]](%[[S]] : f32)
// CHECK-NEXT: ^[[DEFAULT]]:
// CHECK-NEXT: llvm.br ^[[JOIN]](%[[A]] : f32)
// CHECK-NEXT: ^[[JOIN]](%[[R:.*]]: f32):
// CHECK: llvm.return %[[R]] : f32
func.func @index_switch(%i: index, %a: f32, %b: f32) -> f32 {
  %r = scf.index_switch %i -> f32
  case 4 {
    scf.yield %b : f32
  }
  case -1 {
    %s = arith.addf %a, %b : f32
    scf.yield %s : f32
  }
  default {
    scf.yield %a : f32
  }
  func.return %r : f32
}

// -----

// scf.index_switch without cases: straight to the default.
// CHECK-LABEL: llvm.func @index_switch_default_only
// CHECK-SAME: (%{{.*}}: i64, %[[A:.*]]: f32)
// CHECK-NEXT: llvm.br ^[[DEFAULT:.*]]
// CHECK-NEXT: ^[[DEFAULT]]:
// CHECK-NEXT: llvm.br ^[[JOIN:.*]](%[[A]] : f32)
// CHECK-NEXT: ^[[JOIN]](%[[R:.*]]: f32):
// CHECK: llvm.return %[[R]] : f32
func.func @index_switch_default_only(%i: index, %a: f32) -> f32 {
  %r = scf.index_switch %i -> f32
  default {
    scf.yield %a : f32
  }
  func.return %r : f32
}

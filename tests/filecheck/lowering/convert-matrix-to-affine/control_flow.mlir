// RUN: mx-opt %s -p "convert-matrix-to-affine{vector-bits=0}" | filecheck %s

// A matrix block argument lives in one buffer; a branch with several
// successors copies on its own edges (new blocks), so that the edge not taken
// writes nothing, even when both edges enter the same block.
// CHECK-LABEL: func.func @edges
// CHECK-SAME: (%{{.*}}: i1, %[[A:[^:]*]]: memref<2x2xf32>, %[[B:[^:]*]]: memref<2x2xf32>, %[[OUT:[^:]*]]: memref<2x2xf32>)
// CHECK: %[[ARG:.*]] = memref.alloca() {alignment = 64 : i64} : memref<2x2xf32>
// CHECK: cf.cond_br %{{.*}}, ^[[TRUE:.*]], ^[[FALSE:[^ ]*]]
// CHECK: ^[[FALSE]]:
// CHECK: affine.load %[[B]]
// CHECK: affine.store %{{.*}}, %[[ARG]]
// CHECK: cf.br ^[[JOIN:.*]]
// CHECK: ^[[TRUE]]:
// CHECK: affine.load %[[A]]
// CHECK: affine.store %{{.*}}, %[[ARG]]
// CHECK: cf.br ^[[JOIN]]
// CHECK: ^[[JOIN]]:
// CHECK: affine.load %[[ARG]]
// CHECK: affine.store %{{.*}}, %[[OUT]]
func.func @edges(%c: i1, %a: !matrix.matrix<2x2xf32>, %b: !matrix.matrix<2x2xf32>) -> !matrix.matrix<2x2xf32> {
  cf.cond_br %c, ^join(%a : !matrix.matrix<2x2xf32>), ^join(%b : !matrix.matrix<2x2xf32>)
^join(%m: !matrix.matrix<2x2xf32>):
  func.return %m : !matrix.matrix<2x2xf32>
}

// Swapped block arguments are a parallel copy: each value is copied to a
// temporary before either buffer is overwritten. Non-matrix arguments stay.
// CHECK-LABEL: func.func @swap
// CHECK-DAG: %[[T1:.*]] = memref.alloca() {alignment = 64 : i64} : memref<2x2xf32>
// CHECK-DAG: %[[T0:.*]] = memref.alloca() {alignment = 64 : i64} : memref<2x2xf32>
// CHECK-DAG: %[[Y:.*]] = memref.alloca() {alignment = 64 : i64} : memref<2x2xf32>
// CHECK-DAG: %[[X:.*]] = memref.alloca() {alignment = 64 : i64} : memref<2x2xf32>
// CHECK: cf.br ^[[HEAD:.*]](%{{.*}} : index)
// CHECK: ^[[HEAD]](%{{.*}}: index):
// CHECK: cf.cond_br %{{.*}}, ^[[EDGE:.*]], ^[[EXIT:[^ ]*]]
// CHECK: ^[[EDGE]]:
// CHECK: affine.load %[[Y]]
// CHECK: affine.store %{{.*}}, %[[T0]]
// CHECK: affine.load %[[X]]
// CHECK: affine.store %{{.*}}, %[[T1]]
// CHECK: affine.load %[[T0]]
// CHECK: affine.store %{{.*}}, %[[X]]
// CHECK: affine.load %[[T1]]
// CHECK: affine.store %{{.*}}, %[[Y]]
// CHECK: cf.br ^[[HEAD]](%{{.*}} : index)
// CHECK: ^[[EXIT]]:
// CHECK: affine.load %[[X]]
func.func @swap(%n: index, %a: !matrix.matrix<2x2xf32>, %b: !matrix.matrix<2x2xf32>) -> !matrix.matrix<2x2xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  cf.br ^head(%c0, %a, %b : index, !matrix.matrix<2x2xf32>, !matrix.matrix<2x2xf32>)
^head(%i: index, %x: !matrix.matrix<2x2xf32>, %y: !matrix.matrix<2x2xf32>):
  %more = arith.cmpi ult, %i, %n : index
  %next = arith.addi %i, %c1 : index
  cf.cond_br %more, ^head(%next, %y, %x : index, !matrix.matrix<2x2xf32>, !matrix.matrix<2x2xf32>), ^exit
^exit:
  func.return %x : !matrix.matrix<2x2xf32>
}

// arith.select of matrices is elementwise: fused into its user, it selects
// between the two elements (here one read transposed).
// CHECK-LABEL: func.func @select
// CHECK-SAME: (%[[C:[^:]*]]: i1, %[[A:[^:]*]]: memref<2x2xf32>, %[[B:[^:]*]]: memref<2x2xf32>, %[[OUT:[^:]*]]: memref<2x2xf32>)
// CHECK-NOT: memref.alloca
// CHECK: %[[X:.*]] = affine.load %[[A]][%[[I:.*]], %[[J:.*]]]
// CHECK: %[[Y:.*]] = affine.load %[[B]][%[[J]], %[[I]]]
// CHECK: %[[S:.*]] = arith.select %[[C]], %[[X]], %[[Y]] : f32
// CHECK: %[[X2:.*]] = affine.load %[[A]][%[[I]], %[[J]]]
// CHECK: %[[R:.*]] = arith.addf %[[S]], %[[X2]] : f32
// CHECK: affine.store %[[R]], %[[OUT]][%[[I]], %[[J]]]
func.func @select(%c: i1, %a: !matrix.matrix<2x2xf32>, %b: !matrix.matrix<2x2xf32>) -> !matrix.matrix<2x2xf32> {
  %t = matrix.transpose %b : !matrix.matrix<2x2xf32> -> !matrix.matrix<2x2xf32>
  %s = arith.select %c, %a, %t : !matrix.matrix<2x2xf32>
  %r = matrix.add %s, %a : !matrix.matrix<2x2xf32>
  func.return %r : !matrix.matrix<2x2xf32>
}

// scf.index_switch: every case writes the result's buffer (allocated before
// the negation's temporary, so printed after it).
// CHECK-LABEL: func.func @switch
// CHECK: %[[NEG:.*]] = memref.alloca() {alignment = 64 : i64} : memref<2x2xf32>
// CHECK-NEXT: %[[R:.*]] = memref.alloca() {alignment = 64 : i64} : memref<2x2xf32>
// CHECK: scf.index_switch %{{.*}}
// CHECK-NEXT: case 3 {
// CHECK: arith.negf
// CHECK: affine.store %{{.*}}, %[[NEG]]
// CHECK: affine.store %{{.*}}, %[[R]]
// CHECK: scf.yield
// CHECK-NEXT: }
// CHECK-NEXT: default {
// CHECK: affine.store %{{.*}}, %[[R]]
// CHECK: scf.yield
// CHECK-NEXT: }
// CHECK: affine.load %[[R]]
func.func @switch(%i: index, %a: !matrix.matrix<2x2xf32>) -> !matrix.matrix<2x2xf32> {
  %r = scf.index_switch %i -> !matrix.matrix<2x2xf32>
  case 3 {
    %n = matrix.neg %a : !matrix.matrix<2x2xf32>
    scf.yield %n : !matrix.matrix<2x2xf32>
  }
  default {
    scf.yield %a : !matrix.matrix<2x2xf32>
  }
  func.return %r : !matrix.matrix<2x2xf32>
}

// affine.for iter_args: as scf.for, one buffer filled before the loop; the
// loop keeps its bounds and loses the matrix iter_arg and result.
// CHECK-LABEL: func.func @iter_args
// CHECK: %[[TMP:.*]] = memref.alloca() {alignment = 64 : i64} : memref<2x2xf32>
// CHECK-NEXT: %[[CARRY:.*]] = memref.alloca() {alignment = 64 : i64} : memref<2x2xf32>
// CHECK: affine.store %{{.*}}, %[[CARRY]]
// CHECK: affine.for %{{.*}} = 0 to 3 {
// CHECK: affine.load %[[CARRY]][%[[C:.*]], %[[R:.*]]]
// CHECK: affine.store %{{.*}}, %[[TMP]]
// CHECK: affine.store %{{.*}}, %[[CARRY]]
// CHECK-NOT: affine.yield %
// CHECK: affine.load %[[CARRY]]
func.func @iter_args(%a: !matrix.matrix<2x2xf32>) -> !matrix.matrix<2x2xf32> {
  %r = affine.for %i = 0 to 3 iter_args(%m = %a) -> (!matrix.matrix<2x2xf32>) {
    %t = matrix.transpose %m : !matrix.matrix<2x2xf32> -> !matrix.matrix<2x2xf32>
    affine.yield %t : !matrix.matrix<2x2xf32>
  }
  func.return %r : !matrix.matrix<2x2xf32>
}

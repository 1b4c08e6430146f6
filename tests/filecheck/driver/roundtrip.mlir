// RUN: mx-opt %s | filecheck %s
// RUN: mx-opt %s --print-op-generic | filecheck %s --check-prefix=GENERIC
// RUN: mx-opt %s -o %t && filecheck %s --input-file=%t

// CHECK-LABEL: func.func @add
// CHECK-NEXT:    %[[S:.*]] = arith.addi %{{.*}}, %{{.*}} : i32
// CHECK-NEXT:    func.return %[[S]] : i32
// GENERIC-LABEL: "func.func"
// GENERIC:         "arith.addi"
func.func @add(%a : i32, %b : i32) -> i32 {
  %s = arith.addi %a, %b : i32
  func.return %s : i32
}

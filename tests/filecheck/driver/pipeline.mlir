// -p runs a pipeline; --split-input-file prints each chunk, separated as mlir-opt does.
// RUN: mx-opt %s --split-input-file -p 'canonicalize,cse' | filecheck %s
// RUN: not mx-opt %s -p 'canonicalize,cse{bogus=1}' 2>&1 | filecheck %s --check-prefix=BADOPT
// RUN: not mx-opt %s -p 'canonicalise' 2>&1 | filecheck %s --check-prefix=BADPASS

// BADOPT: <pipeline>:1:18: error: pass 'cse' has no option 'bogus' (it has no options)
// BADOPT-NEXT: canonicalize,cse{bogus=1}
// BADOPT-NEXT: {{^                 \^$}}
// BADPASS: <pipeline>:1:1: error: unknown pass 'canonicalise'; did you mean: canonicalize

// CHECK-LABEL: func.func @fold
// CHECK-NEXT:    %[[C:.*]] = arith.constant 5 : i32
// CHECK-NEXT:    func.return %[[C]] : i32
func.func @fold() -> i32 {
  %a = arith.constant 2 : i32
  %b = arith.constant 3 : i32
  %s = arith.addi %a, %b : i32
  func.return %s : i32
}

// -----

// CHECK:       // -----
// CHECK-LABEL: func.func @cse
// CHECK-NEXT:    %[[S:.*]] = arith.muli %{{.*}}, %{{.*}} : i32
// CHECK-NEXT:    func.return %[[S]], %[[S]] : i32, i32
func.func @cse(%x : i32) -> (i32, i32) {
  %a = arith.muli %x, %x : i32
  %b = arith.muli %x, %x : i32
  func.return %a, %b : i32, i32
}

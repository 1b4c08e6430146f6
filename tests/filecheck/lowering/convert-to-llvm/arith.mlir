// RUN: mx-opt %s -p convert-to-llvm --split-input-file | filecheck %s

// CHECK-LABEL: llvm.func @int_ops
func.func @int_ops(%a: i32, %b: i32) -> i32 {
  // CHECK: %[[ADD:.*]] = llvm.add %{{.*}}, %{{.*}} overflow<nsw> : i32
  %0 = arith.addi %a, %b overflow<nsw> : i32
  // CHECK: llvm.sdiv %[[ADD]], %{{.*}} : i32
  %1 = arith.divsi %0, %b : i32
  // CHECK: llvm.udiv
  %2 = arith.divui %1, %b : i32
  // CHECK: llvm.lshr
  %3 = arith.shrui %2, %b : i32
  // CHECK: llvm.ashr
  %4 = arith.shrsi %3, %b : i32
  // CHECK: llvm.call_intrinsic "llvm.smax"(%{{.*}}, %{{.*}}) : (i32, i32) -> i32
  %5 = arith.maxsi %4, %a : i32
  // CHECK: llvm.icmp "ult"
  %6 = arith.cmpi ult, %5, %a : i32
  // CHECK: llvm.select %{{.*}}, %{{.*}}, %{{.*}} : i1, i32
  %7 = arith.select %6, %5, %a : i32
  func.return %7 : i32
}

// -----

// CHECK-LABEL: llvm.func @float_ops
func.func @float_ops(%a: f32, %b: f32) -> f32 {
  // CHECK: llvm.fadd %{{.*}}, %{{.*}} {fastmathFlags = #llvm.fastmath<contract>} : f32
  %0 = arith.addf %a, %b fastmath<contract> : f32
  // CHECK: llvm.fmul %{{.*}}, %{{.*}} : f32
  %1 = arith.mulf %0, %b : f32
  // CHECK: llvm.fneg %{{.*}} : f32
  %2 = arith.negf %1 : f32
  // CHECK: llvm.fcmp "olt"
  %3 = arith.cmpf olt, %2, %a : f32
  %4 = arith.select %3, %2, %a : f32
  func.return %4 : f32
}

// -----

// CHECK-LABEL: llvm.func @casts
func.func @casts(%a: i32, %f: f64, %n: index) -> i64 {
  // CHECK: llvm.sext %{{.*}} : i32 to i64
  %0 = arith.extsi %a : i32 to i64
  // CHECK: llvm.fptosi %{{.*}} : f64 to i64
  %1 = arith.fptosi %f : f64 to i64
  // index is i64: index_cast to i64 is the value itself.
  // CHECK-NOT: unrealized_conversion_cast
  %4 = arith.index_cast %n : index to i64
  %5 = arith.addi %0, %1 : i64
  %6 = arith.addi %5, %4 : i64
  func.return %6 : i64
}

// -----

// CHECK-LABEL: llvm.func @float_casts
func.func @float_casts(%a: i32, %f: f64) -> f32 {
  // CHECK: llvm.uitofp %{{.*}} : i32 to f32
  %0 = arith.uitofp %a : i32 to f32
  // CHECK: llvm.fptrunc %{{.*}} : f64 to f32
  %1 = arith.truncf %f : f64 to f32
  %2 = arith.addf %0, %1 : f32
  func.return %2 : f32
}

// -----

// CHECK-LABEL: llvm.func @vectors
// CHECK-SAME: (%{{.*}}: vector<4xf32>, %{{.*}}: vector<4xf32>) -> vector<4xf32>
func.func @vectors(%a: vector<4xf32>, %b: vector<4xf32>) -> vector<4xf32> {
  // CHECK: llvm.mlir.constant(dense<1.500000e+00> : vector<4xf32>) : vector<4xf32>
  %c = arith.constant dense<1.5> : vector<4xf32>
  // CHECK: llvm.fadd %{{.*}}, %{{.*}} : vector<4xf32>
  %0 = arith.addf %a, %c : vector<4xf32>
  func.return %0 : vector<4xf32>
}

// -----

// The rounding divisions add or subtract their i1 "inexact" flag, zero-extended to
// the operand type; for i1 operands the flag is already of that type (a zext from
// i1 to i1 is invalid LLVM: the lowering's output did not verify).
// CHECK-LABEL: llvm.func @rounding_divisions
// CHECK:         %[[Q:.*]] = llvm.udiv %{{.*}}, %{{.*}} : i32
// CHECK:         %[[R:.*]] = llvm.urem
// CHECK:         %[[INEXACT:.*]] = llvm.icmp "ne" %[[R]], %{{.*}} : i32
// CHECK:         %[[STEP:.*]] = llvm.zext %[[INEXACT]] : i1 to i32
// CHECK:         llvm.add %[[Q]], %[[STEP]] : i32
// CHECK:         %[[Q1:.*]] = llvm.udiv %{{.*}}, %{{.*}} : i1
// CHECK-NOT:     llvm.zext
// CHECK:         %[[INEXACT1:.*]] = llvm.icmp "ne" %{{.*}}, %{{.*}} : i1
// CHECK-NEXT:    llvm.add %[[Q1]], %[[INEXACT1]] : i1
// CHECK-NOT:     llvm.zext {{.*}} : i1 to i1
// CHECK:         llvm.return
func.func @rounding_divisions(%a: i32, %b: i32, %p: i1, %q: i1, %v: vector<2xi1>) -> (i32, i1, i1, i1, vector<2xi1>) {
  %0 = arith.ceildivui %a, %b : i32
  %1 = arith.ceildivui %p, %q : i1
  %2 = arith.ceildivsi %p, %q : i1
  %3 = arith.floordivsi %p, %q : i1
  %4 = arith.floordivsi %v, %v : vector<2xi1>
  func.return %0, %1, %2, %3, %4 : i32, i1, i1, i1, vector<2xi1>
}

// -----

// maximumf on vectors: its comparisons give an i1 per lane (they were built as
// scalar i1 compares of vectors, and the lowering did not verify).
// CHECK-LABEL: llvm.func @vector_maximumf
// CHECK:         %[[UNDEF:.*]] = llvm.mlir.undef : vector<2xi1>
// CHECK:         llvm.fcmp "ogt" %{{.*}}, %{{.*}} : f32
// CHECK-NEXT:    llvm.insertelement %{{.*}}, %[[UNDEF]][%{{.*}} : i32] : vector<2xi1>
// CHECK:         llvm.sext %{{.*}} : vector<2xi1> to vector<2xi32>
// CHECK:         llvm.fcmp "oeq" %{{.*}}, %{{.*}} : f32
// CHECK:         llvm.fcmp "uno" %{{.*}}, %{{.*}} : f32
// CHECK:         llvm.return %{{.*}} : vector<2xf32>
func.func @vector_maximumf(%a: vector<2xf32>, %b: vector<2xf32>) -> vector<2xf32> {
  %c = arith.maximumf %a, %b : vector<2xf32>
  func.return %c : vector<2xf32>
}

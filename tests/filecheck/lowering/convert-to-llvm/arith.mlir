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

// RUN: mx-opt %s -p convert-arbfp-to-arith | filecheck %s
// RUN: mx-opt %s -p convert-arbfp-to-arith,convert-to-llvm | filecheck %s --check-prefix=LLVM

// Vector operands lower to the scalar code's arithmetic on vectors: every
// condition is an integer mask (no i1 compares or selects, which xDSL 0.75
// cannot type for vectors); the width changes are LLVM's own vector zext/trunc
// (xDSL 0.75's extui/trunci are scalar-only; a lane-by-lane chain made LLVM 22's
// SLP vectorizer abort).

// CHECK-LABEL: func.func @from_f8e4m3fn
// CHECK-NOT: arbfp
// CHECK-NOT: arith.cmpi
// CHECK-NOT: arith.select
// CHECK-NOT: vector.extract
// CHECK: %[[X:.*]] = llvm.zext %v : vector<4xi8> to vector<4xi32>
// CHECK-NOT: vector.insert
// CHECK: arith.andi %[[X]], %{{.*}} : vector<4xi32>
// CHECK: arith.extf %{{.*}} : vector<4xf16> to vector<4xf32>
// CHECK: arith.shrsi %{{.*}}, %{{.*}} : vector<4xi32>
// CHECK: %[[R:.*]] = arith.bitcast %{{.*}} : vector<4xi32> to vector<4xf32>
// CHECK-NOT: arith.cmpi
// CHECK-NOT: arith.select
// CHECK: func.return %[[R]] : vector<4xf32>
func.func @from_f8e4m3fn(%v: vector<4xi8>) -> vector<4xf32> {
  %r = arbfp.convert_from f8e4m3fn %v : vector<4xi8> to vector<4xf32>
  func.return %r : vector<4xf32>
}

// i6 in, bf16 out: the f32 bits' high halves, truncated.
// CHECK-LABEL: func.func @from_f6e3m2fn_bf16
// CHECK: llvm.zext %v : vector<2xi6> to vector<2xi16>
// CHECK: arith.extf %{{.*}} : vector<2xf16> to vector<2xf32>
// CHECK: arith.shrui %{{.*}}, %{{.*}} : vector<2xi32>
// CHECK: %[[H:.*]] = llvm.trunc %{{.*}} : vector<2xi32> to vector<2xi16>
// CHECK: %[[R:.*]] = arith.bitcast %[[H]] : vector<2xi16> to vector<2xbf16>
// CHECK: func.return %[[R]]
func.func @from_f6e3m2fn_bf16(%v: vector<2xi6>) -> vector<2xbf16> {
  %r = arbfp.convert_from f6e3m2fn %v : vector<2xi6> to vector<2xbf16>
  func.return %r : vector<2xbf16>
}

// convert_to rounds f16 in i32 lanes; the result is truncated.
// CHECK-LABEL: func.func @to_f4e2m1fn
// CHECK-NOT: arith.cmpi
// CHECK: arith.extf %x : vector<8xf16> to vector<8xf32>
// CHECK: arith.bitcast %{{.*}} : vector<8xf32> to vector<8xi32>
// CHECK: arith.subi %{{.*}}, %{{.*}} overflow<nsw> : vector<8xi32>
// CHECK: arith.shrsi %{{.*}}, %{{.*}} : vector<8xi32>
// CHECK: arith.minsi %{{.*}}, %{{.*}} : vector<8xi32>
// CHECK: %[[R:.*]] = llvm.trunc %{{.*}} : vector<8xi32> to vector<8xi4>
// CHECK-NOT: arith.select
// CHECK: func.return %[[R]] : vector<8xi4>
func.func @to_f4e2m1fn(%x: vector<8xf16>) -> vector<8xi4> {
  %r = arbfp.convert_to f4e2m1fn %x rounding downward saturate : vector<8xf16> to vector<8xi4>
  func.return %r : vector<8xi4>
}

// bf16 sources are widened with integer shifts (never an extf from bf16).
// CHECK-LABEL: func.func @to_f8e5m2_from_bf16
// CHECK-NOT: arith.extf {{.*}} bf16
// CHECK: %[[B:.*]] = arith.bitcast %x : vector<2xbf16> to vector<2xi16>
// CHECK: llvm.zext %[[B]] : vector<2xi16> to vector<2xi32>
// CHECK: arith.shli %{{.*}}, %{{.*}} : vector<2xi32>
// CHECK-NOT: arith.extf
// CHECK: llvm.trunc %{{.*}} : vector<2xi32> to vector<2xi8>
func.func @to_f8e5m2_from_bf16(%x: vector<2xbf16>) -> vector<2xi8> {
  %r = arbfp.convert_to f8e5m2 %x : vector<2xbf16> to vector<2xi8>
  func.return %r : vector<2xi8>
}

// Through convert-to-llvm: LLVM vector instructions, no compares or selects.
// LLVM-LABEL: llvm.func @from_f8e4m3fn
// LLVM-NOT: llvm.icmp
// LLVM-NOT: llvm.select
// LLVM: llvm.fpext %{{.*}} : vector<4xf16> to vector<4xf32>
// LLVM: llvm.fmul %{{.*}}, %{{.*}} : vector<4xf32>
// LLVM-NOT: llvm.icmp
// LLVM-NOT: llvm.select
// LLVM: llvm.return %{{.*}} : vector<4xf32>
// LLVM-LABEL: llvm.func @to_f4e2m1fn
// LLVM-NOT: llvm.icmp
// LLVM-NOT: llvm.select
// LLVM: llvm.ashr %{{.*}}, %{{.*}} : vector<8xi32>
// An i4 vector result crosses the call as bytes (zero high bits).
// LLVM: %[[BYTES:.*]] = llvm.zext %{{.*}} : vector<8xi4> to vector<8xi8>
// LLVM: llvm.return %[[BYTES]] : vector<8xi8>

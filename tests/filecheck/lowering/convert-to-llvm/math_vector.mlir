// RUN: mx-opt %s -p convert-to-llvm --split-input-file | filecheck %s

// CHECK-LABEL: llvm.func @math
func.func @math(%x: f64, %y: f64, %i: i32) -> f64 {
  // CHECK: llvm.intr.fma(%{{.*}}, %{{.*}}, %{{.*}}) {fastmathFlags = #llvm.fastmath<contract>} : (f64, f64, f64) -> f64
  %0 = math.fma %x, %y, %x fastmath<contract> : f64
  // CHECK: llvm.intr.sqrt
  %1 = math.sqrt %0 : f64
  // CHECK: llvm.intr.fabs
  %2 = math.absf %1 : f64
  // CHECK: llvm.call_intrinsic "llvm.roundeven"(%{{.*}}) : (f64) -> f64
  %3 = math.roundeven %2 : f64
  func.return %3 : f64
}

// -----

// An undef is shared by the function, like constants: at its entry.
// CHECK-LABEL: llvm.func @vector
// CHECK-SAME: (%[[M:.*]]: !llvm.ptr, %[[S:.*]]: f32)
// CHECK: %[[U:.*]] = llvm.mlir.undef : vector<4xf32>
func.func @vector(%m: memref<16xf32>, %s: f32) -> f32 {
  %c4 = arith.constant 4 : index
  // A constant index is the GEP's own.
  // CHECK: %[[P:.*]] = llvm.getelementptr inbounds %[[M]][4] : (!llvm.ptr) -> !llvm.ptr, f32
  // CHECK: %[[V:.*]] = llvm.load %[[P]] {alignment = 4 : i64} : !llvm.ptr -> vector<4xf32>
  %v = vector.load %m[%c4] : memref<16xf32>, vector<4xf32>
  // CHECK-NOT: llvm.mlir.undef
  // CHECK: %[[L0:.*]] = llvm.insertelement %[[S]], %[[U]][%{{.*}} : i32] : vector<4xf32>
  // CHECK: %[[B:.*]] = llvm.shufflevector %[[L0]], %[[U]] [0, 0, 0, 0] : vector<4xf32>
  %b = vector.broadcast %s : f32 to vector<4xf32>
  // CHECK: %[[F:.*]] = llvm.intr.fma(%[[V]], %[[B]], %[[V]]) : (vector<4xf32>, vector<4xf32>, vector<4xf32>) -> vector<4xf32>
  %f = vector.fma %v, %b, %v : vector<4xf32>
  // CHECK: llvm.store %[[F]], %{{.*}} {alignment = 4 : i64} : vector<4xf32>, !llvm.ptr
  vector.store %f, %m[%c4] : memref<16xf32>, vector<4xf32>
  // CHECK: llvm.extractelement %[[F]][%{{.*}} : i64] : vector<4xf32>
  %e = vector.extract %f[2] : f32 from vector<4xf32>
  func.return %e : f32
}

// -----

// exp2/log2/log10 are LLVM intrinsics; the integer intrinsics take index as i64
// (an index operand was left behind a type conversion).
// CHECK-LABEL: llvm.func @intrinsics
// CHECK:         llvm.call_intrinsic "llvm.exp2"(%{{.*}}) : (vector<4xf32>) -> vector<4xf32>
// CHECK:         llvm.call_intrinsic "llvm.log2"(%{{.*}}) : (vector<4xf32>) -> vector<4xf32>
// CHECK:         llvm.call_intrinsic "llvm.log10"(%{{.*}}) : (vector<4xf32>) -> vector<4xf32>
// CHECK:         llvm.call_intrinsic "llvm.abs"(%{{.*}}, %{{.*}}) : (i64, i1) -> i64
// CHECK:         llvm.call_intrinsic "llvm.ctpop"(%{{.*}}) : (i64) -> i64
func.func @intrinsics(%x: vector<4xf32>, %i: index) -> (vector<4xf32>, index) {
  %0 = math.exp2 %x : vector<4xf32>
  %1 = math.log2 %0 : vector<4xf32>
  %2 = math.log10 %1 : vector<4xf32>
  %3 = math.absi %i : index
  %4 = math.ctpop %3 : index
  func.return %2, %4 : vector<4xf32>, index
}

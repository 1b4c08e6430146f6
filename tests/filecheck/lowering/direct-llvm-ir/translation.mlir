// RUN: mx-opt %s -p mx-lower-to-llvm -t llvm | filecheck %s
// RUN: mx-opt %s -p mx-lower-to-llvm | mx-opt -t llvm | filecheck %s

// `-p mx-lower-to-llvm -t llvm` translates the functions it covers from the affine
// level; the two-step run goes through the llvm dialect. Both give these lines.
// A function with a loop aligns its stack to 64 bytes (512-bit spill slots);
// a straight-line one keeps its frame.

// CHECK-LABEL: define void @scale(
// CHECK-SAME: ptr %{{.*}}, float %[[S:.*]], i64 %[[N:[^)]*]]) alignstack(64) {
func.func @scale(%a: memref<?x4xf32>, %s: f32, %n: index) {
  %c0 = arith.constant 0 : index
  // CHECK: %[[I:.*]] = phi i64 [ 1, %bb0 ], [ %[[NEXT:.*]], %bb{{.*}} ]
  // CHECK-NEXT: %[[IN:.*]] = icmp slt i64 %[[I]], %[[N]]
  // CHECK-NEXT: br i1 %[[IN]], label %[[BODY:.*]], label %[[END:.*]]
  affine.for %i = 1 to %n step 2 {
    // CHECK: %[[P:.*]] = getelementptr inbounds [4 x float], ptr %{{.*}}, i64 %[[I]], i32 0
    // CHECK-NEXT: %[[V:.*]] = load <4 x float>, ptr %[[P]], align 4
    %v = vector.load %a[%i, %c0] : memref<?x4xf32>, vector<4xf32>
    // CHECK-NEXT: %[[L:.*]] = insertelement <4 x float> undef, float %[[S]], i32 0
    // CHECK-NEXT: %[[B:.*]] = shufflevector <4 x float> %[[L]], <4 x float> undef, <4 x i32> <i32 0, i32 0, i32 0, i32 0>
    %b = vector.broadcast %s : f32 to vector<4xf32>
    // CHECK-NEXT: %[[M:.*]] = fmul contract <4 x float> %[[V]], %[[B]]
    %m = arith.mulf %v, %b fastmath<contract> : vector<4xf32>
    // CHECK-NEXT: %[[F:.*]] = call <4 x float> @llvm.fma.v4f32(<4 x float> %[[M]], <4 x float> %[[B]], <4 x float> %[[V]])
    %f = vector.fma %m, %b, %v : vector<4xf32>
    // CHECK: store <4 x float> %[[F]], ptr %{{.*}}, align 4
    vector.store %f, %a[%i, %c0] : memref<?x4xf32>, vector<4xf32>
    // CHECK: %[[NEXT]] = add i64 %[[I]], 2
    // CHECK-NEXT: br label %bb
  }
  // CHECK: ret void
  func.return
}

// CHECK-LABEL: define double @sum(
// CHECK-SAME: ptr %[[A:[^)]*]]) alignstack(64) {
func.func @sum(%a: memref<8xf64>) -> f64 {
  %zero = arith.constant 0.0 : f64
  // CHECK: %[[ACC:.*]] = phi double [ 0x0000000000000000, %bb0 ], [ %[[ADD:.*]], %bb{{.*}} ]
  %r = affine.for %i = 0 to 8 iter_args(%acc = %zero) -> (f64) {
    // CHECK: %[[X:.*]] = load double, ptr %{{.*}}
    %x = affine.load %a[%i] : memref<8xf64>
    // CHECK-NEXT: %[[ADD]] = fadd double %[[ACC]], %[[X]]
    %s = arith.addf %acc, %x : f64
    affine.yield %s : f64
  }
  // A constant index is an element offset; index 0 is the base pointer.
  // CHECK: %[[Q:.*]] = getelementptr inbounds double, ptr %[[A]], i32 3
  // CHECK-NEXT: store double %[[ACC]], ptr %[[Q]]
  affine.store %r, %a[3] : memref<8xf64>
  // CHECK: ret double %[[ACC]]
  func.return %r : f64
}

// Covered: f16 arithmetic is LLVM's own.
// CHECK-LABEL: define half @half(
// CHECK-SAME: half %{{[^)]*}}) {
// CHECK: fadd half
func.func @half(%x: f16, %y: f16) -> f16 {
  %s = arith.addf %x, %y : f16
  func.return %s : f16
}

// Not covered (convert-to-llvm widens f16 to f64 through f32, avoiding a libcall):
// lowered through the llvm dialect, in the same output.
// CHECK-LABEL: define double @widen(
// CHECK-SAME: half %{{[^)]*}}) {
// CHECK: %[[F:.*]] = fpext half %{{.*}} to float
// CHECK-NEXT: fpext float %[[F]] to double
func.func @widen(%x: f16) -> f64 {
  %w = arith.extf %x : f16 to f64
  func.return %w : f64
}

// CHECK: declare <4 x float> @llvm.fma.v4f32(<4 x float>, <4 x float>, <4 x float>)

// RUN: mx-opt %s -p convert-to-llvm -t llvm | filecheck %s

// CHECK: target datalayout = "{{.*}}"
// CHECK: target triple = "{{.*}}"
// CHECK-LABEL: define void @k(ptr %{{.*}}, i64 %[[N:.*]])
func.func @k(%a: memref<?xbf16>, %n: index) {
  %h = arith.constant 1.5 : bf16
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  // Loop-carried block arguments become phis.
  // CHECK: %[[I:.*]] = phi i64 [ 0, %bb0 ], [ %{{.*}}, %bb{{.*}} ]
  scf.for %i = %c0 to %n step %c1 {
    // A bf16 is held as the i16 of its bits (0x3FC0 = 16320 is 1.5).
    // CHECK: %[[P:.*]] = getelementptr inbounds i16, ptr %{{.*}}, i64 %[[I]]
    // CHECK: store i16 16320, ptr %[[P]]
    memref.store %h, %a[%i] : memref<?xbf16>
  }
  // CHECK: ret void
  func.return
}

// CHECK-LABEL: define half @h(half %{{.*}}, double %{{.*}})
func.func @h(%x: f16, %d: f64) -> f16 {
  // CHECK: fadd fast half %{{.*}}, 0xH3E00
  %c = arith.constant 1.5 : f16
  %r = arith.addf %x, %c fastmath<fast> : f16
  // CHECK: fmul double %{{.*}}, 0x3FB999999999999A
  %t = arith.constant 0.1 : f64
  %u = arith.mulf %d, %t : f64
  %v = arith.truncf %u : f64 to f16
  %w = arith.addf %r, %v : f16
  // An f16 fma takes an exact f64 product, never LLVM's double-rounding fma.f16.
  // CHECK: fmul double
  // CHECK-NOT: @llvm.fma.f16
  %f = math.fma %w, %w, %w : f16
  func.return %f : f16
}

// llvm.prefetch is overloaded on its pointer type: @llvm.prefetch.p0, declared once.
// CHECK-LABEL: define void @prefetch(ptr %{{.*}}, i64 %{{.*}})
func.func @prefetch(%a: memref<?xf32>, %i: index) {
  // CHECK: %[[P:.*]] = getelementptr inbounds float, ptr %{{.*}}, i64 %{{.*}}
  // CHECK: call void @llvm.prefetch.p0(ptr %[[P]], i32 0, i32 3, i32 1)
  memref.prefetch %a[%i], read, locality<3>, data : memref<?xf32>
  // CHECK: call void @llvm.prefetch.p0(ptr %{{.*}}, i32 1, i32 0, i32 1)
  memref.prefetch %a[%i], write, locality<0>, data : memref<?xf32>
  func.return
}
// CHECK: declare void @llvm.prefetch.p0(ptr, i32, i32, i32)
// CHECK-NOT: declare void @llvm.prefetch

// RUN: mx-opt %s -p outline-parallel-loops | filecheck %s
// RUN: mx-opt %s -p outline-parallel-loops,convert-to-llvm -t llvm | filecheck %s --check-prefix=LLVM

// A marked loop becomes a function of its iterations [lo, hi): the values
// it uses from outside are its arguments (constants are copied), the
// scratch buffer its body allocates and frees is allocated once; the loop
// becomes a call of the declared trampoline with the trip count.
// CHECK-LABEL: func.func @scale
// CHECK-SAME:    (%m: memref<64xf32>, %s: f32)
// CHECK-NEXT:    %c1 = arith.constant 1 : index
// CHECK-NEXT:    %[[N:.*]] = arith.constant 64 : index
// CHECK-NEXT:    func.call @_mx_parallel_for_scale__parallel_0(%[[N]], %m, %s) : (index, memref<64xf32>, f32) -> ()
// CHECK-NEXT:    func.return
// CHECK-LABEL: func.func private @scale__parallel_0
// CHECK-SAME:    (%lo: index, %hi: index, %m: memref<64xf32>, %s: f32)
// CHECK-NEXT:    %c1 = arith.constant 1 : index
// CHECK-NEXT:    %t = memref.alloc() : memref<4xf32>
// CHECK-NEXT:    affine.for %i = affine_map<(d0) -> (d0)>(%lo) to affine_map<(d0) -> (d0)>(%hi) {
// CHECK-NEXT:      %x = affine.load %m[%i] : memref<64xf32>
// CHECK-NEXT:      %y = arith.mulf %x, %s : f32
// CHECK-NEXT:      memref.store %y, %t[%c1] : memref<4xf32>
// CHECK-NEXT:      %z = memref.load %t[%c1] : memref<4xf32>
// CHECK-NEXT:      affine.store %z, %m[%i] : memref<64xf32>
// CHECK-NEXT:    }
// CHECK-NEXT:    memref.dealloc %t : memref<4xf32>
// CHECK-NEXT:    func.return
// CHECK:       func.func private @_mx_parallel_for_scale__parallel_0(index, memref<64xf32>, f32) -> ()

// -t llvm defines the trampoline (internal) and its thread function; the
// OpenMP entry points and the thread count are weak: linked without an
// OpenMP runtime, the loop runs on the calling thread.
// LLVM-LABEL: define void @scale(
// LLVM:         call void @_mx_parallel_for_scale__parallel_0(i64 64, ptr %{{.*}}, float %{{.*}})
// LLVM-LABEL: define internal void @_mx_parallel_for_scale__parallel_0(i64 %n, ptr %a0, float %a1)
// LLVM:         load i32, ptr @mx_num_threads
// LLVM:         %no_runtime = icmp eq ptr @GOMP_parallel, null
// LLVM:       alone:
// LLVM-NEXT:    call void @scale__parallel_0(i64 0, i64 %n, ptr %a0, float %a1)
// LLVM:         call void @GOMP_parallel(ptr @_mx_parallel_for_scale__parallel_0.thread, ptr %context, i32 %team, i32 0)
// LLVM-LABEL: define internal void @_mx_parallel_for_scale__parallel_0.thread(ptr %context)
// LLVM:         call i32 @omp_get_thread_num()
// LLVM:         call void @scale__parallel_0(i64 %lo, i64 %hi, ptr %a0, float %a1)
// LLVM-DAG:   @mx_num_threads = extern_weak global i32
// LLVM-DAG:   declare extern_weak void @GOMP_parallel(ptr, ptr, i32, i32)
// LLVM-DAG:   declare extern_weak i32 @omp_get_thread_num()
// LLVM-DAG:   declare extern_weak i32 @omp_get_num_threads()
func.func @scale(%m: memref<64xf32>, %s: f32) {
  %c1 = arith.constant 1 : index
  affine.for %i = 0 to 64 {
    %t = memref.alloc() : memref<4xf32>
    %x = affine.load %m[%i] : memref<64xf32>
    %y = arith.mulf %x, %s : f32
    memref.store %y, %t[%c1] : memref<4xf32>
    %z = memref.load %t[%c1] : memref<4xf32>
    affine.store %z, %m[%i] : memref<64xf32>
    memref.dealloc %t : memref<4xf32>
  } {mx.parallel}
  func.return
}

// Unmarked loops stay; a marked loop that does not start at 0 (or carries
// values) is left serial, its mark dropped.
// CHECK-LABEL: func.func @left
// CHECK-NEXT:    affine.for %i = 0 to 8 {
// CHECK:         }
// CHECK-NEXT:    affine.for %j = 2 to 8 {
// CHECK:         }
// CHECK-NOT:     mx.parallel
// CHECK-NEXT:    func.return
func.func @left(%m: memref<8xf32>) {
  affine.for %i = 0 to 8 {
    %x = affine.load %m[%i] : memref<8xf32>
    affine.store %x, %m[%i] : memref<8xf32>
  }
  affine.for %j = 2 to 8 {
    %x = affine.load %m[%j] : memref<8xf32>
    affine.store %x, %m[%j] : memref<8xf32>
  } {mx.parallel}
  func.return
}

// Two marked loops of one function: two functions.
// CHECK-LABEL: func.func @two
// CHECK:         func.call @_mx_parallel_for_two__parallel_0(
// CHECK:         func.call @_mx_parallel_for_two__parallel_1(
// CHECK-LABEL: func.func private @two__parallel_1
// CHECK-LABEL: func.func private @two__parallel_0
func.func @two(%m: memref<8xf32>) {
  affine.for %i = 0 to 8 {
    %x = affine.load %m[%i] : memref<8xf32>
    affine.store %x, %m[%i] : memref<8xf32>
  } {mx.parallel}
  affine.for %i = 0 to 4 {
    %x = affine.load %m[%i] : memref<8xf32>
    affine.store %x, %m[%i] : memref<8xf32>
  } {mx.parallel}
  func.return
}

// A loop over blocks whose variable only bounds loops marked
// mx.parallel_block (each over its block of rows) is outlined for a range
// of blocks: the body runs once, each pass over rows lo*6 .. min(hi*6, 64).
// CHECK-LABEL: func.func @passes_over_blocks
// CHECK:         func.call @_mx_parallel_for_passes_over_blocks__parallel_0(
// CHECK-LABEL: func.func private @passes_over_blocks__parallel_0
// CHECK-SAME:    (%lo: index, %hi: index, %x: memref<8xf32>, %m: memref<64x8xf32>, %y: memref<64xf32>)
// CHECK-NEXT:    affine.for %k = 0 to 8 {
// CHECK-NEXT:      %xk = affine.load %x[%k] : memref<8xf32>
// CHECK-NEXT:      affine.for %r = affine_map<(d0) -> ((d0 * 6))>(%lo) to min affine_map<(d0) -> ((d0 * 6), 64)>(%hi) {
// CHECK:           } {mx.parallel_block}
// CHECK-NEXT:    }
// CHECK-NEXT:    func.return
func.func @passes_over_blocks(%m: memref<64x8xf32>, %x: memref<8xf32>, %y: memref<64xf32>) {
  affine.for %b = 0 to 11 {
    affine.for %k = 0 to 8 {
      %xk = affine.load %x[%k] : memref<8xf32>
      affine.for %r = affine_map<(d0) -> (d0 * 6)>(%b) to min affine_map<(d0) -> (d0 * 6 + 6, 64)>(%b) {
        %w = affine.load %m[%r, %k] : memref<64x8xf32>
        %s = affine.load %y[%r] : memref<64xf32>
        %p = arith.mulf %w, %xk : f32
        %t = arith.addf %s, %p : f32
        affine.store %t, %y[%r] : memref<64xf32>
      } {mx.parallel_block}
    }
  } {mx.parallel}
  func.return
}

// The block variable has another use (an index of the body): the loop is
// outlined iteration by iteration, as any other.
// CHECK-LABEL: func.func private @block_variable_used__parallel_0
// CHECK-SAME:    (%lo: index, %hi: index, %v: f32, %y: memref<64xf32>)
// CHECK-NEXT:    affine.for %b = affine_map<(d0) -> (d0)>(%lo) to affine_map<(d0) -> (d0)>(%hi) {
// CHECK-NEXT:      affine.for %r = affine_map<(d0) -> ((d0 * 8))>(%b) to min affine_map<(d0) -> (((d0 * 8) + 8), 64)>(%b) {
// CHECK:           affine.store %v, %y[%b] : memref<64xf32>
func.func @block_variable_used(%y: memref<64xf32>, %v: f32) {
  affine.for %b = 0 to 8 {
    affine.for %r = affine_map<(d0) -> (d0 * 8)>(%b) to min affine_map<(d0) -> (d0 * 8 + 8, 64)>(%b) {
      affine.store %v, %y[%r] : memref<64xf32>
    } {mx.parallel_block}
    affine.store %v, %y[%b] : memref<64xf32>
  } {mx.parallel}
  func.return
}

// RUN: mx-opt %s -p "convert-matrix-to-affine{l1-bytes=2048 l2-bytes=8192 l3-bytes=6400 blocked-min-bytes=0 parallel-min-work=1}" | filecheck %s
// RUN: mx-opt %s -p convert-matrix-to-affine | filecheck %s --check-prefix=DEFAULT

// Products of at least parallel-min-work multiply-adds mark their loop over
// independent blocks `mx.parallel` (run on threads by outline-parallel-loops);
// with the default threshold (2^18) these small ones are not marked.
// DEFAULT-NOT: mx.parallel

// The cache-blocked product (blocked.mlir's blocking: 3 row blocks of 16
// rows; column panels of 16, at most 12 blocks in all, so 3 column blocks of
// one panel): one loop over the 9 blocks of D, block (u floordiv 3, u mod 3),
// its packing buffers its own (allocated in the loop, on the heap).
// CHECK-LABEL: func.func @gemm
// CHECK:         affine.for %[[U:.*]] = 0 to 9 {
// CHECK-NEXT:      %[[AP:.*]] = memref.alloc() {alignment = 64 : i64} : memref<16x16xf32>
// CHECK-NEXT:      %[[BP:.*]] = memref.alloc() {alignment = 64 : i64} : memref<16x16xf32>
// CHECK-NEXT:      %[[DP:.*]] = memref.alloc() {alignment = 64 : i64} : memref<16x16xf32>
// CHECK-NEXT:      %[[IB:.*]] = affine.apply affine_map<(d0) -> ((d0 floordiv 3))> (%[[U]])
// CHECK-NEXT:      %[[JB:.*]] = affine.apply affine_map<(d0) -> ((d0 mod 3))> (%[[U]])
// CHECK-NEXT:      affine.for %[[KB:.*]] = 0 to 4 {
// CHECK:             vector.load %[[AP]]
// CHECK:           memref.dealloc %[[AP]] : memref<16x16xf32>
// CHECK-NEXT:      memref.dealloc %[[BP]] : memref<16x16xf32>
// CHECK-NEXT:      memref.dealloc %[[DP]] : memref<16x16xf32>
// CHECK-NEXT:    } {mx.parallel}
func.func @gemm(%a: !matrix.matrix<40x50xf32>, %b: !matrix.matrix<50x40xf32>) -> !matrix.matrix<40x40xf32> {
  %r = matrix.matmul %a, %b : !matrix.matrix<40x50xf32>, !matrix.matrix<50x40xf32> -> !matrix.matrix<40x40xf32>
  func.return %r : !matrix.matrix<40x40xf32>
}

// The register-blocked product (f16 sums, which the packed kernel does not
// take): the loop over blocks of 128 rows.
// CHECK-LABEL: func.func @f16_sums
// CHECK:         affine.for %{{.*}} = 0 to 2 {
// CHECK:           affine.for %{{.*}} = 1 to 8 iter_args(
// CHECK:         } {mx.parallel}
func.func @f16_sums(%a: !matrix.matrix<256x8xf16>, %b: !matrix.matrix<8x4xf16>) -> !matrix.matrix<256x4xf16> {
  %r = matrix.matmul %a, %b : !matrix.matrix<256x8xf16>, !matrix.matrix<8x4xf16> -> !matrix.matrix<256x4xf16>
  func.return %r : !matrix.matrix<256x4xf16>
}

// The cache-blocked matvec by columns: the loop over blocks of rows of y,
// narrower than L1 would allow so that there are at least 12 (9 blocks of
// 2 vectors of 16 rows, the last of one). Each step of 8 columns broadcasts
// its x first, then runs over the block's rows in a loop marked
// mx.parallel_block (a thread sweeps the step over all its rows).
// CHECK-LABEL: func.func @matvec
// CHECK:         affine.for %[[RB:.*]] = 0 to 9 {
// CHECK:           affine.for %{{.*}} = 0 to 1 {
// CHECK-COUNT-8:     vector.broadcast %{{.*}} : f32 to vector<16xf32>
// CHECK-NEXT:        affine.for %{{.*}} = affine_map<(d0) -> ((d0 * 2))>(%[[RB]]) to min affine_map<(d0) -> (((d0 * 2) + 2), 17)>(%[[RB]]) {
// CHECK:             } {mx.parallel_block}
// CHECK:         } {mx.parallel}
func.func @matvec(%m: !matrix.matrix<272x8xf32>, %x: vector<8xf32>) -> vector<272xf32> {
  %y = matrix.matvec %m, %x : !matrix.matrix<272x8xf32>, vector<8xf32> -> vector<272xf32>
  func.return %y : vector<272xf32>
}

// The fused FP8 decode by columns: 2 blocks of one group of 32 rows, each
// pass (16 columns) over the rows of a block in a loop marked
// mx.parallel_block, so that a thread's function sweeps each pass over all
// its rows (outline-parallel-loops); x of the pass broadcast before it.
// CHECK-LABEL: func.func @fp8_decode
// CHECK:         affine.for %[[RB:.*]] = 0 to 2 {
// CHECK:           affine.for %{{.*}} = 0 to 2 {
// CHECK-COUNT-16:    vector.broadcast %{{.*}} : f32 to vector<16xf32>
// CHECK:             affine.for %{{.*}} = affine_map<(d0) -> (d0)>(%[[RB]]) to min affine_map<(d0) -> ((d0 + 1), 2)>(%[[RB]]) {
// CHECK:             } {mx.parallel_block}
// CHECK:         } {mx.parallel}
func.func @fp8_decode(%w: memref<?xi8>, %x: vector<32xf32>) -> vector<64xf32> {
  %q = matrix.column_major_load %w[0] : memref<?xi8> -> !matrix.matrix<64x32xi8>
  %d = arbfp.convert_from f8e4m3fn %q : !matrix.matrix<64x32xi8> to !matrix.matrix<64x32xf32>
  %y = matrix.matvec %d, %x : !matrix.matrix<64x32xf32>, vector<32xf32> -> vector<64xf32>
  func.return %y : vector<64xf32>
}

// RUN: mx-opt %s -p "convert-matrix-to-affine{l1-bytes=32768 l2-bytes=1048576 l3-bytes=33554432}" | filecheck %s

// Blocked for a Zen 4 core (32 KiB L1, 1 MiB L2), f32 1024^3, run on
// threads: 12 blocks of D (12 share evenly among 1, 2, 3, 4 or 6 threads),
// the split with the least packing: 2 row blocks of 32 of the 64 panels of
// rows, the 64 panels of columns in 6 column blocks split evenly (block jb
// from panel 64*jb floordiv 6: blocks of 10 or 11 panels, so that each
// thread's run of blocks is within one panel per block of the others'),
// block (u floordiv 6, u mod 6); 6 depth blocks of KC = 176 (the last 144).
// CHECK-LABEL: func.func @balanced
// CHECK:         affine.for %[[U:.*]] = 0 to 12 {
// CHECK-NEXT:      memref.alloc() {alignment = 64 : i64} : memref<176x16xf32>
// CHECK-NEXT:      memref.alloc() {alignment = 64 : i64} : memref<1936x16xf32>
// CHECK-NEXT:      memref.alloc() {alignment = 64 : i64} : memref<5632x16xf32>
// CHECK-NEXT:      %[[IB:.*]] = affine.apply affine_map<(d0) -> ((d0 floordiv 6))> (%[[U]])
// CHECK-NEXT:      %[[JB:.*]] = affine.apply affine_map<(d0) -> ((d0 mod 6))> (%[[U]])
// CHECK-NEXT:      affine.for %[[KB:.*]] = 0 to 6 {
// B's panels of column block jb, packed from Bp's row 0 on.
// CHECK-NEXT:        affine.for %[[JR:.*]] = affine_map<(d0) -> (((d0 * 64) floordiv 6))>(%[[JB]]) to min affine_map<(d0) -> ((((d0 * 64) + 64) floordiv 6), 64)>(%[[JB]]) {
// CHECK-NEXT:          affine.apply affine_map<(d0, d1) -> (((d0 * 176) + (((d1 * 64) floordiv 6) * -176)))> (%[[JR]], %[[JB]])
// No rows of B left after the whole tiles (176 = 11 x 16, 144 = 9 x 16).
// CHECK-NOT:         memref.load
// The panels of rows of row block ib, against the panels of column block jb.
// CHECK:             affine.for %[[IR:.*]] = affine_map<(d0) -> ((d0 * 32))>(%[[IB]]) to min affine_map<(d0) -> (((d0 * 32) + 32), 64)>(%[[IB]]) {
// CHECK:               affine.for %{{.*}} = affine_map<(d0) -> (((d0 * 64) floordiv 6))>(%[[JB]]) to min affine_map<(d0) -> ((((d0 * 64) + 64) floordiv 6), 64)>(%[[JB]]) {
// CHECK:         } {mx.parallel}
func.func @balanced(%a: !matrix.matrix<1024x1024xf32>, %b: !matrix.matrix<1024x1024xf32>) -> !matrix.matrix<1024x1024xf32> {
  %r = matrix.matmul %a, %b : !matrix.matrix<1024x1024xf32>, !matrix.matrix<1024x1024xf32> -> !matrix.matrix<1024x1024xf32>
  func.return %r : !matrix.matrix<1024x1024xf32>
}

// f32 512^3: 2 row blocks of 16 panels, the 32 panels of columns in 6 column
// blocks of 5 or 6 (11 column blocks of 3 panels before: one of 2 threads
// got 18 of the 32 panels), 3 depth blocks.
// CHECK-LABEL: func.func @half
// CHECK:         affine.for %[[U:.*]] = 0 to 12 {
// CHECK:           %[[IB:.*]] = affine.apply affine_map<(d0) -> ((d0 floordiv 6))> (%[[U]])
// CHECK-NEXT:      %[[JB:.*]] = affine.apply affine_map<(d0) -> ((d0 mod 6))> (%[[U]])
// CHECK-NEXT:      affine.for %{{.*}} = 0 to 3 {
// CHECK-NEXT:        affine.for %{{.*}} = affine_map<(d0) -> (((d0 * 32) floordiv 6))>(%[[JB]]) to min affine_map<(d0) -> ((((d0 * 32) + 32) floordiv 6), 32)>(%[[JB]]) {
// CHECK:             affine.for %{{.*}} = affine_map<(d0) -> ((d0 * 16))>(%[[IB]]) to min affine_map<(d0) -> (((d0 * 16) + 16), 32)>(%[[IB]]) {
// CHECK:         } {mx.parallel}
func.func @half(%a: !matrix.matrix<512x512xf32>, %b: !matrix.matrix<512x512xf32>) -> !matrix.matrix<512x512xf32> {
  %r = matrix.matmul %a, %b : !matrix.matrix<512x512xf32>, !matrix.matrix<512x512xf32> -> !matrix.matrix<512x512xf32>
  func.return %r : !matrix.matrix<512x512xf32>
}

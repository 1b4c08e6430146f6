// RUN: mx-opt %s -p "convert-matrix-to-affine{l1-bytes=32768 l2-bytes=1048576 l3-bytes=33554432}" | filecheck %s

// Blocked for a Zen 4 core (32 KiB L1, 1 MiB L2), f32 1024^3, run on
// threads: 12 blocks of D (12 share evenly among 1, 2, 3, 4 or 6 threads),
// the split with the least packing: one row block of the 64 panels of rows,
// the 64 panels of columns in 12 column blocks split evenly (block u from
// panel 64u floordiv 12: blocks of 5 or 6 panels, each thread's run of blocks
// within one panel of the others'), KC = 256.
// CHECK-LABEL: func.func @balanced
// CHECK:         affine.for %[[U:.*]] = 0 to 12 {
// CHECK-NEXT:      memref.alloc() {alignment = 64 : i64} : memref<256x16xf32>
// CHECK-NEXT:      memref.alloc() {alignment = 64 : i64} : memref<1536x16xf32>
// CHECK-NEXT:      affine.for %[[KB:.*]] = 0 to 4 {
// B's panels of column block u, packed from Bp's row 0 on.
// CHECK-NEXT:        affine.for %[[JR:.*]] = affine_map<(d0) -> (((d0 * 64) floordiv 12))>(%[[U]]) to min affine_map<(d0) -> ((((d0 * 64) + 64) floordiv 12), 64)>(%[[U]]) {
// CHECK-NEXT:          affine.apply affine_map<(d0, d1) -> (((d0 * 256) + (((d1 * 64) floordiv 12) * -256)))> (%[[JR]], %[[U]])
// No rows of B left after the whole tiles (1024 = 4 x 256 = 64 x 16).
// CHECK-NOT:         memref.load
// Every panel of rows, against the panels of column block u.
// CHECK:             affine.for %[[IR:.*]] = affine_map<(d0) -> ((d0 * 64))>(%{{.*}}) to min affine_map<(d0) -> (((d0 * 64) + 64), 64)>(%{{.*}}) {
// CHECK:               affine.for %{{.*}} = affine_map<(d0) -> (((d0 * 64) floordiv 12))>(%[[U]]) to min affine_map<(d0) -> ((((d0 * 64) + 64) floordiv 12), 64)>(%[[U]]) {
// CHECK:         } {mx.parallel}
func.func @balanced(%a: !matrix.matrix<1024x1024xf32>, %b: !matrix.matrix<1024x1024xf32>) -> !matrix.matrix<1024x1024xf32> {
  %r = matrix.matmul %a, %b : !matrix.matrix<1024x1024xf32>, !matrix.matrix<1024x1024xf32> -> !matrix.matrix<1024x1024xf32>
  func.return %r : !matrix.matrix<1024x1024xf32>
}

// f32 512^3: 2 row blocks of 16 panels and 6 column blocks (of 5 or 6 of
// the 32 panels): 12 blocks, block (u floordiv 6, u mod 6); the partial sums
// of a row block wait in a buffer of its own between depth blocks.
// CHECK-LABEL: func.func @two_ways
// CHECK:         affine.for %[[U:.*]] = 0 to 12 {
// CHECK:           %[[IB:.*]] = affine.apply affine_map<(d0) -> ((d0 floordiv 6))> (%[[U]])
// CHECK-NEXT:      %[[JB:.*]] = affine.apply affine_map<(d0) -> ((d0 mod 6))> (%[[U]])
// CHECK-NEXT:      affine.for %{{.*}} = 0 to 2 {
// CHECK-NEXT:        affine.for %{{.*}} = affine_map<(d0) -> (((d0 * 32) floordiv 6))>(%[[JB]]) to min affine_map<(d0) -> ((((d0 * 32) + 32) floordiv 6), 32)>(%[[JB]]) {
// CHECK:             affine.for %{{.*}} = affine_map<(d0) -> ((d0 * 16))>(%[[IB]]) to min affine_map<(d0) -> (((d0 * 16) + 16), 32)>(%[[IB]]) {
// CHECK:         } {mx.parallel}
func.func @two_ways(%a: !matrix.matrix<512x512xf32>, %b: !matrix.matrix<512x512xf32>) -> !matrix.matrix<512x512xf32> {
  %r = matrix.matmul %a, %b : !matrix.matrix<512x512xf32>, !matrix.matrix<512x512xf32> -> !matrix.matrix<512x512xf32>
  func.return %r : !matrix.matrix<512x512xf32>
}

// RUN: mx-opt %s -p "convert-matrix-to-affine{l1-bytes=32768 l2-bytes=1048576 l3-bytes=33554432}" | filecheck %s

// Blocked for a Zen 4 core (32 KiB L1, 1 MiB L2), f32 1024^3: 64 panels of
// rows in 2 row blocks of 32 (not 35 and 29: 2 threads, a row block each,
// get equal work), 64 panels of columns in 7 column blocks of 10 (the last
// of 4), KC = 256: the 14 blocks run on threads.
// CHECK-LABEL: func.func @balanced
// CHECK:         affine.for %[[U:.*]] = 0 to 14 {
// CHECK:           %[[IB:.*]] = affine.apply affine_map<(d0) -> ((d0 floordiv 7))> (%[[U]])
// CHECK-NEXT:      %[[JB:.*]] = affine.apply affine_map<(d0) -> ((d0 mod 7))> (%[[U]])
// CHECK-NEXT:      affine.for %[[KB:.*]] = 0 to 4 {
// CHECK-NEXT:        affine.for %{{.*}} = affine_map<(d0) -> ((d0 * 10))>(%[[JB]]) to min affine_map<(d0) -> (((d0 * 10) + 10), 64)>(%[[JB]]) {
// No rows of B left after the whole tiles (1024 = 4 x 256 = 64 x 16).
// CHECK-NOT:         memref.load
// CHECK:             affine.for %{{.*}} = affine_map<(d0) -> ((d0 * 32))>(%[[IB]]) to min affine_map<(d0) -> (((d0 * 32) + 32), 64)>(%[[IB]]) {
// CHECK:         } {mx.parallel}
func.func @balanced(%a: !matrix.matrix<1024x1024xf32>, %b: !matrix.matrix<1024x1024xf32>) -> !matrix.matrix<1024x1024xf32> {
  %r = matrix.matmul %a, %b : !matrix.matrix<1024x1024xf32>, !matrix.matrix<1024x1024xf32> -> !matrix.matrix<1024x1024xf32>
  func.return %r : !matrix.matrix<1024x1024xf32>
}

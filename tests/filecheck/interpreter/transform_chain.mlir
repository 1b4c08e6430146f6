// RUN: mx-run %S/../../../examples/transform_chain.mlir | filecheck %s

// CHECK:      result #0 : !matrix.matrix<4x4xf32> =
// CHECK-NEXT:   [ 0.0, -3.0,  0.0,  2.0]
// CHECK-NEXT:   [ 2.0,  0.0,  0.0, -1.0]
// CHECK-NEXT:   [ 0.0,  0.0,  0.5,  0.5]
// CHECK-NEXT:   [ 0.0,  0.0,  0.0,  1.0]
// CHECK-NEXT: result #1 : !matrix.matrix<4x4xf32> =
// CHECK-NEXT:   [  4.0,  0.25,   0.0,  -2.5]
// CHECK-NEXT:   [ 0.25,   9.0,   0.0, -5.75]
// CHECK-NEXT:   [  0.0,   0.0,   0.0, 0.125]
// CHECK-NEXT:   [ -2.5, -5.75, 0.125,  5.75]
// CHECK-NEXT: result #2 : vector<4xf32> = [-1.0, 1.0, 1.0, 1.0]

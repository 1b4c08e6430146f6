// RUN: mx-opt %s -p convert-matrix-to-affine | filecheck %s
// RUN: mx-opt %s -p convert-matrix-to-affine | filecheck %s --check-prefix=BODY

// Dequantization fused into its consumer: `arbfp.convert_from`, an exact
// widening `cast` and a multiply by a splat scale feeding a product are
// decoded in registers where the product reads them. No buffer of the wider
// type is allocated: only the product's own (and, for a matmul of row-major
// weights, a column-major copy of the narrow bytes).

// Row-major FP8 weights times a vector: 16 rows of 16 bytes read contiguously,
// decoded and scaled, then transposed in registers (lanes become rows).
// BODY-LABEL: func.func @fp8_matvec_row_major
// BODY-NOT: memref<16x16x
// BODY: func.return
// CHECK-LABEL: func.func @fp8_matvec_row_major
// CHECK: memref.alloca() {{.*}} : memref<1x16xf32>
// CHECK: memref.alloca() {{.*}} : memref<1x16xf32>
// CHECK: %[[B:.*]] = vector.load %mem[%{{.*}}] : memref<?xi8>, vector<16xi8>
// CHECK-NEXT: %[[D:.*]] = arbfp.convert_from f8e4m3fn %[[B]] : vector<16xi8> to vector<16xf32>
// CHECK-NEXT: %[[S:.*]] = vector.broadcast %s : f32 to vector<16xf32>
// CHECK-NEXT: %[[W:.*]] = arith.mulf %[[D]], %[[S]] : vector<16xf32>
// CHECK: vector.shuffle %[[W]], %{{.*}} [0, 16, 1, 17
// CHECK: func.return
func.func @fp8_matvec_row_major(%mem: memref<?xi8>, %x: vector<16xf32>, %s: f32) -> vector<16xf32> {
  %q = matrix.row_major_load %mem[0] : memref<?xi8> -> !matrix.matrix<16x16xi8>
  %d = arbfp.convert_from f8e4m3fn %q : !matrix.matrix<16x16xi8> to !matrix.matrix<16x16xf32>
  %k = matrix.splat %s : !matrix.matrix<16x16xf32>
  %m = matrix.mul %d, %k : !matrix.matrix<16x16xf32>
  %y = matrix.matvec %m, %x : !matrix.matrix<16x16xf32>, vector<16xf32> -> vector<16xf32>
  func.return %y : vector<16xf32>
}

// Column-major FP8 weights times a matrix: each column of A is decoded and
// scaled inside the product's loop over k.
// BODY-LABEL: func.func @fp8_matmul
// BODY-NOT: memref<16x16x
// BODY: func.return
// CHECK-LABEL: func.func @fp8_matmul
// CHECK-SAME: %[[OUT:[^:]*]]: memref<4x16xf32>)
// CHECK-NOT: memref.alloca
// CHECK: affine.for %[[K:.*]] = 1 to 16 iter_args
// CHECK: %[[B:.*]] = vector.load %mem[%{{.*}}] : memref<?xi8>, vector<16xi8>
// CHECK-NEXT: %[[D:.*]] = arbfp.convert_from f8e4m3fn %[[B]] : vector<16xi8> to vector<16xf32>
// CHECK-NEXT: %[[S:.*]] = vector.broadcast %s : f32 to vector<16xf32>
// CHECK-NEXT: %[[A:.*]] = arith.mulf %[[D]], %[[S]] : vector<16xf32>
// CHECK: arith.mulf %[[A]], %{{.*}} : vector<16xf32>
// CHECK: affine.yield
// CHECK: vector.store %{{.*}}, %[[OUT]]
func.func @fp8_matmul(%mem: memref<?xi8>, %b: !matrix.matrix<16x4xf32>, %s: f32) -> !matrix.matrix<16x4xf32> {
  %q = matrix.column_major_load %mem[0] : memref<?xi8> -> !matrix.matrix<16x16xi8>
  %d = arbfp.convert_from f8e4m3fn %q : !matrix.matrix<16x16xi8> to !matrix.matrix<16x16xf32>
  %k = matrix.splat %s : !matrix.matrix<16x16xf32>
  %m = matrix.mul %d, %k : !matrix.matrix<16x16xf32>
  %y = matrix.matmul %m, %b : !matrix.matrix<16x16xf32>, !matrix.matrix<16x4xf32> -> !matrix.matrix<16x4xf32>
  func.return %y : !matrix.matrix<16x4xf32>
}

// Row-major FP8 weights times a matrix: the bytes (not the f32 values) are
// copied column-major, then decoded inside the product.
// BODY-LABEL: func.func @fp8_matmul_row_major
// BODY-NOT: memref<16x16xf32>
// BODY: func.return
// CHECK-LABEL: func.func @fp8_matmul_row_major
// CHECK: %[[T:.*]] = memref.alloca() {{.*}} : memref<16x16xi8>
// CHECK: vector.store %{{.*}}, %[[T]][%{{.*}}, %{{.*}}] : memref<16x16xi8>, vector<16xi8>
// CHECK: affine.for %{{.*}} = 1 to 16 iter_args
// CHECK: %[[B:.*]] = vector.load %[[T]][%{{.*}}, %{{.*}}] : memref<16x16xi8>, vector<16xi8>
// CHECK-NEXT: arbfp.convert_from f8e4m3fn %[[B]] : vector<16xi8> to vector<16xf32>
func.func @fp8_matmul_row_major(%mem: memref<?xi8>, %b: !matrix.matrix<16x4xf32>) -> !matrix.matrix<16x4xf32> {
  %q = matrix.row_major_load %mem[0] : memref<?xi8> -> !matrix.matrix<16x16xi8>
  %d = arbfp.convert_from f8e4m3fn %q : !matrix.matrix<16x16xi8> to !matrix.matrix<16x16xf32>
  %y = matrix.matmul %d, %b : !matrix.matrix<16x16xf32>, !matrix.matrix<16x4xf32> -> !matrix.matrix<16x4xf32>
  func.return %y : !matrix.matrix<16x4xf32>
}

// An exact widening cast (left to the lowering: canonicalize would make the
// product mixed-precision) is widened in registers.
// BODY-LABEL: func.func @f16_widened
// BODY-NOT: memref<8x16xf32>
// BODY: func.return
// CHECK-LABEL: func.func @f16_widened
// CHECK: affine.for %{{.*}} = 1 to 8 iter_args
// CHECK: %[[H:.*]] = vector.load %{{.*}} : memref<8x16xf16>, vector<16xf16>
// CHECK-NEXT: arith.extf %[[H]] : vector<16xf16> to vector<16xf32>
func.func @f16_widened(%h: !matrix.matrix<16x8xf16>, %b: !matrix.matrix<8x2xf32>) -> !matrix.matrix<16x2xf32> {
  %w = matrix.cast %h : !matrix.matrix<16x8xf16> to !matrix.matrix<16x8xf32>
  %y = matrix.matmul %w, %b : !matrix.matrix<16x8xf32>, !matrix.matrix<8x2xf32> -> !matrix.matrix<16x2xf32>
  func.return %y : !matrix.matrix<16x2xf32>
}

// RUN: mx-opt %s -p convert-matrix-to-affine | filecheck %s

// scaled_convert_from is fused into its consumer like the plain converts:
// the block at (r, c) is decoded where the store needs it, from the elements
// at (r, c) and the scales at (r, c // N), both read as column vectors and
// widened to 32-bit lanes (no buffer of f32 values). The store is row-major:
// 2x2 tiles transposed in registers.

// CHECK-LABEL: func.func @dequantize_store
// CHECK-SAME: (%[[Q:.*]]: memref<8x2xi4>, %[[S:.*]]: memref<2x2xi8>, %[[OUT:.*]]: memref<16xf32>)
// CHECK-NOT:  memref.alloc
// CHECK:      %[[B:.*]] = vector.load %[[Q]][%{{.*}}, %{{.*}}] : memref<8x2xi4>, vector<2xi4>
// CHECK-NEXT: llvm.zext %[[B]] : vector<2xi4> to vector<2xi32>
// CHECK-NEXT: %[[N:.*]] = arith.constant 4 : index
// CHECK-NEXT: %[[J:.*]] = arith.divui %{{.*}}, %[[N]] : index
// CHECK-NEXT: %[[SC:.*]] = vector.load %[[S]][%[[J]], %{{.*}}] : memref<2x2xi8>, vector<2xi8>
// CHECK-NEXT: llvm.zext %[[SC]] : vector<2xi8> to vector<2xi32>
// CHECK:      arith.mulf %{{.*}}, %{{.*}} : vector<2xf32>
// CHECK:      vector.shuffle %{{.*}}, %{{.*}} [0, 2] : vector<2xf32>, vector<2xf32>
// CHECK:      vector.store %{{.*}}, %[[OUT]][%{{.*}}] : memref<16xf32>, vector<2xf32>
// CHECK-NOT:  affine.store
// CHECK-NOT:  arbfp
func.func @dequantize_store(%q: !matrix.matrix<2x8xi4>, %s: !matrix.matrix<2x2xi8>, %out: memref<16xf32>) {
  %r = arbfp.scaled_convert_from f4e2m1fn %q, %s block 4 : !matrix.matrix<2x8xi4>, !matrix.matrix<2x2xi8> to !matrix.matrix<2x8xf32>
  matrix.row_major_store %r, %out[0] : !matrix.matrix<2x8xf32>, memref<16xf32>
  func.return
}

// Stored column-major, each column is one block: 16 rows of i4 encodings
// read as bytes, their scales as bytes, decoded in 16 lanes and stored.
// CHECK-LABEL: func.func @dequantize_store_columns
// CHECK-SAME: (%[[Q:.*]]: memref<4x16xi4>, %[[S:.*]]: memref<2x16xi8>, %[[OUT:.*]]: memref<64xf32>)
// CHECK-NOT:  memref.alloc
// CHECK:      affine.for %[[C:.*]] = 0 to 4 {
// CHECK:      %[[B:.*]] = vector.load %[[Q]][%[[C]], %{{.*}}] : memref<4x16xi4>, vector<16xi4>
// CHECK-NEXT: llvm.zext %[[B]] : vector<16xi4> to vector<16xi32>
// CHECK:      vector.load %[[S]][%{{.*}}, %{{.*}}] : memref<2x16xi8>, vector<16xi8>
// CHECK:      arith.mulf %{{.*}}, %{{.*}} : vector<16xf32>
// CHECK:      vector.store %{{.*}}, %[[OUT]][%{{.*}}] : memref<64xf32>, vector<16xf32>
// CHECK-NOT:  affine.store
// CHECK-NOT:  arbfp
func.func @dequantize_store_columns(%q: !matrix.matrix<16x4xi4>, %s: !matrix.matrix<16x2xi8>, %out: memref<64xf32>) {
  %r = arbfp.scaled_convert_from f4e2m1fn %q, %s block 2 : !matrix.matrix<16x4xi4>, !matrix.matrix<16x2xi8> to !matrix.matrix<16x4xf32>
  matrix.column_major_store %r, %out[0] : !matrix.matrix<16x4xf32>, memref<64xf32>
  func.return
}

// scaled_convert_to: a nest over blocks of rows (one vector lane per row,
// here the two rows in one vector) and blocks; per block a loop carrying the
// largest magnitude's bits of each row, the scale codes stored, then a loop
// converting the block's columns. Both results, returned, are written
// straight into the out-parameters.

// CHECK-LABEL: func.func @quantize
// CHECK-SAME: (%[[X:.*]]: memref<8x2xf32>, %[[QB:.*]]: memref<8x2xi8>, %[[SB:.*]]: memref<2x2xi8>)
// CHECK-NOT:  memref.alloca
// CHECK:      affine.for %[[J:.*]] = 0 to 2 {
// CHECK:        %[[AMAX:.*]] = affine.for %{{.*}} = 0 to 4 iter_args(%[[M:.*]] = %{{.*}}) -> (vector<2xi32>) {
// CHECK:          vector.load %[[X]]{{.*}} : memref<8x2xf32>, vector<2xf32>
// CHECK:          %[[NEXT:.*]] = arith.maxsi %[[M]], %{{.*}} : vector<2xi32>
// CHECK-NEXT:     affine.yield %[[NEXT]] : vector<2xi32>
// CHECK:        vector.store %{{.*}}, %[[SB]][%[[J]], %{{.*}}] : memref<2x2xi8>, vector<2xi8>
// CHECK-NEXT:   affine.for %{{.*}} = 0 to 4 {
// CHECK:          vector.load %[[X]]
// CHECK:          arith.mulf %{{.*}} : vector<2xf32>
// CHECK:          vector.store %{{.*}}, %[[QB]]{{.*}} : memref<8x2xi8>, vector<2xi8>
// CHECK-NOT:  arbfp
// CHECK:      func.return
func.func @quantize(%x: !matrix.matrix<2x8xf32>) -> (!matrix.matrix<2x8xi8>, !matrix.matrix<2x2xi8>) {
  %q, %s = arbfp.scaled_convert_to f8e4m3fn %x block 4 : !matrix.matrix<2x8xf32> to !matrix.matrix<2x8xi8>, !matrix.matrix<2x2xi8>
  func.return %q, %s : !matrix.matrix<2x8xi8>, !matrix.matrix<2x2xi8>
}

// A scaled_convert_from feeding a vectorized f32 matvec is decoded inside
// the product's loop nest: the product reads its matrix operand as column
// vectors, decoded from the i8 elements and the scales in registers (no
// buffer of f32 values; the buffers are the product's one-column x and y).

// CHECK-LABEL: func.func @mx_matvec
// CHECK-SAME: (%[[Q:.*]]: memref<8x4xi8>, %[[S:.*]]: memref<1x4xi8>, %{{.*}}: vector<8xf32>)
// CHECK-NOT:  memref<8x4xf32>
// CHECK:      affine.for %[[K:.*]] = 1 to 8 iter_args
// CHECK:      vector.load %[[Q]][%[[K]], %{{.*}}] : memref<8x4xi8>, vector<4xi8>
// CHECK:      vector.load %[[S]][%{{.*}}, %{{.*}}] : memref<1x4xi8>, vector<4xi8>
// CHECK:      arith.mulf %{{.*}}, %{{.*}} : vector<4xf32>
// CHECK-NOT:  memref<8x4xf32>
// CHECK-NOT:  arbfp
// CHECK:      func.return
func.func @mx_matvec(%q: !matrix.matrix<4x8xi8>, %s: !matrix.matrix<4x1xi8>, %x: vector<8xf32>) -> vector<4xf32> {
  %w = arbfp.scaled_convert_from f8e4m3fn %q, %s block 8 : !matrix.matrix<4x8xi8>, !matrix.matrix<4x1xi8> to !matrix.matrix<4x8xf32>
  %y = matrix.matvec %w, %x : !matrix.matrix<4x8xf32>, vector<8xf32> -> vector<4xf32>
  func.return %y : vector<4xf32>
}

// RUN: mx-opt %s -p "convert-matrix-to-affine{vector-bits=256 vector-registers=16 blocked-min-bytes=0}" | filecheck %s
// RUN: mx-opt %s -p "convert-matrix-to-affine{vector-bits=256 blocked-min-bytes=0}" | filecheck %s --check-prefix=WIDE
// RUN: mx-opt %s -p "convert-matrix-to-affine{vector-bits=256 vector-registers=16}" | filecheck %s --check-prefix=SMALL

// The products' kernels keep their sums in as many vector registers as the
// target has. With 16 (AVX2) the cache-blocked micro-kernel holds 2 x 6
// sums: panels of A of 2 vectors (16 rows), panels of B of 6 columns; per k,
// 2 vectors of packed A and one broadcast of packed B per column.
// CHECK-LABEL: func.func @tile
// CHECK: memref.alloca() {alignment = 64 : i64} : memref<48x6xf32>
// CHECK: memref.alloca() {alignment = 64 : i64} : memref<24x16xf32>
// CHECK: affine.for %{{.*}} = 0 to 24 iter_args({{.*}}) -> (vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>) {
// CHECK-NEXT: %[[A0:.*]] = vector.load %{{.*}} : memref<24x16xf32>, vector<8xf32>
// CHECK-NEXT: %[[A1:.*]] = vector.load %{{.*}} : memref<24x16xf32>, vector<8xf32>
// CHECK-NEXT: %[[ROW:.*]] = affine.apply
// CHECK-NEXT: %[[B0:.*]] = memref.load %{{.*}}[%[[ROW]], %{{.*}}] : memref<48x6xf32>
// CHECK-NEXT: %[[S0:.*]] = vector.broadcast %[[B0]] : f32 to vector<8xf32>
// CHECK-NEXT: arith.mulf %[[A0]], %[[S0]] : vector<8xf32>
// CHECK-NEXT: arith.addf
// CHECK-NEXT: arith.mulf %[[A1]], %[[S0]] : vector<8xf32>

// With 32 (AVX-512, and mx-opt's default) it holds 1 x 16: panels of A of
// one vector, panels of B of 16 columns.
// WIDE-LABEL: func.func @tile
// WIDE: memref.alloca() {alignment = 64 : i64} : memref<{{[0-9]+}}x16xf32>
// WIDE: affine.for %{{.*}} = 0 to 24 iter_args({{.*}}) -> (vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>) {
// WIDE-NEXT: %[[A:.*]] = vector.load %{{.*}} : memref<24x8xf32>, vector<8xf32>

// The register-blocked kernel of smaller products keeps 12 vectors of sums
// (3/4 of the registers): here 12 columns of one vector of rows each.
// SMALL-LABEL: func.func @tile
// SMALL: affine.for %{{.*}} = 1 to 24 iter_args({{.*}}) -> (vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>) {
func.func @tile(%a: !matrix.matrix<32x24xf32>, %b: !matrix.matrix<24x12xf32>) -> !matrix.matrix<32x12xf32> {
  %p = matrix.matmul %a, %b : !matrix.matrix<32x24xf32>, !matrix.matrix<24x12xf32> -> !matrix.matrix<32x12xf32>
  func.return %p : !matrix.matrix<32x12xf32>
}

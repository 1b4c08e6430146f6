// GEMM + bias on f32: out = relu-free dense layer, y = A·X + B with the bias
// broadcast over columns. Run with:
//   python examples/run_examples.py
// matrix-fuse-contractions turns add(matmul) into matmul_add (same rounding).

func.func @gemm_bias(%a: !matrix.matrix<16x32xf32>, %x: !matrix.matrix<32x8xf32>, %b: !matrix.matrix<16x8xf32>) -> !matrix.matrix<16x8xf32> {
  %p = matrix.matmul %a, %x : !matrix.matrix<16x32xf32>, !matrix.matrix<32x8xf32> -> !matrix.matrix<16x8xf32>
  %y = matrix.add %p, %b : !matrix.matrix<16x8xf32>
  func.return %y : !matrix.matrix<16x8xf32>
}

// The same on column-major buffers in memory, as a C caller holds them:
// void gemm_bias_mem(float *a, float *x, float *b, float *y).
func.func @gemm_bias_mem(%a: memref<?xf32>, %x: memref<?xf32>, %b: memref<?xf32>, %y: memref<?xf32>) {
  %A = matrix.column_major_load %a[0] : memref<?xf32> -> !matrix.matrix<16x32xf32>
  %X = matrix.column_major_load %x[0] : memref<?xf32> -> !matrix.matrix<32x8xf32>
  %B = matrix.column_major_load %b[0] : memref<?xf32> -> !matrix.matrix<16x8xf32>
  %P = matrix.matmul %A, %X : !matrix.matrix<16x32xf32>, !matrix.matrix<32x8xf32> -> !matrix.matrix<16x8xf32>
  %Y = matrix.add %P, %B : !matrix.matrix<16x8xf32>
  matrix.column_major_store %Y, %y[0] : !matrix.matrix<16x8xf32>, memref<?xf32>
  func.return
}

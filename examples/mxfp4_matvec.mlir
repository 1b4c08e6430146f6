// MXFP4 weights: f32 weights quantized to OCP MX FP4 (f4e2m1fn elements, one
// f8e8m0fnu scale per block of 32 along each row) and stored packed, two FP4
// values per byte; then a matrix-vector product reading those packed bytes
// (decoded and scaled in registers inside the product's loop nest). Run with:
//   python examples/run_examples.py

// W (16x64 f32) -> 512 bytes of packed column-major FP4 codes and 32 scale
// codes (16x2, column-major).
func.func @quantize_mxfp4(%w: !matrix.matrix<16x64xf32>, %packed: memref<512xi8>, %scales: memref<32xi8>) {
  %q, %s = arbfp.scaled_convert_to f4e2m1fn %w block 32 : !matrix.matrix<16x64xf32> to !matrix.matrix<16x64xi4>, !matrix.matrix<16x2xi8>
  matrix.column_major_store %q, %packed[0] packed : !matrix.matrix<16x64xi4>, memref<512xi8>
  matrix.column_major_store %s, %scales[0] : !matrix.matrix<16x2xi8>, memref<32xi8>
  func.return
}

// y = W x with the MXFP4 weights read from the packed bytes.
func.func @mxfp4_weights_matvec(%packed: memref<512xi8>, %scales: memref<32xi8>, %x: vector<64xf32>) -> vector<16xf32> {
  %q = matrix.column_major_load %packed[0] packed : memref<512xi8> -> !matrix.matrix<16x64xi4>
  %s = matrix.column_major_load %scales[0] : memref<32xi8> -> !matrix.matrix<16x2xi8>
  %w = arbfp.scaled_convert_from f4e2m1fn %q, %s block 32 : !matrix.matrix<16x64xi4>, !matrix.matrix<16x2xi8> to !matrix.matrix<16x64xf32>
  %y = matrix.matvec %w, %x : !matrix.matrix<16x64xf32>, vector<64xf32> -> vector<16xf32>
  func.return %y : vector<16xf32>
}

// Both: quantize into the caller's buffers, then the product from them.
func.func @mxfp4_matvec(%w: !matrix.matrix<16x64xf32>, %x: vector<64xf32>, %packed: memref<512xi8>, %scales: memref<32xi8>) -> vector<16xf32> {
  func.call @quantize_mxfp4(%w, %packed, %scales) : (!matrix.matrix<16x64xf32>, memref<512xi8>, memref<32xi8>) -> ()
  %y = func.call @mxfp4_weights_matvec(%packed, %scales, %x) : (memref<512xi8>, memref<32xi8>, vector<64xf32>) -> vector<16xf32>
  func.return %y : vector<16xf32>
}

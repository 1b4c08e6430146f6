// MXFP4 weights: f32 weights quantized to OCP MX FP4 (f4e2m1fn elements, one
// f8e8m0fnu scale per block of 32 along each row), then a matrix-vector
// product with the dequantized weights. Run with:
//   python examples/run_examples.py

func.func @mxfp4_matvec(%w: !matrix.matrix<16x64xf32>, %x: vector<64xf32>) -> vector<16xf32> {
  %q, %s = arbfp.scaled_convert_to f4e2m1fn %w block 32 : !matrix.matrix<16x64xf32> to !matrix.matrix<16x64xi4>, !matrix.matrix<16x2xi8>
  %wq = arbfp.scaled_convert_from f4e2m1fn %q, %s block 32 : !matrix.matrix<16x64xi4>, !matrix.matrix<16x2xi8> to !matrix.matrix<16x64xf32>
  %y = matrix.matvec %wq, %x : !matrix.matrix<16x64xf32>, vector<64xf32> -> vector<16xf32>
  func.return %y : vector<16xf32>
}

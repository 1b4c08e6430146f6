// Quantized weights times activations, the shape of LLM decoding:
// y = (scale · W) · x with W 32x64 FP8 (f8e4m3fn), stored row-major, one
// byte per weight, as a checkpoint stores it, and f32 activations. Run with:
//   python examples/run_examples.py
//
// The weights are decoded in registers inside the product's loop nest (tiles
// of 16 rows read contiguously, transposed in registers): no f32 copy of W
// is ever made. See it with `mx-opt examples/fp8_weights_matvec.mlir -p
// convert-matrix-to-affine`: the only buffers are x's and y's.

func.func @fp8_matvec(%w: memref<?xi8>, %scale: f32, %x: vector<64xf32>) -> vector<32xf32> {
  %q = matrix.row_major_load %w[0] : memref<?xi8> -> !matrix.matrix<32x64xi8>
  %d = arbfp.convert_from f8e4m3fn %q : !matrix.matrix<32x64xi8> to !matrix.matrix<32x64xf32>
  %s = matrix.splat %scale : !matrix.matrix<32x64xf32>
  %m = matrix.mul %d, %s : !matrix.matrix<32x64xf32>
  %y = matrix.matvec %m, %x : !matrix.matrix<32x64xf32>, vector<64xf32> -> vector<32xf32>
  func.return %y : vector<32xf32>
}

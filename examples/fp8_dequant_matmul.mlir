// FP8 weights (f8e4m3fn, one byte each) dequantized to f32 with a per-tensor
// scale, then multiplied with f32 activations. Run with:
//   python examples/run_examples.py

func.func @dequant_matmul(%w: !matrix.matrix<8x16xi8>, %scale: f32, %x: !matrix.matrix<16x4xf32>) -> !matrix.matrix<8x4xf32> {
  %wf = arbfp.convert_from f8e4m3fn %w : !matrix.matrix<8x16xi8> to !matrix.matrix<8x16xf32>
  %s = matrix.splat %scale : !matrix.matrix<8x16xf32>
  %ws = matrix.mul %wf, %s : !matrix.matrix<8x16xf32>
  %y = matrix.matmul %ws, %x : !matrix.matrix<8x16xf32>, !matrix.matrix<16x4xf32> -> !matrix.matrix<8x4xf32>
  func.return %y : !matrix.matrix<8x4xf32>
}

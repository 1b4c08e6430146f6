// A chain of 4x4 homogeneous transforms on f32, run with:
//   mx-run examples/transform_chain.mlir
// model = translate · rotate_z(90°) · scale, then a few products, transposes
// and elementwise ops on it, and the image of a point.

func.func @model() -> !matrix.matrix<4x4xf32> {
  %translate = matrix.constant dense<[[1.0, 0.0, 0.0, 2.0],
                                      [0.0, 1.0, 0.0, -1.0],
                                      [0.0, 0.0, 1.0, 0.5],
                                      [0.0, 0.0, 0.0, 1.0]]> : !matrix.matrix<4x4xf32>
  %rotate = matrix.constant dense<[[0.0, -1.0, 0.0, 0.0],
                                   [1.0, 0.0, 0.0, 0.0],
                                   [0.0, 0.0, 1.0, 0.0],
                                   [0.0, 0.0, 0.0, 1.0]]> : !matrix.matrix<4x4xf32>
  %scale = matrix.constant dense<[[2.0, 0.0, 0.0, 0.0],
                                  [0.0, 3.0, 0.0, 0.0],
                                  [0.0, 0.0, 0.5, 0.0],
                                  [0.0, 0.0, 0.0, 1.0]]> : !matrix.matrix<4x4xf32>
  %rs = matrix.matmul %rotate, %scale : !matrix.matrix<4x4xf32>, !matrix.matrix<4x4xf32> -> !matrix.matrix<4x4xf32>
  %m = matrix.matmul %translate, %rs : !matrix.matrix<4x4xf32>, !matrix.matrix<4x4xf32> -> !matrix.matrix<4x4xf32>
  func.return %m : !matrix.matrix<4x4xf32>
}

func.func @main() -> (!matrix.matrix<4x4xf32>, !matrix.matrix<4x4xf32>, vector<4xf32>) {
  %m = func.call @model() : () -> !matrix.matrix<4x4xf32>
  // (Mᵀ)ᵀ = M, and M + Mᵀ is symmetric.
  %mt = matrix.transpose %m : !matrix.matrix<4x4xf32> -> !matrix.matrix<4x4xf32>
  %mtt = matrix.transpose %mt : !matrix.matrix<4x4xf32> -> !matrix.matrix<4x4xf32>
  %sym = matrix.add %mtt, %mt : !matrix.matrix<4x4xf32>
  // Mᵀ·M, minus a blend of both with 0.25 weights.
  %gram = matrix.matmul %mt, %m : !matrix.matrix<4x4xf32>, !matrix.matrix<4x4xf32> -> !matrix.matrix<4x4xf32>
  %quarter = arith.constant 0.25 : f32
  %w = matrix.splat %quarter : !matrix.matrix<4x4xf32>
  %blend = matrix.mul %w, %sym : !matrix.matrix<4x4xf32>
  %r = matrix.sub %gram, %blend : !matrix.matrix<4x4xf32>
  // Transform the point (1, 1, 1).
  %p = arith.constant dense<[1.0, 1.0, 1.0, 1.0]> : vector<4xf32>
  %q = matrix.matvec %m, %p : !matrix.matrix<4x4xf32>, vector<4xf32> -> vector<4xf32>
  func.return %m, %r, %q : !matrix.matrix<4x4xf32>, !matrix.matrix<4x4xf32>, vector<4xf32>
}

// fuzz-args: -p matrix-fuse-contractions
func.func @f(%a: !matrix.matrix<3x2xi64>) -> !matrix.matrix<3x2xi64> {
  %r = affine.for %i = 0 to 2 iter_args(%x = %y) -> (!matrix.matrix<3x2xi64>) {
    %y = matrix.mul %x, %a : !matrix.matrix<3x2xi64>
    affine.yield %y : !matrix.matrix<3x2xi64>
  }
  func.return %r : !matrix.matrix<3x2xi64>
}

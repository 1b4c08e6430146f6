// fuzz-args: -p canonicalize
func.func @f() -> !matrix.matrix<2x3xi16> {
  %c = matrix.constant dense<[[1, 99999999999999999999999999, 3], [4, 5, 6]]> : !matrix.matrix<2x3xi16>
  func.return %c : !matrix.matrix<2x3xi16>
}

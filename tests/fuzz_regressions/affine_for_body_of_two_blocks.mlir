// fuzz-args: -p matrix-fold-transposes
func.func @f(%x: i32) {
  affine.for %i = 0 to 4 {
    %y = arith.addi %x, %x : i32
  ^bb1:
    affine.yield
  }
  func.return
}

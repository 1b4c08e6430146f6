// memref.prefetch is a hint: the interpreter computes nothing for it, even at
// an index out of bounds (the hardware prefetches any address).
// RUN: mx-run %s --entry sum --arg '[10, 20, 30, 40]' | filecheck %s

func.func @sum(%m: memref<4xi32>) -> i32 {
  %c1 = arith.constant 1 : index
  %c3 = arith.constant 3 : index
  %c9 = arith.constant 9 : index
  memref.prefetch %m[%c1], read, locality<3>, data : memref<4xi32>
  memref.prefetch %m[%c9], write, locality<0>, data : memref<4xi32>
  %a = memref.load %m[%c1] : memref<4xi32>
  %b = memref.load %m[%c3] : memref<4xi32>
  %s = arith.addi %a, %b : i32
  func.return %s : i32
}
// CHECK: result #0 : i32 = 60

// RUN: mx-run %s | filecheck %s
// Loads and stores touch exactly the addressed elements: column-major
// (r, c) at off + c*stride + r, row-major at off + r*stride + c.

func.func @main() -> (memref<12xf32>, !matrix.matrix<3x3xf32>, !matrix.matrix<2x2xf32>, memref<3xi4>) {
  %mem = memref.alloc() : memref<12xf32>
  %nines = matrix.constant dense<9.0> : !matrix.matrix<1x12xf32>
  matrix.row_major_store %nines, %mem[0] : !matrix.matrix<1x12xf32>, memref<12xf32>
  %a = matrix.constant dense<[[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]> : !matrix.matrix<2x3xf32>
  %off = arith.constant 1 : index
  matrix.column_major_store %a, %mem[%off] stride 3 : !matrix.matrix<2x3xf32>, memref<12xf32>
  %r = matrix.row_major_load %mem[0] stride 4 : memref<12xf32> -> !matrix.matrix<3x3xf32>
  %s = arith.constant 5 : index
  %c = matrix.column_major_load %mem[2] stride %s : memref<12xf32> -> !matrix.matrix<2x2xf32>
  %bits = memref.alloc() : memref<3xi4>
  %q = matrix.constant dense<[[-1, 7, -8]]> : !matrix.matrix<1x3xi4>
  matrix.row_major_store %q, %bits[0] : !matrix.matrix<1x3xi4>, memref<3xi4>
  func.return %mem, %r, %c, %bits : memref<12xf32>, !matrix.matrix<3x3xf32>, !matrix.matrix<2x2xf32>, memref<3xi4>
}

// CHECK:      result #0 : memref<12xf32> = [9.0, 1.0, 4.0, 9.0, 2.0, 5.0, 9.0, 3.0, 6.0, 9.0, 9.0, 9.0]
// CHECK-NEXT: result #1 : !matrix.matrix<3x3xf32> =
// CHECK-NEXT:   [9.0, 1.0, 4.0]
// CHECK-NEXT:   [2.0, 5.0, 9.0]
// CHECK-NEXT:   [6.0, 9.0, 9.0]
// CHECK-NEXT: result #2 : !matrix.matrix<2x2xf32> =
// CHECK-NEXT:   [4.0, 3.0]
// CHECK-NEXT:   [9.0, 6.0]
// i4 is a bit container: printed as its bits, as the JIT returns it.
// CHECK-NEXT: result #3 : memref<3xi4> = [15, 7, 8]

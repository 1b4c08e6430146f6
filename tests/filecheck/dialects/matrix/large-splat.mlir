// RUN: mx-opt %s | mx-opt | filecheck %s
// RUN: mx-opt %s -p canonicalize | filecheck %s --check-prefix=FOLD
// RUN: mx-opt %s -p mx-lower-to-llvm -t llvm | filecheck %s --check-prefix=LLVM

// A splat constant of any size is a valid value: it is held as its one value,
// never element by element.

// CHECK-LABEL: func.func @largest_splat
// CHECK-NEXT: %m = matrix.constant dense<1.500000e+00> : !matrix.matrix<1048575x1048575xf32>
// FOLD-LABEL: func.func @largest_splat
// FOLD-NEXT: %e = arith.constant 1.500000e+00 : f32
// FOLD-NEXT: func.return %e : f32
// LLVM-LABEL: define float @largest_splat(
// LLVM: ret float 0x3FF8000000000000
func.func @largest_splat() -> f32 {
  %m = matrix.constant dense<1.5> : !matrix.matrix<1048575x1048575xf32>
  %e = matrix.extract %m[1048574, 7] : !matrix.matrix<1048575x1048575xf32>
  func.return %e : f32
}

// The one value keeps its bits: a hexadecimal splat with a NaN payload.

// CHECK-LABEL: func.func @large_nan_splat
// CHECK-NEXT: %m = matrix.constant dense<0x7fc00001> : !matrix.matrix<2048x1024xf32>
// FOLD-LABEL: func.func @large_nan_splat
// FOLD-NEXT: %e = arith.constant 0x7fc00001 : f32
// FOLD-NEXT: func.return %e : f32
// LLVM-LABEL: define float @large_nan_splat(
// LLVM: ret float 0x7FF8000020000000
func.func @large_nan_splat() -> f32 {
  %m = matrix.constant dense<"0x0100C07F"> : !matrix.matrix<2048x1024xf32>
  %e = matrix.extract %m[2047, 1023] : !matrix.matrix<2048x1024xf32>
  func.return %e : f32
}

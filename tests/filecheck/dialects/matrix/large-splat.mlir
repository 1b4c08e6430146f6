// RUN: mx-opt %s | mx-opt | filecheck %s
// RUN: mx-opt %s --print-op-generic | mx-opt --print-op-generic | mx-opt | filecheck %s
// RUN: mx-opt %s --print-op-generic | filecheck %s --check-prefix=GENERIC
// RUN: mx-opt %s -p canonicalize | filecheck %s --check-prefix=FOLD
// RUN: mx-opt %s -p mx-lower-to-llvm -t llvm | filecheck %s --check-prefix=LLVM
// RUN: mx-run %s --entry largest_splat | filecheck %s --check-prefix=RUN-LARGEST
// RUN: mx-run %s --entry arithmetic_of_splats --arg 0.5 | filecheck %s --check-prefix=RUN-ARITH

// A splat constant of any size is a valid value: it is held as its one value,
// never element by element (parsed, printed in both forms, folded, interpreted,
// lowered).

// CHECK-LABEL: func.func @largest_splat
// CHECK-NEXT: %m = matrix.constant dense<1.500000e+00> : !matrix.matrix<1048575x1048575xf32>
// FOLD-LABEL: func.func @largest_splat
// FOLD-NEXT: %e = arith.constant 1.500000e+00 : f32
// FOLD-NEXT: func.return %e : f32
// LLVM-LABEL: define float @largest_splat(
// LLVM: ret float 0x3FF8000000000000
// GENERIC-LABEL: sym_name = "largest_splat"
// GENERIC: "matrix.constant"() <{value = dense<1.500000e+00> : tensor<1048575x1048575xf32>}>
// RUN-LARGEST: result #0 : f32 = 1.5
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

// Arithmetic, casts, transposes and products of splat constants fold to splat
// constants (never expanded), and the interpreter computes them on the one
// element: (1 + 2) * 2 = 6, through f16 and back; the product sums 8 terms of
// 1.5 * 2 = 24; 6 + 24 + the argument 0.5 = 30.5.
// CHECK-LABEL: func.func @arithmetic_of_splats
// FOLD-LABEL: func.func @arithmetic_of_splats
// FOLD-NOT: matrix.
// FOLD: %[[A:.*]] = arith.constant 3.000000e+01 : f32
// FOLD-NEXT: %[[R:.*]] = arith.addf %[[A]], %x : f32
// FOLD-NEXT: func.return %[[R]] : f32
// LLVM-LABEL: define float @arithmetic_of_splats(
// LLVM-NEXT: bb0:
// LLVM-NEXT: fadd float 0x403E000000000000, %v0
// RUN-ARITH: result #0 : f32 = 30.5
func.func @arithmetic_of_splats(%x: f32) -> f32 {
  %one = matrix.constant dense<1.0> : !matrix.matrix<1048575x1048575xf32>
  %two = matrix.constant dense<"0x00000040"> : !matrix.matrix<1048575x1048575xf32>
  %sum = matrix.add %one, %two : !matrix.matrix<1048575x1048575xf32>
  %twice = matrix.mul %sum, %two : !matrix.matrix<1048575x1048575xf32>
  %t = matrix.transpose %twice : !matrix.matrix<1048575x1048575xf32> -> !matrix.matrix<1048575x1048575xf32>
  %h = matrix.cast %t : !matrix.matrix<1048575x1048575xf32> to !matrix.matrix<1048575x1048575xf16>
  %w = matrix.cast %h : !matrix.matrix<1048575x1048575xf16> to !matrix.matrix<1048575x1048575xf32>
  %i = arith.constant 1048570 : index
  %e = matrix.extract %w[%i, 17] : !matrix.matrix<1048575x1048575xf32>
  %tall = matrix.constant dense<1.5> : !matrix.matrix<1048575x8xf32>
  %wide = matrix.constant dense<2.0> : !matrix.matrix<8x1048575xf32>
  %p = matrix.matmul %tall, %wide : !matrix.matrix<1048575x8xf32>, !matrix.matrix<8x1048575xf32> -> !matrix.matrix<1048575x1048575xf32>
  %d = matrix.extract %p[5, %i] : !matrix.matrix<1048575x1048575xf32>
  %a = arith.addf %e, %d : f32
  %r = arith.addf %a, %x : f32
  func.return %r : f32
}

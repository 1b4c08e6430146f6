// RUN: mx-opt %s -p outline-contractions | filecheck %s
// RUN: mx-opt %s -p 'outline-contractions{min-work=0}' | filecheck %s --check-prefix=OFF
// RUN: mx-opt %s -p 'outline-contractions{min-work=32769}' | filecheck %s --check-prefix=LARGE
// RUN: mx-opt %s -p mx-lower-to-llvm -t llvm | filecheck %s --check-prefix=LLVM

// Three equal matmuls become calls of one function; the one with other
// fastmath flags stays inline (it occurs once). The transpose the last two
// read in place moves into their function, which takes its operand.
// CHECK-LABEL: func.func @chain
// CHECK-NEXT:    %x = func.call @chain__matmul_0(%a, %b) : (!matrix.matrix<32x32xf32>, !matrix.matrix<32x32xf32>) -> !matrix.matrix<32x32xf32>
// CHECK-NEXT:    %y = func.call @chain__matmul_0(%x, %b)
// CHECK-NEXT:    %z = func.call @chain__matmul_0(%y, %b)
// CHECK-NEXT:    %c = matrix.matmul %z, %b fastmath<contract>
// CHECK-NEXT:    %u = func.call @chain__matmul_1(%c, %b)
// CHECK-NEXT:    %v = func.call @chain__matmul_1(%u, %b)
// CHECK-NEXT:    func.return %v
// CHECK-LABEL: func.func private @chain__matmul_0
// CHECK-SAME:    (%0: !matrix.matrix<32x32xf32>, %1: !matrix.matrix<32x32xf32>) -> !matrix.matrix<32x32xf32> attributes {mx.outlined}
// CHECK-NEXT:    %x = matrix.matmul %0, %1 : !matrix.matrix<32x32xf32>, !matrix.matrix<32x32xf32> -> !matrix.matrix<32x32xf32>
// CHECK-NEXT:    func.return %x
// CHECK-LABEL: func.func private @chain__matmul_1
// CHECK-SAME:    (%0: !matrix.matrix<32x32xf32>, %1: !matrix.matrix<32x32xf32>) -> !matrix.matrix<32x32xf32> attributes {mx.outlined}
// CHECK-NEXT:    %t = matrix.transpose %1
// CHECK-NEXT:    %u = matrix.matmul %0, %t
// CHECK-NEXT:    func.return %u
// CHECK-NOT:   func.func private @chain__matmul_2

// min-work=0 outlines nothing; min-work above 32·32·32 keeps the 32x32
// products inline, not the 64x64x64 matmul_adds.
// OFF-NOT:     func.call
// LARGE-LABEL: func.func @chain
// LARGE-NOT:     func.call
// LARGE-LABEL: func.func @mixed
// LARGE:         func.call @mixed__matmul_add_0

// -t llvm: one definition of each kernel, one call per use.
// LLVM-LABEL: define void @chain(
// LLVM-COUNT-3: call void @chain__matmul_0(
// LLVM-COUNT-2: call void @chain__matmul_1(
// LLVM-LABEL: define {{.*}}void @chain__matmul_0(
// LLVM-LABEL: define {{.*}}void @chain__matmul_1(
// LLVM-NOT:   define {{.*}}@chain__matmul_2
func.func @chain(%a: !matrix.matrix<32x32xf32>, %b: !matrix.matrix<32x32xf32>) -> !matrix.matrix<32x32xf32> {
  %x = matrix.matmul %a, %b : !matrix.matrix<32x32xf32>, !matrix.matrix<32x32xf32> -> !matrix.matrix<32x32xf32>
  %y = matrix.matmul %x, %b : !matrix.matrix<32x32xf32>, !matrix.matrix<32x32xf32> -> !matrix.matrix<32x32xf32>
  %z = matrix.matmul %y, %b : !matrix.matrix<32x32xf32>, !matrix.matrix<32x32xf32> -> !matrix.matrix<32x32xf32>
  %c = matrix.matmul %z, %b fastmath<contract> : !matrix.matrix<32x32xf32>, !matrix.matrix<32x32xf32> -> !matrix.matrix<32x32xf32>
  %t = matrix.transpose %b : !matrix.matrix<32x32xf32> -> !matrix.matrix<32x32xf32>
  %u = matrix.matmul %c, %t : !matrix.matrix<32x32xf32>, !matrix.matrix<32x32xf32> -> !matrix.matrix<32x32xf32>
  %v = matrix.matmul %u, %t : !matrix.matrix<32x32xf32>, !matrix.matrix<32x32xf32> -> !matrix.matrix<32x32xf32>
  func.return %v : !matrix.matrix<32x32xf32>
}

// Mixed precision (f16 factors, f32 sums) and matvec, by their signature:
// the biased matvec is another one (it occurs once).
// CHECK-LABEL: func.func @mixed
// CHECK-NEXT:    %p = func.call @mixed__matmul_add_0(%a, %b, %acc)
// CHECK-NEXT:    %q = func.call @mixed__matmul_add_0(%a, %b, %p)
// CHECK-NEXT:    %e = matrix.extract %q[0, 0]
// CHECK-NEXT:    %v = func.call @mixed__matvec_0(%m, %x) : (!matrix.matrix<128x128xf32>, vector<128xf32>) -> vector<128xf32>
// CHECK-NEXT:    %w = func.call @mixed__matvec_0(%m, %v)
// CHECK-NEXT:    %s = matrix.matvec %m, %w, %v
// CHECK-LABEL: func.func private @mixed__matmul_add_0
// CHECK-SAME:    (%0: !matrix.matrix<64x64xf16>, %1: !matrix.matrix<64x64xf16>, %2: !matrix.matrix<64x64xf32>) -> !matrix.matrix<64x64xf32>
// CHECK-NEXT:    %p = matrix.matmul_add %0, %1, %2 : !matrix.matrix<64x64xf16>, !matrix.matrix<64x64xf16>, !matrix.matrix<64x64xf32> -> !matrix.matrix<64x64xf32>
// CHECK-NEXT:    func.return %p
// CHECK-LABEL: func.func private @mixed__matvec_0
// CHECK-SAME:    (%0: !matrix.matrix<128x128xf32>, %1: vector<128xf32>) -> vector<128xf32>
// CHECK-NEXT:    %v = matrix.matvec %0, %1
// CHECK-NEXT:    func.return %v
func.func @mixed(%a: !matrix.matrix<64x64xf16>, %b: !matrix.matrix<64x64xf16>, %acc: !matrix.matrix<64x64xf32>, %m: !matrix.matrix<128x128xf32>, %x: vector<128xf32>) -> vector<128xf32> {
  %p = matrix.matmul_add %a, %b, %acc : !matrix.matrix<64x64xf16>, !matrix.matrix<64x64xf16>, !matrix.matrix<64x64xf32> -> !matrix.matrix<64x64xf32>
  %q = matrix.matmul_add %a, %b, %p : !matrix.matrix<64x64xf16>, !matrix.matrix<64x64xf16>, !matrix.matrix<64x64xf32> -> !matrix.matrix<64x64xf32>
  %e = matrix.extract %q[0, 0] : !matrix.matrix<64x64xf32>
  %v = matrix.matvec %m, %x : !matrix.matrix<128x128xf32>, vector<128xf32> -> vector<128xf32>
  %w = matrix.matvec %m, %v : !matrix.matrix<128x128xf32>, vector<128xf32> -> vector<128xf32>
  %s = matrix.matvec %m, %w, %v : !matrix.matrix<128x128xf32>, vector<128xf32>, vector<128xf32> -> vector<128xf32>
  %r = vector.insert %e, %s [0] : f32 into vector<128xf32>
  func.return %r : vector<128xf32>
}

// Kept inline: 8x8x8 products (below min-work, their results may stay in
// registers), and products reading a load in place (a call would copy it).
// CHECK-LABEL: func.func @kept
// CHECK-NOT:     func.call
// CHECK:         func.return
func.func @kept(%a: !matrix.matrix<8x8xf32>, %p: memref<?xf32>, %b: !matrix.matrix<32x32xf32>) -> !matrix.matrix<32x32xf32> {
  %x = matrix.matmul %a, %a : !matrix.matrix<8x8xf32>, !matrix.matrix<8x8xf32> -> !matrix.matrix<8x8xf32>
  %y = matrix.matmul %x, %a : !matrix.matrix<8x8xf32>, !matrix.matrix<8x8xf32> -> !matrix.matrix<8x8xf32>
  %l = matrix.column_major_load %p[0] : memref<?xf32> -> !matrix.matrix<32x32xf32>
  %z = matrix.matmul %l, %b : !matrix.matrix<32x32xf32>, !matrix.matrix<32x32xf32> -> !matrix.matrix<32x32xf32>
  %k = matrix.column_major_load %p[0] : memref<?xf32> -> !matrix.matrix<32x32xf32>
  %w = matrix.matmul %k, %z : !matrix.matrix<32x32xf32>, !matrix.matrix<32x32xf32> -> !matrix.matrix<32x32xf32>
  %e = matrix.extract %y[0, 0] : !matrix.matrix<8x8xf32>
  %s = matrix.splat %e : !matrix.matrix<32x32xf32>
  %r = matrix.add %w, %s : !matrix.matrix<32x32xf32>
  func.return %r : !matrix.matrix<32x32xf32>
}

// RUN: mx-opt %s -p matrix-fuse-contractions | filecheck %s
// RUN: mx-opt %s -p 'matrix-fuse-contractions{mode=matrix}' | filecheck %s --check-prefix=MATRIX
// RUN: mx-opt %s -p 'matrix-fuse-contractions{mode=off}' | filecheck %s --check-prefix=OFF

// add(matmul, c) → matmul_add, always (same rounding); flags: those both share.
// CHECK-LABEL: func.func @matmul_add
// CHECK-NEXT:    %r = matrix.matmul_add %a, %b, %c fastmath<nnan,contract> : !matrix.matrix<2x3xf32>, !matrix.matrix<3x4xf32>, !matrix.matrix<2x4xf32> -> !matrix.matrix<2x4xf32>
// CHECK-NEXT:    func.return %r
// OFF-LABEL:   func.func @matmul_add
// OFF-NEXT:      matrix.matmul_add
func.func @matmul_add(%a: !matrix.matrix<2x3xf32>, %b: !matrix.matrix<3x4xf32>, %c: !matrix.matrix<2x4xf32>) -> !matrix.matrix<2x4xf32> {
  %m = matrix.matmul %a, %b fastmath<fast> : !matrix.matrix<2x3xf32>, !matrix.matrix<3x4xf32> -> !matrix.matrix<2x4xf32>
  %r = matrix.add %m, %c fastmath<contract,nnan> : !matrix.matrix<2x4xf32>
  func.return %r : !matrix.matrix<2x4xf32>
}

// The accumulator on the left; no flags at all; integers too.
// CHECK-LABEL: func.func @matmul_add_commuted
// CHECK-NEXT:    %r = matrix.matmul_add %a, %b, %c : !matrix.matrix<2x3xi32>, !matrix.matrix<3x4xi32>, !matrix.matrix<2x4xi32> -> !matrix.matrix<2x4xi32>
func.func @matmul_add_commuted(%a: !matrix.matrix<2x3xi32>, %b: !matrix.matrix<3x4xi32>, %c: !matrix.matrix<2x4xi32>) -> !matrix.matrix<2x4xi32> {
  %m = matrix.matmul %a, %b : !matrix.matrix<2x3xi32>, !matrix.matrix<3x4xi32> -> !matrix.matrix<2x4xi32>
  %r = matrix.add %c, %m : !matrix.matrix<2x4xi32>
  func.return %r : !matrix.matrix<2x4xi32>
}

// A matmul with another user is not fused (it would be computed twice).
// CHECK-LABEL: func.func @matmul_multi_use
// CHECK-NEXT:    %m = matrix.matmul %a, %b
// CHECK-NEXT:    %r = matrix.add %m, %c
// CHECK-NEXT:    func.return %r, %m
func.func @matmul_multi_use(%a: !matrix.matrix<2x3xf32>, %b: !matrix.matrix<3x4xf32>, %c: !matrix.matrix<2x4xf32>) -> (!matrix.matrix<2x4xf32>, !matrix.matrix<2x4xf32>) {
  %m = matrix.matmul %a, %b : !matrix.matrix<2x3xf32>, !matrix.matrix<3x4xf32> -> !matrix.matrix<2x4xf32>
  %r = matrix.add %m, %c : !matrix.matrix<2x4xf32>
  func.return %r, %m : !matrix.matrix<2x4xf32>, !matrix.matrix<2x4xf32>
}

// A sub of a matmul is not a matmul_add.
// CHECK-LABEL: func.func @matmul_sub
// CHECK-NEXT:    matrix.matmul
// CHECK-NEXT:    matrix.sub
func.func @matmul_sub(%a: !matrix.matrix<2x3xf32>, %b: !matrix.matrix<3x4xf32>, %c: !matrix.matrix<2x4xf32>) -> !matrix.matrix<2x4xf32> {
  %m = matrix.matmul %a, %b : !matrix.matrix<2x3xf32>, !matrix.matrix<3x4xf32> -> !matrix.matrix<2x4xf32>
  %r = matrix.sub %m, %c : !matrix.matrix<2x4xf32>
  func.return %r : !matrix.matrix<2x4xf32>
}

// matvec + bias (either order), float and integer.
// CHECK-LABEL: func.func @matvec_bias
// CHECK-NEXT:    %z = matrix.matvec %m, %x, %b fastmath<contract> : !matrix.matrix<4x8xf32>, vector<8xf32>, vector<4xf32> -> vector<4xf32>
// CHECK-NEXT:    %w = matrix.matvec %n, %y, %c : !matrix.matrix<2x3xi16>, vector<3xi16>, vector<2xi16> -> vector<2xi16>
func.func @matvec_bias(%m: !matrix.matrix<4x8xf32>, %x: vector<8xf32>, %b: vector<4xf32>, %n: !matrix.matrix<2x3xi16>, %y: vector<3xi16>, %c: vector<2xi16>) -> (vector<4xf32>, vector<2xi16>) {
  %v = matrix.matvec %m, %x fastmath<contract> : !matrix.matrix<4x8xf32>, vector<8xf32> -> vector<4xf32>
  %z = arith.addf %b, %v fastmath<contract,reassoc> : vector<4xf32>
  %u = matrix.matvec %n, %y : !matrix.matrix<2x3xi16>, vector<3xi16> -> vector<2xi16>
  %w = arith.addi %u, %c : vector<2xi16>
  func.return %z, %w : vector<4xf32>, vector<2xi16>
}

// A matvec that already has a bias is left alone.
// CHECK-LABEL: func.func @matvec_has_bias
// CHECK-NEXT:    matrix.matvec %m, %x, %b
// CHECK-NEXT:    arith.addf
func.func @matvec_has_bias(%m: !matrix.matrix<4x8xf32>, %x: vector<8xf32>, %b: vector<4xf32>) -> vector<4xf32> {
  %v = matrix.matvec %m, %x, %b : !matrix.matrix<4x8xf32>, vector<8xf32>, vector<4xf32> -> vector<4xf32>
  %z = arith.addf %v, %b : vector<4xf32>
  func.return %z : vector<4xf32>
}

// add(mul(a, b), c) → fma with contract on both.
// CHECK-LABEL: func.func @fma_contract
// CHECK-NEXT:    %r = matrix.fma %a, %b, %c fastmath<contract> : !matrix.matrix<3x2xf16>
// CHECK-NEXT:    func.return %r
func.func @fma_contract(%a: !matrix.matrix<3x2xf16>, %b: !matrix.matrix<3x2xf16>, %c: !matrix.matrix<3x2xf16>) -> !matrix.matrix<3x2xf16> {
  %p = matrix.mul %a, %b fastmath<contract> : !matrix.matrix<3x2xf16>
  %r = matrix.add %c, %p fastmath<contract,nsz> : !matrix.matrix<3x2xf16>
  func.return %r : !matrix.matrix<3x2xf16>
}

// No fma unless every op has contract; mode=matrix fuses regardless.
// CHECK-LABEL: func.func @fma_needs_contract
// CHECK-NEXT:    %p = matrix.mul %a, %b : !matrix.matrix<2x2xf32>
// CHECK-NEXT:    %r = matrix.add %p, %c fastmath<contract>
// CHECK-NEXT:    %q = matrix.mul %a, %b fastmath<contract>
// CHECK-NEXT:    %s = matrix.add %q, %c : !matrix.matrix<2x2xf32>
// MATRIX-LABEL: func.func @fma_needs_contract
// MATRIX-NEXT:    %r = matrix.fma %a, %b, %c : !matrix.matrix<2x2xf32>
// MATRIX-NEXT:    %s = matrix.fma %a, %b, %c : !matrix.matrix<2x2xf32>
// OFF-LABEL:    func.func @fma_needs_contract
// OFF-NOT:        matrix.fma
// OFF:            func.return
func.func @fma_needs_contract(%a: !matrix.matrix<2x2xf32>, %b: !matrix.matrix<2x2xf32>, %c: !matrix.matrix<2x2xf32>) -> (!matrix.matrix<2x2xf32>, !matrix.matrix<2x2xf32>) {
  %p = matrix.mul %a, %b : !matrix.matrix<2x2xf32>
  %r = matrix.add %p, %c fastmath<contract> : !matrix.matrix<2x2xf32>
  %q = matrix.mul %a, %b fastmath<contract> : !matrix.matrix<2x2xf32>
  %s = matrix.add %q, %c : !matrix.matrix<2x2xf32>
  func.return %r, %s : !matrix.matrix<2x2xf32>, !matrix.matrix<2x2xf32>
}

// a·b - c → fma(a, b, -c); c - a·b → fma(-a, b, c).
// CHECK-LABEL: func.func @fma_sub
// CHECK-NEXT:    %[[NC:.*]] = matrix.neg %c fastmath<contract> : !matrix.matrix<2x3xf64>
// CHECK-NEXT:    %r = matrix.fma %a, %b, %[[NC]] fastmath<contract>
// CHECK-NEXT:    %[[NA:.*]] = matrix.neg %a fastmath<contract> : !matrix.matrix<2x3xf64>
// CHECK-NEXT:    %s = matrix.fma %[[NA]], %b, %c fastmath<contract>
func.func @fma_sub(%a: !matrix.matrix<2x3xf64>, %b: !matrix.matrix<2x3xf64>, %c: !matrix.matrix<2x3xf64>) -> (!matrix.matrix<2x3xf64>, !matrix.matrix<2x3xf64>) {
  %p = matrix.mul %a, %b fastmath<contract> : !matrix.matrix<2x3xf64>
  %r = matrix.sub %p, %c fastmath<contract> : !matrix.matrix<2x3xf64>
  %q = matrix.mul %a, %b fastmath<contract> : !matrix.matrix<2x3xf64>
  %s = matrix.sub %c, %q fastmath<contract> : !matrix.matrix<2x3xf64>
  func.return %r, %s : !matrix.matrix<2x3xf64>, !matrix.matrix<2x3xf64>
}

// Scalar form s·A + B (mul by a splat).
// CHECK-LABEL: func.func @fma_scalar
// CHECK-NEXT:    %k = matrix.splat %s : !matrix.matrix<4x2xbf16>
// CHECK-NEXT:    %r = matrix.fma %k, %a, %b fastmath<contract>
func.func @fma_scalar(%s: bf16, %a: !matrix.matrix<4x2xbf16>, %b: !matrix.matrix<4x2xbf16>) -> !matrix.matrix<4x2xbf16> {
  %k = matrix.splat %s : !matrix.matrix<4x2xbf16>
  %p = matrix.mul %k, %a fastmath<fast> : !matrix.matrix<4x2xbf16>
  %r = matrix.add %p, %b fastmath<contract> : !matrix.matrix<4x2xbf16>
  func.return %r : !matrix.matrix<4x2xbf16>
}

// Multi-use products, integer elements and a mul feeding a mul are never fused.
// CHECK-LABEL: func.func @fma_negative
// CHECK-NOT:     matrix.fma
// CHECK:         func.return
// MATRIX-LABEL: func.func @fma_negative
// MATRIX-NOT:     matrix.fma
// MATRIX:         func.return
func.func @fma_negative(%a: !matrix.matrix<2x2xf32>, %c: !matrix.matrix<2x2xf32>, %i: !matrix.matrix<2x2xi8>) -> (!matrix.matrix<2x2xf32>, !matrix.matrix<2x2xf32>, !matrix.matrix<2x2xi8>, !matrix.matrix<2x2xf32>) {
  %p = matrix.mul %a, %a fastmath<contract> : !matrix.matrix<2x2xf32>
  %r = matrix.add %p, %c fastmath<contract> : !matrix.matrix<2x2xf32>
  %j = matrix.mul %i, %i : !matrix.matrix<2x2xi8>
  %k = matrix.add %j, %i : !matrix.matrix<2x2xi8>
  %q = matrix.mul %a, %c fastmath<contract> : !matrix.matrix<2x2xf32>
  %m = matrix.mul %q, %c fastmath<contract> : !matrix.matrix<2x2xf32>
  func.return %r, %p, %k, %m : !matrix.matrix<2x2xf32>, !matrix.matrix<2x2xf32>, !matrix.matrix<2x2xi8>, !matrix.matrix<2x2xf32>
}

// Mixed-precision products fuse the same way; the narrower factors and
// {unsigned} are kept.
// CHECK-LABEL: func.func @mixed_precision
// CHECK-NEXT:    %r = matrix.matmul_add %a, %a, %c {unsigned} : !matrix.matrix<4x4xi8>, !matrix.matrix<4x4xi8>, !matrix.matrix<4x4xi32> -> !matrix.matrix<4x4xi32>
// CHECK-NEXT:    %[[Y:.*]] = matrix.matvec %w, %x, %b fastmath<contract> : !matrix.matrix<4x8xf16>, vector<8xbf16>, vector<4xf32> -> vector<4xf32>
// CHECK-NEXT:    func.return %r, %[[Y]]
func.func @mixed_precision(%a: !matrix.matrix<4x4xi8>, %c: !matrix.matrix<4x4xi32>, %w: !matrix.matrix<4x8xf16>, %x: vector<8xbf16>, %b: vector<4xf32>) -> (!matrix.matrix<4x4xi32>, vector<4xf32>) {
  %p = matrix.matmul %a, %a {unsigned} : !matrix.matrix<4x4xi8>, !matrix.matrix<4x4xi8> -> !matrix.matrix<4x4xi32>
  %r = matrix.add %p, %c : !matrix.matrix<4x4xi32>
  %v = matrix.matvec %w, %x fastmath<contract> : !matrix.matrix<4x8xf16>, vector<8xbf16> -> vector<4xf32>
  %y = arith.addf %b, %v fastmath<contract> : vector<4xf32>
  func.return %r, %y : !matrix.matrix<4x4xi32>, vector<4xf32>
}

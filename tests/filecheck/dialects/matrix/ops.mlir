// RUN: mx-opt %s | mx-opt | filecheck %s
// RUN: mx-opt %s --print-op-generic | mx-opt | filecheck %s
// RUN: xdsl-opt %s | filecheck %s

// Every op of docs/matrix-dialect.md in its custom syntax; printing and re-parsing (also
// through the generic form) gives the same text.

// CHECK-LABEL: func.func @construction
func.func @construction(%x: f32, %h: bf16, %q: i4) -> (!matrix.matrix<4x4xf32>, !matrix.matrix<2x3xf32>, !matrix.matrix<2x2xbf16>, !matrix.matrix<1x3xi8>, !matrix.matrix<3x1xf64>, !matrix.matrix<2x2xi4>) {
  // CHECK-NEXT: %s = matrix.splat %x : !matrix.matrix<4x4xf32>
  %s = matrix.splat %x : !matrix.matrix<4x4xf32>
  // CHECK-NEXT: %c = matrix.constant dense<[[1.000000e+00, 2.000000e+00, 3.000000e+00], [4.000000e+00, -5.500000e+00, 0.000000e+00]]> : !matrix.matrix<2x3xf32>
  %c = matrix.constant dense<[[1.0, 2.0, 3.0], [4.0, -5.5, 0.0]]> : !matrix.matrix<2x3xf32>
  // CHECK-NEXT: %z = matrix.constant dense<0.000000e+00> : !matrix.matrix<2x2xbf16>
  %z = matrix.constant dense<0.0> : !matrix.matrix<2x2xbf16>
  // CHECK-NEXT: %r = matrix.constant dense<[[1, -2, 3]]> : !matrix.matrix<1x3xi8>
  %r = matrix.constant dense<[[1, -2, 3]]> : !matrix.matrix<1x3xi8>
  // CHECK-NEXT: %col = matrix.constant dense<[[1.000000e+00], [2.000000e+00], [3.000000e+00]]> : !matrix.matrix<3x1xf64>
  %col = matrix.constant dense<[[1.0], [2.0], [3.0]]> : !matrix.matrix<3x1xf64>
  // CHECK-NEXT: %qs = matrix.splat %q : !matrix.matrix<2x2xi4>
  %qs = matrix.splat %q : !matrix.matrix<2x2xi4>
  // CHECK-NEXT: func.return %s, %c, %z, %r, %col, %qs
  func.return %s, %c, %z, %r, %col, %qs : !matrix.matrix<4x4xf32>, !matrix.matrix<2x3xf32>, !matrix.matrix<2x2xbf16>, !matrix.matrix<1x3xi8>, !matrix.matrix<3x1xf64>, !matrix.matrix<2x2xi4>
}

// CHECK-LABEL: func.func @element_access
func.func @element_access(%m: !matrix.matrix<4x3xf16>, %i: index, %j: index) -> (f16, !matrix.matrix<4x3xf16>) {
  // CHECK-NEXT: %a = matrix.extract %m[3, 2] : !matrix.matrix<4x3xf16>
  %a = matrix.extract %m[3, 2] : !matrix.matrix<4x3xf16>
  // CHECK-NEXT: %b = matrix.extract %m[%i, 0] : !matrix.matrix<4x3xf16>
  %b = matrix.extract %m[%i, 0] : !matrix.matrix<4x3xf16>
  // CHECK-NEXT: %n = matrix.insert %a, %m[%i, %j] : !matrix.matrix<4x3xf16>
  %n = matrix.insert %a, %m[%i, %j] : !matrix.matrix<4x3xf16>
  // CHECK-NEXT: %n2 = matrix.insert %b, %n[0, 1] : !matrix.matrix<4x3xf16>
  %n2 = matrix.insert %b, %n[0, 1] : !matrix.matrix<4x3xf16>
  func.return %a, %n2 : f16, !matrix.matrix<4x3xf16>
}

// CHECK-LABEL: func.func @elementwise
func.func @elementwise(%a: !matrix.matrix<2x3xf32>, %b: !matrix.matrix<2x3xf32>, %ia: !matrix.matrix<2x3xi32>) {
  // CHECK-NEXT: %0 = matrix.add %a, %b : !matrix.matrix<2x3xf32>
  %0 = matrix.add %a, %b : !matrix.matrix<2x3xf32>
  // CHECK-NEXT: %1 = matrix.add %a, %b fastmath<contract> : !matrix.matrix<2x3xf32>
  %1 = matrix.add %a, %b fastmath<contract> : !matrix.matrix<2x3xf32>
  // CHECK-NEXT: %2 = matrix.sub %a, %b fastmath<fast> : !matrix.matrix<2x3xf32>
  %2 = matrix.sub %a, %b fastmath<fast> : !matrix.matrix<2x3xf32>
  // CHECK-NEXT: %3 = matrix.mul %a, %b fastmath<nnan,contract> : !matrix.matrix<2x3xf32>
  %3 = matrix.mul %a, %b fastmath<nnan,contract> : !matrix.matrix<2x3xf32>
  // CHECK-NEXT: %4 = matrix.div %a, %b : !matrix.matrix<2x3xf32>
  %4 = matrix.div %a, %b : !matrix.matrix<2x3xf32>
  // CHECK-NEXT: %5 = matrix.div %ia, %ia {unsigned} : !matrix.matrix<2x3xi32>
  %5 = matrix.div %ia, %ia {unsigned} : !matrix.matrix<2x3xi32>
  // CHECK-NEXT: %6 = matrix.div %ia, %ia : !matrix.matrix<2x3xi32>
  %6 = matrix.div %ia, %ia : !matrix.matrix<2x3xi32>
  // CHECK-NEXT: %7 = matrix.neg %a fastmath<nsz> : !matrix.matrix<2x3xf32>
  %7 = matrix.neg %a fastmath<nsz> : !matrix.matrix<2x3xf32>
  // CHECK-NEXT: %8 = matrix.fma %a, %b, %a : !matrix.matrix<2x3xf32>
  %8 = matrix.fma %a, %b, %a : !matrix.matrix<2x3xf32>
  // CHECK-NEXT: %9 = matrix.sub %ia, %ia : !matrix.matrix<2x3xi32>
  %9 = matrix.sub %ia, %ia : !matrix.matrix<2x3xi32>
  // CHECK-NEXT: %10 = matrix.mul %ia, %ia : !matrix.matrix<2x3xi32>
  %10 = matrix.mul %ia, %ia : !matrix.matrix<2x3xi32>
  func.return
}

// CHECK-LABEL: func.func @products
func.func @products(%a: !matrix.matrix<2x3xf64>, %b: !matrix.matrix<3x4xf64>, %c: !matrix.matrix<2x4xf64>, %x: vector<3xf64>, %y: vector<2xf64>, %u: vector<2xf64>, %v: vector<4xf64>) {
  // CHECK-NEXT: %0 = matrix.matmul %a, %b : !matrix.matrix<2x3xf64>, !matrix.matrix<3x4xf64> -> !matrix.matrix<2x4xf64>
  %0 = matrix.matmul %a, %b : !matrix.matrix<2x3xf64>, !matrix.matrix<3x4xf64> -> !matrix.matrix<2x4xf64>
  // CHECK-NEXT: %1 = matrix.matmul %a, %b fastmath<contract> : !matrix.matrix<2x3xf64>, !matrix.matrix<3x4xf64> -> !matrix.matrix<2x4xf64>
  %1 = matrix.matmul %a, %b fastmath<contract> : !matrix.matrix<2x3xf64>, !matrix.matrix<3x4xf64> -> !matrix.matrix<2x4xf64>
  // CHECK-NEXT: %2 = matrix.matmul_add %a, %b, %c : !matrix.matrix<2x3xf64>, !matrix.matrix<3x4xf64>, !matrix.matrix<2x4xf64> -> !matrix.matrix<2x4xf64>
  %2 = matrix.matmul_add %a, %b, %c : !matrix.matrix<2x3xf64>, !matrix.matrix<3x4xf64>, !matrix.matrix<2x4xf64> -> !matrix.matrix<2x4xf64>
  // CHECK-NEXT: %3 = matrix.matmul_add %a, %b, %c fastmath<reassoc,contract> : !matrix.matrix<2x3xf64>, !matrix.matrix<3x4xf64>, !matrix.matrix<2x4xf64> -> !matrix.matrix<2x4xf64>
  %3 = matrix.matmul_add %a, %b, %c fastmath<reassoc,contract> : !matrix.matrix<2x3xf64>, !matrix.matrix<3x4xf64>, !matrix.matrix<2x4xf64> -> !matrix.matrix<2x4xf64>
  // CHECK-NEXT: %4 = matrix.matvec %a, %x : !matrix.matrix<2x3xf64>, vector<3xf64> -> vector<2xf64>
  %4 = matrix.matvec %a, %x : !matrix.matrix<2x3xf64>, vector<3xf64> -> vector<2xf64>
  // CHECK-NEXT: %5 = matrix.matvec %a, %x, %y fastmath<contract> : !matrix.matrix<2x3xf64>, vector<3xf64>, vector<2xf64> -> vector<2xf64>
  %5 = matrix.matvec %a, %x, %y fastmath<contract> : !matrix.matrix<2x3xf64>, vector<3xf64>, vector<2xf64> -> vector<2xf64>
  // CHECK-NEXT: %6 = matrix.outer_product %u, %v : vector<2xf64>, vector<4xf64> -> !matrix.matrix<2x4xf64>
  %6 = matrix.outer_product %u, %v : vector<2xf64>, vector<4xf64> -> !matrix.matrix<2x4xf64>
  func.return
}

// Mixed precision: factors narrower than the result, widened exactly.
// CHECK-LABEL: func.func @mixed_products
func.func @mixed_products(%a: !matrix.matrix<4x64xi8>, %b: !matrix.matrix<64x4xi8>, %h: !matrix.matrix<16x16xf16>, %g: !matrix.matrix<16x16xbf16>, %c: !matrix.matrix<16x16xf32>, %w: !matrix.matrix<8x32xf16>, %x: vector<32xf16>, %s: !matrix.matrix<4x64xi16>, %f: !matrix.matrix<16x16xf32>, %wi: !matrix.matrix<8x32xi8>, %xi: vector<32xi32>, %bi: vector<8xi64>) {
  // CHECK-NEXT: %0 = matrix.matmul %a, %b : !matrix.matrix<4x64xi8>, !matrix.matrix<64x4xi8> -> !matrix.matrix<4x4xi32>
  %0 = matrix.matmul %a, %b : !matrix.matrix<4x64xi8>, !matrix.matrix<64x4xi8> -> !matrix.matrix<4x4xi32>
  // CHECK-NEXT: %1 = matrix.matmul %a, %b {unsigned} : !matrix.matrix<4x64xi8>, !matrix.matrix<64x4xi8> -> !matrix.matrix<4x4xi16>
  %1 = matrix.matmul %a, %b {unsigned} : !matrix.matrix<4x64xi8>, !matrix.matrix<64x4xi8> -> !matrix.matrix<4x4xi16>
  // CHECK-NEXT: %2 = matrix.matmul_add %h, %g, %c fastmath<contract> : !matrix.matrix<16x16xf16>, !matrix.matrix<16x16xbf16>, !matrix.matrix<16x16xf32> -> !matrix.matrix<16x16xf32>
  %2 = matrix.matmul_add %h, %g, %c fastmath<contract> : !matrix.matrix<16x16xf16>, !matrix.matrix<16x16xbf16>, !matrix.matrix<16x16xf32> -> !matrix.matrix<16x16xf32>
  // CHECK-NEXT: %3 = matrix.matvec %w, %x : !matrix.matrix<8x32xf16>, vector<32xf16> -> vector<8xf32>
  %3 = matrix.matvec %w, %x : !matrix.matrix<8x32xf16>, vector<32xf16> -> vector<8xf32>
  // CHECK-NEXT: %4 = matrix.matmul %s, %b {unsigned} : !matrix.matrix<4x64xi16>, !matrix.matrix<64x4xi8> -> !matrix.matrix<4x4xi64>
  %4 = matrix.matmul %s, %b {unsigned} : !matrix.matrix<4x64xi16>, !matrix.matrix<64x4xi8> -> !matrix.matrix<4x4xi64>
  // CHECK-NEXT: %5 = matrix.matmul %h, %f fastmath<fast> : !matrix.matrix<16x16xf16>, !matrix.matrix<16x16xf32> -> !matrix.matrix<16x16xf64>
  %5 = matrix.matmul %h, %f fastmath<fast> : !matrix.matrix<16x16xf16>, !matrix.matrix<16x16xf32> -> !matrix.matrix<16x16xf64>
  // CHECK-NEXT: %6 = matrix.matvec %wi, %xi, %bi {unsigned} : !matrix.matrix<8x32xi8>, vector<32xi32>, vector<8xi64> -> vector<8xi64>
  %6 = matrix.matvec %wi, %xi, %bi {unsigned} : !matrix.matrix<8x32xi8>, vector<32xi32>, vector<8xi64> -> vector<8xi64>
  func.return
}

// CHECK-LABEL: func.func @transpose_cast
func.func @transpose_cast(%a: !matrix.matrix<2x3xi32>, %f: !matrix.matrix<2x3xf32>, %q: !matrix.matrix<2x3xi6>) {
  // CHECK-NEXT: %0 = matrix.transpose %a : !matrix.matrix<2x3xi32> -> !matrix.matrix<3x2xi32>
  %0 = matrix.transpose %a : !matrix.matrix<2x3xi32> -> !matrix.matrix<3x2xi32>
  // CHECK-NEXT: %1 = matrix.transpose %q : !matrix.matrix<2x3xi6> -> !matrix.matrix<3x2xi6>
  %1 = matrix.transpose %q : !matrix.matrix<2x3xi6> -> !matrix.matrix<3x2xi6>
  // CHECK-NEXT: %2 = matrix.cast %a : !matrix.matrix<2x3xi32> to !matrix.matrix<2x3xf32>
  %2 = matrix.cast %a : !matrix.matrix<2x3xi32> to !matrix.matrix<2x3xf32>
  // CHECK-NEXT: %3 = matrix.cast %a {unsigned} : !matrix.matrix<2x3xi32> to !matrix.matrix<2x3xf64>
  %3 = matrix.cast %a {unsigned} : !matrix.matrix<2x3xi32> to !matrix.matrix<2x3xf64>
  // CHECK-NEXT: %4 = matrix.cast %f : !matrix.matrix<2x3xf32> to !matrix.matrix<2x3xbf16>
  %4 = matrix.cast %f : !matrix.matrix<2x3xf32> to !matrix.matrix<2x3xbf16>
  // CHECK-NEXT: %5 = matrix.cast %a : !matrix.matrix<2x3xi32> to !matrix.matrix<2x3xi8>
  %5 = matrix.cast %a : !matrix.matrix<2x3xi32> to !matrix.matrix<2x3xi8>
  func.return
}

// CHECK-LABEL: func.func @memory
func.func @memory(%mem: memref<?xf32>, %fixed: memref<40xf32>, %q: memref<?xi4>, %off: index, %s: index) {
  // CHECK-NEXT: %0 = matrix.column_major_load %mem[%off] stride 5 : memref<?xf32> -> !matrix.matrix<4x4xf32>
  %0 = matrix.column_major_load %mem[%off] stride 5 : memref<?xf32> -> !matrix.matrix<4x4xf32>
  // The default stride (the number of rows) is not printed.
  // CHECK-NEXT: %1 = matrix.column_major_load %fixed[0] : memref<40xf32> -> !matrix.matrix<4x4xf32>
  %1 = matrix.column_major_load %fixed[0] stride 4 : memref<40xf32> -> !matrix.matrix<4x4xf32>
  // CHECK-NEXT: %2 = matrix.row_major_load %mem[3] stride %s : memref<?xf32> -> !matrix.matrix<2x4xf32>
  %2 = matrix.row_major_load %mem[3] stride %s : memref<?xf32> -> !matrix.matrix<2x4xf32>
  // CHECK-NEXT: %3 = matrix.row_major_load %fixed[24] : memref<40xf32> -> !matrix.matrix<2x8xf32>
  %3 = matrix.row_major_load %fixed[24] : memref<40xf32> -> !matrix.matrix<2x8xf32>
  // CHECK-NEXT: %4 = matrix.column_major_load %q[%off] : memref<?xi4> -> !matrix.matrix<2x2xi4>
  %4 = matrix.column_major_load %q[%off] : memref<?xi4> -> !matrix.matrix<2x2xi4>
  // CHECK-NEXT: matrix.column_major_store %0, %mem[%off] stride %s : !matrix.matrix<4x4xf32>, memref<?xf32>
  matrix.column_major_store %0, %mem[%off] stride %s : !matrix.matrix<4x4xf32>, memref<?xf32>
  // CHECK-NEXT: matrix.column_major_store %1, %fixed[24] : !matrix.matrix<4x4xf32>, memref<40xf32>
  matrix.column_major_store %1, %fixed[24] : !matrix.matrix<4x4xf32>, memref<40xf32>
  // CHECK-NEXT: matrix.row_major_store %2, %fixed[0] stride 9 : !matrix.matrix<2x4xf32>, memref<40xf32>
  matrix.row_major_store %2, %fixed[0] stride 9 : !matrix.matrix<2x4xf32>, memref<40xf32>
  // CHECK-NEXT: matrix.row_major_store %4, %q[0] : !matrix.matrix<2x2xi4>, memref<?xi4>
  matrix.row_major_store %4, %q[0] : !matrix.matrix<2x2xi4>, memref<?xi4>
  func.return
}

// Packed i4/i6 storage: `packed` comes last before the colon; the memref holds bytes.
// CHECK-LABEL: func.func @packed
func.func @packed(%mem: memref<?xi8>, %bytes: memref<48xi8>, %off: index, %s: index) {
  // CHECK-NEXT: %0 = matrix.row_major_load %mem[%off] stride %s packed : memref<?xi8> -> !matrix.matrix<64x256xi4>
  %0 = matrix.row_major_load %mem[%off] stride %s packed : memref<?xi8> -> !matrix.matrix<64x256xi4>
  // CHECK-NEXT: %1 = matrix.column_major_load %bytes[0] packed : memref<48xi8> -> !matrix.matrix<8x8xi6>
  %1 = matrix.column_major_load %bytes[0] stride 8 packed : memref<48xi8> -> !matrix.matrix<8x8xi6>
  // CHECK-NEXT: %2 = matrix.column_major_load %mem[3] stride 5 packed : memref<?xi8> -> !matrix.matrix<4x2xi4>
  %2 = matrix.column_major_load %mem[3] stride 5 packed : memref<?xi8> -> !matrix.matrix<4x2xi4>
  // CHECK-NEXT: matrix.column_major_store %1, %bytes[0] packed : !matrix.matrix<8x8xi6>, memref<48xi8>
  matrix.column_major_store %1, %bytes[0] packed : !matrix.matrix<8x8xi6>, memref<48xi8>
  // CHECK-NEXT: matrix.row_major_store %2, %mem[%off] stride 3 packed : !matrix.matrix<4x2xi4>, memref<?xi8>
  matrix.row_major_store %2, %mem[%off] stride 3 packed : !matrix.matrix<4x2xi4>, memref<?xi8>
  func.return
}

// Matrices flow through calls, loops and branches like any value.
// CHECK-LABEL: func.func @control_flow
func.func @control_flow(%a: !matrix.matrix<3x3xf32>, %n: index, %c: i1) -> !matrix.matrix<3x3xf32> {
  %lb = arith.constant 0 : index
  %st = arith.constant 1 : index
  // CHECK: scf.for {{.*}} iter_args(%acc = %a) -> (!matrix.matrix<3x3xf32>)
  %r = scf.for %i = %lb to %n step %st iter_args(%acc = %a) -> (!matrix.matrix<3x3xf32>) {
    %p = matrix.matmul %acc, %a : !matrix.matrix<3x3xf32>, !matrix.matrix<3x3xf32> -> !matrix.matrix<3x3xf32>
    scf.yield %p : !matrix.matrix<3x3xf32>
  }
  // CHECK: scf.if %c -> (!matrix.matrix<3x3xf32>)
  %s = scf.if %c -> (!matrix.matrix<3x3xf32>) {
    %t = func.call @control_flow(%r, %n, %c) : (!matrix.matrix<3x3xf32>, index, i1) -> !matrix.matrix<3x3xf32>
    scf.yield %t : !matrix.matrix<3x3xf32>
  } else {
    scf.yield %r : !matrix.matrix<3x3xf32>
  }
  func.return %s : !matrix.matrix<3x3xf32>
}

// The limits of the type: 1 and 1048575 rows/columns, every element type.
// CHECK-LABEL: func.func @types
// CHECK-SAME: (%a: !matrix.matrix<1048575x1xi64>, %b: !matrix.matrix<1x1048575xi16>, %c: !matrix.matrix<1x1xf16>, %d: !matrix.matrix<8x8xi6>)
func.func @types(%a: !matrix.matrix<1048575x1xi64>, %b: !matrix.matrix<1x1048575xi16>, %c: !matrix.matrix<1x1xf16>, %d: !matrix.matrix<8x8xi6>) {
  func.return
}

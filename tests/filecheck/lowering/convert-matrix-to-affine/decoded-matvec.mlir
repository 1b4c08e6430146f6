// RUN: mx-opt %s --split-input-file -p convert-matrix-to-affine | filecheck %s
// RUN: mx-opt %s --split-input-file -p 'convert-matrix-to-affine{byte-shuffles=64}' | filecheck %s --check-prefix=X512

// The weight-times-vector kernel of FP4/FP8 dequantizations: no buffer of
// decoded weights (only the i8 scales, x, the sums and y); the sums kept in
// a buffer of y, each row a lane summed in k order.

// MXFP4, column-major: the 16 bytes of 32 rows of a column give their even
// rows (low nibbles) and odd rows (high nibbles); each nibble indexes the
// table of the 16 values; the block scales (even and odd rows) multiply
// them, then x(k) (strict: a multiply and an add); the rows' order is
// restored once at the end. Each column's codes of the group are prefetched
// into L2 a pass (16 columns) ahead (the last pass's own for the last: the
// bound is checked once, at the first).
// CHECK-LABEL: func.func @mxfp4_column_major
// CHECK-NOT: memref<64x32xf32>
// CHECK-DAG: %[[MASK:.*]] = arith.constant dense<15> : vector<16xi32>
// CHECK-DAG: %[[FOUR:.*]] = arith.constant dense<4> : vector<16xi32>
// CHECK: %[[TABLE:.*]] = arith.constant dense<[0.000000e+00, 5.000000e-01, 1.000000e+00, 1.500000e+00, 2.000000e+00, 3.000000e+00, 4.000000e+00, 6.000000e+00, -0.000000e+00, -5.000000e-01, -1.000000e+00, -1.500000e+00, -2.000000e+00, -3.000000e+00, -4.000000e+00, -6.000000e+00]> : vector<16xf32>
// CHECK: %[[EVEN_S:.*]] = vector.shuffle %[[S:.*]], %[[S]] [0, 2, 4, {{.*}}, 30] : vector<32xf32>, vector<32xf32>
// CHECK-NEXT: %[[ODD_S:.*]] = vector.shuffle %[[S]], %[[S]] [1, 3, 5, {{.*}}, 31] : vector<32xf32>, vector<32xf32>
// CHECK-NEXT: %[[AHEAD:.*]] = affine.min affine_map<(d0) -> ((d0 + 16), 48)> (%[[K0:.*]])
// CHECK-NEXT: %[[AT:.*]] = arith.muli %[[AHEAD]], %{{.*}} : index
// CHECK-NEXT: %[[CODE_AT:.*]] = arith.addi %[[AT]], %[[ROW:.*]] : index
// CHECK-NEXT: %[[BYTE_AT:.*]] = arith.shrui %[[CODE_AT]], %{{.*}} : index
// CHECK-NEXT: memref.prefetch %w[%[[BYTE_AT]]], read, locality<2>, data : memref<?xi8>
// CHECK: %[[BYTES:.*]] = vector.load %w[%{{.*}}] : memref<?xi8>, vector<16xi8>
// CHECK-NEXT: %[[WIDE:.*]] = llvm.zext %[[BYTES]] : vector<16xi8> to vector<16xi32>
// CHECK-NEXT: %[[LOW:.*]] = arith.andi %[[WIDE]], %[[MASK]] : vector<16xi32>
// CHECK-NEXT: %[[CODE:.*]] = vector.extract %[[LOW]][0] : i32 from vector<16xi32>
// CHECK-NEXT: %[[AT:.*]] = arith.index_cast %[[CODE]] : i32 to index
// CHECK-NEXT: %[[VALUE:.*]] = vector.extract %[[TABLE]][%[[AT]]] : f32 from vector<16xf32>
// CHECK: %[[HIGH:.*]] = arith.shrui %[[WIDE]], %[[FOUR]] : vector<16xi32>
// CHECK-NEXT: vector.extract %[[HIGH]][0] : i32 from vector<16xi32>
// CHECK: %[[EVEN:.*]] = arith.mulf %{{.*}}, %[[EVEN_S]] : vector<16xf32>
// CHECK-NEXT: %[[ODD:.*]] = arith.mulf %{{.*}}, %[[ODD_S]] : vector<16xf32>
// CHECK: %[[X:.*]] = vector.broadcast %{{.*}} : f32 to vector<16xf32>
// CHECK-NEXT: %[[P:.*]] = arith.mulf %[[EVEN]], %[[X]] : vector<16xf32>
// CHECK-NEXT: arith.addf %{{.*}}, %[[P]] : vector<16xf32>
// CHECK-NOT: math.fma
// CHECK: vector.shuffle %{{.*}}, %{{.*}} [0, 16, 1, 17, {{.*}}] : vector<16xf32>, vector<16xf32>
// CHECK-NOT: memref<64x32xf32>
// CHECK: func.return
// With AVX-512's intrinsics (`byte-shuffles=64`: the JIT's on such a host)
// the table is looked up by the permute intrinsic, which reads the low 4
// bits of each lane: no mask before the low nibbles, a shift alone before
// the high ones.
// X512-LABEL: func.func @mxfp4_column_major
// X512: %[[TABLE:.*]] = arith.constant dense<[0.000000e+00, 5.000000e-01, {{.*}}, -6.000000e+00]> : vector<16xf32>
// X512: %[[BYTES:.*]] = vector.load %w[%{{.*}}] : memref<?xi8>, vector<16xi8>
// X512-NEXT: %[[WIDE:.*]] = llvm.zext %[[BYTES]] : vector<16xi8> to vector<16xi32>
// X512-NEXT: llvm.call_intrinsic "llvm.x86.avx512.permvar.sf.512"(%[[TABLE]], %[[WIDE]]) : (vector<16xf32>, vector<16xi32>) -> vector<16xf32>
// X512-NEXT: %[[HIGH:.*]] = arith.shrui %[[WIDE]], %{{.*}} : vector<16xi32>
// X512-NEXT: llvm.call_intrinsic "llvm.x86.avx512.permvar.sf.512"(%[[TABLE]], %[[HIGH]]) : (vector<16xf32>, vector<16xi32>) -> vector<16xf32>
// X512: func.return
func.func @mxfp4_column_major(%w: memref<?xi8>, %s: memref<?xi8>, %x: vector<64xf32>) -> vector<32xf32> {
  %q = matrix.column_major_load %w[0] packed : memref<?xi8> -> !matrix.matrix<32x64xi4>
  %sc = matrix.column_major_load %s[0] : memref<?xi8> -> !matrix.matrix<32x2xi8>
  %f = arbfp.scaled_convert_from f4e2m1fn %q, %sc block 32 : !matrix.matrix<32x64xi4>, !matrix.matrix<32x2xi8> to !matrix.matrix<32x64xf32>
  %y = matrix.matvec %f, %x : !matrix.matrix<32x64xf32>, vector<64xf32> -> vector<32xf32>
  func.return %y : vector<32xf32>
}

// -----

// f8e4m3fn with a constant per-tensor scale, contract: the 32 bytes of 32
// rows are sign-extended into f16 lanes, (b << 7) & 0xBFFF places sign,
// exponent and mantissa, the NaN codes become f16's quiet NaN (0x7E00); the
// hardware conversion's result times 2^8 * 0.5 (folded: one multiply) is the
// dequantized weight; each step is one FMA. One pass of 16 columns: no
// prefetch.
// CHECK-LABEL: func.func @fp8_column_major
// CHECK-NOT: memref<16x32xf32>
// CHECK-DAG: %[[SEVEN:.*]] = arith.constant dense<7> : vector<32xi16>
// CHECK-DAG: %[[CLEAR:.*]] = arith.constant dense<-16385> : vector<32xi16>
// CHECK-DAG: %[[NAN:.*]] = arith.constant dense<32256> : vector<32xi16>
// CHECK: %[[FACTOR:.*]] = arith.constant dense<1.280000e+02> : vector<16xf32>
// CHECK-NOT: memref.prefetch
// CHECK: %[[BYTES:.*]] = vector.load %w[%{{.*}}] : memref<?xi8>, vector<32xi8>
// CHECK-NEXT: %[[WIDE:.*]] = llvm.sext %[[BYTES]] : vector<32xi8> to vector<32xi16>
// CHECK-NEXT: %[[UP:.*]] = arith.shli %[[WIDE]], %[[SEVEN]] : vector<32xi16>
// CHECK-NEXT: %[[PLACED:.*]] = arith.andi %[[UP]], %[[CLEAR]] : vector<32xi16>
// CHECK: %[[HALFS:.*]] = arith.bitcast %{{.*}} : vector<32xi16> to vector<32xf16>
// CHECK-NEXT: %[[LO:.*]] = vector.shuffle %[[HALFS]], %[[HALFS]] [0, 1, {{.*}}, 15] : vector<32xf16>, vector<32xf16>
// CHECK-NEXT: %[[HI:.*]] = vector.shuffle %[[HALFS]], %[[HALFS]] [16, 17, {{.*}}, 31] : vector<32xf16>, vector<32xf16>
// CHECK-NEXT: %[[LO32:.*]] = arith.extf %[[LO]] : vector<16xf16> to vector<16xf32>
// CHECK-NEXT: %[[W:.*]] = arith.mulf %[[LO32]], %[[FACTOR]] : vector<16xf32>
// CHECK: %[[X:.*]] = vector.broadcast %{{.*}} : f32 to vector<16xf32>
// CHECK-NEXT: math.fma %[[W]], %[[X]], %{{.*}} fastmath<contract> : vector<16xf32>
// CHECK-NOT: memref<16x32xf32>
// CHECK: func.return
func.func @fp8_column_major(%w: memref<?xi8>, %x: vector<16xf32>) -> vector<32xf32> {
  %q = matrix.column_major_load %w[3] stride 40 : memref<?xi8> -> !matrix.matrix<32x16xi8>
  %d = arbfp.convert_from f8e4m3fn %q : !matrix.matrix<32x16xi8> to !matrix.matrix<32x16xf32>
  %c = arith.constant 0.5 : f32
  %k = matrix.splat %c : !matrix.matrix<32x16xf32>
  %m = matrix.mul %d, %k : !matrix.matrix<32x16xf32>
  %y = matrix.matvec %m, %x fastmath<contract> : !matrix.matrix<32x16xf32>, vector<16xf32> -> vector<32xf32>
  func.return %y : vector<32xf32>
}

// -----

// MXFP4, row-major: two tiles of 16 rows; each row's 32 bytes of a chunk of
// 64 columns are 8 words, two rows side by side in a vector; three rounds
// of interleaving transpose both halves, so line j holds word j of the 16
// rows, and nibble n of it is column 8j + n; the sums stay in registers
// across the chunks (an affine.for carrying them). Each chunk first
// prefetches into L2 the same columns of each of the 32 rows one group
// below (packed codes only).
// CHECK-LABEL: func.func @mxfp4_row_major
// CHECK-NOT: memref<64x32xf32>
// CHECK-DAG: %[[SHIFT:.*]] = arith.constant dense<4> : vector<16xi32>
// CHECK-DAG: %[[MASK:.*]] = arith.constant dense<15> : vector<16xi32>
// CHECK: affine.for %{{.*}} = 0 to 1 iter_args(%{{.*}} = %{{.*}}, %{{.*}} = %{{.*}}) -> (vector<16xf32>, vector<16xf32>) {
// CHECK-COUNT-32: memref.prefetch %w[%{{.*}}], read, locality<2>, data : memref<?xi8>
// CHECK-NOT: memref.prefetch
// CHECK: %[[ROW0:.*]] = vector.load %w[%{{.*}}] : memref<?xi8>, vector<32xi8>
// CHECK-NEXT: %[[W0:.*]] = vector.bitcast %[[ROW0]] : vector<32xi8> to vector<8xi32>
// CHECK: %[[ROW8:.*]] = vector.load %w[%{{.*}}] : memref<?xi8>, vector<32xi8>
// CHECK-NEXT: %[[W8:.*]] = vector.bitcast %[[ROW8]] : vector<32xi8> to vector<8xi32>
// CHECK-NEXT: vector.shuffle %[[W0]], %[[W8]] [0, 1, 2, {{.*}}, 15] : vector<8xi32>, vector<8xi32>
// CHECK: vector.shuffle %{{.*}}, %{{.*}} [0, 16, 1, 17, 2, 18, 3, 19, 8, 24, 9, 25, 10, 26, 11, 27] : vector<16xi32>, vector<16xi32>
// CHECK: %[[NIBBLE:.*]] = arith.shrui %{{.*}}, %[[SHIFT]] : vector<16xi32>
// CHECK-NEXT: arith.andi %[[NIBBLE]], %[[MASK]] : vector<16xi32>
// CHECK: math.fma
// CHECK-NOT: memref<64x32xf32>
// CHECK: func.return
// X512-LABEL: func.func @mxfp4_row_major
// X512: %[[NIBBLE:.*]] = arith.shrui %{{.*}}, %{{.*}} : vector<16xi32>
// X512-NEXT: llvm.call_intrinsic "llvm.x86.avx512.permvar.sf.512"(%{{.*}}, %[[NIBBLE]]) : (vector<16xf32>, vector<16xi32>) -> vector<16xf32>
// X512: func.return
func.func @mxfp4_row_major(%w: memref<?xi8>, %s: memref<?xi8>, %x: vector<64xf32>) -> vector<32xf32> {
  %q = matrix.row_major_load %w[0] packed : memref<?xi8> -> !matrix.matrix<32x64xi4>
  %sc = matrix.column_major_load %s[0] : memref<?xi8> -> !matrix.matrix<32x2xi8>
  %f = arbfp.scaled_convert_from f4e2m1fn %q, %sc block 32 : !matrix.matrix<32x64xi4>, !matrix.matrix<32x2xi8> to !matrix.matrix<32x64xf32>
  %y = matrix.matvec %f, %x fastmath<contract> : !matrix.matrix<32x64xf32>, vector<64xf32> -> vector<32xf32>
  func.return %y : vector<32xf32>
}

// -----

// f8e4m3fn, row-major, block-scaled (MXFP8): words of 4 elements, each
// read as two 16-bit lanes. Codes 0 and 2 (the low bytes), shifted up by 8
// and arithmetically back by 1, and codes 1 and 3 (the high bytes),
// arithmetically shifted by 1, masked with 0xBF80, are the f16s of their
// sign, exponent and mantissa; NaN codes become 0x7E00. One shuffle takes
// code 0 of every row to the first half and code 2 to the second; each half
// is converted.
// CHECK-LABEL: func.func @mxfp8_row_major
// CHECK-NOT: memref<32x32xf32>
// CHECK-DAG: %[[EIGHT:.*]] = arith.constant dense<8> : vector<32xi16>
// CHECK-DAG: %[[ONE:.*]] = arith.constant dense<1> : vector<32xi16>
// CHECK-DAG: %[[FIELDS:.*]] = arith.constant dense<-16512> : vector<32xi16>
// CHECK-DAG: %[[NAN:.*]] = arith.constant dense<32256> : vector<32xi16>
// CHECK: %[[ROW:.*]] = vector.load %w[%{{.*}}] : memref<?xi8>, vector<32xi8>
// CHECK-NEXT: vector.bitcast %[[ROW]] : vector<32xi8> to vector<8xi32>
// CHECK: %[[PAIRS:.*]] = vector.bitcast %{{.*}} : vector<16xi32> to vector<32xi16>
// CHECK-NEXT: %[[UP:.*]] = arith.shli %[[PAIRS]], %[[EIGHT]] : vector<32xi16>
// CHECK-NEXT: %[[LOW:.*]] = arith.shrsi %[[UP]], %[[ONE]] : vector<32xi16>
// CHECK-NEXT: %[[HIGH:.*]] = arith.shrsi %[[PAIRS]], %[[ONE]] : vector<32xi16>
// CHECK-NEXT: %[[CODES02:.*]] = arith.andi %[[LOW]], %[[FIELDS]] : vector<32xi16>
// CHECK-NEXT: arith.andi %[[HIGH]], %[[FIELDS]] : vector<32xi16>
// CHECK: arith.xori %[[NAN]], %[[CODES02]] : vector<32xi16>
// CHECK: %[[HALFS:.*]] = arith.bitcast %{{.*}} : vector<32xi16> to vector<32xf16>
// CHECK: %[[APART:.*]] = vector.shuffle %[[HALFS]], %[[HALFS]] [0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30, 1, 3, 5, 7, 9, 11, 13, 15, 17, 19, 21, 23, 25, 27, 29, 31] : vector<32xf16>, vector<32xf16>
// CHECK-NEXT: %[[CODE0:.*]] = vector.shuffle %[[APART]], %[[APART]] [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15] : vector<32xf16>, vector<32xf16>
// CHECK-NEXT: %[[CODE2:.*]] = vector.shuffle %[[APART]], %[[APART]] [16, 17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30, 31] : vector<32xf16>, vector<32xf16>
// CHECK-NEXT: arith.extf %[[CODE0]] : vector<16xf16> to vector<16xf32>
// CHECK-NOT: memref<32x32xf32>
// CHECK: func.return
func.func @mxfp8_row_major(%w: memref<?xi8>, %s: memref<?xi8>, %x: vector<32xf32>) -> vector<32xf32> {
  %q = matrix.row_major_load %w[0] : memref<?xi8> -> !matrix.matrix<32x32xi8>
  %sc = matrix.column_major_load %s[0] : memref<?xi8> -> !matrix.matrix<32x1xi8>
  %f = arbfp.scaled_convert_from f8e4m3fn %q, %sc block 32 : !matrix.matrix<32x32xi8>, !matrix.matrix<32x1xi8> to !matrix.matrix<32x32xf32>
  %y = matrix.matvec %f, %x : !matrix.matrix<32x32xf32>, vector<32xf32> -> vector<32xf32>
  func.return %y : vector<32xf32>
}

// -----

// Codes and scales as matrix arguments (column-major: their buffers), FP4
// codes one a byte: read in place from the argument's buffer, 32 rows of a
// column at a time, the bytes widened (no nibbles to split); every column
// of the next pass prefetched, as for packed codes.
// CHECK-LABEL: func.func @mxfp4_arguments(%0: memref<64x32xi4>, %1: memref<2x32xi8>
// CHECK: %[[ONE:.*]] = arith.constant 1 : index
// CHECK-NOT: memref<64x32xf32>
// CHECK: vector.load %1[%{{.*}}, %{{.*}}] : memref<2x32xi8>, vector<32xi8>
// CHECK: %[[AHEAD:.*]] = affine.min affine_map<(d0) -> ((d0 + 16), 48)> (%{{.*}})
// CHECK-NEXT: memref.prefetch %0[%[[AHEAD]], %[[ROW:.*]]], read, locality<2>, data : memref<64x32xi4>
// CHECK: %[[CODES:.*]] = vector.load %0[%{{.*}}, %{{.*}}] : memref<64x32xi4>, vector<32xi4>
// CHECK-NEXT: %[[BYTES:.*]] = llvm.zext %[[CODES]] : vector<32xi4> to vector<32xi8>
// CHECK-NEXT: llvm.zext %[[BYTES]] : vector<32xi8> to vector<32xi32>
// CHECK-NOT: memref.prefetch
// CHECK: %[[NEXT:.*]] = arith.addi %[[AHEAD]], %[[ONE]] : index
// CHECK-NEXT: memref.prefetch %0[%[[NEXT]], %[[ROW]]], read, locality<2>, data : memref<64x32xi4>
// CHECK-NOT: memref<64x32xf32>
// CHECK: func.return
func.func @mxfp4_arguments(%q: !matrix.matrix<32x64xi4>, %sc: !matrix.matrix<32x2xi8>, %x: vector<64xf32>) -> vector<32xf32> {
  %f = arbfp.scaled_convert_from f4e2m1fn %q, %sc block 32 : !matrix.matrix<32x64xi4>, !matrix.matrix<32x2xi8> to !matrix.matrix<32x64xf32>
  %y = matrix.matvec %f, %x : !matrix.matrix<32x64xf32>, vector<64xf32> -> vector<32xf32>
  func.return %y : vector<32xf32>
}

// -----

// Per-tensor FP8 rows 132 bytes apart (not a whole number of cache lines): no
// line start serves every row, so chunks of 32 codes from column 0, no
// address read. The scale %s is known only at run time: where s·2^8 is
// finite (then exact) each group's rows take it as one factor of the f16s'
// f32s, instead of 2^8 (f8e4m3fn's bias is 8 below f16's) and then s.
// CHECK-LABEL: func.func @fp8_row_major_chunks
// CHECK-NOT: memref.extract_aligned_pointer_as_index
// CHECK: %[[POWER:.*]] = arith.constant dense<2.560000e+02> : vector<16xf32>
// CHECK: %[[TWO8:.*]] = arith.constant 2.560000e+02 : f32
// CHECK-NEXT: %[[FOLDED:.*]] = arith.mulf %s, %[[TWO8]] : f32
// CHECK-NEXT: %[[INF:.*]] = arith.constant 0x7f800000 : f32
// CHECK-NEXT: %[[BELOW:.*]] = arith.cmpf olt, %[[FOLDED]], %[[INF]] : f32
// CHECK-NEXT: %[[MINUS_INF:.*]] = arith.constant 0xff800000 : f32
// CHECK-NEXT: %[[ABOVE:.*]] = arith.cmpf ogt, %[[FOLDED]], %[[MINUS_INF]] : f32
// CHECK-NEXT: %[[FINITE:.*]] = arith.andi %[[BELOW]], %[[ABOVE]] : i1
// CHECK-NEXT: %[[FACTOR:.*]] = vector.broadcast %[[FOLDED]] : f32 to vector<16xf32>
// CHECK: scf.if %[[FINITE]] {
// CHECK: %[[ROW:.*]] = vector.load %w[%{{.*}}] : memref<?xi8>, vector<32xi8>
// CHECK-NEXT: vector.bitcast %[[ROW]] : vector<32xi8> to vector<8xi32>
// CHECK-NOT: %[[POWER]]
// CHECK: %[[W:.*]] = arith.mulf %{{.*}}, %[[FACTOR]] : vector<16xf32>
// CHECK-NEXT: arith.mulf %[[W]], %{{.*}} : vector<16xf32>
// CHECK: } else {
// CHECK: %[[D:.*]] = arith.mulf %{{.*}}, %[[POWER]] : vector<16xf32>
// CHECK: arith.mulf %[[D]], %{{.*}} : vector<16xf32>
// CHECK-NOT: memref.extract_aligned_pointer_as_index
// CHECK: func.return
func.func @fp8_row_major_chunks(%w: memref<?xi8>, %s: f32, %x: vector<128xf32>) -> vector<32xf32> {
  %q = matrix.row_major_load %w[0] stride 132 : memref<?xi8> -> !matrix.matrix<32x128xi8>
  %d = arbfp.convert_from f8e4m3fn %q : !matrix.matrix<32x128xi8> to !matrix.matrix<32x128xf32>
  %k = matrix.splat %s : !matrix.matrix<32x128xf32>
  %m = matrix.mul %d, %k : !matrix.matrix<32x128xf32>
  %y = matrix.matvec %m, %x : !matrix.matrix<32x128xf32>, vector<128xf32> -> vector<32xf32>
  func.return %y : vector<32xf32>
}

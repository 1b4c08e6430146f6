// RUN: mx-opt %s -p convert-matrix-to-affine | filecheck %s
// RUN: mx-opt %s -p 'convert-matrix-to-affine{byte-shuffles=32}' | filecheck %s --check-prefix=X86
// RUN: mx-opt %s -p 'convert-matrix-to-affine{byte-shuffles=64}' | filecheck %s --check-prefix=X512
// RUN: mx-opt %s -p 'convert-matrix-to-affine{weight-streams=1}' | filecheck %s --check-prefix=SINGLE
// RUN: mx-opt %s -p 'convert-matrix-to-affine{vector-bits=256 vector-registers=16 byte-shuffles=32}' | filecheck %s --check-prefix=AVX2

// The reassociated weight-times-vector kernel (matvec with `reassoc` of
// row-major FP4/FP8 codes): each row's sums are a vector over K, 4 rows
// sharing each load of x; the lanes are summed by halves at the end. The
// kernel fuses where it means to (`math.fma` under `contract`); its separate
// multiplies and adds carry no `contract`, so LLVM fuses nothing more (and
// every copy of a loop computes the same bits).

// MXFP4: x copied once with each chunk of 32 columns as its even columns,
// then its odd ones (the low and high nibbles of 16 bytes); per block and
// row, the decoded low nibbles times x's even lanes, plus (FMA under
// `contract`) the high nibbles times the odd lanes; that partial sum times
// the block's scale added to the row's sums, once per block; each row's
// scale of a block is its code looked up in the module's table of the 256
// f8e8m0fnu values (as f32 bits: a private constant global, made once and
// fetched once per kernel, before its loops). 5 rows: a group
// of 4, then a last group overlapping it. Each step prefetches the codes 256
// bytes (512 columns) ahead in each row into L1, and into L2 those of the row
// 4 rows below (the next group's) at the step's column; and the scales 16
// blocks ahead in their column-major buffer.
// CHECK: "memref.global"() <{sym_name = "__mx_f8e8m0fnu_f32_bits", type = memref<256xi32>, initial_value = dense<"0x0000400000008000{{.*}}0000007F0000C07F"> : tensor<256xi32>, sym_visibility = "private", constant, alignment = 64 : i64}>
// CHECK-NOT: "memref.global"
// CHECK-LABEL: func.func @mxfp4_reassoc
// CHECK-DAG: %[[GROUP:.*]] = arith.constant 4 : index
// CHECK-DAG: %[[CODES_AHEAD:.*]] = arith.constant 512 : index
// CHECK-DAG: %[[BLOCKS_AHEAD:.*]] = arith.constant 16 : index
// CHECK-NOT: memref<64x5xf32>
// CHECK: %[[X:.*]] = vector.load %{{.*}} : memref<1x64xf32>, vector<32xf32>
// CHECK-NEXT: vector.shuffle %[[X]], %[[X]] [0, 2, 4, {{.*}}, 30, 1, 3, 5, {{.*}}, 31] : vector<32xf32>, vector<32xf32>
// CHECK: %[[TABLE:.*]] = memref.get_global @__mx_f8e8m0fnu_f32_bits : memref<256xi32>
// CHECK-NOT: memref.get_global
// CHECK: affine.for %{{.*}} = 0 to 1 {
// CHECK: affine.for %{{.*}} = 0 to 2 iter_args(%[[S0:.*]] = %{{.*}}, %[[S1:.*]] = %{{.*}}, %[[S2:.*]] = %{{.*}}, %[[S3:.*]] = %{{.*}}) -> (vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>) {
// CHECK-NEXT: %[[K:.*]] = arith.muli %{{.*}}, %{{.*}} : index
// CHECK-NEXT: arith.addi %[[K]], %[[CODES_AHEAD]] : index
// CHECK: memref.prefetch %w[%{{.*}}], read, locality<3>, data : memref<?xi8>
// CHECK-NEXT: %[[NEXT:.*]] = arith.addi %{{.*}}, %[[GROUP]] : index
// CHECK-NEXT: %[[ROW:.*]] = arith.muli %[[NEXT]], %{{.*}} : index
// CHECK-NEXT: %[[AT:.*]] = arith.addi %[[ROW]], %[[K]] : index
// CHECK-NEXT: %[[BYTE:.*]] = arith.shrui %[[AT]], %{{.*}} : index
// CHECK-NEXT: memref.prefetch %w[%[[BYTE]]], read, locality<2>, data : memref<?xi8>
// CHECK-COUNT-3: memref.prefetch %w[%{{.*}}], read, locality<3>, data : memref<?xi8>
// CHECK: %[[XE:.*]] = vector.load %{{.*}} : memref<1x64xf32>, vector<16xf32>
// CHECK: %[[XO:.*]] = vector.load %{{.*}} : memref<1x64xf32>, vector<16xf32>
// CHECK: %[[BYTES:.*]] = vector.load %w[%{{.*}}] : memref<?xi8>, vector<16xi8>
// CHECK-NEXT: llvm.zext %[[BYTES]] : vector<16xi8> to vector<16xi32>
// CHECK: %[[P:.*]] = arith.mulf %{{.*}}, %[[XE]] : vector<16xf32>
// CHECK-NEXT: %[[PART:.*]] = math.fma %{{.*}}, %[[XO]], %[[P]] fastmath<contract> : vector<16xf32>
// CHECK: %[[CODE:.*]] = vector.load %[[SCALES:.*]][%{{.*}}, %{{.*}}] : memref<2x5xi8>, vector<1xi8>
// CHECK-NEXT: %[[C:.*]] = vector.extract %[[CODE]][0] : i8 from vector<1xi8>
// CHECK-NEXT: %[[WIDE:.*]] = arith.extui %[[C]] : i8 to i32
// CHECK-NEXT: %[[AT:.*]] = arith.index_cast %[[WIDE]] : i32 to index
// CHECK-NEXT: %[[BITS:.*]] = memref.load %[[TABLE]][%[[AT]]] : memref<256xi32>
// CHECK-NEXT: %[[SCALE0:.*]] = arith.bitcast %[[BITS]] : i32 to f32
// CHECK-NOT: memref.get_global
// CHECK-COUNT-3: memref.load %[[TABLE]][%{{.*}}] : memref<256xi32>
// CHECK-NOT: memref.get_global
// CHECK: %[[BLOCK:.*]] = arith.divui %{{.*}}, %{{.*}} : index
// CHECK-NEXT: %[[AHEAD:.*]] = arith.addi %[[BLOCK]], %[[BLOCKS_AHEAD]] : index
// CHECK-NEXT: memref.prefetch %[[SCALES]][%[[AHEAD]], %{{.*}}], read, locality<3>, data : memref<2x5xi8>
// CHECK: %[[SCALE:.*]] = vector.broadcast %[[SCALE0]] : f32 to vector<16xf32>
// CHECK-NEXT: math.fma %[[PART]], %[[SCALE]], %[[S0]] fastmath<contract> : vector<16xf32>
// CHECK: affine.yield
// CHECK: vector.shuffle %{{.*}}, %{{.*}} [0, 1, 2, 3, 4, 5, 6, 7] : vector<16xf32>, vector<16xf32>
// CHECK-NEXT: vector.shuffle %{{.*}}, %{{.*}} [8, 9, 10, 11, 12, 13, 14, 15] : vector<16xf32>, vector<16xf32>
// CHECK-NEXT: arith.addf %{{.*}}, %{{.*}} : vector<8xf32>
// CHECK: vector.store %{{.*}}, %{{.*}} : memref<1x5xf32>, vector<4xf32>
// CHECK: affine.for %{{.*}} = 0 to 2 iter_args
// CHECK: vector.store %{{.*}}, %{{.*}}[%{{.*}}, %{{.*}}] : memref<1x5xf32>, vector<4xf32>
// CHECK-NOT: memref<64x5xf32>
// CHECK: func.return
func.func @mxfp4_reassoc(%w: memref<?xi8>, %s: memref<?xi8>, %x: vector<64xf32>) -> vector<5xf32> {
  %q = matrix.row_major_load %w[0] packed : memref<?xi8> -> !matrix.matrix<5x64xi4>
  %sc = matrix.column_major_load %s[0] : memref<?xi8> -> !matrix.matrix<5x2xi8>
  %f = arbfp.scaled_convert_from f4e2m1fn %q, %sc block 32 : !matrix.matrix<5x64xi4>, !matrix.matrix<5x2xi8> to !matrix.matrix<5x64xf32>
  %y = matrix.matvec %f, %x fastmath<reassoc,contract> : !matrix.matrix<5x64xf32>, vector<64xf32> -> vector<5xf32>
  func.return %y : vector<5xf32>
}

// MXFP4 with K = 160: one group of 128 columns (packed codes, 64 bytes a
// row), then one block in chunks as above. x's group is copied with its
// columns 8·j + p in vector p's lane j; the row's 64 bytes are split into low
// and high nibbles, and each byte position is spread to the low byte of its
// 32-bit lane (a byte shuffle with zeros) for the table look-up: vector p
// holds columns 8·j + p. The codes 512 bytes ahead are prefetched into L1,
// and those of the next group of rows into L2, before x's lanes are loaded. The 4
// blocks' scales of the 4 rows are read a block at a time and decoded at
// once (lane 4·b + i: row i, block b); each row's 8 products are summed,
// then multiplied by its scales spread to the lanes of their blocks.
// CHECK-LABEL: func.func @mxfp4_groups
// CHECK-DAG: %[[FIFTEEN:.*]] = arith.constant dense<15> : vector<64xi8>
// CHECK-DAG: %[[FOUR:.*]] = arith.constant dense<4> : vector<64xi8>
// CHECK: %[[XG:.*]] = vector.load %{{.*}} : memref<1x160xf32>, vector<128xf32>
// CHECK-NEXT: vector.shuffle %[[XG]], %[[XG]] [0, 8, 16, 24, {{.*}}, 120, 1, 9, {{.*}}, 119, 127] : vector<128xf32>, vector<128xf32>
// CHECK: affine.for %{{.*}} = 0 to 1 iter_args(%[[A0:.*]] = %{{.*}}, %{{.*}} = %{{.*}}, %{{.*}} = %{{.*}}, %{{.*}} = %{{.*}}) -> (vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>) {
// CHECK-COUNT-4: memref.prefetch %w[%{{.*}}], read, locality<2>, data : memref<?xi8>
// CHECK-NOT: memref.prefetch
// CHECK-COUNT-8: vector.load %{{.*}} : memref<1x160xf32>, vector<16xf32>
// CHECK-COUNT-4: vector<4xi8>
// CHECK: %[[CODES:.*]] = vector.shuffle %{{.*}}, %{{.*}} [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15] : vector<8xi8>, vector<8xi8>
// CHECK-NEXT: llvm.zext %[[CODES]] : vector<16xi8> to vector<16xi32>
// CHECK: %[[SCALES:.*]] = arith.bitcast %{{.*}} : vector<16xi32> to vector<16xf32>
// CHECK-NOT: memref.prefetch
// CHECK: %[[BYTES:.*]] = vector.load %w[%{{.*}}] : memref<?xi8>, vector<64xi8>
// CHECK-NEXT: %[[LOW:.*]] = arith.andi %[[BYTES]], %[[FIFTEEN]] : vector<64xi8>
// CHECK-NEXT: %[[HIGH:.*]] = arith.shrui %[[BYTES]], %[[FOUR]] : vector<64xi8>
// CHECK: %[[SPREAD:.*]] = vector.shuffle %[[LOW]], %{{.*}} [0, 64, 64, 64, 4, 64, 64, 64, {{.*}}, 60, 64, 64, 64] : vector<64xi8>, vector<64xi8>
// CHECK-NEXT: vector.bitcast %[[SPREAD]] : vector<64xi8> to vector<16xi32>
// CHECK: vector.shuffle %[[HIGH]], %{{.*}} [0, 64, 64, 64, 4, {{.*}}] : vector<64xi8>, vector<64xi8>
// CHECK: vector.shuffle %[[LOW]], %{{.*}} [1, 64, 64, 64, 5, {{.*}}] : vector<64xi8>, vector<64xi8>
// CHECK: vector.shuffle %[[HIGH]], %{{.*}} [3, 64, 64, 64, 7, {{.*}}, 63, 64, 64, 64] : vector<64xi8>, vector<64xi8>
// CHECK: %[[P0:.*]] = arith.mulf %{{.*}}, %{{.*}} : vector<16xf32>
// CHECK-COUNT-7: math.fma
// CHECK-NEXT: %[[ROW0:.*]] = vector.shuffle %[[SCALES]], %[[SCALES]] [0, 0, 0, 0, 4, 4, 4, 4, 8, 8, 8, 8, 12, 12, 12, 12] : vector<16xf32>, vector<16xf32>
// CHECK-NEXT: math.fma %{{.*}}, %[[ROW0]], %[[A0]] fastmath<contract> : vector<16xf32>
// CHECK: vector.shuffle %[[SCALES]], %[[SCALES]] [1, 1, 1, 1, 5, 5, 5, 5, 9, 9, 9, 9, 13, 13, 13, 13] : vector<16xf32>, vector<16xf32>
// CHECK: affine.yield
// CHECK: affine.for %{{.*}} = 0 to 1 iter_args
// CHECK: vector.load %w[%{{.*}}] : memref<?xi8>, vector<16xi8>
// CHECK: func.return
// With x86 byte shuffles (`byte-shuffles=32`, AVX2's: the JIT's on such a
// host), each half of the 64 bytes of nibbles is looked up by two `pshufb`s,
// in tables of the low and of the high bytes of the bf16s of the 16 values;
// the two are interleaved within every 16 bytes (`vpunpcklbw`/`vpunpckhbw`)
// into 32 bf16s, two to a 32-bit lane; the lanes shifted left by 16 bits are
// the f32s of the low ones, the lanes with their low 16 bits cleared those of
// the high ones, with no conversion instruction: x's group is copied in that
// order. Lanes 4·b to 4·b+3 of every vector are in block b, so the
// products of the 8 vectors are summed, then times the row's 4 scales spread
// to their lanes.
// X86-LABEL: func.func @mxfp4_groups
// X86: %[[SIXTEEN:.*]] = arith.constant dense<16> : vector<16xi32>
// X86-NEXT: %[[HIGH_HALF:.*]] = arith.constant dense<-65536> : vector<16xi32>
// X86: vector.shuffle %{{.*}}, %{{.*}} [0, 4, 8, 12, 32, 36, 40, 44, 64, 68, 72, 76, 96, 100, 104, 108, 2, 6, {{.*}}, 95, 115, 119, 123, 127] : vector<128xf32>, vector<128xf32>
// X86: %[[LOWS:.*]] = arith.constant dense<[0, 0, -128, -64, 0, 64, -128, -64, 0, 0, -128, -64, 0, 64, -128, -64, 0, 0, {{.*}}, -64]> : vector<32xi8>
// X86-NEXT: %[[HIGHS:.*]] = arith.constant dense<[0, 63, 63, 63, 64, 64, 64, 64, -128, -65, -65, -65, -64, -64, -64, -64, 0, 63, {{.*}}, -64]> : vector<32xi8>
// X86: %[[SCALES:.*]] = arith.bitcast %{{.*}} : vector<16xi32> to vector<16xf32>
// X86: %[[CODES:.*]] = vector.load %w[%{{.*}}] : memref<?xi8>, vector<64xi8>
// X86: %[[LOW:.*]] = arith.andi %[[CODES]], %{{.*}} : vector<64xi8>
// X86: %[[HIGH:.*]] = arith.shrui %[[CODES]], %{{.*}} : vector<64xi8>
// X86: %[[FIRST:.*]] = vector.shuffle %[[LOW]], %[[LOW]] [0, 1, {{.*}}, 31] : vector<64xi8>, vector<64xi8>
// X86-NEXT: %[[SECOND:.*]] = vector.shuffle %[[LOW]], %[[LOW]] [32, 33, {{.*}}, 63] : vector<64xi8>, vector<64xi8>
// X86-NEXT: %[[L1:.*]] = llvm.call_intrinsic "llvm.x86.avx2.pshuf.b"(%[[LOWS]], %[[FIRST]]) : (vector<32xi8>, vector<32xi8>) -> vector<32xi8>
// X86-NEXT: %[[L2:.*]] = llvm.call_intrinsic "llvm.x86.avx2.pshuf.b"(%[[LOWS]], %[[SECOND]]) : (vector<32xi8>, vector<32xi8>) -> vector<32xi8>
// X86-NEXT: %[[LB:.*]] = vector.shuffle %[[L1]], %[[L2]] [0, 1, {{.*}}, 62, 63] : vector<32xi8>, vector<32xi8>
// X86-NEXT: %[[H1:.*]] = llvm.call_intrinsic "llvm.x86.avx2.pshuf.b"(%[[HIGHS]], %[[FIRST]]) : (vector<32xi8>, vector<32xi8>) -> vector<32xi8>
// X86-NEXT: %[[H2:.*]] = llvm.call_intrinsic "llvm.x86.avx2.pshuf.b"(%[[HIGHS]], %[[SECOND]]) : (vector<32xi8>, vector<32xi8>) -> vector<32xi8>
// X86-NEXT: %[[HB:.*]] = vector.shuffle %[[H1]], %[[H2]] [0, 1, {{.*}}, 62, 63] : vector<32xi8>, vector<32xi8>
// X86-NEXT: %[[PAIRS:.*]] = vector.shuffle %[[LB]], %[[HB]] [0, 64, 1, 65, {{.*}}, 7, 71, 16, 80, {{.*}}, 55, 119] : vector<64xi8>, vector<64xi8>
// X86-NEXT: %[[BF16:.*]] = vector.bitcast %[[PAIRS]] : vector<64xi8> to vector<16xi32>
// X86-NEXT: %[[W0:.*]] = arith.shli %[[BF16]], %[[SIXTEEN]] : vector<16xi32>
// X86-NEXT: %[[W1:.*]] = arith.andi %[[BF16]], %[[HIGH_HALF]] : vector<16xi32>
// X86-NEXT: %[[V0:.*]] = vector.bitcast %[[W0]] : vector<16xi32> to vector<16xf32>
// X86-NEXT: vector.bitcast %[[W1]] : vector<16xi32> to vector<16xf32>
// X86-NEXT: vector.shuffle %[[LB]], %[[HB]] [8, 72, 9, 73, {{.*}}, 63, 127] : vector<64xi8>, vector<64xi8>
// X86: llvm.call_intrinsic "llvm.x86.avx2.pshuf.b"(%[[LOWS]], %{{.*}})
// X86-NOT: arith.extf
// X86: %[[P0:.*]] = arith.mulf %[[V0]], %{{.*}} : vector<16xf32>
// X86-COUNT-7: math.fma
// X86-NEXT: %[[ROW0:.*]] = vector.shuffle %[[SCALES]], %[[SCALES]] [0, 0, 0, 0, 4, 4, 4, 4, 8, 8, 8, 8, 12, 12, 12, 12] : vector<16xf32>, vector<16xf32>
// X86-NEXT: math.fma %{{.*}}, %[[ROW0]], %{{.*}} fastmath<contract> : vector<16xf32>
// X86: affine.yield
// With AVX2's 16 vector registers a group of columns is one row at a time
// (8 lanes: a group is 64 columns, 2 blocks). The row's two scales of the
// group are each looked up in the table (no vector decode of their codes).
// The group's 32 bytes of codes are read with their 64-bit pieces in the
// order 0, 2, 1, 3, so that each decoded vector holds columns of one block
// (x's group is copied in that order): vectors 0, 1, 4, 5 block 0, the
// others block 1; each block's sum is times its scale broadcast.
// AVX2-LABEL: func.func @mxfp4_groups
// AVX2: vector.shuffle %{{.*}}, %{{.*}} [0, 4, 8, 12, 16, 20, 24, 28, 2, 6, 10, 14, 18, 22, 26, 30, 32, 36, {{.*}}, 47, 51, 55, 59, 63] : vector<64xf32>, vector<64xf32>
// AVX2: %[[TABLE:.*]] = memref.get_global @__mx_f8e8m0fnu_f32_bits : memref<256xi32>
// AVX2: affine.for %{{.*}} = 0 to 2 iter_args(%[[ACC:.*]] = %{{.*}}) -> (vector<8xf32>) {
// AVX2-COUNT-2: memref.prefetch %w
// AVX2-COUNT-8: vector.load %{{.*}} : memref<1x160xf32>, vector<8xf32>
// AVX2: vector.load %{{.*}} : memref<5x5xi8>, vector<1xi8>
// AVX2: %[[BITS0:.*]] = memref.load %[[TABLE]][%{{.*}}] : memref<256xi32>
// AVX2-NEXT: %[[FIRST:.*]] = arith.bitcast %[[BITS0]] : i32 to f32
// AVX2: vector.load %{{.*}} : memref<5x5xi8>, vector<1xi8>
// AVX2-NOT: memref.get_global
// AVX2: %[[BITS1:.*]] = memref.load %[[TABLE]][%{{.*}}] : memref<256xi32>
// AVX2-NEXT: %[[SECOND:.*]] = arith.bitcast %[[BITS1]] : i32 to f32
// AVX2-NEXT: %[[BOTH:.*]] = vector.broadcast %[[FIRST]] : f32 to vector<2xf32>
// AVX2-NEXT: %[[SCALES:.*]] = vector.insert %[[SECOND]], %[[BOTH]] [1] : f32 into vector<2xf32>
// AVX2-NOT: arith.cmpi
// AVX2: %[[CODES:.*]] = vector.load %w[%{{.*}}] : memref<?xi8>, vector<32xi8>
// AVX2-NEXT: %[[WORDS:.*]] = vector.bitcast %[[CODES]] : vector<32xi8> to vector<8xi32>
// AVX2-NEXT: vector.shuffle %[[WORDS]], %[[WORDS]] [0, 1, 4, 5, 2, 3, 6, 7] : vector<8xi32>, vector<8xi32>
// AVX2: llvm.call_intrinsic "llvm.x86.avx2.pshuf.b"
// AVX2: arith.mulf %{{.*}}, %{{.*}} : vector<8xf32>
// AVX2-COUNT-3: math.fma
// AVX2-NEXT: %[[FIRST_SPREAD:.*]] = vector.shuffle %[[SCALES]], %[[SCALES]] [0, 0, 0, 0, 0, 0, 0, 0] : vector<2xf32>, vector<2xf32>
// AVX2-NEXT: %[[BLOCK0:.*]] = math.fma %{{.*}}, %[[FIRST_SPREAD]], %[[ACC]] fastmath<contract> : vector<8xf32>
// AVX2-NEXT: arith.mulf %{{.*}}, %{{.*}} : vector<8xf32>
// AVX2-COUNT-3: math.fma
// AVX2-NEXT: %[[SECOND_SPREAD:.*]] = vector.shuffle %[[SCALES]], %[[SCALES]] [1, 1, 1, 1, 1, 1, 1, 1] : vector<2xf32>, vector<2xf32>
// AVX2-NEXT: %[[SUMS:.*]] = math.fma %{{.*}}, %[[SECOND_SPREAD]], %[[BLOCK0]] fastmath<contract> : vector<8xf32>
// AVX2-NEXT: affine.yield %[[SUMS]] : vector<8xf32>
// With AVX-512's intrinsics (`byte-shuffles=64`: the JIT's on such a host)
// the group's 64 bytes are 16 32-bit lanes; each lane shifted right by 4·p
// indexes the f32 table by the permute intrinsic (`vpermps`, which reads
// the low 4 bits: no mask, no byte shuffle), so vector p holds columns
// 8·j + p as without intrinsics, and x's group is copied in that order.
// X512-LABEL: func.func @mxfp4_groups
// X512-DAG: %[[BY4:.*]] = arith.constant dense<4> : vector<16xi32>
// X512-DAG: %[[BY28:.*]] = arith.constant dense<28> : vector<16xi32>
// X512-DAG: %[[TABLE:.*]] = arith.constant dense<[0.000000e+00, 5.000000e-01, {{.*}}, -6.000000e+00]> : vector<16xf32>
// X512: vector.shuffle %{{.*}}, %{{.*}} [0, 8, 16, 24, {{.*}}, 120, 1, 9, {{.*}}, 119, 127] : vector<128xf32>, vector<128xf32>
// X512-NOT: pshuf
// X512: %[[BYTES:.*]] = vector.load %w[%{{.*}}] : memref<?xi8>, vector<64xi8>
// X512-NEXT: %[[WORDS:.*]] = vector.bitcast %[[BYTES]] : vector<64xi8> to vector<16xi32>
// X512-NEXT: %[[V0:.*]] = llvm.call_intrinsic "llvm.x86.avx512.permvar.sf.512"(%[[TABLE]], %[[WORDS]]) : (vector<16xf32>, vector<16xi32>) -> vector<16xf32>
// X512-NEXT: %[[N1:.*]] = arith.shrui %[[WORDS]], %[[BY4]] : vector<16xi32>
// X512-NEXT: llvm.call_intrinsic "llvm.x86.avx512.permvar.sf.512"(%[[TABLE]], %[[N1]])
// X512-COUNT-5: arith.shrui %[[WORDS]]
// X512: %[[N7:.*]] = arith.shrui %[[WORDS]], %[[BY28]] : vector<16xi32>
// X512-NEXT: llvm.call_intrinsic "llvm.x86.avx512.permvar.sf.512"(%[[TABLE]], %[[N7]])
// X512-NOT: arith.andi
// X512: arith.mulf %[[V0]], %{{.*}} : vector<16xf32>
// X512-COUNT-7: math.fma
// X512-NEXT: vector.shuffle %{{.*}}, %{{.*}} [0, 0, 0, 0, 4, 4, 4, 4, 8, 8, 8, 8, 12, 12, 12, 12] : vector<16xf32>, vector<16xf32>
// X512: affine.yield
func.func @mxfp4_groups(%w: memref<?xi8>, %s: memref<?xi8>, %x: vector<160xf32>) -> vector<5xf32> {
  %q = matrix.row_major_load %w[0] packed : memref<?xi8> -> !matrix.matrix<5x160xi4>
  %sc = matrix.column_major_load %s[0] : memref<?xi8> -> !matrix.matrix<5x5xi8>
  %f = arbfp.scaled_convert_from f4e2m1fn %q, %sc block 32 : !matrix.matrix<5x160xi4>, !matrix.matrix<5x5xi8> to !matrix.matrix<5x160xf32>
  %y = matrix.matvec %f, %x fastmath<reassoc,contract> : !matrix.matrix<5x160xf32>, vector<160xf32> -> vector<5xf32>
  func.return %y : vector<5xf32>
}

// FP8 e4m3fn times a per-tensor scale whose multiply reassociates too: x
// times 2^8 times the scale, once; each row's 32 codes placed as f16 bits
// (sign-extended, shifted left by 7; under `nnan` nothing marks the NaN
// codes), converted to f32 and multiplied by x's lanes. The flags but `reassoc` on the kernel's arithmetic (the order
// is the kernel's). K = 40: the last 8 columns element by element, after
// the lanes are summed.
// CHECK-LABEL: func.func @fp8_reassoc
// CHECK-DAG: %[[SEVEN:.*]] = arith.constant dense<7> : vector<32xi16>
// CHECK-DAG: %[[MASK:.*]] = arith.constant dense<-16385> : vector<32xi16>
// CHECK: %[[P:.*]] = arith.constant 2.560000e+02 : f32
// CHECK-NEXT: %[[SP:.*]] = arith.mulf %scale, %[[P]] : f32
// CHECK-NEXT: %[[S:.*]] = vector.broadcast %[[SP]] : f32 to vector<32xf32>
// CHECK: arith.mulf %{{.*}}, %[[S]] : vector<32xf32>
// CHECK: %[[CODES:.*]] = vector.load %w[%{{.*}}] : memref<?xi8>, vector<32xi8>
// CHECK-NEXT: %[[WIDE:.*]] = llvm.sext %[[CODES]] : vector<32xi8> to vector<32xi16>
// CHECK-NEXT: %[[SHIFTED:.*]] = arith.shli %[[WIDE]], %[[SEVEN]] : vector<32xi16>
// CHECK-NEXT: %[[PLACED:.*]] = arith.andi %[[SHIFTED]], %[[MASK]] : vector<32xi16>
// CHECK-NEXT: arith.bitcast %[[PLACED]] : vector<32xi16> to vector<32xf16>
// CHECK: arith.extf %{{.*}} : vector<16xf16> to vector<16xf32>
// CHECK-NOT: arith.mulf
// CHECK: math.fma %{{.*}}, %{{.*}}, %{{.*}} fastmath<nnan,ninf,nsz,arcp,contract,afn> : vector<16xf32>
// CHECK: vector.extract %{{.*}}[0] : f32 from vector<1xf32>
// CHECK: affine.for %{{.*}} = 32 to 40 iter_args(%{{.*}} = %{{.*}}, %{{.*}} = %{{.*}}, %{{.*}} = %{{.*}}) -> (f32, f32, f32) {
// CHECK: arbfp.convert_from f8e4m3fn %{{.*}} : i8 to f32
// CHECK-NEXT: arith.mulf %{{.*}}, %scale fastmath<fast> : f32
// CHECK-NEXT: math.fma %{{.*}}, %{{.*}}, %{{.*}} fastmath<nnan,ninf,nsz,arcp,contract,afn> : f32
// CHECK: func.return
func.func @fp8_reassoc(%w: memref<?xi8>, %scale: f32, %x: vector<40xf32>) -> vector<3xf32> {
  %q = matrix.row_major_load %w[0] : memref<?xi8> -> !matrix.matrix<3x40xi8>
  %d = arbfp.convert_from f8e4m3fn %q : !matrix.matrix<3x40xi8> to !matrix.matrix<3x40xf32>
  %k = matrix.splat %scale : !matrix.matrix<3x40xf32>
  %m = matrix.mul %d, %k fastmath<fast> : !matrix.matrix<3x40xf32>
  %y = matrix.matvec %m, %x fastmath<fast> : !matrix.matrix<3x40xf32>, vector<40xf32> -> vector<3xf32>
  func.return %y : vector<3xf32>
}

// Without `nnan` the NaN codes (0x3F80 after the mask) carry into f16's
// exponent all ones: NaN weights give NaN rows.
// CHECK-LABEL: func.func @fp8_reassoc_nan_codes
// CHECK-DAG: %[[FIELDS:.*]] = arith.constant dense<16256> : vector<32xi16>
// CHECK-DAG: %[[ONE:.*]] = arith.constant dense<128> : vector<32xi16>
// CHECK-DAG: %[[TOP:.*]] = arith.constant dense<16384> : vector<32xi16>
// CHECK: %[[PLACED:.*]] = arith.andi %{{.*}}, %{{.*}} : vector<32xi16>
// CHECK-NEXT: %[[F:.*]] = arith.andi %[[PLACED]], %[[FIELDS]] : vector<32xi16>
// CHECK-NEXT: %[[CARRY:.*]] = arith.addi %[[F]], %[[ONE]] : vector<32xi16>
// CHECK-NEXT: %[[NAN:.*]] = arith.andi %[[CARRY]], %[[TOP]] : vector<32xi16>
// CHECK-NEXT: %[[BITS:.*]] = arith.ori %[[PLACED]], %[[NAN]] : vector<32xi16>
// CHECK-NEXT: arith.bitcast %[[BITS]] : vector<32xi16> to vector<32xf16>
// CHECK: func.return
func.func @fp8_reassoc_nan_codes(%w: memref<?xi8>, %x: vector<40xf32>) -> vector<3xf32> {
  %q = matrix.row_major_load %w[0] : memref<?xi8> -> !matrix.matrix<3x40xi8>
  %d = arbfp.convert_from f8e4m3fn %q : !matrix.matrix<3x40xi8> to !matrix.matrix<3x40xf32>
  %y = matrix.matvec %d, %x fastmath<reassoc,contract> : !matrix.matrix<3x40xf32>, vector<40xf32> -> vector<3xf32>
  func.return %y : vector<3xf32>
}

// Row-major f16 weights cast to f32 (the same kernel without a decoding):
// each row has two vectors of sums (even and odd steps of 16 columns),
// added and summed by halves; K = 40: the last 8 columns element by element
// in k order; then the bias. 4 rows at a time (`weight-streams`, mx-opt's
// target: 4 rows' weights streamed at once, sharing each load of x): 18
// rows are 4 groups and a last group overlapping them; with one stream,
// 18 groups of a row. Each step first prefetches into L2 the f16 weights of
// the rows one group below at its column (the next group's rows).
// CHECK-LABEL: func.func @f16_reassoc
// CHECK-DAG: %[[GROUP:.*]] = arith.constant 4 : index
// CHECK-DAG: %[[STEP:.*]] = arith.constant 32 : index
// CHECK: affine.for %{{.*}} = 0 to 4 {
// CHECK: affine.for %[[S:.*]] = 0 to 1 iter_args(%[[E0:.*]] = %{{.*}}, %[[O0:.*]] = %{{.*}}, %{{.*}} = %{{.*}}, %{{.*}} = %{{.*}}, %{{.*}} = %{{.*}}, %{{.*}} = %{{.*}}, %{{.*}} = %{{.*}}, %{{.*}} = %{{.*}}) -> (vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>) {
// CHECK-NEXT: %[[K:.*]] = arith.muli %[[S]], %[[STEP]] : index
// CHECK-NEXT: %[[NEXT:.*]] = arith.addi %{{.*}}, %[[GROUP]] : index
// CHECK-NEXT: %[[ROW:.*]] = arith.muli %[[NEXT]], %{{.*}} : index
// CHECK-NEXT: %[[AT:.*]] = arith.addi %[[ROW]], %[[K]] : index
// CHECK-NEXT: memref.prefetch %w[%[[AT]]], read, locality<2>, data : memref<?xf16>
// CHECK-COUNT-3: memref.prefetch %w[%{{.*}}], read, locality<2>, data : memref<?xf16>
// CHECK: %[[X0:.*]] = vector.load %{{.*}} : memref<1x40xf32>, vector<16xf32>
// CHECK: %[[H:.*]] = vector.load %w[%{{.*}}] : memref<?xf16>, vector<16xf16>
// CHECK-NEXT: %[[W:.*]] = arith.extf %[[H]] : vector<16xf16> to vector<16xf32>
// CHECK-NEXT: math.fma %[[W]], %[[X0]], %[[E0]] fastmath<contract> : vector<16xf32>
// CHECK-COUNT-3: math.fma %{{.*}}, %[[X0]], %{{.*}} fastmath<contract> : vector<16xf32>
// CHECK: %[[X1:.*]] = vector.load %{{.*}} : memref<1x40xf32>, vector<16xf32>
// CHECK-COUNT-4: math.fma %{{.*}}, %[[X1]], %{{.*}} fastmath<contract> : vector<16xf32>
// CHECK-NEXT: affine.yield
// CHECK-COUNT-4: vector.shuffle %{{.*}}, %{{.*}} [0, 1, 2, 3, 4, 5, 6, 7] : vector<16xf32>, vector<16xf32>
// CHECK: affine.for %{{.*}} = 32 to 40 iter_args
// CHECK: memref.load %w[%{{.*}}] : memref<?xf16>
// CHECK: func.return
// SINGLE-LABEL: func.func @f16_reassoc
// SINGLE: affine.for %{{.*}} = 0 to 18 {
// SINGLE: affine.for %{{.*}} = 0 to 1 iter_args(%[[E:.*]] = %{{.*}}, %[[O:.*]] = %{{.*}}) -> (vector<16xf32>, vector<16xf32>) {
// SINGLE: memref.prefetch %w[%{{.*}}], read, locality<2>, data : memref<?xf16>
// SINGLE-NOT: memref.prefetch
// SINGLE: %[[X0:.*]] = vector.load %{{.*}} : memref<1x40xf32>, vector<16xf32>
// SINGLE: %[[H:.*]] = vector.load %w[%{{.*}}] : memref<?xf16>, vector<16xf16>
// SINGLE-NEXT: %[[W:.*]] = arith.extf %[[H]] : vector<16xf16> to vector<16xf32>
// SINGLE-NEXT: %[[E1:.*]] = math.fma %[[W]], %[[X0]], %[[E]] fastmath<contract> : vector<16xf32>
// SINGLE: %[[X1:.*]] = vector.load %{{.*}} : memref<1x40xf32>, vector<16xf32>
// SINGLE: arith.extf %{{.*}} : vector<16xf16> to vector<16xf32>
// SINGLE-NEXT: %[[O1:.*]] = math.fma %{{.*}}, %[[X1]], %[[O]] fastmath<contract> : vector<16xf32>
// SINGLE-NEXT: affine.yield %[[E1]], %[[O1]] : vector<16xf32>, vector<16xf32>
// SINGLE: arith.addf %{{.*}}, %{{.*}} : vector<16xf32>
// SINGLE-NEXT: vector.shuffle %{{.*}}, %{{.*}} [0, 1, 2, 3, 4, 5, 6, 7] : vector<16xf32>, vector<16xf32>
// SINGLE: affine.for %{{.*}} = 32 to 40 iter_args
// SINGLE: memref.load %w[%{{.*}}] : memref<?xf16>
// SINGLE: arith.addf %{{.*}}, %{{.*}} : vector<1xf32>
// SINGLE-NEXT: vector.store %{{.*}}, %{{.*}}[%{{.*}}, %{{.*}}] : memref<1x18xf32>, vector<1xf32>
// SINGLE: func.return
func.func @f16_reassoc(%w: memref<?xf16>, %x: vector<40xf32>, %b: vector<18xf32>) -> vector<18xf32> {
  %q = matrix.row_major_load %w[0] : memref<?xf16> -> !matrix.matrix<18x40xf16>
  %m = matrix.cast %q : !matrix.matrix<18x40xf16> to !matrix.matrix<18x40xf32>
  %y = matrix.matvec %m, %x, %b fastmath<reassoc,contract> : !matrix.matrix<18x40xf32>, vector<40xf32>, vector<18xf32> -> vector<18xf32>
  func.return %y : vector<18xf32>
}

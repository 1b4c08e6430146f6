// RUN: mx-opt %s --split-input-file -p 'convert-matrix-to-affine{l1-bytes=768 l1-ways=12}' | filecheck %s

// Row-major codes read by whole cache lines of each row a step: mx-opt's
// 16-lane tiles and a 12-way L1 of one set (768 bytes: every row's line at
// a column falls in it), so one tile's lines overflow their set wherever
// the rows are a whole number of lines apart (as 16 rows 4 KiB apart do in
// a 12-way 48 KiB L1); rows that are not are read by chunks
// (decoded-matvec.mlir, decoded-matvec-l1-sets.mlir).

// Transposes of arguments (a C-ordered argument under the JIT): the codes
// are row-major, read as 32-bit words of each row of the argument's buffer,
// a cache line of each row a step (rows 64 bytes apart: see
// @mxfp8_row_major_lines) from the buffer's address, by its two chunks of 32
// bytes; the scales are rows, copied into a column-major buffer first.
// CHECK-LABEL: func.func @mxfp8_row_major_arguments(%0: memref<32x64xi8>, %1: memref<32x2xi8>
// CHECK: %[[SCALES:.*]] = memref.alloca() {alignment = 64 : i64} : memref<2x32xi8>
// CHECK: vector.load %1[%{{.*}}, %{{.*}}] : memref<32x2xi8>, vector<2xi8>
// CHECK: vector.store %{{.*}}, %[[SCALES]][%{{.*}}, %{{.*}}] : memref<2x32xi8>, vector<2xi8>
// CHECK: "memref.extract_aligned_pointer_as_index"(%0) : (memref<32x64xi8>) -> index
// CHECK-NOT: vector<64xi8>
// CHECK: %[[ROW:.*]] = vector.load %0[%{{.*}}, %{{.*}}] : memref<32x64xi8>, vector<32xi8>
// CHECK-NEXT: vector.bitcast %[[ROW]] : vector<32xi8> to vector<8xi32>
// CHECK: vector.load %[[SCALES]][%{{.*}}, %{{.*}}] : memref<2x32xi8>, vector<16xi8>
// CHECK: func.return
func.func @mxfp8_row_major_arguments(%qt: !matrix.matrix<64x32xi8>, %st: !matrix.matrix<2x32xi8>, %x: vector<64xf32>) -> vector<32xf32> {
  %q = matrix.transpose %qt : !matrix.matrix<64x32xi8> -> !matrix.matrix<32x64xi8>
  %sc = matrix.transpose %st : !matrix.matrix<2x32xi8> -> !matrix.matrix<32x2xi8>
  %f = arbfp.scaled_convert_from f8e4m3fn %q, %sc block 32 : !matrix.matrix<32x64xi8>, !matrix.matrix<32x2xi8> to !matrix.matrix<32x64xf32>
  %y = matrix.matvec %f, %x : !matrix.matrix<32x64xf32>, vector<64xf32> -> vector<32xf32>
  func.return %y : vector<32xf32>
}

// -----

// Per-tensor FP8 codes as the transpose of an argument (a C-ordered argument
// under the JIT): a whole cache line (64 codes) of each row of the
// argument's buffer a step, its first 32 bytes of every row, then its last
// (no 64-byte load and permutes), from the first column at a line's start
// (the buffer's address), the columns before it and after the last line
// step in the loop's first and last steps (one masked body), as for a
// load's codes.
// CHECK-LABEL: func.func @fp8_row_major_lines_argument(%0: memref<32x128xi8>
// CHECK: %[[C32:.*]] = arith.constant 32 : index
// CHECK: %[[BASE:.*]] = "memref.extract_aligned_pointer_as_index"(%0) : (memref<32x128xi8>) -> index
// CHECK: %[[FIRST:.*]] = arith.divui
// CHECK: scf.for
// CHECK: scf.if
// CHECK: arith.select %{{.*}}, %[[FIRST]]
// CHECK: vector.load %0[%{{.*}}, %{{.*}}] : memref<32x128xi8>, vector<32xi8>
// CHECK: arith.cmpi uge
// CHECK-NEXT: arith.cmpi ult
// CHECK: } else {
// CHECK-NOT: vector<64xi8>
// CHECK: vector.load %0[%{{.*}}, %[[FIRST_HALF:.*]]] : memref<32x128xi8>, vector<32xi8>
// CHECK: %[[SECOND_HALF:.*]] = arith.addi %[[FIRST_HALF]], %[[C32]] : index
// CHECK-NEXT: vector.load %0[%{{.*}}, %[[SECOND_HALF]]] : memref<32x128xi8>, vector<32xi8>
// CHECK: scf.yield
// CHECK: func.return
func.func @fp8_row_major_lines_argument(%qt: !matrix.matrix<128x32xi8>, %s: f32, %x: vector<128xf32>) -> vector<32xf32> {
  %q = matrix.transpose %qt : !matrix.matrix<128x32xi8> -> !matrix.matrix<32x128xi8>
  %d = arbfp.convert_from f8e4m3fn %q : !matrix.matrix<32x128xi8> to !matrix.matrix<32x128xf32>
  %k = matrix.splat %s : !matrix.matrix<32x128xf32>
  %m = matrix.mul %d, %k : !matrix.matrix<32x128xf32>
  %y = matrix.matvec %m, %x : !matrix.matrix<32x128xf32>, vector<128xf32> -> vector<32xf32>
  func.return %y : vector<32xf32>
}

// -----

// Per-tensor FP8 rows a whole number of cache lines apart, from a load: the
// group's two tiles of 16 rows in line steps one after the other (16 rows
// streamed at once, not 32), each loop carrying one tile's sums.
// CHECK-LABEL: func.func @fp8_row_major_lines_tile_by_tile
// CHECK: scf.for {{.*}} -> (vector<16xf32>) {
// CHECK-COUNT-16: vector.load %w[%{{.*}}] : memref<?xi8>, vector<32xi8>
// CHECK: scf.for {{.*}} -> (vector<16xf32>) {
// CHECK-NOT: -> (vector<16xf32>, vector<16xf32>)
// CHECK: func.return
func.func @fp8_row_major_lines_tile_by_tile(%w: memref<?xi8>, %s: f32, %x: vector<128xf32>) -> vector<32xf32> {
  %q = matrix.row_major_load %w[0] : memref<?xi8> -> !matrix.matrix<32x128xi8>
  %d = arbfp.convert_from f8e4m3fn %q : !matrix.matrix<32x128xi8> to !matrix.matrix<32x128xf32>
  %k = matrix.splat %s : !matrix.matrix<32x128xf32>
  %m = matrix.mul %d, %k : !matrix.matrix<32x128xf32>
  %y = matrix.matvec %m, %x : !matrix.matrix<32x128xf32>, vector<128xf32> -> vector<32xf32>
  func.return %y : vector<32xf32>
}

// -----

// MXFP8 rows a whole number of cache lines apart (128 bytes): a line of each
// row a step (two loads of 32 codes a row) from the first column at a line's
// start rounded down to a word (so no word spans two blocks), two tiles at
// once. Versioned on that column: where it starts a block (rows 32-byte
// aligned), so does every whole step, and each word takes its own block's
// scales; elsewhere a step starts at no block's start, so a word takes the
// block scales of the step's first column, or of the next block when
// k0 mod 32 reaches past the word's place: one select a word and tile.
// CHECK-LABEL: func.func @mxfp8_row_major_lines
// CHECK: "memref.extract_aligned_pointer_as_index"(%w) : (memref<?xi8>) -> index
// CHECK: %[[LINE:.*]] = arith.divui
// CHECK-NEXT: %[[PAST:.*]] = arith.remui %[[LINE]], %{{.*}} : index
// CHECK-NEXT: %[[FIRST:.*]] = arith.subi %[[LINE]], %[[PAST]] : index
// CHECK-NEXT: %[[INTO_BLOCK:.*]] = arith.remui %[[FIRST]], %{{.*}} : index
// CHECK-NEXT: %[[ON_BLOCK:.*]] = arith.cmpi eq, %[[INTO_BLOCK]], %{{.*}} : index
// CHECK-NEXT: scf.if %[[ON_BLOCK]] -> (vector<16xf32>, vector<16xf32>) {
// CHECK: scf.for {{.*}} -> (vector<16xf32>, vector<16xf32>) {
// CHECK: } else {
// CHECK-NEXT: arith.subi
// CHECK-NEXT: arith.muli
// CHECK-NEXT: arith.addi %{{.*}}, %[[FIRST]] : index
// CHECK-NOT: arith.select {{.*}} : vector<16xf32>
// CHECK: scf.yield
// CHECK: } else {
// CHECK: scf.for {{.*}} -> (vector<16xf32>, vector<16xf32>) {
// CHECK: } else {
// CHECK-NEXT: arith.subi
// CHECK-NEXT: arith.muli
// CHECK-NEXT: %[[K0:.*]] = arith.addi %{{.*}}, %[[FIRST]] : index
// CHECK-NEXT: %[[INTO:.*]] = arith.remui %[[K0]], %{{.*}} : index
// CHECK-NOT: vector<64xi8>
// CHECK: vector.load %w[%{{.*}}] : memref<?xi8>, vector<32xi8>
// CHECK: %[[CROSSES:.*]] = arith.cmpi uge, %[[INTO]], %{{.*}} : index
// CHECK-NEXT: arith.select %[[CROSSES]], %{{.*}}, %{{.*}} : vector<16xf32>
// CHECK-NEXT: arith.select %[[CROSSES]], %{{.*}}, %{{.*}} : vector<16xf32>
// CHECK: scf.yield
// CHECK: func.return
func.func @mxfp8_row_major_lines(%w: memref<?xi8>, %s: memref<?xi8>, %x: vector<128xf32>) -> vector<32xf32> {
  %q = matrix.row_major_load %w[0] : memref<?xi8> -> !matrix.matrix<32x128xi8>
  %sc = matrix.column_major_load %s[0] : memref<?xi8> -> !matrix.matrix<32x4xi8>
  %f = arbfp.scaled_convert_from f8e4m3fn %q, %sc block 32 : !matrix.matrix<32x128xi8>, !matrix.matrix<32x4xi8> to !matrix.matrix<32x128xf32>
  %y = matrix.matvec %f, %x : !matrix.matrix<32x128xf32>, vector<128xf32> -> vector<32xf32>
  func.return %y : vector<32xf32>
}

// -----

// Packed MXFP4 rows of 128 codes, 64 bytes apart: a line of each row (128
// codes) a step as for MXFP8, from the first column at a line's start: the
// row's byte is half its code position, the line start's column twice its
// byte (rounded down to a word of 8 codes).
// CHECK-LABEL: func.func @mxfp4_row_major_lines
// CHECK: "memref.extract_aligned_pointer_as_index"(%w) : (memref<?xi8>) -> index
// CHECK-NEXT: %[[POSITION:.*]] = arith.muli %{{.*}}, %{{.*}} : index
// CHECK-NEXT: %[[BYTE:.*]] = arith.shrui %[[POSITION]], %{{.*}} : index
// CHECK-NEXT: %[[ADDRESS:.*]] = arith.addi %{{.*}}, %[[BYTE]] : index
// CHECK-NEXT: %[[AHEAD:.*]] = arith.subi %{{.*}}, %[[ADDRESS]] : index
// CHECK-NEXT: %[[IN_LINE:.*]] = arith.andi %[[AHEAD]], %{{.*}} : index
// CHECK-NEXT: %[[COLUMN:.*]] = arith.muli %[[IN_LINE]], %{{.*}} : index
// CHECK-NEXT: %[[PAST:.*]] = arith.remui %[[COLUMN]], %{{.*}} : index
// CHECK-NEXT: arith.subi %[[COLUMN]], %[[PAST]] : index
// CHECK: scf.for
// CHECK: vector.load %w[%{{.*}}] : memref<?xi8>, vector<32xi8>
// CHECK: func.return
func.func @mxfp4_row_major_lines(%w: memref<?xi8>, %s: memref<?xi8>, %x: vector<128xf32>) -> vector<32xf32> {
  %q = matrix.row_major_load %w[0] packed : memref<?xi8> -> !matrix.matrix<32x128xi4>
  %sc = matrix.column_major_load %s[0] : memref<?xi8> -> !matrix.matrix<32x4xi8>
  %f = arbfp.scaled_convert_from f4e2m1fn %q, %sc block 32 : !matrix.matrix<32x128xi4>, !matrix.matrix<32x4xi8> to !matrix.matrix<32x128xf32>
  %y = matrix.matvec %f, %x : !matrix.matrix<32x128xf32>, vector<128xf32> -> vector<32xf32>
  func.return %y : vector<32xf32>
}

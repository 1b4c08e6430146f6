// RUN: mx-opt %s --split-input-file -p 'convert-matrix-to-affine{vector-bits=256 l1-bytes=32768 l1-ways=8}' | filecheck %s --check-prefix=ZEN3
// RUN: mx-opt %s --split-input-file -p 'convert-matrix-to-affine{vector-bits=256 l1-bytes=16384 l1-ways=4}' | filecheck %s --check-prefix=WAYS4
// RUN: mx-opt %s --split-input-file -p convert-matrix-to-affine | filecheck %s --check-prefix=X512
// RUN: mx-opt %s --split-input-file -p 'convert-matrix-to-affine{l1-bytes=65536 l1-ways=16}' | filecheck %s --check-prefix=WAYS16

// Row-major block-scaled codes whose rows share L1 sets (rows a multiple of
// l1-bytes / l1-ways apart share one set). Where one tile's lines at a
// column overflow their set, the rows are read by whole cache lines of each
// row a step, from the first column at a line's start (the codes' address,
// an scf.for of steps), the group's two tiles at once; else by chunks from
// column 0 (affine loops, no address), one tile at a time where two tiles'
// lines fill the set, both at once where they do not. ZEN3 lowers for
// 8-lane tiles and an 8-way 32 KiB L1 (sets 4 KiB apart, as on a Zen 3),
// WAYS4 for 8-lane tiles and a 4-way 16 KiB L1, X512 for 16-lane tiles and
// mx-opt's 12-way 48 KiB L1, WAYS16 for 16-lane tiles and a 16-way 64 KiB
// L1. Rows of 128 columns, the loads' strides setting where they start; the
// memrefs hold every row (the lowered-interpreter test runs these
// functions).

// MXFP8 rows 4 KiB apart, all in one set. 8 rows fit 8 ways and 16 rows
// fill them: chunks, one tile at a time (each chunk loop carries one
// tile's sums). 8 rows overflow 4 ways, 16 rows 12 ways: lines, both tiles
// at once. 16 rows fit 16 ways and 32 fill them: chunks, one tile at a
// time.
// ZEN3-LABEL: func.func @mxfp8_rows_4k
// ZEN3-NOT: memref.extract_aligned_pointer_as_index
// ZEN3: affine.for {{.*}} -> (vector<8xf32>) {
// ZEN3: affine.for {{.*}} -> (vector<8xf32>) {
// ZEN3-NOT: -> (vector<8xf32>, vector<8xf32>)
// ZEN3: func.return
// WAYS4-LABEL: func.func @mxfp8_rows_4k
// WAYS4: memref.extract_aligned_pointer_as_index
// WAYS4: scf.if {{.*}} -> (vector<8xf32>, vector<8xf32>) {
// WAYS4: scf.for {{.*}} -> (vector<8xf32>, vector<8xf32>) {
// WAYS4: func.return
// X512-LABEL: func.func @mxfp8_rows_4k
// X512: memref.extract_aligned_pointer_as_index
// X512: scf.if {{.*}} -> (vector<16xf32>, vector<16xf32>) {
// X512: scf.for {{.*}} -> (vector<16xf32>, vector<16xf32>) {
// X512: func.return
// WAYS16-LABEL: func.func @mxfp8_rows_4k
// WAYS16-NOT: memref.extract_aligned_pointer_as_index
// WAYS16: affine.for {{.*}} -> (vector<16xf32>) {
// WAYS16: affine.for {{.*}} -> (vector<16xf32>) {
// WAYS16-NOT: -> (vector<16xf32>, vector<16xf32>)
// WAYS16: func.return
func.func @mxfp8_rows_4k(%w: memref<131072xi8>, %s: memref<?xi8>, %x: vector<128xf32>) -> vector<32xf32> {
  %q = matrix.row_major_load %w[0] stride 4096 : memref<131072xi8> -> !matrix.matrix<32x128xi8>
  %sc = matrix.column_major_load %s[0] : memref<?xi8> -> !matrix.matrix<32x4xi8>
  %m = arbfp.scaled_convert_from f8e4m3fn %q, %sc block 32 : !matrix.matrix<32x128xi8>, !matrix.matrix<32x4xi8> to !matrix.matrix<32x128xf32>
  %y = matrix.matvec %m, %x : !matrix.matrix<32x128xf32>, vector<128xf32> -> vector<32xf32>
  func.return %y : vector<32xf32>
}

// -----

// MXFP8 rows 2 KiB apart, in two sets: two 8-row tiles are 8 lines a set,
// which fill 8 ways (and fit 4 ways no better): chunks, one tile at a time.
// ZEN3-LABEL: func.func @mxfp8_rows_2k
// ZEN3-NOT: memref.extract_aligned_pointer_as_index
// ZEN3: affine.for {{.*}} -> (vector<8xf32>) {
// ZEN3: affine.for {{.*}} -> (vector<8xf32>) {
// ZEN3-NOT: -> (vector<8xf32>, vector<8xf32>)
// ZEN3: func.return
func.func @mxfp8_rows_2k(%w: memref<32768xi8>, %s: memref<?xi8>, %x: vector<128xf32>) -> vector<16xf32> {
  %q = matrix.row_major_load %w[0] stride 2048 : memref<32768xi8> -> !matrix.matrix<16x128xi8>
  %sc = matrix.column_major_load %s[0] : memref<?xi8> -> !matrix.matrix<16x4xi8>
  %m = arbfp.scaled_convert_from f8e4m3fn %q, %sc block 32 : !matrix.matrix<16x128xi8>, !matrix.matrix<16x4xi8> to !matrix.matrix<16x128xf32>
  %y = matrix.matvec %m, %x : !matrix.matrix<16x128xf32>, vector<128xf32> -> vector<16xf32>
  func.return %y : vector<16xf32>
}

// -----

// MXFP8 rows 1 KiB apart, in four sets: two 8-row tiles are 4 lines a set,
// which leave 4 of 8 ways: chunks, both tiles at once.
// ZEN3-LABEL: func.func @mxfp8_rows_1k
// ZEN3-NOT: memref.extract_aligned_pointer_as_index
// ZEN3: affine.for {{.*}} -> (vector<8xf32>, vector<8xf32>) {
// ZEN3: func.return
func.func @mxfp8_rows_1k(%w: memref<16384xi8>, %s: memref<?xi8>, %x: vector<128xf32>) -> vector<16xf32> {
  %q = matrix.row_major_load %w[0] stride 1024 : memref<16384xi8> -> !matrix.matrix<16x128xi8>
  %sc = matrix.column_major_load %s[0] : memref<?xi8> -> !matrix.matrix<16x4xi8>
  %m = arbfp.scaled_convert_from f8e4m3fn %q, %sc block 32 : !matrix.matrix<16x128xi8>, !matrix.matrix<16x4xi8> to !matrix.matrix<16x128xf32>
  %y = matrix.matvec %m, %x : !matrix.matrix<16x128xf32>, vector<128xf32> -> vector<16xf32>
  func.return %y : vector<16xf32>
}

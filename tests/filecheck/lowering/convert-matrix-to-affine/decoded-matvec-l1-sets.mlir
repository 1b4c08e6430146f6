// RUN: mx-opt %s --split-input-file -p 'convert-matrix-to-affine{vector-bits=256 l1-bytes=32768 l1-ways=8}' | filecheck %s --check-prefix=ZEN3
// RUN: mx-opt %s --split-input-file -p convert-matrix-to-affine | filecheck %s --check-prefix=X512
// RUN: mx-opt %s --split-input-file -p 'convert-matrix-to-affine{l1-bytes=65536 l1-ways=16}' | filecheck %s --check-prefix=WAYS16

// Row-major block-scaled codes read in line steps: a group's two tiles of
// rows at once, or one after the other where one tile's lines of a step fit
// in the L1 set they share and two tiles' do not (rows a multiple of
// l1-bytes / l1-ways apart share one set). ZEN3 lowers for 8-lane tiles
// and an 8-way 32 KiB L1 (sets 4 KiB apart, as on a Zen 3), X512 for
// 16-lane tiles and mx-opt's 12-way 48 KiB L1, WAYS16 for 16-lane tiles and
// a 16-way 64 KiB L1. Rows of 128 columns, the loads' strides setting where
// they start; the memrefs hold every row (the lowered-interpreter test runs
// these functions).

// MXFP8 rows 4 KiB apart, all in one set: 8 rows fit 8 ways, 16 rows fit
// neither 8 nor 12 ways, 16 rows fit 16 ways, 32 rows do not. One tile at a
// time: each line-step loop (both versions of the block alignment) carries
// one tile's sums.
// ZEN3-LABEL: func.func @mxfp8_rows_4k
// ZEN3: scf.if {{.*}} -> (vector<8xf32>) {
// ZEN3: scf.for {{.*}} -> (vector<8xf32>) {
// ZEN3: scf.for {{.*}} -> (vector<8xf32>) {
// ZEN3: scf.if {{.*}} -> (vector<8xf32>) {
// ZEN3-NOT: -> (vector<8xf32>, vector<8xf32>)
// ZEN3: func.return
// X512-LABEL: func.func @mxfp8_rows_4k
// X512: scf.if {{.*}} -> (vector<16xf32>, vector<16xf32>) {
// X512: scf.for {{.*}} -> (vector<16xf32>, vector<16xf32>) {
// X512: func.return
// WAYS16-LABEL: func.func @mxfp8_rows_4k
// WAYS16: scf.if {{.*}} -> (vector<16xf32>) {
// WAYS16: scf.for {{.*}} -> (vector<16xf32>) {
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
// which fit 8 ways: both tiles at once.
// ZEN3-LABEL: func.func @mxfp8_rows_2k
// ZEN3: scf.if {{.*}} -> (vector<8xf32>, vector<8xf32>) {
// ZEN3: scf.for {{.*}} -> (vector<8xf32>, vector<8xf32>) {
// ZEN3: func.return
func.func @mxfp8_rows_2k(%w: memref<32768xi8>, %s: memref<?xi8>, %x: vector<128xf32>) -> vector<16xf32> {
  %q = matrix.row_major_load %w[0] stride 2048 : memref<32768xi8> -> !matrix.matrix<16x128xi8>
  %sc = matrix.column_major_load %s[0] : memref<?xi8> -> !matrix.matrix<16x4xi8>
  %m = arbfp.scaled_convert_from f8e4m3fn %q, %sc block 32 : !matrix.matrix<16x128xi8>, !matrix.matrix<16x4xi8> to !matrix.matrix<16x128xf32>
  %y = matrix.matvec %m, %x : !matrix.matrix<16x128xf32>, vector<128xf32> -> vector<16xf32>
  func.return %y : vector<16xf32>
}

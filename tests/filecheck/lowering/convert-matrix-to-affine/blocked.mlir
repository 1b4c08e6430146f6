// RUN: mx-opt %s -p "convert-matrix-to-affine{l1-bytes=2048 l2-bytes=4096 l3-bytes=6400 blocked-min-bytes=0}" | filecheck %s
// RUN: mx-opt %s -p convert-matrix-to-affine | filecheck %s --check-prefix=DEFAULT
// RUN: mx-opt %s -p "convert-matrix-to-affine{l1-bytes=2048 l2-bytes=4096 l3-bytes=6400 blocked-min-bytes=0 panel=4x6}" | filecheck %s --check-prefix=PANEL

// The cache-blocked product. Panels of A: MR = 1 vector of 16 rows (40
// rows: two full panels and one of 8); panels of B: NR = 16 columns (40
// columns: two full panels and one of 8). With these cache sizes, f32: depth
// blocks at most 2048*3/4/((16+16)*4) = 12 deep (5 blocks of 10), rounded up
// to whole tiles of 16 rows of B: 4 blocks of KC = 16 (the last of 2); row blocks of MC = 6400/2/(50*4*16) = 1
// panel; column blocks of NC = 4096/4/((16 + 16)*16) = 2 panels. A row block of fewer rows than D
// is not contiguous in D: the partial sums wait between depth blocks in DP,
// tile after tile (1 panel of rows x 2 panels of 16 columns: 32 columns).
// D, returned, is the out-parameter.
// CHECK-LABEL: func.func @blocked
// CHECK-SAME: (%[[A:.*]]: memref<50x40xf32>, %[[B:.*]]: memref<40x50xf32>, %[[C:.*]]: memref<40x40xf32>, %[[D:.*]]: memref<40x40xf32>)
// CHECK: %[[DP:.*]] = memref.alloca() {alignment = 64 : i64} : memref<32x16xf32>
// CHECK: %[[BP:.*]] = memref.alloca() {alignment = 64 : i64} : memref<32x16xf32>
// CHECK: %[[AP:.*]] = memref.alloca() {alignment = 64 : i64} : memref<16x16xf32>
// CHECK-NOT: memref.alloca

// Row blocks, column blocks, depth blocks.
// CHECK: affine.for %[[IB:.*]] = 0 to 3 {
// CHECK-NEXT: affine.for %[[JB:.*]] = 0 to 2 {
// CHECK-NEXT: affine.for %[[KB:.*]] = 0 to 4 {

// Packing B: each full panel jr of the column block, in whole tiles of 16
// rows of the depth block (none in the last, of 2 rows): 16 vectors down
// columns of B, transposed in registers (4 rounds of 16 shuffles) into rows
// (jr - 2*jb)*16 + k of Bp.
// CHECK-NEXT: affine.for %[[JP:.*]] = affine_map<(d0) -> ((d0 * 2))>(%[[JB]]) to min affine_map<(d0) -> (((d0 * 2) + 2), 2)>(%[[JB]]) {
// CHECK-NEXT: %[[BASE:.*]] = affine.apply affine_map<(d0, d1) -> (((d0 * 16) + (d1 * -32)))> (%[[JP]], %[[JB]])
// CHECK-NEXT: affine.for %[[Q:.*]] = affine_map<(d0) -> (0)>(%[[KB]]) to min affine_map<(d0) -> (1, (((d0 * -16) + 50) floordiv 16))>(%[[KB]]) {
// CHECK-NEXT: %[[KT:.*]] = affine.apply affine_map<(d0, d1) -> (((d0 * 16) + (d1 * 16)))> (%[[KB]], %[[Q]])
// CHECK-NEXT: %[[COL:.*]] = affine.apply affine_map<(d0) -> ((d0 * 16))> (%[[JP]])
// CHECK-NEXT: %[[L0:.*]] = vector.load %[[B]][%[[COL]], %[[KT]]] : memref<40x50xf32>, vector<16xf32>
// CHECK-COUNT-15: vector.load %[[B]]
// CHECK-COUNT-64: vector.shuffle
// CHECK-NEXT: %[[ROW0:.*]] = affine.apply affine_map<(d0, d1) -> ((d0 + (d1 * 16)))> (%[[BASE]], %[[Q]])
// CHECK-NEXT: vector.store %{{.*}}, %[[BP]][%[[ROW0]], %{{.*}}] : memref<32x16xf32>, vector<16xf32>
// CHECK-COUNT-15: vector.store %{{.*}}, %[[BP]]
// CHECK-NEXT: }
// The rows after the last whole tile, element by element: only in the last
// depth block (from row 48 - 16*kb: empty for the others).
// CHECK-NEXT: affine.for %[[K:.*]] = affine_map<(d0) -> (((d0 * -16) + 48))>(%[[KB]]) to min affine_map<(d0) -> (16, ((d0 * -16) + 50))>(%[[KB]]) {
// CHECK-NEXT: %[[KA:.*]] = affine.apply affine_map<(d0, d1) -> (((d0 * 16) + d1))> (%[[KB]], %[[K]])
// CHECK-NEXT: %[[BROW:.*]] = affine.apply affine_map<(d0, d1) -> ((d0 + d1))> (%[[BASE]], %[[K]])
// CHECK-NEXT: %[[COL1:.*]] = affine.apply affine_map<(d0) -> ((d0 * 16))> (%[[JP]])
// CHECK-NEXT: %[[X:.*]] = memref.load %[[B]][%[[COL1]], %[[KA]]] : memref<40x50xf32>
// CHECK-NEXT: memref.store %[[X]], %[[BP]][%[[BROW]], %{{.*}}] : memref<32x16xf32>
// CHECK-COUNT-15: memref.store %{{.*}}, %[[BP]][%[[BROW]], %{{.*}}] : memref<32x16xf32>
// The last, 8-column panel, element by element, in the last column block only.
// CHECK: %[[LASTJB:.*]] = arith.cmpi eq, %[[JB]], %{{.*}} : index
// CHECK-NEXT: scf.if %[[LASTJB]] {
// CHECK-COUNT-8: memref.store %{{.*}}, %[[BP]][%{{.*}}, %{{.*}}] : memref<32x16xf32>
// CHECK-NOT: memref.store

// Each full panel of rows of the row block: packing Ap (k of the depth
// block -> row k, one vector), then the micro-kernel against each full
// panel of Bp of the column block.
// CHECK: affine.for %[[IR:.*]] = affine_map<(d0) -> (d0)>(%[[IB]]) to min affine_map<(d0) -> ((d0 + 1), 2)>(%[[IB]]) {
// CHECK-NEXT: affine.for %[[K2:.*]] = affine_map<(d0) -> (0)>(%[[KB]]) to min affine_map<(d0) -> (16, ((d0 * -16) + 50))>(%[[KB]]) {
// CHECK-NEXT: %[[KA2:.*]] = affine.apply affine_map<(d0, d1) -> (((d0 * 16) + d1))> (%[[KB]], %[[K2]])
// The vector of A's column 8 columns on is prefetched (at most the last).
// CHECK-NEXT: %[[AHEAD:.*]] = affine.min affine_map<(d0, d1) -> ((((d0 * 16) + d1) + 8), 49)> (%[[KB]], %[[K2]])
// CHECK-NEXT: %[[R0:.*]] = affine.apply affine_map<(d0) -> ((d0 * 16))> (%[[IR]])
// CHECK-NEXT: memref.prefetch %[[A]][%[[AHEAD]], %[[R0]]], read, locality<3>, data : memref<50x40xf32>
// CHECK-NEXT: %[[V0:.*]] = vector.load %[[A]][%[[KA2]], %[[R0]]] : memref<50x40xf32>, vector<16xf32>
// CHECK-NEXT: vector.store %[[V0]], %[[AP]][%[[K2]], %{{.*}}] : memref<16x16xf32>, vector<16xf32>
// CHECK-NEXT: }
// CHECK-NEXT: affine.for %[[JR:.*]] = affine_map<(d0) -> ((d0 * 2))>(%[[JB]]) to min affine_map<(d0) -> (((d0 * 2) + 2), 2)>(%[[JB]]) {
// Tile (ir, jr) of block (ib, jb) starts at column ((ir - ib)*2 + jr - 2*jb)*16 of DP.
// CHECK: %[[TILE:.*]] = affine.apply affine_map<(d0, d1, d2, d3) -> (((((d0 * 32) + (d2 * -32)) + (d1 * 16)) + (d3 * -32)))> (%[[IR]], %[[JR]], %[[IB]], %[[JB]])
// The next tile's 16 vectors (16 columns on, at most DP's last) are
// prefetched for writing before the sums of this one are loaded.
// CHECK: %[[NEXT:.*]] = affine.min affine_map<(d0) -> ((d0 + 16), 31)> (%{{.*}})
// CHECK-NEXT: memref.prefetch %[[DP]][%[[NEXT]], %{{.*}}], write, locality<3>, data : memref<32x16xf32>
// CHECK-COUNT-15: memref.prefetch %[[DP]]
// The first depth block starts the 1 x 16 sums from -0, the others load them.
// CHECK: %[[FIRST:.*]] = arith.cmpi eq, %[[KB]], %{{.*}} : index
// CHECK-NEXT: {{^ *}}%[[S0:[0-9]+]],
// CHECK-SAME: = scf.if %[[FIRST]] -> (vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>) {
// CHECK: arith.constant -0.000000e+00 : f32
// CHECK: } else {
// CHECK-NEXT: vector.load %[[DP]]
// CHECK: }
// The micro-kernel: k over the depth block; per k one vector of Ap, sixteen
// broadcasts of Bp (each feeding one multiply: x86 folds it into the
// multiply's memory operand), a separate mulf and addf per sum (no contract).
// CHECK-NEXT: affine.for %[[KK:[0-9]+]] = affine_map<(d0) -> (0)>(%[[KB]]) to min affine_map<(d0) -> (16, ((d0 * -16) + 50))>(%[[KB]])
// CHECK-SAME: iter_args(%[[ACC0:[0-9]+]] = %[[S0]],
// CHECK-NEXT: %[[A0:.*]] = vector.load %[[AP]][%[[KK]], %{{.*}}] : memref<16x16xf32>, vector<16xf32>
// CHECK-NEXT: %[[BR:.*]] = affine.apply affine_map<(d0, d1) -> ((d0 + d1))> (%{{.*}}, %[[KK]])
// CHECK-NEXT: %[[B0:.*]] = memref.load %[[BP]][%[[BR]], %{{.*}}] : memref<32x16xf32>
// CHECK-NEXT: %[[BB0:.*]] = vector.broadcast %[[B0]] : f32 to vector<16xf32>
// CHECK-NEXT: %[[P0:.*]] = arith.mulf %[[A0]], %[[BB0]] : vector<16xf32>
// CHECK-NEXT: %{{.*}} = arith.addf %[[ACC0]], %[[P0]] : vector<16xf32>
// CHECK-COUNT-15: arith.mulf %[[A0]], %{{.*}} : vector<16xf32>
// CHECK-NEXT: arith.addf
// CHECK-NEXT: affine.yield
// The last depth block adds the accumulator operand and stores the sums in
// D, the others store them in DP.
// CHECK: %[[LAST:.*]] = arith.cmpi eq, %[[KB]], %{{.*}} : index
// CHECK-NEXT: scf.if %[[LAST]] {
// CHECK-NEXT: %[[C0:.*]] = vector.load %[[C]]
// CHECK-NEXT: %[[T0:.*]] = arith.addf %{{.*}}, %[[C0]] : vector<16xf32>
// CHECK: vector.store %[[T0]], %[[D]]
// CHECK: } else {
// CHECK-NEXT: vector.store %{{.*}}, %[[DP]]
// CHECK-NOT: math.fma
// The last column panel (8 columns: 8 sums) in the last column block.
// CHECK: scf.if %{{.*}} {
// CHECK: scf.if %{{.*}} -> (vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>) {

// The last panel of rows (8 rows: one vector of 8) in the last row block:
// packed, then against each panel of Bp (16 sums, then 8).
// CHECK: %[[LASTIB:.*]] = arith.cmpi eq, %[[IB]], %{{.*}} : index
// CHECK-NEXT: scf.if %[[LASTIB]] {
// CHECK: vector.store %{{.*}}, %[[AP]][%{{.*}}, %{{.*}}] : memref<16x16xf32>, vector<8xf32>
// CHECK-NOT: vector.store %{{.*}}, %[[AP]]
// CHECK: scf.if %{{.*}} -> (vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>) {
// CHECK: scf.if %{{.*}} -> (vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>) {

// With `panel=4x6` (the JIT's on Intel cores with AVX-512): panels of A of
// 4 vectors (64 rows: Ap is 16x64), of B 6 columns (Bp 32x6); per k, four
// vectors of Ap and six broadcasts of Bp, each feeding four multiplies.
// PANEL-LABEL: func.func @blocked
// PANEL: memref.alloca() {alignment = 64 : i64} : memref<32x6xf32>
// PANEL-NEXT: memref.alloca() {alignment = 64 : i64} : memref<16x64xf32>
// PANEL: iter_args(%[[S0:[0-9]+]] = %{{[0-9]+}}, %[[S1:[0-9]+]] = %{{[0-9]+}}, %[[S2:[0-9]+]] = %{{[0-9]+}}, %[[S3:[0-9]+]] = %{{[0-9]+}},
// PANEL-NEXT: %[[A0:.*]] = vector.load %[[AP:.*]][%{{.*}}, %{{.*}}] : memref<16x64xf32>, vector<16xf32>
// PANEL-NEXT: %[[A1:.*]] = vector.load %[[AP]][%{{.*}}, %{{.*}}] : memref<16x64xf32>, vector<16xf32>
// PANEL-NEXT: %[[A2:.*]] = vector.load %[[AP]][%{{.*}}, %{{.*}}] : memref<16x64xf32>, vector<16xf32>
// PANEL-NEXT: %[[A3:.*]] = vector.load %[[AP]][%{{.*}}, %{{.*}}] : memref<16x64xf32>, vector<16xf32>
// PANEL-NEXT: affine.apply
// PANEL-NEXT: %[[B0:.*]] = memref.load %{{.*}} : memref<32x6xf32>
// PANEL-NEXT: %[[BB0:.*]] = vector.broadcast %[[B0]] : f32 to vector<16xf32>
// PANEL-NEXT: %[[P0:.*]] = arith.mulf %[[A0]], %[[BB0]] : vector<16xf32>
// PANEL-NEXT: arith.addf %[[S0]], %[[P0]] : vector<16xf32>
// PANEL-NEXT: %[[P1:.*]] = arith.mulf %[[A1]], %[[BB0]] : vector<16xf32>
// PANEL-NEXT: arith.addf %[[S1]], %[[P1]] : vector<16xf32>
// PANEL-NEXT: %[[P2:.*]] = arith.mulf %[[A2]], %[[BB0]] : vector<16xf32>
// PANEL-NEXT: arith.addf %[[S2]], %[[P2]] : vector<16xf32>
// PANEL-NEXT: %[[P3:.*]] = arith.mulf %[[A3]], %[[BB0]] : vector<16xf32>
// PANEL-NEXT: arith.addf %[[S3]], %[[P3]] : vector<16xf32>
// PANEL-NEXT: memref.load %{{.*}} : memref<32x6xf32>
// PANEL-COUNT-5: vector.broadcast
// PANEL-NOT: vector.broadcast
// PANEL: affine.yield

// The default cache sizes leave this small product to the register-blocked
// kernel: no packing, no depth blocks.
// DEFAULT-LABEL: func.func @blocked
// DEFAULT-NOT: scf.if
// DEFAULT-NOT: memref<16x16xf32>
func.func @blocked(%a: !matrix.matrix<40x50xf32>, %b: !matrix.matrix<50x40xf32>, %c: !matrix.matrix<40x40xf32>) -> !matrix.matrix<40x40xf32> {
  %r = matrix.matmul_add %a, %b, %c : !matrix.matrix<40x50xf32>, !matrix.matrix<50x40xf32>, !matrix.matrix<40x40xf32> -> !matrix.matrix<40x40xf32>
  func.return %r : !matrix.matrix<40x40xf32>
}

// With contract, one math.fma per step.
// CHECK-LABEL: func.func @contracted
// One row block holds all of D's rows: the partial sums wait in D, where the
// next tile's are prefetched (16 columns on, at most the last).
// CHECK: %[[NEXTC:.*]] = affine.min affine_map<(d0) -> ((d0 + 16), 39)> (%{{.*}})
// CHECK-NEXT: memref.prefetch %{{.*}}[%[[NEXTC]], %{{.*}}], write, locality<3>, data : memref<40x8xf64>
// CHECK: affine.for %{{.*}} iter_args
// CHECK: math.fma %{{.*}}, %{{.*}}, %{{.*}} fastmath<contract> : vector<8xf64>
// CHECK-NOT: arith.mulf
// CHECK: affine.yield
func.func @contracted(%a: !matrix.matrix<8x40xf64>, %b: !matrix.matrix<40x40xf64>) -> !matrix.matrix<8x40xf64> {
  %r = matrix.matmul %a, %b fastmath<contract> : !matrix.matrix<8x40xf64>, !matrix.matrix<40x40xf64> -> !matrix.matrix<8x40xf64>
  func.return %r : !matrix.matrix<8x40xf64>
}

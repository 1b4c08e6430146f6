// RUN: mx-opt %s -p "convert-matrix-to-affine{l1-bytes=2048 l2-bytes=16384 l3-bytes=8192 blocked-min-bytes=0}" | filecheck %s
// RUN: mx-opt %s -p convert-matrix-to-affine | filecheck %s --check-prefix=DEFAULT

// The cache-blocked product. With these cache sizes, f32: depth blocks of
// KC = 2048/2/(12*4) = 21, row blocks of MC = 3 panels of MR = 32 rows,
// column blocks of NC = 4 panels of NR = 12 columns. 40 rows: one full row
// panel and one of 8; 30 columns: two full column panels and one of 6.
// CHECK-LABEL: func.func @blocked
// CHECK-SAME: (%[[A:.*]]: memref<50x40xf32>, %[[B:.*]]: memref<30x50xf32>, %[[C:.*]]: memref<30x40xf32>, %{{.*}}: memref<30x40xf32>)
// CHECK: %[[BP:.*]] = memref.alloca() {alignment = 64 : i64} : memref<150x12xf32>
// CHECK: %[[AP:.*]] = memref.alloca() {alignment = 64 : i64} : memref<100x32xf32>
// CHECK: %[[D:.*]] = memref.alloca() {alignment = 64 : i64} : memref<30x40xf32>

// Packing A: panel i, column k -> row i*50 + k of Ap, two vectors; the last
// panel (rows 32..39) is padded with -0.
// CHECK: affine.for %[[I:.*]] = 0 to 1 {
// CHECK: affine.for %[[K:.*]] = 0 to 50 {
// CHECK: %[[AROW:.*]] = affine.apply affine_map<(d0, d1) -> (((d0 * 50) + d1))> (%[[I]], %[[K]])
// CHECK: %[[V0:.*]] = vector.load %[[A]][%[[K]], %{{.*}}] : memref<50x40xf32>, vector<16xf32>
// CHECK: vector.store %[[V0]], %[[AP]][%[[AROW]], %{{.*}}] : memref<100x32xf32>, vector<16xf32>
// CHECK: vector.load %[[A]][%[[K]], %{{.*}}] : memref<50x40xf32>, vector<16xf32>
// CHECK: affine.for %[[K2:.*]] = 0 to 50 {
// CHECK: vector.load %[[A]][%[[K2]], %{{.*}}] : memref<50x40xf32>, vector<8xf32>
// CHECK: %[[PAD:.*]] = arith.constant -0.000000e+00 : f32
// CHECK: vector.broadcast %[[PAD]] : f32 to vector<16xf32>

// Packing B: panel j, row k -> row j*50 + k of Bp, 12 columns.
// CHECK: affine.for %[[J:.*]] = 0 to 2 {
// CHECK: affine.for %[[K3:.*]] = 0 to 50 {
// CHECK: %[[BROW:.*]] = affine.apply affine_map<(d0, d1) -> (((d0 * 50) + d1))> (%[[J]], %[[K3]])
// CHECK: %[[COL:.*]] = affine.apply affine_map<(d0) -> ((d0 * 12))> (%[[J]])
// CHECK: %[[X:.*]] = memref.load %[[B]][%[[COL]], %[[K3]]] : memref<30x50xf32>
// CHECK: memref.store %[[X]], %[[BP]][%[[BROW]], %{{.*}}] : memref<150x12xf32>

// The nest over the full panels: column blocks, depth blocks, row blocks,
// column panels of the block, row panels of the block.
// CHECK: affine.for %[[JB:.*]] = 0 to 1 {
// CHECK-NEXT: affine.for %[[KB:.*]] = 0 to 3 {
// CHECK-NEXT: affine.for %[[IB:.*]] = 0 to 1 {
// CHECK-NEXT: affine.for %[[JR:.*]] = affine_map<(d0) -> ((d0 * 4))>(%[[JB]]) to min affine_map<(d0) -> (((d0 * 4) + 4), 2)>(%[[JB]]) {
// CHECK-NEXT: affine.for %[[IR:.*]] = affine_map<(d0) -> ((d0 * 3))>(%[[IB]]) to min affine_map<(d0) -> (((d0 * 3) + 3), 1)>(%[[IB]]) {
// The first depth block starts the 2 x 12 sums from -0, the others load them.
// CHECK: %[[FIRST:.*]] = arith.cmpi eq, %[[KB]], %{{.*}} : index
// CHECK-NEXT: {{^ *}}%[[S0:[0-9]+]],
// CHECK-SAME: = scf.if %[[FIRST]]
// CHECK-SAME: -> (vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>) {
// CHECK: arith.constant -0.000000e+00 : f32
// CHECK: } else {
// CHECK: vector.load %[[D]]
// CHECK: }
// The micro-kernel: k over the depth block; per k two vectors of Ap, twelve
// broadcasts of Bp, a separate mulf and addf per sum (no contract).
// CHECK-NEXT: affine.for %[[KK:[0-9]+]] = affine_map<(d0) -> ((d0 * 21))>(%[[KB]]) to min affine_map<(d0) -> (((d0 * 21) + 21), 50)>(%[[KB]])
// CHECK-SAME: iter_args(%[[ACC0:[0-9]+]] = %[[S0]],
// CHECK-NEXT: %[[AR:.*]] = affine.apply affine_map<(d0, d1) -> (((d0 * 50) + d1))> (%[[IR]], %[[KK]])
// CHECK-NEXT: %[[BR:.*]] = affine.apply affine_map<(d0, d1) -> (((d0 * 50) + d1))> (%[[JR]], %[[KK]])
// CHECK: %[[A0:.*]] = vector.load %[[AP]][%[[AR]], %{{.*}}] : memref<100x32xf32>, vector<16xf32>
// CHECK: %[[A1:.*]] = vector.load %[[AP]][%[[AR]], %{{.*}}] : memref<100x32xf32>, vector<16xf32>
// CHECK: %[[B0:.*]] = memref.load %[[BP]][%[[BR]], %{{.*}}] : memref<150x12xf32>
// CHECK-NEXT: %[[BB0:.*]] = vector.broadcast %[[B0]] : f32 to vector<16xf32>
// CHECK-NEXT: %[[P0:.*]] = arith.mulf %[[A0]], %[[BB0]] : vector<16xf32>
// CHECK-NEXT: %{{.*}} = arith.addf %[[ACC0]], %[[P0]] : vector<16xf32>
// The last depth block adds the accumulator operand, then the sums are stored.
// CHECK: %[[LAST:.*]] = arith.cmpi eq, %[[KB]], %{{.*}} : index
// CHECK-NEXT: {{^ *}}%[[T0:[0-9]+]],
// CHECK-SAME: = scf.if %[[LAST]]
// CHECK-NEXT: %[[C0:.*]] = vector.load %[[C]]
// CHECK-NEXT: arith.addf %{{.*}}, %[[C0]] : vector<16xf32>
// CHECK: vector.store %[[T0]], %[[D]]
// CHECK-NOT: math.fma

// The last column panel (6 columns), then the last row panel (8 rows).
// CHECK: affine.for %{{.*}} = 0 to 3 {
// CHECK: scf.if %{{.*}} -> (vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>) {
// CHECK: scf.if %{{.*}} -> (vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>) {
// CHECK: affine.for %{{.*}} = 0 to 3 {
// CHECK: scf.if %{{.*}} -> (vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>) {

// The default cache sizes leave this small product to the register-blocked
// kernel: no packing, no depth blocks.
// DEFAULT-LABEL: func.func @blocked
// DEFAULT-NOT: scf.if
// DEFAULT-NOT: memref<100x32xf32>
func.func @blocked(%a: !matrix.matrix<40x50xf32>, %b: !matrix.matrix<50x30xf32>, %c: !matrix.matrix<40x30xf32>) -> !matrix.matrix<40x30xf32> {
  %r = matrix.matmul_add %a, %b, %c : !matrix.matrix<40x50xf32>, !matrix.matrix<50x30xf32>, !matrix.matrix<40x30xf32> -> !matrix.matrix<40x30xf32>
  func.return %r : !matrix.matrix<40x30xf32>
}

// With contract, one math.fma per step.
// CHECK-LABEL: func.func @contracted
// CHECK: affine.for %{{.*}} iter_args
// CHECK: math.fma %{{.*}}, %{{.*}}, %{{.*}} {fastmath = #arith.fastmath<contract>} : vector<8xf64>
// CHECK-NOT: arith.mulf
// CHECK: affine.yield
func.func @contracted(%a: !matrix.matrix<16x40xf64>, %b: !matrix.matrix<40x12xf64>) -> !matrix.matrix<16x12xf64> {
  %r = matrix.matmul %a, %b fastmath<contract> : !matrix.matrix<16x40xf64>, !matrix.matrix<40x12xf64> -> !matrix.matrix<16x12xf64>
  func.return %r : !matrix.matrix<16x12xf64>
}

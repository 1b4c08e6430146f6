// RUN: mx-opt %s -p convert-matrix-to-affine | filecheck %s
// RUN: mx-opt %s -p "convert-matrix-to-affine{vector-bits=256}" | filecheck %s --check-prefix=AVX2

// Products on vectors along the rows of a column (the default target has
// 512-bit vectors). Without contract each element is still summed in
// docs/matrix-dialect.md's order: acc = a[r][0]*b[0][c] (a mulf), then acc + a[r][k]*b[k][c]
// for k = 1..K-1 (separate mulf and addf, no flags), lanes being rows.
// CHECK-LABEL: func.func @matmul
// CHECK-SAME: (%[[A:.*]]: memref<3x4xf32>, %[[B:.*]]: memref<2x3xf32>, %[[OUT:.*]]: memref<2x4xf32>)
// CHECK-NOT: memref.alloca
// CHECK: %[[A0:.*]] = vector.load %[[A]][%{{.*}}, %{{.*}}] : memref<3x4xf32>, vector<4xf32>
// CHECK: %[[B00:.*]] = affine.load %[[B]][0, 0]
// CHECK-NEXT: %[[S00:.*]] = vector.broadcast %[[B00]] : f32 to vector<4xf32>
// CHECK: %[[B01:.*]] = affine.load %[[B]][1, 0]
// CHECK-NEXT: %[[S01:.*]] = vector.broadcast %[[B01]] : f32 to vector<4xf32>
// CHECK-NEXT: %[[P0:.*]] = arith.mulf %[[A0]], %[[S00]] : vector<4xf32>
// CHECK-NEXT: %[[P1:.*]] = arith.mulf %[[A0]], %[[S01]] : vector<4xf32>
// CHECK-NEXT: %[[SUM0:[^,]*]], %[[SUM1:.*]] = affine.for %[[K:.*]] = 1 to 3 iter_args(%[[ACC0:.*]] = %[[P0]], %[[ACC1:.*]] = %[[P1]]) -> (vector<4xf32>, vector<4xf32>) {
// CHECK: %[[AK:.*]] = vector.load %[[A]][%[[K]], %{{.*}}] : memref<3x4xf32>, vector<4xf32>
// CHECK: %[[BK0:.*]] = affine.load %[[B]][0, %[[K]]]
// CHECK: %[[BK1:.*]] = affine.load %[[B]][1, %[[K]]]
// CHECK-NEXT: %[[SK1:.*]] = vector.broadcast %[[BK1]]
// CHECK-NEXT: %[[PK0:.*]] = arith.mulf %[[AK]], %{{.*}} : vector<4xf32>
// CHECK-NEXT: %[[N0:.*]] = arith.addf %[[ACC0]], %[[PK0]] : vector<4xf32>
// CHECK-NEXT: %[[PK1:.*]] = arith.mulf %[[AK]], %[[SK1]] : vector<4xf32>
// CHECK-NEXT: %[[N1:.*]] = arith.addf %[[ACC1]], %[[PK1]] : vector<4xf32>
// CHECK-NEXT: affine.yield %[[N0]], %[[N1]]
// CHECK: vector.store %[[SUM0]], %[[OUT]]
// CHECK: vector.store %[[SUM1]], %[[OUT]]
// CHECK-NOT: math.fma
// CHECK-NOT: fastmath
// CHECK: func.return
func.func @matmul(%a: !matrix.matrix<4x3xf32>, %b: !matrix.matrix<3x2xf32>) -> !matrix.matrix<4x2xf32> {
  %c = matrix.matmul %a, %b : !matrix.matrix<4x3xf32>, !matrix.matrix<3x2xf32> -> !matrix.matrix<4x2xf32>
  return %c : !matrix.matrix<4x2xf32>
}

// With contract each step is one math.fma on vectors; matmul_add adds the
// accumulator last. The loads are read in place (no copy), the result is
// copied to memory column by column.
// CHECK-LABEL: func.func @matmul_add_contract
// CHECK: %[[P0:.*]] = arith.mulf %{{.*}}, %{{.*}} fastmath<contract> : vector<8xf64>
// CHECK: affine.for %{{.*}} = 1 to 2 iter_args(%[[ACC:.*]] = %[[P0]], %{{.*}} = %{{.*}}) -> (vector<8xf64>, vector<8xf64>) {
// CHECK: %[[F:.*]] = math.fma %{{.*}}, %{{.*}}, %[[ACC]] fastmath<contract> : vector<8xf64>
// CHECK: %[[C:.*]] = vector.load %{{.*}} : memref<?xf64>, vector<8xf64>
// CHECK-NEXT: arith.addf %{{.*}}, %[[C]] fastmath<contract> : vector<8xf64>
// CHECK: affine.for %[[COL:.*]] = 0 to 2 {
// CHECK: vector.load %{{.*}}[%[[COL]], %{{.*}}] : memref<2x8xf64>, vector<8xf64>
// CHECK: vector.store %{{.*}}, %{{.*}}[%{{.*}}] : memref<?xf64>, vector<8xf64>
func.func @matmul_add_contract(%mem: memref<?xf64>, %off: index) {
  %a = matrix.column_major_load %mem[%off] : memref<?xf64> -> !matrix.matrix<8x2xf64>
  %b = matrix.column_major_load %mem[0] : memref<?xf64> -> !matrix.matrix<2x2xf64>
  %c = matrix.column_major_load %mem[4] : memref<?xf64> -> !matrix.matrix<8x2xf64>
  %d = matrix.matmul_add %a, %b, %c fastmath<contract> : !matrix.matrix<8x2xf64>, !matrix.matrix<2x2xf64>, !matrix.matrix<8x2xf64> -> !matrix.matrix<8x2xf64>
  matrix.column_major_store %d, %mem[%off] : !matrix.matrix<8x2xf64>, memref<?xf64>
  return
}

// Register blocks: one 512-bit vector of 16 rows by 20 columns (20 vector
// accumulators), for two blocks of rows and two of columns; then the 8
// remaining rows by 20 columns. With 256-bit vectors: five blocks of 8 rows.
// CHECK-LABEL: func.func @blocks
// CHECK: affine.for %{{.*}} = 0 to 2 {
// CHECK: affine.for %{{.*}} = 0 to 2 {
// CHECK: affine.for %{{.*}} = 1 to 40 iter_args(%{{.*}}) -> (vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>) {
// CHECK: affine.for %{{.*}} = 0 to 2 {
// CHECK: affine.for %{{.*}} = 1 to 40 iter_args(%{{.*}}) -> (vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>) {
// AVX2-LABEL: func.func @blocks
// AVX2: affine.for %{{.*}} = 0 to 5 {
// AVX2: affine.for %{{.*}} = 0 to 2 {
// AVX2: affine.for %{{.*}} = 1 to 40 iter_args(%{{.*}}) -> (vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>) {
func.func @blocks(%a: !matrix.matrix<40x40xf32>, %b: !matrix.matrix<40x40xf32>) -> !matrix.matrix<40x40xf32> {
  %c = matrix.matmul %a, %b : !matrix.matrix<40x40xf32>, !matrix.matrix<40x40xf32> -> !matrix.matrix<40x40xf32>
  return %c : !matrix.matrix<40x40xf32>
}

// Elementwise chains: one loop over the columns, one vector per block of
// rows (16, then the 4 left), no intermediate buffer and no scalar loop.
// CHECK-LABEL: func.func @axpy
// CHECK-NOT: memref.alloca
// CHECK: affine.for %[[COL:.*]] = 0 to 3 {
// CHECK-NEXT: %[[S:.*]] = vector.broadcast %{{.*}} : f32 to vector<16xf32>
// CHECK: %[[X:.*]] = vector.load %{{.*}}[%[[COL]], %{{.*}}] : memref<3x20xf32>, vector<16xf32>
// CHECK-NEXT: %[[M:.*]] = arith.mulf %[[S]], %[[X]] : vector<16xf32>
// CHECK: %[[Y:.*]] = vector.load
// CHECK-NEXT: %[[R:.*]] = arith.addf %[[M]], %[[Y]] : vector<16xf32>
// CHECK: vector.store %[[R]]
// CHECK: arith.addf %{{.*}}, %{{.*}} : vector<4xf32>
// CHECK-NOT: affine.for
// CHECK: func.return
func.func @axpy(%s: f32, %a: !matrix.matrix<20x3xf32>, %b: !matrix.matrix<20x3xf32>) -> !matrix.matrix<20x3xf32> {
  %ss = matrix.splat %s : !matrix.matrix<20x3xf32>
  %m = matrix.mul %ss, %a : !matrix.matrix<20x3xf32>
  %r = matrix.add %m, %b : !matrix.matrix<20x3xf32>
  return %r : !matrix.matrix<20x3xf32>
}

// matvec: the product by a one-column matrix; %x and the result go through
// a one-column buffer (one: %x is read for the last time before the result is
// written), the whole column of 64 rows is one block.
// CHECK-LABEL: func.func @matvec
// CHECK: %[[X:.*]] = memref.alloca() {alignment = 64 : i64} : memref<1x64xf32>
// CHECK-NOT: memref.alloca
// CHECK: vector.store %{{.*}}, %[[X]]
// CHECK: affine.for %{{.*}} = 1 to 64 iter_args(%{{.*}}) -> (vector<64xf32>) {
// CHECK: arith.mulf %{{.*}} : vector<64xf32>
// CHECK-NEXT: arith.addf %{{.*}} : vector<64xf32>
// CHECK: vector.store %{{.*}}, %[[X]]
// CHECK: %[[R:.*]] = vector.load %[[X]]{{.*}} vector<64xf32>
// CHECK: func.return %[[R]]
func.func @matvec(%m: !matrix.matrix<64x64xf32>, %x: vector<64xf32>) -> vector<64xf32> {
  %y = matrix.matvec %m, %x : !matrix.matrix<64x64xf32>, vector<64xf32> -> vector<64xf32>
  return %y : vector<64xf32>
}

// f16 products use vector code too (each step still rounds to f16).
// CHECK-LABEL: func.func @half
// CHECK: vector.load %{{.*}} : memref<4x4xf16>, vector<4xf16>
// CHECK: func.return
func.func @half(%a: !matrix.matrix<4x4xf16>, %b: !matrix.matrix<4x4xf16>) -> !matrix.matrix<4x4xf16> {
  %c = matrix.matmul %a, %b : !matrix.matrix<4x4xf16>, !matrix.matrix<4x4xf16> -> !matrix.matrix<4x4xf16>
  return %c : !matrix.matrix<4x4xf16>
}

// An f16 product under contract sums in f32: B is widened once, by vector
// conversions into an f32 temporary, whose elements are then broadcast
// (AVX-512: a memory operand of each FMA); A is widened as it is read; one
// rounding to f16 after the accumulator is added.
// CHECK-LABEL: func.func @half_contract
// CHECK-SAME: (%[[A:.*]]: memref<8x8xf16>, %[[B:.*]]: memref<8x8xf16>, %[[C:.*]]: memref<8x8xf16>, %{{.*}}: memref<8x8xf16>)
// CHECK: %[[WB:.*]] = memref.alloca() {{.*}} : memref<8x8xf32>
// CHECK: affine.for %[[J:.*]] = 0 to 8 {
// CHECK: %[[BJ:.*]] = vector.load %[[B]][%[[J]], %{{.*}}] : memref<8x8xf16>, vector<8xf16>
// CHECK-NEXT: %[[WBJ:.*]] = arith.extf %[[BJ]] : vector<8xf16> to vector<8xf32>
// CHECK: vector.store %[[WBJ]], %[[WB]][%[[J]], %{{.*}}] : memref<8x8xf32>, vector<8xf32>
// CHECK: %[[A0:.*]] = vector.load %[[A]]{{.*}} : memref<8x8xf16>, vector<8xf16>
// CHECK-NEXT: arith.extf %[[A0]] : vector<8xf16> to vector<8xf32>
// CHECK-NEXT: %[[B00:.*]] = affine.load %[[WB]][0, 0] : memref<8x8xf32>
// CHECK-NEXT: vector.broadcast %[[B00]] : f32 to vector<8xf32>
// CHECK: affine.for %[[K:.*]] = 1 to 8 iter_args
// CHECK: affine.load %[[WB]][0, %[[K]]] : memref<8x8xf32>
// CHECK: math.fma {{.*}} : vector<8xf32>
// CHECK: affine.yield
// CHECK: arith.extf %{{.*}} : vector<8xf16> to vector<8xf32>
// CHECK-NEXT: arith.addf %{{.*}} fastmath<contract> : vector<8xf32>
// CHECK-NEXT: arith.truncf %{{.*}} : vector<8xf32> to vector<8xf16>
func.func @half_contract(%a: !matrix.matrix<8x8xf16>, %b: !matrix.matrix<8x8xf16>, %c: !matrix.matrix<8x8xf16>) -> !matrix.matrix<8x8xf16> {
  %0 = matrix.matmul_add %a, %b, %c fastmath<contract> : !matrix.matrix<8x8xf16>, !matrix.matrix<8x8xf16>, !matrix.matrix<8x8xf16> -> !matrix.matrix<8x8xf16>
  func.return %0 : !matrix.matrix<8x8xf16>
}

// A row-major factor of a product is copied into a column-major buffer in
// 4x4 tiles: four rows loaded as vectors, transposed in registers by two
// rounds of interleaving shuffles, stored as four columns. One tile is
// copied without a loop (a loop of one trip is left to no later pass).
// CHECK-LABEL: func.func @row_major_factor
// CHECK: %[[BUF:.*]] = memref.alloca() {alignment = 64 : i64} : memref<4x4xf32>
// CHECK-NOT: affine.for
// CHECK: %[[R0:.*]] = vector.load %{{.*}} : memref<?xf32>, vector<4xf32>
// CHECK: %[[R1:.*]] = vector.load %{{.*}} : memref<?xf32>, vector<4xf32>
// CHECK: %[[R2:.*]] = vector.load %{{.*}} : memref<?xf32>, vector<4xf32>
// CHECK: %[[R3:.*]] = vector.load %{{.*}} : memref<?xf32>, vector<4xf32>
// CHECK-NEXT: %[[L0:.*]] = vector.shuffle %[[R0]], %[[R2]] [0, 4, 1, 5]
// CHECK-NEXT: %[[H0:.*]] = vector.shuffle %[[R0]], %[[R2]] [2, 6, 3, 7]
// CHECK-NEXT: %[[L1:.*]] = vector.shuffle %[[R1]], %[[R3]] [0, 4, 1, 5]
// CHECK-NEXT: %[[H1:.*]] = vector.shuffle %[[R1]], %[[R3]] [2, 6, 3, 7]
// CHECK-NEXT: %[[C0:.*]] = vector.shuffle %[[L0]], %[[L1]] [0, 4, 1, 5]
// CHECK-NEXT: %[[C1:.*]] = vector.shuffle %[[L0]], %[[L1]] [2, 6, 3, 7]
// CHECK-NEXT: %[[C2:.*]] = vector.shuffle %[[H0]], %[[H1]] [0, 4, 1, 5]
// CHECK-NEXT: %[[C3:.*]] = vector.shuffle %[[H0]], %[[H1]] [2, 6, 3, 7]
// CHECK: vector.store %[[C0]], %[[BUF]]
// CHECK: vector.store %[[C1]], %[[BUF]]
// CHECK: vector.store %[[C2]], %[[BUF]]
// CHECK: vector.store %[[C3]], %[[BUF]]
// CHECK: vector.load %[[BUF]]
func.func @row_major_factor(%mem: memref<?xf32>) -> !matrix.matrix<4x4xf32> {
  %a = matrix.row_major_load %mem[0] : memref<?xf32> -> !matrix.matrix<4x4xf32>
  %b = matrix.column_major_load %mem[16] : memref<?xf32> -> !matrix.matrix<4x4xf32>
  %c = matrix.matmul %a, %b : !matrix.matrix<4x4xf32>, !matrix.matrix<4x4xf32> -> !matrix.matrix<4x4xf32>
  return %c : !matrix.matrix<4x4xf32>
}

// Two tiles down the rows: a loop of two trips (one tile across the columns:
// no inner loop).
// CHECK-LABEL: func.func @row_major_factor_8x4
// CHECK: memref.alloca() {alignment = 64 : i64} : memref<4x8xf32>
// CHECK-NEXT: affine.for %[[TILE:.*]] = 0 to 2 {
// CHECK-NEXT: %[[R0:.*]] = arith.muli %[[TILE]], %{{.*}} : index
// CHECK-NOT: affine.for
// CHECK: vector.shuffle
// CHECK: affine.yield
func.func @row_major_factor_8x4(%mem: memref<?xf32>) -> !matrix.matrix<8x4xf32> {
  %a = matrix.row_major_load %mem[0] : memref<?xf32> -> !matrix.matrix<8x4xf32>
  %b = matrix.column_major_load %mem[32] : memref<?xf32> -> !matrix.matrix<4x4xf32>
  %c = matrix.matmul %a, %b : !matrix.matrix<8x4xf32>, !matrix.matrix<4x4xf32> -> !matrix.matrix<8x4xf32>
  return %c : !matrix.matrix<8x4xf32>
}

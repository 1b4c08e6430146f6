// RUN: mx-opt %s -p "convert-matrix-to-affine{vector-bits=128 blocked-min-bytes=0}" | filecheck %s

// A column-major matrix: y starts at -0, then each step of 8 columns updates
// every vector of y in k order (8 contiguous column streams), the last 2
// columns in a narrower step.
// CHECK-LABEL: func.func @matvec_columns
// CHECK: %[[Y:.*]] = memref.alloca() {alignment = 64 : i64} : memref<1x12xf32>
// CHECK: %[[X:.*]] = memref.alloca() {alignment = 64 : i64} : memref<1x18xf32>
// CHECK: affine.for %{{.*}} = 0 to 3 {
// CHECK: arith.constant -0.000000e+00 : f32
// CHECK: vector.store %{{.*}}, %[[Y]]
// CHECK: affine.for %[[RB:.*]] = 0 to 1 {
// CHECK-NEXT: affine.for %[[S:.*]] = 0 to 2 {
// CHECK-NEXT: %[[K0:.*]] = affine.apply affine_map<(d0) -> ((d0 * 8))> (%[[S]])
// CHECK-NEXT: affine.for %[[V:.*]] = affine_map<(d0) -> ((d0 * 1536))>(%[[RB]]) to min affine_map<(d0) -> (((d0 * 1536) + 1536), 3)>(%[[RB]]) {
// CHECK: %[[ACC:.*]] = vector.load %[[Y]]
// CHECK: %[[A:.*]] = vector.load %{{.*}} : memref<?xf32>, vector<4xf32>
// CHECK: %[[XK:.*]] = memref.load %[[X]]
// CHECK-NEXT: %[[XB:.*]] = vector.broadcast %[[XK]] : f32 to vector<4xf32>
// CHECK-NEXT: %[[P:.*]] = arith.mulf %[[A]], %[[XB]] : vector<4xf32>
// CHECK-NEXT: %{{.*}} = arith.addf %[[ACC]], %[[P]] : vector<4xf32>
// CHECK-COUNT-7: arith.addf
// CHECK: vector.store %{{.*}}, %[[Y]]
// CHECK: affine.for %{{.*}} = affine_map<(d0) -> ((d0 * 1536))>(%[[RB]])
// CHECK-COUNT-2: arith.addf
// CHECK: vector.store %{{.*}}, %[[Y]]
// CHECK: vector.load %[[Y]][%{{.*}}, %{{.*}}] : memref<1x12xf32>, vector<12xf32>
func.func @matvec_columns(%w: memref<?xf32>, %x: vector<18xf32>) -> vector<12xf32> {
  %m = matrix.column_major_load %w[0] : memref<?xf32> -> !matrix.matrix<12x18xf32>
  %y = matrix.matvec %m, %x : !matrix.matrix<12x18xf32>, vector<18xf32> -> vector<12xf32>
  func.return %y : vector<12xf32>
}

// A row-major matrix: tiles of 4 rows x 4 columns read along the rows,
// transposed in registers (2 rounds of shuffles), the lanes being rows that
// each sum in k order. A cache line of a row is 16 columns, more than the
// matrix has: 2 steps of 4 columns, then the last 2 columns gathered; the
// last row (9) is a scalar dot product.
// CHECK-LABEL: func.func @matvec_rows
// CHECK: affine.for %{{.*}} = 0 to 2 {
// CHECK: %[[ZERO:.*]] = arith.constant -0.000000e+00 : f32
// CHECK: %[[INIT:.*]] = vector.broadcast %[[ZERO]] : f32 to vector<4xf32>
// CHECK-NOT: memref.extract_aligned_pointer_as_index
// CHECK-COUNT-4: vector.load %{{.*}} : memref<?xf32>, vector<4xf32>
// CHECK-COUNT-8: vector.shuffle
// CHECK: %[[P:.*]] = arith.mulf
// CHECK-NEXT: arith.addf %[[INIT]], %[[P]] : vector<4xf32>
// CHECK-COUNT-3: arith.addf
// CHECK-COUNT-4: vector.load %{{.*}} : memref<?xf32>, vector<4xf32>
// CHECK-COUNT-8: vector.shuffle
// CHECK-COUNT-4: arith.addf
// CHECK: %[[LAST:.*]] = affine.for %{{.*}} = 8 to 10 iter_args(%{{.*}} = %{{.*}}) -> (vector<4xf32>) {
// CHECK-COUNT-3: vector.insert
// CHECK: vector.store %[[LAST]]
// CHECK: affine.for %{{.*}} = 1 to 10 iter_args(%{{.*}}) -> (f32) {
// CHECK-NOT: vector.shuffle
// CHECK: func.return
func.func @matvec_rows(%w: memref<?xf32>, %x: vector<10xf32>) -> vector<9xf32> {
  %m = matrix.row_major_load %w[0] : memref<?xf32> -> !matrix.matrix<9x10xf32>
  %y = matrix.matvec %m, %x : !matrix.matrix<9x10xf32>, vector<10xf32> -> vector<9xf32>
  func.return %y : vector<9xf32>
}

// A row-major matrix of rows longer than a cache line (16 f32 columns): the
// steps read a whole line of each row (one load of 16) from the first column
// at a line's start, found from the memref's address. One scf.for (their
// start is no affine symbol) runs the steps: its first adds columns 0..15
// below that column only, its last the last 16 columns past the last whole
// step only (both in one masked body: selects), the others whole lines (no
// selects). Each sum stays in k order. A masked step with no columns of its
// own (a row starting at a line's start, or ending at a line's end) is
// skipped: the loop starts at 1 if the first column is 0, and ends before
// the last step if the whole steps end at the last column.
// CHECK-LABEL: func.func @matvec_row_lines
// CHECK: %[[BASE:.*]] = "memref.extract_aligned_pointer_as_index"(%{{.*}}) : (memref<?xf32>) -> index
// CHECK: %[[FIRST:.*]] = arith.divui
// CHECK: %[[COLUMNS:.*]] = arith.subi %[[COLS:.*]], %[[FIRST]] : index
// CHECK: %[[STEPS:.*]] = arith.divui %[[COLUMNS]], %{{.*}} : index
// CHECK: %[[STEPPED:.*]] = arith.muli %[[STEPS]], %{{.*}} : index
// CHECK: %[[DONE:.*]] = arith.addi %[[FIRST]], %[[STEPPED]] : index
// CHECK: %[[AFTER:.*]] = arith.addi %[[STEPS]], %[[ONE:.*]] : index
// CHECK: %[[NONE_BEFORE:.*]] = arith.cmpi eq, %[[FIRST]], %[[ZERO:.*]] : index
// CHECK: %[[START:.*]] = arith.select %[[NONE_BEFORE]], %[[ONE]], %[[ZERO]] : index
// CHECK: %[[NONE_AFTER:.*]] = arith.cmpi eq, %[[DONE]], %[[COLS]] : index
// CHECK: %[[BEYOND:.*]] = arith.addi %[[AFTER]], %[[ONE]] : index
// CHECK: %[[TOTAL:.*]] = arith.select %[[NONE_AFTER]], %[[AFTER]], %[[BEYOND]] : index
// CHECK: %[[SUMS:.*]] = scf.for %[[S:.*]] = %[[START]] to %[[TOTAL]] step %[[ONE]] iter_args(%{{.*}} = %{{.*}}) -> (vector<4xf32>) {
// CHECK-NEXT: %[[AT_START:.*]] = arith.cmpi eq, %[[S]], %{{.*}} : index
// CHECK-NEXT: %[[AT_END:.*]] = arith.cmpi eq, %[[S]], %[[AFTER]] : index
// CHECK-NEXT: %[[PARTIAL:.*]] = arith.ori %[[AT_START]], %[[AT_END]] : i1
// CHECK-NEXT: scf.if %[[PARTIAL]] -> (vector<4xf32>) {
// CHECK-NEXT: arith.select %[[AT_START]]
// CHECK-NEXT: arith.select %[[AT_START]]
// CHECK-NEXT: arith.select %[[AT_START]], %[[FIRST]]
// CHECK-COUNT-4: vector.load %{{.*}} : memref<?xf32>, vector<16xf32>
// CHECK: arith.cmpi uge
// CHECK-NEXT: arith.cmpi ult
// CHECK-COUNT-16: arith.select
// CHECK: } else {
// CHECK-NEXT: %[[SKIPPED:.*]] = arith.subi %[[S]], %{{.*}} : index
// CHECK-NEXT: %[[K:.*]] = arith.muli %[[SKIPPED]], %{{.*}} : index
// CHECK-NEXT: arith.addi %[[K]], %[[FIRST]] : index
// CHECK-COUNT-4: vector.load %{{.*}} : memref<?xf32>, vector<16xf32>
// CHECK-NOT: arith.select
// CHECK: scf.yield
// CHECK-NEXT: }
// CHECK-NEXT: scf.yield
// CHECK: func.return
func.func @matvec_row_lines(%w: memref<?xf32>, %x: vector<40xf32>) -> vector<4xf32> {
  %m = matrix.row_major_load %w[0] : memref<?xf32> -> !matrix.matrix<4x40xf32>
  %y = matrix.matvec %m, %x : !matrix.matrix<4x40xf32>, vector<40xf32> -> vector<4xf32>
  func.return %y : vector<4xf32>
}

// A row-major matrix that is the transpose of an argument (a C-ordered
// argument under the JIT): the argument's buffer memref<4x40xf32> holds the
// rows (row r from element 40·r); the line steps start from its address, as
// from a load's memref.
// CHECK-LABEL: func.func @matvec_row_lines_argument(%0: memref<4x40xf32>
// CHECK: %[[BASE:.*]] = "memref.extract_aligned_pointer_as_index"(%0) : (memref<4x40xf32>) -> index
// CHECK-NEXT: %[[ROW:.*]] = arith.muli %{{.*}}, %{{.*}} : index
// CHECK-NEXT: %[[BYTES:.*]] = arith.muli %[[ROW]], %{{.*}} : index
// CHECK-NEXT: arith.addi %[[BASE]], %[[BYTES]] : index
// CHECK: %[[FIRST:.*]] = arith.divui
// CHECK: scf.for
// CHECK: scf.if
// CHECK: arith.select %{{.*}}, %[[FIRST]]
// CHECK-COUNT-4: vector.load %0[%{{.*}}, %{{.*}}] : memref<4x40xf32>, vector<16xf32>
// CHECK: arith.cmpi uge
// CHECK: } else {
// CHECK-COUNT-4: vector.load %0[%{{.*}}, %{{.*}}] : memref<4x40xf32>, vector<16xf32>
// CHECK: scf.yield
// CHECK: func.return
func.func @matvec_row_lines_argument(%at: !matrix.matrix<40x4xf32>, %x: vector<40xf32>) -> vector<4xf32> {
  %m = matrix.transpose %at : !matrix.matrix<40x4xf32> -> !matrix.matrix<4x40xf32>
  %y = matrix.matvec %m, %x : !matrix.matrix<4x40xf32>, vector<40xf32> -> vector<4xf32>
  func.return %y : vector<4xf32>
}

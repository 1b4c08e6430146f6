// RUN: mx-opt %s -p matrix-fold-transposes | filecheck %s
// RUN: mx-opt %s -p 'matrix-fold-transposes{report=true}' -o /dev/null 2>&1 | filecheck %s --check-prefix=REPORT

// Counterparts of LLVM's LowerMatrixIntrinsics transpose tests
// (transpose-opts, transpose-opts-lifting, transpose-fold,
// multiply-right-transpose), mostly on non-square shapes.

// (Aᵀ)ᵀ → A
// CHECK-LABEL: func.func @double_transpose
// CHECK-NEXT:    func.return %a : !matrix.matrix<2x3xf32>
// REPORT: @double_transpose: transposes 2 -> 0, materialized 1 -> 0
func.func @double_transpose(%a: !matrix.matrix<2x3xf32>) -> !matrix.matrix<2x3xf32> {
  %t = matrix.transpose %a : !matrix.matrix<2x3xf32> -> !matrix.matrix<3x2xf32>
  %u = matrix.transpose %t : !matrix.matrix<3x2xf32> -> !matrix.matrix<2x3xf32>
  func.return %u : !matrix.matrix<2x3xf32>
}

// llvm-project#135397: a double transpose whose inner transpose has another
// user with the other shape. The outer pair cancels; the inner one stays with
// its own 3x2 shape.
// CHECK-LABEL: func.func @double_transpose_shared
// CHECK-NEXT:    %t = matrix.transpose %a : !matrix.matrix<2x3xf32> -> !matrix.matrix<3x2xf32>
// CHECK-NEXT:    func.return %a, %t : !matrix.matrix<2x3xf32>, !matrix.matrix<3x2xf32>
func.func @double_transpose_shared(%a: !matrix.matrix<2x3xf32>) -> (!matrix.matrix<2x3xf32>, !matrix.matrix<3x2xf32>) {
  %t = matrix.transpose %a : !matrix.matrix<2x3xf32> -> !matrix.matrix<3x2xf32>
  %u = matrix.transpose %t : !matrix.matrix<3x2xf32> -> !matrix.matrix<2x3xf32>
  func.return %u, %t : !matrix.matrix<2x3xf32>, !matrix.matrix<3x2xf32>
}

// #135397, second shape: (Aᵀ·Bᵀ)ᵀ with A 3x2, B 4x3 sinks to (Aᵀ)ᵀ... = B·A,
// a 4x3 by 3x2 product; every transpose cancels.
// CHECK-LABEL: func.func @double_transpose_product
// CHECK-NEXT:    %t = matrix.matmul %b, %a : !matrix.matrix<4x3xf32>, !matrix.matrix<3x2xf32> -> !matrix.matrix<4x2xf32>
// CHECK-NEXT:    func.return %t
// REPORT: @double_transpose_product: transposes 3 -> 0, materialized 1 -> 0
func.func @double_transpose_product(%a: !matrix.matrix<3x2xf32>, %b: !matrix.matrix<4x3xf32>) -> !matrix.matrix<4x2xf32> {
  %at = matrix.transpose %a : !matrix.matrix<3x2xf32> -> !matrix.matrix<2x3xf32>
  %bt = matrix.transpose %b : !matrix.matrix<4x3xf32> -> !matrix.matrix<3x4xf32>
  %m = matrix.matmul %at, %bt : !matrix.matrix<2x3xf32>, !matrix.matrix<3x4xf32> -> !matrix.matrix<2x4xf32>
  %t = matrix.transpose %m : !matrix.matrix<2x4xf32> -> !matrix.matrix<4x2xf32>
  func.return %t : !matrix.matrix<4x2xf32>
}

// (A·B)ᵀ → Bᵀ·Aᵀ does not pay when neither operand's transpose folds and the
// result is only used by a product (not materialized): left alone.
// CHECK-LABEL: func.func @product_transpose_absorbed
// CHECK-NEXT:    %m = matrix.matmul %a, %b
// CHECK-NEXT:    %t = matrix.transpose %m
// CHECK-NEXT:    %u = matrix.matmul %t, %c
func.func @product_transpose_absorbed(%a: !matrix.matrix<2x3xf32>, %b: !matrix.matrix<3x4xf32>, %c: !matrix.matrix<2x5xf32>) -> !matrix.matrix<4x5xf32> {
  %m = matrix.matmul %a, %b : !matrix.matrix<2x3xf32>, !matrix.matrix<3x4xf32> -> !matrix.matrix<2x4xf32>
  %t = matrix.transpose %m : !matrix.matrix<2x4xf32> -> !matrix.matrix<4x2xf32>
  %u = matrix.matmul %t, %c : !matrix.matrix<4x2xf32>, !matrix.matrix<2x5xf32> -> !matrix.matrix<4x5xf32>
  func.return %u : !matrix.matrix<4x5xf32>
}

// A returned (materialized) (A·B)ᵀ sinks onto the operands, where the lowering
// reads them with swapped indices: Bᵀ·Aᵀ, flags kept.
// CHECK-LABEL: func.func @product_transpose_sinks
// CHECK-DAG:     %[[BT:.*]] = matrix.transpose %b : !matrix.matrix<3x4xf32> -> !matrix.matrix<4x3xf32>
// CHECK-DAG:     %[[AT:.*]] = matrix.transpose %a : !matrix.matrix<2x3xf32> -> !matrix.matrix<3x2xf32>
// CHECK:         %t = matrix.matmul %[[BT]], %[[AT]] fastmath<contract> : !matrix.matrix<4x3xf32>, !matrix.matrix<3x2xf32> -> !matrix.matrix<4x2xf32>
// CHECK-NEXT:    func.return %t
// REPORT: @product_transpose_sinks: transposes 1 -> 2, materialized 1 -> 0
func.func @product_transpose_sinks(%a: !matrix.matrix<2x3xf32>, %b: !matrix.matrix<3x4xf32>) -> !matrix.matrix<4x2xf32> {
  %m = matrix.matmul %a, %b fastmath<contract> : !matrix.matrix<2x3xf32>, !matrix.matrix<3x4xf32> -> !matrix.matrix<2x4xf32>
  %t = matrix.transpose %m : !matrix.matrix<2x4xf32> -> !matrix.matrix<4x2xf32>
  func.return %t : !matrix.matrix<4x2xf32>
}

// (A·Bᵀ)ᵀ → B·Aᵀ
// CHECK-LABEL: func.func @product_right_transpose
// CHECK-NEXT:    %[[AT:.*]] = matrix.transpose %a : !matrix.matrix<2x3xf32> -> !matrix.matrix<3x2xf32>
// CHECK-NEXT:    %t = matrix.matmul %b, %[[AT]] : !matrix.matrix<4x3xf32>, !matrix.matrix<3x2xf32> -> !matrix.matrix<4x2xf32>
// CHECK-NEXT:    func.return %t
func.func @product_right_transpose(%a: !matrix.matrix<2x3xf32>, %b: !matrix.matrix<4x3xf32>) -> !matrix.matrix<4x2xf32> {
  %bt = matrix.transpose %b : !matrix.matrix<4x3xf32> -> !matrix.matrix<3x4xf32>
  %m = matrix.matmul %a, %bt : !matrix.matrix<2x3xf32>, !matrix.matrix<3x4xf32> -> !matrix.matrix<2x4xf32>
  %t = matrix.transpose %m : !matrix.matrix<2x4xf32> -> !matrix.matrix<4x2xf32>
  func.return %t : !matrix.matrix<4x2xf32>
}

// multiply-right-transpose: A·Bᵀ itself needs no rewrite; the lowering reads
// Bᵀ with swapped indices, so nothing is materialized.
// CHECK-LABEL: func.func @multiply_right_transpose
// CHECK-NEXT:    %bt = matrix.transpose %b
// CHECK-NEXT:    %m = matrix.matmul %a, %bt
// REPORT: @multiply_right_transpose: transposes 1 -> 1, materialized 0 -> 0
func.func @multiply_right_transpose(%a: !matrix.matrix<2x3xf64>, %b: !matrix.matrix<4x3xf64>) -> !matrix.matrix<2x4xf64> {
  %bt = matrix.transpose %b : !matrix.matrix<4x3xf64> -> !matrix.matrix<3x4xf64>
  %m = matrix.matmul %a, %bt : !matrix.matrix<2x3xf64>, !matrix.matrix<3x4xf64> -> !matrix.matrix<2x4xf64>
  func.return %m : !matrix.matrix<2x4xf64>
}

// (k·A)ᵀ → k·Aᵀ with k a splat: the splat transposes for free.
// CHECK-LABEL: func.func @scalar_product
// CHECK-NEXT:    %[[K:.*]] = matrix.splat %k : !matrix.matrix<3x2xf32>
// CHECK-NEXT:    %[[AT:.*]] = matrix.transpose %a : !matrix.matrix<2x3xf32> -> !matrix.matrix<3x2xf32>
// CHECK-NEXT:    %t = matrix.mul %[[K]], %[[AT]] : !matrix.matrix<3x2xf32>
// CHECK-NEXT:    func.return %t
func.func @scalar_product(%a: !matrix.matrix<2x3xf32>, %k: f32) -> !matrix.matrix<3x2xf32> {
  %s = matrix.splat %k : !matrix.matrix<2x3xf32>
  %m = matrix.mul %s, %a : !matrix.matrix<2x3xf32>
  %t = matrix.transpose %m : !matrix.matrix<2x3xf32> -> !matrix.matrix<3x2xf32>
  func.return %t : !matrix.matrix<3x2xf32>
}

// llvm-project#81507: (Aᵀ + Bᵀ)ᵀ on non-square matrices: the add must be
// rebuilt with the 3x2 type of A and B, not the 2x3 type of the original add.
// CHECK-LABEL: func.func @add_of_transposes_transposed
// CHECK-NEXT:    %t = matrix.add %a, %b : !matrix.matrix<3x2xf32>
// CHECK-NEXT:    func.return %t : !matrix.matrix<3x2xf32>
func.func @add_of_transposes_transposed(%a: !matrix.matrix<3x2xf32>, %b: !matrix.matrix<3x2xf32>) -> !matrix.matrix<3x2xf32> {
  %at = matrix.transpose %a : !matrix.matrix<3x2xf32> -> !matrix.matrix<2x3xf32>
  %bt = matrix.transpose %b : !matrix.matrix<3x2xf32> -> !matrix.matrix<2x3xf32>
  %s = matrix.add %at, %bt : !matrix.matrix<2x3xf32>
  %t = matrix.transpose %s : !matrix.matrix<2x3xf32> -> !matrix.matrix<3x2xf32>
  func.return %t : !matrix.matrix<3x2xf32>
}

// (A - B)ᵀ with one load operand: the load's transpose is a row-major load,
// the other operand's transpose is absorbed by the sub.
// CHECK-LABEL: func.func @sub_sinks_into_load
// CHECK-NEXT:    %[[L:.*]] = matrix.row_major_load %mem[2] stride 5 : memref<?xf32> -> !matrix.matrix<2x3xf32>
// CHECK-NEXT:    %[[AT:.*]] = matrix.transpose %a : !matrix.matrix<3x2xf32> -> !matrix.matrix<2x3xf32>
// CHECK-NEXT:    %t = matrix.sub %[[AT]], %[[L]] : !matrix.matrix<2x3xf32>
// CHECK-NEXT:    func.return %t
func.func @sub_sinks_into_load(%a: !matrix.matrix<3x2xf32>, %mem: memref<?xf32>) -> !matrix.matrix<2x3xf32> {
  %l = matrix.column_major_load %mem[2] stride 5 : memref<?xf32> -> !matrix.matrix<3x2xf32>
  %s = matrix.sub %a, %l : !matrix.matrix<3x2xf32>
  %t = matrix.transpose %s : !matrix.matrix<3x2xf32> -> !matrix.matrix<2x3xf32>
  func.return %t : !matrix.matrix<2x3xf32>
}

// A packed load or store flips its layout like any other and stays packed.
// CHECK-LABEL: func.func @packed_transposes
// CHECK-NEXT:    %t = matrix.column_major_load %mem[9] packed : memref<?xi8> -> !matrix.matrix<2x3xi6>
// CHECK-NEXT:    matrix.column_major_store %a, %out[2] stride 4 packed : !matrix.matrix<3x2xi6>, memref<?xi8>
// CHECK-NEXT:    func.return %t
func.func @packed_transposes(%mem: memref<?xi8>, %out: memref<?xi8>, %a: !matrix.matrix<3x2xi6>) -> !matrix.matrix<2x3xi6> {
  %q = matrix.row_major_load %mem[9] stride 2 packed : memref<?xi8> -> !matrix.matrix<3x2xi6>
  %t = matrix.transpose %q : !matrix.matrix<3x2xi6> -> !matrix.matrix<2x3xi6>
  %at = matrix.transpose %a : !matrix.matrix<3x2xi6> -> !matrix.matrix<2x3xi6>
  matrix.row_major_store %at, %out[2] stride 4 packed : !matrix.matrix<2x3xi6>, memref<?xi8>
  func.return %t : !matrix.matrix<2x3xi6>
}

// A product with another user is not sunk into (it would be computed twice).
// CHECK-LABEL: func.func @no_sink_multi_use
// CHECK-NEXT:    %m = matrix.add %a, %b
// CHECK-NEXT:    %t = matrix.transpose %m
// CHECK-NEXT:    func.return %m, %t
func.func @no_sink_multi_use(%a: !matrix.matrix<2x3xf32>, %b: !matrix.matrix<2x3xf32>) -> (!matrix.matrix<2x3xf32>, !matrix.matrix<3x2xf32>) {
  %m = matrix.add %a, %b : !matrix.matrix<2x3xf32>
  %t = matrix.transpose %m : !matrix.matrix<2x3xf32> -> !matrix.matrix<3x2xf32>
  func.return %m, %t : !matrix.matrix<2x3xf32>, !matrix.matrix<3x2xf32>
}

// Cast and neg commute with transpose: (cast (-Aᵀ))ᵀ → cast(-A).
// CHECK-LABEL: func.func @cast_neg_commute
// CHECK-NEXT:    %[[N:.*]] = matrix.neg %a fastmath<nnan> : !matrix.matrix<2x3xf16>
// CHECK-NEXT:    %t = matrix.cast %[[N]] : !matrix.matrix<2x3xf16> to !matrix.matrix<2x3xf32>
// CHECK-NEXT:    func.return %t
func.func @cast_neg_commute(%a: !matrix.matrix<2x3xf16>) -> !matrix.matrix<2x3xf32> {
  %at = matrix.transpose %a : !matrix.matrix<2x3xf16> -> !matrix.matrix<3x2xf16>
  %n = matrix.neg %at fastmath<nnan> : !matrix.matrix<3x2xf16>
  %c = matrix.cast %n : !matrix.matrix<3x2xf16> to !matrix.matrix<3x2xf32>
  %t = matrix.transpose %c : !matrix.matrix<3x2xf32> -> !matrix.matrix<2x3xf32>
  func.return %t : !matrix.matrix<2x3xf32>
}

// Unsigned integer cast and fma keep their attributes through the sink.
// CHECK-LABEL: func.func @fma_and_unsigned_cast
// CHECK-NEXT:    %[[F:.*]] = matrix.cast %a {unsigned} : !matrix.matrix<3x2xi8> to !matrix.matrix<3x2xf32>
// CHECK-NEXT:    %t = matrix.fma %[[F]], %b, %c fastmath<contract> : !matrix.matrix<3x2xf32>
// CHECK-NEXT:    func.return %t
func.func @fma_and_unsigned_cast(%a: !matrix.matrix<3x2xi8>, %b: !matrix.matrix<3x2xf32>, %c: !matrix.matrix<3x2xf32>) -> !matrix.matrix<3x2xf32> {
  %at = matrix.transpose %a : !matrix.matrix<3x2xi8> -> !matrix.matrix<2x3xi8>
  %bt = matrix.transpose %b : !matrix.matrix<3x2xf32> -> !matrix.matrix<2x3xf32>
  %ct = matrix.transpose %c : !matrix.matrix<3x2xf32> -> !matrix.matrix<2x3xf32>
  %f = matrix.cast %at {unsigned} : !matrix.matrix<2x3xi8> to !matrix.matrix<2x3xf32>
  %r = matrix.fma %f, %bt, %ct fastmath<contract> : !matrix.matrix<2x3xf32>
  %t = matrix.transpose %r : !matrix.matrix<2x3xf32> -> !matrix.matrix<3x2xf32>
  func.return %t : !matrix.matrix<3x2xf32>
}

// Lifting (transpose-opts-lifting): Aᵀ·Bᵀ → (B·A)ᵀ when the lifted transpose
// is absorbed, here by a store, which then changes layout.
// CHECK-LABEL: func.func @lift_product_into_store
// CHECK-NEXT:    %[[P:.*]] = matrix.matmul %b, %a : !matrix.matrix<4x3xf32>, !matrix.matrix<3x2xf32> -> !matrix.matrix<4x2xf32>
// CHECK-NEXT:    matrix.row_major_store %[[P]], %mem[0] : !matrix.matrix<4x2xf32>, memref<?xf32>
// CHECK-NOT:     matrix.transpose
// REPORT: @lift_product_into_store: transposes 2 -> 0, materialized 0 -> 0
func.func @lift_product_into_store(%a: !matrix.matrix<3x2xf32>, %b: !matrix.matrix<4x3xf32>, %mem: memref<?xf32>) {
  %at = matrix.transpose %a : !matrix.matrix<3x2xf32> -> !matrix.matrix<2x3xf32>
  %bt = matrix.transpose %b : !matrix.matrix<4x3xf32> -> !matrix.matrix<3x4xf32>
  %m = matrix.matmul %at, %bt : !matrix.matrix<2x3xf32>, !matrix.matrix<3x4xf32> -> !matrix.matrix<2x4xf32>
  matrix.column_major_store %m, %mem[0] : !matrix.matrix<2x4xf32>, memref<?xf32>
  func.return
}

// #81507, lifting: Aᵀ + Bᵀ → (A + B)ᵀ with non-square A, B: the new add has
// A's 3x2 type and the transpose restores 2x3.
// CHECK-LABEL: func.func @lift_add_into_product
// CHECK-NEXT:    %[[S:.*]] = matrix.add %a, %b : !matrix.matrix<3x2xf32>
// CHECK-NEXT:    %[[T:.*]] = matrix.transpose %[[S]] : !matrix.matrix<3x2xf32> -> !matrix.matrix<2x3xf32>
// CHECK-NEXT:    %{{.*}} = matrix.matmul %[[T]], %c
// REPORT: @lift_add_into_product: transposes 2 -> 1, materialized 0 -> 0
func.func @lift_add_into_product(%a: !matrix.matrix<3x2xf32>, %b: !matrix.matrix<3x2xf32>, %c: !matrix.matrix<3x3xf32>) -> !matrix.matrix<2x3xf32> {
  %at = matrix.transpose %a : !matrix.matrix<3x2xf32> -> !matrix.matrix<2x3xf32>
  %bt = matrix.transpose %b : !matrix.matrix<3x2xf32> -> !matrix.matrix<2x3xf32>
  %s = matrix.add %at, %bt : !matrix.matrix<2x3xf32>
  %m = matrix.matmul %s, %c : !matrix.matrix<2x3xf32>, !matrix.matrix<3x3xf32> -> !matrix.matrix<2x3xf32>
  func.return %m : !matrix.matrix<2x3xf32>
}

// No lift when the lifted transpose would be materialized (returned): the
// two absorbed transposes cost nothing, one returned transpose would.
// CHECK-LABEL: func.func @no_lift_into_return
// CHECK-NEXT:    %at = matrix.transpose %a
// CHECK-NEXT:    %bt = matrix.transpose %b
// CHECK-NEXT:    %s = matrix.add %at, %bt
// CHECK-NEXT:    func.return %s
func.func @no_lift_into_return(%a: !matrix.matrix<3x2xf32>, %b: !matrix.matrix<3x2xf32>) -> !matrix.matrix<2x3xf32> {
  %at = matrix.transpose %a : !matrix.matrix<3x2xf32> -> !matrix.matrix<2x3xf32>
  %bt = matrix.transpose %b : !matrix.matrix<3x2xf32> -> !matrix.matrix<2x3xf32>
  %s = matrix.add %at, %bt : !matrix.matrix<2x3xf32>
  func.return %s : !matrix.matrix<2x3xf32>
}

// No lift when an operand transpose has another user: nothing is removed.
// CHECK-LABEL: func.func @no_lift_shared_operand
// CHECK-NEXT:    %at = matrix.transpose %a
// CHECK-NEXT:    %s = matrix.mul %at, %at
// CHECK-NEXT:    func.return %s, %at
func.func @no_lift_shared_operand(%a: !matrix.matrix<3x2xf32>) -> (!matrix.matrix<2x3xf32>, !matrix.matrix<2x3xf32>) {
  %at = matrix.transpose %a : !matrix.matrix<3x2xf32> -> !matrix.matrix<2x3xf32>
  %s = matrix.mul %at, %at : !matrix.matrix<2x3xf32>
  func.return %s, %at : !matrix.matrix<2x3xf32>, !matrix.matrix<2x3xf32>
}

// transpose(splat) → splat; transpose(constant) → constant; 1x1 is identity.
// CHECK-LABEL: func.func @splat_constant_1x1
// CHECK-NEXT:    %[[S:.*]] = matrix.splat %x : !matrix.matrix<3x2xf32>
// CHECK-NEXT:    %[[C:.*]] = matrix.constant dense<[[1, 4], [2, 5], [3, 6]]> : !matrix.matrix<3x2xi32>
// CHECK-NEXT:    func.return %[[S]], %[[C]], %o
func.func @splat_constant_1x1(%x: f32, %o: !matrix.matrix<1x1xf64>) -> (!matrix.matrix<3x2xf32>, !matrix.matrix<3x2xi32>, !matrix.matrix<1x1xf64>) {
  %s = matrix.splat %x : !matrix.matrix<2x3xf32>
  %st = matrix.transpose %s : !matrix.matrix<2x3xf32> -> !matrix.matrix<3x2xf32>
  %c = matrix.constant dense<[[1, 2, 3], [4, 5, 6]]> : !matrix.matrix<2x3xi32>
  %ct = matrix.transpose %c : !matrix.matrix<2x3xi32> -> !matrix.matrix<3x2xi32>
  %ot = matrix.transpose %o : !matrix.matrix<1x1xf64> -> !matrix.matrix<1x1xf64>
  func.return %st, %ct, %ot : !matrix.matrix<3x2xf32>, !matrix.matrix<3x2xi32>, !matrix.matrix<1x1xf64>
}

// Loads and stores change layout; a load with another user is not flipped.
// CHECK-LABEL: func.func @layouts
// CHECK-NEXT:    %[[R:.*]] = matrix.column_major_load %mem[%off] stride %s : memref<?xi4> -> !matrix.matrix<3x2xi4>
// CHECK-NEXT:    %l2 = matrix.row_major_load %mem[0] : memref<?xi4> -> !matrix.matrix<2x3xi4>
// CHECK-NEXT:    %t2 = matrix.transpose %l2
// CHECK-NEXT:    matrix.column_major_store %a, %mem[7] stride 4 : !matrix.matrix<3x2xi4>, memref<?xi4>
// CHECK-NEXT:    func.return %[[R]], %t2, %l2
func.func @layouts(%mem: memref<?xi4>, %off: index, %s: index, %a: !matrix.matrix<3x2xi4>) -> (!matrix.matrix<3x2xi4>, !matrix.matrix<3x2xi4>, !matrix.matrix<2x3xi4>) {
  %l = matrix.row_major_load %mem[%off] stride %s : memref<?xi4> -> !matrix.matrix<2x3xi4>
  %t = matrix.transpose %l : !matrix.matrix<2x3xi4> -> !matrix.matrix<3x2xi4>
  %l2 = matrix.row_major_load %mem[0] : memref<?xi4> -> !matrix.matrix<2x3xi4>
  %t2 = matrix.transpose %l2 : !matrix.matrix<2x3xi4> -> !matrix.matrix<3x2xi4>
  %at = matrix.transpose %a : !matrix.matrix<3x2xi4> -> !matrix.matrix<2x3xi4>
  matrix.row_major_store %at, %mem[7] stride 4 : !matrix.matrix<2x3xi4>, memref<?xi4>
  func.return %t, %t2, %l2 : !matrix.matrix<3x2xi4>, !matrix.matrix<3x2xi4>, !matrix.matrix<2x3xi4>
}

// extract(Aᵀ, [i, j]) → extract(A, [j, i]).
// CHECK-LABEL: func.func @extract_of_transpose
// CHECK-NEXT:    %e = matrix.extract %a[%i, 1] : !matrix.matrix<3x2xf32>
// CHECK-NEXT:    func.return %e
func.func @extract_of_transpose(%a: !matrix.matrix<3x2xf32>, %i: index) -> f32 {
  %t = matrix.transpose %a : !matrix.matrix<3x2xf32> -> !matrix.matrix<2x3xf32>
  %e = matrix.extract %t[1, %i] : !matrix.matrix<2x3xf32>
  func.return %e : f32
}

// matmul_add: (A·B + C)ᵀ → Bᵀ·Aᵀ + Cᵀ, all three transposes cancel.
// CHECK-LABEL: func.func @matmul_add_sinks
// CHECK-NEXT:    %t = matrix.matmul_add %b, %a, %c : !matrix.matrix<4x3xf32>, !matrix.matrix<3x2xf32>, !matrix.matrix<4x2xf32> -> !matrix.matrix<4x2xf32>
func.func @matmul_add_sinks(%a: !matrix.matrix<3x2xf32>, %b: !matrix.matrix<4x3xf32>, %c: !matrix.matrix<4x2xf32>) -> !matrix.matrix<4x2xf32> {
  %at = matrix.transpose %a : !matrix.matrix<3x2xf32> -> !matrix.matrix<2x3xf32>
  %bt = matrix.transpose %b : !matrix.matrix<4x3xf32> -> !matrix.matrix<3x4xf32>
  %ct = matrix.transpose %c : !matrix.matrix<4x2xf32> -> !matrix.matrix<2x4xf32>
  %m = matrix.matmul_add %at, %bt, %ct : !matrix.matrix<2x3xf32>, !matrix.matrix<3x4xf32>, !matrix.matrix<2x4xf32> -> !matrix.matrix<2x4xf32>
  %t = matrix.transpose %m : !matrix.matrix<2x4xf32> -> !matrix.matrix<4x2xf32>
  func.return %t : !matrix.matrix<4x2xf32>
}

// Mixed-precision products: (A·B)ᵀ → Bᵀ·Aᵀ and Aᵀ·Bᵀ → (B·A)ᵀ keep the
// narrower factors (swapped with their types) and {unsigned}.
// CHECK-LABEL: func.func @mixed_precision
// CHECK-NEXT:    %[[P:.*]] = matrix.matmul %b, %a : !matrix.matrix<4x3xbf16>, !matrix.matrix<3x2xf16> -> !matrix.matrix<4x2xf32>
// CHECK-NEXT:    %[[Q:.*]] = matrix.matmul %j, %i {unsigned} : !matrix.matrix<4x3xi16>, !matrix.matrix<3x2xi8> -> !matrix.matrix<4x2xi32>
// CHECK-NEXT:    matrix.column_major_store %[[Q]], %mem[0]
// CHECK-NEXT:    func.return %[[P]]
func.func @mixed_precision(%a: !matrix.matrix<3x2xf16>, %b: !matrix.matrix<4x3xbf16>, %i: !matrix.matrix<3x2xi8>, %j: !matrix.matrix<4x3xi16>, %mem: memref<8xi32>) -> !matrix.matrix<4x2xf32> {
  %at = matrix.transpose %a : !matrix.matrix<3x2xf16> -> !matrix.matrix<2x3xf16>
  %bt = matrix.transpose %b : !matrix.matrix<4x3xbf16> -> !matrix.matrix<3x4xbf16>
  %p = matrix.matmul %at, %bt : !matrix.matrix<2x3xf16>, !matrix.matrix<3x4xbf16> -> !matrix.matrix<2x4xf32>
  %pt = matrix.transpose %p : !matrix.matrix<2x4xf32> -> !matrix.matrix<4x2xf32>
  %it = matrix.transpose %i : !matrix.matrix<3x2xi8> -> !matrix.matrix<2x3xi8>
  %jt = matrix.transpose %j : !matrix.matrix<4x3xi16> -> !matrix.matrix<3x4xi16>
  %q = matrix.matmul %it, %jt {unsigned} : !matrix.matrix<2x3xi8>, !matrix.matrix<3x4xi16> -> !matrix.matrix<2x4xi32>
  matrix.row_major_store %q, %mem[0] : !matrix.matrix<2x4xi32>, memref<8xi32>
  func.return %pt : !matrix.matrix<4x2xf32>
}

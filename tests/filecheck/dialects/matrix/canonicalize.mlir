// RUN: mx-opt %s -p canonicalize | filecheck %s
// One rewrite per function: each function shows a rewrite applying, or a case
// where it must not apply.

// (Aᵀ)ᵀ → A
// CHECK-LABEL: func.func @transpose_of_transpose
// CHECK-NEXT:    func.return %a
func.func @transpose_of_transpose(%a: !matrix.matrix<2x3xf32>) -> !matrix.matrix<2x3xf32> {
  %t = matrix.transpose %a : !matrix.matrix<2x3xf32> -> !matrix.matrix<3x2xf32>
  %u = matrix.transpose %t : !matrix.matrix<3x2xf32> -> !matrix.matrix<2x3xf32>
  func.return %u : !matrix.matrix<2x3xf32>
}

// The transpose of a 1x1 matrix is the matrix.
// CHECK-LABEL: func.func @transpose_1x1
// CHECK-NEXT:    func.return %o
func.func @transpose_1x1(%o: !matrix.matrix<1x1xi8>) -> !matrix.matrix<1x1xi8> {
  %ot = matrix.transpose %o : !matrix.matrix<1x1xi8> -> !matrix.matrix<1x1xi8>
  func.return %ot : !matrix.matrix<1x1xi8>
}

// The transpose of a splat is a splat of the transposed shape.
// CHECK-LABEL: func.func @transpose_of_splat
// CHECK-NEXT:    %[[S:.*]] = matrix.splat %x : !matrix.matrix<3x2xf32>
// CHECK-NEXT:    func.return %[[S]]
func.func @transpose_of_splat(%x: f32) -> !matrix.matrix<3x2xf32> {
  %s = matrix.splat %x : !matrix.matrix<2x3xf32>
  %st = matrix.transpose %s : !matrix.matrix<2x3xf32> -> !matrix.matrix<3x2xf32>
  func.return %st : !matrix.matrix<3x2xf32>
}

// extract(splat x) → x
// CHECK-LABEL: func.func @extract_of_splat
// CHECK-NEXT:    func.return %x
func.func @extract_of_splat(%x: f32, %i: index) -> f32 {
  %s = matrix.splat %x : !matrix.matrix<4x4xf32>
  %0 = matrix.extract %s[%i, 3] : !matrix.matrix<4x4xf32>
  func.return %0 : f32
}

// extract(insert e at p) at the same position p → e
// CHECK-LABEL: func.func @extract_of_insert
// CHECK-NEXT:    func.return %e
func.func @extract_of_insert(%a: !matrix.matrix<3x2xf32>, %e: f32, %i: index) -> f32 {
  %ins = matrix.insert %e, %a[2, %i] : !matrix.matrix<3x2xf32>
  %1 = matrix.extract %ins[2, %i] : !matrix.matrix<3x2xf32>
  func.return %1 : f32
}

// A different static position reads through the insert.
// CHECK-LABEL: func.func @extract_through_insert
// CHECK-NEXT:    %[[M:.*]] = matrix.extract %a[0, 0] : !matrix.matrix<3x2xf32>
// CHECK-NEXT:    func.return %[[M]]
func.func @extract_through_insert(%a: !matrix.matrix<3x2xf32>, %e: f32, %i: index) -> f32 {
  %ins = matrix.insert %e, %a[2, %i] : !matrix.matrix<3x2xf32>
  %4 = matrix.extract %ins[0, 0] : !matrix.matrix<3x2xf32>
  func.return %4 : f32
}

// A possibly equal dynamic position does not read through the insert.
// CHECK-LABEL: func.func @extract_dynamic_not_merged
// CHECK:         matrix.insert
// CHECK:         matrix.extract %ins2[%i, 0]
func.func @extract_dynamic_not_merged(%n: !matrix.matrix<3x2xf32>, %e: f32, %i: index) -> f32 {
  %ins2 = matrix.insert %e, %n[1, 0] : !matrix.matrix<3x2xf32>
  %5 = matrix.extract %ins2[%i, 0] : !matrix.matrix<3x2xf32>
  func.return %5 : f32
}

// extract of a constant → the element
// CHECK-LABEL: func.func @extract_of_constant
// CHECK-NEXT:    %[[C:.*]] = arith.constant 6 : i16
// CHECK-NEXT:    func.return %[[C]]
func.func @extract_of_constant() -> i16 {
  %c = matrix.constant dense<[[1, 2, 3], [4, 5, 6]]> : !matrix.matrix<2x3xi16>
  %2 = matrix.extract %c[1, 2] : !matrix.matrix<2x3xi16>
  func.return %2 : i16
}

// extract(Aᵀ)[i, j] → extract(A)[j, i]
// CHECK-LABEL: func.func @extract_of_transpose
// CHECK-NEXT:    %[[T:.*]] = matrix.extract %a[%i, 1] : !matrix.matrix<3x2xf32>
// CHECK-NEXT:    func.return %[[T]]
func.func @extract_of_transpose(%a: !matrix.matrix<3x2xf32>, %i: index) -> f32 {
  %t = matrix.transpose %a : !matrix.matrix<3x2xf32> -> !matrix.matrix<2x3xf32>
  %3 = matrix.extract %t[1, %i] : !matrix.matrix<2x3xf32>
  func.return %3 : f32
}

// An insert overwritten at the same position disappears.
// CHECK-LABEL: func.func @insert_overwritten
// CHECK-NEXT:    %[[W:.*]] = matrix.insert %e, %m[0, %i] : !matrix.matrix<2x2xf32>
// CHECK-NEXT:    func.return %[[W]]
func.func @insert_overwritten(%m: !matrix.matrix<2x2xf32>, %e: f32, %f: f32, %i: index) -> !matrix.matrix<2x2xf32> {
  %a = matrix.insert %f, %m[0, %i] : !matrix.matrix<2x2xf32>
  %b = matrix.insert %e, %a[0, %i] : !matrix.matrix<2x2xf32>
  func.return %b : !matrix.matrix<2x2xf32>
}

// Constants inserted into a splat of a constant become one matrix.constant.
// CHECK-LABEL: func.func @inserts_into_constant_splat
// CHECK-NEXT:    %[[C:.*]] = matrix.constant dense<[[0.000000e+00, 1.500000e+00], [0.000000e+00, -2.000000e+00]]> : !matrix.matrix<2x2xf32>
// CHECK-NEXT:    func.return %[[C]]
func.func @inserts_into_constant_splat() -> !matrix.matrix<2x2xf32> {
  %zero = arith.constant 0.0 : f32
  %x = arith.constant 1.5 : f32
  %y = arith.constant -2.0 : f32
  %z = matrix.splat %zero : !matrix.matrix<2x2xf32>
  %c1 = matrix.insert %x, %z[0, 1] : !matrix.matrix<2x2xf32>
  %c2 = matrix.insert %y, %c1[1, 1] : !matrix.matrix<2x2xf32>
  func.return %c2 : !matrix.matrix<2x2xf32>
}

// Reinserting an extracted element where it came from is a no-op.
// CHECK-LABEL: func.func @reinsert_extracted
// CHECK-NEXT:    func.return %m
func.func @reinsert_extracted(%m: !matrix.matrix<2x2xf32>, %i: index) -> !matrix.matrix<2x2xf32> {
  %g = matrix.extract %m[1, %i] : !matrix.matrix<2x2xf32>
  %same = matrix.insert %g, %m[1, %i] : !matrix.matrix<2x2xf32>
  func.return %same : !matrix.matrix<2x2xf32>
}

// A huge splat is never materialized by an insert.
// CHECK-LABEL: func.func @huge_splat_insert
// CHECK-NEXT:    %[[Z:.*]] = arith.constant
// CHECK-NEXT:    %[[X:.*]] = arith.constant
// CHECK-NEXT:    %[[S:.*]] = matrix.splat %[[Z]] : !matrix.matrix<1048575x1048575xf32>
// CHECK-NEXT:    matrix.insert %[[X]], %[[S]][0, 1]
func.func @huge_splat_insert() -> !matrix.matrix<1048575x1048575xf32> {
  %zero = arith.constant 0.0 : f32
  %x = arith.constant 1.5 : f32
  %z = matrix.splat %zero : !matrix.matrix<1048575x1048575xf32>
  %c1 = matrix.insert %x, %z[0, 1] : !matrix.matrix<1048575x1048575xf32>
  func.return %c1 : !matrix.matrix<1048575x1048575xf32>
}

// Cast of cast where the inner cast is exact: f16 → f32 → f64 = f16 → f64.
// CHECK-LABEL: func.func @cast_float_widenings
// CHECK-NEXT:    %[[A:.*]] = matrix.cast %h : !matrix.matrix<2x2xf16> to !matrix.matrix<2x2xf64>
// CHECK-NEXT:    func.return %[[A]]
func.func @cast_float_widenings(%h: !matrix.matrix<2x2xf16>) -> !matrix.matrix<2x2xf64> {
  %a1 = matrix.cast %h : !matrix.matrix<2x2xf16> to !matrix.matrix<2x2xf32>
  %a = matrix.cast %a1 : !matrix.matrix<2x2xf32> to !matrix.matrix<2x2xf64>
  func.return %a : !matrix.matrix<2x2xf64>
}

// sext i8 → i32 → i64 = sext i8 → i64
// CHECK-LABEL: func.func @cast_sign_extensions
// CHECK-NEXT:    %[[B:.*]] = matrix.cast %i : !matrix.matrix<2x2xi8> to !matrix.matrix<2x2xi64>
// CHECK-NEXT:    func.return %[[B]]
func.func @cast_sign_extensions(%i: !matrix.matrix<2x2xi8>) -> !matrix.matrix<2x2xi64> {
  %b1 = matrix.cast %i : !matrix.matrix<2x2xi8> to !matrix.matrix<2x2xi32>
  %b = matrix.cast %b1 : !matrix.matrix<2x2xi32> to !matrix.matrix<2x2xi64>
  func.return %b : !matrix.matrix<2x2xi64>
}

// u8 → f16 (exact) → f64 = u8 → f64
// CHECK-LABEL: func.func @cast_unsigned_through_exact_float
// CHECK-NEXT:    %[[C:.*]] = matrix.cast %i {unsigned} : !matrix.matrix<2x2xi8> to !matrix.matrix<2x2xf64>
// CHECK-NEXT:    func.return %[[C]]
func.func @cast_unsigned_through_exact_float(%i: !matrix.matrix<2x2xi8>) -> !matrix.matrix<2x2xf64> {
  %c1 = matrix.cast %i {unsigned} : !matrix.matrix<2x2xi8> to !matrix.matrix<2x2xf16>
  %c = matrix.cast %c1 : !matrix.matrix<2x2xf16> to !matrix.matrix<2x2xf64>
  func.return %c : !matrix.matrix<2x2xf64>
}

// Not exact: f32 → f16 rounds, both casts stay.
// CHECK-LABEL: func.func @cast_rounding_stays
// CHECK-NEXT:    %[[D1:.*]] = matrix.cast %f : !matrix.matrix<2x2xf32> to !matrix.matrix<2x2xf16>
// CHECK-NEXT:    %[[D:.*]] = matrix.cast %[[D1]] : !matrix.matrix<2x2xf16> to !matrix.matrix<2x2xf32>
// CHECK-NEXT:    func.return %[[D]]
func.func @cast_rounding_stays(%f: !matrix.matrix<2x2xf32>) -> !matrix.matrix<2x2xf32> {
  %d1 = matrix.cast %f : !matrix.matrix<2x2xf32> to !matrix.matrix<2x2xf16>
  %d = matrix.cast %d1 : !matrix.matrix<2x2xf16> to !matrix.matrix<2x2xf32>
  func.return %d : !matrix.matrix<2x2xf32>
}

// sext then zext: neither single cast, both stay.
// CHECK-LABEL: func.func @cast_sext_then_zext_stays
// CHECK-NEXT:    %[[E1:.*]] = matrix.cast %i : !matrix.matrix<2x2xi8> to !matrix.matrix<2x2xi32>
// CHECK-NEXT:    %[[E:.*]] = matrix.cast %[[E1]] {unsigned} : !matrix.matrix<2x2xi32> to !matrix.matrix<2x2xi64>
// CHECK-NEXT:    func.return %[[E]]
func.func @cast_sext_then_zext_stays(%i: !matrix.matrix<2x2xi8>) -> !matrix.matrix<2x2xi64> {
  %e1 = matrix.cast %i : !matrix.matrix<2x2xi8> to !matrix.matrix<2x2xi32>
  %e = matrix.cast %e1 {unsigned} : !matrix.matrix<2x2xi32> to !matrix.matrix<2x2xi64>
  func.return %e : !matrix.matrix<2x2xi64>
}

// i16 → f16 is not exact: both stay.
// CHECK-LABEL: func.func @cast_inexact_int_to_float_stays
// CHECK-NEXT:    %[[G1:.*]] = matrix.cast %j : !matrix.matrix<2x2xi16> to !matrix.matrix<2x2xf16>
// CHECK-NEXT:    %[[G:.*]] = matrix.cast %[[G1]] : !matrix.matrix<2x2xf16> to !matrix.matrix<2x2xf32>
// CHECK-NEXT:    func.return %[[G]]
func.func @cast_inexact_int_to_float_stays(%j: !matrix.matrix<2x2xi16>) -> !matrix.matrix<2x2xf32> {
  %g1 = matrix.cast %j : !matrix.matrix<2x2xi16> to !matrix.matrix<2x2xf16>
  %g = matrix.cast %g1 : !matrix.matrix<2x2xf16> to !matrix.matrix<2x2xf32>
  func.return %g : !matrix.matrix<2x2xf32>
}

// int → float → int is left alone.
// CHECK-LABEL: func.func @cast_int_float_int_stays
// CHECK-NEXT:    %[[H1:.*]] = matrix.cast %i : !matrix.matrix<2x2xi8> to !matrix.matrix<2x2xf32>
// CHECK-NEXT:    %[[H:.*]] = matrix.cast %[[H1]] : !matrix.matrix<2x2xf32> to !matrix.matrix<2x2xi16>
// CHECK-NEXT:    func.return %[[H]]
func.func @cast_int_float_int_stays(%i: !matrix.matrix<2x2xi8>) -> !matrix.matrix<2x2xi16> {
  %h1 = matrix.cast %i : !matrix.matrix<2x2xi8> to !matrix.matrix<2x2xf32>
  %hh = matrix.cast %h1 : !matrix.matrix<2x2xf32> to !matrix.matrix<2x2xi16>
  func.return %hh : !matrix.matrix<2x2xi16>
}

// sext then truncate: the truncation ignores signedness, one cast.
// CHECK-LABEL: func.func @cast_extend_then_truncate
// CHECK-NEXT:    %[[K:.*]] = matrix.cast %i : !matrix.matrix<2x2xi8> to !matrix.matrix<2x2xi16>
// CHECK-NEXT:    func.return %[[K]]
func.func @cast_extend_then_truncate(%i: !matrix.matrix<2x2xi8>) -> !matrix.matrix<2x2xi16> {
  %k1 = matrix.cast %i : !matrix.matrix<2x2xi8> to !matrix.matrix<2x2xi32>
  %k = matrix.cast %k1 {unsigned} : !matrix.matrix<2x2xi32> to !matrix.matrix<2x2xi16>
  func.return %k : !matrix.matrix<2x2xi16>
}

// A cast to the same type is a no-op.
// CHECK-LABEL: func.func @cast_same_type
// CHECK-NEXT:    func.return %f
func.func @cast_same_type(%f: !matrix.matrix<2x2xf32>) -> !matrix.matrix<2x2xf32> {
  %same = matrix.cast %f : !matrix.matrix<2x2xf32> to !matrix.matrix<2x2xf32>
  func.return %same : !matrix.matrix<2x2xf32>
}

// Constant index operands become literals.
// CHECK-LABEL: func.func @constant_extract_indices
// CHECK:         matrix.extract %m[1, 2] : !matrix.matrix<2x3xf32>
func.func @constant_extract_indices(%m: !matrix.matrix<2x3xf32>) -> f32 {
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %a = matrix.extract %m[%c1, %c2] : !matrix.matrix<2x3xf32>
  func.return %a : f32
}

// Row index 5 is out of range: it stays dynamic (undefined behaviour, not an error).
// CHECK-LABEL: func.func @out_of_range_index_stays
// CHECK:         matrix.extract %m[%{{.*}}, 0] : !matrix.matrix<2x3xf32>
func.func @out_of_range_index_stays(%m: !matrix.matrix<2x3xf32>) -> f32 {
  %c5 = arith.constant 5 : index
  %b = matrix.extract %m[%c5, 0] : !matrix.matrix<2x3xf32>
  func.return %b : f32
}

// A constant offset and stride of a load become literals.
// CHECK-LABEL: func.func @constant_load_offset_and_stride
// CHECK:         matrix.column_major_load %mem[1] stride 3 : memref<8xf32> -> !matrix.matrix<2x2xf32>
func.func @constant_load_offset_and_stride(%mem: memref<8xf32>) -> !matrix.matrix<2x2xf32> {
  %c1 = arith.constant 1 : index
  %c3 = arith.constant 3 : index
  %l = matrix.column_major_load %mem[%c1] stride %c3 : memref<8xf32> -> !matrix.matrix<2x2xf32>
  func.return %l : !matrix.matrix<2x2xf32>
}

// Offset 5 would run past the end of memref<8xf32>: it stays dynamic.
// CHECK-LABEL: func.func @out_of_bounds_store_offset_stays
// CHECK:         matrix.row_major_store %m, %mem2[%{{.*}}] : !matrix.matrix<2x3xf32>, memref<8xf32>
func.func @out_of_bounds_store_offset_stays(%m: !matrix.matrix<2x3xf32>, %mem2: memref<8xf32>) {
  %c5 = arith.constant 5 : index
  matrix.row_major_store %m, %mem2[%c5] : !matrix.matrix<2x3xf32>, memref<8xf32>
  func.return
}

// index arithmetic is 64 bits, as in MLIR: 2^62 + 2^62 folds to -2^63 (xDSL's fold
// gave 2^63, an index constant that did not re-parse). A negative offset stays
// dynamic; the stride, which fits, becomes a literal.
// CHECK-LABEL: func.func @offset_folds_to_a_wrapped_index
// CHECK:         %[[OFF:.*]] = arith.constant -9223372036854775808 : index
// CHECK:         matrix.column_major_load %mem[%[[OFF]]] stride 4611686018427387904 : memref<?xf32> -> !matrix.matrix<2x2xf32>
func.func @offset_folds_to_a_wrapped_index(%mem: memref<?xf32>) -> !matrix.matrix<2x2xf32> {
  %s = arith.constant 4611686018427387904 : index
  %off = arith.addi %s, %s : index
  %l = matrix.column_major_load %mem[%off] stride %s : memref<?xf32> -> !matrix.matrix<2x2xf32>
  func.return %l : !matrix.matrix<2x2xf32>
}

// A negative index stays dynamic.
// CHECK-LABEL: func.func @negative_index_stays
// CHECK:         matrix.insert %x, %m[%{{.*}}, 1] : !matrix.matrix<2x3xf32>
func.func @negative_index_stays(%m: !matrix.matrix<2x3xf32>, %x: f32) -> !matrix.matrix<2x3xf32> {
  %cm = arith.constant -1 : index
  %i = matrix.insert %x, %m[%cm, 1] : !matrix.matrix<2x3xf32>
  func.return %i : !matrix.matrix<2x3xf32>
}

// Constant folding with the reference semantics: a product is rounded to f16
// at each step: 1*0.1 + 2*3 = 6.1016 (f16), not 6.1.
// CHECK-LABEL: func.func @fold_matmul_f16
// CHECK-NEXT:    %[[M:.*]] = matrix.constant dense<[[6.101560e+00, 1.000000e+01], [1.229690e+01, 2.200000e+01]]> : !matrix.matrix<2x2xf16>
// CHECK-NEXT:    func.return %[[M]]
func.func @fold_matmul_f16() -> !matrix.matrix<2x2xf16> {
  %a = matrix.constant dense<[[1.0, 2.0], [3.0, 4.0]]> : !matrix.matrix<2x2xf16>
  %b = matrix.constant dense<[[0.1, 2.0], [3.0, 4.0]]> : !matrix.matrix<2x2xf16>
  %c = matrix.matmul %a, %b : !matrix.matrix<2x2xf16>, !matrix.matrix<2x2xf16> -> !matrix.matrix<2x2xf16>
  func.return %c : !matrix.matrix<2x2xf16>
}

// Splat arithmetic stays a splat, however large.
// CHECK-LABEL: func.func @fold_huge_splat_add
// CHECK-NEXT:    %[[X:.*]] = arith.constant 6.000000e+00 : f32
// CHECK-NEXT:    %[[S:.*]] = matrix.splat %[[X]] : !matrix.matrix<1048575x1048575xf32>
// CHECK-NEXT:    func.return %[[S]]
func.func @fold_huge_splat_add() -> !matrix.matrix<1048575x1048575xf32> {
  %x = arith.constant 3.0 : f32
  %s = matrix.splat %x : !matrix.matrix<1048575x1048575xf32>
  %t = matrix.add %s, %s : !matrix.matrix<1048575x1048575xf32>
  func.return %t : !matrix.matrix<1048575x1048575xf32>
}

// Division by zero is undefined behaviour: not folded.
// CHECK-LABEL: func.func @division_by_zero_not_folded
// CHECK-NEXT:    %[[I:.*]] = matrix.constant dense<[[1, 2], [3, 0]]> : !matrix.matrix<2x2xi8>
// CHECK-NEXT:    %[[D:.*]] = matrix.div %[[I]], %[[I]] : !matrix.matrix<2x2xi8>
// CHECK-NEXT:    func.return %[[D]]
func.func @division_by_zero_not_folded() -> !matrix.matrix<2x2xi8> {
  %i = matrix.constant dense<[[1, 2], [3, 0]]> : !matrix.matrix<2x2xi8>
  %j = matrix.div %i, %i : !matrix.matrix<2x2xi8>
  func.return %j : !matrix.matrix<2x2xi8>
}

// Elementwise integer products fold.
// CHECK-LABEL: func.func @fold_mul
// CHECK-NEXT:    %[[W:.*]] = matrix.constant dense<[[1, 4], [9, 0]]> : !matrix.matrix<2x2xi8>
// CHECK-NEXT:    func.return %[[W]]
func.func @fold_mul() -> !matrix.matrix<2x2xi8> {
  %i = matrix.constant dense<[[1, 2], [3, 0]]> : !matrix.matrix<2x2xi8>
  %k = matrix.mul %i, %i : !matrix.matrix<2x2xi8>
  func.return %k : !matrix.matrix<2x2xi8>
}

// A product of splats: each element is 2*2 + 2*2 + 2*2 = 12.
// CHECK-LABEL: func.func @fold_matmul_of_splats
// CHECK-NEXT:    %[[P:.*]] = arith.constant 1.200000e+01 : f32
// CHECK-NEXT:    %[[PS:.*]] = matrix.splat %[[P]] : !matrix.matrix<3x2xf32>
// CHECK-NEXT:    func.return %[[PS]]
func.func @fold_matmul_of_splats() -> !matrix.matrix<3x2xf32> {
  %two = arith.constant 2.0 : f32
  %p = matrix.splat %two : !matrix.matrix<3x3xf32>
  %q = matrix.splat %two : !matrix.matrix<3x2xf32>
  %r = matrix.matmul %p, %q : !matrix.matrix<3x3xf32>, !matrix.matrix<3x2xf32> -> !matrix.matrix<3x2xf32>
  func.return %r : !matrix.matrix<3x2xf32>
}

// -(-x) → x
// CHECK-LABEL: func.func @double_neg
// CHECK-NEXT:    func.return %a
func.func @double_neg(%a: !matrix.matrix<2x3xbf16>) -> !matrix.matrix<2x3xbf16> {
  %n = matrix.neg %a : !matrix.matrix<2x3xbf16>
  %m = matrix.neg %n : !matrix.matrix<2x3xbf16>
  func.return %m : !matrix.matrix<2x3xbf16>
}

// Exact widening casts feeding a contraction become a mixed-precision op:
// both operands sign-extended.
// CHECK-LABEL: func.func @widening_casts_signed
// CHECK-NEXT:    %[[S:.*]] = matrix.matmul %a, %b : !matrix.matrix<4x8xi8>, !matrix.matrix<8x4xi8> -> !matrix.matrix<4x4xi32>
// CHECK-NEXT:    func.return %[[S]]
func.func @widening_casts_signed(%a: !matrix.matrix<4x8xi8>, %b: !matrix.matrix<8x4xi8>) -> !matrix.matrix<4x4xi32> {
  %ca = matrix.cast %a : !matrix.matrix<4x8xi8> to !matrix.matrix<4x8xi32>
  %cb = matrix.cast %b : !matrix.matrix<8x4xi8> to !matrix.matrix<8x4xi32>
  %0 = matrix.matmul %ca, %cb : !matrix.matrix<4x8xi32>, !matrix.matrix<8x4xi32> -> !matrix.matrix<4x4xi32>
  func.return %0 : !matrix.matrix<4x4xi32>
}

// Both operands zero-extended: an {unsigned} product.
// CHECK-LABEL: func.func @widening_casts_unsigned
// CHECK-NEXT:    %[[U:.*]] = matrix.matmul %a, %b {unsigned} : !matrix.matrix<4x8xi8>, !matrix.matrix<8x4xi8> -> !matrix.matrix<4x4xi32>
// CHECK-NEXT:    func.return %[[U]]
func.func @widening_casts_unsigned(%a: !matrix.matrix<4x8xi8>, %b: !matrix.matrix<8x4xi8>) -> !matrix.matrix<4x4xi32> {
  %ua = matrix.cast %a {unsigned} : !matrix.matrix<4x8xi8> to !matrix.matrix<4x8xi32>
  %ub = matrix.cast %b {unsigned} : !matrix.matrix<8x4xi8> to !matrix.matrix<8x4xi32>
  %1 = matrix.matmul %ua, %ub : !matrix.matrix<4x8xi32>, !matrix.matrix<8x4xi32> -> !matrix.matrix<4x4xi32>
  func.return %1 : !matrix.matrix<4x4xi32>
}

// Mixed signedness stays.
// CHECK-LABEL: func.func @widening_casts_mixed_signedness_stay
// CHECK-NEXT:    %[[CA:.*]] = matrix.cast %a : !matrix.matrix<4x8xi8> to !matrix.matrix<4x8xi32>
// CHECK-NEXT:    %[[UB:.*]] = matrix.cast %b {unsigned} : !matrix.matrix<8x4xi8> to !matrix.matrix<8x4xi32>
// CHECK-NEXT:    %[[MIXED:.*]] = matrix.matmul %[[CA]], %[[UB]] : !matrix.matrix<4x8xi32>, !matrix.matrix<8x4xi32> -> !matrix.matrix<4x4xi32>
// CHECK-NEXT:    func.return %[[MIXED]]
func.func @widening_casts_mixed_signedness_stay(%a: !matrix.matrix<4x8xi8>, %b: !matrix.matrix<8x4xi8>) -> !matrix.matrix<4x4xi32> {
  %ca = matrix.cast %a : !matrix.matrix<4x8xi8> to !matrix.matrix<4x8xi32>
  %ub = matrix.cast %b {unsigned} : !matrix.matrix<8x4xi8> to !matrix.matrix<8x4xi32>
  %2 = matrix.matmul %ca, %ub : !matrix.matrix<4x8xi32>, !matrix.matrix<8x4xi32> -> !matrix.matrix<4x4xi32>
  func.return %2 : !matrix.matrix<4x4xi32>
}

// One operand cast (matmul_add).
// CHECK-LABEL: func.func @widening_cast_one_operand
// CHECK-NEXT:    %[[ONE:.*]] = matrix.matmul_add %a, %w, %c : !matrix.matrix<4x8xi8>, !matrix.matrix<8x4xi32>, !matrix.matrix<4x4xi32> -> !matrix.matrix<4x4xi32>
// CHECK-NEXT:    func.return %[[ONE]]
func.func @widening_cast_one_operand(%a: !matrix.matrix<4x8xi8>, %w: !matrix.matrix<8x4xi32>, %c: !matrix.matrix<4x4xi32>) -> !matrix.matrix<4x4xi32> {
  %ca = matrix.cast %a : !matrix.matrix<4x8xi8> to !matrix.matrix<4x8xi32>
  %3 = matrix.matmul_add %ca, %w, %c : !matrix.matrix<4x8xi32>, !matrix.matrix<8x4xi32>, !matrix.matrix<4x4xi32> -> !matrix.matrix<4x4xi32>
  func.return %3 : !matrix.matrix<4x4xi32>
}

// matvec: the matrix through matrix.cast.
// CHECK-LABEL: func.func @widening_cast_matvec
// CHECK-NEXT:    %[[HV:.*]] = matrix.matvec %h, %x fastmath<contract> : !matrix.matrix<4x8xf16>, vector<8xf32> -> vector<4xf32>
// CHECK-NEXT:    func.return %[[HV]]
func.func @widening_cast_matvec(%h: !matrix.matrix<4x8xf16>, %x: vector<8xf32>) -> vector<4xf32> {
  %ch = matrix.cast %h : !matrix.matrix<4x8xf16> to !matrix.matrix<4x8xf32>
  %4 = matrix.matvec %ch, %x fastmath<contract> : !matrix.matrix<4x8xf32>, vector<8xf32> -> vector<4xf32>
  func.return %4 : vector<4xf32>
}

// Into an op that is already mixed.
// CHECK-LABEL: func.func @widening_cast_into_mixed
// CHECK-NEXT:    %[[BF:.*]] = matrix.matmul %g, %f : !matrix.matrix<4x8xbf16>, !matrix.matrix<8x4xf32> -> !matrix.matrix<4x4xf64>
// CHECK-NEXT:    func.return %[[BF]]
func.func @widening_cast_into_mixed(%g: !matrix.matrix<4x8xbf16>, %f: !matrix.matrix<8x4xf32>) -> !matrix.matrix<4x4xf64> {
  %cg = matrix.cast %g : !matrix.matrix<4x8xbf16> to !matrix.matrix<4x8xf64>
  %5 = matrix.matmul %cg, %f : !matrix.matrix<4x8xf64>, !matrix.matrix<8x4xf32> -> !matrix.matrix<4x4xf64>
  func.return %5 : !matrix.matrix<4x4xf64>
}

// i8 -> f32 is exact but not a widening: it stays.
// CHECK-LABEL: func.func @int_to_float_cast_stays
// CHECK-NEXT:    %[[IN:.*]] = matrix.cast %a : !matrix.matrix<4x8xi8> to !matrix.matrix<4x8xf32>
// CHECK-NEXT:    %[[INEXACT:.*]] = matrix.matmul %[[IN]], %f : !matrix.matrix<4x8xf32>, !matrix.matrix<8x4xf32> -> !matrix.matrix<4x4xf32>
// CHECK-NEXT:    func.return %[[INEXACT]]
func.func @int_to_float_cast_stays(%a: !matrix.matrix<4x8xi8>, %f: !matrix.matrix<8x4xf32>) -> !matrix.matrix<4x4xf32> {
  %fa = matrix.cast %a : !matrix.matrix<4x8xi8> to !matrix.matrix<4x8xf32>
  %6 = matrix.matmul %fa, %f : !matrix.matrix<4x8xf32>, !matrix.matrix<8x4xf32> -> !matrix.matrix<4x4xf32>
  func.return %6 : !matrix.matrix<4x4xf32>
}

// A zero-extended matrix against a vector the op sign-extends: stays.
// CHECK-LABEL: func.func @zero_extended_matvec_stays
// CHECK-NEXT:    %[[AX:.*]] = matrix.cast %a {unsigned} : !matrix.matrix<4x8xi8> to !matrix.matrix<4x8xi32>
// CHECK-NEXT:    %[[KEPT:.*]] = matrix.matvec %[[AX]], %xi : !matrix.matrix<4x8xi32>, vector<8xi8> -> vector<4xi32>
// CHECK-NEXT:    func.return %[[KEPT]]
func.func @zero_extended_matvec_stays(%a: !matrix.matrix<4x8xi8>, %xi: vector<8xi8>) -> vector<4xi32> {
  %ax = matrix.cast %a {unsigned} : !matrix.matrix<4x8xi8> to !matrix.matrix<4x8xi32>
  %7 = matrix.matvec %ax, %xi : !matrix.matrix<4x8xi32>, vector<8xi8> -> vector<4xi32>
  func.return %7 : vector<4xi32>
}

// Mixed-precision contractions fold like the same-type ops, on the widened
// values: signed i8 into i32.
// CHECK-LABEL: func.func @fold_mixed_signed
// CHECK-NEXT:    %[[S:.*]] = matrix.constant dense<[[134, -4], [-3, -121]]> : !matrix.matrix<2x2xi32>
// CHECK-NEXT:    func.return %[[S]]
func.func @fold_mixed_signed() -> !matrix.matrix<2x2xi32> {
  %a = matrix.constant dense<[[-1, 2], [3, 127]]> : !matrix.matrix<2x2xi8>
  %b = matrix.constant dense<[[-128, 2], [3, -1]]> : !matrix.matrix<2x2xi8>
  %0 = matrix.matmul %a, %b : !matrix.matrix<2x2xi8>, !matrix.matrix<2x2xi8> -> !matrix.matrix<2x2xi32>
  func.return %0 : !matrix.matrix<2x2xi32>
}

// Unsigned i8 into i32.
// CHECK-LABEL: func.func @fold_mixed_unsigned
// CHECK-NEXT:    %[[U:.*]] = matrix.constant dense<[[32646, 1020], [765, 32391]]> : !matrix.matrix<2x2xi32>
// CHECK-NEXT:    func.return %[[U]]
func.func @fold_mixed_unsigned() -> !matrix.matrix<2x2xi32> {
  %a = matrix.constant dense<[[-1, 2], [3, 127]]> : !matrix.matrix<2x2xi8>
  %b = matrix.constant dense<[[-128, 2], [3, -1]]> : !matrix.matrix<2x2xi8>
  %1 = matrix.matmul %a, %b {unsigned} : !matrix.matrix<2x2xi8>, !matrix.matrix<2x2xi8> -> !matrix.matrix<2x2xi32>
  func.return %1 : !matrix.matrix<2x2xi32>
}

// f16 products are exact in f32: 65504 * 65504 overflows f16, not f32.
// CHECK-LABEL: func.func @fold_mixed_f16_into_f32
// CHECK-NEXT:    %[[H:.*]] = matrix.constant dense<{{\[\[}}4.29077402e+09, 6.550600e+04], [3.275300e+04, 4.500000e+00]]> : !matrix.matrix<2x2xf32>
// CHECK-NEXT:    func.return %[[H]]
func.func @fold_mixed_f16_into_f32() -> !matrix.matrix<2x2xf32> {
  %h = matrix.constant dense<[[65504.0, 1.0], [0.5, 2.0]]> : !matrix.matrix<2x2xf16>
  %2 = matrix.matmul %h, %h : !matrix.matrix<2x2xf16>, !matrix.matrix<2x2xf16> -> !matrix.matrix<2x2xf32>
  func.return %2 : !matrix.matrix<2x2xf32>
}

// Splats: -1 zero-extended is 255; each element is 3 * (255 * 4).
// CHECK-LABEL: func.func @fold_mixed_splats
// CHECK-NEXT:    %[[K:.*]] = arith.constant 3060 : i16
// CHECK-NEXT:    %[[SPLAT:.*]] = matrix.splat %[[K]] : !matrix.matrix<3x3xi16>
// CHECK-NEXT:    func.return %[[SPLAT]]
func.func @fold_mixed_splats() -> !matrix.matrix<3x3xi16> {
  %m1 = arith.constant -1 : i8
  %four = arith.constant 4 : i8
  %s1 = matrix.splat %m1 : !matrix.matrix<3x3xi8>
  %s4 = matrix.splat %four : !matrix.matrix<3x3xi8>
  %3 = matrix.matmul %s1, %s4 {unsigned} : !matrix.matrix<3x3xi8>, !matrix.matrix<3x3xi8> -> !matrix.matrix<3x3xi16>
  func.return %3 : !matrix.matrix<3x3xi16>
}

// Packed accesses keep `packed`; the bounds are counted in bytes (5 bytes hold
// elements 0..9 of i4, so a 2x2 load from offset 6 fits and one from 7 does not).
// CHECK-LABEL: func.func @constant_indices_packed
// CHECK:         matrix.column_major_load %mem[6] packed : memref<5xi8> -> !matrix.matrix<2x2xi4>
// CHECK:         matrix.column_major_load %mem[%{{.*}}] packed : memref<5xi8> -> !matrix.matrix<2x2xi4>
func.func @constant_indices_packed(%mem: memref<5xi8>) -> (!matrix.matrix<2x2xi4>, !matrix.matrix<2x2xi4>) {
  %c6 = arith.constant 6 : index
  %c7 = arith.constant 7 : index
  %a = matrix.column_major_load %mem[%c6] packed : memref<5xi8> -> !matrix.matrix<2x2xi4>
  %b = matrix.column_major_load %mem[%c7] packed : memref<5xi8> -> !matrix.matrix<2x2xi4>
  func.return %a, %b : !matrix.matrix<2x2xi4>, !matrix.matrix<2x2xi4>
}

// RUN: mx-opt %s --split-input-file --verify-diagnostics

// One case per verifier or parser rule of docs/matrix-dialect.md. Types that the custom
// syntax cannot even express (mismatched operands) are written generically.

// expected-error @+1 {{matrix row count 0 is outside [1, 1048575]}}
func.func @zero_rows(%a: !matrix.matrix<0x4xf32>)

// -----

// expected-error @+1 {{matrix column count 1048576 is outside [1, 1048575]}}
func.func @too_many_columns(%a: !matrix.matrix<4x1048576xf32>)

// -----

// expected-error @+1 {{matrix row count -1 is outside [1, 1048575]}}
func.func @negative_rows(%a: !matrix.matrix<-1x4xf32>)

// -----

// expected-error @+1 {{matrix column count -1 is outside [1, 1048575]}}
func.func @negative_columns(%a: !matrix.matrix<4x-1xf32>)

// -----

// expected-error @+1 {{expected a matrix shape of two dimensions 'RxC' (got 1)}}
func.func @one_dimension(%a: !matrix.matrix<4xf32>)

// -----

// expected-error @+1 {{matrix row count must be static}}
func.func @dynamic_rows(%a: !matrix.matrix<?x4xf32>)

// -----

// expected-error @+1 {{expected a matrix shape of two dimensions 'RxC' (got 3)}}
func.func @three_dims(%a: !matrix.matrix<2x2x2xf32>)

// -----

// expected-error @+1 {{invalid matrix element type 'i1'}}
func.func @bool_elements(%a: !matrix.matrix<2x2xi1>)

// -----

// expected-error @+1 {{invalid matrix element type 'index'}}
func.func @index_elements(%a: !matrix.matrix<2x2xindex>)

// -----

// expected-error @+1 {{invalid matrix element type 'i7'}}
func.func @odd_width_elements(%a: !matrix.matrix<2x2xi7>)

// -----

// expected-error @+1 {{invalid matrix element type 'si32'}}
func.func @signed_elements(%a: !matrix.matrix<2x2xsi32>)

// -----

// expected-error @+1 {{invalid matrix element type 'f8E4M3FN'}}
func.func @fp8_elements(%a: !matrix.matrix<2x2xf8E4M3FN>)

// -----

// expected-error @+1 {{invalid matrix element type 'vector<4xf32>'}}
func.func @vector_elements(%a: !matrix.matrix<2x2xvector<4xf32>>)

// -----

func.func @add_shape_mismatch(%a: !matrix.matrix<4x4xf32>, %b: !matrix.matrix<4x3xf32>) {
  // expected-error @+1 {{matrix dimension mismatch: lhs is 4x4 but rhs is 4x3}}
  %0 = "matrix.add"(%a, %b) : (!matrix.matrix<4x4xf32>, !matrix.matrix<4x3xf32>) -> !matrix.matrix<4x4xf32>
  func.return
}

// -----

func.func @sub_element_mismatch(%a: !matrix.matrix<4x4xf32>, %b: !matrix.matrix<4x4xf64>) {
  // expected-error @+1 {{matrix element type mismatch: lhs has 'f32' but rhs has 'f64'}}
  %0 = "matrix.sub"(%a, %b) : (!matrix.matrix<4x4xf32>, !matrix.matrix<4x4xf64>) -> !matrix.matrix<4x4xf32>
  func.return
}

// -----

func.func @mul_result_mismatch(%a: !matrix.matrix<2x2xi32>) {
  // expected-error @+1 {{matrix dimension mismatch: lhs is 2x2 but result is 1x2}}
  %0 = "matrix.mul"(%a, %a) : (!matrix.matrix<2x2xi32>, !matrix.matrix<2x2xi32>) -> !matrix.matrix<1x2xi32>
  func.return
}

// -----

func.func @fastmath_on_integers(%a: !matrix.matrix<2x2xi32>) {
  // expected-error @+1 {{fastmath flags are only allowed on floating-point matrices, not on element type 'i32'}}
  %0 = matrix.add %a, %a fastmath<contract> : !matrix.matrix<2x2xi32>
  func.return
}

// -----

func.func @arithmetic_on_fp4_container(%a: !matrix.matrix<2x2xi4>) {
  // expected-error @+1 {{result has element type 'i4', which is a bit container without arithmetic}}
  %0 = matrix.add %a, %a : !matrix.matrix<2x2xi4>
  func.return
}

// -----

func.func @neg_of_integers(%a: !matrix.matrix<2x2xi16>) {
  // expected-error @+1 {{'matrix.neg' requires floating-point elements, but result has element type 'i16'}}
  %0 = matrix.neg %a : !matrix.matrix<2x2xi16>
  func.return
}

// -----

func.func @fma_of_integers(%a: !matrix.matrix<2x2xi8>) {
  // expected-error @+1 {{'matrix.fma' requires floating-point elements, but result has element type 'i8'}}
  %0 = matrix.fma %a, %a, %a : !matrix.matrix<2x2xi8>
  func.return
}

// -----

func.func @fma_operand_mismatch(%a: !matrix.matrix<2x2xf32>, %b: !matrix.matrix<2x3xf32>) {
  // expected-error @+1 {{matrix dimension mismatch: operand #0 is 2x2 but operand #2 is 2x3}}
  %0 = "matrix.fma"(%a, %a, %b) : (!matrix.matrix<2x2xf32>, !matrix.matrix<2x2xf32>, !matrix.matrix<2x3xf32>) -> !matrix.matrix<2x2xf32>
  func.return
}

// -----

func.func @unsigned_float_division(%a: !matrix.matrix<2x2xf32>) {
  // expected-error @+1 {{'unsigned' is only allowed on integer division}}
  %0 = matrix.div %a, %a {unsigned} : !matrix.matrix<2x2xf32>
  func.return
}

// -----

func.func @splat_type_mismatch(%x: f64) {
  // expected-error @+1 {{splat operand has type 'f64' but the matrix element type is 'f32'}}
  %0 = "matrix.splat"(%x) : (f64) -> !matrix.matrix<2x2xf32>
  func.return
}

// -----

func.func @constant_shape_mismatch() {
  // expected-error @+1 {{literal of shape 3x2 does not match the 2x3 matrix}}
  %0 = matrix.constant dense<[[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]]> : !matrix.matrix<2x3xf32>
  func.return
}

// -----

func.func @constant_value_type_mismatch() {
  // expected-error @+1 {{constant value has element type 'f64' but the result has 'f32'}}
  %0 = "matrix.constant"() <{value = dense<1.0> : tensor<2x2xf64>}> : () -> !matrix.matrix<2x2xf32>
  func.return
}

// -----

func.func @constant_value_shape_mismatch() {
  // expected-error @+1 {{does not have the 2x2 shape of the result}}
  %0 = "matrix.constant"() <{value = dense<1.0> : tensor<4xf32>}> : () -> !matrix.matrix<2x2xf32>
  func.return
}


// -----

func.func @extract_row_out_of_range(%m: !matrix.matrix<4x3xf32>) {
  // expected-error @+1 {{row index 4 is outside [0, 4)}}
  %0 = matrix.extract %m[4, 0] : !matrix.matrix<4x3xf32>
  func.return
}

// -----

func.func @extract_column_out_of_range(%m: !matrix.matrix<4x3xf32>, %i: index) {
  // expected-error @+1 {{column index 3 is outside [0, 3)}}
  %0 = matrix.extract %m[%i, 3] : !matrix.matrix<4x3xf32>
  func.return
}

// -----

func.func @extract_negative_index(%m: !matrix.matrix<4x3xf32>) {
  // expected-error @+1 {{row index -1 is outside [0, 4)}}
  %0 = matrix.extract %m[-1, 0] : !matrix.matrix<4x3xf32>
  func.return
}

// -----

func.func @extract_one_index(%m: !matrix.matrix<4x3xf32>) {
  // expected-error @+1 {{expected two indices [row, column], got 1}}
  %0 = matrix.extract %m[1] : !matrix.matrix<4x3xf32>
  func.return
}

// -----

func.func @extract_result_type(%m: !matrix.matrix<4x3xf32>) {
  // expected-error @+1 {{result type 'f64' is not the element type 'f32' of the matrix}}
  %0 = "matrix.extract"(%m) <{static_indices = array<i64: 0, 0>, operandSegmentSizes = array<i32: 1, 0>}> : (!matrix.matrix<4x3xf32>) -> f64
  func.return
}

// -----

func.func @extract_missing_dynamic_index(%m: !matrix.matrix<4x3xf32>) {
  // expected-error @+1 {{expected 1 dynamic index operands, got 0}}
  %0 = "matrix.extract"(%m) <{static_indices = array<i64: -9223372036854775808, 0>, operandSegmentSizes = array<i32: 1, 0>}> : (!matrix.matrix<4x3xf32>) -> f32
  func.return
}

// -----

func.func @insert_out_of_range(%m: !matrix.matrix<2x2xi64>, %e: i64) {
  // expected-error @+1 {{column index 7 is outside [0, 2)}}
  %0 = matrix.insert %e, %m[1, 7] : !matrix.matrix<2x2xi64>
  func.return
}

// -----

func.func @insert_element_type(%m: !matrix.matrix<2x2xi64>, %e: i32) {
  // expected-error @+1 {{inserted element has type 'i32' but the matrix element type is 'i64'}}
  %0 = "matrix.insert"(%e, %m) <{static_indices = array<i64: 0, 0>, operandSegmentSizes = array<i32: 1, 1, 0>}> : (i32, !matrix.matrix<2x2xi64>) -> !matrix.matrix<2x2xi64>
  func.return
}

// -----

func.func @matmul_inner_mismatch(%a: !matrix.matrix<2x3xf32>, %b: !matrix.matrix<4x2xf32>) {
  // expected-error @+1 {{inner dimensions of 'matrix.matmul' do not agree: lhs is 2x3 but rhs has 4 rows (4x2)}}
  %0 = matrix.matmul %a, %b : !matrix.matrix<2x3xf32>, !matrix.matrix<4x2xf32> -> !matrix.matrix<2x2xf32>
  func.return
}

// -----

func.func @matmul_element_mismatch(%a: !matrix.matrix<2x3xf32>, %b: !matrix.matrix<3x2xf16>) {
  // expected-error @+1 {{matrix element type mismatch in 'matrix.matmul': lhs has 'f32', which does not widen exactly to the result element type 'f16'}}
  %0 = matrix.matmul %a, %b : !matrix.matrix<2x3xf32>, !matrix.matrix<3x2xf16> -> !matrix.matrix<2x2xf16>
  func.return
}

// -----

// Mixed-precision contractions: every factor widens exactly to the result.

func.func @mixed_f16_into_bf16(%a: !matrix.matrix<2x3xf16>, %b: !matrix.matrix<3x2xbf16>) {
  // expected-error @+1 {{matrix element type mismatch in 'matrix.matmul': lhs has 'f16', which does not widen exactly to the result element type 'bf16'}}
  %0 = matrix.matmul %a, %b : !matrix.matrix<2x3xf16>, !matrix.matrix<3x2xbf16> -> !matrix.matrix<2x2xbf16>
  func.return
}

// -----

func.func @mixed_int_into_float(%a: !matrix.matrix<2x2xi8>) {
  // expected-error @+1 {{matrix element type mismatch in 'matrix.matmul': lhs has 'i8', which does not widen exactly to the result element type 'f32'}}
  %0 = matrix.matmul %a, %a : !matrix.matrix<2x2xi8>, !matrix.matrix<2x2xi8> -> !matrix.matrix<2x2xf32>
  func.return
}

// -----

func.func @mixed_narrowing_int(%a: !matrix.matrix<2x3xi32>, %b: !matrix.matrix<3x2xi64>) {
  // expected-error @+1 {{matrix element type mismatch in 'matrix.matmul': rhs has 'i64', which does not widen exactly to the result element type 'i32'}}
  %0 = matrix.matmul %a, %b : !matrix.matrix<2x3xi32>, !matrix.matrix<3x2xi64> -> !matrix.matrix<2x2xi32>
  func.return
}

// -----

func.func @mixed_f16_into_f16_from_f32(%a: !matrix.matrix<2x3xf16>, %b: !matrix.matrix<3x2xf32>, %c: !matrix.matrix<2x2xf16>) {
  // expected-error @+1 {{matrix element type mismatch in 'matrix.matmul_add': rhs has 'f32', which does not widen exactly to the result element type 'f16'}}
  %0 = matrix.matmul_add %a, %b, %c : !matrix.matrix<2x3xf16>, !matrix.matrix<3x2xf32>, !matrix.matrix<2x2xf16> -> !matrix.matrix<2x2xf16>
  func.return
}

// -----

func.func @mixed_accumulator_of_factor_type(%a: !matrix.matrix<2x2xf16>, %c: !matrix.matrix<2x2xf16>) {
  // expected-error @+1 {{matrix element type mismatch: product has 'f32' but accumulator has 'f16'}}
  %0 = matrix.matmul_add %a, %a, %c : !matrix.matrix<2x2xf16>, !matrix.matrix<2x2xf16>, !matrix.matrix<2x2xf16> -> !matrix.matrix<2x2xf32>
  func.return
}

// -----

func.func @mixed_matvec_vector(%m: !matrix.matrix<4x8xf16>, %x: vector<8xf64>) {
  // expected-error @+1 {{matrix element type mismatch in 'matrix.matvec': vector operand has 'f64', which does not widen exactly to the result element type 'f32'}}
  %0 = matrix.matvec %m, %x : !matrix.matrix<4x8xf16>, vector<8xf64> -> vector<4xf32>
  func.return
}

// -----

func.func @mixed_matvec_matrix(%m: !matrix.matrix<4x8xi16>, %x: vector<8xi8>) {
  // expected-error @+1 {{matrix element type mismatch in 'matrix.matvec': matrix operand has 'i16', which does not widen exactly to the result element type 'i8'}}
  %0 = matrix.matvec %m, %x : !matrix.matrix<4x8xi16>, vector<8xi8> -> vector<4xi8>
  func.return
}

// -----

func.func @mixed_matvec_bias(%m: !matrix.matrix<4x8xi8>, %x: vector<8xi8>, %b: vector<4xi8>) {
  // expected-error @+1 {{bias type 'vector<4xi8>' should be 'vector<4xi32>'}}
  %0 = matrix.matvec %m, %x, %b : !matrix.matrix<4x8xi8>, vector<8xi8>, vector<4xi8> -> vector<4xi32>
  func.return
}

// -----

func.func @unsigned_on_floats(%a: !matrix.matrix<2x2xf16>) {
  // expected-error @+1 {{'unsigned' in 'matrix.matmul' is only allowed on integer elements, but it has lhs 'f16' and rhs 'f16' and result 'f32'}}
  %0 = matrix.matmul %a, %a {unsigned} : !matrix.matrix<2x2xf16>, !matrix.matrix<2x2xf16> -> !matrix.matrix<2x2xf32>
  func.return
}

// -----

func.func @unsigned_without_widening(%a: !matrix.matrix<2x3xi32>, %b: !matrix.matrix<3x2xi32>) {
  // expected-error @+1 {{'unsigned' in 'matrix.matmul' needs an integer operand narrower than the result, but it has lhs 'i32' and rhs 'i32' and result 'i32'}}
  %0 = matrix.matmul %a, %b {unsigned} : !matrix.matrix<2x3xi32>, !matrix.matrix<3x2xi32> -> !matrix.matrix<2x2xi32>
  func.return
}

// -----

func.func @unsigned_matvec_without_widening(%m: !matrix.matrix<4x8xi16>, %x: vector<8xi16>) {
  // expected-error @+1 {{'unsigned' in 'matrix.matvec' needs an integer operand narrower than the result, but it has matrix operand 'i16' and vector operand 'i16' and result 'i16'}}
  %0 = matrix.matvec %m, %x {unsigned} : !matrix.matrix<4x8xi16>, vector<8xi16> -> vector<4xi16>
  func.return
}

// -----

func.func @mixed_container_operands(%a: !matrix.matrix<2x2xi4>) {
  // expected-error @+1 {{lhs has element type 'i4', which is a bit container without arithmetic and does not widen to the result element type 'i32'}}
  %0 = matrix.matmul %a, %a : !matrix.matrix<2x2xi4>, !matrix.matrix<2x2xi4> -> !matrix.matrix<2x2xi32>
  func.return
}

// -----

func.func @mixed_container_vector(%m: !matrix.matrix<4x8xi8>, %x: vector<8xi6>) {
  // expected-error @+1 {{vector operand has element type 'i6', which is a bit container without arithmetic and does not widen to the result element type 'i32'}}
  %0 = matrix.matvec %m, %x : !matrix.matrix<4x8xi8>, vector<8xi6> -> vector<4xi32>
  func.return
}

// -----

func.func @mixed_integer_fastmath(%a: !matrix.matrix<2x2xi8>) {
  // expected-error @+1 {{fastmath flags are only allowed on floating-point matrices, not on element type 'i32'}}
  %0 = matrix.matmul %a, %a fastmath<contract> : !matrix.matrix<2x2xi8>, !matrix.matrix<2x2xi8> -> !matrix.matrix<2x2xi32>
  func.return
}

// -----

func.func @matmul_result_shape(%a: !matrix.matrix<2x3xf32>, %b: !matrix.matrix<3x4xf32>) {
  // expected-error @+1 {{result type '!matrix.matrix<4x2xf32>' should be '!matrix.matrix<2x4xf32>'}}
  %0 = matrix.matmul %a, %b : !matrix.matrix<2x3xf32>, !matrix.matrix<3x4xf32> -> !matrix.matrix<4x2xf32>
  func.return
}

// -----

func.func @matmul_of_containers(%a: !matrix.matrix<2x2xi4>) {
  // expected-error @+1 {{lhs has element type 'i4', which is a bit container without arithmetic}}
  %0 = matrix.matmul %a, %a : !matrix.matrix<2x2xi4>, !matrix.matrix<2x2xi4> -> !matrix.matrix<2x2xi4>
  func.return
}

// -----

func.func @matmul_add_accumulator(%a: !matrix.matrix<2x3xf32>, %b: !matrix.matrix<3x4xf32>, %c: !matrix.matrix<4x2xf32>) {
  // expected-error @+1 {{matrix dimension mismatch: product is 2x4 but accumulator is 4x2}}
  %0 = matrix.matmul_add %a, %b, %c : !matrix.matrix<2x3xf32>, !matrix.matrix<3x4xf32>, !matrix.matrix<4x2xf32> -> !matrix.matrix<2x4xf32>
  func.return
}

// -----

func.func @transpose_result(%a: !matrix.matrix<2x3xf32>) {
  // expected-error @+1 {{result type '!matrix.matrix<2x3xf32>' should be '!matrix.matrix<3x2xf32>'}}
  %0 = matrix.transpose %a : !matrix.matrix<2x3xf32> -> !matrix.matrix<2x3xf32>
  func.return
}

// -----

func.func @cast_shape(%a: !matrix.matrix<4x4xi32>) {
  // expected-error @+1 {{conversion between matrix types of different shape}}
  %0 = matrix.cast %a : !matrix.matrix<4x4xi32> to !matrix.matrix<5x5xf32>
  func.return
}

// -----

func.func @cast_of_container(%a: !matrix.matrix<4x4xi6>) {
  // expected-error @+1 {{operand has element type 'i6', which is a bit container without arithmetic}}
  %0 = matrix.cast %a : !matrix.matrix<4x4xi6> to !matrix.matrix<4x4xf32>
  func.return
}

// -----

func.func @cast_unsigned_floats(%a: !matrix.matrix<4x4xf32>) {
  // expected-error @+1 {{'unsigned' needs an integer source or result}}
  %0 = matrix.cast %a {unsigned} : !matrix.matrix<4x4xf32> to !matrix.matrix<4x4xf64>
  func.return
}

// -----

func.func @cast_non_matrix(%a: vector<4xf32>) {
  // expected-error @+1 {{vector<4xf32> should be of base attribute matrix.matrix}}
  %0 = "matrix.cast"(%a) : (vector<4xf32>) -> !matrix.matrix<2x2xf32>
  func.return
}

// -----

func.func @matvec_inner(%m: !matrix.matrix<4x8xf32>, %x: vector<4xf32>) {
  // expected-error @+1 {{inner dimensions of 'matrix.matvec' do not agree: lhs is 4x8 but vector operand has 4 rows}}
  %0 = matrix.matvec %m, %x : !matrix.matrix<4x8xf32>, vector<4xf32> -> vector<4xf32>
  func.return
}

// -----

func.func @matvec_bias(%m: !matrix.matrix<4x8xf32>, %x: vector<8xf32>, %b: vector<8xf32>) {
  // expected-error @+1 {{bias type 'vector<8xf32>' should be 'vector<4xf32>'}}
  %0 = matrix.matvec %m, %x, %b : !matrix.matrix<4x8xf32>, vector<8xf32>, vector<8xf32> -> vector<4xf32>
  func.return
}

// -----

func.func @matvec_2d_vector(%m: !matrix.matrix<4x8xf32>, %x: vector<2x4xf32>) {
  // expected-error @+1 {{vector operand must be a 1-D fixed-length vector, got 'vector<2x4xf32>'}}
  %0 = matrix.matvec %m, %x : !matrix.matrix<4x8xf32>, vector<2x4xf32> -> vector<4xf32>
  func.return
}

// -----

func.func @outer_product_elements(%u: vector<4xf32>, %v: vector<2xf64>) {
  // expected-error @+1 {{vector element type mismatch: lhs has 'f32' but rhs has 'f64'}}
  %0 = matrix.outer_product %u, %v : vector<4xf32>, vector<2xf64> -> !matrix.matrix<4x2xf32>
  func.return
}

// -----

func.func @outer_product_result(%u: vector<4xf32>, %v: vector<2xf32>) {
  // expected-error @+1 {{result type '!matrix.matrix<2x4xf32>' should be '!matrix.matrix<4x2xf32>'}}
  %0 = matrix.outer_product %u, %v : vector<4xf32>, vector<2xf32> -> !matrix.matrix<2x4xf32>
  func.return
}

// -----

func.func @column_major_stride(%mem: memref<?xf32>) {
  // expected-error @+1 {{stride must be greater than or equal to the number of rows}}
  %0 = matrix.column_major_load %mem[0] stride 3 : memref<?xf32> -> !matrix.matrix<4x4xf32>
  func.return
}

// -----

func.func @row_major_stride(%mem: memref<?xf32>) {
  // expected-error @+1 {{stride must be greater than or equal to the number of columns}}
  %0 = matrix.row_major_load %mem[0] stride 2 : memref<?xf32> -> !matrix.matrix<4x3xf32>
  func.return
}

// -----

func.func @store_stride(%m: !matrix.matrix<4x4xf32>, %mem: memref<?xf32>) {
  // expected-error @+1 {{stride must be greater than or equal to the number of rows}}
  matrix.column_major_store %m, %mem[0] stride 1 : !matrix.matrix<4x4xf32>, memref<?xf32>
  func.return
}

// -----

func.func @load_past_end(%mem: memref<20xf32>) {
  // expected-error @+1 {{access past the end of the memref: the last element is at index 20 but the memref has 20 elements}}
  %0 = matrix.column_major_load %mem[2] stride 5 : memref<20xf32> -> !matrix.matrix<4x4xf32>
  func.return
}

// -----

func.func @store_past_end(%m: !matrix.matrix<2x3xf32>, %mem: memref<8xf32>) {
  // expected-error @+1 {{access past the end of the memref: the last element is at index 8 but the memref has 8 elements}}
  matrix.row_major_store %m, %mem[3] stride 3 : !matrix.matrix<2x3xf32>, memref<8xf32>
  func.return
}

// -----

func.func @negative_offset(%mem: memref<?xf32>) {
  // expected-error @+1 {{offset -4 is negative}}
  %0 = matrix.column_major_load %mem[-4] : memref<?xf32> -> !matrix.matrix<4x4xf32>
  func.return
}

// -----

func.func @load_element_type(%mem: memref<?xf64>) {
  // expected-error @+1 {{memref element type 'f64' does not match the matrix element type 'f32'}}
  %0 = matrix.column_major_load %mem[0] : memref<?xf64> -> !matrix.matrix<4x4xf32>
  func.return
}

// -----

func.func @load_2d_memref(%mem: memref<4x4xf32>) {
  // expected-error @+1 {{memory operand must be a 1-D memref, got 'memref<4x4xf32>'}}
  %0 = matrix.column_major_load %mem[0] : memref<4x4xf32> -> !matrix.matrix<4x4xf32>
  func.return
}

// -----

func.func @load_strided_layout(%mem: memref<16xf32, strided<[2]>>) {
  // expected-error @+1 {{memref must have the identity layout}}
  %0 = matrix.column_major_load %mem[0] : memref<16xf32, strided<[2]>> -> !matrix.matrix<2x2xf32>
  func.return
}

// -----

func.func @load_offset_too_large(%mem: memref<?xf32>) {
  // expected-error @+1 {{integer 9223372036854775808 does not fit in 64 bits}}
  %0 = matrix.column_major_load %mem[9223372036854775808] : memref<?xf32> -> !matrix.matrix<4x4xf32>
  func.return
}

// -----

func.func @load_result_not_matrix(%mem: memref<?xf32>) {
  // expected-error @+1 {{expected a matrix type, got 'vector<4xf32>'}}
  %0 = matrix.column_major_load %mem[0] : memref<?xf32> -> vector<4xf32>
  func.return
}

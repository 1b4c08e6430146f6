// RUN: mx-opt %s --verify-diagnostics --split-input-file

func.func @block_not_dividing_columns(%q: !matrix.matrix<4x48xi4>, %s: !matrix.matrix<4x1xi8>) {
  // expected-error @+1 {{block size 32 does not divide the number of columns 48}}
  %d = arbfp.scaled_convert_from f4e2m1fn %q, %s block 32 : !matrix.matrix<4x48xi4>, !matrix.matrix<4x1xi8> to !matrix.matrix<4x48xf32>
  func.return
}

// -----

func.func @block_not_dividing_length(%x: vector<40xf32>) {
  // expected-error @+1 {{block size 16 does not divide the vector length 40}}
  %q, %s = arbfp.scaled_convert_to f8e4m3fn %x block 16 : vector<40xf32> to vector<40xi8>, vector<2xi8>
  func.return
}

// -----

func.func @block_zero(%x: vector<32xf32>) {
  // expected-error @+1 {{block size must be at least 1, got 0}}
  %q, %s = arbfp.scaled_convert_to f8e4m3fn %x block 0 : vector<32xf32> to vector<32xi8>, vector<2xi8>
  func.return
}

// -----

func.func @wrong_scale_shape(%q: !matrix.matrix<4x64xi4>, %s: !matrix.matrix<4x4xi8>) {
  // expected-error @+1 {{scales type '!matrix.matrix<4x4xi8>' must be '!matrix.matrix<4x2xi8>': one scale per block of 32 elements}}
  %d = arbfp.scaled_convert_from f4e2m1fn %q, %s block 32 : !matrix.matrix<4x64xi4>, !matrix.matrix<4x4xi8> to !matrix.matrix<4x64xf32>
  func.return
}

// -----

func.func @scales_per_column(%q: !matrix.matrix<64x4xi4>, %s: !matrix.matrix<2x4xi8>) {
  // expected-error @+1 {{block size 32 does not divide the number of columns 4}}
  %d = arbfp.scaled_convert_from f4e2m1fn %q, %s block 32 : !matrix.matrix<64x4xi4>, !matrix.matrix<2x4xi8> to !matrix.matrix<64x4xf32>
  func.return
}

// -----

func.func @wrong_scale_container(%q: vector<64xi4>, %s: vector<2xi4>) {
  // expected-error @+1 {{'i4' is not the 8-bit container of f8e8m0fnu}}
  %d = arbfp.scaled_convert_from f4e2m1fn %q, %s block 32 : vector<64xi4>, vector<2xi4> to vector<64xf32>
  func.return
}

// -----

func.func @wrong_scale_result_shape(%x: vector<64xf32>) {
  // expected-error @+1 {{scales type 'vector<4xi8>' must be 'vector<2xi8>': one scale per block of 32 elements}}
  %q, %s = arbfp.scaled_convert_to f8e4m3fn %x block 32 : vector<64xf32> to vector<64xi8>, vector<4xi8>
  func.return
}

// -----

func.func @scales_of_another_kind(%q: !matrix.matrix<1x64xi4>, %s: vector<2xi8>) {
  // expected-error @+1 {{elements type '!matrix.matrix<1x64xi4>' and destination type '!matrix.matrix<1x64xf32>' must have the same shape, and the scales the same kind}}
  %d = arbfp.scaled_convert_from f4e2m1fn %q, %s block 32 : !matrix.matrix<1x64xi4>, vector<2xi8> to !matrix.matrix<1x64xf32>
  func.return
}

// -----

func.func @e4m3_scale_on_quantizer(%x: vector<32xf32>) {
  // expected-error @+1 {{scaled_convert_to computes f8e8m0fnu scales only, got scale format f8e4m3fn}}
  %q, %s = arbfp.scaled_convert_to f4e2m1fn %x block 16 scale f8e4m3fn : vector<32xf32> to vector<32xi4>, vector<2xi8>
  func.return
}

// -----

func.func @other_scale_format(%q: vector<32xi4>, %s: vector<2xi8>) {
  // expected-error @+1 {{scale format f8e5m2 must be f8e8m0fnu or f8e4m3fn}}
  %d = arbfp.scaled_convert_from f4e2m1fn %q, %s block 16 scale f8e5m2 : vector<32xi4>, vector<2xi8> to vector<32xf32>
  func.return
}

// -----

func.func @e8m0_elements(%q: vector<32xi8>, %s: vector<1xi8>) {
  // expected-error @+1 {{f8e8m0fnu is a scale format, not the element format of a block-scaled conversion}}
  %d = arbfp.scaled_convert_from f8e8m0fnu %q, %s block 32 : vector<32xi8>, vector<1xi8> to vector<32xf32>
  func.return
}

// -----

func.func @wrong_element_container(%q: vector<32xi8>, %s: vector<1xi8>) {
  // expected-error @+1 {{'i8' is not the 4-bit container of f4e2m1fn}}
  %d = arbfp.scaled_convert_from f4e2m1fn %q, %s block 32 : vector<32xi8>, vector<1xi8> to vector<32xf32>
  func.return
}

// -----

func.func @integer_destination(%q: vector<32xi4>, %s: vector<1xi8>) {
  // expected-error @+1 {{destination element type 'i32' must be f16, bf16, f32 or f64}}
  %d = arbfp.scaled_convert_from f4e2m1fn %q, %s block 32 : vector<32xi4>, vector<1xi8> to vector<32xi32>
  func.return
}

// -----

func.func @tf32_source(%x: vector<32xtf32>) {
  // expected-error @+1 {{source element type 'tf32' must be f16, bf16, f32 or f64}}
  %q, %s = arbfp.scaled_convert_to f4e2m1fn %x block 32 : vector<32xtf32> to vector<32xi4>, vector<1xi8>
  func.return
}

// -----

func.func @scalar_operand(%q: i4, %s: i8) {
  // expected-error @+1 {{source elements type 'i4' must be a matrix or a 1-D vector}}
  %d = arbfp.scaled_convert_from f4e2m1fn %q, %s block 1 : i4, i8 to f32
  func.return
}

// -----

func.func @two_dimensional_vector(%x: vector<2x32xf32>) {
  // expected-error @+1 {{source type 'vector<2x32xf32>' must be a matrix or a 1-D vector}}
  %q, %s = arbfp.scaled_convert_to f4e2m1fn %x block 32 : vector<2x32xf32> to vector<2x32xi4>, vector<2x1xi8>
  func.return
}

// -----

func.func @different_shapes(%q: vector<32xi4>, %s: vector<1xi8>) {
  // expected-error @+1 {{elements type 'vector<32xi4>' and destination type 'vector<64xf32>' must have the same shape, and the scales the same kind}}
  %d = arbfp.scaled_convert_from f4e2m1fn %q, %s block 32 : vector<32xi4>, vector<1xi8> to vector<64xf32>
  func.return
}

// -----

func.func @missing_block(%x: vector<32xf32>) {
  // expected-error @+1 {{Expected 'block'}}
  %q, %s = arbfp.scaled_convert_to f4e2m1fn %x : vector<32xf32> to vector<32xi4>, vector<1xi8>
  func.return
}

// -----

func.func @rounding_on_decode(%q: vector<32xi4>, %s: vector<1xi8>) {
  // expected-error @+1 {{Expected ':'}}
  %d = arbfp.scaled_convert_from f4e2m1fn %q, %s block 32 rounding upward : vector<32xi4>, vector<1xi8> to vector<32xf32>
  func.return
}

// -----

func.func @options_out_of_order(%x: vector<32xf32>) {
  // expected-error @+1 {{Expected ':'}}
  %q, %s = arbfp.scaled_convert_to f4e2m1fn %x block 32 scale_rule ceil rounding upward : vector<32xf32> to vector<32xi4>, vector<1xi8>
  func.return
}

// -----

func.func @bad_scale_rule(%x: vector<32xf32>) {
  // expected-error @+1 {{Expected `floor`, or `ceil`.}}
  %q, %s = arbfp.scaled_convert_to f4e2m1fn %x block 32 scale_rule round : vector<32xf32> to vector<32xi4>, vector<1xi8>
  func.return
}

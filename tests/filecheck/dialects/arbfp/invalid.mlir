// RUN: mx-opt %s --verify-diagnostics --split-input-file

// A wider container than the format's width (the RFC rejects them in C too).
func.func @wide_container(%b: i32) -> f32 {
  // expected-error @+1 {{'i32' is not the 8-bit container of f8e4m3fn}}
  %r = arbfp.convert_from f8e4m3fn %b : i32 to f32
  func.return %r : f32
}

// -----

func.func @narrow_container(%b: i4) -> f32 {
  // expected-error @+1 {{'i4' is not the 6-bit container of f6e2m3fn}}
  %r = arbfp.convert_from f6e2m3fn %b : i4 to f32
  func.return %r : f32
}

// -----

func.func @byte_for_fp4(%x: f16) -> i8 {
  // expected-error @+1 {{'i8' is not the 4-bit container of f4e2m1fn}}
  %r = arbfp.convert_to f4e2m1fn %x : f16 to i8
  func.return %r : i8
}

// -----

func.func @signed_container(%b: si8) -> f32 {
  // expected-error @+1 {{source element type 'si8' must be a signless integer (the 8-bit container of f8e5m2)}}
  %r = arbfp.convert_from f8e5m2 %b : si8 to f32
  func.return %r : f32
}

// -----

func.func @unsigned_result(%x: f32) -> ui8 {
  // expected-error @+1 {{result element type 'ui8' must be a signless integer (the 8-bit container of f8e5m2)}}
  %r = arbfp.convert_to f8e5m2 %x : f32 to ui8
  func.return %r : ui8
}

// -----

func.func @float_container(%x: f32) -> f32 {
  // expected-error @+1 {{source element type 'f32' must be a signless integer (the 8-bit container of f8e5m2)}}
  %r = arbfp.convert_from f8e5m2 %x : f32 to f32
  func.return %r : f32
}

// -----

func.func @integer_destination(%b: i8) -> i32 {
  // expected-error @+1 {{destination element type 'i32' must be f16, bf16, f32 or f64}}
  %r = arbfp.convert_from f8e5m2 %b : i8 to i32
  func.return %r : i32
}

// -----

func.func @f80_destination(%b: i8) -> f80 {
  // expected-error @+1 {{destination element type 'f80' must be f16, bf16, f32 or f64}}
  %r = arbfp.convert_from f8e5m2 %b : i8 to f80
  func.return %r : f80
}

// -----

func.func @tf32_source(%x: tf32) -> i8 {
  // expected-error @+1 {{source element type 'tf32' must be f16, bf16, f32 or f64}}
  %r = arbfp.convert_to f8e4m3fn %x : tf32 to i8
  func.return %r : i8
}

// -----

func.func @vector_to_scalar(%v: vector<4xi8>) -> f32 {
  // expected-error @+1 {{operand is a vector but the result is a scalar: both must be scalars, vectors or matrices}}
  %r = arbfp.convert_from f8e4m3fn %v : vector<4xi8> to f32
  func.return %r : f32
}

// -----

func.func @matrix_to_vector(%m: !matrix.matrix<2x2xf32>) -> vector<4xi8> {
  // expected-error @+1 {{operand is a matrix but the result is a vector: both must be scalars, vectors or matrices}}
  %r = arbfp.convert_to f8e4m3fn %m : !matrix.matrix<2x2xf32> to vector<4xi8>
  func.return %r : vector<4xi8>
}

// -----

func.func @vector_lengths(%v: vector<4xi8>) -> vector<8xf32> {
  // expected-error @+1 {{operand type 'vector<4xi8>' and result type 'vector<8xf32>' have different shapes}}
  %r = arbfp.convert_from f8e4m3fn %v : vector<4xi8> to vector<8xf32>
  func.return %r : vector<8xf32>
}

// -----

func.func @scalable(%v: vector<[4]xi8>) -> vector<4xf32> {
  // expected-error @+1 {{operand type 'vector<[4]xi8>' and result type 'vector<4xf32>' have different scalable dimensions}}
  %r = arbfp.convert_from f8e4m3fn %v : vector<[4]xi8> to vector<4xf32>
  func.return %r : vector<4xf32>
}

// -----

func.func @matrix_dims(%m: !matrix.matrix<2x3xf32>) -> !matrix.matrix<3x2xi8> {
  // expected-error @+1 {{operand type '!matrix.matrix<2x3xf32>' and result type '!matrix.matrix<3x2xi8>' have different shapes}}
  %r = arbfp.convert_to f8e4m3fn %m : !matrix.matrix<2x3xf32> to !matrix.matrix<3x2xi8>
  func.return %r : !matrix.matrix<3x2xi8>
}

// -----

func.func @matrix_container(%m: !matrix.matrix<2x2xi8>) -> !matrix.matrix<2x2xf16> {
  // expected-error @+1 {{'i8' is not the 6-bit container of f6e3m2fn}}
  %r = arbfp.convert_from f6e3m2fn %m : !matrix.matrix<2x2xi8> to !matrix.matrix<2x2xf16>
  func.return %r : !matrix.matrix<2x2xf16>
}

// -----

func.func @unknown_format(%b: i8) -> f32 {
  // expected-error @+1 {{Expected `f8e5m2`, `f8e4m3fn`, `f8e5m3fnu`, `f8e5m2fnuz`, `f8e4m3fnuz`, `f8e4m3`, `f8e3m4`, `f8e8m0fnu`, `f6e3m2fn`, `f6e2m3fn`, or `f4e2m1fn`.}}
  %r = arbfp.convert_from f8e4m3b11fnuz %b : i8 to f32
  func.return %r : f32
}

// -----

func.func @unknown_rounding(%x: f32) -> i8 {
  // expected-error @+1 {{Expected `nearest_even`, `nearest_away`, `toward_zero`, `upward`, or `downward`.}}
  %r = arbfp.convert_to f8e4m3fn %x rounding stochastic : f32 to i8
  func.return %r : i8
}

// -----

func.func @rounding_on_convert_from(%b: i8) -> f32 {
  // expected-error @+1 {{Expected ':'}}
  %r = arbfp.convert_from f8e4m3fn %b rounding toward_zero : i8 to f32
  func.return %r : f32
}

// -----

func.func @missing_format(%b: i8) -> f32 {
  // expected-error @+1 {{Expected `f8e5m2`}}
  %r = arbfp.convert_from %b : i8 to f32
  func.return %r : f32
}

// -----

func.func @generic_unknown_property(%b: i8) -> f32 {
  // expected-error @+1 {{property 'format' expected}}
  %r = "arbfp.convert_from"(%b) : (i8) -> f32
  func.return %r : f32
}

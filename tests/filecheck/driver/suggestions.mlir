// A misspelt op, type or attribute name is reported at the name with the
// close registered names (of its dialect, or of dialects named like it).
// RUN: mx-opt %s --split-input-file --verify-diagnostics

func.func @op(%x: f32) -> !matrix.matrix<2x2xf32> {
  // expected-error@+1 {{Operation matrix.splt is not registered; did you mean: matrix.splat}}
  %m = matrix.splt %x : !matrix.matrix<2x2xf32>
  func.return %m : !matrix.matrix<2x2xf32>
}

// -----

func.func @dialect(%x: f32) -> !matrix.matrix<2x2xf32> {
  // expected-error@+1 {{Operation matrx.splat is not registered; did you mean: matrix.splat?}}
  %m = "matrx.splat"(%x) : (f32) -> !matrix.matrix<2x2xf32>
  func.return %m : !matrix.matrix<2x2xf32>
}

// -----

func.func @upstream() -> i32 {
  // expected-error@+1 {{Operation arith.constnt is not registered; did you mean: arith.constant?}}
  %c = arith.constnt 1 : i32
  func.return %c : i32
}

// -----

// expected-error@+1 {{'matrix.matrx' is not registered; did you mean: matrix.matrix?}}
func.func @type(%a: !matrix.matrx<2x2xf32>) {
  func.return
}

// -----

// expected-error@+1 {{'matrx.matrix' is not registered; did you mean: matrix.matrix?}}
func.func @type_dialect(%a: !matrx.matrix<2x2xf32>) {
  func.return
}

// -----

// expected-error@+1 {{'arith.fastmat' is not registered; did you mean: arith.fastmath?}}
func.func @attribute() attributes {flags = #arith.fastmat<fast>} {
  func.return
}

// -----

func.func @far() {
  // No registered name is close: no hint.
  // expected-error-re@+1 {{Operation nosuch.op is not registered{{$}}}}
  "nosuch.op"() : () -> ()
  func.return
}

// Every directive form of mlir-opt's --verify-diagnostics, on a file that passes.
// RUN: mx-opt %s --split-input-file --verify-diagnostics

func.func @same_line() -> i64 {
  %0 = arith.constant 1 : i32
  func.return %0 : i32 // expected-error {{expected [i64], got [i32]}}
}

// -----

func.func @plus_one() -> i64 {
  %0 = arith.constant 1 : i32
  // expected-error@+1 {{'func.return' op Expected arguments}}
  func.return %0 : i32
}

// -----

func.func @minus_one() -> i64 {
  %0 = arith.constant 1 : i32
  func.return %0 : i32
  // expected-error@-1 {{got [i32]}}
}

// -----

func.func @below() -> i64 {
  %0 = arith.constant 1 : i32
  // expected-error@below {{got [i32]}}
  func.return %0 : i32
}

// -----

func.func @above() -> i64 {
  %0 = arith.constant 1 : i32
  func.return %0 : i32
  // expected-error@above {{got [i32]}}
}

// -----

func.func @regex() -> i64 {
  %0 = arith.constant 1 : i32
  // expected-error-re@+1 {{expected [{{i[0-9]+}}], got [i32]}}
  func.return %0 : i32
}

// -----

// Parse errors are diagnostics too.
func.func @parse_error(%a : i32) {
  // expected-error@+1 {{operand is used with type i64, but has been previously used or defined with type i32}}
  %0 = arith.addi %a, %a : i64
  func.return
}

// -----

// A value used but never defined is reported at its use, as mlir-opt does.
func.func @undefined() {
  // expected-error@+1 {{%undefined, which is not defined}}
  %0 = arith.addi %undefined, %undefined : i32
  func.return
}

// -----

// A chunk without diagnostics is printed and must not produce any.
func.func @fine() {
  func.return
}

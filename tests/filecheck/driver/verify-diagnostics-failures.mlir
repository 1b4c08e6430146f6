// --verify-diagnostics must fail on a missing, an extra, a mismatched and a
// wrong-line diagnostic, each reported where mlir-opt reports it.
// RUN: not mx-opt %s --split-input-file --verify-diagnostics 2>&1 | filecheck %s

// Missing: the op is valid.
func.func @missing() {
  // CHECK: verify-diagnostics-failures.mlir:[[# @LINE + 1]]:6: error: expected error "no such error" was not produced
  // expected-error@+1 {{no such error}}
  func.return
}

// -----

// Extra: an error nobody expected.
func.func @extra() -> i64 {
  %0 = arith.constant 1 : i32
  // CHECK: verify-diagnostics-failures.mlir:[[# @LINE + 1]]:3: error: unexpected error: 'func.return' op Expected arguments
  func.return %0 : i32
}

// -----

// Mismatched: right line, wrong text.
func.func @mismatched() -> i64 {
  %0 = arith.constant 1 : i32
  // CHECK: verify-diagnostics-failures.mlir:[[# @LINE + 3]]:3: error: unexpected error: 'func.return' op Expected arguments
  // CHECK: verify-diagnostics-failures.mlir:[[# @LINE + 1]]:6: error: expected error "got [i16]" was not produced
  // expected-error@+1 {{got [i16]}}
  func.return %0 : i32
}

// -----

// Wrong line: right text, one line off.
func.func @wrong_line() -> i64 {
  %0 = arith.constant 1 : i32
  // CHECK: verify-diagnostics-failures.mlir:[[# @LINE + 2]]:3: error: unexpected error: 'func.return' op Expected arguments
  // CHECK: verify-diagnostics-failures.mlir:[[# @LINE + 2]]:6: error: expected error "got [i32]" was not produced
  func.return %0 : i32
  // expected-error@+1 {{got [i32]}}
}

// -----

// A severity that is never produced.
func.func @warning() {
  // CHECK: verify-diagnostics-failures.mlir:[[# @LINE + 1]]:6: error: expected warning "careful" was not produced
  // expected-warning@+1 {{careful}}
  func.return
}

// -----

// Two directives for one diagnostic: the second is missing.
func.func @twice() -> i64 {
  %0 = arith.constant 1 : i32
  // CHECK: verify-diagnostics-failures.mlir:[[# @LINE + 2]]:6: error: expected error "'func.return' op" was not produced
  // expected-error@below {{got [i32]}}
  // expected-error@below {{'func.return' op}}
  func.return %0 : i32
}

// -----

// A malformed directive is an error, not silently ignored.
func.func @malformed() {
  // CHECK: verify-diagnostics-failures.mlir:[[# @LINE + 1]]:6: error: malformed expected-* directive
  // expected-error@+1 {{unterminated
  func.return
}

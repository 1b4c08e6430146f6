// Input errors that xDSL's parser or verifier lets through, or raises a Python
// exception for, are located diagnostics with exit status 1.
// RUN: mx-opt %s --split-input-file --verify-diagnostics

func.func @int_out_of_range() -> vector<2xi8> {
  // expected-error@+1 {{Integer value 256 is out of range for type i8}}
  %a = arith.constant dense<[127, 256]> : vector<2xi8>
  func.return %a : vector<2xi8>
}

// -----

func.func @matrix_int_out_of_range() -> !matrix.matrix<1x2xi8> {
  // expected-error@+1 {{Integer value -129 is out of range for type i8}}
  %a = matrix.constant dense<[[1, -129]]> : !matrix.matrix<1x2xi8>
  func.return %a : !matrix.matrix<1x2xi8>
}

// -----

func.func @hex_too_wide() -> !matrix.matrix<1x1xf16> {
  // expected-error@+1 {{hexadecimal float constant out of range for type f16}}
  %a = matrix.constant dense<[[0x17c00]]> : !matrix.matrix<1x1xf16>
  func.return %a : !matrix.matrix<1x1xf16>
}

// -----

func.func @negative_hex() -> !matrix.matrix<1x1xf32> {
  // expected-error@+1 {{hexadecimal float literal should not have a leading minus}}
  %a = matrix.constant dense<[[-0x7fc00000]]> : !matrix.matrix<1x1xf32>
  func.return %a : !matrix.matrix<1x1xf32>
}

// -----

func.func @negative_hex_scalar() -> f32 {
  // expected-error@+1 {{hexadecimal float literal should not have a leading minus}}
  %a = arith.constant -0x7fc00000 : f32
  func.return %a : f32
}

// -----

// index is 64 bits: a literal beyond 2^63 - 1 was kept and then wrapped by the lowering.
func.func @index_above_range() -> index {
  // expected-error@+1 {{integer value 9223372036854775808 is out of range for type index}}
  %a = arith.constant 9223372036854775808 : index
  func.return %a : index
}

// -----

func.func @index_below_range() -> index {
  // expected-error@+1 {{integer value -9223372036854775809 is out of range for type index}}
  %a = arith.constant -9223372036854775809 : index
  func.return %a : index
}

// -----

func.func @index_attribute_out_of_range() attributes {bound = 18446744073709551621 : index} {
  // expected-error@-1 {{integer value 18446744073709551621 is out of range for type index}}
  func.return
}

// -----

func.func @raw_data_size() -> !matrix.matrix<1x2xf32> {
  // expected-error@+1 {{hexadecimal dense literal of 6 bytes does not hold 2 elements of f32 (8 bytes)}}
  %a = matrix.constant dense<"0x0000803F0000"> : !matrix.matrix<1x2xf32>
  func.return %a : !matrix.matrix<1x2xf32>
}

// -----

func.func @use_before_def() -> i32 {
  // expected-error@+1 {{'arith.addi' op operand #0 does not dominate this use}}
  %b = arith.addi %a, %a : i32
  %a = arith.constant 1 : i32
  func.return %b : i32
}

// -----

// A forward reference into a value defined later, inside a nested region.
func.func @into_nested_region(%c: i1) -> i32 {
  // expected-error@+1 {{'arith.addi' op operand #0 does not dominate this use}}
  %z = arith.addi %y, %y : i32
  scf.if %c {
    %y = arith.constant 1 : i32
  }
  func.return %z : i32
}

// -----

// A value of a sibling region is not visible.
func.func @sibling_region(%c: i1) -> i32 {
  %x = scf.if %c -> (i32) {
    // expected-error@+1 {{'scf.yield' op operand #0 does not dominate this use}}
    scf.yield %y : i32
  } else {
    %y = arith.constant 1 : i32
    scf.yield %y : i32
  }
  func.return %x : i32
}

// -----

// A block that does not dominate its use.
func.func @branches(%c: i1) -> i32 {
  cf.cond_br %c, ^bb1, ^bb2
^bb1:
  %a = arith.constant 1 : i32
  cf.br ^bb3
^bb2:
  cf.br ^bb3
^bb3:
  // expected-error@+1 {{'func.return' op operand #0 does not dominate this use}}
  func.return %a : i32
}

// -----

// Dominance along branches is fine, and so is a use in an unreachable block.
func.func @dominated(%c: i1) -> i32 {
  %a = arith.constant 1 : i32
  cf.cond_br %c, ^bb1, ^bb2
^bb1:
  %b = arith.addi %a, %a : i32
  cf.br ^bb2
^bb2:
  func.return %a : i32
^bb3:
  %d = arith.addi %b, %b : i32
  func.return %d : i32
}

// -----

func.func @duplicate_label() {
  cf.br ^bb1
^bb1:
  cf.br ^bb1
// expected-error@+1 {{re-declaration of block 'bb1'}}
^bb1:
  func.return
}

// -----

func.func @unknown_op(%a: !matrix.matrix<2x2xf32>) -> !matrix.matrix<2x2xf32> {
  // expected-error@+1 {{Operation matrix.inverse is not registered}}
  %b = matrix.inverse %a : !matrix.matrix<2x2xf32>
  func.return %b : !matrix.matrix<2x2xf32>
}

// -----

func.func @f() {
  func.return
}
// expected-error@+1 {{'func.func' op redefinition of symbol 'f'}}
func.func @f() {
  func.return
}

// -----

func.func @block_without_terminator() {
  cf.br ^bb1
^bb1:
  // expected-error@+1 {{'arith.constant' op Operation arith.constant terminates block in multi-block region but is not a terminator}}
  %a = arith.constant 1 : i32
}

// -----

// expected-error@+1 {{'func.func' op empty block: expect at least a terminator}}
func.func @empty_block() {
  cf.br ^bb1
^bb1:
}

// -----

// An op parser that takes its body for a single block (xDSL's affine.for
// raised a ValueError): a located error at the op.
func.func @loop_body_of_two_blocks(%x: i32) {
  // expected-error@+1 {{malformed 'affine.for': 'block' property of Region class is only available for single-block regions}}
  affine.for %i = 0 to 4 {
    %y = arith.addi %x, %x : i32
  ^bb1:
    affine.yield
  }
  func.return
}

// -----

// A verifier that raises a bare Exception (xDSL's memref.load and
// memref.store count their indices so): a located error at the op.
func.func @load_with_too_few_indices(%m: memref<4x4xf32>, %i: index) -> f32 {
  // expected-error@+1 {{'memref.load' op expected an index for each dimension}}
  %v = memref.load %m[%i] : memref<4x4xf32>
  func.return %v : f32
}

// -----

func.func @store_with_no_index(%m: memref<?xf64>, %v: f64) {
  // expected-error@+1 {{'memref.store' op Expected an index for each dimension}}
  memref.store %v, %m[] : memref<?xf64>
  func.return
}

// -----

// An op parser that reads an operand before its own body (affine.for's
// iter_args) kept a forward reference to a value the body defines: the
// verifier then raised a ValueError. A located error at the op.
func.func @iter_arg_defined_in_the_body(%a: i64) -> i64 {
  // expected-error@+1 {{'affine.for' op operand #0 uses a value that is not defined where it is used}}
  %r = affine.for %i = 0 to 2 iter_args(%x = %y) -> (i64) {
    %y = arith.addi %x, %a : i64
    affine.yield %y : i64
  }
  func.return %r : i64
}

// -----

func.func @scf_iter_arg_defined_in_the_body(%a: i64, %n: index) -> i64 {
  // expected-error@+1 {{'scf.for' op operand #3 uses a value that is not defined where it is used}}
  %r = scf.for %i = %n to %n step %n iter_args(%x = %y) -> (i64) {
    %y = arith.addi %x, %a : i64
    scf.yield %y : i64
  }
  func.return %r : i64
}

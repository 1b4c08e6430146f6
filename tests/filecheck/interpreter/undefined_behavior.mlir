// Undefined behaviour is a located runtime error with exit status 1.
// RUN: not mx-run %s --entry div_zero 2>&1 | filecheck %s --check-prefix=DIV-ZERO
// RUN: not mx-run %s --entry div_overflow 2>&1 | filecheck %s --check-prefix=DIV-OVERFLOW
// RUN: not mx-run %s --entry extract_out_of_range 2>&1 | filecheck %s --check-prefix=EXTRACT
// RUN: not mx-run %s --entry insert_negative 2>&1 | filecheck %s --check-prefix=INSERT
// RUN: not mx-run %s --entry cast_nan 2>&1 | filecheck %s --check-prefix=CAST-NAN
// RUN: not mx-run %s --entry cast_out_of_range 2>&1 | filecheck %s --check-prefix=CAST-RANGE
// RUN: not mx-run %s --entry load_past_end 2>&1 | filecheck %s --check-prefix=LOAD
// RUN: not mx-run %s --entry store_small_stride 2>&1 | filecheck %s --check-prefix=STORE
// RUN: not mx-run %s --entry load_huge_offset 2>&1 | filecheck %s --check-prefix=HUGE-OFFSET
// RUN: not mx-run %s --entry store_huge_stride 2>&1 | filecheck %s --check-prefix=HUGE-STRIDE
// RUN: not mx-run %s --entry memref_load_past_end 2>&1 | filecheck %s --check-prefix=MEMREF-LOAD
// RUN: not mx-run %s --entry memref_store_past_dimension --arg 1.0 2>&1 | filecheck %s --check-prefix=MEMREF-STORE
// RUN: not mx-run %s --entry affine_load_negative 2>&1 | filecheck %s --check-prefix=AFFINE-LOAD
// RUN: not mx-run %s --entry missing 2>&1 | filecheck %s --check-prefix=MISSING
// RUN: not mx-run %s --entry floordiv_zero --arg 7 --arg 0 2>&1 | filecheck %s --check-prefix=FLOORDIV-ZERO
// RUN: not mx-run %s --entry ceildiv_overflow --arg -128 --arg -1 2>&1 | filecheck %s --check-prefix=CEILDIV-OVERFLOW

func.func @div_zero() -> !matrix.matrix<2x2xi32> {
  %a = matrix.constant dense<[[1, 2], [3, 4]]> : !matrix.matrix<2x2xi32>
  %b = matrix.constant dense<[[1, 2], [0, 4]]> : !matrix.matrix<2x2xi32>
  %q = matrix.div %a, %b {unsigned} : !matrix.matrix<2x2xi32>
  func.return %q : !matrix.matrix<2x2xi32>
}
// DIV-ZERO: undefined_behavior.mlir:[[# @LINE - 3]]:3: error: 'matrix.div' op runtime error: undefined behaviour: integer division by zero

func.func @div_overflow() -> !matrix.matrix<1x2xi16> {
  %a = matrix.constant dense<[[-32768, 5]]> : !matrix.matrix<1x2xi16>
  %b = matrix.constant dense<[[-1, -1]]> : !matrix.matrix<1x2xi16>
  %q = matrix.div %a, %b : !matrix.matrix<1x2xi16>
  func.return %q : !matrix.matrix<1x2xi16>
}
// DIV-OVERFLOW: undefined_behavior.mlir:[[# @LINE - 3]]:3: error: 'matrix.div' op runtime error: undefined behaviour: signed integer division overflow (-32768 / -1)

func.func @extract_out_of_range() -> f32 {
  %a = matrix.constant dense<1.0> : !matrix.matrix<2x3xf32>
  // A constant index is still dynamic: the verifier does not check it.
  %j = arith.constant 3 : index
  %e = matrix.extract %a[1, %j] : !matrix.matrix<2x3xf32>
  func.return %e : f32
}
// EXTRACT: undefined_behavior.mlir:[[# @LINE - 3]]:3: error: 'matrix.extract' op runtime error: undefined behaviour: column index 3 is outside [0, 3)

func.func @insert_negative() -> !matrix.matrix<2x3xf32> {
  %a = matrix.constant dense<1.0> : !matrix.matrix<2x3xf32>
  %x = arith.constant 2.0 : f32
  %i = arith.constant -1 : index
  %b = matrix.insert %x, %a[%i, 0] : !matrix.matrix<2x3xf32>
  func.return %b : !matrix.matrix<2x3xf32>
}
// INSERT: undefined_behavior.mlir:[[# @LINE - 3]]:3: error: 'matrix.insert' op runtime error: undefined behaviour: row index -1 is outside [0, 2)

func.func @cast_nan() -> !matrix.matrix<1x2xi32> {
  %z = matrix.constant dense<[[1.0, 0.0]]> : !matrix.matrix<1x2xf32>
  %a = matrix.div %z, %z : !matrix.matrix<1x2xf32>
  %b = matrix.cast %a : !matrix.matrix<1x2xf32> to !matrix.matrix<1x2xi32>
  func.return %b : !matrix.matrix<1x2xi32>
}
// CAST-NAN: undefined_behavior.mlir:[[# @LINE - 3]]:3: error: 'matrix.cast' op runtime error: undefined behaviour: conversion of nan to a 32-bit integer is out of range

func.func @cast_out_of_range() -> !matrix.matrix<1x2xi8> {
  %a = matrix.constant dense<[[1.0, 256.0]]> : !matrix.matrix<1x2xf64>
  %b = matrix.cast %a {unsigned} : !matrix.matrix<1x2xf64> to !matrix.matrix<1x2xi8>
  func.return %b : !matrix.matrix<1x2xi8>
}
// CAST-RANGE: undefined_behavior.mlir:[[# @LINE - 3]]:3: error: 'matrix.cast' op runtime error: undefined behaviour: conversion of 256.0 to a 8-bit unsigned integer is out of range

func.func @load_past_end() -> !matrix.matrix<2x2xf32> {
  %mem = memref.alloc() : memref<8xf32>
  %off = arith.constant 5 : index
  %m = matrix.column_major_load %mem[%off] : memref<8xf32> -> !matrix.matrix<2x2xf32>
  func.return %m : !matrix.matrix<2x2xf32>
}
// LOAD: undefined_behavior.mlir:[[# @LINE - 3]]:3: error: 'matrix.column_major_load' op runtime error: undefined behaviour: access past the end of the memory: element at index 8, but it has 8 elements

func.func @store_small_stride() {
  %mem = memref.alloc() : memref<8xf32>
  %m = matrix.constant dense<1.0> : !matrix.matrix<2x2xf32>
  %s = arith.constant 1 : index
  matrix.row_major_store %m, %mem[0] stride %s : !matrix.matrix<2x2xf32>, memref<8xf32>
  func.return
}
// STORE: undefined_behavior.mlir:[[# @LINE - 3]]:3: error: 'matrix.row_major_store' op runtime error: undefined behaviour: stride 1 is less than the number of columns (2)

// Offsets and strides near 2^63 must not wrap around in the position
// arithmetic and pass the bounds check.
func.func @load_huge_offset() -> !matrix.matrix<2x2xf32> {
  %mem = memref.alloc() : memref<8xf32>
  %off = arith.constant 9223372036854775806 : index
  %s = arith.constant 4611686018427387904 : index
  %m = matrix.column_major_load %mem[%off] stride %s : memref<8xf32> -> !matrix.matrix<2x2xf32>
  func.return %m : !matrix.matrix<2x2xf32>
}
// HUGE-OFFSET: undefined_behavior.mlir:[[# @LINE - 3]]:3: error: 'matrix.column_major_load' op runtime error: undefined behaviour: access past the end of the memory: element at index 13835058055282163711, but it has 8 elements

func.func @store_huge_stride() {
  %mem = memref.alloc() : memref<8xf32>
  %m = matrix.constant dense<1.0> : !matrix.matrix<3x2xf32>
  %s = arith.constant 9223372036854775807 : index
  matrix.row_major_store %m, %mem[0] stride %s : !matrix.matrix<3x2xf32>, memref<8xf32>
  func.return
}
// HUGE-STRIDE: undefined_behavior.mlir:[[# @LINE - 3]]:3: error: 'matrix.row_major_store' op runtime error: undefined behaviour: access past the end of the memory: element at index 18446744073709551615, but it has 8 elements

func.func @memref_load_past_end() -> f32 {
  %mem = memref.alloc() : memref<8xf32>
  %i = arith.constant 9 : index
  %x = memref.load %mem[%i] : memref<8xf32>
  func.return %x : f32
}
// MEMREF-LOAD: undefined_behavior.mlir:[[# @LINE - 3]]:3: error: 'memref.load' op runtime error: undefined behaviour: memref index 9 is outside [0, 8) in dimension 0

// Inside the buffer but past its dimension: still out of bounds.
func.func @memref_store_past_dimension(%x: f32) {
  %mem = memref.alloc() : memref<4x4xf32>
  %i = arith.constant 0 : index
  %j = arith.constant 4 : index
  memref.store %x, %mem[%i, %j] : memref<4x4xf32>
  func.return
}
// MEMREF-STORE: undefined_behavior.mlir:[[# @LINE - 3]]:3: error: 'memref.store' op runtime error: undefined behaviour: memref index 4 is outside [0, 4) in dimension 1

func.func @affine_load_negative() -> f32 {
  %mem = memref.alloc() : memref<8xf32>
  %i = arith.constant 0 : index
  %x = affine.load %mem[%i - 1] : memref<8xf32>
  func.return %x : f32
}
// AFFINE-LOAD: undefined_behavior.mlir:[[# @LINE - 3]]:3: error: 'affine.load' op runtime error: undefined behaviour: memref index -1 is outside [0, 8) in dimension 0

// MISSING: error: no function @missing to run

// xDSL's floordivsi asserted on a zero divisor (an internal error).
func.func @floordiv_zero(%a: i32, %b: i32) -> i32 {
  %q = arith.floordivsi %a, %b : i32
  func.return %q : i32
}
// FLOORDIV-ZERO: undefined_behavior.mlir:[[# @LINE - 3]]:3: error: 'arith.floordivsi' op runtime error: undefined behaviour: integer division by zero

func.func @ceildiv_overflow(%a: i8, %b: i8) -> i8 {
  %q = arith.ceildivsi %a, %b : i8
  func.return %q : i8
}
// CEILDIV-OVERFLOW: undefined_behavior.mlir:[[# @LINE - 3]]:3: error: 'arith.ceildivsi' op runtime error: undefined behaviour: signed integer division overflow (-128 / -1)

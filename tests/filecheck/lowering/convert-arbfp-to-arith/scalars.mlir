// RUN: mx-opt %s -p convert-arbfp-to-arith | filecheck %s
// RUN: mx-opt %s -p convert-arbfp-to-arith | filecheck %s --check-prefix=BODY

// CHECK lines follow the ops in order; BODY-NOT lines between a BODY-LABEL and
// the function's `func.return` hold for the whole lowered body.

// Scalar conversions become branch-free arith: no arbfp, no calls, no control
// flow, and no truncf to bf16 (the bf16 result is the high half of f32 bits).

// BODY-LABEL: func.func @from_f8e4m3fn_bf16
// BODY-NOT: arbfp
// BODY-NOT: arith.truncf {{.*}} to bf16
// BODY-NOT: func.call
// BODY: func.return
// CHECK-LABEL: func.func @from_f8e4m3fn_bf16
// CHECK: arith.extui %b : i8 to i32
// (fewer exponent bits than f16: placed in an f16, converted, scaled by 2^8)
// CHECK: arith.extui %b : i8 to i16
// CHECK: arith.bitcast {{.*}} : i16 to f16
// CHECK: arith.extf {{.*}} : f16 to f32
// CHECK: arith.mulf
// CHECK: arith.shrui
// CHECK: arith.trunci {{.*}} : i32 to i16
// CHECK: %{{.*}} = arith.bitcast {{.*}} : i16 to bf16
// CHECK: func.return
func.func @from_f8e4m3fn_bf16(%b: i8) -> bf16 {
  %r = arbfp.convert_from f8e4m3fn %b : i8 to bf16
  func.return %r : bf16
}

// f8e5m2 is the upper byte of f16 (same exponent width and bias, IEEE inf and
// NaN): its bits are placed, nothing else. f8e5m2fnuz (bias 16) is not.
// CHECK-LABEL: func.func @from_f8e5m2_f16
// CHECK-NEXT: %[[W:.*]] = arith.extui %b : i8 to i16
// CHECK-NEXT: %[[S:.*]] = arith.constant 8 : i16
// CHECK-NEXT: %[[P:.*]] = arith.shli %[[W]], %[[S]] : i16
// CHECK-NEXT: %[[R:.*]] = arith.bitcast %[[P]] : i16 to f16
// CHECK-NEXT: func.return %[[R]] : f16
func.func @from_f8e5m2_f16(%b: i8) -> f16 {
  %r = arbfp.convert_from f8e5m2 %b : i8 to f16
  func.return %r : f16
}
// CHECK-LABEL: func.func @from_f8e5m2fnuz_f16
// CHECK: arith.subf
// CHECK: arith.truncf {{.*}} : f32 to f16
func.func @from_f8e5m2fnuz_f16(%b: i8) -> f16 {
  %r = arbfp.convert_from f8e5m2fnuz %b : i8 to f16
  func.return %r : f16
}

// f8e8m0fnu needs no scaling: its exponent field is f32's, bias 127.
// BODY-LABEL: func.func @from_f8e8m0fnu_f64
// BODY-NOT: arith.mulf
// BODY: func.return
// CHECK-LABEL: func.func @from_f8e8m0fnu_f64
// CHECK: arith.extf {{.*}} : f32 to f64
func.func @from_f8e8m0fnu_f64(%b: i8) -> f64 {
  %r = arbfp.convert_from f8e8m0fnu %b : i8 to f64
  func.return %r : f64
}

// f16/bf16/f32 sources round in i32 (exactly widened to f32), f64 in i64.
// BODY-LABEL: func.func @to_f4e2m1fn
// BODY-NOT: arbfp
// BODY-NOT: func.call
// BODY: func.return
// CHECK-LABEL: func.func @to_f4e2m1fn
// CHECK: arith.extf %x : f16 to f32
// CHECK: arith.bitcast {{.*}} : f32 to i32
// CHECK: arith.trunci {{.*}} : i32 to i4
func.func @to_f4e2m1fn(%x: f16) -> i4 {
  %r = arbfp.convert_to f4e2m1fn %x rounding toward_zero saturate : f16 to i4
  func.return %r : i4
}

// bf16 sources are widened with integer shifts, never with extf from bf16.
// BODY-LABEL: func.func @to_f8e5m2_from_bf16
// BODY-NOT: arith.extf
// BODY: func.return
// CHECK-LABEL: func.func @to_f8e5m2_from_bf16
// CHECK: arith.bitcast %x : bf16 to i16
// CHECK: arith.trunci {{.*}} : i32 to i8
func.func @to_f8e5m2_from_bf16(%x: bf16) -> i8 {
  %r = arbfp.convert_to f8e5m2 %x : bf16 to i8
  func.return %r : i8
}

// Every mode rounds with fixed shifts, and a float add (rounding to nearest
// even) for the format's subnormal range, corrected by the exact difference
// in the other modes: in i32/f32 from f32, in i64/f64 from f64.
// BODY-LABEL: func.func @to_f8e4m3fn_nearest_even
// BODY-NOT: arith.maxsi
// BODY: func.return
// CHECK-LABEL: func.func @to_f8e4m3fn_nearest_even
// CHECK: arith.addf %{{.*}}, %{{.*}} : f32
// CHECK: arith.trunci {{.*}} : i32 to i8
func.func @to_f8e4m3fn_nearest_even(%x: f32) -> i8 {
  %r = arbfp.convert_to f8e4m3fn %x saturate : f32 to i8
  func.return %r : i8
}
// BODY-LABEL: func.func @to_f8e4m3fn_upward
// BODY-NOT: arith.maxsi
// BODY: func.return
// CHECK-LABEL: func.func @to_f8e4m3fn_upward
// CHECK: arith.addf %{{.*}}, %{{.*}} : f32
// CHECK: arith.subf %{{.*}}, %{{.*}} : f32
// CHECK: arith.subf %{{.*}}, %{{.*}} : f32
// CHECK: arith.trunci {{.*}} : i32 to i8
func.func @to_f8e4m3fn_upward(%x: f32) -> i8 {
  %r = arbfp.convert_to f8e4m3fn %x rounding upward : f32 to i8
  func.return %r : i8
}
// BODY-LABEL: func.func @to_f8e4m3fn_from_f64
// BODY-NOT: arith.maxsi
// BODY: func.return
// CHECK-LABEL: func.func @to_f8e4m3fn_from_f64
// CHECK: arith.addf %{{.*}}, %{{.*}} : f64
// CHECK: arith.trunci {{.*}} : i64 to i8
func.func @to_f8e4m3fn_from_f64(%x: f64) -> i8 {
  %r = arbfp.convert_to f8e4m3fn %x rounding nearest_away saturate : f64 to i8
  func.return %r : i8
}

// f8e8m0fnu (no subnormals, 2^-127 below f32's normal range, ties up with a
// 1-bit significand) shifts f64 bits by a variable amount.
// BODY-LABEL: func.func @to_f8e8m0fnu_from_f32
// BODY-NOT: arith.addf
// BODY: func.return
// CHECK-LABEL: func.func @to_f8e8m0fnu_from_f32
// CHECK: arith.extf %x : f32 to f64
// CHECK: arith.maxsi
// CHECK: arith.trunci {{.*}} : i64 to i8
func.func @to_f8e8m0fnu_from_f32(%x: f32) -> i8 {
  %r = arbfp.convert_to f8e8m0fnu %x rounding upward : f32 to i8
  func.return %r : i8
}

// Conditions are integer masks (sign of a no-wrap difference), not i1
// compares and selects, so the same code serves vectors (vectors.mlir).
// BODY-LABEL: func.func @masks_not_selects
// BODY-NOT: arith.cmpi
// BODY-NOT: arith.select
// BODY: func.return
// CHECK-LABEL: func.func @masks_not_selects
// CHECK: arith.subi {{.*}} overflow<nsw> : i64
// CHECK: arith.shrsi
// CHECK: func.return
func.func @masks_not_selects(%x: f64) -> i8 {
  %r = arbfp.convert_to f8e5m3fnu %x rounding nearest_away : f64 to i8
  func.return %r : i8
}

// Matrices are left to convert-matrix-to-affine, which emits a scalar
// conversion per element (matrices.mlir).
// CHECK-LABEL: func.func @matrix_left
// CHECK: arbfp.convert_from f8e5m2 %m : !matrix.matrix<2x2xi8> to !matrix.matrix<2x2xf32>
func.func @matrix_left(%m: !matrix.matrix<2x2xi8>) -> !matrix.matrix<2x2xf32> {
  %r = arbfp.convert_from f8e5m2 %m : !matrix.matrix<2x2xi8> to !matrix.matrix<2x2xf32>
  func.return %r : !matrix.matrix<2x2xf32>
}

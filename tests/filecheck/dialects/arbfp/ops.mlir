// RUN: mx-opt %s | mx-opt | filecheck %s
// RUN: mx-opt %s --print-op-generic | mx-opt | filecheck %s

// Every format in every form (scalar, vector, matrix), and every option of convert_to.

// CHECK-LABEL: func.func @f8e5m2
func.func @f8e5m2(%b: i8, %v: vector<8xi8>, %q: !matrix.matrix<3x5xi8>, %x: f16, %w: vector<2x4xbf16>, %m: !matrix.matrix<5x3xf16>) {
  // CHECK-NEXT: %from_s = arbfp.convert_from f8e5m2 %b : i8 to f16
  %from_s = arbfp.convert_from f8e5m2 %b : i8 to f16
  // CHECK-NEXT: %from_v = arbfp.convert_from f8e5m2 %v : vector<8xi8> to vector<8xbf16>
  %from_v = arbfp.convert_from f8e5m2 %v : vector<8xi8> to vector<8xbf16>
  // CHECK-NEXT: %from_m = arbfp.convert_from f8e5m2 %q : !matrix.matrix<3x5xi8> to !matrix.matrix<3x5xf16>
  %from_m = arbfp.convert_from f8e5m2 %q : !matrix.matrix<3x5xi8> to !matrix.matrix<3x5xf16>
  // CHECK-NEXT: %to_s = arbfp.convert_to f8e5m2 %x : f16 to i8
  %to_s = arbfp.convert_to f8e5m2 %x : f16 to i8
  // CHECK-NEXT: %to_v = arbfp.convert_to f8e5m2 %w saturate : vector<2x4xbf16> to vector<2x4xi8>
  %to_v = arbfp.convert_to f8e5m2 %w saturate : vector<2x4xbf16> to vector<2x4xi8>
  // CHECK-NEXT: %to_m = arbfp.convert_to f8e5m2 %m rounding nearest_away : !matrix.matrix<5x3xf16> to !matrix.matrix<5x3xi8>
  %to_m = arbfp.convert_to f8e5m2 %m rounding nearest_away : !matrix.matrix<5x3xf16> to !matrix.matrix<5x3xi8>
  // CHECK-NEXT: %to_ms = arbfp.convert_to f8e5m2 %m rounding toward_zero saturate : !matrix.matrix<5x3xf16> to !matrix.matrix<5x3xi8>
  %to_ms = arbfp.convert_to f8e5m2 %m rounding toward_zero saturate : !matrix.matrix<5x3xf16> to !matrix.matrix<5x3xi8>
  func.return
}

// CHECK-LABEL: func.func @f8e4m3fn
func.func @f8e4m3fn(%b: i8, %v: vector<8xi8>, %q: !matrix.matrix<3x5xi8>, %x: bf16, %w: vector<2x4xf32>, %m: !matrix.matrix<5x3xbf16>) {
  // CHECK-NEXT: %from_s = arbfp.convert_from f8e4m3fn %b : i8 to bf16
  %from_s = arbfp.convert_from f8e4m3fn %b : i8 to bf16
  // CHECK-NEXT: %from_v = arbfp.convert_from f8e4m3fn %v : vector<8xi8> to vector<8xf32>
  %from_v = arbfp.convert_from f8e4m3fn %v : vector<8xi8> to vector<8xf32>
  // CHECK-NEXT: %from_m = arbfp.convert_from f8e4m3fn %q : !matrix.matrix<3x5xi8> to !matrix.matrix<3x5xbf16>
  %from_m = arbfp.convert_from f8e4m3fn %q : !matrix.matrix<3x5xi8> to !matrix.matrix<3x5xbf16>
  // CHECK-NEXT: %to_s = arbfp.convert_to f8e4m3fn %x : bf16 to i8
  %to_s = arbfp.convert_to f8e4m3fn %x : bf16 to i8
  // CHECK-NEXT: %to_v = arbfp.convert_to f8e4m3fn %w saturate : vector<2x4xf32> to vector<2x4xi8>
  %to_v = arbfp.convert_to f8e4m3fn %w saturate : vector<2x4xf32> to vector<2x4xi8>
  // CHECK-NEXT: %to_m = arbfp.convert_to f8e4m3fn %m rounding toward_zero : !matrix.matrix<5x3xbf16> to !matrix.matrix<5x3xi8>
  %to_m = arbfp.convert_to f8e4m3fn %m rounding toward_zero : !matrix.matrix<5x3xbf16> to !matrix.matrix<5x3xi8>
  // CHECK-NEXT: %to_ms = arbfp.convert_to f8e4m3fn %m rounding upward saturate : !matrix.matrix<5x3xbf16> to !matrix.matrix<5x3xi8>
  %to_ms = arbfp.convert_to f8e4m3fn %m rounding upward saturate : !matrix.matrix<5x3xbf16> to !matrix.matrix<5x3xi8>
  func.return
}

// CHECK-LABEL: func.func @f8e5m3fnu
func.func @f8e5m3fnu(%b: i8, %v: vector<8xi8>, %q: !matrix.matrix<3x5xi8>, %x: f32, %w: vector<2x4xf64>, %m: !matrix.matrix<5x3xf32>) {
  // CHECK-NEXT: %from_s = arbfp.convert_from f8e5m3fnu %b : i8 to f32
  %from_s = arbfp.convert_from f8e5m3fnu %b : i8 to f32
  // CHECK-NEXT: %from_v = arbfp.convert_from f8e5m3fnu %v : vector<8xi8> to vector<8xf64>
  %from_v = arbfp.convert_from f8e5m3fnu %v : vector<8xi8> to vector<8xf64>
  // CHECK-NEXT: %from_m = arbfp.convert_from f8e5m3fnu %q : !matrix.matrix<3x5xi8> to !matrix.matrix<3x5xf32>
  %from_m = arbfp.convert_from f8e5m3fnu %q : !matrix.matrix<3x5xi8> to !matrix.matrix<3x5xf32>
  // CHECK-NEXT: %to_s = arbfp.convert_to f8e5m3fnu %x : f32 to i8
  %to_s = arbfp.convert_to f8e5m3fnu %x : f32 to i8
  // CHECK-NEXT: %to_v = arbfp.convert_to f8e5m3fnu %w saturate : vector<2x4xf64> to vector<2x4xi8>
  %to_v = arbfp.convert_to f8e5m3fnu %w saturate : vector<2x4xf64> to vector<2x4xi8>
  // CHECK-NEXT: %to_m = arbfp.convert_to f8e5m3fnu %m rounding upward : !matrix.matrix<5x3xf32> to !matrix.matrix<5x3xi8>
  %to_m = arbfp.convert_to f8e5m3fnu %m rounding upward : !matrix.matrix<5x3xf32> to !matrix.matrix<5x3xi8>
  // CHECK-NEXT: %to_ms = arbfp.convert_to f8e5m3fnu %m rounding downward saturate : !matrix.matrix<5x3xf32> to !matrix.matrix<5x3xi8>
  %to_ms = arbfp.convert_to f8e5m3fnu %m rounding downward saturate : !matrix.matrix<5x3xf32> to !matrix.matrix<5x3xi8>
  func.return
}

// CHECK-LABEL: func.func @f8e5m2fnuz
func.func @f8e5m2fnuz(%b: i8, %v: vector<8xi8>, %q: !matrix.matrix<3x5xi8>, %x: f64, %w: vector<2x4xf16>, %m: !matrix.matrix<5x3xf64>) {
  // CHECK-NEXT: %from_s = arbfp.convert_from f8e5m2fnuz %b : i8 to f64
  %from_s = arbfp.convert_from f8e5m2fnuz %b : i8 to f64
  // CHECK-NEXT: %from_v = arbfp.convert_from f8e5m2fnuz %v : vector<8xi8> to vector<8xf16>
  %from_v = arbfp.convert_from f8e5m2fnuz %v : vector<8xi8> to vector<8xf16>
  // CHECK-NEXT: %from_m = arbfp.convert_from f8e5m2fnuz %q : !matrix.matrix<3x5xi8> to !matrix.matrix<3x5xf64>
  %from_m = arbfp.convert_from f8e5m2fnuz %q : !matrix.matrix<3x5xi8> to !matrix.matrix<3x5xf64>
  // CHECK-NEXT: %to_s = arbfp.convert_to f8e5m2fnuz %x : f64 to i8
  %to_s = arbfp.convert_to f8e5m2fnuz %x : f64 to i8
  // CHECK-NEXT: %to_v = arbfp.convert_to f8e5m2fnuz %w saturate : vector<2x4xf16> to vector<2x4xi8>
  %to_v = arbfp.convert_to f8e5m2fnuz %w saturate : vector<2x4xf16> to vector<2x4xi8>
  // CHECK-NEXT: %to_m = arbfp.convert_to f8e5m2fnuz %m rounding downward : !matrix.matrix<5x3xf64> to !matrix.matrix<5x3xi8>
  %to_m = arbfp.convert_to f8e5m2fnuz %m rounding downward : !matrix.matrix<5x3xf64> to !matrix.matrix<5x3xi8>
  // CHECK-NEXT: %to_ms = arbfp.convert_to f8e5m2fnuz %m rounding nearest_away saturate : !matrix.matrix<5x3xf64> to !matrix.matrix<5x3xi8>
  %to_ms = arbfp.convert_to f8e5m2fnuz %m rounding nearest_away saturate : !matrix.matrix<5x3xf64> to !matrix.matrix<5x3xi8>
  func.return
}

// CHECK-LABEL: func.func @f8e4m3fnuz
func.func @f8e4m3fnuz(%b: i8, %v: vector<8xi8>, %q: !matrix.matrix<3x5xi8>, %x: f16, %w: vector<2x4xbf16>, %m: !matrix.matrix<5x3xf16>) {
  // CHECK-NEXT: %from_s = arbfp.convert_from f8e4m3fnuz %b : i8 to f16
  %from_s = arbfp.convert_from f8e4m3fnuz %b : i8 to f16
  // CHECK-NEXT: %from_v = arbfp.convert_from f8e4m3fnuz %v : vector<8xi8> to vector<8xbf16>
  %from_v = arbfp.convert_from f8e4m3fnuz %v : vector<8xi8> to vector<8xbf16>
  // CHECK-NEXT: %from_m = arbfp.convert_from f8e4m3fnuz %q : !matrix.matrix<3x5xi8> to !matrix.matrix<3x5xf16>
  %from_m = arbfp.convert_from f8e4m3fnuz %q : !matrix.matrix<3x5xi8> to !matrix.matrix<3x5xf16>
  // CHECK-NEXT: %to_s = arbfp.convert_to f8e4m3fnuz %x : f16 to i8
  %to_s = arbfp.convert_to f8e4m3fnuz %x : f16 to i8
  // CHECK-NEXT: %to_v = arbfp.convert_to f8e4m3fnuz %w saturate : vector<2x4xbf16> to vector<2x4xi8>
  %to_v = arbfp.convert_to f8e4m3fnuz %w saturate : vector<2x4xbf16> to vector<2x4xi8>
  // CHECK-NEXT: %to_m = arbfp.convert_to f8e4m3fnuz %m rounding nearest_away : !matrix.matrix<5x3xf16> to !matrix.matrix<5x3xi8>
  %to_m = arbfp.convert_to f8e4m3fnuz %m rounding nearest_away : !matrix.matrix<5x3xf16> to !matrix.matrix<5x3xi8>
  // CHECK-NEXT: %to_ms = arbfp.convert_to f8e4m3fnuz %m rounding toward_zero saturate : !matrix.matrix<5x3xf16> to !matrix.matrix<5x3xi8>
  %to_ms = arbfp.convert_to f8e4m3fnuz %m rounding toward_zero saturate : !matrix.matrix<5x3xf16> to !matrix.matrix<5x3xi8>
  func.return
}

// CHECK-LABEL: func.func @f8e4m3
func.func @f8e4m3(%b: i8, %v: vector<8xi8>, %q: !matrix.matrix<3x5xi8>, %x: bf16, %w: vector<2x4xf32>, %m: !matrix.matrix<5x3xbf16>) {
  // CHECK-NEXT: %from_s = arbfp.convert_from f8e4m3 %b : i8 to bf16
  %from_s = arbfp.convert_from f8e4m3 %b : i8 to bf16
  // CHECK-NEXT: %from_v = arbfp.convert_from f8e4m3 %v : vector<8xi8> to vector<8xf32>
  %from_v = arbfp.convert_from f8e4m3 %v : vector<8xi8> to vector<8xf32>
  // CHECK-NEXT: %from_m = arbfp.convert_from f8e4m3 %q : !matrix.matrix<3x5xi8> to !matrix.matrix<3x5xbf16>
  %from_m = arbfp.convert_from f8e4m3 %q : !matrix.matrix<3x5xi8> to !matrix.matrix<3x5xbf16>
  // CHECK-NEXT: %to_s = arbfp.convert_to f8e4m3 %x : bf16 to i8
  %to_s = arbfp.convert_to f8e4m3 %x : bf16 to i8
  // CHECK-NEXT: %to_v = arbfp.convert_to f8e4m3 %w saturate : vector<2x4xf32> to vector<2x4xi8>
  %to_v = arbfp.convert_to f8e4m3 %w saturate : vector<2x4xf32> to vector<2x4xi8>
  // CHECK-NEXT: %to_m = arbfp.convert_to f8e4m3 %m rounding toward_zero : !matrix.matrix<5x3xbf16> to !matrix.matrix<5x3xi8>
  %to_m = arbfp.convert_to f8e4m3 %m rounding toward_zero : !matrix.matrix<5x3xbf16> to !matrix.matrix<5x3xi8>
  // CHECK-NEXT: %to_ms = arbfp.convert_to f8e4m3 %m rounding upward saturate : !matrix.matrix<5x3xbf16> to !matrix.matrix<5x3xi8>
  %to_ms = arbfp.convert_to f8e4m3 %m rounding upward saturate : !matrix.matrix<5x3xbf16> to !matrix.matrix<5x3xi8>
  func.return
}

// CHECK-LABEL: func.func @f8e3m4
func.func @f8e3m4(%b: i8, %v: vector<8xi8>, %q: !matrix.matrix<3x5xi8>, %x: f32, %w: vector<2x4xf64>, %m: !matrix.matrix<5x3xf32>) {
  // CHECK-NEXT: %from_s = arbfp.convert_from f8e3m4 %b : i8 to f32
  %from_s = arbfp.convert_from f8e3m4 %b : i8 to f32
  // CHECK-NEXT: %from_v = arbfp.convert_from f8e3m4 %v : vector<8xi8> to vector<8xf64>
  %from_v = arbfp.convert_from f8e3m4 %v : vector<8xi8> to vector<8xf64>
  // CHECK-NEXT: %from_m = arbfp.convert_from f8e3m4 %q : !matrix.matrix<3x5xi8> to !matrix.matrix<3x5xf32>
  %from_m = arbfp.convert_from f8e3m4 %q : !matrix.matrix<3x5xi8> to !matrix.matrix<3x5xf32>
  // CHECK-NEXT: %to_s = arbfp.convert_to f8e3m4 %x : f32 to i8
  %to_s = arbfp.convert_to f8e3m4 %x : f32 to i8
  // CHECK-NEXT: %to_v = arbfp.convert_to f8e3m4 %w saturate : vector<2x4xf64> to vector<2x4xi8>
  %to_v = arbfp.convert_to f8e3m4 %w saturate : vector<2x4xf64> to vector<2x4xi8>
  // CHECK-NEXT: %to_m = arbfp.convert_to f8e3m4 %m rounding upward : !matrix.matrix<5x3xf32> to !matrix.matrix<5x3xi8>
  %to_m = arbfp.convert_to f8e3m4 %m rounding upward : !matrix.matrix<5x3xf32> to !matrix.matrix<5x3xi8>
  // CHECK-NEXT: %to_ms = arbfp.convert_to f8e3m4 %m rounding downward saturate : !matrix.matrix<5x3xf32> to !matrix.matrix<5x3xi8>
  %to_ms = arbfp.convert_to f8e3m4 %m rounding downward saturate : !matrix.matrix<5x3xf32> to !matrix.matrix<5x3xi8>
  func.return
}

// CHECK-LABEL: func.func @f8e8m0fnu
func.func @f8e8m0fnu(%b: i8, %v: vector<8xi8>, %q: !matrix.matrix<3x5xi8>, %x: f64, %w: vector<2x4xf16>, %m: !matrix.matrix<5x3xf64>) {
  // CHECK-NEXT: %from_s = arbfp.convert_from f8e8m0fnu %b : i8 to f64
  %from_s = arbfp.convert_from f8e8m0fnu %b : i8 to f64
  // CHECK-NEXT: %from_v = arbfp.convert_from f8e8m0fnu %v : vector<8xi8> to vector<8xf16>
  %from_v = arbfp.convert_from f8e8m0fnu %v : vector<8xi8> to vector<8xf16>
  // CHECK-NEXT: %from_m = arbfp.convert_from f8e8m0fnu %q : !matrix.matrix<3x5xi8> to !matrix.matrix<3x5xf64>
  %from_m = arbfp.convert_from f8e8m0fnu %q : !matrix.matrix<3x5xi8> to !matrix.matrix<3x5xf64>
  // CHECK-NEXT: %to_s = arbfp.convert_to f8e8m0fnu %x : f64 to i8
  %to_s = arbfp.convert_to f8e8m0fnu %x : f64 to i8
  // CHECK-NEXT: %to_v = arbfp.convert_to f8e8m0fnu %w saturate : vector<2x4xf16> to vector<2x4xi8>
  %to_v = arbfp.convert_to f8e8m0fnu %w saturate : vector<2x4xf16> to vector<2x4xi8>
  // CHECK-NEXT: %to_m = arbfp.convert_to f8e8m0fnu %m rounding downward : !matrix.matrix<5x3xf64> to !matrix.matrix<5x3xi8>
  %to_m = arbfp.convert_to f8e8m0fnu %m rounding downward : !matrix.matrix<5x3xf64> to !matrix.matrix<5x3xi8>
  // CHECK-NEXT: %to_ms = arbfp.convert_to f8e8m0fnu %m rounding nearest_away saturate : !matrix.matrix<5x3xf64> to !matrix.matrix<5x3xi8>
  %to_ms = arbfp.convert_to f8e8m0fnu %m rounding nearest_away saturate : !matrix.matrix<5x3xf64> to !matrix.matrix<5x3xi8>
  func.return
}

// CHECK-LABEL: func.func @f6e3m2fn
func.func @f6e3m2fn(%b: i6, %v: vector<8xi6>, %q: !matrix.matrix<3x5xi6>, %x: f16, %w: vector<2x4xbf16>, %m: !matrix.matrix<5x3xf16>) {
  // CHECK-NEXT: %from_s = arbfp.convert_from f6e3m2fn %b : i6 to f16
  %from_s = arbfp.convert_from f6e3m2fn %b : i6 to f16
  // CHECK-NEXT: %from_v = arbfp.convert_from f6e3m2fn %v : vector<8xi6> to vector<8xbf16>
  %from_v = arbfp.convert_from f6e3m2fn %v : vector<8xi6> to vector<8xbf16>
  // CHECK-NEXT: %from_m = arbfp.convert_from f6e3m2fn %q : !matrix.matrix<3x5xi6> to !matrix.matrix<3x5xf16>
  %from_m = arbfp.convert_from f6e3m2fn %q : !matrix.matrix<3x5xi6> to !matrix.matrix<3x5xf16>
  // CHECK-NEXT: %to_s = arbfp.convert_to f6e3m2fn %x : f16 to i6
  %to_s = arbfp.convert_to f6e3m2fn %x : f16 to i6
  // CHECK-NEXT: %to_v = arbfp.convert_to f6e3m2fn %w saturate : vector<2x4xbf16> to vector<2x4xi6>
  %to_v = arbfp.convert_to f6e3m2fn %w saturate : vector<2x4xbf16> to vector<2x4xi6>
  // CHECK-NEXT: %to_m = arbfp.convert_to f6e3m2fn %m rounding nearest_away : !matrix.matrix<5x3xf16> to !matrix.matrix<5x3xi6>
  %to_m = arbfp.convert_to f6e3m2fn %m rounding nearest_away : !matrix.matrix<5x3xf16> to !matrix.matrix<5x3xi6>
  // CHECK-NEXT: %to_ms = arbfp.convert_to f6e3m2fn %m rounding toward_zero saturate : !matrix.matrix<5x3xf16> to !matrix.matrix<5x3xi6>
  %to_ms = arbfp.convert_to f6e3m2fn %m rounding toward_zero saturate : !matrix.matrix<5x3xf16> to !matrix.matrix<5x3xi6>
  func.return
}

// CHECK-LABEL: func.func @f6e2m3fn
func.func @f6e2m3fn(%b: i6, %v: vector<8xi6>, %q: !matrix.matrix<3x5xi6>, %x: bf16, %w: vector<2x4xf32>, %m: !matrix.matrix<5x3xbf16>) {
  // CHECK-NEXT: %from_s = arbfp.convert_from f6e2m3fn %b : i6 to bf16
  %from_s = arbfp.convert_from f6e2m3fn %b : i6 to bf16
  // CHECK-NEXT: %from_v = arbfp.convert_from f6e2m3fn %v : vector<8xi6> to vector<8xf32>
  %from_v = arbfp.convert_from f6e2m3fn %v : vector<8xi6> to vector<8xf32>
  // CHECK-NEXT: %from_m = arbfp.convert_from f6e2m3fn %q : !matrix.matrix<3x5xi6> to !matrix.matrix<3x5xbf16>
  %from_m = arbfp.convert_from f6e2m3fn %q : !matrix.matrix<3x5xi6> to !matrix.matrix<3x5xbf16>
  // CHECK-NEXT: %to_s = arbfp.convert_to f6e2m3fn %x : bf16 to i6
  %to_s = arbfp.convert_to f6e2m3fn %x : bf16 to i6
  // CHECK-NEXT: %to_v = arbfp.convert_to f6e2m3fn %w saturate : vector<2x4xf32> to vector<2x4xi6>
  %to_v = arbfp.convert_to f6e2m3fn %w saturate : vector<2x4xf32> to vector<2x4xi6>
  // CHECK-NEXT: %to_m = arbfp.convert_to f6e2m3fn %m rounding toward_zero : !matrix.matrix<5x3xbf16> to !matrix.matrix<5x3xi6>
  %to_m = arbfp.convert_to f6e2m3fn %m rounding toward_zero : !matrix.matrix<5x3xbf16> to !matrix.matrix<5x3xi6>
  // CHECK-NEXT: %to_ms = arbfp.convert_to f6e2m3fn %m rounding upward saturate : !matrix.matrix<5x3xbf16> to !matrix.matrix<5x3xi6>
  %to_ms = arbfp.convert_to f6e2m3fn %m rounding upward saturate : !matrix.matrix<5x3xbf16> to !matrix.matrix<5x3xi6>
  func.return
}

// CHECK-LABEL: func.func @f4e2m1fn
func.func @f4e2m1fn(%b: i4, %v: vector<8xi4>, %q: !matrix.matrix<3x5xi4>, %x: f32, %w: vector<2x4xf64>, %m: !matrix.matrix<5x3xf32>) {
  // CHECK-NEXT: %from_s = arbfp.convert_from f4e2m1fn %b : i4 to f32
  %from_s = arbfp.convert_from f4e2m1fn %b : i4 to f32
  // CHECK-NEXT: %from_v = arbfp.convert_from f4e2m1fn %v : vector<8xi4> to vector<8xf64>
  %from_v = arbfp.convert_from f4e2m1fn %v : vector<8xi4> to vector<8xf64>
  // CHECK-NEXT: %from_m = arbfp.convert_from f4e2m1fn %q : !matrix.matrix<3x5xi4> to !matrix.matrix<3x5xf32>
  %from_m = arbfp.convert_from f4e2m1fn %q : !matrix.matrix<3x5xi4> to !matrix.matrix<3x5xf32>
  // CHECK-NEXT: %to_s = arbfp.convert_to f4e2m1fn %x : f32 to i4
  %to_s = arbfp.convert_to f4e2m1fn %x : f32 to i4
  // CHECK-NEXT: %to_v = arbfp.convert_to f4e2m1fn %w saturate : vector<2x4xf64> to vector<2x4xi4>
  %to_v = arbfp.convert_to f4e2m1fn %w saturate : vector<2x4xf64> to vector<2x4xi4>
  // CHECK-NEXT: %to_m = arbfp.convert_to f4e2m1fn %m rounding upward : !matrix.matrix<5x3xf32> to !matrix.matrix<5x3xi4>
  %to_m = arbfp.convert_to f4e2m1fn %m rounding upward : !matrix.matrix<5x3xf32> to !matrix.matrix<5x3xi4>
  // CHECK-NEXT: %to_ms = arbfp.convert_to f4e2m1fn %m rounding downward saturate : !matrix.matrix<5x3xf32> to !matrix.matrix<5x3xi4>
  %to_ms = arbfp.convert_to f4e2m1fn %m rounding downward saturate : !matrix.matrix<5x3xf32> to !matrix.matrix<5x3xi4>
  func.return
}

// The default rounding mode is not printed.
// CHECK-LABEL: func.func @defaults
func.func @defaults(%x: f32) {
  // CHECK-NEXT: %a = arbfp.convert_to f8e4m3fn %x : f32 to i8
  %a = arbfp.convert_to f8e4m3fn %x rounding nearest_even : f32 to i8
  // CHECK-NEXT: %b = arbfp.convert_to f8e4m3fn %x saturate : f32 to i8
  %b = arbfp.convert_to f8e4m3fn %x rounding nearest_even saturate : f32 to i8
  // CHECK-NEXT: %c = arbfp.convert_to f8e5m2 %x rounding downward saturate : f32 to i8
  %c = "arbfp.convert_to"(%x) <{format = #arbfp<format f8e5m2>, rounding = #arbfp<rounding downward>, saturate}> : (f32) -> i8
  func.return
}

// CHECK-LABEL: func.func @all_float_types
func.func @all_float_types(%b: i8) {
  // CHECK-NEXT: %f16 = arbfp.convert_from f8e4m3fn %b : i8 to f16
  %f16 = arbfp.convert_from f8e4m3fn %b : i8 to f16
  // CHECK-NEXT: %f16_back = arbfp.convert_to f8e4m3fn %f16 : f16 to i8
  %f16_back = arbfp.convert_to f8e4m3fn %f16 : f16 to i8
  // CHECK-NEXT: %bf16 = arbfp.convert_from f8e4m3fn %b : i8 to bf16
  %bf16 = arbfp.convert_from f8e4m3fn %b : i8 to bf16
  // CHECK-NEXT: %bf16_back = arbfp.convert_to f8e4m3fn %bf16 : bf16 to i8
  %bf16_back = arbfp.convert_to f8e4m3fn %bf16 : bf16 to i8
  // CHECK-NEXT: %f32 = arbfp.convert_from f8e4m3fn %b : i8 to f32
  %f32 = arbfp.convert_from f8e4m3fn %b : i8 to f32
  // CHECK-NEXT: %f32_back = arbfp.convert_to f8e4m3fn %f32 : f32 to i8
  %f32_back = arbfp.convert_to f8e4m3fn %f32 : f32 to i8
  // CHECK-NEXT: %f64 = arbfp.convert_from f8e4m3fn %b : i8 to f64
  %f64 = arbfp.convert_from f8e4m3fn %b : i8 to f64
  // CHECK-NEXT: %f64_back = arbfp.convert_to f8e4m3fn %f64 : f64 to i8
  %f64_back = arbfp.convert_to f8e4m3fn %f64 : f64 to i8
  func.return
}

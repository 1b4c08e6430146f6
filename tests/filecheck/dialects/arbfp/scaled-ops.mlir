// RUN: mx-opt %s | mx-opt | filecheck %s
// RUN: mx-opt %s --print-op-generic | mx-opt | filecheck %s

// The block-scaled conversions on matrices and 1-D vectors, with every option;
// default options (scale f8e8m0fnu, rounding nearest_even, scale_rule floor) are not printed.

// CHECK-LABEL: func.func @mxfp4_matrix
func.func @mxfp4_matrix(%q: !matrix.matrix<64x256xi4>, %s: !matrix.matrix<64x8xi8>, %x: !matrix.matrix<64x256xf32>) {
  // CHECK-NEXT: %d = arbfp.scaled_convert_from f4e2m1fn %q, %s block 32 : !matrix.matrix<64x256xi4>, !matrix.matrix<64x8xi8> to !matrix.matrix<64x256xf32>
  %d = arbfp.scaled_convert_from f4e2m1fn %q, %s block 32 : !matrix.matrix<64x256xi4>, !matrix.matrix<64x8xi8> to !matrix.matrix<64x256xf32>
  // CHECK-NEXT: %d2 = arbfp.scaled_convert_from f4e2m1fn %q, %s block 32 : !matrix.matrix<64x256xi4>, !matrix.matrix<64x8xi8> to !matrix.matrix<64x256xbf16>
  %d2 = arbfp.scaled_convert_from f4e2m1fn %q, %s block 32 scale f8e8m0fnu : !matrix.matrix<64x256xi4>, !matrix.matrix<64x8xi8> to !matrix.matrix<64x256xbf16>
  // CHECK-NEXT: %e, %es = arbfp.scaled_convert_to f4e2m1fn %x block 32 : !matrix.matrix<64x256xf32> to !matrix.matrix<64x256xi4>, !matrix.matrix<64x8xi8>
  %e, %es = arbfp.scaled_convert_to f4e2m1fn %x block 32 : !matrix.matrix<64x256xf32> to !matrix.matrix<64x256xi4>, !matrix.matrix<64x8xi8>
  func.return
}

// CHECK-LABEL: func.func @nvfp4
func.func @nvfp4(%q: !matrix.matrix<2x32xi4>, %s: !matrix.matrix<2x2xi8>) -> !matrix.matrix<2x32xf16> {
  // CHECK-NEXT: %d = arbfp.scaled_convert_from f4e2m1fn %q, %s block 16 scale f8e4m3fn : !matrix.matrix<2x32xi4>, !matrix.matrix<2x2xi8> to !matrix.matrix<2x32xf16>
  %d = arbfp.scaled_convert_from f4e2m1fn %q, %s block 16 scale f8e4m3fn : !matrix.matrix<2x32xi4>, !matrix.matrix<2x2xi8> to !matrix.matrix<2x32xf16>
  func.return %d : !matrix.matrix<2x32xf16>
}

// CHECK-LABEL: func.func @vectors
func.func @vectors(%x: vector<64xf64>, %h: vector<8xbf16>, %q: vector<64xi6>, %s: vector<2xi8>) {
  // CHECK-NEXT: %a, %as = arbfp.scaled_convert_to f8e4m3fn %x block 32 rounding upward scale_rule ceil : vector<64xf64> to vector<64xi8>, vector<2xi8>
  %a, %as = arbfp.scaled_convert_to f8e4m3fn %x block 32 rounding upward scale_rule ceil : vector<64xf64> to vector<64xi8>, vector<2xi8>
  // CHECK-NEXT: %b, %bs = arbfp.scaled_convert_to f8e5m2 %x block 64 scale_rule ceil : vector<64xf64> to vector<64xi8>, vector<1xi8>
  %b, %bs = arbfp.scaled_convert_to f8e5m2 %x block 64 scale f8e8m0fnu rounding nearest_even scale_rule ceil : vector<64xf64> to vector<64xi8>, vector<1xi8>
  // CHECK-NEXT: %c, %cs = arbfp.scaled_convert_to f6e2m3fn %h block 1 rounding toward_zero : vector<8xbf16> to vector<8xi6>, vector<8xi8>
  %c, %cs = arbfp.scaled_convert_to f6e2m3fn %h block 1 rounding toward_zero scale_rule floor : vector<8xbf16> to vector<8xi6>, vector<8xi8>
  // CHECK-NEXT: %d = arbfp.scaled_convert_from f6e3m2fn %q, %s block 32 : vector<64xi6>, vector<2xi8> to vector<64xf64>
  %d = arbfp.scaled_convert_from f6e3m2fn %q, %s block 32 : vector<64xi6>, vector<2xi8> to vector<64xf64>
  // CHECK-NEXT: %e, %es = arbfp.scaled_convert_to f8e5m3fnu %h block 8 rounding downward : vector<8xbf16> to vector<8xi8>, vector<1xi8>
  %e, %es = arbfp.scaled_convert_to f8e5m3fnu %h block 8 rounding downward : vector<8xbf16> to vector<8xi8>, vector<1xi8>
  func.return
}

// mx-run --precision-report: what each conversion and f16/bf16 op did to the
// values of one interpreted run, against an f64 shadow run (docs/precision-report.md).
// RUN: mx-run %s --entry quantize --arg '[0.1, 0.2, 7.0, -100.0, 0.24, 0.26, 1e-30, 3.0]' --precision-report | filecheck %s --check-prefix=TABLE
// RUN: mx-run %s --entry quantize --arg '[0.1, 0.2, 7.0, -100.0, 0.24, 0.26, 1e-30, 3.0]' --precision-report --json | filecheck %s --check-prefix=JSON
// RUN: mx-run %s --entry mx --arg '[1.0, 2.0, 3.0, 4.0, 0.001, 0.01, 100.0, -8.0]' --precision-report | filecheck %s --check-prefix=BLOCKS
// RUN: not mx-run %s --entry quantize --arg 1.0 --json 2>&1 | filecheck %s --check-prefix=USAGE
// RUN: not mx-run %s --entry unsupported --arg 2.0 --precision-report 2>&1 | filecheck %s --check-prefix=NOSHADOW

// f4e2m1fn: 7.0 and -100.0 exceed 6 (saturated); 0.1, 0.2, 0.24 and 1e-30
// are below 0.25, half the least subnormal 0.5 (underflow); 0.26 gives 0.5.
func.func @quantize(%x: vector<8xf32>) -> vector<8xf32> {
  %b = arbfp.convert_to f4e2m1fn %x : vector<8xf32> to vector<8xi4>
  %y = arbfp.convert_from f4e2m1fn %b : vector<8xi4> to vector<8xf32>
  %h = arith.truncf %y : vector<8xf32> to vector<8xf16>
  %s = arith.mulf %h, %h : vector<8xf16>
  %r = arith.extf %s : vector<8xf16> to vector<8xf32>
  func.return %r : vector<8xf32>
}
// TABLE:      precision report of @quantize
// TABLE-NEXT: op {{ +}}loc {{ +}}type {{ +}}count  sat  underflow  nan  inf  max_abs_err  max_rel_err  sqnr_db  blame_db
// TABLE-NEXT: arbfp.convert_to {{ +}}{{.*}}precision_report.mlir:12:3  vector<8xi4> {{ +}}8    2          4    0    0           94            1   0.5621       inf
// TABLE-NEXT: arbfp.convert_from {{ +}}{{.*}}:13:3  vector<8xf32> {{ +}}8    2          4    0    0           94            1   0.5621         0
// TABLE-NEXT: arith.truncf {{ +}}{{.*}}:14:3  vector<8xf16> {{ +}}8    0          0    0    0           94            1   0.5621         0
// TABLE-NEXT: arith.mulf {{ +}}{{.*}}:15:3  vector<8xf16> {{ +}}8    0          0    0    0         9964        2.698  0.03143    0.5306
// TABLE-NEXT: func.return {{ +}}{{.*}}:17:3  vector<8xf32> {{ +}}8    0          0    0    0         9964        2.698  0.03143         -

// JSON:      "version": 1,
// JSON-NEXT: "function": "quantize",
// JSON:      "op": "arbfp.convert_to",
// JSON-NEXT: "loc": "{{.*}}precision_report.mlir:12:3",
// JSON-NEXT: "type": "vector<8xi4>",
// JSON-NEXT: "count": 8,
// JSON-NEXT: "saturated": 2,
// JSON-NEXT: "underflow": 4,
// JSON:      "input_sqnr_db": "inf",
// JSON-NEXT: "blame_db": "inf",
// JSON-NEXT: "format": "f4e2m1fn"

// Blocks of 4: [1, 2, 3, 4] (amax 4 = 2^2: scale 2^0 under both rules)
// converts exactly; [0.001, 0.01, 100, -8] has amax 100 = 1.5625·2^6: floor
// scale 2^4 (100/16 = 6.25 > 6: clipped; 0.001 and 0.01 underflow), ceil
// scale 2^5 (nothing clips; -8/32 = -0.25 is a tie that rounds to 0: three
// underflow).
func.func @mx(%x: vector<8xf32>) -> vector<8xf32> {
  %q, %s = arbfp.scaled_convert_to f4e2m1fn %x block 4 : vector<8xf32> to vector<8xi4>, vector<2xi8>
  %y = arbfp.scaled_convert_from f4e2m1fn %q, %s block 4 : vector<8xi4>, vector<2xi8> to vector<8xf32>
  func.return %y : vector<8xf32>
}
// BLOCKS:      arbfp.scaled_convert_to {{.*}} vector<8xi4> {{ +}}8    1          2    0    0
// BLOCKS-NEXT:   scale_rule floor (used): 1 of 2 blocks clipped, 1 saturated, 2 underflow, sqnr 28 dB
// BLOCKS-NEXT:   scale_rule ceil: 0 of 2 blocks clipped, 0 saturated, 3 underflow, sqnr 21.01 dB
// BLOCKS-NEXT: arbfp.scaled_convert_from {{.*}} vector<8xf32> {{ +}}8    1          2    0    0

func.func @unsupported(%x: f32) -> f32 {
  %c = arith.constant true
  %y = arith.select %c, %x, %x : f32
  func.return %y : f32
}
// NOSHADOW: precision_report.mlir:56:3: error: 'arith.select' op is not supported by the precision report: no f64 shadow for this op
// USAGE: mx-run: error: --json needs --precision-report

// A loop of 3 iterations: one record per op site, adding up its runs (3 x 8
// elements), as a batch does. Iteration 1 quantizes x (as @quantize: 2
// saturated, 4 underflow); iterations 2 and 3 quantize its FP4 values, which
// convert exactly, while the shadow carried through iter_args stays x: each
// run adds the same noise and signal (0.5621 dB over the three). The
// convert_to's input is x, exact, in run 1 and carries that error in runs 2
// and 3: its SQNR counts the signal of the three runs and the noise of two,
// so the op lost 10*log10(3/2) = 1.761 dB over all runs. The convert_from
// counts on the shadow, x, in each run (3 x 2, 3 x 4).
// RUN: mx-run %s --entry layers --arg '[0.1, 0.2, 7.0, -100.0, 0.24, 0.26, 1e-30, 3.0]' --precision-report | filecheck %s --check-prefix=LOOP
func.func @layers(%x: vector<8xf32>) -> vector<8xf32> {
  %r = affine.for %i = 0 to 3 iter_args(%h = %x) -> (vector<8xf32>) {
    %b = arbfp.convert_to f4e2m1fn %h : vector<8xf32> to vector<8xi4>
    %y = arbfp.convert_from f4e2m1fn %b : vector<8xi4> to vector<8xf32>
    affine.yield %y : vector<8xf32>
  }
  func.return %r : vector<8xf32>
}
// LOOP:      arbfp.convert_to {{ +}}{{.*}}precision_report.mlir:74:5  vector<8xi4> {{ +}}24    2          4    0    0           94            1   0.5621     1.761
// LOOP-NEXT: arbfp.convert_from {{ +}}{{.*}}:75:5  vector<8xf32> {{ +}}24    6         12    0    0           94            1   0.5621         0
// LOOP-NEXT: func.return {{ +}}{{.*}}vector<8xf32> {{ +}}8    0          0    0    0           94            1   0.5621         -

// --target-sqnr-db: a recommendation line under each conversion from floats.
// -100 overflows f8e3m4 (largest 15.5) to -inf without `saturate` and is NaN
// in unsigned f8e5m3fnu: those candidates have SQNR -inf, whatever the SQNR
// of their other elements (57 dB for f8e3m4).
// RUN: mx-run %s --entry quantize --arg '[0.1, 0.2, 7.0, -100.0, 0.24, 0.26, 1e-30, 3.0]' --precision-report --target-sqnr-db 10 | filecheck %s --check-prefix=TARGET
// RUN: mx-run %s --entry quantize --arg '[0.1, 0.2, 7.0, -100.0, 0.24, 0.26, 1e-30, 3.0]' --precision-report --json --target-sqnr-db 10 | filecheck %s --check-prefix=TARGET-JSON
// RUN: not mx-run %s --entry quantize --arg 1.0 --target-sqnr-db 10 2>&1 | filecheck %s --check-prefix=TARGET-USAGE
// RUN: not mx-run %s --entry quantize --arg 1.0 --precision-report --target-sqnr-db nan 2>&1 | filecheck %s --check-prefix=TARGET-NAN
// TARGET:      arbfp.convert_to {{.*}}:12:3  vector<8xi4>
// TARGET-NEXT:     recommend: f8e4m3fn (27.98 dB)
// TARGET-NEXT: arbfp.convert_from
// TARGET-JSON:      "target_sqnr_db": 10.0,
// TARGET-JSON:      "recommendation": {
// TARGET-JSON-NEXT:  "format": "f8e4m3fn",
// TARGET-JSON:       "f8e5m3fnu": "-inf",
// TARGET-JSON:       "f8e3m4": "-inf",
// TARGET-JSON-NEXT:  "f6e3m2fn": 2.87
// TARGET-USAGE: mx-run: error: --target-sqnr-db needs --precision-report
// TARGET-NAN: mx-run: error: argument --target-sqnr-db: expected a number of dB, got 'nan'

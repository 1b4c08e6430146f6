// RUN: mx-opt %s -p matrix-lowering-remarks -o /dev/null 2>&1 | filecheck %s
// RUN: mx-opt %s -p 'matrix-fold-transposes,matrix-fuse-contractions,matrix-lowering-remarks' -o /dev/null 2>&1 | filecheck %s --check-prefix=AFTER
// RUN: mx-opt %s -p 'matrix-lowering-remarks{annotate=true}' 2>/dev/null | filecheck %s --check-prefix=ATTR
// RUN: mx-opt %s -p 'matrix-lowering-remarks{vector-bits=0}' -o /dev/null 2>&1 | filecheck %s --check-prefix=SCALAR

// What fold and fuse buy, in the counts of the lowered code (LLVM's
// `matrix-lowered` remark): the transposed product's result is written
// transposed, and its transposed left factor is copied into a temporary (24
// bytes beside the product's 32) so that its columns can be read as vectors:
// two transposes until the transposes cancel, when the product, returned,
// is written straight into the out-parameter (no stack buffer). Scalar code
// reads the factor with swapped indices: one transpose, no temporary.
// CHECK: remark: @transposed_product: lowered with 0 loads, 0 stores, 24 multiplies, 16 adds, 0 fmas, 0 divides, 2 transposes, 1 temporaries, 56 stack_bytes, 0 heap_buffers
// AFTER: remark: @transposed_product: lowered with 0 loads, 0 stores, 24 multiplies, 16 adds, 0 fmas, 0 divides, 0 transposes, 0 temporaries, 0 stack_bytes, 0 heap_buffers
// SCALAR: remark: @transposed_product: lowered with 0 loads, 0 stores, 24 multiplies, 16 adds, 0 fmas, 0 divides, 1 transposes, 0 temporaries, 32 stack_bytes, 0 heap_buffers
// ATTR-LABEL: func.func @transposed_product
// ATTR-SAME:    attributes {matrix.lowered = {loads = 0 : i64, stores = 0 : i64, multiplies = 24 : i64, adds = 16 : i64, fmas = 0 : i64, divides = 0 : i64, transposes = 2 : i64, temporaries = 1 : i64, stack_bytes = 56 : i64, heap_buffers = 0 : i64}}
func.func @transposed_product(%a: !matrix.matrix<3x2xf32>, %b: !matrix.matrix<4x3xf32>) -> !matrix.matrix<4x2xf32> {
  %at = matrix.transpose %a : !matrix.matrix<3x2xf32> -> !matrix.matrix<2x3xf32>
  %bt = matrix.transpose %b : !matrix.matrix<4x3xf32> -> !matrix.matrix<3x4xf32>
  %m = matrix.matmul %at, %bt : !matrix.matrix<2x3xf32>, !matrix.matrix<3x4xf32> -> !matrix.matrix<2x4xf32>
  %t = matrix.transpose %m : !matrix.matrix<2x4xf32> -> !matrix.matrix<4x2xf32>
  func.return %t : !matrix.matrix<4x2xf32>
}

// multiply-*-contraction: with contract, each multiply feeding an add is an
// fma; the fused matmul_add adds one fma per element. Loads and stores count
// elements.
// CHECK: remark: @contraction: lowered with 26 loads, 8 stores, 16 multiplies, 16 adds, 16 fmas, 0 divides, 0 transposes, 0 temporaries, 64 stack_bytes, 0 heap_buffers
// AFTER: remark: @contraction: lowered with 26 loads, 8 stores, 0 multiplies, 0 adds, 32 fmas, 0 divides, 0 transposes, 0 temporaries, 64 stack_bytes, 0 heap_buffers
func.func @contraction(%mem: memref<?xf32>) {
  %a = matrix.column_major_load %mem[0] : memref<?xf32> -> !matrix.matrix<2x3xf32>
  %b = matrix.column_major_load %mem[6] : memref<?xf32> -> !matrix.matrix<3x4xf32>
  %c = matrix.column_major_load %mem[18] : memref<?xf32> -> !matrix.matrix<2x4xf32>
  %m = matrix.matmul %a, %b fastmath<contract> : !matrix.matrix<2x3xf32>, !matrix.matrix<3x4xf32> -> !matrix.matrix<2x4xf32>
  %s = matrix.add %m, %c fastmath<contract> : !matrix.matrix<2x4xf32>
  %p = matrix.mul %s, %c fastmath<contract> : !matrix.matrix<2x4xf32>
  %r = matrix.add %p, %c fastmath<contract> : !matrix.matrix<2x4xf32>
  matrix.column_major_store %r, %mem[0] : !matrix.matrix<2x4xf32>, memref<?xf32>
  func.return
}

// Without contract, the products and sums stay separate. The vector code of
// matvec copies %x into a one-column temporary.
// CHECK: remark: @strict: lowered with 0 loads, 0 stores, 6 multiplies, 6 adds, 0 fmas, 2 divides, 0 transposes, 1 temporaries, 40 stack_bytes, 0 heap_buffers
// AFTER: remark: @strict: lowered with 0 loads, 0 stores, 6 multiplies, 6 adds, 0 fmas, 2 divides, 0 transposes, 1 temporaries, 40 stack_bytes, 0 heap_buffers
// SCALAR: remark: @strict: lowered with 0 loads, 0 stores, 6 multiplies, 6 adds, 0 fmas, 2 divides, 0 transposes, 0 temporaries, 0 stack_bytes, 0 heap_buffers
func.func @strict(%m: !matrix.matrix<2x3xf64>, %x: vector<3xf64>, %b: vector<2xf64>, %d: !matrix.matrix<1x2xf64>) -> (vector<2xf64>, !matrix.matrix<1x2xf64>) {
  %y = matrix.matvec %m, %x, %b : !matrix.matrix<2x3xf64>, vector<3xf64>, vector<2xf64> -> vector<2xf64>
  %q = matrix.div %d, %d : !matrix.matrix<1x2xf64>
  func.return %y, %q : vector<2xf64>, !matrix.matrix<1x2xf64>
}

// Buffers above 64 KiB go to the heap: the 256x256 f32 product (256 KiB).
// The cache-blocked product (16777216 multiply-adds, above parallel-min-work)
// runs its blocks on threads, each block packing A and B into heap buffers of
// its own (two temporaries); the add is computed into the result.
// CHECK: remark: @large: lowered with 0 loads, 0 stores, 16777216 multiplies, 16777216 adds, 0 fmas, 0 divides, 0 transposes, 2 temporaries, 0 stack_bytes, 3 heap_buffers
func.func @large(%a: !matrix.matrix<256x256xf32>) -> !matrix.matrix<256x256xf32> {
  %p = matrix.matmul %a, %a : !matrix.matrix<256x256xf32>, !matrix.matrix<256x256xf32> -> !matrix.matrix<256x256xf32>
  %q = matrix.add %p, %p : !matrix.matrix<256x256xf32>
  func.return %q : !matrix.matrix<256x256xf32>
}

// -- kernels ------------------------------------------------------------------
// After the counts of a function, one located remark per contraction: the
// kernel the lowering gives it and, when it is not the fastest for that
// contraction, which one and why (docs/passes.md lists the reasons).

// MXFP4 weights, literal offsets: the fused kernel.
// CHECK-LABEL: remark: @mxfp4: lowered with
// CHECK-NEXT: matrix-lowering-remarks.mlir:[[# @LINE + 7]]:3: remark: 'matrix.matvec' op kernel: fused block-scaled vector{{$}}
// SCALAR-LABEL: remark: @mxfp4: lowered with
// SCALAR-NEXT: matrix-lowering-remarks.mlir:[[# @LINE + 5]]:3: remark: 'matrix.matvec' op kernel: scalar; not fused block-scaled vector: vector-bits=0{{$}}
func.func @mxfp4(%w: memref<?xi8>, %s: memref<?xi8>, %x: vector<64xf32>) -> vector<32xf32> {
  %q = matrix.column_major_load %w[0] packed : memref<?xi8> -> !matrix.matrix<32x64xi4>
  %sc = matrix.column_major_load %s[0] : memref<?xi8> -> !matrix.matrix<32x2xi8>
  %m = arbfp.scaled_convert_from f4e2m1fn %q, %sc block 32 : !matrix.matrix<32x64xi4>, !matrix.matrix<32x2xi8> to !matrix.matrix<32x64xf32>
  %y = matrix.matvec %m, %x : !matrix.matrix<32x64xf32>, vector<64xf32> -> vector<32xf32>
  func.return %y : vector<32xf32>
}

// An index offset: the fused kernel, the offset's parity checked at run time.
// CHECK-LABEL: remark: @mxfp4_index_offset: lowered with
// CHECK-NEXT: matrix-lowering-remarks.mlir:[[# @LINE + 7]]:3: remark: 'matrix.matvec' op kernel: fused block-scaled vector (packed offset and stride checked even at run time, else element by element){{$}}
// SCALAR-LABEL: remark: @mxfp4_index_offset: lowered with
// SCALAR-NEXT: matrix-lowering-remarks.mlir:[[# @LINE + 5]]:3: remark: 'matrix.matvec' op kernel: element by element; not fused block-scaled vector: vector-bits=0{{$}}
func.func @mxfp4_index_offset(%w: memref<?xi8>, %s: memref<?xi8>, %x: vector<64xf32>, %o: index) -> vector<32xf32> {
  %q = matrix.column_major_load %w[%o] packed : memref<?xi8> -> !matrix.matrix<32x64xi4>
  %sc = matrix.column_major_load %s[0] : memref<?xi8> -> !matrix.matrix<32x2xi8>
  %m = arbfp.scaled_convert_from f4e2m1fn %q, %sc block 32 : !matrix.matrix<32x64xi4>, !matrix.matrix<32x2xi8> to !matrix.matrix<32x64xf32>
  %y = matrix.matvec %m, %x : !matrix.matrix<32x64xf32>, vector<64xf32> -> vector<32xf32>
  func.return %y : vector<32xf32>
}

// An offset proven even (twice an index): no check.
// CHECK-LABEL: remark: @mxfp4_even_offset: lowered with
// CHECK-NEXT: matrix-lowering-remarks.mlir:[[# @LINE + 7]]:3: remark: 'matrix.matvec' op kernel: fused block-scaled vector{{$}}
func.func @mxfp4_even_offset(%w: memref<?xi8>, %s: memref<?xi8>, %x: vector<64xf32>, %i: index) -> vector<32xf32> {
  %two = arith.constant 2 : index
  %o = arith.muli %i, %two : index
  %q = matrix.row_major_load %w[%o] packed : memref<?xi8> -> !matrix.matrix<32x64xi4>
  %sc = matrix.column_major_load %s[0] : memref<?xi8> -> !matrix.matrix<32x2xi8>
  %m = arbfp.scaled_convert_from f4e2m1fn %q, %sc block 32 : !matrix.matrix<32x64xi4>, !matrix.matrix<32x2xi8> to !matrix.matrix<32x64xf32>
  %y = matrix.matvec %m, %x : !matrix.matrix<32x64xf32>, vector<64xf32> -> vector<32xf32>
  func.return %y : vector<32xf32>
}

// FP8 weights times a per-tensor scale: the fused decode kernel.
// CHECK-LABEL: remark: @fp8_per_tensor: lowered with
// CHECK-NEXT: matrix-lowering-remarks.mlir:[[# @LINE + 7]]:3: remark: 'matrix.matvec' op kernel: fused decode vector{{$}}
func.func @fp8_per_tensor(%w: memref<?xi8>, %s: memref<?xi8>, %x: vector<64xf32>) -> vector<32xf32> {
  %q = matrix.row_major_load %w[0] : memref<?xi8> -> !matrix.matrix<32x64xi8>
  %d = arbfp.convert_from f8e4m3fn %q : !matrix.matrix<32x64xi8> to !matrix.matrix<32x64xf32>
  %c = arith.constant 0.5 : f32
  %k = matrix.splat %c : !matrix.matrix<32x64xf32>
  %m = matrix.mul %d, %k : !matrix.matrix<32x64xf32>
  %y = matrix.matvec %m, %x : !matrix.matrix<32x64xf32>, vector<64xf32> -> vector<32xf32>
  func.return %y : vector<32xf32>
}

// f32 weights, a matrix argument: vectorized.
// CHECK-LABEL: remark: @f32_weights: lowered with
// CHECK-NEXT: matrix-lowering-remarks.mlir:[[# @LINE + 4]]:3: remark: 'matrix.matvec' op kernel: vectorized{{$}}
// SCALAR-LABEL: remark: @f32_weights: lowered with
// SCALAR-NEXT: matrix-lowering-remarks.mlir:[[# @LINE + 2]]:3: remark: 'matrix.matvec' op kernel: scalar; not vectorized: vector-bits=0{{$}}
func.func @f32_weights(%a: !matrix.matrix<32x64xf32>, %x: vector<64xf32>) -> vector<32xf32> {
  %y = matrix.matvec %a, %x : !matrix.matrix<32x64xf32>, vector<64xf32> -> vector<32xf32>
  func.return %y : vector<32xf32>
}

// Row-major f32 weights read in tiles: cache-blocked.
// CHECK-LABEL: remark: @f32_row_major_load: lowered with
// CHECK-NEXT: matrix-lowering-remarks.mlir:[[# @LINE + 3]]:3: remark: 'matrix.matvec' op kernel: cache-blocked vector{{$}}
func.func @f32_row_major_load(%w: memref<?xf32>, %x: vector<64xf32>) -> vector<32xf32> {
  %a = matrix.row_major_load %w[0] : memref<?xf32> -> !matrix.matrix<32x64xf32>
  %y = matrix.matvec %a, %x : !matrix.matrix<32x64xf32>, vector<64xf32> -> vector<32xf32>
  func.return %y : vector<32xf32>
}

// An odd literal offset: element by element.
// CHECK-LABEL: remark: @mxfp4_odd_offset: lowered with
// CHECK-NEXT: matrix-lowering-remarks.mlir:[[# @LINE + 5]]:3: remark: 'matrix.matvec' op kernel: element by element; not fused block-scaled vector: the packed offset or stride is odd{{$}}
func.func @mxfp4_odd_offset(%w: memref<?xi8>, %s: memref<?xi8>, %x: vector<64xf32>) -> vector<32xf32> {
  %q = matrix.column_major_load %w[1] packed : memref<?xi8> -> !matrix.matrix<32x64xi4>
  %sc = matrix.column_major_load %s[0] : memref<?xi8> -> !matrix.matrix<32x2xi8>
  %m = arbfp.scaled_convert_from f4e2m1fn %q, %sc block 32 : !matrix.matrix<32x64xi4>, !matrix.matrix<32x2xi8> to !matrix.matrix<32x64xf32>
  %y = matrix.matvec %m, %x : !matrix.matrix<32x64xf32>, vector<64xf32> -> vector<32xf32>
  func.return %y : vector<32xf32>
}

// Codes (one a byte) and scales as matrix arguments: read in place.
// CHECK-LABEL: remark: @mxfp4_arguments: lowered with
// CHECK-NEXT: matrix-lowering-remarks.mlir:[[# @LINE + 3]]:3: remark: 'matrix.matvec' op kernel: fused block-scaled vector{{$}}
func.func @mxfp4_arguments(%q: !matrix.matrix<32x64xi4>, %sc: !matrix.matrix<32x2xi8>, %x: vector<64xf32>) -> vector<32xf32> {
  %m = arbfp.scaled_convert_from f4e2m1fn %q, %sc block 32 : !matrix.matrix<32x64xi4>, !matrix.matrix<32x2xi8> to !matrix.matrix<32x64xf32>
  %y = matrix.matvec %m, %x : !matrix.matrix<32x64xf32>, vector<64xf32> -> vector<32xf32>
  func.return %y : vector<32xf32>
}

// Codes computed by another op (fused into the conversion).
// CHECK-LABEL: remark: @computed_codes: lowered with
// CHECK-NEXT: matrix-lowering-remarks.mlir:[[# @LINE + 4]]:3: remark: 'matrix.matvec' op kernel: vectorized; not fused block-scaled vector: the codes are computed, not read from a matrix load or argument{{$}}
func.func @computed_codes(%a: !matrix.matrix<32x64xi8>, %b: !matrix.matrix<32x64xi8>, %sc: !matrix.matrix<32x2xi8>, %x: vector<64xf32>) -> vector<32xf32> {
  %q = matrix.add %a, %b : !matrix.matrix<32x64xi8>
  %m = arbfp.scaled_convert_from f8e4m3fn %q, %sc block 32 : !matrix.matrix<32x64xi8>, !matrix.matrix<32x2xi8> to !matrix.matrix<32x64xf32>
  %y = matrix.matvec %m, %x : !matrix.matrix<32x64xf32>, vector<64xf32> -> vector<32xf32>
  func.return %y : vector<32xf32>
}

// Fewer rows than two vectors.
// CHECK-LABEL: remark: @mxfp4_rows: lowered with
// CHECK-NEXT: matrix-lowering-remarks.mlir:[[# @LINE + 5]]:3: remark: 'matrix.matvec' op kernel: vectorized; not fused block-scaled vector: fewer than 32 rows{{$}}
func.func @mxfp4_rows(%w: memref<?xi8>, %s: memref<?xi8>, %x: vector<64xf32>) -> vector<24xf32> {
  %q = matrix.column_major_load %w[0] packed : memref<?xi8> -> !matrix.matrix<24x64xi4>
  %sc = matrix.column_major_load %s[0] : memref<?xi8> -> !matrix.matrix<24x2xi8>
  %m = arbfp.scaled_convert_from f4e2m1fn %q, %sc block 32 : !matrix.matrix<24x64xi4>, !matrix.matrix<24x2xi8> to !matrix.matrix<24x64xf32>
  %y = matrix.matvec %m, %x : !matrix.matrix<24x64xf32>, vector<64xf32> -> vector<24xf32>
  func.return %y : vector<24xf32>
}

// Rows not a multiple of two vectors: the last group overlaps the one before.
// CHECK-LABEL: remark: @mxfp4_tail_rows: lowered with
// CHECK-NEXT: matrix-lowering-remarks.mlir:[[# @LINE + 5]]:3: remark: 'matrix.matvec' op kernel: fused block-scaled vector{{$}}
func.func @mxfp4_tail_rows(%w: memref<?xi8>, %s: memref<?xi8>, %x: vector<64xf32>) -> vector<40xf32> {
  %q = matrix.column_major_load %w[0] packed : memref<?xi8> -> !matrix.matrix<40x64xi4>
  %sc = matrix.column_major_load %s[0] : memref<?xi8> -> !matrix.matrix<40x2xi8>
  %m = arbfp.scaled_convert_from f4e2m1fn %q, %sc block 32 : !matrix.matrix<40x64xi4>, !matrix.matrix<40x2xi8> to !matrix.matrix<40x64xf32>
  %y = matrix.matvec %m, %x : !matrix.matrix<40x64xf32>, vector<64xf32> -> vector<40xf32>
  func.return %y : vector<40xf32>
}

// An odd number of packed column-major rows: that last group starts at an odd row.
// CHECK-LABEL: remark: @mxfp4_odd_rows: lowered with
// CHECK-NEXT: matrix-lowering-remarks.mlir:[[# @LINE + 5]]:3: remark: 'matrix.matvec' op kernel: element by element; not fused block-scaled vector: an odd number of packed column-major rows{{$}}
func.func @mxfp4_odd_rows(%w: memref<?xi8>, %s: memref<?xi8>, %x: vector<64xf32>) -> vector<33xf32> {
  %q = matrix.column_major_load %w[0] packed : memref<?xi8> -> !matrix.matrix<33x64xi4>
  %sc = matrix.column_major_load %s[0] : memref<?xi8> -> !matrix.matrix<33x2xi8>
  %m = arbfp.scaled_convert_from f4e2m1fn %q, %sc block 32 : !matrix.matrix<33x64xi4>, !matrix.matrix<33x2xi8> to !matrix.matrix<33x64xf32>
  %y = matrix.matvec %m, %x : !matrix.matrix<33x64xf32>, vector<64xf32> -> vector<33xf32>
  func.return %y : vector<33xf32>
}

// Formats without a fused kernel.
// CHECK-LABEL: remark: @mxfp6: lowered with
// CHECK-NEXT: matrix-lowering-remarks.mlir:[[# @LINE + 5]]:3: remark: 'matrix.matvec' op kernel: vectorized; not fused block-scaled vector: f6e2m3fn elements have no fused kernel{{$}}
func.func @mxfp6(%w: memref<?xi6>, %s: memref<?xi8>, %x: vector<64xf32>) -> vector<32xf32> {
  %q = matrix.column_major_load %w[0] : memref<?xi6> -> !matrix.matrix<32x64xi6>
  %sc = matrix.column_major_load %s[0] : memref<?xi8> -> !matrix.matrix<32x2xi8>
  %m = arbfp.scaled_convert_from f6e2m3fn %q, %sc block 32 : !matrix.matrix<32x64xi6>, !matrix.matrix<32x2xi8> to !matrix.matrix<32x64xf32>
  %y = matrix.matvec %m, %x : !matrix.matrix<32x64xf32>, vector<64xf32> -> vector<32xf32>
  func.return %y : vector<32xf32>
}

// Scales that cannot be read as column vectors: copied into columns first.
// CHECK-LABEL: remark: @transposed_scales: lowered with
// CHECK-NEXT: matrix-lowering-remarks.mlir:[[# @LINE + 5]]:3: remark: 'matrix.matvec' op kernel: fused block-scaled vector{{$}}
func.func @transposed_scales(%w: memref<?xi8>, %s2: !matrix.matrix<2x32xi8>, %x: vector<64xf32>) -> vector<32xf32> {
  %q = matrix.column_major_load %w[0] : memref<?xi8> -> !matrix.matrix<32x64xi8>
  %sc = matrix.transpose %s2 : !matrix.matrix<2x32xi8> -> !matrix.matrix<32x2xi8>
  %m = arbfp.scaled_convert_from f8e4m3fn %q, %sc block 32 : !matrix.matrix<32x64xi8>, !matrix.matrix<32x2xi8> to !matrix.matrix<32x64xf32>
  %y = matrix.matvec %m, %x : !matrix.matrix<32x64xf32>, vector<64xf32> -> vector<32xf32>
  func.return %y : vector<32xf32>
}

// FP4 codes one per byte.
// CHECK-LABEL: remark: @unpacked_fp4: lowered with
// CHECK-NEXT: matrix-lowering-remarks.mlir:[[# @LINE + 5]]:3: remark: 'matrix.matvec' op kernel: fused block-scaled vector{{$}}
func.func @unpacked_fp4(%w: memref<?xi4>, %s: memref<?xi8>, %x: vector<64xf32>) -> vector<32xf32> {
  %q = matrix.column_major_load %w[0] : memref<?xi4> -> !matrix.matrix<32x64xi4>
  %sc = matrix.column_major_load %s[0] : memref<?xi8> -> !matrix.matrix<32x2xi8>
  %m = arbfp.scaled_convert_from f4e2m1fn %q, %sc block 32 : !matrix.matrix<32x64xi4>, !matrix.matrix<32x2xi8> to !matrix.matrix<32x64xf32>
  %y = matrix.matvec %m, %x : !matrix.matrix<32x64xf32>, vector<64xf32> -> vector<32xf32>
  func.return %y : vector<32xf32>
}

// Weights decoded to f16.
// CHECK-LABEL: remark: @f16_weights: lowered with
// CHECK-NEXT: matrix-lowering-remarks.mlir:[[# @LINE + 5]]:3: remark: 'matrix.matvec' op kernel: vectorized; not fused block-scaled vector: the weights are not decoded to f32{{$}}
func.func @f16_weights(%w: memref<?xi8>, %s: memref<?xi8>, %x: vector<64xf32>) -> vector<32xf32> {
  %q = matrix.column_major_load %w[0] packed : memref<?xi8> -> !matrix.matrix<32x64xi4>
  %sc = matrix.column_major_load %s[0] : memref<?xi8> -> !matrix.matrix<32x2xi8>
  %m = arbfp.scaled_convert_from f4e2m1fn %q, %sc block 32 : !matrix.matrix<32x64xi4>, !matrix.matrix<32x2xi8> to !matrix.matrix<32x64xf16>
  %y = matrix.matvec %m, %x : !matrix.matrix<32x64xf16>, vector<64xf32> -> vector<32xf32>
  func.return %y : vector<32xf32>
}

// Row-major rows that are not whole 32-bit words.
// CHECK-LABEL: remark: @fp4_row_major_odd_k: lowered with
// CHECK-NEXT: matrix-lowering-remarks.mlir:[[# @LINE + 4]]:3: remark: 'matrix.matvec' op kernel: cache-blocked vector; not fused decode vector: row-major rows not whole 32-bit words of 8 elements{{$}}
func.func @fp4_row_major_odd_k(%w: memref<?xi8>, %x: vector<60xf32>) -> vector<32xf32> {
  %q = matrix.row_major_load %w[0] packed : memref<?xi8> -> !matrix.matrix<32x60xi4>
  %m = arbfp.convert_from f4e2m1fn %q : !matrix.matrix<32x60xi4> to !matrix.matrix<32x60xf32>
  %y = matrix.matvec %m, %x : !matrix.matrix<32x60xf32>, vector<60xf32> -> vector<32xf32>
  func.return %y : vector<32xf32>
}

// Row-major blocks smaller than a 32-bit word.
// CHECK-LABEL: remark: @mxfp4_row_major_block4: lowered with
// CHECK-NEXT: matrix-lowering-remarks.mlir:[[# @LINE + 5]]:3: remark: 'matrix.matvec' op kernel: element by element; not fused block-scaled vector: row-major blocks of 4 elements do not fit 32-bit words{{$}}
func.func @mxfp4_row_major_block4(%w: memref<?xi8>, %s: memref<?xi8>, %x: vector<64xf32>) -> vector<32xf32> {
  %q = matrix.row_major_load %w[0] packed : memref<?xi8> -> !matrix.matrix<32x64xi4>
  %sc = matrix.column_major_load %s[0] : memref<?xi8> -> !matrix.matrix<32x16xi8>
  %m = arbfp.scaled_convert_from f4e2m1fn %q, %sc block 4 : !matrix.matrix<32x64xi4>, !matrix.matrix<32x16xi8> to !matrix.matrix<32x64xf32>
  %y = matrix.matvec %m, %x : !matrix.matrix<32x64xf32>, vector<64xf32> -> vector<32xf32>
  func.return %y : vector<32xf32>
}

// Block scales times a per-tensor scale.
// CHECK-LABEL: remark: @block_and_tensor_scale: lowered with
// CHECK-NEXT: matrix-lowering-remarks.mlir:[[# @LINE + 8]]:3: remark: 'matrix.matvec' op kernel: vectorized; not fused block-scaled vector: a per-tensor scale times block scales{{$}}
func.func @block_and_tensor_scale(%w: memref<?xi8>, %s: memref<?xi8>, %x: vector<64xf32>) -> vector<32xf32> {
  %q = matrix.column_major_load %w[0] packed : memref<?xi8> -> !matrix.matrix<32x64xi4>
  %sc = matrix.column_major_load %s[0] : memref<?xi8> -> !matrix.matrix<32x2xi8>
  %d = arbfp.scaled_convert_from f4e2m1fn %q, %sc block 32 : !matrix.matrix<32x64xi4>, !matrix.matrix<32x2xi8> to !matrix.matrix<32x64xf32>
  %c = arith.constant 0.5 : f32
  %k = matrix.splat %c : !matrix.matrix<32x64xf32>
  %m = matrix.mul %d, %k : !matrix.matrix<32x64xf32>
  %y = matrix.matvec %m, %x : !matrix.matrix<32x64xf32>, vector<64xf32> -> vector<32xf32>
  func.return %y : vector<32xf32>
}

// A result other than f32.
// CHECK-LABEL: remark: @f16_result: lowered with
// CHECK-NEXT: matrix-lowering-remarks.mlir:[[# @LINE + 5]]:3: remark: 'matrix.matvec' op kernel: vectorized; not fused block-scaled vector: the vector and the result are not f32{{$}}
func.func @f16_result(%w: memref<?xi8>, %s: memref<?xi8>, %x: vector<64xf16>) -> vector<32xf16> {
  %q = matrix.column_major_load %w[0] packed : memref<?xi8> -> !matrix.matrix<32x64xi4>
  %sc = matrix.column_major_load %s[0] : memref<?xi8> -> !matrix.matrix<32x2xi8>
  %m = arbfp.scaled_convert_from f4e2m1fn %q, %sc block 32 : !matrix.matrix<32x64xi4>, !matrix.matrix<32x2xi8> to !matrix.matrix<32x64xf16>
  %y = matrix.matvec %m, %x : !matrix.matrix<32x64xf16>, vector<64xf16> -> vector<32xf16>
  func.return %y : vector<32xf16>
}

// A product of packed weights at an odd offset.
// CHECK-LABEL: remark: @matmul_odd_offset: lowered with
// CHECK-NEXT: matrix-lowering-remarks.mlir:[[# @LINE + 4]]:3: remark: 'matrix.matmul' op kernel: element by element; not vectorized: packed elements not readable as vectors (an odd offset or stride, or i6){{$}}
func.func @matmul_odd_offset(%w: memref<?xi8>, %b: !matrix.matrix<64x4xf32>) -> !matrix.matrix<32x4xf32> {
  %q = matrix.column_major_load %w[1] packed : memref<?xi8> -> !matrix.matrix<32x64xi4>
  %m = arbfp.convert_from f4e2m1fn %q : !matrix.matrix<32x64xi4> to !matrix.matrix<32x64xf32>
  %y = matrix.matmul %m, %b : !matrix.matrix<32x64xf32>, !matrix.matrix<64x4xf32> -> !matrix.matrix<32x4xf32>
  func.return %y : !matrix.matrix<32x4xf32>
}


// A large mixed-precision product: the packed kernel, which widens the
// factors as it packs them.
// CHECK-LABEL: remark: @bf16_products_sum_in_f32: lowered with
// CHECK-NEXT: matrix-lowering-remarks.mlir:[[# @LINE + 2]]:3: remark: 'matrix.matmul' op kernel: cache-blocked vector{{$}}
func.func @bf16_products_sum_in_f32(%a: !matrix.matrix<128x128xbf16>, %b: !matrix.matrix<128x128xbf16>) -> !matrix.matrix<128x128xf32> {
  %r = matrix.matmul %a, %b : !matrix.matrix<128x128xbf16>, !matrix.matrix<128x128xbf16> -> !matrix.matrix<128x128xf32>
  func.return %r : !matrix.matrix<128x128xf32>
}

// The same product rounded to f16 at every step: not the packed kernel.
// CHECK-LABEL: remark: @f16_sums: lowered with
// CHECK-NEXT: matrix-lowering-remarks.mlir:[[# @LINE + 2]]:3: remark: 'matrix.matmul' op kernel: vectorized; not cache-blocked vector: sums rounded to f16/bf16 at every step{{$}}
func.func @f16_sums(%a: !matrix.matrix<128x128xf16>, %b: !matrix.matrix<128x128xf16>) -> !matrix.matrix<128x128xf16> {
  %r = matrix.matmul %a, %b : !matrix.matrix<128x128xf16>, !matrix.matrix<128x128xf16> -> !matrix.matrix<128x128xf16>
  func.return %r : !matrix.matrix<128x128xf16>
}

// Under `reassoc`, row-major FP4/FP8 weights are summed along K (any number
// of rows and columns); index offsets of packed codes are checked even at
// run time.
// CHECK-LABEL: remark: @mxfp4_reassoc: lowered with
// CHECK-NEXT: matrix-lowering-remarks.mlir:[[# @LINE + 5]]:3: remark: 'matrix.matvec' op kernel: fused reassociated vector (packed offset and stride checked even at run time, else element by element){{$}}
func.func @mxfp4_reassoc(%w: memref<?xi8>, %s: memref<?xi8>, %x: vector<96xf32>, %o: index) -> vector<3xf32> {
  %q = matrix.row_major_load %w[%o] packed : memref<?xi8> -> !matrix.matrix<3x96xi4>
  %sc = matrix.row_major_load %s[0] : memref<?xi8> -> !matrix.matrix<3x3xi8>
  %m = arbfp.scaled_convert_from f4e2m1fn %q, %sc block 32 : !matrix.matrix<3x96xi4>, !matrix.matrix<3x3xi8> to !matrix.matrix<3x96xf32>
  %y = matrix.matvec %m, %x fastmath<fast> : !matrix.matrix<3x96xf32>, vector<96xf32> -> vector<3xf32>
  func.return %y : vector<3xf32>
}

// CHECK-LABEL: remark: @fp8_reassoc_odd_k: lowered with
// CHECK-NEXT: matrix-lowering-remarks.mlir:[[# @LINE + 4]]:3: remark: 'matrix.matvec' op kernel: fused reassociated vector{{$}}
func.func @fp8_reassoc_odd_k(%w: memref<?xi8>, %x: vector<45xf32>) -> vector<7xf32> {
  %q = matrix.row_major_load %w[3] : memref<?xi8> -> !matrix.matrix<7x45xi8>
  %m = arbfp.convert_from f8e5m2 %q : !matrix.matrix<7x45xi8> to !matrix.matrix<7x45xf32>
  %y = matrix.matvec %m, %x fastmath<reassoc> : !matrix.matrix<7x45xf32>, vector<45xf32> -> vector<7xf32>
  func.return %y : vector<7xf32>
}

// Blocks narrower than two vectors of 4 lanes: the strict kernel.
// CHECK-LABEL: remark: @mxfp8_reassoc_block_4: lowered with
// CHECK-NEXT: matrix-lowering-remarks.mlir:[[# @LINE + 5]]:3: remark: 'matrix.matvec' op kernel: fused block-scaled vector; not fused reassociated vector: blocks of 4 elements are not a multiple of 8 columns{{$}}
func.func @mxfp8_reassoc_block_4(%w: memref<?xi8>, %s: memref<?xi8>, %x: vector<64xf32>) -> vector<32xf32> {
  %q = matrix.row_major_load %w[0] : memref<?xi8> -> !matrix.matrix<32x64xi8>
  %sc = matrix.column_major_load %s[0] : memref<?xi8> -> !matrix.matrix<32x16xi8>
  %m = arbfp.scaled_convert_from f8e4m3fn %q, %sc block 4 : !matrix.matrix<32x64xi8>, !matrix.matrix<32x16xi8> to !matrix.matrix<32x64xf32>
  %y = matrix.matvec %m, %x fastmath<reassoc,contract> : !matrix.matrix<32x64xf32>, vector<64xf32> -> vector<32xf32>
  func.return %y : vector<32xf32>
}

// Row-major f16 weights cast to f32 under `reassoc`: summed along K too.
// CHECK-LABEL: remark: @f16_reassoc: lowered with
// CHECK-NEXT: matrix-lowering-remarks.mlir:[[# @LINE + 4]]:3: remark: 'matrix.matvec' op kernel: reassociated vector{{$}}
func.func @f16_reassoc(%w: memref<?xf16>, %x: vector<64xf32>) -> vector<32xf32> {
  %q = matrix.row_major_load %w[0] : memref<?xf16> -> !matrix.matrix<32x64xf16>
  %m = matrix.cast %q : !matrix.matrix<32x64xf16> to !matrix.matrix<32x64xf32>
  %y = matrix.matvec %m, %x fastmath<fast> : !matrix.matrix<32x64xf32>, vector<64xf32> -> vector<32xf32>
  func.return %y : vector<32xf32>
}

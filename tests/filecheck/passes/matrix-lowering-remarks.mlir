// RUN: mx-opt %s -p matrix-lowering-remarks -o /dev/null 2>&1 | filecheck %s
// RUN: mx-opt %s -p 'matrix-fold-transposes,matrix-fuse-contractions,matrix-lowering-remarks' -o /dev/null 2>&1 | filecheck %s --check-prefix=AFTER
// RUN: mx-opt %s -p 'matrix-lowering-remarks{annotate=true}' 2>/dev/null | filecheck %s --check-prefix=ATTR
// RUN: mx-opt %s -p 'matrix-lowering-remarks{vector-bits=0}' -o /dev/null 2>&1 | filecheck %s --check-prefix=SCALAR

// What fold and fuse buy, in the counts of the lowered code (LLVM's
// `matrix-lowered` remark): the transposed product's result is written
// transposed, and its transposed left factor is copied into a temporary (24
// bytes beside the product's 32) so that its columns can be read as vectors:
// two transposes until the transposes cancel. Scalar code reads the factor
// with swapped indices: one transpose, no temporary.
// CHECK: remark: @transposed_product: lowered with 0 loads, 0 stores, 24 multiplies, 16 adds, 0 fmas, 0 divides, 2 transposes, 1 temporaries, 56 stack_bytes, 0 heap_buffers
// AFTER: remark: @transposed_product: lowered with 0 loads, 0 stores, 24 multiplies, 16 adds, 0 fmas, 0 divides, 0 transposes, 0 temporaries, 32 stack_bytes, 0 heap_buffers
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

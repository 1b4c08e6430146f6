// RUN: mx-opt %s | mx-opt | filecheck %s
// RUN: mx-opt %s --print-op-generic | mx-opt | filecheck %s
// RUN: mx-opt %s --print-op-generic | filecheck %s --check-prefix=GENERIC

// memref.prefetch, which mx adds to xDSL's memref dialect with MLIR's syntax
// and properties: every choice of read/write, locality and cache.
// CHECK-LABEL: func.func @prefetch
// GENERIC-LABEL: "func.func"
func.func @prefetch(%m: memref<64x32xf32>, %v: memref<?xi8>, %i: index, %j: index) {
  // CHECK-NEXT: memref.prefetch %m[%i, %j], read, locality<3>, data : memref<64x32xf32>
  // GENERIC: "memref.prefetch"(%m, %i, %j) <{isWrite = false, localityHint = 3 : i32, isDataCache = true}> : (memref<64x32xf32>, index, index) -> ()
  memref.prefetch %m[%i, %j], read, locality<3>, data : memref<64x32xf32>
  // CHECK-NEXT: memref.prefetch %m[%j, %i], write, locality<0>, instr : memref<64x32xf32>
  // GENERIC: "memref.prefetch"(%m, %j, %i) <{isWrite = true, localityHint = 0 : i32, isDataCache = false}> : (memref<64x32xf32>, index, index) -> ()
  memref.prefetch %m[%j, %i], write, locality<0>, instr : memref<64x32xf32>
  // CHECK-NEXT: memref.prefetch %v[%i], read, locality<1>, data {note = "kept"} : memref<?xi8>
  memref.prefetch %v[%i], read, locality<1>, data {note = "kept"} : memref<?xi8>
  // CHECK-NEXT: func.return
  func.return
}

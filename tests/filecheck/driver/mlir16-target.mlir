// -t mlir16 prints what MLIR 16's parser accepts: no integer overflow flags,
// and vector.extract with constant positions in MLIR 16's spelling; a dynamic
// position (which MLIR 16 lacks) is a located error.
// RUN: not mx-opt %s --split-input-file -t mlir16 2>/dev/null | filecheck %s
// RUN: mx-opt %s --split-input-file | filecheck %s --check-prefix=DEFAULT
// RUN: not mx-opt %s --split-input-file -t mlir16 2>&1 >/dev/null | filecheck %s --check-prefix=ERR

// CHECK-LABEL: func.func @flags
// CHECK-NEXT: %{{.*}} = arith.subi %a, %b : i32
// CHECK-NEXT: %{{.*}} = arith.addi %a, %b : i32
// CHECK-NEXT: %{{.*}} = arith.muli %a, %b : i32
// DEFAULT-LABEL: func.func @flags
// DEFAULT-NEXT: arith.subi %a, %b overflow<nsw> : i32
// DEFAULT-NEXT: arith.addi %a, %b overflow<nsw,nuw> : i32
func.func @flags(%a: i32, %b: i32) -> i32 {
  %d = arith.subi %a, %b overflow<nsw> : i32
  %s = arith.addi %a, %b overflow<nsw, nuw> : i32
  %p = arith.muli %a, %b : i32
  func.return %d : i32
}

// CHECK-LABEL: func.func @extract
// CHECK-NEXT: %{{.*}} = vector.extract %v[1, 2] : vector<2x4xf32>
// CHECK-NEXT: %{{.*}} = vector.extract %v[0] : vector<2x4xf32>
// CHECK-NEXT: %{{.*}} = vector.extract %w[3] : vector<4xi8>
// DEFAULT-LABEL: func.func @extract
// DEFAULT-NEXT: vector.extract %v[1, 2] : f32 from vector<2x4xf32>
func.func @extract(%v: vector<2x4xf32>, %w: vector<4xi8>) -> f32 {
  %e = vector.extract %v[1, 2] : f32 from vector<2x4xf32>
  %r = vector.extract %v[0] : vector<4xf32> from vector<2x4xf32>
  %b = vector.extract %w[3] : i8 from vector<4xi8>
  func.return %e : f32
}

// -----

// ERR: mlir16-target.mlir:[[# @LINE + 2]]:3: error: 'vector.extract' op a dynamic position cannot be printed for MLIR 16
func.func @dynamic(%v: vector<4xf32>, %i: index) -> f32 {
  %e = vector.extract %v[%i] : f32 from vector<4xf32>
  func.return %e : f32
}

// -----

// Properties of ops printed in the generic form become attributes.
// CHECK-LABEL: func.func @generic_properties
// CHECK: "affine.if"(%i, %n) ({
// CHECK: }) {condition = affine_set<(d0)[s0] : ({{.*}} >= 0)>} : (index, index) -> ()
// DEFAULT-LABEL: func.func @generic_properties
// DEFAULT: "affine.if"(%i, %n) <{condition = affine_set<
func.func @generic_properties(%i: index, %n: index, %m: memref<4xf32>, %x: f32) {
  "affine.if"(%i, %n) <{condition = affine_set<(d0)[s0] : (s0 - d0 - 1 >= 0)>}> ({
    affine.store %x, %m[0] : memref<4xf32>
    affine.yield
  }, {
  }) : (index, index) -> ()
  func.return
}

// -----

// MLIR 16 named maximumf/minimumf maxf/minf; its prefetch syntax takes no
// attribute dictionary, so a prefetch with attributes is printed generic.
// CHECK-LABEL: func.func @renamed
// CHECK-NEXT: %{{.*}} = "arith.maxf"(%a, %b) {fastmath = #arith.fastmath<nnan>} : (f32, f32) -> f32
// CHECK-NEXT: %{{.*}} = "arith.minf"(%a, %b) {fastmath = #arith.fastmath<none>} : (f32, f32) -> f32
// CHECK-NEXT: memref.prefetch %m[%i], write, locality<2>, data : memref<4xf32>
// CHECK-NEXT: "memref.prefetch"(%m, %i) {note = "kept", isWrite = false, localityHint = 1 : i32, isDataCache = true} : (memref<4xf32>, index) -> ()
// DEFAULT-LABEL: func.func @renamed
// DEFAULT-NEXT: arith.maximumf %a, %b fastmath<nnan> : f32
func.func @renamed(%a: f32, %b: f32, %m: memref<4xf32>, %i: index) -> f32 {
  %x = arith.maximumf %a, %b fastmath<nnan> : f32
  %n = arith.minimumf %a, %b : f32
  memref.prefetch %m[%i], write, locality<2>, data : memref<4xf32>
  memref.prefetch %m[%i], read, locality<1>, data {note = "kept"} : memref<4xf32>
  func.return %x : f32
}

// -----

// ERR: mlir16-target.mlir:[[# @LINE + 2]]:3: error: 'arith.maxnumf' op cannot be printed for MLIR 16 (it has no such op)
func.func @maxnumf(%a: f32, %b: f32) -> f32 {
  %x = arith.maxnumf %a, %b : f32
  func.return %x : f32
}

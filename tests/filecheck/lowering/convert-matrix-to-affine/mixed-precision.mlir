// RUN: mx-opt %s -p convert-matrix-to-affine | filecheck %s
// RUN: mx-opt %s -p "convert-matrix-to-affine{vector-bits=0}" | filecheck %s --check-prefix=SCALAR

// Mixed-precision products widen each factor where it is read, in registers:
// the only buffer is the result's; no matrix of the wider type is built.

// i8 x i8 -> i32: a column block of A is loaded as i8 lanes and sign-extended;
// each element of B is sign-extended, then broadcast.
// CHECK-LABEL: func.func @int8
// CHECK-SAME: (%[[A:.*]]: memref<4x16xi8>, %[[B:.*]]: memref<2x4xi8>, %[[OUT:.*]]: memref<2x16xi32>)
// CHECK-NOT: memref.alloca{{.*}}xi8>
// CHECK: %[[A0:.*]] = vector.load %[[A]][%{{.*}}, %{{.*}}] : memref<4x16xi8>, vector<16xi8>
// CHECK-NEXT: %[[WA0:.*]] = llvm.sext %[[A0]] : vector<16xi8> to vector<16xi32>
// CHECK-NEXT: %[[B0:.*]] = affine.load %[[B]][0, 0] : memref<2x4xi8>
// CHECK-NEXT: %[[WB0:.*]] = arith.extsi %[[B0]] : i8 to i32
// CHECK-NEXT: vector.broadcast %[[WB0]] : i32 to vector<16xi32>
// CHECK: affine.for %{{.*}} = 1 to 4 iter_args
// CHECK: llvm.sext %{{.*}} : vector<16xi8> to vector<16xi32>
// CHECK: arith.muli %{{.*}} : vector<16xi32>
// CHECK-NEXT: arith.addi %{{.*}} : vector<16xi32>
// SCALAR-LABEL: func.func @int8
// SCALAR: %[[A0:.*]] = affine.load %{{.*}}[0, %{{.*}}] : memref<4x16xi8>
// SCALAR-NEXT: %[[WA0:.*]] = arith.extsi %[[A0]] : i8 to i32
// SCALAR-NEXT: %[[B0:.*]] = affine.load %{{.*}}[%{{.*}}, 0] : memref<2x4xi8>
// SCALAR-NEXT: %[[WB0:.*]] = arith.extsi %[[B0]] : i8 to i32
// SCALAR-NEXT: arith.muli %[[WA0]], %[[WB0]] : i32
func.func @int8(%a: !matrix.matrix<16x4xi8>, %b: !matrix.matrix<4x2xi8>) -> !matrix.matrix<16x2xi32> {
  %0 = matrix.matmul %a, %b : !matrix.matrix<16x4xi8>, !matrix.matrix<4x2xi8> -> !matrix.matrix<16x2xi32>
  func.return %0 : !matrix.matrix<16x2xi32>
}

// {unsigned} zero-extends.
// CHECK-LABEL: func.func @unsigned
// CHECK: llvm.zext %{{.*}} : vector<16xi8> to vector<16xi16>
// CHECK: arith.extui %{{.*}} : i8 to i16
// CHECK-NOT: sext
// SCALAR-LABEL: func.func @unsigned
// SCALAR: arith.extui %{{.*}} : i8 to i16
// SCALAR: arith.extui %{{.*}} : i8 to i16
// SCALAR-NOT: extsi
func.func @unsigned(%a: !matrix.matrix<16x4xi8>, %b: !matrix.matrix<4x2xi8>) -> !matrix.matrix<16x2xi16> {
  %0 = matrix.matmul %a, %b {unsigned} : !matrix.matrix<16x4xi8>, !matrix.matrix<4x2xi8> -> !matrix.matrix<16x2xi16>
  func.return %0 : !matrix.matrix<16x2xi16>
}

// f16 x bf16 -> f32 matmul_add: exact extf of both factors, then the f32
// product in docs/matrix-dialect.md's order; the accumulator is added last.
// CHECK-LABEL: func.func @float
// CHECK: arith.extf %{{.*}} : vector<16xf16> to vector<16xf32>
// CHECK: arith.extf %{{.*}} : bf16 to f32
// CHECK: arith.mulf %{{.*}} : vector<16xf32>
// CHECK: affine.for
// CHECK: arith.mulf
// CHECK-NEXT: arith.addf
// CHECK: affine.yield
// CHECK: arith.addf %{{.*}} : vector<16xf32>
// CHECK-NOT: math.fma
// SCALAR-LABEL: func.func @float
// SCALAR: arith.extf %{{.*}} : f16 to f32
// SCALAR-NEXT: affine.load
// SCALAR-NEXT: arith.extf %{{.*}} : bf16 to f32
// SCALAR-NEXT: arith.mulf %{{.*}} : f32
func.func @float(%a: !matrix.matrix<16x4xf16>, %b: !matrix.matrix<4x2xbf16>, %c: !matrix.matrix<16x2xf32>) -> !matrix.matrix<16x2xf32> {
  %0 = matrix.matmul_add %a, %b, %c : !matrix.matrix<16x4xf16>, !matrix.matrix<4x2xbf16>, !matrix.matrix<16x2xf32> -> !matrix.matrix<16x2xf32>
  func.return %0 : !matrix.matrix<16x2xf32>
}

// matvec f16 weights x f16 vector -> f32: the vector is kept in an f16
// one-column buffer, each element widened where it is read.
// CHECK-LABEL: func.func @matvec
// CHECK: memref.alloca() {{.*}} : memref<1x8xf16>
// CHECK: arith.extf %{{.*}} : vector<16xf16> to vector<16xf32>
// CHECK: arith.extf %{{.*}} : f16 to f32
// CHECK: math.fma {{.*}} fastmath<contract> : vector<16xf32>
// SCALAR-LABEL: func.func @matvec
// SCALAR: vector.extract %{{.*}}[%{{.*}}] : f16 from vector<8xf16>
// SCALAR-NEXT: arith.extf %{{.*}} : f16 to f32
func.func @matvec(%w: !matrix.matrix<16x8xf16>, %x: vector<8xf16>) -> vector<16xf32> {
  %0 = matrix.matvec %w, %x fastmath<contract> : !matrix.matrix<16x8xf16>, vector<8xf16> -> vector<16xf32>
  func.return %0 : vector<16xf32>
}

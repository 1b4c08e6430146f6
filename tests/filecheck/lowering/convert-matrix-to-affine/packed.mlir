// RUN: mx-opt %s -p convert-matrix-to-affine | filecheck %s

// Packed i4: element n is the nibble at bit 4n of the byte stream: byte
// (4n) >> 3, shifted right by (4n) & 7. (The store may write memory the
// load reads, two function arguments may alias: the load gets a buffer.)
// Index constants are made once, at the start of the function.
// CHECK-LABEL: func.func @copy_i4
// CHECK-DAG: %[[W:.*]] = arith.constant 4 : index
// CHECK-DAG: %[[THREE:.*]] = arith.constant 3 : index
// CHECK-DAG: %[[SEVEN:.*]] = arith.constant 7 : index
// CHECK: memref.alloca() {{.*}} : memref<3x4xi4>
// CHECK: %[[BIT:.*]] = arith.muli %{{.*}}, %[[W]] : index
// CHECK-NEXT: %[[BYTE:.*]] = arith.shrui %[[BIT]], %[[THREE]] : index
// CHECK-NEXT: %[[S:.*]] = arith.andi %[[BIT]], %[[SEVEN]] : index
// CHECK-NEXT: %[[S32:.*]] = arith.index_cast %[[S]] : index to i32
// CHECK-NEXT: %[[B:.*]] = memref.load %{{.*}}[%[[BYTE]]] : memref<?xi8>
// CHECK-NEXT: %[[B32:.*]] = arith.extui %[[B]] : i8 to i32
// CHECK-NEXT: %[[SH:.*]] = arith.shrui %[[B32]], %[[S32]] : i32
// CHECK-NEXT: %[[MASK:.*]] = arith.constant 15 : i32
// CHECK-NEXT: %[[V:.*]] = arith.andi %[[SH]], %[[MASK]] : i32
// CHECK-NEXT: %[[X:.*]] = arith.trunci %[[V]] : i32 to i4
// CHECK-NEXT: affine.store %[[X]], %{{.*}} : memref<3x4xi4>
// The store rewrites only the element's nibble: old & ~(15 << s) | x << s.
// CHECK: %[[Y:.*]] = affine.load %{{.*}} : memref<3x4xi4>
// CHECK: %[[X32:.*]] = arith.extui %[[Y]] : i4 to i32
// CHECK-NEXT: %[[ONES:.*]] = arith.constant 15 : i32
// CHECK-NEXT: %[[M:.*]] = arith.shli %[[ONES]], %{{.*}} : i32
// CHECK-NEXT: %[[LOW:.*]] = arith.shli %[[X32]], %{{.*}} : i32
// CHECK-NEXT: %[[OLD:.*]] = memref.load %{{.*}}[%[[DST:.*]]] : memref<?xi8>
// CHECK-NEXT: %[[OLD32:.*]] = arith.extui %[[OLD]] : i8 to i32
// CHECK-NEXT: %[[ALL:.*]] = arith.constant -1 : i32
// CHECK-NEXT: %[[NOTM:.*]] = arith.xori %[[M]], %[[ALL]] : i32
// CHECK-NEXT: %[[KEPT:.*]] = arith.andi %[[OLD32]], %[[NOTM]] : i32
// CHECK-NEXT: %[[NEW:.*]] = arith.ori %[[KEPT]], %[[LOW]] : i32
// CHECK-NEXT: %[[NEW8:.*]] = arith.trunci %[[NEW]] : i32 to i8
// CHECK-NEXT: memref.store %[[NEW8]], %{{.*}}[%[[DST]]] : memref<?xi8>
func.func @copy_i4(%src: memref<?xi8>, %dst: memref<?xi8>, %off: index) {
  %m = matrix.column_major_load %src[1] stride 5 packed : memref<?xi8> -> !matrix.matrix<4x3xi4>
  matrix.row_major_store %m, %dst[%off] packed : !matrix.matrix<4x3xi4>, memref<?xi8>
  func.return
}

// Packed i6: an element at bit offset s >= 4 of its first byte runs on into
// the next one, byte + (s >> 2) (the first byte again when s <= 2). The load
// ORs the two bytes into one word; the store rewrites the second byte's
// bits (mask 63 >> (8 - s)) before the first byte's (63 << s).
// CHECK-LABEL: func.func @store_i6
// CHECK-DAG: %[[W:.*]] = arith.constant 6 : index
// CHECK-DAG: %[[TWO:.*]] = arith.constant 2 : index
// CHECK: %[[BIT:.*]] = arith.muli %{{.*}}, %[[W]] : index
// CHECK: %[[FIRST:.*]] = arith.shrui %[[BIT]], %{{.*}} : index
// CHECK: %[[S:.*]] = arith.andi %[[BIT]], %{{.*}} : index
// CHECK-NEXT: %[[CROSS:.*]] = arith.shrui %[[S]], %[[TWO]] : index
// CHECK-NEXT: %[[LAST:.*]] = arith.addi %[[FIRST]], %[[CROSS]] : index
// CHECK-NEXT: %[[S32:.*]] = arith.index_cast %[[S]] : index to i32
// CHECK-NEXT: %[[X:.*]] = arith.extui %{{.*}} : i6 to i32
// CHECK-NEXT: %[[ONES:.*]] = arith.constant 63 : i32
// CHECK-NEXT: %[[EIGHT:.*]] = arith.constant 8 : i32
// CHECK-NEXT: %[[DOWN:.*]] = arith.subi %[[EIGHT]], %[[S32]] : i32
// CHECK-NEXT: %[[HMASK:.*]] = arith.shrui %[[ONES]], %[[DOWN]] : i32
// CHECK-NEXT: %[[HIGH:.*]] = arith.shrui %[[X]], %[[DOWN]] : i32
// CHECK-NEXT: %[[OLDH:.*]] = memref.load %{{.*}}[%[[LAST]]] : memref<6xi8>
// CHECK: memref.store %{{.*}}, %{{.*}}[%[[LAST]]] : memref<6xi8>
// CHECK-NEXT: %[[LMASK:.*]] = arith.shli %[[ONES]], %[[S32]] : i32
// CHECK-NEXT: %[[LOW:.*]] = arith.shli %[[X]], %[[S32]] : i32
// CHECK-NEXT: %[[OLDL:.*]] = memref.load %{{.*}}[%[[FIRST]]] : memref<6xi8>
// CHECK: memref.store %{{.*}}, %{{.*}}[%[[FIRST]]] : memref<6xi8>
func.func @store_i6(%m: !matrix.matrix<2x3xi6>, %dst: memref<6xi8>) {
  matrix.row_major_store %m, %dst[1] stride 4 packed : !matrix.matrix<2x3xi6>, memref<6xi8>
  func.return
}

// CHECK-LABEL: func.func @load_i6
// CHECK: %[[FIRST:.*]] = arith.shrui %{{.*}}, %{{.*}} : index
// CHECK: %[[LAST:.*]] = arith.addi %[[FIRST]], %{{.*}} : index
// CHECK-NEXT: %[[S32:.*]] = arith.index_cast %{{.*}} : index to i32
// CHECK-NEXT: %[[LO:.*]] = memref.load %{{.*}}[%[[FIRST]]] : memref<?xi8>
// CHECK-NEXT: %[[LO32:.*]] = arith.extui %[[LO]] : i8 to i32
// CHECK-NEXT: %[[HI:.*]] = memref.load %{{.*}}[%[[LAST]]] : memref<?xi8>
// CHECK-NEXT: %[[HI32:.*]] = arith.extui %[[HI]] : i8 to i32
// CHECK-NEXT: %[[EIGHT:.*]] = arith.constant 8 : i32
// CHECK-NEXT: %[[UP:.*]] = arith.shli %[[HI32]], %[[EIGHT]] : i32
// CHECK-NEXT: %[[WORD:.*]] = arith.ori %[[LO32]], %[[UP]] : i32
// CHECK-NEXT: %[[SH:.*]] = arith.shrui %[[WORD]], %[[S32]] : i32
// CHECK-NEXT: %[[MASK:.*]] = arith.constant 63 : i32
// CHECK-NEXT: %[[V:.*]] = arith.andi %[[SH]], %[[MASK]] : i32
// CHECK-NEXT: arith.trunci %[[V]] : i32 to i6
func.func @load_i6(%src: memref<?xi8>, %off: index) -> !matrix.matrix<3x3xi6> {
  %m = matrix.column_major_load %src[%off] packed : memref<?xi8> -> !matrix.matrix<3x3xi6>
  func.return %m : !matrix.matrix<3x3xi6>
}

// The MX matvec: packed FP4 weights (column-major, even offset and stride)
// feed scaled_convert_from, which feeds the product. With fewer rows than
// a group of the weight-times-vector kernel (decoded-matvec.mlir), one
// loop nest reads the packed bytes as vectors, splits the nibbles, decodes
// and scales them in registers: no buffer of decoded f32 weights (only the
// i8 scales, read N times each, and the product's one-column x and y).
// CHECK-LABEL: func.func @mx_matvec
// CHECK-NOT: memref<64x24xf32>
// CHECK-DAG: %[[MASK:.*]] = arith.constant dense<15> : vector<8xi32>
// CHECK-DAG: %[[FOUR:.*]] = arith.constant dense<4> : vector<8xi32>
// CHECK: %[[BYTES:.*]] = vector.load %w[%{{.*}}] : memref<?xi8>, vector<8xi8>
// CHECK-NEXT: %[[WIDE:.*]] = llvm.zext %[[BYTES]] : vector<8xi8> to vector<8xi32>
// CHECK-NEXT: %[[LOW:.*]] = arith.andi %[[WIDE]], %[[MASK]] : vector<8xi32>
// CHECK-NEXT: %[[HIGH:.*]] = arith.shrui %[[WIDE]], %[[FOUR]] : vector<8xi32>
// CHECK-NEXT: %{{.*}} = vector.shuffle %[[LOW]], %[[HIGH]] [0, 8, 1, 9, {{.*}}] : vector<8xi32>, vector<8xi32>
// CHECK: arith.mulf %{{.*}}, %{{.*}} : vector<16xf32>
// CHECK-NOT: memref<64x24xf32>
// CHECK: func.return
func.func @mx_matvec(%w: memref<?xi8>, %s: memref<?xi8>, %x: vector<64xf32>) -> vector<24xf32> {
  %q = matrix.column_major_load %w[0] packed : memref<?xi8> -> !matrix.matrix<24x64xi4>
  %sc = matrix.column_major_load %s[0] : memref<?xi8> -> !matrix.matrix<24x2xi8>
  %f = arbfp.scaled_convert_from f4e2m1fn %q, %sc block 32 : !matrix.matrix<24x64xi4>, !matrix.matrix<24x2xi8> to !matrix.matrix<24x64xf32>
  %y = matrix.matvec %f, %x : !matrix.matrix<24x64xf32>, vector<64xf32> -> vector<24xf32>
  func.return %y : vector<24xf32>
}

// Row-major packed weights whose columns are not whole chunks of the
// kernel (64 columns, 8 words a row): the last, narrower chunk reads its 4
// words of each row and pads them to 8 lanes (the padding is never used).
// CHECK-LABEL: func.func @mx_matvec_row_major
// CHECK-NOT: memref<32x32xf32>
// CHECK: %[[ROW:.*]] = vector.load %w[%{{.*}}] : memref<?xi8>, vector<16xi8>
// CHECK-NEXT: %[[WORDS:.*]] = vector.bitcast %[[ROW]] : vector<16xi8> to vector<4xi32>
// CHECK-NEXT: vector.shuffle %[[WORDS]], %[[WORDS]] [0, 1, 2, 3, 0, 0, 0, 0] : vector<4xi32>, vector<4xi32>
// CHECK-NOT: memref<32x32xf32>
// CHECK: func.return
func.func @mx_matvec_row_major(%w: memref<?xi8>, %s: memref<?xi8>, %x: vector<32xf32>) -> vector<32xf32> {
  %q = matrix.row_major_load %w[0] packed : memref<?xi8> -> !matrix.matrix<32x32xi4>
  %sc = matrix.column_major_load %s[0] : memref<?xi8> -> !matrix.matrix<32x1xi8>
  %f = arbfp.scaled_convert_from f4e2m1fn %q, %sc block 32 : !matrix.matrix<32x32xi4>, !matrix.matrix<32x1xi8> to !matrix.matrix<32x32xf32>
  %y = matrix.matvec %f, %x : !matrix.matrix<32x32xf32>, vector<32xf32> -> vector<32xf32>
  func.return %y : vector<32xf32>
}

// Packed i4 at even literal offsets and strides moves whole bytes in vectors:
// a block of 64 nibbles is 32 bytes split into low and high nibbles and
// interleaved, truncated to i4 as one vector (into the one-byte-per-element
// buffer the load is materialized in: the two memrefs may alias); the store
// widens the block as one vector and packs even and odd lanes back into bytes.
// CHECK-LABEL: func.func @copy_i4_vectors
// CHECK: memref.alloca() {{.*}} : memref<2x64xi4>
// CHECK: %[[BYTES:.*]] = vector.load %{{.*}} : memref<?xi8>, vector<32xi8>
// CHECK: %[[LANES:.*]] = vector.shuffle
// CHECK-NEXT: llvm.trunc %[[LANES]] : vector<64xi8> to vector<64xi4>
// CHECK-NOT: vector.extract
// CHECK: %[[BLOCK:.*]] = vector.load %{{.*}} : memref<2x64xi4>, vector<64xi4>
// CHECK: %[[WIDE:.*]] = llvm.zext %[[BLOCK]] : vector<64xi4> to vector<64xi8>
// CHECK-NEXT: vector.shuffle %[[WIDE]], %[[WIDE]] [0, 2, 4,
// CHECK: arith.shli
// CHECK: vector.store %{{.*}} : memref<?xi8>, vector<32xi8>
// CHECK-NOT: vector.extract
func.func @copy_i4_vectors(%src: memref<?xi8>, %dst: memref<?xi8>) {
  %m = matrix.column_major_load %src[0] packed : memref<?xi8> -> !matrix.matrix<64x2xi4>
  matrix.column_major_store %m, %dst[128] packed : !matrix.matrix<64x2xi4>, memref<?xi8>
  func.return
}

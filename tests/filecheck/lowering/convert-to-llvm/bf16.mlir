// RUN: mx-opt %s -p convert-to-llvm -t llvm | filecheck %s
// RUN: mx-opt %s -p convert-to-llvm -t llvm | filecheck %s --check-prefix=VECTORS

// bf16 values are held as the i16 of their bits: LLVM never sees a bf16
// vector (its X86 back end aborted legalizing them on some CPUs). A scalar
// bf16 argument or result stays `bfloat` (C's __bf16); bf16 arithmetic is
// f32 arithmetic on the widened bits.
// VECTORS-NOT: x bfloat>
// VECTORS: define <4 x i16> @vectors
// VECTORS-NOT: x bfloat>

// CHECK-LABEL: define bfloat @scalar(bfloat %{{.*}}, ptr %{{.*}}, i64 %{{.*}})
// CHECK: %[[X:.*]] = bitcast bfloat %{{.*}} to i16
// CHECK: %[[P:.*]] = getelementptr inbounds i16, ptr %{{.*}}, i64 %{{.*}}
// CHECK: store i16 %[[X]], ptr %[[P]]
// CHECK: zext i16 16320 to i32
// CHECK: fadd float
// CHECK: %[[R:.*]] = trunc i32 %{{.*}} to i16
// CHECK: %[[B:.*]] = bitcast i16 %[[R]] to bfloat
// CHECK: ret bfloat %[[B]]
func.func @scalar(%x: bf16, %m: memref<?xbf16>, %i: index) -> bf16 {
  memref.store %x, %m[%i] : memref<?xbf16>
  %c = arith.constant 1.5 : bf16
  %s = arith.addf %x, %c : bf16
  func.return %s : bf16
}

// A bf16 vector crosses calls as <N x i16>; splats, lanes, shuffles, loads,
// stores and constants are i16 ones.
// CHECK-LABEL: define <4 x i16> @vectors(<4 x i16> %{{.*}}, bfloat %{{.*}}, ptr %{{.*}}, i64 %{{.*}})
// CHECK: %[[S:.*]] = bitcast bfloat %{{.*}} to i16
// CHECK: %[[L0:.*]] = insertelement <4 x i16> undef, i16 %[[S]], i32 0
// CHECK: %[[SPLAT:.*]] = shufflevector <4 x i16> %[[L0]], <4 x i16> undef, <4 x i32> <i32 0, i32 0, i32 0, i32 0>
// CHECK: %[[V:.*]] = load <4 x i16>, ptr %{{.*}}, align 2
// CHECK: %[[E:.*]] = extractelement <4 x i16> %[[V]], i64 1
// CHECK: %[[W:.*]] = insertelement <4 x i16> %{{.*}}, i16 %[[E]], i64 0
// CHECK: %[[SH:.*]] = shufflevector <4 x i16> %[[W]], <4 x i16> %[[SPLAT]], <4 x i32> <i32 0, i32 5, i32 2, i32 7>
// CHECK: store <4 x i16> %[[SH]], ptr %{{.*}}, align 2
// CHECK: ret <4 x i16> <i16 16320, i16 -16384, i16 0, i16 16256>
func.func @vectors(%v: vector<4xbf16>, %x: bf16, %m: memref<?xbf16>, %i: index) -> vector<4xbf16> {
  %b = vector.broadcast %x : bf16 to vector<4xbf16>
  %l = vector.load %m[%i] : memref<?xbf16>, vector<4xbf16>
  %e = vector.extract %l[1] : bf16 from vector<4xbf16>
  %w = vector.insert %e, %v[0] : bf16 into vector<4xbf16>
  %s = vector.shuffle %w, %b [0, 5, 2, 7] : vector<4xbf16>, vector<4xbf16>
  vector.store %s, %m[%i] : memref<?xbf16>, vector<4xbf16>
  %k = arith.constant dense<[1.5, -2.0, 0.0, 1.0]> : vector<4xbf16>
  func.return %k : vector<4xbf16>
}

// CHECK-LABEL: define bfloat @call(bfloat %{{.*}})
// CHECK: %[[R:.*]] = call bfloat @scalar_ext(bfloat %{{.*}})
// CHECK: bitcast bfloat %[[R]] to i16
// CHECK: ret bfloat
func.func @call(%x: bf16) -> bf16 {
  %r = func.call @scalar_ext(%x) : (bf16) -> bf16
  func.return %r : bf16
}
func.func private @scalar_ext(bf16) -> bf16

// CHECK: declare bfloat @scalar_ext(bfloat)
// CHECK: @table = private constant [2 x i16] [i16 16320, i16 -16384]
"memref.global"() <{sym_name = "table", sym_visibility = "private", type = memref<2xbf16>, initial_value = dense<[1.5, -2.0]> : tensor<2xbf16>, constant}> : () -> ()

// CHECK-LABEL: define bfloat @global(i64 %{{.*}})
// CHECK: %[[X:.*]] = load i16, ptr %{{.*}}
// CHECK: %[[B:.*]] = bitcast i16 %[[X]] to bfloat
// CHECK: ret bfloat %[[B]]
func.func @global(%i: index) -> bf16 {
  %t = memref.get_global @table : memref<2xbf16>
  %x = memref.load %t[%i] : memref<2xbf16>
  func.return %x : bf16
}

; The LLVM IR that mx-opt -p mx-lower-to-llvm -t llvm wrote (before bf16 was held as i16) for
; matrix.matvec of !matrix.matrix<3x1xbf16> by vector<1xbf16> -> vector<3xf32>: llvmlite's LLVM 22 aborts
; optimizing it (Constant::getSplatValue: Only valid for vectors!) for every x86 CPU.
target datalayout = "e-m:e-p270:32:32-p271:32:32-p272:64:64-i64:64-i128:128-f80:128-n8:16:32:64-S128"
target triple = "x86_64-unknown-linux-gnu"


define <3 x float> @f(ptr %v0, <1 x bfloat> %v1) {
bb0:
  %v2 = alloca float, i64 3, align 64
  %v3 = alloca bfloat, i64 1, align 64
  store <1 x bfloat> %v1, ptr %v3, align 2
  %v4 = load <2 x bfloat>, ptr %v0, align 2
  %v5 = bitcast <2 x bfloat> %v4 to <2 x i16>
  %v6 = extractelement <2 x i16> %v5, i64 0
  %v7 = zext i16 %v6 to i32
  %v8 = insertelement <2 x i32> <i32 0, i32 0>, i32 %v7, i64 0
  %v9 = extractelement <2 x i16> %v5, i64 1
  %v10 = zext i16 %v9 to i32
  %v11 = insertelement <2 x i32> %v8, i32 %v10, i64 1
  %v12 = shl <2 x i32> %v11, <i32 16, i32 16>
  %v13 = bitcast <2 x i32> %v12 to <2 x float>
  %v14 = load bfloat, ptr %v3
  %v15 = bitcast bfloat %v14 to i16
  %v16 = zext i16 %v15 to i32
  %v17 = shl i32 %v16, 16
  %v18 = bitcast i32 %v17 to float
  %v19 = insertelement <2 x float> undef, float %v18, i32 0
  %v20 = shufflevector <2 x float> %v19, <2 x float> undef, <2 x i32> <i32 0, i32 0>
  %v21 = fmul <2 x float> %v13, %v20
  store <2 x float> %v21, ptr %v2, align 4
  %v22 = getelementptr inbounds bfloat, ptr %v0, i32 2
  %v23 = load <1 x bfloat>, ptr %v22, align 2
  %v24 = bitcast <1 x bfloat> %v23 to <1 x i16>
  %v25 = extractelement <1 x i16> %v24, i64 0
  %v26 = zext i16 %v25 to i32
  %v27 = insertelement <1 x i32> <i32 0>, i32 %v26, i64 0
  %v28 = shl <1 x i32> %v27, <i32 16>
  %v29 = bitcast <1 x i32> %v28 to <1 x float>
  %v30 = load bfloat, ptr %v3
  %v31 = bitcast bfloat %v30 to i16
  %v32 = zext i16 %v31 to i32
  %v33 = shl i32 %v32, 16
  %v34 = bitcast i32 %v33 to float
  %v35 = insertelement <1 x float> undef, float %v34, i32 0
  %v36 = shufflevector <1 x float> %v35, <1 x float> undef, <1 x i32> <i32 0>
  %v37 = fmul <1 x float> %v29, %v36
  %v38 = getelementptr inbounds float, ptr %v2, i32 2
  store <1 x float> %v37, ptr %v38, align 4
  %v39 = load <3 x float>, ptr %v2, align 4
  ret <3 x float> %v39
}



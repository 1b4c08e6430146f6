#include <stdint.h>
#include <string.h>

/* Clang matrix types; compiled twice, with -ffp-contract=off and =fast; PFX names the build. */
#define CAT2(a, b) a##b
#define CAT(a, b) CAT2(a, b)
typedef double m8x8f64 __attribute__((matrix_type(8, 8)));
typedef float m16x16f32 __attribute__((matrix_type(16, 16)));
typedef float m32x32f32 __attribute__((matrix_type(32, 32)));
typedef float m4x4f32 __attribute__((matrix_type(4, 4)));
typedef float m64x64f32 __attribute__((matrix_type(64, 64)));
typedef float m8x8f32 __attribute__((matrix_type(8, 8)));
typedef float v64f32 __attribute__((matrix_type(64, 1)));
void CAT(PFX, mma_f32_4x4)(const float *restrict A, const float *restrict B, const float *restrict C, float *restrict D, int64_t n) {
  for (int64_t i = 0; i < n; ++i) {
    m4x4f32 a = __builtin_matrix_column_major_load(A + i * 16, 4, 4, 4);
    m4x4f32 b = __builtin_matrix_column_major_load(B + i * 16, 4, 4, 4);
    m4x4f32 c = __builtin_matrix_column_major_load(C + i * 16, 4, 4, 4);
    __builtin_matrix_column_major_store(a * b + c, D + i * 16, 4);
  }
}

void CAT(PFX, mma_f32_8x8)(const float *restrict A, const float *restrict B, const float *restrict C, float *restrict D, int64_t n) {
  for (int64_t i = 0; i < n; ++i) {
    m8x8f32 a = __builtin_matrix_column_major_load(A + i * 64, 8, 8, 8);
    m8x8f32 b = __builtin_matrix_column_major_load(B + i * 64, 8, 8, 8);
    m8x8f32 c = __builtin_matrix_column_major_load(C + i * 64, 8, 8, 8);
    __builtin_matrix_column_major_store(a * b + c, D + i * 64, 8);
  }
}

void CAT(PFX, mma_f32_16x16)(const float *restrict A, const float *restrict B, const float *restrict C, float *restrict D, int64_t n) {
  for (int64_t i = 0; i < n; ++i) {
    m16x16f32 a = __builtin_matrix_column_major_load(A + i * 256, 16, 16, 16);
    m16x16f32 b = __builtin_matrix_column_major_load(B + i * 256, 16, 16, 16);
    m16x16f32 c = __builtin_matrix_column_major_load(C + i * 256, 16, 16, 16);
    __builtin_matrix_column_major_store(a * b + c, D + i * 256, 16);
  }
}

void CAT(PFX, mma_f32_32x32)(const float *restrict A, const float *restrict B, const float *restrict C, float *restrict D, int64_t n) {
  for (int64_t i = 0; i < n; ++i) {
    m32x32f32 a = __builtin_matrix_column_major_load(A + i * 1024, 32, 32, 32);
    m32x32f32 b = __builtin_matrix_column_major_load(B + i * 1024, 32, 32, 32);
    m32x32f32 c = __builtin_matrix_column_major_load(C + i * 1024, 32, 32, 32);
    __builtin_matrix_column_major_store(a * b + c, D + i * 1024, 32);
  }
}

void CAT(PFX, mma_f32_64x64)(const float *restrict A, const float *restrict B, const float *restrict C, float *restrict D, int64_t n) {
  for (int64_t i = 0; i < n; ++i) {
    m64x64f32 a = __builtin_matrix_column_major_load(A + i * 4096, 64, 64, 64);
    m64x64f32 b = __builtin_matrix_column_major_load(B + i * 4096, 64, 64, 64);
    m64x64f32 c = __builtin_matrix_column_major_load(C + i * 4096, 64, 64, 64);
    __builtin_matrix_column_major_store(a * b + c, D + i * 4096, 64);
  }
}

void CAT(PFX, mma_f64_8x8)(const double *restrict A, const double *restrict B, const double *restrict C, double *restrict D, int64_t n) {
  for (int64_t i = 0; i < n; ++i) {
    m8x8f64 a = __builtin_matrix_column_major_load(A + i * 64, 8, 8, 8);
    m8x8f64 b = __builtin_matrix_column_major_load(B + i * 64, 8, 8, 8);
    m8x8f64 c = __builtin_matrix_column_major_load(C + i * 64, 8, 8, 8);
    __builtin_matrix_column_major_store(a * b + c, D + i * 64, 8);
  }
}

void CAT(PFX, mm_f32_16x16)(const float *restrict A, const float *restrict B, float *restrict D, int64_t n) {
  for (int64_t i = 0; i < n; ++i) {
    m16x16f32 a = __builtin_matrix_column_major_load(A + i * 256, 16, 16, 16);
    m16x16f32 b = __builtin_matrix_column_major_load(B + i * 256, 16, 16, 16);
    __builtin_matrix_column_major_store(a * b, D + i * 256, 16);
  }
}

void CAT(PFX, mm_f32_32x32)(const float *restrict A, const float *restrict B, float *restrict D, int64_t n) {
  for (int64_t i = 0; i < n; ++i) {
    m32x32f32 a = __builtin_matrix_column_major_load(A + i * 1024, 32, 32, 32);
    m32x32f32 b = __builtin_matrix_column_major_load(B + i * 1024, 32, 32, 32);
    __builtin_matrix_column_major_store(a * b, D + i * 1024, 32);
  }
}

void CAT(PFX, mmtt_f32_4x4)(const float *restrict A, const float *restrict B, float *restrict D, int64_t n) {
  for (int64_t i = 0; i < n; ++i) {
    m4x4f32 a = __builtin_matrix_column_major_load(A + i * 16, 4, 4, 4);
    m4x4f32 b = __builtin_matrix_column_major_load(B + i * 16, 4, 4, 4);
    __builtin_matrix_column_major_store(__builtin_matrix_transpose(a) * __builtin_matrix_transpose(b), D + i * 16, 4);
  }
}

void CAT(PFX, mmtt_f32_8x8)(const float *restrict A, const float *restrict B, float *restrict D, int64_t n) {
  for (int64_t i = 0; i < n; ++i) {
    m8x8f32 a = __builtin_matrix_column_major_load(A + i * 64, 8, 8, 8);
    m8x8f32 b = __builtin_matrix_column_major_load(B + i * 64, 8, 8, 8);
    __builtin_matrix_column_major_store(__builtin_matrix_transpose(a) * __builtin_matrix_transpose(b), D + i * 64, 8);
  }
}

void CAT(PFX, mmtt_f32_16x16)(const float *restrict A, const float *restrict B, float *restrict D, int64_t n) {
  for (int64_t i = 0; i < n; ++i) {
    m16x16f32 a = __builtin_matrix_column_major_load(A + i * 256, 16, 16, 16);
    m16x16f32 b = __builtin_matrix_column_major_load(B + i * 256, 16, 16, 16);
    __builtin_matrix_column_major_store(__builtin_matrix_transpose(a) * __builtin_matrix_transpose(b), D + i * 256, 16);
  }
}

void CAT(PFX, ldst_f32_4x4_s5)(const float *restrict A, float *restrict D, int64_t n) {
  for (int64_t i = 0; i < n; ++i) {
    m4x4f32 a = __builtin_matrix_column_major_load(A + i * 20, 4, 4, 5);
    __builtin_matrix_column_major_store(a, D + i * 20, 5);
  }
}

void CAT(PFX, ldst_f32_8x8_s9)(const float *restrict A, float *restrict D, int64_t n) {
  for (int64_t i = 0; i < n; ++i) {
    m8x8f32 a = __builtin_matrix_column_major_load(A + i * 72, 8, 8, 9);
    __builtin_matrix_column_major_store(a, D + i * 72, 9);
  }
}

void CAT(PFX, axpy_f32_4x4)(float s, const float *restrict A, const float *restrict B, float *restrict D, int64_t n) {
  for (int64_t i = 0; i < n; ++i) {
    m4x4f32 a = __builtin_matrix_column_major_load(A + i * 16, 4, 4, 4);
    m4x4f32 b = __builtin_matrix_column_major_load(B + i * 16, 4, 4, 4);
    __builtin_matrix_column_major_store(s * a + b, D + i * 16, 4);
  }
}

void CAT(PFX, axpy_f32_16x16)(float s, const float *restrict A, const float *restrict B, float *restrict D, int64_t n) {
  for (int64_t i = 0; i < n; ++i) {
    m16x16f32 a = __builtin_matrix_column_major_load(A + i * 256, 16, 16, 16);
    m16x16f32 b = __builtin_matrix_column_major_load(B + i * 256, 16, 16, 16);
    __builtin_matrix_column_major_store(s * a + b, D + i * 256, 16);
  }
}

void CAT(PFX, matvec_f32_64x64)(const float *restrict M, const float *restrict X, float *restrict Y, int64_t n) {
  for (int64_t i = 0; i < n; ++i) {
    m64x64f32 m = __builtin_matrix_column_major_load(M + i * 4096, 64, 64, 64);
    v64f32 x = __builtin_matrix_column_major_load(X + i * 64, 64, 1, 64);
    __builtin_matrix_column_major_store(m * x, Y + i * 64, 64);
  }
}

void CAT(PFX, mma_f32_4x4_large)(const float *restrict A, const float *restrict B, const float *restrict C, float *restrict D, int64_t n) {
  for (int64_t i = 0; i < n; ++i) {
    m4x4f32 a = __builtin_matrix_column_major_load(A + i * 16, 4, 4, 4);
    m4x4f32 b = __builtin_matrix_column_major_load(B + i * 16, 4, 4, 4);
    m4x4f32 c = __builtin_matrix_column_major_load(C + i * 16, 4, 4, 4);
    __builtin_matrix_column_major_store(a * b + c, D + i * 16, 4);
  }
}

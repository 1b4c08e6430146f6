#include <stdint.h>
#include <string.h>

/* Naive loops, in the rounding order of docs/matrix-dialect.md (build with -ffp-contract=off). */
void naive_mma_f32_4x4(const float *restrict A, const float *restrict B, const float *restrict C, float *restrict D, int64_t n) {
  for (int64_t i = 0; i < n; ++i) {
    enum { N = 4 };
    const float *a = A + i * 16, *b = B + i * 16;
    float *d = D + i * 16;
    const float *cc = C + i * 16;
    for (int c = 0; c < N; ++c) {
      for (int r = 0; r < N; ++r) d[c * N + r] = a[0 * N + r] * b[c * N + 0];
      for (int k = 1; k < N; ++k)
        for (int r = 0; r < N; ++r) d[c * N + r] = d[c * N + r] + a[k * N + r] * b[c * N + k];
      for (int r = 0; r < N; ++r) d[c * N + r] = d[c * N + r] + cc[c * N + r];
    }
  }
}

void naive_mma_f32_8x8(const float *restrict A, const float *restrict B, const float *restrict C, float *restrict D, int64_t n) {
  for (int64_t i = 0; i < n; ++i) {
    enum { N = 8 };
    const float *a = A + i * 64, *b = B + i * 64;
    float *d = D + i * 64;
    const float *cc = C + i * 64;
    for (int c = 0; c < N; ++c) {
      for (int r = 0; r < N; ++r) d[c * N + r] = a[0 * N + r] * b[c * N + 0];
      for (int k = 1; k < N; ++k)
        for (int r = 0; r < N; ++r) d[c * N + r] = d[c * N + r] + a[k * N + r] * b[c * N + k];
      for (int r = 0; r < N; ++r) d[c * N + r] = d[c * N + r] + cc[c * N + r];
    }
  }
}

void naive_mma_f32_16x16(const float *restrict A, const float *restrict B, const float *restrict C, float *restrict D, int64_t n) {
  for (int64_t i = 0; i < n; ++i) {
    enum { N = 16 };
    const float *a = A + i * 256, *b = B + i * 256;
    float *d = D + i * 256;
    const float *cc = C + i * 256;
    for (int c = 0; c < N; ++c) {
      for (int r = 0; r < N; ++r) d[c * N + r] = a[0 * N + r] * b[c * N + 0];
      for (int k = 1; k < N; ++k)
        for (int r = 0; r < N; ++r) d[c * N + r] = d[c * N + r] + a[k * N + r] * b[c * N + k];
      for (int r = 0; r < N; ++r) d[c * N + r] = d[c * N + r] + cc[c * N + r];
    }
  }
}

void naive_mma_f32_32x32(const float *restrict A, const float *restrict B, const float *restrict C, float *restrict D, int64_t n) {
  for (int64_t i = 0; i < n; ++i) {
    enum { N = 32 };
    const float *a = A + i * 1024, *b = B + i * 1024;
    float *d = D + i * 1024;
    const float *cc = C + i * 1024;
    for (int c = 0; c < N; ++c) {
      for (int r = 0; r < N; ++r) d[c * N + r] = a[0 * N + r] * b[c * N + 0];
      for (int k = 1; k < N; ++k)
        for (int r = 0; r < N; ++r) d[c * N + r] = d[c * N + r] + a[k * N + r] * b[c * N + k];
      for (int r = 0; r < N; ++r) d[c * N + r] = d[c * N + r] + cc[c * N + r];
    }
  }
}

void naive_mma_f32_64x64(const float *restrict A, const float *restrict B, const float *restrict C, float *restrict D, int64_t n) {
  for (int64_t i = 0; i < n; ++i) {
    enum { N = 64 };
    const float *a = A + i * 4096, *b = B + i * 4096;
    float *d = D + i * 4096;
    const float *cc = C + i * 4096;
    for (int c = 0; c < N; ++c) {
      for (int r = 0; r < N; ++r) d[c * N + r] = a[0 * N + r] * b[c * N + 0];
      for (int k = 1; k < N; ++k)
        for (int r = 0; r < N; ++r) d[c * N + r] = d[c * N + r] + a[k * N + r] * b[c * N + k];
      for (int r = 0; r < N; ++r) d[c * N + r] = d[c * N + r] + cc[c * N + r];
    }
  }
}

void naive_mma_f64_8x8(const double *restrict A, const double *restrict B, const double *restrict C, double *restrict D, int64_t n) {
  for (int64_t i = 0; i < n; ++i) {
    enum { N = 8 };
    const double *a = A + i * 64, *b = B + i * 64;
    double *d = D + i * 64;
    const double *cc = C + i * 64;
    for (int c = 0; c < N; ++c) {
      for (int r = 0; r < N; ++r) d[c * N + r] = a[0 * N + r] * b[c * N + 0];
      for (int k = 1; k < N; ++k)
        for (int r = 0; r < N; ++r) d[c * N + r] = d[c * N + r] + a[k * N + r] * b[c * N + k];
      for (int r = 0; r < N; ++r) d[c * N + r] = d[c * N + r] + cc[c * N + r];
    }
  }
}

void naive_mm_f32_16x16(const float *restrict A, const float *restrict B, float *restrict D, int64_t n) {
  for (int64_t i = 0; i < n; ++i) {
    enum { N = 16 };
    const float *a = A + i * 256, *b = B + i * 256;
    float *d = D + i * 256;
    for (int c = 0; c < N; ++c) {
      for (int r = 0; r < N; ++r) d[c * N + r] = a[0 * N + r] * b[c * N + 0];
      for (int k = 1; k < N; ++k)
        for (int r = 0; r < N; ++r) d[c * N + r] = d[c * N + r] + a[k * N + r] * b[c * N + k];
    }
  }
}

void naive_mm_f32_32x32(const float *restrict A, const float *restrict B, float *restrict D, int64_t n) {
  for (int64_t i = 0; i < n; ++i) {
    enum { N = 32 };
    const float *a = A + i * 1024, *b = B + i * 1024;
    float *d = D + i * 1024;
    for (int c = 0; c < N; ++c) {
      for (int r = 0; r < N; ++r) d[c * N + r] = a[0 * N + r] * b[c * N + 0];
      for (int k = 1; k < N; ++k)
        for (int r = 0; r < N; ++r) d[c * N + r] = d[c * N + r] + a[k * N + r] * b[c * N + k];
    }
  }
}

void naive_mmtt_f32_4x4(const float *restrict A, const float *restrict B, float *restrict D, int64_t n) {
  for (int64_t i = 0; i < n; ++i) {
    enum { N = 4 };
    const float *a = A + i * 16, *b = B + i * 16;
    float *d = D + i * 16;
    for (int c = 0; c < N; ++c) {
      for (int r = 0; r < N; ++r) d[c * N + r] = a[r * N + 0] * b[0 * N + c];
      for (int k = 1; k < N; ++k)
        for (int r = 0; r < N; ++r) d[c * N + r] = d[c * N + r] + a[r * N + k] * b[k * N + c];
    }
  }
}

void naive_mmtt_f32_8x8(const float *restrict A, const float *restrict B, float *restrict D, int64_t n) {
  for (int64_t i = 0; i < n; ++i) {
    enum { N = 8 };
    const float *a = A + i * 64, *b = B + i * 64;
    float *d = D + i * 64;
    for (int c = 0; c < N; ++c) {
      for (int r = 0; r < N; ++r) d[c * N + r] = a[r * N + 0] * b[0 * N + c];
      for (int k = 1; k < N; ++k)
        for (int r = 0; r < N; ++r) d[c * N + r] = d[c * N + r] + a[r * N + k] * b[k * N + c];
    }
  }
}

void naive_mmtt_f32_16x16(const float *restrict A, const float *restrict B, float *restrict D, int64_t n) {
  for (int64_t i = 0; i < n; ++i) {
    enum { N = 16 };
    const float *a = A + i * 256, *b = B + i * 256;
    float *d = D + i * 256;
    for (int c = 0; c < N; ++c) {
      for (int r = 0; r < N; ++r) d[c * N + r] = a[r * N + 0] * b[0 * N + c];
      for (int k = 1; k < N; ++k)
        for (int r = 0; r < N; ++r) d[c * N + r] = d[c * N + r] + a[r * N + k] * b[k * N + c];
    }
  }
}

void naive_ldst_f32_4x4_s5(const float *restrict A, float *restrict D, int64_t n) {
  for (int64_t i = 0; i < n; ++i)
    for (int c = 0; c < 4; ++c)
      for (int r = 0; r < 4; ++r) D[i * 20 + c * 5 + r] = A[i * 20 + c * 5 + r];
}

void naive_ldst_f32_8x8_s9(const float *restrict A, float *restrict D, int64_t n) {
  for (int64_t i = 0; i < n; ++i)
    for (int c = 0; c < 8; ++c)
      for (int r = 0; r < 8; ++r) D[i * 72 + c * 9 + r] = A[i * 72 + c * 9 + r];
}

void naive_axpy_f32_4x4(float s, const float *restrict A, const float *restrict B, float *restrict D, int64_t n) {
  for (int64_t i = 0; i < n * 16; ++i) D[i] = s * A[i] + B[i];
}

void naive_axpy_f32_16x16(float s, const float *restrict A, const float *restrict B, float *restrict D, int64_t n) {
  for (int64_t i = 0; i < n * 256; ++i) D[i] = s * A[i] + B[i];
}

void naive_matvec_f32_64x64(const float *restrict M, const float *restrict X, float *restrict Y, int64_t n) {
  for (int64_t i = 0; i < n; ++i) {
    const float *m = M + i * 4096, *x = X + i * 64;
    float *y = Y + i * 64;
    for (int r = 0; r < 64; ++r) y[r] = m[r] * x[0];
    for (int k = 1; k < 64; ++k)
      for (int r = 0; r < 64; ++r) y[r] = y[r] + m[k * 64 + r] * x[k];
  }
}

void naive_mma_f32_4x4_large(const float *restrict A, const float *restrict B, const float *restrict C, float *restrict D, int64_t n) {
  for (int64_t i = 0; i < n; ++i) {
    enum { N = 4 };
    const float *a = A + i * 16, *b = B + i * 16;
    float *d = D + i * 16;
    const float *cc = C + i * 16;
    for (int c = 0; c < N; ++c) {
      for (int r = 0; r < N; ++r) d[c * N + r] = a[0 * N + r] * b[c * N + 0];
      for (int k = 1; k < N; ++k)
        for (int r = 0; r < N; ++r) d[c * N + r] = d[c * N + r] + a[k * N + r] * b[c * N + k];
      for (int r = 0; r < N; ++r) d[c * N + r] = d[c * N + r] + cc[c * N + r];
    }
  }
}

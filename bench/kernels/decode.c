/* Hand-written weight-times-vector kernels for LLM decoding (bench/decode.py's C peers).
 *
 * y[l·R + r] = Σ_k W_l[r, k] · x[k] for `layers` layers of row-major R×K weights stored
 * one after the other, x and y f32, K a multiple of 32. Formats:
 *   mxfp4:   f4e2m1fn codes packed two per byte (element 2j in the low nibble), one
 *            f8e8m0fnu scale per 32 elements of a row (R × K/32, row-major);
 *   mxfp8_*: f8e4m3fn or f8e5m2 codes, one byte each, scales as mxfp4;
 *   fp8_*:   f8e4m3fn or f8e5m2 codes times one f32 scale per tensor;
 *   f16, bf16.
 * The reduction order is free (several accumulators, blocks summed then scaled): the
 * bench checks these against an exact reference within a tolerance. The codes of the
 * bench's data are finite: the FP8 kernels do not special-case NaN encodings.
 *
 * With AVX-512 (F, BW, and F16C's vcvtph2ps on zmm): 4 rows in flight, the 16 FP4 values
 * a `vpermps` table lookup, FP8 bits placed in f16 and converted by the hardware.
 * With AVX2, FMA and F16C (no AVX-512): the same with 8-lane vectors, the FP4 values a
 * `pshufb` lookup of twice their values as bytes (exact), widened and converted to f32.
 * Otherwise a portable loop over the same layouts. */
#include <math.h>
#include <stdint.h>
#include <string.h>
#if defined(__AVX512F__) && defined(__AVX512BW__)
#include <immintrin.h>
#define DECODE_AVX512 1
#elif defined(__AVX2__) && defined(__FMA__) && defined(__F16C__)
#include <immintrin.h>
#define DECODE_AVX2 1
#endif
#if defined(DECODE_AVX512) || defined(DECODE_AVX2)
#define DECODE_VECTORS 1
#endif

#define ROWS 4   /* rows in flight */
#define BLOCK 32 /* elements per scale block */

static const float FP4[16] = {0.f,  0.5f,  1.f,  1.5f,  2.f,  3.f,  4.f,  6.f,
                              -0.f, -0.5f, -1.f, -1.5f, -2.f, -3.f, -4.f, -6.f};

/* 2^(s-127) from its bits (s = 0: the subnormal 2^-127; 255: NaN), no libm call. */
static inline float e8m0(uint8_t s) {
  uint32_t u = s == 255 ? 0x7FC00000u : s ? (uint32_t)s << 23 : 0x00400000u;
  float f;
  memcpy(&f, &u, 4);
  return f;
}

static float f16_to_f32(uint16_t h) {
  uint32_t sign = (uint32_t)(h >> 15) << 31, e = (h >> 10) & 31u, m = h & 1023u;
  float v = e == 0 ? ldexpf((float)m, -24)
            : e == 31 ? (m ? NAN : INFINITY)
                      : ldexpf((float)(m | 1024u), (int)e - 25);
  uint32_t u;
  memcpy(&u, &v, 4);
  u |= sign;
  memcpy(&v, &u, 4);
  return v;
}

static float e4m3_to_f32(uint8_t b) { /* finite codes */
  float v = (b & 0x78) ? ldexpf((float)((b & 7) | 8), ((b >> 3) & 15) - 10)
                       : ldexpf((float)(b & 7), -9);
  return (b & 0x80) ? -v : v;
}

static float e5m2_to_f32(uint8_t b) { return f16_to_f32((uint16_t)(b << 8)); }

static float bf16_to_f32(uint16_t h) {
  uint32_t u = (uint32_t)h << 16;
  float v;
  memcpy(&v, &u, 4);
  return v;
}

/* Read bandwidth: the sum of n bytes (a multiple of 256) as 64-bit words. */
uint64_t c_read_bytes(const uint8_t *p, int64_t n) {
#ifdef DECODE_AVX512
  __m512i a = _mm512_setzero_si512(), b = a, c = a, d = a;
  for (int64_t i = 0; i < n; i += 256) {
    a = _mm512_add_epi64(a, _mm512_loadu_si512(p + i));
    b = _mm512_add_epi64(b, _mm512_loadu_si512(p + i + 64));
    c = _mm512_add_epi64(c, _mm512_loadu_si512(p + i + 128));
    d = _mm512_add_epi64(d, _mm512_loadu_si512(p + i + 192));
  }
  return (uint64_t)_mm512_reduce_add_epi64(
      _mm512_add_epi64(_mm512_add_epi64(a, b), _mm512_add_epi64(c, d)));
#elif defined(DECODE_AVX2)
  __m256i a = _mm256_setzero_si256(), b = a, c = a, d = a;
  for (int64_t i = 0; i < n; i += 128) {
    a = _mm256_add_epi64(a, _mm256_loadu_si256((const __m256i *)(p + i)));
    b = _mm256_add_epi64(b, _mm256_loadu_si256((const __m256i *)(p + i + 32)));
    c = _mm256_add_epi64(c, _mm256_loadu_si256((const __m256i *)(p + i + 64)));
    d = _mm256_add_epi64(d, _mm256_loadu_si256((const __m256i *)(p + i + 96)));
  }
  __m256i t = _mm256_add_epi64(_mm256_add_epi64(a, b), _mm256_add_epi64(c, d));
  uint64_t w[4];
  memcpy(w, &t, sizeof w);
  return w[0] + w[1] + w[2] + w[3];
#else
  uint64_t s = 0, w;
  for (int64_t i = 0; i < n; i += 8) {
    memcpy(&w, p + i, 8);
    s += w;
  }
  return s;
#endif
}

#ifdef DECODE_AVX512
/* 32 f16 (or bf16 placed as f32 bits) values to two f32 vectors. */
static inline void f16x32(__m512i h, __m512 *lo, __m512 *hi) {
  *lo = _mm512_cvtph_ps(_mm512_castsi512_si256(h));
  *hi = _mm512_cvtph_ps(_mm512_extracti64x4_epi64(h, 1));
}

/* 32 FP8 codes as the f16 of the same value (e4m3fn: times 2^-8). */
static inline __m512i fp8_halves(const uint8_t *p, int e5m2) {
  __m256i b = _mm256_loadu_si256((const __m256i *)p);
  if (e5m2) return _mm512_slli_epi16(_mm512_cvtepu8_epi16(b), 8);
  return _mm512_and_si512(_mm512_slli_epi16(_mm512_cvtepi8_epi16(b), 7),
                          _mm512_set1_epi16((short)0xBFFF));
}

static inline void mxfp4_tile(const uint8_t *w, const uint8_t *s, const float *xd,
                              float *y, int64_t K, int n) {
  const __m512 table = _mm512_loadu_ps(FP4);
  __m512 acc[ROWS];
  for (int i = 0; i < n; ++i) acc[i] = _mm512_setzero_ps();
  for (int64_t b = 0; b < K / BLOCK; ++b) {
    __m512 xe = _mm512_loadu_ps(xd + BLOCK * b), xo = _mm512_loadu_ps(xd + BLOCK * b + 16);
    for (int i = 0; i < n; ++i) {
      __m512i q = _mm512_cvtepu8_epi32(
          _mm_loadu_si128((const __m128i *)(w + i * (K / 2) + 16 * b)));
      /* vpermps reads the low 4 bits of each index: q is the low nibble */
      __m512 lo = _mm512_permutexvar_ps(q, table);
      __m512 hi = _mm512_permutexvar_ps(_mm512_srli_epi32(q, 4), table);
      __m512 t = _mm512_fmadd_ps(hi, xo, _mm512_mul_ps(lo, xe));
      acc[i] = _mm512_fmadd_ps(t, _mm512_set1_ps(e8m0(s[i * (K / BLOCK) + b])), acc[i]);
    }
  }
  for (int i = 0; i < n; ++i) y[i] = _mm512_reduce_add_ps(acc[i]);
}

static inline void mxfp8_tile(const uint8_t *w, const uint8_t *s, const float *x, float *y,
                              int64_t K, int n, int e5m2) {
  const float unit = e5m2 ? 1.f : 256.f;
  __m512 acc[ROWS];
  for (int i = 0; i < n; ++i) acc[i] = _mm512_setzero_ps();
  for (int64_t b = 0; b < K / BLOCK; ++b) {
    __m512 x0 = _mm512_loadu_ps(x + BLOCK * b), x1 = _mm512_loadu_ps(x + BLOCK * b + 16);
    for (int i = 0; i < n; ++i) {
      __m512 lo, hi;
      f16x32(fp8_halves(w + i * K + BLOCK * b, e5m2), &lo, &hi);
      __m512 t = _mm512_fmadd_ps(hi, x1, _mm512_mul_ps(lo, x0));
      acc[i] = _mm512_fmadd_ps(t, _mm512_set1_ps(e8m0(s[i * (K / BLOCK) + b]) * unit), acc[i]);
    }
  }
  for (int i = 0; i < n; ++i) y[i] = _mm512_reduce_add_ps(acc[i]);
}

/* kind: 0 e4m3fn, 1 e5m2, 2 f16, 3 bf16 (elements of `size` bytes) */
static inline void plain_tile(const uint8_t *w, const float *x, float *y, int64_t K, int n,
                              int kind, float scale) {
  const int64_t row = kind < 2 ? K : 2 * K;
  __m512 acc0[ROWS], acc1[ROWS];
  for (int i = 0; i < n; ++i) acc0[i] = acc1[i] = _mm512_setzero_ps();
  for (int64_t k = 0; k < K; k += BLOCK) {
    __m512 x0 = _mm512_loadu_ps(x + k), x1 = _mm512_loadu_ps(x + k + 16);
    for (int i = 0; i < n; ++i) {
      const uint8_t *p = w + i * row;
      __m512 lo, hi;
      if (kind < 2) {
        f16x32(fp8_halves(p + k, kind), &lo, &hi);
      } else if (kind == 2) {
        f16x32(_mm512_loadu_si512(p + 2 * k), &lo, &hi);
      } else {
        const __m256i *q = (const __m256i *)(p + 2 * k);
        lo = _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_cvtepu16_epi32(_mm256_loadu_si256(q)), 16));
        hi = _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_cvtepu16_epi32(_mm256_loadu_si256(q + 1)), 16));
      }
      acc0[i] = _mm512_fmadd_ps(lo, x0, acc0[i]);
      acc1[i] = _mm512_fmadd_ps(hi, x1, acc1[i]);
    }
  }
  for (int i = 0; i < n; ++i) y[i] = scale * _mm512_reduce_add_ps(_mm512_add_ps(acc0[i], acc1[i]));
}
#endif

#ifdef DECODE_AVX2
static inline float sum8(__m256 v) {
  __m128 s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
  s = _mm_add_ps(s, _mm_movehl_ps(s, s));
  return _mm_cvtss_f32(_mm_add_ss(s, _mm_movehdup_ps(s)));
}

/* 16 f16 values to two f32 vectors. */
static inline void f16x16(__m256i h, __m256 *lo, __m256 *hi) {
  *lo = _mm256_cvtph_ps(_mm256_castsi256_si128(h));
  *hi = _mm256_cvtph_ps(_mm256_extracti128_si256(h, 1));
}

/* 16 FP8 codes as the f16 of the same value (e4m3fn: times 2^-8). */
static inline __m256i fp8_halves(const uint8_t *p, int e5m2) {
  __m128i b = _mm_loadu_si128((const __m128i *)p);
  if (e5m2) return _mm256_slli_epi16(_mm256_cvtepu8_epi16(b), 8);
  return _mm256_and_si256(_mm256_slli_epi16(_mm256_cvtepi8_epi16(b), 7),
                          _mm256_set1_epi16((short)0xBFFF));
}

/* 8 bytes (the low ones of b) as f32. */
static inline __m256 bytes_f32(__m128i b) {
  return _mm256_cvtepi32_ps(_mm256_cvtepi8_epi32(b));
}

static const int8_t FP4_TWICE[16] = {0, 1, 2, 3, 4, 6, 8, 12, 0, -1, -2, -3, -4, -6, -8, -12};

static inline void mxfp4_tile(const uint8_t *w, const uint8_t *s, const float *xd,
                              float *y, int64_t K, int n) {
  const __m128i table = _mm_loadu_si128((const __m128i *)FP4_TWICE);
  const __m128i nibble = _mm_set1_epi8(15);
  __m256 acc[ROWS];
  for (int i = 0; i < n; ++i) acc[i] = _mm256_setzero_ps();
  for (int64_t b = 0; b < K / BLOCK; ++b) {
    const float *xb = xd + BLOCK * b;
    __m256 x0 = _mm256_loadu_ps(xb), x1 = _mm256_loadu_ps(xb + 8);
    __m256 x2 = _mm256_loadu_ps(xb + 16), x3 = _mm256_loadu_ps(xb + 24);
    for (int i = 0; i < n; ++i) {
      __m128i q = _mm_loadu_si128((const __m128i *)(w + i * (K / 2) + 16 * b));
      __m128i lo = _mm_shuffle_epi8(table, _mm_and_si128(q, nibble));
      __m128i hi = _mm_shuffle_epi8(table, _mm_and_si128(_mm_srli_epi16(q, 4), nibble));
      __m256 t = _mm256_mul_ps(bytes_f32(lo), x0);
      t = _mm256_fmadd_ps(bytes_f32(_mm_srli_si128(lo, 8)), x1, t);
      t = _mm256_fmadd_ps(bytes_f32(hi), x2, t);
      t = _mm256_fmadd_ps(bytes_f32(_mm_srli_si128(hi, 8)), x3, t);
      /* (the table holds twice the values: the scale halved, exact) */
      __m256 scale = _mm256_set1_ps(e8m0(s[i * (K / BLOCK) + b]) * 0.5f);
      acc[i] = _mm256_fmadd_ps(t, scale, acc[i]);
    }
  }
  for (int i = 0; i < n; ++i) y[i] = sum8(acc[i]);
}

static inline void mxfp8_tile(const uint8_t *w, const uint8_t *s, const float *x, float *y,
                              int64_t K, int n, int e5m2) {
  const float unit = e5m2 ? 1.f : 256.f;
  __m256 acc[ROWS];
  for (int i = 0; i < n; ++i) acc[i] = _mm256_setzero_ps();
  for (int64_t b = 0; b < K / BLOCK; ++b) {
    const float *xb = x + BLOCK * b;
    for (int i = 0; i < n; ++i) {
      const uint8_t *p = w + i * K + BLOCK * b;
      __m256 v0, v1, v2, v3;
      f16x16(fp8_halves(p, e5m2), &v0, &v1);
      f16x16(fp8_halves(p + 16, e5m2), &v2, &v3);
      __m256 t = _mm256_mul_ps(v0, _mm256_loadu_ps(xb));
      t = _mm256_fmadd_ps(v1, _mm256_loadu_ps(xb + 8), t);
      t = _mm256_fmadd_ps(v2, _mm256_loadu_ps(xb + 16), t);
      t = _mm256_fmadd_ps(v3, _mm256_loadu_ps(xb + 24), t);
      __m256 scale = _mm256_set1_ps(e8m0(s[i * (K / BLOCK) + b]) * unit);
      acc[i] = _mm256_fmadd_ps(t, scale, acc[i]);
    }
  }
  for (int i = 0; i < n; ++i) y[i] = sum8(acc[i]);
}

/* kind: 0 e4m3fn, 1 e5m2, 2 f16, 3 bf16 */
static inline void plain_tile(const uint8_t *w, const float *x, float *y, int64_t K, int n,
                              int kind, float scale) {
  const int64_t row = kind < 2 ? K : 2 * K;
  __m256 acc0[ROWS], acc1[ROWS];
  for (int i = 0; i < n; ++i) acc0[i] = acc1[i] = _mm256_setzero_ps();
  for (int64_t k = 0; k < K; k += 16) {
    __m256 x0 = _mm256_loadu_ps(x + k), x1 = _mm256_loadu_ps(x + k + 8);
    for (int i = 0; i < n; ++i) {
      const uint8_t *p = w + i * row;
      __m256 lo, hi;
      if (kind < 2) {
        f16x16(fp8_halves(p + k, kind), &lo, &hi);
      } else if (kind == 2) {
        f16x16(_mm256_loadu_si256((const __m256i *)(p + 2 * k)), &lo, &hi);
      } else {
        const __m128i *q = (const __m128i *)(p + 2 * k);
        lo = _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_cvtepu16_epi32(_mm_loadu_si128(q)), 16));
        hi = _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_cvtepu16_epi32(_mm_loadu_si128(q + 1)), 16));
      }
      acc0[i] = _mm256_fmadd_ps(lo, x0, acc0[i]);
      acc1[i] = _mm256_fmadd_ps(hi, x1, acc1[i]);
    }
  }
  for (int i = 0; i < n; ++i) y[i] = scale * sum8(_mm256_add_ps(acc0[i], acc1[i]));
}
#endif

/* The portable loops. */
static float plain_value(const uint8_t *p, int64_t k, int kind) {
  uint16_t h;
  switch (kind) {
  case 0: return e4m3_to_f32(p[k]);
  case 1: return e5m2_to_f32(p[k]);
  default: memcpy(&h, p + 2 * k, 2); return kind == 2 ? f16_to_f32(h) : bf16_to_f32(h);
  }
}

static float fp4_value(const uint8_t *w, int64_t k) {
  return FP4[(w[k / 2] >> (4 * (k & 1))) & 15];
}

void c_decode_mxfp4(const uint8_t *w, const uint8_t *s, const float *x, float *y,
                    int64_t R, int64_t K, int64_t layers) {
#ifdef DECODE_VECTORS
  float xd[K]; /* x in each block's (even, odd) order */
  for (int64_t k = 0; k < K; ++k) xd[(k / BLOCK) * BLOCK + (k % BLOCK) / 2 + (k % 2) * 16] = x[k];
#endif
  for (int64_t l = 0; l < layers; ++l, w += R * K / 2, s += R * K / BLOCK, y += R) {
    int64_t r = 0;
#ifdef DECODE_VECTORS
    for (; r + ROWS <= R; r += ROWS)
      mxfp4_tile(w + r * K / 2, s + r * K / BLOCK, xd, y + r, K, ROWS);
    for (; r < R; ++r) mxfp4_tile(w + r * K / 2, s + r * K / BLOCK, xd, y + r, K, 1);
#endif
    for (; r < R; ++r) {
      float sum = 0.f;
      for (int64_t b = 0; b < K / BLOCK; ++b) {
        float t = 0.f;
        for (int64_t k = BLOCK * b; k < BLOCK * (b + 1); ++k) t += fp4_value(w + r * K / 2, k) * x[k];
        sum += t * e8m0(s[r * K / BLOCK + b]);
      }
      y[r] = sum;
    }
  }
}

static void mxfp8(const uint8_t *w, const uint8_t *s, const float *x, float *y, int64_t R,
                  int64_t K, int64_t layers, int e5m2) {
  for (int64_t l = 0; l < layers; ++l, w += R * K, s += R * K / BLOCK, y += R) {
    int64_t r = 0;
#ifdef DECODE_VECTORS
    for (; r + ROWS <= R; r += ROWS)
      mxfp8_tile(w + r * K, s + r * K / BLOCK, x, y + r, K, ROWS, e5m2);
    for (; r < R; ++r) mxfp8_tile(w + r * K, s + r * K / BLOCK, x, y + r, K, 1, e5m2);
#endif
    for (; r < R; ++r) {
      float sum = 0.f;
      for (int64_t b = 0; b < K / BLOCK; ++b) {
        float t = 0.f;
        for (int64_t k = BLOCK * b; k < BLOCK * (b + 1); ++k) t += plain_value(w + r * K, k, e5m2) * x[k];
        sum += t * e8m0(s[r * K / BLOCK + b]);
      }
      y[r] = sum;
    }
  }
}

static void plain(const uint8_t *w, float scale, const float *x, float *y, int64_t R,
                  int64_t K, int64_t layers, int kind) {
  const int64_t row = kind < 2 ? K : 2 * K;
#ifdef DECODE_VECTORS
  const float unit = kind == 0 ? 256.f : 1.f; /* e4m3fn is decoded times 2^-8 */
#endif
  for (int64_t l = 0; l < layers; ++l, w += R * row, y += R) {
    int64_t r = 0;
#ifdef DECODE_VECTORS
    for (; r + ROWS <= R; r += ROWS) plain_tile(w + r * row, x, y + r, K, ROWS, kind, scale * unit);
    for (; r < R; ++r) plain_tile(w + r * row, x, y + r, K, 1, kind, scale * unit);
#endif
    for (; r < R; ++r) {
      float sum = 0.f;
      for (int64_t k = 0; k < K; ++k) sum += plain_value(w + r * row, k, kind) * x[k];
      y[r] = scale * sum;
    }
  }
}

void c_decode_mxfp8_e4m3(const uint8_t *w, const uint8_t *s, const float *x, float *y,
                         int64_t R, int64_t K, int64_t layers) {
  mxfp8(w, s, x, y, R, K, layers, 0);
}

void c_decode_mxfp8_e5m2(const uint8_t *w, const uint8_t *s, const float *x, float *y,
                         int64_t R, int64_t K, int64_t layers) {
  mxfp8(w, s, x, y, R, K, layers, 1);
}

void c_decode_fp8_e4m3fn(const uint8_t *w, float scale, const float *x, float *y, int64_t R,
                         int64_t K, int64_t layers) {
  plain(w, scale, x, y, R, K, layers, 0);
}

void c_decode_fp8_e5m2(const uint8_t *w, float scale, const float *x, float *y, int64_t R,
                       int64_t K, int64_t layers) {
  plain(w, scale, x, y, R, K, layers, 1);
}

void c_decode_f16(const uint8_t *w, float scale, const float *x, float *y, int64_t R,
                  int64_t K, int64_t layers) {
  plain(w, scale, x, y, R, K, layers, 2);
}

void c_decode_bf16(const uint8_t *w, float scale, const float *x, float *y, int64_t R,
                   int64_t K, int64_t layers) {
  plain(w, scale, x, y, R, K, layers, 3);
}

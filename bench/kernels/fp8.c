#include <stdint.h>
#include <string.h>

/* FP8 conversions by branch-free bit manipulation (the compiler vectorizes these loops). */
static inline uint32_t f2u(float f) { uint32_t u; memcpy(&u, &f, 4); return u; }
static inline float u2f(uint32_t u) { float f; memcpy(&f, &u, 4); return f; }

void c_bits_dec_e4m3fn_f32(const uint8_t *restrict in, float *restrict out, int64_t n) {
  for (int64_t i = 0; i < n; ++i) {
    uint32_t x = in[i], sign = (x & 0x80u) << 24, em = x & 0x7Fu;
    uint32_t normal = (em << 20) + (120u << 23);        /* rebias 7 -> 127 */
    uint32_t sub = f2u((float)em * 0x1p-9f);            /* exponent field 0: m * 2^-9 */
    uint32_t r = em < 8 ? sub : normal;
    r = em == 0x7Fu ? 0x7FC00000u : r;                  /* S.1111.111 is NaN */
    out[i] = u2f(r | sign);
  }
}

void c_bits_dec_e5m2_f16(const uint8_t *restrict in, uint16_t *restrict out, int64_t n) {
  /* e5m2 is the upper byte of binary16. */
  for (int64_t i = 0; i < n; ++i) out[i] = (uint16_t)(in[i] << 8);
}

void c_bits_enc_f32_e4m3fn_sat(const float *restrict in, uint8_t *restrict out, int64_t n) {
  for (int64_t i = 0; i < n; ++i) {
    uint32_t u = f2u(in[i]), sign = (u >> 24) & 0x80u, a = u & 0x7FFFFFFFu;
    int nan = a > 0x7F800000u;
    a = a > 0x43E00000u ? 0x43E00000u : a;              /* saturate at 448 (also inf) */
    /* normal: round to nearest even at bit 20, then rebias 127 -> 7 */
    uint32_t nrm = ((a + 0x7FFFFu + ((a >> 20) & 1u)) >> 20) - (120u << 3);
    /* below 2^-6: adding 2^14 rounds to a multiple of 2^-9, nearest even */
    uint32_t sub = f2u(u2f(a) + 0x1p14f) - 0x46800000u;
    uint32_t r = a < 0x3C800000u ? sub : nrm;
    out[i] = (uint8_t)((nan ? 0x7Fu : r) | sign);
  }
}

/* Table decoders: 256 entries, filled once from the bit-manipulation decoders above. */
static float lut_e4m3fn_f32[256];
static uint16_t lut_e5m2_f16[256];
__attribute__((constructor)) static void fill_luts(void) {
  uint8_t all[256];
  for (int i = 0; i < 256; ++i) all[i] = (uint8_t)i;
  c_bits_dec_e4m3fn_f32(all, lut_e4m3fn_f32, 256);
  c_bits_dec_e5m2_f16(all, lut_e5m2_f16, 256);
}
void c_lut_dec_e4m3fn_f32(const uint8_t *restrict in, float *restrict out, int64_t n) {
  for (int64_t i = 0; i < n; ++i) out[i] = lut_e4m3fn_f32[in[i]];
}
void c_lut_dec_e5m2_f16(const uint8_t *restrict in, uint16_t *restrict out, int64_t n) {
  for (int64_t i = 0; i < n; ++i) out[i] = lut_e5m2_f16[in[i]];
}

/* Memory-bandwidth limits: the same bytes in and out, no arithmetic. */
void copy_dec_e4m3fn_f32(const uint8_t *restrict in, uint32_t *restrict out, int64_t n) {
  for (int64_t i = 0; i < n; ++i) out[i] = in[i];
}
void copy_dec_e5m2_f16(const uint8_t *restrict in, uint16_t *restrict out, int64_t n) {
  for (int64_t i = 0; i < n; ++i) out[i] = in[i];
}
void copy_enc_f32_e4m3fn_sat(const uint32_t *restrict in, uint8_t *restrict out, int64_t n) {
  for (int64_t i = 0; i < n; ++i) out[i] = (uint8_t)in[i];
}

/* The core's peak f32 multiply-add rate, for bench/gemm.py's fraction of peak:
   16 independent 16-lane chains (more than the FMA latency times the pipes),
   with one fused multiply-add per step, and with a separate multiply and add
   (mx's products without `contract`). Built with -ffp-contract=off. */
#include <immintrin.h>
#include <stdint.h>
/* n iterations of 16 independent 16-lane f32 chains: acc = fma(acc, m, a). */
float peak_fma_f32(int64_t n) {
  __m512 acc[16];
  __m512 m = _mm512_set1_ps(0.999999f), a = _mm512_set1_ps(1e-7f);
  for (int i = 0; i < 16; i++) acc[i] = _mm512_set1_ps((float)i);
  for (int64_t k = 0; k < n; k++)
    for (int i = 0; i < 16; i++) acc[i] = _mm512_fmadd_ps(acc[i], m, a);
  __m512 s = acc[0];
  for (int i = 1; i < 16; i++) s = _mm512_add_ps(s, acc[i]);
  return _mm512_reduce_add_ps(s);
}
/* the same with a separate multiply and add per step (mx's default rounding):
   acc += x * m, x opaque to the compiler each iteration so the multiplies stay */
float peak_muladd_f32(int64_t n) {
  __m512 acc[16];
  __m512 x[16], m = _mm512_set1_ps(0.999999f);
  for (int i = 0; i < 16; i++)
    acc[i] = _mm512_set1_ps((float)i), x[i] = _mm512_set1_ps(1e-7f * (float)i);
  for (int64_t k = 0; k < n; k++) {
    __asm__ volatile("" : "+v"(m));
    for (int i = 0; i < 16; i++) acc[i] = _mm512_add_ps(acc[i], _mm512_mul_ps(x[i], m));
  }
  __m512 s = acc[0];
  for (int i = 1; i < 16; i++) s = _mm512_add_ps(s, acc[i]);
  return _mm512_reduce_add_ps(s);
}

/* The core's peak f32 multiply-add rate, for bench/gemm.py's fraction of peak:
   CHAINS independent chains of the target's widest f32 vector (enough to
   cover the FMA latency times the pipes, few enough to stay in registers:
   16 of AVX-512's 32 registers, 12 of AVX2's or SSE's 16), with one fused
   multiply-add per step, and with a separate multiply and add (mx's products
   without `contract`). Built with -ffp-contract=off and -march=native:
   `peak_flops_per_step` says what one step computes on this target. */
#include <stdint.h>
#if defined(__AVX512F__)
#define LANES 16
#define CHAINS 16
#elif defined(__AVX__)
#define LANES 8
#define CHAINS 12
#else
#define LANES 4
#define CHAINS 12
#endif
typedef float vf __attribute__((vector_size(4 * LANES)));

static float total(const vf *acc) {
  vf s = acc[0];
  for (int i = 1; i < CHAINS; i++) s += acc[i];
  float t = 0;
  for (int l = 0; l < LANES; l++) t += s[l];
  return t;
}

/* f32 operations of one step of either kernel (a multiply-add is two). */
int64_t peak_flops_per_step(void) { return 2 * LANES * CHAINS; }

/* n steps of acc = fma(acc, m, a) on every chain. */
float peak_fma_f32(int64_t n) {
  vf acc[CHAINS];
  vf m = (vf){} + 0.999999f, a = (vf){} + 1e-7f;
  for (int i = 0; i < CHAINS; i++) acc[i] = (vf){} + (float)i;
  for (int64_t k = 0; k < n; k++)
    for (int i = 0; i < CHAINS; i++)
      for (int l = 0; l < LANES; l++)
        acc[i][l] = __builtin_fmaf(acc[i][l], m[l], a[l]);
  return total(acc);
}

/* the same with a separate multiply and add per step (mx's default rounding):
   acc += x * m, m opaque to the compiler each step so the multiplies stay */
float peak_muladd_f32(int64_t n) {
  vf acc[CHAINS], x[CHAINS];
  vf m = (vf){} + 0.999999f;
  for (int i = 0; i < CHAINS; i++)
    acc[i] = (vf){} + (float)i, x[i] = (vf){} + 1e-7f * (float)i;
  for (int64_t k = 0; k < n; k++) {
    __asm__ volatile("" : "+x"(m));
    for (int i = 0; i < CHAINS; i++) acc[i] += x[i] * m;
  }
  return total(acc);
}

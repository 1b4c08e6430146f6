/* Timing harness: one process times every implementation of every kernel on the same buffers.
 *
 * usage: harness [--reps R] [--min-ms T] [--stagger K] [--only SUBSTR]
 * Prints one tab-separated line per (kernel, implementation):
 *   kernel impl median_ns_per_op min_ns max_ns reps checked bitexact maxerr ok
 * Each rep calls the kernel enough times to take at least T ms; the median over reps is reported.
 * Before timing, every checked implementation's output is compared with the reference impls[0].
 */
#define _GNU_SOURCE
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "harness.h"

static uint64_t rng_state;
static uint64_t next_u64(void) { /* splitmix64 */
  uint64_t z = (rng_state += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}
static double unit(void) { return (double)(next_u64() >> 11) * 0x1p-53 * 2.0 - 1.0; }

static void fill(void *p, int elem_size, int64_t count, int kind) {
  if (kind == FILL_ZERO) { memset(p, 0, (size_t)(elem_size * count)); return; }
  for (int64_t i = 0; i < count; ++i) {
    if (kind == FILL_BYTES) ((uint8_t *)p)[i] = (uint8_t)next_u64();
    else if (kind == FILL_WIDE) { /* magnitudes 2^-14 .. 2^10 (past e4m3fn's range both ways), a few inf/NaN */
      uint64_t r = next_u64();
      float v = (float)ldexp(1.0 + (double)(r >> 40) * 0x1p-24, (int)(r % 25) - 14);
      if ((r >> 8) % 1024 == 0) v = (r >> 20) & 1 ? INFINITY : NAN;
      ((float *)p)[i] = (r >> 32) & 1 ? -v : v;
    } else if (elem_size == 8) ((double *)p)[i] = unit();
    else ((float *)p)[i] = (float)unit();
  }
}

static int is_nan_bits(const uint8_t *p, int cmp, int elem_size) {
  if (cmp == CMP_E4M3FN) return (*p & 0x7F) == 0x7F;
  if (cmp == CMP_F16BITS) { uint16_t h; memcpy(&h, p, 2); return (h & 0x7C00) == 0x7C00 && (h & 0x3FF); }
  if (elem_size == 8) { double d; memcpy(&d, p, 8); return isnan(d); }
  float f; memcpy(&f, p, 4); return isnan(f);
}

/* Compares got against ref; returns the largest relative error (INFINITY on a mismatch that
 * has no numeric measure) and sets *bitexact. NaNs compare equal whatever their payload. */
static double compare(const uint8_t *got, const uint8_t *ref, int elem_size, int64_t count, int cmp, int *bitexact) {
  double maxerr = 0;
  *bitexact = memcmp(got, ref, (size_t)(elem_size * count)) == 0;
  if (*bitexact) return 0;
  for (int64_t i = 0; i < count; ++i) {
    const uint8_t *g = got + i * elem_size, *r = ref + i * elem_size;
    if (memcmp(g, r, (size_t)elem_size) == 0) continue;
    int gn = cmp != CMP_EXACT && is_nan_bits(g, cmp, elem_size), rn = cmp != CMP_EXACT && is_nan_bits(r, cmp, elem_size);
    if (gn && rn) continue;
    if (cmp != CMP_FLOAT || gn || rn) return INFINITY;
    double x, y;
    if (elem_size == 8) { memcpy(&x, g, 8); memcpy(&y, r, 8); }
    else { float a, b; memcpy(&a, g, 4); memcpy(&b, r, 4); x = a; y = b; }
    double e = fabs(x - y) / (1 + fabs(y));
    if (!(e <= maxerr)) maxerr = e; /* also catches a NaN error */
  }
  return maxerr;
}

/* Thread CPU time rather than wall time: the machines this runs on are shared (2 vCPUs, other
 * jobs), and time spent descheduled is not the kernel's. */
static double now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

int main(int argc, char **argv) {
  int reps = 7, stagger = 0;
  double min_ms = 5;
  const char *only = NULL;
  for (int i = 1; i + 1 < argc; i += 2) {
    if (!strcmp(argv[i], "--reps")) reps = atoi(argv[i + 1]);
    else if (!strcmp(argv[i], "--min-ms")) min_ms = atof(argv[i + 1]);
    else if (!strcmp(argv[i], "--stagger")) stagger = atoi(argv[i + 1]);
    else if (!strcmp(argv[i], "--only")) only = argv[i + 1];
    else { fprintf(stderr, "unknown option %s\n", argv[i]); return 2; }
  }
  if (reps < 1 || reps > 1000) { fprintf(stderr, "bad --reps\n"); return 2; }
  double *times = malloc(sizeof(double) * (size_t)reps);
  int failures = 0;
  for (int ki = 0; ki < bench_nkernels; ++ki) {
    const struct bench_kernel *k = &bench_kernels[ki];
    if (only && !strstr(k->name, only)) continue;
    void *bufs[BENCH_MAX_BUFS], *raw[BENCH_MAX_BUFS], *refs[BENCH_MAX_BUFS] = {0};
    size_t bytes[BENCH_MAX_BUFS];
    rng_state = 0x1234567ull + (uint64_t)ki;
    for (int b = 0; b < k->nbufs; ++b) {
      bytes[b] = (size_t)(k->bufs[b].elem_size * k->bufs[b].elems * k->batch);
      /* Page-aligned, then staggered by a different number of cache lines per buffer so that
       * the buffers do not alias in the L1 sets (4 KiB aliasing); --stagger shifts them all. */
      raw[b] = aligned_alloc(4096, bytes[b] + 8192);
      bufs[b] = (uint8_t *)raw[b] + ((size_t)(b * 17 + stagger) * 64) % 4096;
      fill(bufs[b], k->bufs[b].elem_size, k->bufs[b].elems * k->batch, k->bufs[b].fill);
    }
    double s = 0.75;
    /* reference outputs */
    k->impls[0].fn(bufs, k->batch, s);
    for (int b = 0; b < k->nbufs; ++b)
      if (k->bufs[b].cmp != CMP_NONE) { refs[b] = malloc(bytes[b]); memcpy(refs[b], bufs[b], bytes[b]); }
    for (int ii = 0; ii < k->nimpls; ++ii) {
      const struct bench_impl *im = &k->impls[ii];
      int bitexact = 1, ok = 1;
      double maxerr = 0;
      if (im->check) {
        for (int b = 0; b < k->nbufs; ++b)
          if (k->bufs[b].cmp != CMP_NONE) fill(bufs[b], k->bufs[b].elem_size, k->bufs[b].elems * k->batch, FILL_ZERO);
        im->fn(bufs, k->batch, s);
        for (int b = 0; b < k->nbufs; ++b) {
          if (k->bufs[b].cmp == CMP_NONE) continue;
          int be;
          double e = compare(bufs[b], refs[b], k->bufs[b].elem_size, k->bufs[b].elems * k->batch, k->bufs[b].cmp, &be);
          bitexact &= be;
          if (!(e <= maxerr)) maxerr = e;
        }
        ok = maxerr <= k->tol;
        failures += !ok;
      }
      /* warm up and calibrate: double the call count until one rep takes min_ms */
      int64_t iters = 1;
      for (;;) {
        double t0 = now_ns();
        for (int64_t it = 0; it < iters; ++it) im->fn(bufs, k->batch, s);
        double t = now_ns() - t0;
        if (t >= min_ms * 1e6 || iters >= (1ll << 40)) break;
        iters = t > 0 ? (int64_t)(iters * fmin(2 * min_ms * 1e6 / t, 1000.0)) + 1 : iters * 1000;
      }
      for (int r = 0; r < reps; ++r) {
        double t0 = now_ns();
        for (int64_t it = 0; it < iters; ++it) im->fn(bufs, k->batch, s);
        times[r] = (now_ns() - t0) / ((double)iters * (double)k->ops);
      }
      qsort(times, (size_t)reps, sizeof(double), cmp_double);
      double med = reps % 2 ? times[reps / 2] : 0.5 * (times[reps / 2 - 1] + times[reps / 2]);
      printf("%s\t%s\t%.4f\t%.4f\t%.4f\t%d\t%d\t%d\t%.3g\t%d\n", k->name, im->name, med, times[0], times[reps - 1], reps,
             im->check, bitexact, maxerr, ok);
      fflush(stdout);
    }
    for (int b = 0; b < k->nbufs; ++b) { free(raw[b]); free(refs[b]); }
  }
  free(times);
  return failures ? 1 : 0;
}

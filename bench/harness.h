/* Kernel table shared by harness.c and the generated table.c (bench/run.py writes it). */
#ifndef MX_BENCH_HARNESS_H
#define MX_BENCH_HARNESS_H
#include <stdint.h>

/* Fill and compare kinds: the same numbers as bench/kernels.py. */
enum { FILL_UNIT, FILL_BYTES, FILL_WIDE, FILL_ZERO };
enum { CMP_NONE, CMP_FLOAT, CMP_F16BITS, CMP_E4M3FN, CMP_EXACT };

/* Every implementation is called through a thunk with the kernel's buffers in order. */
typedef void (*bench_thunk)(void **bufs, int64_t n, double s);

struct bench_buf {
  int elem_size;     /* bytes */
  int64_t elems;     /* per batch item */
  int fill, cmp;
};

struct bench_impl {
  const char *name;
  bench_thunk fn;
  int check; /* 0: not comparable to the reference (the copy-loop bandwidth limits) */
};

#define BENCH_MAX_BUFS 4
#define BENCH_MAX_IMPLS 8

struct bench_kernel {
  const char *name;
  int64_t batch;       /* items per call */
  int64_t ops;         /* ops per call (batch for matrix kernels, 1 for FP8 arrays) */
  double tol;          /* accepted |x - ref| / (1 + |ref|) (CMP_FLOAT) */
  int nbufs;
  struct bench_buf bufs[BENCH_MAX_BUFS];
  int nimpls;          /* impls[0] is the reference */
  struct bench_impl impls[BENCH_MAX_IMPLS];
};

extern const struct bench_kernel bench_kernels[];
extern const int bench_nkernels;
#endif

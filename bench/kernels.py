"""The benchmarked kernels: their shapes, buffers, and the source of every implementation.

One `Kernel` describes a batch of operations over flat buffers in column-major layout;
`c_sources()` writes the C peers (naive loops, Clang matrix types, FP8 bit manipulation,
copy loops) and `mlir_sources()` the same kernels in the `matrix`/`arbfp` dialects for mx.
Every implementation of a kernel has the C signature of its family (see `C_PARAMS`), so one
harness and one ctypes loader call them all.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum

import numpy as np


class Family(Enum):
    MMA = "mma"  # D = A·B + C
    MM = "mm"  # D = A·B
    MMTT = "mmtt"  # D = Aᵀ·Bᵀ
    LDST = "ldst"  # strided column-major load and store
    AXPY = "axpy"  # D = s·A + B
    MATVEC = "matvec"  # y = M·x
    DEC_E4M3FN_F32 = "dec_e4m3fn_f32"
    DEC_E5M2_F16 = "dec_e5m2_f16"
    ENC_F32_E4M3FN_SAT = "enc_f32_e4m3fn_sat"


FP8_FAMILIES = (Family.DEC_E4M3FN_F32, Family.DEC_E5M2_F16, Family.ENC_F32_E4M3FN_SAT)
MATRIX_FAMILIES = tuple(f for f in Family if f not in FP8_FAMILIES)

# Buffer element kinds, shared with harness.h (same numbering).
FILL_UNIT, FILL_BYTES, FILL_WIDE, FILL_ZERO = 0, 1, 2, 3
CMP_NONE, CMP_FLOAT, CMP_F16BITS, CMP_E4M3FN, CMP_EXACT = 0, 1, 2, 3, 4


@dataclass(frozen=True)
class Buf:
    """One argument buffer: element width, elements per batch item, fill/compare kinds."""

    name: str
    ctype: str
    elems: int
    fill: int
    cmp: int = CMP_NONE


@dataclass(frozen=True)
class Kernel:
    """One benchmarked operation, applied to `batch` items (matrices, or elements for FP8)."""

    family: Family
    n: int = 0  # matrix dimension (all matrices are n×n); 0 for FP8
    dtype: str = "f32"
    batch: int = 1
    stride: int = 0  # LDST only
    large: bool = False  # batch sized to spill out of L2

    @property
    def name(self) -> str:
        if self.family in FP8_FAMILIES:
            return self.family.value
        s = f"{self.family.value}_{self.dtype}_{self.n}x{self.n}"
        if self.stride:
            s += f"_s{self.stride}"
        return s + ("_large" if self.large else "")

    @property
    def label(self) -> str:
        what = {
            Family.MMA: "A·B+C",
            Family.MM: "A·B",
            Family.MMTT: "Aᵀ·Bᵀ",
            Family.LDST: "load/store",
            Family.AXPY: "s·A+B",
            Family.MATVEC: "M·x",
            Family.DEC_E4M3FN_F32: "e4m3fn→f32",
            Family.DEC_E5M2_F16: "e5m2→f16",
            Family.ENC_F32_E4M3FN_SAT: "f32→e4m3fn sat",
        }[self.family]
        if self.family in FP8_FAMILIES:
            return f"{what} ({self.batch >> 20}M)"
        s = f"{what} {self.n}×{self.n} {self.dtype}"
        if self.stride:
            s += f" stride {self.stride}"
        return s + (f" (batch {self.batch}, > L2)" if self.large else "")

    @property
    def ctype(self) -> str:
        return "double" if self.dtype == "f64" else "float"

    @property
    def np_dtype(self) -> type[np.floating]:
        return np.float64 if self.dtype == "f64" else np.float32

    @property
    def per_call_ops(self) -> int:
        """How many "ops" one call performs: matrices for matrix kernels, 1 array for FP8."""
        return 1 if self.family in FP8_FAMILIES else self.batch

    @property
    def flops(self) -> int:
        """Floating-point operations per op (0 for pure data movement)."""
        n = self.n
        return {
            Family.MMA: 2 * n**3,
            Family.MM: n * n * (2 * n - 1),
            Family.MMTT: n * n * (2 * n - 1),
            Family.AXPY: 2 * n * n,
            Family.MATVEC: n * (2 * n - 1),
        }.get(self.family, 0)

    def bufs(self) -> list[Buf]:
        """Buffers in argument order; sizes are per batch item."""
        t, nn = self.ctype, self.n * self.n
        f = self.family
        if f is Family.MMA:
            return [
                Buf("a", t, nn, FILL_UNIT),
                Buf("b", t, nn, FILL_UNIT),
                Buf("c", t, nn, FILL_UNIT),
                Buf("d", t, nn, FILL_ZERO, CMP_FLOAT),
            ]
        if f in (Family.MM, Family.MMTT):
            return [
                Buf("a", t, nn, FILL_UNIT),
                Buf("b", t, nn, FILL_UNIT),
                Buf("d", t, nn, FILL_ZERO, CMP_FLOAT),
            ]
        if f is Family.LDST:
            m = self.stride * self.n
            return [Buf("a", t, m, FILL_UNIT), Buf("d", t, m, FILL_ZERO, CMP_EXACT)]
        if f is Family.AXPY:
            return [
                Buf("a", t, nn, FILL_UNIT),
                Buf("b", t, nn, FILL_UNIT),
                Buf("d", t, nn, FILL_ZERO, CMP_FLOAT),
            ]
        if f is Family.MATVEC:
            return [
                Buf("m", t, nn, FILL_UNIT),
                Buf("x", t, self.n, FILL_UNIT),
                Buf("y", t, self.n, FILL_ZERO, CMP_FLOAT),
            ]
        if f is Family.DEC_E4M3FN_F32:
            return [
                Buf("in", "uint8_t", 1, FILL_BYTES),
                Buf("out", "float", 1, FILL_ZERO, CMP_FLOAT),
            ]
        if f is Family.DEC_E5M2_F16:
            return [
                Buf("in", "uint8_t", 1, FILL_BYTES),
                Buf("out", "uint16_t", 1, FILL_ZERO, CMP_F16BITS),
            ]
        return [
            Buf("in", "float", 1, FILL_WIDE),
            Buf("out", "uint8_t", 1, FILL_ZERO, CMP_E4M3FN),
        ]

    @property
    def has_scalar(self) -> bool:
        return self.family is Family.AXPY

    @property
    def tolerance(self) -> float:
        """Largest accepted |x - ref| / (1 + |ref|) against the strict reference."""
        if self.family in (
            Family.MMA,
            Family.MM,
            Family.MMTT,
            Family.AXPY,
            Family.MATVEC,
        ):
            eps = 2.0**-52 if self.dtype == "f64" else 2.0**-23
            return 4 * self.n * eps
        return 0.0

    def bytes_moved(self) -> int:
        """Bytes read + written per op by an ideal implementation (for FP8 and load/store)."""
        size = {"float": 4, "double": 8, "uint8_t": 1, "uint16_t": 2}
        if self.family is Family.LDST:
            return 2 * self.n * self.n * size[self.ctype]
        return sum(size[b.ctype] * b.elems for b in self.bufs()) * (
            self.batch if self.family in FP8_FAMILIES else 1
        )


# Batches sized so that all buffers of a kernel take about 512 KiB (half of one core's L2).
L2_BUDGET = 512 * 1024
FP8_ELEMS = 16 << 20


def _in_l2(family: Family, n: int, dtype: str = "f32", stride: int = 0) -> Kernel:
    k = Kernel(family, n, dtype, 1, stride)
    per_item = sum(b.elems for b in k.bufs()) * (8 if dtype == "f64" else 4)
    return Kernel(family, n, dtype, max(1, L2_BUDGET // per_item), stride)


def all_kernels(quick: bool = False) -> list[Kernel]:
    """Every benchmarked kernel; `quick` keeps a few small ones for a smoke run."""
    if quick:
        ks = [
            _in_l2(Family.MMA, 4),
            _in_l2(Family.MMA, 16),
            _in_l2(Family.LDST, 4, stride=5),
            _in_l2(Family.AXPY, 4),
        ]
        return ks + [Kernel(f, batch=1 << 20) for f in FP8_FAMILIES]
    ks = [_in_l2(Family.MMA, n) for n in (4, 8, 16, 32, 64)]
    ks.append(_in_l2(Family.MMA, 8, "f64"))
    ks += [_in_l2(Family.MM, n) for n in (16, 32)]
    ks += [_in_l2(Family.MMTT, n) for n in (4, 8, 16)]
    ks += [_in_l2(Family.LDST, 4, stride=5), _in_l2(Family.LDST, 8, stride=9)]
    ks += [_in_l2(Family.AXPY, n) for n in (4, 16)]
    ks.append(_in_l2(Family.MATVEC, 64))
    # One batch far beyond L2 (64 MiB over the four buffers).
    ks.append(Kernel(Family.MMA, 4, "f32", 1 << 20, large=True))
    ks += [Kernel(f, batch=FP8_ELEMS) for f in FP8_FAMILIES]
    return ks


# ----------------------------------------------------------------------------- C signatures


def c_params(k: Kernel) -> str:
    """The C parameter list shared by every implementation of `k`."""
    ps: list[str] = []
    bufs = k.bufs()
    if k.has_scalar:
        ps.append(f"{k.ctype} s")
    for b in bufs:
        const = "" if b.cmp != CMP_NONE else "const "
        ps.append(f"{const}{b.ctype} *restrict {b.name}")
    ps.append("int64_t n")
    return ", ".join(ps)


# Implementations per kernel kind. The first one is the reference that the harness compares to.
MATRIX_C_IMPLS = ("naive", "clang_off", "clang_fast")
FP8_C_IMPLS = ("c_bits", "copy")
MX_IMPLS = ("mx", "mx_contract")


def c_impls(k: Kernel) -> tuple[str, ...]:
    if k.family in (Family.DEC_E4M3FN_F32, Family.DEC_E5M2_F16):
        return (
            "c_bits",
            "c_lut",
            "copy",
        )  # a 256-entry table is the other obvious decoder
    return FP8_C_IMPLS if k.family in FP8_FAMILIES else MATRIX_C_IMPLS


def mx_impls(k: Kernel) -> tuple[str, ...]:
    """mx variants: strict rounding, and `fastmath<contract>` where the kernel has arithmetic."""
    if k.family in FP8_FAMILIES or k.family is Family.LDST:
        return ("mx",)
    return MX_IMPLS


def mx_diag_impls(k: Kernel) -> tuple[str, ...]:
    """Diagnostic builds of mx's matrix kernels: the same `.ll`, compiled with clang's loop
    vectorizer off (`-fno-vectorize`), to show what LLVM's widening of the batch loop costs."""
    if k.family in FP8_FAMILIES:
        return ()
    return tuple(f"{m}{NOVEC}" for m in mx_impls(k))


NOVEC = "_novec"


def symbol(impl: str, k: Kernel) -> str:
    return f"{impl}_{k.name}"


# ----------------------------------------------------------------------------- naive C


def _naive_body(k: Kernel) -> str:
    n, t, nn = k.n, k.ctype, k.n * k.n
    f = k.family
    if f in (Family.MMA, Family.MM, Family.MMTT):
        # Element (r, c) is summed over k in increasing order, as docs/matrix-dialect.md rounds matmul; the
        # r loop is innermost so the compiler vectorizes across rows without reassociating.
        mmtt = f is Family.MMTT

        def a_at(r: str, kk: str) -> str:  # A[r][k], or Aᵀ[r][k] = A[k][r]
            return f"a[{r} * N + {kk}]" if mmtt else f"a[{kk} * N + {r}]"

        def b_at(kk: str, c: str) -> str:  # B[k][c], or Bᵀ[k][c] = B[c][k]
            return f"b[{kk} * N + {c}]" if mmtt else f"b[{c} * N + {kk}]"

        add_c = (
            "\n      for (int r = 0; r < N; ++r) d[c * N + r] = d[c * N + r] + cc[c * N + r];"
            if f is Family.MMA
            else ""
        )
        c_decl = f"    const {t} *cc = C + i * {nn};\n" if f is Family.MMA else ""
        return f"""  for (int64_t i = 0; i < n; ++i) {{
    enum {{ N = {n} }};
    const {t} *a = A + i * {nn}, *b = B + i * {nn};
    {t} *d = D + i * {nn};
{c_decl}    for (int c = 0; c < N; ++c) {{
      for (int r = 0; r < N; ++r) d[c * N + r] = {a_at("r", "0")} * {b_at("0", "c")};
      for (int k = 1; k < N; ++k)
        for (int r = 0; r < N; ++r) d[c * N + r] = d[c * N + r] + {a_at("r", "k")} * {b_at("k", "c")};{add_c}
    }}
  }}"""
    if f is Family.LDST:
        m = k.stride * n
        return f"""  for (int64_t i = 0; i < n; ++i)
    for (int c = 0; c < {n}; ++c)
      for (int r = 0; r < {n}; ++r) D[i * {m} + c * {k.stride} + r] = A[i * {m} + c * {k.stride} + r];"""
    if f is Family.AXPY:
        return f"""  for (int64_t i = 0; i < n * {nn}; ++i) D[i] = s * A[i] + B[i];"""
    assert f is Family.MATVEC
    return f"""  for (int64_t i = 0; i < n; ++i) {{
    const {t} *m = M + i * {nn}, *x = X + i * {n};
    {t} *y = Y + i * {n};
    for (int r = 0; r < {n}; ++r) y[r] = m[r] * x[0];
    for (int k = 1; k < {n}; ++k)
      for (int r = 0; r < {n}; ++r) y[r] = y[r] + m[k * {n} + r] * x[k];
  }}"""


def _upper_params(k: Kernel) -> str:
    """Parameter list with buffer names upper-cased (the bodies use lower case for one item)."""
    p = c_params(k)
    for b in k.bufs():
        p = p.replace(f"*restrict {b.name}", f"*restrict {b.name.upper()}")
    return p


def _naive_c(ks: list[Kernel]) -> str:
    out = [
        _PRELUDE,
        "/* Naive loops, in the rounding order of docs/matrix-dialect.md (build with -ffp-contract=off). */",
    ]
    for k in ks:
        if k.family in MATRIX_FAMILIES:
            out.append(
                f"void {symbol('naive', k)}({_upper_params(k)}) {{\n{_naive_body(k)}\n}}\n"
            )
    return "\n".join(out)


# ----------------------------------------------------------------------------- Clang matrix types


def _clang_body(k: Kernel) -> str:
    n, nn, ty = k.n, k.n * k.n, f"m{k.n}x{k.n}{k.dtype}"
    f = k.family
    load = "__builtin_matrix_column_major_load"
    store = "__builtin_matrix_column_major_store"
    if f in (Family.MMA, Family.MM, Family.MMTT):
        ld = [
            f"    {ty} {v} = {load}({v.upper()} + i * {nn}, {n}, {n}, {n});"
            for v in ("a", "b", "c")[: 3 if f is Family.MMA else 2]
        ]
        expr = {
            Family.MMA: "a * b + c",
            Family.MM: "a * b",
            Family.MMTT: "__builtin_matrix_transpose(a) * __builtin_matrix_transpose(b)",
        }[f]
        return (
            "  for (int64_t i = 0; i < n; ++i) {\n"
            + "\n".join(ld)
            + f"\n    {store}({expr}, D + i * {nn}, {n});\n  }}"
        )
    if f is Family.LDST:
        m = k.stride * n
        return f"""  for (int64_t i = 0; i < n; ++i) {{
    {ty} a = {load}(A + i * {m}, {n}, {n}, {k.stride});
    {store}(a, D + i * {m}, {k.stride});
  }}"""
    if f is Family.AXPY:
        return f"""  for (int64_t i = 0; i < n; ++i) {{
    {ty} a = {load}(A + i * {nn}, {n}, {n}, {n});
    {ty} b = {load}(B + i * {nn}, {n}, {n}, {n});
    {store}(s * a + b, D + i * {nn}, {n});
  }}"""
    assert f is Family.MATVEC
    return f"""  for (int64_t i = 0; i < n; ++i) {{
    {ty} m = {load}(M + i * {nn}, {n}, {n}, {n});
    v{n}{k.dtype} x = {load}(X + i * {n}, {n}, 1, {n});
    {store}(m * x, Y + i * {n}, {n});
  }}"""


def _clang_c(ks: list[Kernel]) -> str:
    out = [
        _PRELUDE,
        "/* Clang matrix types; compiled twice, with -ffp-contract=off and =fast; PFX names the build. */",
        "#define CAT2(a, b) a##b\n#define CAT(a, b) CAT2(a, b)",
    ]
    types: set[str] = set()
    for k in ks:
        if k.family in MATRIX_FAMILIES:
            types.add(
                f"typedef {k.ctype} m{k.n}x{k.n}{k.dtype} __attribute__((matrix_type({k.n}, {k.n})));"
            )
            if k.family is Family.MATVEC:
                types.add(
                    f"typedef {k.ctype} v{k.n}{k.dtype} __attribute__((matrix_type({k.n}, 1)));"
                )
    out += sorted(types)
    for k in ks:
        if k.family in MATRIX_FAMILIES:
            out.append(
                f"void CAT(PFX, {k.name})({_upper_params(k)}) {{\n{_clang_body(k)}\n}}\n"
            )
    return "\n".join(out)


# ----------------------------------------------------------------------------- FP8 in C

_FP8_C = """
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
"""

_PRELUDE = "#include <stdint.h>\n#include <string.h>\n"


def c_sources(ks: list[Kernel]) -> dict[str, str]:
    """File name -> C source of the peers."""
    return {
        "naive.c": _naive_c(ks),
        "clang_matrix.c": _clang_c(ks),
        "fp8.c": _PRELUDE + _FP8_C,
    }


# compile flags per C source (beyond -O3 -march=native); clang_matrix.c is built twice
C_BUILDS: dict[str, tuple[str, list[str]]] = {
    "naive": ("naive.c", ["-ffp-contract=off"]),
    "clang_off": (
        "clang_matrix.c",
        ["-fenable-matrix", "-ffp-contract=off", "-DPFX=clang_off_"],
    ),
    "clang_fast": (
        "clang_matrix.c",
        ["-fenable-matrix", "-ffp-contract=fast", "-DPFX=clang_fast_"],
    ),
    "fp8": ("fp8.c", ["-ffp-contract=off"]),
}


# ----------------------------------------------------------------------------- mx (MLIR)


def _mlir_func(k: Kernel, impl: str) -> str:
    t, n, nn = k.dtype, k.n, k.n * k.n
    fm = " fastmath<contract>" if impl == "mx_contract" else ""
    mt = f"!matrix.matrix<{n}x{n}x{t}>"
    mem = f"memref<?x{t}>"
    f = k.family
    head = "  %c0 = arith.constant 0 : index\n  %c1 = arith.constant 1 : index\n"
    if f in FP8_FAMILIES:
        src, dst, op = {
            Family.DEC_E4M3FN_F32: ("i8", "f32", "arbfp.convert_from f8e4m3fn %x"),
            Family.DEC_E5M2_F16: ("i8", "f16", "arbfp.convert_from f8e5m2 %x"),
            Family.ENC_F32_E4M3FN_SAT: (
                "f32",
                "i8",
                "arbfp.convert_to f8e4m3fn %x saturate",
            ),
        }[f]
        return f"""func.func @{symbol(impl, k)}(%in: memref<?x{src}>, %out: memref<?x{dst}>, %n: index) {{
{head}  scf.for %i = %c0 to %n step %c1 {{
    %x = memref.load %in[%i] : memref<?x{src}>
    %y = {op} : {src} to {dst}
    memref.store %y, %out[%i] : memref<?x{dst}>
  }}
  func.return
}}
"""
    names = [b.name for b in k.bufs()]
    args = ", ".join(
        ([f"%s: {t}"] if k.has_scalar else [])
        + [f"%{b}: {mem}" for b in names]
        + ["%n: index"]
    )
    size = k.stride * n if f is Family.LDST else nn
    body = ["    %off = arith.muli %i, %sz : index"]

    def load(v: str, stride: str = "") -> str:
        return (
            f"    %m{v} = matrix.column_major_load %{v}[%off]{stride} : {mem} -> {mt}"
        )

    if f in (Family.MMA, Family.MM, Family.MMTT):
        ins = names[:-1]
        body += [load(v) for v in ins]
        if f is Family.MMA:
            body.append(
                f"    %r = matrix.matmul_add %ma, %mb, %mc{fm} : {mt}, {mt}, {mt} -> {mt}"
            )
        elif f is Family.MM:
            body.append(f"    %r = matrix.matmul %ma, %mb{fm} : {mt}, {mt} -> {mt}")
        else:
            body.append(f"    %ta = matrix.transpose %ma : {mt} -> {mt}")
            body.append(f"    %tb = matrix.transpose %mb : {mt} -> {mt}")
            body.append(f"    %r = matrix.matmul %ta, %tb{fm} : {mt}, {mt} -> {mt}")
        body.append(f"    matrix.column_major_store %r, %d[%off] : {mt}, {mem}")
    elif f is Family.LDST:
        body.append(load("a", f" stride {k.stride}"))
        body.append(
            f"    matrix.column_major_store %ma, %d[%off] stride {k.stride} : {mt}, {mem}"
        )
    elif f is Family.AXPY:
        body += [load("a"), load("b")]
        body.append(f"    %sa = matrix.mul %ss, %ma{fm} : {mt}")
        body.append(f"    %r = matrix.add %sa, %mb{fm} : {mt}")
        body.append(f"    matrix.column_major_store %r, %d[%off] : {mt}, {mem}")
        head += f"  %ss = matrix.splat %s : {mt}\n"
    else:
        vt = f"vector<{n}x{t}>"
        body.append("    %xoff = arith.muli %i, %vn : index")
        body.append(load("m"))
        body.append(f"    %vx = vector.load %x[%xoff] : {mem}, {vt}")
        body.append(f"    %vy = matrix.matvec %mm, %vx{fm} : {mt}, {vt} -> {vt}")
        body.append(f"    vector.store %vy, %y[%xoff] : {mem}, {vt}")
        head += f"  %vn = arith.constant {n} : index\n"
    head += f"  %sz = arith.constant {size} : index\n"
    return (
        f"func.func @{symbol(impl, k)}({args}) {{\n{head}  scf.for %i = %c0 to %n step %c1 {{\n"
        + "\n".join(body)
        + "\n  }\n  func.return\n}\n"
    )


def mlir_sources(ks: list[Kernel]) -> dict[str, str]:
    """File name -> one MLIR module per (kernel, mx variant), so one failing lowering sinks only itself."""
    return {
        f"{symbol(impl, k)}.mlir": f"builtin.module {{\n{_mlir_func(k, impl)}}}\n"
        for k in ks
        for impl in mx_impls(k)
    }

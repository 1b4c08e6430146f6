"""Low-precision products: f16/bf16 matrices and mixed-precision contractions against C.

usage: python -m bench.lowprec [--quick] [--out DIR]     (also run by bench/run.py)

Kernels (batches of column-major n×n matrices, each batch ~512 KiB of buffers, as in the
main table): f16 and bf16 A·B+C and A·B at 8, 16, 32 (bf16 also 256, one product per call:
clang-16 does not finish compiling a 128×128 `_Float16` matrix product),
strict and `fastmath<contract>`; i8×i8→i32 A·B at 32 and 64; f16×f16→f32 and
bf16×bf16→f32 A·B+C at 32.

Peers, compiled by clang-16 -O3 -march=native:
- f16: Clang matrix types of `_Float16` (`-fenable-matrix -Xclang
  -ffloat16-excess-precision=none`), with `-ffp-contract=off` and `=fast`;
- bf16: a C loop computing each step in float and rounding it to bf16 (nearest even, in
  integer arithmetic: clang-16 has no bf16 arithmetic), and a C loop summing in float
  with `fmaf`, rounding once;
- i8→i32 and the mixed f16/bf16→f32 products: C loops written to vectorize (rows
  innermost), in the rounding order of docs/matrix-dialect.md (`fmaf` for contract).
mx: the same kernel as one `func.func` over flat buffers (`column_major_load`, the product,
`column_major_store` in an `scf.for` over the batch), lowered by `mx-opt -p
mx-lower-to-llvm -t llvm` and compiled by the same clang-16 into its own shared library:
every implementation is called the same way (ctypes, one call per batch).

Each implementation is checked before it is timed: bit for bit against the C loop or the
Clang build of the same rounding order where there is one (strict mx = Clang
`-ffp-contract=off` = the per-op C loop; mx contract = the `fmaf` loop; integers exact),
else within 4·K·u·Σ|a·b| of the exact result. Thread CPU time, median of 5 reps of ≥ 20 ms.
"""

from __future__ import annotations

import argparse
import ctypes
import statistics
import subprocess
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import ml_dtypes
import numpy as np

from bench.build import mx_opt
from bench.timing import time_per_op

ROOT = Path(__file__).resolve().parent.parent
CLANG = "clang-16"
FLAGS = ["-O3", "-march=native", "-shared", "-fPIC"]
F16_FLAGS = ["-fenable-matrix", "-Xclang", "-ffloat16-excess-precision=none"]
REPS, MIN_MS = 5, 20.0
BATCH_BYTES = 512 * 1024

Array = np.ndarray


@dataclass(frozen=True)
class Case:
    """D = A·B (+ C) over a batch of column-major n×n matrices: factors of
    `factor` type, C and D of `result` type."""

    factor: str  # f16, bf16, i8
    result: str
    n: int
    accumulate: bool

    @property
    def label(self) -> str:
        op = "A·B+C" if self.accumulate else "A·B"
        types = (
            self.factor
            if self.factor == self.result
            else f"{self.factor}×{self.factor}→{self.result}"
        )
        return f"{op} {self.n}×{self.n} {types}"

    @property
    def name(self) -> str:
        return (
            f"{'mma' if self.accumulate else 'mm'}_{self.factor}_{self.result}_{self.n}"
        )

    @property
    def batch(self) -> int:
        per_item = (
            self.n
            * self.n
            * (
                2 * _bytes(self.factor)
                + (2 if self.accumulate else 1) * _bytes(self.result)
            )
        )
        return max(1, BATCH_BYTES // per_item)

    @property
    def flops(self) -> int:
        n = self.n
        return 2 * n**3 if self.accumulate else n * n * (2 * n - 1)

    @property
    def integer(self) -> bool:
        return self.factor == "i8"


def _bytes(t: str) -> int:
    return {"i8": 1, "f16": 2, "bf16": 2, "f32": 4, "i32": 4}[t]


def cases(quick: bool) -> list[Case]:
    sizes = (8, 32) if quick else (8, 16, 32)
    # (no f16 256: clang-16 does not finish compiling a 128x128 matrix product)
    out = [
        Case(t, t, n, acc)
        for t, large in (("f16", ()), ("bf16", () if quick else (256,)))
        for n in (*sizes, *large)
        for acc in (True, False)
    ]
    out += [Case("i8", "i32", n, False) for n in ((32,) if quick else (32, 64))]
    out += [Case(t, "f32", 32, True) for t in ("f16", "bf16")]
    return out


# ----------------------------------------------------------------------------- C peers

_C_TYPES = {
    "f16": "_Float16",
    "bf16": "uint16_t",
    "i8": "int8_t",
    "f32": "float",
    "i32": "int32_t",
}

_BF16_C = r"""
#include <stdint.h>
#include <string.h>
#include <math.h>
static inline float bf(uint16_t x) { uint32_t u = (uint32_t)x << 16; float f; memcpy(&f, &u, 4); return f; }
/* float -> bf16, nearest even (a NaN stays a quiet NaN) */
static inline uint16_t rb(float f) {
  uint32_t u; memcpy(&u, &f, 4);
  uint32_t r = (u + 0x7fffu + ((u >> 16) & 1u)) >> 16;
  return f != f ? (uint16_t)((u >> 16) | 0x40u) : (uint16_t)r;
}
"""


def _value(t: str, expr: str) -> str:
    """C float (or int32) value of an element expression of type `t`."""
    return {
        "bf16": f"bf({expr})",
        "f16": f"(float)({expr})",
        "i8": f"(int32_t)({expr})",
    }.get(t, expr)


def _loop(c: Case, fused: bool) -> str:
    """The C loop peer: per element, acc = a0·b0; acc += ak·bk (k order); + C.
    bf16 results round each step (strict) or sum in float with fmaf and round
    once (`fused`); f32/i32 results sum in their type."""
    n, f, r = c.n, c.factor, c.result
    ft, rt = _C_TYPES[f], _C_TYPES[r]
    acc_t = "int32_t" if c.integer else "float"

    def a(k: int | str) -> str:
        return _value(f, f"A[{k} * {n} + i]")

    def b(k: int | str) -> str:
        return _value(f, f"B[j * {n} + {k}]")

    if r == "bf16" and not fused:
        step0 = f"s[i] = rb({a(0)} * {b(0)});"
        step = f"s[i] = rb(bf(s[i]) + bf(rb({a('k')} * {b('k')})));"
        final = (
            f"D[j * {n} + i] = rb(bf(s[i]) + bf(C[j * {n} + i]));"
            if c.accumulate
            else f"D[j * {n} + i] = s[i];"
        )
        state = "uint16_t"
    else:
        step0 = f"s[i] = {a(0)} * {b(0)};"
        step = (
            f"s[i] = fmaf({a('k')}, {b('k')}, s[i]);"
            if fused
            else f"s[i] = s[i] + {a('k')} * {b('k')};"
        )
        total = f"(s[i] + {_value(r, f'C[j * {n} + i]')})" if c.accumulate else "s[i]"
        rounded = f"rb({total})" if r == "bf16" else total
        final = f"D[j * {n} + i] = {rounded};"
        state = acc_t
    return f"""void {_symbol(c, "loop_fma" if fused else "loop")}(int64_t count, const {ft} *A0, const {ft} *B0, const {rt} *C0, {rt} *D0) {{
  for (int64_t m = 0; m < count; ++m) {{
    const {ft} *A = A0 + m * {n * n}, *B = B0 + m * {n * n};
    const {rt} *C = C0 + m * {n * n}; {rt} *D = D0 + m * {n * n};
    (void)C;
    for (int j = 0; j < {n}; ++j) {{
      {state} s[{n}];
      for (int i = 0; i < {n}; ++i) {step0}
      /* rows innermost, vectorized; LLVM would otherwise vectorize k with gathers */
#pragma clang loop vectorize(disable) unroll(disable)
      for (int k = 1; k < {n}; ++k)
#pragma clang loop vectorize(enable)
        for (int i = 0; i < {n}; ++i) {step}
      for (int i = 0; i < {n}; ++i) {final}
    }}
  }}
}}
"""


def _clang_matrix(c: Case) -> str:
    n, t = c.n, f"m{c.n}h"
    load = "__builtin_matrix_column_major_load"
    expr = "a * b + cc" if c.accumulate else "a * b"
    return f"""typedef _Float16 {t} __attribute__((matrix_type({n}, {n})));
void {_symbol(c, "PFX")}(int64_t count, const _Float16 *A, const _Float16 *B, const _Float16 *C, _Float16 *D) {{
  for (int64_t m = 0; m < count; ++m) {{
    {t} a = {load}(A + m * {n * n}, {n}, {n}, {n});
    {t} b = {load}(B + m * {n * n}, {n}, {n}, {n});
    {t} cc = {load}(C + m * {n * n}, {n}, {n}, {n});
    (void)cc;
    __builtin_matrix_column_major_store({expr}, D + m * {n * n}, {n});
  }}
}}
"""


def _symbol(c: Case, impl: str) -> str:
    return f"{impl}_{c.name}"


def _peers(c: Case) -> dict[str, tuple[str, list[str]]]:
    """Peer name -> (C source, extra clang flags); the function is `_symbol(c, name)`."""
    if c.factor == "f16" and c.result == "f16":
        source = "#include <stdint.h>\n" + _clang_matrix(c)
        return {
            "clang_off": (
                source.replace("PFX", "clang_off"),
                [*F16_FLAGS, "-ffp-contract=off"],
            ),
            "clang_fast": (
                source.replace("PFX", "clang_fast"),
                [*F16_FLAGS, "-ffp-contract=fast"],
            ),
        }
    out = {"loop": (_BF16_C + _loop(c, False), ["-ffp-contract=off"])}
    if not c.integer:
        out["loop_fma"] = (_BF16_C + _loop(c, True), ["-ffp-contract=off"])
    return out


# ----------------------------------------------------------------------------- mx


def _module(c: Case, contract: bool) -> str:
    n, f, r = c.n, c.factor, c.result
    fm = " fastmath<contract>" if contract else ""
    mf, mr = f"!matrix.matrix<{n}x{n}x{f}>", f"!matrix.matrix<{n}x{n}x{r}>"
    product = (
        f"matrix.matmul_add %a, %b, %c{fm} : {mf}, {mf}, {mr} -> {mr}"
        if c.accumulate
        else f"matrix.matmul %a, %b{fm} : {mf}, {mf} -> {mr}"
    )
    load_c = (
        f"\n    %c = matrix.column_major_load %C[%off] : memref<?x{r}> -> {mr}"
        if c.accumulate
        else ""
    )
    return f"""func.func @{_symbol(c, "mx")}(%count: index, %A: memref<?x{f}>, %B: memref<?x{f}>, %C: memref<?x{r}>, %D: memref<?x{r}>) {{
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %size = arith.constant {n * n} : index
  scf.for %m = %c0 to %count step %c1 {{
    %off = arith.muli %m, %size : index
    %a = matrix.column_major_load %A[%off] : memref<?x{f}> -> {mf}
    %b = matrix.column_major_load %B[%off] : memref<?x{f}> -> {mf}{load_c}
    %d = {product}
    matrix.column_major_store %d, %D[%off] : {mr}, memref<?x{r}>
  }}
  func.return
}}
"""


def _compile(source: Path, flags: list[str], tmp: Path) -> ctypes.CDLL:
    library = tmp / (source.stem + ".so")
    subprocess.run([CLANG, *FLAGS, *flags, str(source), "-o", str(library)], check=True)
    return ctypes.CDLL(str(library))


def _mx_library(c: Case, contract: bool, tmp: Path) -> ctypes.CDLL:
    stem = f"mx_{c.name}{'_contract' if contract else ''}"
    mlir, ll = tmp / f"{stem}.mlir", tmp / f"{stem}.ll"
    mlir.write_text(_module(c, contract))
    subprocess.run(
        [*mx_opt(), str(mlir), "-p", "mx-lower-to-llvm", "-t", "llvm", "-o", str(ll)],
        check=True,
    )
    return _compile(ll, [], tmp)


# ----------------------------------------------------------------------------- data, checks

_NP = {
    "f16": np.float16,
    "bf16": ml_dtypes.bfloat16,
    "i8": np.int8,
    "f32": np.float32,
    "i32": np.int32,
}


def _operands(c: Case) -> tuple[Array, Array, Array]:
    rng = np.random.default_rng(1)
    size = c.batch * c.n * c.n
    if c.integer:
        a, b = (rng.integers(-128, 128, size).astype(np.int8) for _ in range(2))
        return a, b, rng.integers(-1000, 1000, size).astype(np.int32)
    a, b, acc = (rng.uniform(-1, 1, size) for _ in range(3))
    return (
        a.astype(_NP[c.factor]),
        b.astype(_NP[c.factor]),
        acc.astype(_NP[c.result]),
    )


def _exact(c: Case, a: Array, b: Array, acc: Array) -> tuple[Array, Array]:
    """The exact D (float64, exact for these sizes' products of short
    significands up to rounding of the sum) and Σ|a·b| + |c|, per element."""
    n = c.n
    shape = (c.batch, n, n)  # [m][column][row]
    am = a.astype(np.float64).reshape(shape).transpose(0, 2, 1)
    bm = b.astype(np.float64).reshape(shape).transpose(0, 2, 1)
    cm = acc.astype(np.float64).reshape(shape).transpose(0, 2, 1)
    d = am @ bm + (cm if c.accumulate else 0)
    size = np.abs(am) @ np.abs(bm) + (np.abs(cm) if c.accumulate else 0)
    return d.transpose(0, 2, 1).reshape(-1), size.transpose(0, 2, 1).reshape(-1)


def _unit(t: str) -> float:
    return {"f16": 2.0**-11, "bf16": 2.0**-8, "f32": 2.0**-24}[t]


def _call(
    lib: ctypes.CDLL, symbol: str, c: Case, args: tuple[Array, ...]
) -> Callable[[], None]:
    fn = getattr(lib, symbol)
    fn.restype = None
    pointers = [ctypes.c_void_p(x.ctypes.data) for x in args]
    count = ctypes.c_int64(c.batch)
    return lambda: fn(count, *pointers)


def _median_ns(fn: Callable[[], object], ops: int) -> float:
    return statistics.median(time_per_op(fn, ops, REPS, MIN_MS))


def _bits(x: Array) -> bytes:
    return np.ascontiguousarray(x).tobytes()


def _libraries(c: Case, tmp: Path) -> dict[str, tuple[ctypes.CDLL, str]]:
    """Implementation name -> (its library, its function's symbol)."""
    out: dict[str, tuple[ctypes.CDLL, str]] = {}
    for name, (source, flags) in _peers(c).items():
        path = tmp / f"{name}_{c.name}.c"
        path.write_text(source)
        out[name] = (_compile(path, flags, tmp), _symbol(c, name))
    for contract in (False, True)[: 1 if c.integer else 2]:  # (no integer contract)
        lib = _mx_library(c, contract, tmp)
        out["mx contract" if contract else "mx"] = (lib, _symbol(c, "mx"))
    return out


def measure_case(c: Case, tmp: Path) -> tuple[dict[str, float], list[str]]:
    """ns per product of every implementation, and the failed checks."""
    a, b, acc = _operands(c)
    exact, size = _exact(c, a, b, acc)
    results: dict[str, Array] = {}
    times: dict[str, float] = {}
    for name, (lib, symbol) in _libraries(c, tmp).items():
        d = np.zeros_like(acc)
        fn = _call(lib, symbol, c, (a, b, acc, d))
        fn()
        results[name] = d
        times[name] = _median_ns(fn, c.batch)
    return times, _check(c, results, exact, size)


def _check(c: Case, results: dict[str, Array], exact: Array, size: Array) -> list[str]:
    same = {
        "mx": "loop" if "loop" in results else "clang_off",
        "mx contract": "loop_fma",
    }
    failures: list[str] = []
    for mine, peer in same.items():
        if {mine, peer} <= results.keys() and _bits(results[mine]) != _bits(
            results[peer]
        ):
            failures.append(
                f"{c.label}: {mine} differs from {peer} (same rounding order)"
            )
    if c.integer:
        want = exact.astype(np.int64).astype(np.int32)  # wraps as i32 does
        failures += [
            f"{c.label}: {name} is not exact"
            for name, d in results.items()
            if not np.array_equal(d, want)
        ]
        return failures
    bound = 4 * c.n * _unit(c.result) * size + 2.0**-24
    for name, d in results.items():
        if not np.all(np.abs(d.astype(np.float64) - exact) <= bound):
            failures.append(f"{c.label}: {name} is off by more than 4·K·u·Σ|a·b|")
    return failures


PEER_LABELS = {
    "clang_off": "clang `_Float16` matrix",
    "clang_fast": "clang matrix fast",
    "loop": "C loop (per-op order)",
    "loop_fma": "C loop (fmaf, one rounding)",
}


def _row(c: Case, t: dict[str, float], peak_flops: float) -> str:
    peers = {k: v for k, v in t.items() if not k.startswith("mx")}
    strict_peer = "clang_off" if "clang_off" in peers else "loop"
    fast_peer = {"clang_off": "clang_fast"}.get(strict_peer, "loop_fma")
    best_peer = min(peers, key=peers.__getitem__)
    best_mx = min(v for k, v in t.items() if k.startswith("mx"))

    def ratio(mine: str, peer: str) -> str:
        return f"{t[mine] / t[peer]:.2f}×" if mine in t and peer in t else "–"

    cells = " / ".join(f"{PEER_LABELS[k]} {_ns(v)}" for k, v in sorted(peers.items()))
    return (
        f"| {c.label} | {c.batch} | {cells} | {_ns(t['mx'])} "
        f"| {_ns(t['mx contract']) if 'mx contract' in t else '–'} "
        f"| {ratio('mx', strict_peer)} | {ratio('mx contract', fast_peer)} "
        f"| **{best_mx / peers[best_peer]:.2f}×** ({PEER_LABELS[best_peer]}) "
        f"| {c.flops / best_mx:.1f} | "
        + (f"{c.flops / best_mx * 1e9 / peak_flops:.0%} |" if peak_flops else "– |")
    )


def _ns(v: float) -> str:
    return f"{v / 1000:.2f} µs" if v >= 10_000 else f"{v:.1f} ns"


def measure(out: Path, quick: bool = False) -> str:
    """Runs every case; writes `lowprec.md` into `out` and returns it."""
    from bench.blas_peer import cpu_name, load_average
    from bench.machine import peak_gflops

    load = load_average()
    peak = peak_gflops()
    # f32's: the arithmetic of every row runs in f32 (0: no clang-16 to measure it)
    peak_flops = 0.0 if peak is None else peak[0] * 1e9
    rows: list[str] = []
    failures: list[str] = []
    with tempfile.TemporaryDirectory() as name:
        tmp = Path(name)
        for c in cases(quick):
            print(f"low precision: {c.label} ...", flush=True)
            times, failed = measure_case(c, tmp)
            rows.append(_row(c, times, peak_flops))
            failures += failed
    text = "\n".join(
        [
            "### Low-precision products (time per product; thread CPU time, median of 5 reps of ≥ 20 ms)",
            "",
            "mx strict / its peer of the same rounding order (Clang `-ffp-contract=off`, or the per-op"
            " C loop); mx contract / Clang `-ffp-contract=fast` (f16) or the `fmaf` C loop; best mx /"
            f" best peer. % of peak: of the measured f32 FMA peak ({peak_flops / 1e9:.0f} GFLOP/s).",
            "",
            f"CPU: {cpu_name()}; 1-minute load average {load} at the start, "
            f"{load_average()} at the end.",
            "",
            "| kernel | batch | peers | mx | mx contract | mx / same-order peer | mx contract / its peer "
            "| best mx / best peer | best mx GFLOP/s | % of f32 peak |",
            "|---|---|---|---|---|---|---|---|---|---|",
            *rows,
            "",
            *(
                ["Checks failed:", *(f"- {f}" for f in failures)]
                if failures
                else ["Every check passed."]
            ),
        ]
    )
    out.mkdir(parents=True, exist_ok=True)
    (out / "lowprec.md").write_text(text + "\n")
    return text


def main() -> None:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--out", type=Path, default=ROOT / "bench" / "results")
    ap.add_argument("--only", help="run only the cases whose label contains this")
    args = ap.parse_args()
    if args.only:
        with tempfile.TemporaryDirectory() as name:
            for c in cases(args.quick):
                if args.only in c.label:
                    print(c.label, *measure_case(c, Path(name)))
        return
    print(measure(args.out, args.quick))


if __name__ == "__main__":
    main()

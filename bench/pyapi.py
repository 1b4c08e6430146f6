"""The Python API's costs: per-call overhead, zero-copy layouts, batch calls.

usage: python -m bench.pyapi [--quick] [--out DIR]     (also run by bench/run.py)

- Call overhead: a JIT-compiled function of four 4×4 f32 matrices (A·B+C+D), called
  with C-ordered arrays, beside NumPy's own `np.matmul(a, b)` and `a @ b + c + d` on
  4×4. The time per call includes the kernel's few nanoseconds (bench/README.md's
  harness: ~3.5 ns for A·B+C 4×4), so it bounds the Python overhead from above.
- Calling conventions: D = A·B+C on 4×4 f32 with the result returned or written into
  `out=` (C- or F-ordered), with an F-ordered argument, as a batch of one ((1, 4, 4)
  arrays, returned or into `out=`), and with an extra `index` argument given a Python
  int, timed interleaved, each as a ratio to the fastest.
- Zero-copy: a function reading one element of a 1024×1024 f32 matrix, called with a
  C-ordered and an F-ordered array (and, to show that the cost does not grow with the
  matrix, with 4×4 ones); beside it what one copy of the matrix costs.
- Batches: D = A·B+C over 100k 4×4 f32 matrices (all batched, and with B and C
  broadcast), over 2048 (in L2) and over 16 (where a per-call setup would show), through
  the batch call with `out=`; peers: the
  same kernel (the LLVM IR the JIT compiled) looped in C, built with clang-16 -O3
  -march=native (C loop and kernel linked into one module first, so that it can be
  inlined, as in the JIT's loop), and NumPy's batched `matmul` + `add` with `out=`.
  The C loop's results must equal the batch call's bit for bit. The three
  are timed interleaved (rep 1 of each, rep 2 of each, ...), so that a drift
  of the shared machine's speed hits them alike.

Everything is timed in one process whose environment is bench/run.py's NumPy one (one
BLAS thread, OPENBLAS_CORETYPE/OPENBLAS_L2_SIZE cleared), with one mx thread (batches on
several threads: bench/threads.py); times are thread CPU time,
the median of 7 reps (of ≥ 20 ms for calls, ≥ 50 ms for batches).
"""

from __future__ import annotations

import argparse
import ctypes
import json
import statistics
import subprocess
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from bench.timing import time_interleaved, time_per_op

ROOT = Path(__file__).resolve().parent.parent
BATCH = 100_000
IN_CACHE_BATCH = 2048
SMALL_BATCH = 16
BIG = 1024

M4 = "!matrix.matrix<4x4xf32>"
KERNELS = f"""
func.func @abcd(%a: {M4}, %b: {M4}, %c: {M4}, %d: {M4}) -> {M4} {{
  %p = matrix.matmul %a, %b : {M4}, {M4} -> {M4}
  %s = matrix.add %p, %c : {M4}
  %r = matrix.add %s, %d : {M4}
  func.return %r : {M4}
}}

func.func @abc(%a: {M4}, %b: {M4}, %c: {M4}) -> {M4} {{
  %p = matrix.matmul %a, %b : {M4}, {M4} -> {M4}
  %r = matrix.add %p, %c : {M4}
  func.return %r : {M4}
}}

func.func @abc_at(%a: {M4}, %b: {M4}, %c: {M4}, %i: index) -> {M4} {{
  %p = matrix.matmul %a, %b : {M4}, {M4} -> {M4}
  %r = matrix.add %p, %c : {M4}
  func.return %r : {M4}
}}
"""


def _pick(n: int) -> str:
    m = f"!matrix.matrix<{n}x{n}xf32>"
    return f"""func.func @pick(%m: {m}) -> f32 {{
  %e = matrix.extract %m[3, 1] : {m}
  func.return %e : f32
}}"""


C_LOOP = r"""
#include <stdint.h>
/* The JIT's symbol for @abc (mx.jit_compile.DEFINITION_PREFIX). */
void _mx_fn_abc(const float *a, const float *b, const float *c, float *d);
/* D[i] = A[i]·B[i] + C[i]; B and C advance by `step` matrices (0: broadcast). */
void loop(const float *a, const float *b, const float *c, float *d, int64_t n, int64_t step) {
  for (int64_t i = 0; i < n; ++i)
    _mx_fn_abc(a + 16 * i, b + 16 * step * i, c + 16 * step * i, d + 16 * i);
}
"""

Timer = Callable[[Callable[[], object], float], float]


def _timer(reps: int) -> Timer:
    def median_ns(fn: Callable[[], object], min_ms: float) -> float:
        return statistics.median(time_per_op(fn, 1, reps, min_ms))

    return median_ns


def _c_loop(llvm_ir: str, folder: Path) -> ctypes.CDLL:
    """The C loop around the JIT's kernel `abc`, as a shared object."""
    (folder / "loop.c").write_text(C_LOOP)
    # The JIT's LLVM may be newer than clang-16: let clang pick the data layout.
    kernel = "\n".join(
        line for line in llvm_ir.splitlines() if not line.startswith("target ")
    )
    (folder / "kernel.ll").write_text(kernel)
    flags = ["-O3", "-march=native"]
    for cmd in (
        ["clang-16", *flags, "-emit-llvm", "-c", "loop.c", "-o", "loop.bc"],
        ["llvm-link-16", "loop.bc", "kernel.ll", "-o", "linked.bc"],
        ["clang-16", *flags, "-shared", "-fPIC", "linked.bc", "-o", "loop.so"],
    ):
        subprocess.run(cmd, cwd=folder, check=True, capture_output=True)
    lib = ctypes.CDLL(str(folder / "loop.so"))
    p = ctypes.c_void_p
    lib.loop.argtypes = [p, p, p, p, ctypes.c_int64, ctypes.c_int64]
    lib.loop.restype = None
    return lib


def _calls(time_ns: Timer, ms: float) -> dict[str, float]:
    from mx.jit import compile_module

    abcd = compile_module(KERNELS).abcd
    rng = np.random.default_rng(0)
    a, b, c, d = (rng.standard_normal((4, 4)).astype(np.float32) for _ in range(4))
    np.testing.assert_allclose(abcd(a, b, c, d), a @ b + c + d, rtol=1e-5)
    return {
        "mx call": time_ns(lambda: abcd(a, b, c, d), ms),
        "np.matmul": time_ns(lambda: np.matmul(a, b), ms),
        "numpy a@b+c+d": time_ns(lambda: a @ b + c + d, ms),
    }


CONVENTIONS = (
    "returned",
    "out=",
    "out= F-ordered",
    "F-ordered argument",
    "batch of one",
    "batch of one, out=",
    "index from a Python int",
)
"""The calling conventions of D = A·B+C, 4×4 f32 (see `_conventions`)."""


def _conventions(reps: int, ms: float) -> dict[str, float]:
    """D = A·B+C 4×4 f32 called in each convention, timed interleaved: C-ordered
    arguments with the result returned or written into `out=` (C- or
    F-ordered), an F-ordered A, and a batch of one ((1, 4, 4) arguments),
    returned or into `out=`; and with a fourth, `index` argument given a
    Python int. Each call is checked against NumPy first."""
    from mx.jit import compile_module

    module = compile_module(KERNELS)
    abc, abc_at = module.abc, module.abc_at
    rng = np.random.default_rng(3)
    a, b, c = (rng.standard_normal((4, 4)).astype(np.float32) for _ in range(3))
    d, d1 = np.empty((4, 4), np.float32), np.empty((1, 4, 4), np.float32)
    d_f, a_f = np.asfortranarray(d), np.asfortranarray(a)
    a1, b1, c1 = a[None], b[None], c[None]
    calls: dict[str, Callable[[], object]] = {
        "returned": lambda: abc(a, b, c),
        "out=": lambda: abc(a, b, c, out=d),
        "out= F-ordered": lambda: abc(a, b, c, out=d_f),
        "F-ordered argument": lambda: abc(a_f, b, c),
        "batch of one": lambda: abc(a1, b1, c1),
        "batch of one, out=": lambda: abc(a1, b1, c1, out=d1),
        "index from a Python int": lambda: abc_at(a, b, c, 2),
    }
    expected = a.astype(np.float64) @ b + c
    for call in calls.values():  # also compiles the F-ordered variants
        result = np.asarray(call())
        np.testing.assert_allclose(result.reshape(4, 4), expected, rtol=1e-5)
    times = time_interleaved(calls, 1, reps, ms)
    return {f"convention {k}": statistics.median(v) for k, v in times.items()}


def _layouts(time_ns: Timer, ms: float) -> dict[str, float]:
    from mx.jit import compile_module

    rng = np.random.default_rng(1)
    times: dict[str, float] = {}
    for n in (BIG, 4):
        pick = compile_module(_pick(n)).pick
        c_order = rng.standard_normal((n, n)).astype(np.float32)
        f_order = np.asfortranarray(c_order)
        for order, array in (("C", c_order), ("F", f_order)):
            assert pick(array) == c_order[3, 1]  # compiles the F variant
            times[f"{order} {n}"] = time_ns(lambda p=pick, x=array: p(x), ms)
        if n == BIG:
            times["copy"] = time_ns(lambda x=c_order: np.asfortranarray(x), ms)
    return times


def _batches(reps: int, ms: float, folder: Path) -> dict[str, float]:
    from mx.jit import compile_module

    module = compile_module(KERNELS)
    abc = module.abc
    lib = _c_loop(module.llvm_ir, folder)
    rng = np.random.default_rng(2)
    times: dict[str, float] = {}
    for label, n, broadcast in (
        ("100k", BATCH, False),
        ("100k broadcast", BATCH, True),
        ("2048", IN_CACHE_BATCH, False),
        ("16", SMALL_BATCH, False),
    ):
        core = (4, 4) if broadcast else (n, 4, 4)
        a = rng.standard_normal((n, 4, 4)).astype(np.float32)
        b, c = (rng.standard_normal(core).astype(np.float32) for _ in range(2))
        d_mx, d_c, d_np = (np.empty((n, 4, 4), np.float32) for _ in range(3))
        pointers = [x.ctypes.data for x in (a, b, c, d_c)]
        step = 0 if broadcast else 1

        def numpy(a: Any = a, b: Any = b, c: Any = c, d: Any = d_np) -> None:
            np.matmul(a, b, out=d)
            np.add(d, c, out=d)

        abc(a, b, c, out=d_mx)
        lib.loop(*pointers, n, step)
        numpy()
        assert np.array_equal(d_mx, d_c), label  # the same kernel: the same bits
        np.testing.assert_allclose(d_mx, d_np, rtol=1e-4, atol=1e-5)
        per_op = time_interleaved(
            {
                "mx": lambda: abc(a, b, c, out=d_mx),  # noqa: B023
                "C": lambda: lib.loop(*pointers, n, step),  # noqa: B023
                "NumPy": numpy,
            },
            n,
            reps,
            ms,
        )
        for impl, runs in per_op.items():
            times[f"{impl} {label}"] = statistics.median(runs)
    return times


def _measure_here(quick: bool) -> dict[str, float]:
    from threadpoolctl import threadpool_limits  # pyright: ignore[reportMissingImports]

    from mx import num_threads

    reps = 3 if quick else 7
    time_ns = _timer(reps)
    call_ms, batch_ms = (2.0, 5.0) if quick else (20.0, 50.0)
    # One thread for mx too: the times are the calling thread's CPU time,
    # which would miss the work of a batch run on mx's other threads.
    with threadpool_limits(1), num_threads(1), tempfile.TemporaryDirectory() as tmp:
        return {
            **_calls(time_ns, call_ms),
            **_conventions(reps, call_ms),
            **_layouts(time_ns, call_ms),
            **_batches(reps, batch_ms, Path(tmp)),
        }


def _us(ns: float) -> str:
    return f"{ns / 1e3:.2f} µs"


def _report(t: dict[str, float], machine: str) -> str:
    lines = [
        "### Python API (thread CPU time, median of 7 reps)",
        "",
        f"CPU: {machine}.",
        "",
        "| row | mx | peers | bound | met |",
        "|---|---|---|---|---|",
        f"| call overhead, 4 arguments 4×4 f32 (A·B+C+D) | {_us(t['mx call'])} per call "
        "(kernel included) "
        f"| `np.matmul(a, b)` 4×4: {_us(t['np.matmul'])}; `a @ b + c + d`: "
        f"{_us(t['numpy a@b+c+d'])} | ≤ 2 µs | {'yes' if t['mx call'] <= 2000 else 'no'} |",
        f"| zero-copy: one element of a {BIG}×{BIG} f32 matrix | C-ordered "
        f"{_us(t[f'C {BIG}'])}, F-ordered {_us(t[f'F {BIG}'])} (4×4: C "
        f"{_us(t['C 4'])}, F {_us(t['F 4'])}) | one copy of the matrix "
        f"(`np.asfortranarray`): {_us(t['copy'])} | C costs what F costs; "
        f"no growth with size | {_zero_copy_met(t)} |",
    ]
    fastest = min(t[f"convention {k}"] for k in CONVENTIONS)
    ratios = {k: t[f"convention {k}"] / fastest for k in CONVENTIONS}
    lines.append(
        "| calling conventions of A·B+C 4×4 f32 (timed interleaved) | "
        + "; ".join(
            f"{k}: {_us(t[f'convention {k}'])} (**{ratios[k]:.2f}×**)"
            for k in CONVENTIONS
        )
        + " | — | each ≤ 1.15× the fastest | "
        + ("yes" if max(ratios.values()) <= 1.15 else "no")
        + " |"
    )
    for label, what in (
        ("100k", f"{BATCH // 1000}k A·B+C 4×4 f32, all batched"),
        ("100k broadcast", f"{BATCH // 1000}k A·B+C 4×4 f32, B and C broadcast"),
        ("2048", f"{IN_CACHE_BATCH} A·B+C 4×4 f32 (in L2)"),
        ("16", f"{SMALL_BATCH} A·B+C 4×4 f32 (one small call)"),
    ):
        mx, c, numpy = (t[f"{k} {label}"] for k in ("mx", "C", "NumPy"))
        lines.append(
            f"| batch: {what} | {mx:.1f} ns per matrix ({mx * 1e-6 * _count(label):.2f} ms) "
            f"| C loop {c:.1f} ns (mx / C: **{mx / c:.2f}×**); NumPy matmul+add "
            f"{numpy:.1f} ns (NumPy / mx: **{numpy / mx:.1f}×**) "
            f"| ≤ 1.5× C; aim ≥ 10× NumPy | {'yes' if mx <= 1.5 * c else 'no'}; "
            f"{'yes' if numpy >= 10 * mx else 'no'} |"
        )
    return "\n".join(lines)


def _count(label: str) -> int:
    return {"2048": IN_CACHE_BATCH, "16": SMALL_BATCH}.get(label, BATCH)


def _zero_copy_met(t: dict[str, float]) -> str:
    """Within the noise (10 %), or below a microsecond apart."""
    same = abs(t[f"C {BIG}"] - t[f"F {BIG}"]) <= max(
        1000, 0.1 * min(t[f"C {BIG}"], t[f"F {BIG}"])
    )
    flat = all(t[f"{o} {BIG}"] <= 1.1 * t[f"{o} 4"] + 1000 for o in "CF")
    return "yes" if same and flat else "no"


def measure(out: Path, quick: bool = False) -> str:
    """Runs the measurements in a process with one BLAS thread; writes `pyapi.md`
    into `out` and returns it."""
    from bench.machine import cpu_model, load_average, numpy_env

    load = load_average()

    p = subprocess.run(
        [
            sys.executable,
            "-m",
            "bench.pyapi",
            "--json",
            *(["--quick"] if quick else []),
        ],
        capture_output=True,
        text=True,
        env=numpy_env(),
        cwd=ROOT,
    )
    if p.returncode != 0:
        raise RuntimeError(f"bench.pyapi failed:\n{p.stderr[-4000:]}")
    text = _report(
        json.loads(p.stdout),
        f"{cpu_model()}; load average {load} at the start, {load_average()} at the end",
    )
    out.mkdir(parents=True, exist_ok=True)
    (out / "pyapi.md").write_text(text + "\n")
    return text


def main() -> None:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--quick", action="store_true", help="short reps (smoke run)")
    ap.add_argument(
        "--json", action="store_true", help="(internal) measure here, print JSON"
    )
    ap.add_argument("--out", type=Path, default=ROOT / "bench" / "results")
    args = ap.parse_args()
    if args.json:
        json.dump(_measure_here(args.quick), sys.stdout)
        return
    print(measure(args.out, args.quick))


if __name__ == "__main__":
    main()

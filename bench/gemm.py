"""GEMM on 1 and N threads, mx beside NumPy's OpenBLAS, with the fraction of peak.

usage: python -m bench.gemm [--quick] [--reps R] [--threads N] [--fastmath F;F..]
                            [--out FILE]

For f32 and f64, n×n·n×n (C-ordered arrays, `matrix.matmul` through the JIT) with
n = 256, 512, 1024 (and 2048 without --quick), strict (a multiply and an add a step:
the dialect's rounding) and with `fastmath<contract>` (one FMA a step, as OpenBLAS
rounds; on Intel cores, whose 512-bit adds and multiplies share the FMA ports, the
strict product can reach only half its speed): mx on 1 thread and on N (default:
the CPUs available), NumPy `a @ b` with OpenBLAS limited to 1 thread
(threadpoolctl) and with its default threads. The four are measured in
interleaved rounds (mx 1, NumPy 1, mx N, NumPy default, again, ...), each round
timing a run of calls of >= 20 ms after a 0.3 s pause (OpenBLAS's threads spin
for ~0.1-0.2 s after a call and would take a core from mx's threads), and the
table gives the medians: a drift of a shared machine's speed hits all four alike. The 1-thread columns are the calling
thread's CPU time (both run on it), the N-thread ones wall time. Before timing,
mx's result is checked against NumPy's (to rounding) and mx on N threads against
mx on 1 (bit for bit).

The peak: `kernels/peak_fma.c` (independent chains of the widest vectors:
16 of 16 lanes with AVX-512, 12 of 8 with AVX2) built with clang-16
and run on one thread gives the core's f32 multiply-add rate, fused and as a
separate multiply and add (mx's products without `contract`); f64's is half. The
fraction of peak of an N-thread time is against N times the core's. Without
clang the peak is left out.

On a loaded machine the N-thread figures measure the scheduler as much as the
code (a thread waits for a core): the load average is printed before and after.
"""

from __future__ import annotations

import argparse
import os
import statistics
import time
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import numpy as np

import mx
from bench.machine import peak_gflops
from bench.threads import blas_threads, calls_taking, gemm

LEAST_SECONDS = 0.02
"""Each timed run repeats the call for at least this long."""
SETTLE_SECONDS = 0.3
"""The pause before each timed run: OpenBLAS's idle threads keep spinning for
~0.1-0.2 s after a call (its THREAD_TIMEOUT), and mx's second thread started
meanwhile shares a core with one of them (measured on 2 cores: a 1024² f32
GEMM on 2 threads right after NumPy's takes 22 ms, 0.3 s later 11.5 ms)."""


Run = tuple[Callable[[], object], Callable[[], float], Callable[[], Any]]
"""A call, the clock to time it with, and the context to run it in."""


def interleaved(
    runs: Mapping[str, Run],
    rounds: int,
) -> dict[str, float]:
    """Median seconds per call of each run (call, clock, context), the runs
    interleaved round after round."""
    counts: dict[str, int] = {}
    for name, (call, _, context) in runs.items():
        with context():
            counts[name] = calls_taking(call, LEAST_SECONDS)
    times: dict[str, list[float]] = {name: [] for name in runs}
    for _ in range(rounds):
        for name, (call, clock, context) in runs.items():
            time.sleep(SETTLE_SECONDS)
            with context():
                start = clock()
                for _ in range(counts[name]):
                    call()
                times[name].append((clock() - start) / counts[name])
    return {name: statistics.median(ts) for name, ts in times.items()}


def row(
    t: str,
    n: int,
    threads: int,
    rounds: int,
    peak: tuple[float, float] | None,
    fastmath: str = "",
) -> str:
    dtype = np.float32 if t == "f32" else np.float64
    rng = np.random.default_rng(n)
    a, b = (rng.standard_normal((n, n)).astype(dtype) for _ in range(2))
    y, z = np.empty_like(a), np.empty_like(a)
    f = gemm(n, t=t, fastmath=fastmath)
    with mx.num_threads(1):
        one = f(a, b)
    with mx.num_threads(threads):
        assert np.array_equal(f(a, b), one), "threads changed a bit"
    tolerance = 1e-4 if t == "f32" else 1e-12
    assert np.allclose(one, a @ b, rtol=tolerance, atol=tolerance * n)
    runs: dict[str, Run] = {
        "mx 1": (
            lambda: f(a, b, out=y),
            time.thread_time,
            lambda: mx.num_threads(1),
        ),
        "numpy 1": (
            lambda: np.matmul(a, b, out=z),
            time.thread_time,
            lambda: blas_threads(1),
        ),
        "mx N": (
            lambda: f(a, b, out=y),
            time.perf_counter,
            lambda: mx.num_threads(threads),
        ),
        "numpy default": (
            lambda: np.matmul(a, b, out=z),
            time.perf_counter,
            lambda: blas_threads(None),
        ),
    }
    m = interleaved(runs, rounds)
    flops = 2 * n**3
    cells = [f"{t} {n}²" + (f" `{fastmath}`" if fastmath else "")]
    for name in runs:
        cells.append(f"{m[name] * 1e3:.3f}")
    cells += [
        f"{m['numpy 1'] / m['mx 1']:.2f}×",
        f"{m['numpy default'] / m['mx N']:.2f}×",
        f"{m['mx 1'] / m['mx N']:.2f}×",
        f"{m['numpy 1'] / m['numpy default']:.2f}×",
        f"{flops / m['mx N'] / 1e9:.0f}",
    ]
    if peak is not None:
        core = max(peak) / (1 if t == "f32" else 2)
        cells += [
            f"{flops / m['mx 1'] / 1e9 / core:.0%}",
            f"{flops / m['mx N'] / 1e9 / (threads * core):.0%}",
            f"{flops / m['numpy default'] / 1e9 / (threads * core):.0%}",
        ]
    return "| " + " | ".join(cells) + " |"


def _load_average() -> str:
    with open("/proc/loadavg") as f:
        return " ".join(f.read().split()[:3])


def main() -> None:
    parser = argparse.ArgumentParser(
        description="GEMM on 1 and N threads, mx beside NumPy"
    )
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--reps", type=int, default=0, help="rounds (0: 7, 5 quick)")
    parser.add_argument("--threads", type=int, default=len(os.sched_getaffinity(0)))
    parser.add_argument("--types", default="f32,f64")
    parser.add_argument("--sizes", default="", help="e.g. 512,1024")
    parser.add_argument(
        "--fastmath",
        default=";contract",
        help="the matmuls' fastmath flags, one row set each, ';'-separated "
        "(default: strict and `contract`)",
    )
    parser.add_argument("--out")
    args = parser.parse_args()
    rounds = args.reps or (5 if args.quick else 7)
    sizes = [int(s) for s in args.sizes.split(",") if s] or (
        [256, 512, 1024] if args.quick else [256, 512, 1024, 2048]
    )
    n = args.threads
    lines = [f"load average before: {_load_average()}", ""]
    peak = peak_gflops()
    if peak is not None:
        lines += [
            f"peak of one core (bench/kernels/peak_fma.c, f32): {peak[0]:.1f} GFLOP/s "
            f"fused, {peak[1]:.1f} GFLOP/s separate multiply and add; f64 half",
            "",
        ]
    header = [
        "GEMM",
        "mx 1 thr (ms)",
        "NumPy 1 thr (ms)",
        f"mx {n} thr (ms)",
        "NumPy default (ms)",
        "mx vs NumPy, 1 thr",
        f"mx {n} thr vs NumPy default",
        f"mx {n} vs 1",
        "NumPy default vs 1",
        f"mx {n} thr GFLOP/s",
    ]
    if peak is not None:
        header += ["mx 1 thr % peak", f"mx {n} thr % peak", "NumPy default % peak"]
    lines += [
        "| " + " | ".join(header) + " |",
        "|---" * len(header) + "|",
    ]
    print("\n".join(lines), flush=True)
    for t in args.types.split(","):
        for size in sizes:
            for fastmath in args.fastmath.split(";"):
                line = row(t, size, n, rounds, peak, fastmath)
                print(line, flush=True)
                lines.append(line)
    tail = [
        "",
        "ratios: the other's time / mx's (above 1: mx faster); 1-thread times are "
        "thread CPU time, N-thread wall time; medians of interleaved rounds",
        f"load average after: {_load_average()}",
    ]
    print("\n".join(tail))
    if args.out:
        Path(args.out).write_text("\n".join(lines + tail) + "\n")


if __name__ == "__main__":
    main()

"""Threads: mx on 1 and 2 (up to --max-threads) threads, side by side with NumPy's
default multithreaded OpenBLAS and the machine's copy bandwidth.

usage: python -m bench.threads [--quick] [--max-threads N] [--out FILE]

Rows (f32; every result checked against NumPy before it is timed):
- GEMM 1024×1024·1024×1024 (`matrix.matmul`, C-ordered arrays), strict and with
  `contract` (OpenBLAS's FMA rounding): mx per thread count, NumPy `a @ b` with
  OpenBLAS' default threads and with one (threadpoolctl);
- the 512² `contract` GEMM with each call made after 20 ms idle (median of 40 calls a
  thread count): OpenMP's threads are asleep and must be woken, as in a program that
  does other work between its calls;
- cache-resident batch: 5,000 16×16 `a@b+c` (a batched, b and c shared: 10 MB in and out);
- memory-bound batch: 200,000 4×4 `a@b+c` (25.6 MB in and out), against a copy of the
  same bytes by 1 and N threads (`np.copyto` on N slices in a thread pool);
- MXFP4 decode matvec 4096×4096 row-major W with cold weights (copies of W used in
  turn, at least 8 and 3× the L3: never in L3), against the copy bandwidth;
- thresholds: 4×4 `a@b+c` batches of 256 .. 65536 calls forced onto threads, and f32
  n×n GEMMs forced onto threads (`parallel-min-work=1`), 1 vs 2 threads: where 2
  threads start to win is where `BATCH_PARALLEL_MIN_BYTES` and `parallel-min-work`
  are set;
- one 4×4 `a@b+c` call (the fast entry; the threads must cost it nothing);
- single-thread GEMM 1024² (f32, f64, C-ordered), thread CPU time: mx blocked for
  the host's caches (what the JIT does), mx blocked for mx-opt's default caches, and
  NumPy's OpenBLAS limited to one thread (threadpoolctl), in interleaved rounds.

The sweeps end with the thresholds they measure: the smallest batch (bytes) and
product (multiply-adds) at which 2 threads beat 1 by at least `WIN`, and at the
next size swept too (`crossover`).

Times are wall-clock (threads run in parallel: CPU time would add them up), the best
of `reps` runs, each run repeating the call for >= 20 ms; single-thread comparisons
use the calling thread's CPU time (less disturbed by other processes). The machine's load average
is printed: on a loaded machine the second thread waits for a core and the ratios
say little.
"""

from __future__ import annotations

import argparse
import os
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from contextlib import AbstractContextManager
from itertools import pairwise
from typing import Any

import numpy as np

import mx
from bench.decode import cold_copies
from bench.mx_formats import BLOCK, Case, dequantized, operands
from bench.mx_formats import _module as decode_module  # pyright: ignore[reportPrivateUsage]
from mx.jit import compile_module
from mx.lowering.matrix_to_affine.caches import DEFAULT_CACHES, host_caches
from mx.lowering.matrix_to_affine.convert_matrix_to_affine import (
    ConvertMatrixToAffinePass,
)
from mx.passes.mx_lower_to_llvm import PIPELINE
from mx.runtime import threads

Array = np.ndarray[Any, Any]


def blas_threads(limit: int | None) -> AbstractContextManager[object]:
    """A `with` block in which NumPy's BLAS runs on `limit` threads (None: its
    default). threadpoolctl is in the optional `bench` extra, not in CI's `test`."""
    from threadpoolctl import (  # pyright: ignore[reportMissingImports]
        threadpool_limits,  # pyright: ignore[reportUnknownVariableType]
    )

    return threadpool_limits(limit)


def calls_taking(call: Callable[[], object], least: float) -> int:
    """How many calls (a power of two) take at least `least` seconds (wall),
    after one call to warm up."""
    call()
    count = 1
    while True:
        start = time.perf_counter()
        for _ in range(count):
            call()
        if time.perf_counter() - start >= least:
            return count
        count *= 2


def best_seconds(
    call: Callable[[], object], reps: int = 7, least: float = 0.02
) -> float:
    """Best wall time of one call over `reps` runs of >= `least` seconds each."""
    count = calls_taking(call, least)
    best = float("inf")
    for _ in range(reps):
        start = time.perf_counter()
        for _ in range(count):
            call()
        best = min(best, (time.perf_counter() - start) / count)
    return best


def best_cpu_seconds(
    call: Callable[[], object], reps: int = 5, count: int = 3
) -> float:
    """Best CPU time of the calling thread for one call, over `reps` runs of
    `count` calls (a single-threaded call: other processes' load shows less
    in it than in wall time)."""
    call()
    best = float("inf")
    for _ in range(reps):
        start = time.thread_time()
        for _ in range(count):
            call()
        best = min(best, (time.thread_time() - start) / count)
    return best


WIN = 1.1
"""How much faster 2 threads must be than 1 for the thresholds (`crossover`)."""


def crossover(ratios: list[tuple[int, float]]) -> int | None:
    """The smallest size (of those swept, in increasing order) at which the
    threads are at least `WIN` times faster and still are at the next size
    (two in a row: one size alone is too often noise); None if none is."""
    for (size, ratio), (_, following) in pairwise(ratios):
        if ratio >= WIN and following >= WIN:
            return size
    return None


def per_threads(
    call: Callable[[], object], counts: list[int], reps: int
) -> dict[int, float]:
    """Best time of `call` with each thread count, the counts interleaved."""
    best = {n: float("inf") for n in counts}
    for _ in range(reps):
        for n in counts:
            with mx.num_threads(n):
                best[n] = min(best[n], best_seconds(call, reps=1))
    return best


PAUSE_SECONDS = 0.02
"""The idle spell before each call of the `after_pauses` row."""


def after_pauses(
    call: Callable[[], object], counts: list[int], calls: int
) -> dict[int, float]:
    """Median time of `call` with each thread count, each call made after
    `PAUSE_SECONDS` idle (OpenMP's threads asleep: what a program that does
    other things between its calls meets), the counts interleaved."""
    times: dict[int, list[float]] = {n: [] for n in counts}
    for _ in range(calls):
        for n in counts:
            with mx.num_threads(n):
                time.sleep(PAUSE_SECONDS)
                start = time.perf_counter()
                call()
                times[n].append(time.perf_counter() - start)
    return {n: float(np.median(t)) for n, t in times.items()}


def affine(size: int, pipeline: str = "mx-lower-to-llvm") -> Any:
    m = f"!matrix.matrix<{size}x{size}xf32>"
    return compile_module(
        f"""
func.func @f(%a: {m}, %b: {m}, %c: {m}) -> {m} {{
  %p = matrix.matmul %a, %b : {m}, {m} -> {m}
  %r = matrix.add %p, %c : {m}
  func.return %r : {m}
}}""",
        pipeline,
    ).f


def gemm(
    n: int, pipeline: str = "mx-lower-to-llvm", t: str = "f32", fastmath: str = ""
) -> Any:
    m = f"!matrix.matrix<{n}x{n}x{t}>"
    flags = f" fastmath<{fastmath}>" if fastmath else ""
    return compile_module(
        f"""
func.func @f(%a: {m}, %b: {m}) -> {m} {{
  %p = matrix.matmul %a, %b{flags} : {m}, {m} -> {m}
  func.return %p : {m}
}}""",
        pipeline,
    ).f


def with_options(options: str) -> str:
    """mx-lower-to-llvm's steps with `options` for convert-matrix-to-affine."""
    return ",".join(
        f"convert-matrix-to-affine{{{options}}}"
        if p == "convert-matrix-to-affine"
        else p
        for p in PIPELINE
    )


def forced_pipeline() -> str:
    """mx-lower-to-llvm's steps with every product on threads."""
    return with_options("parallel-min-work=1")


MX_OPT_CACHES = with_options(
    f"l1-bytes={DEFAULT_CACHES.l1_bytes} l2-bytes={DEFAULT_CACHES.l2_bytes} "
    f"l3-bytes={DEFAULT_CACHES.l3_bytes}"
)
"""The JIT's pipeline, blocked for mx-opt's default caches instead of the host's."""


def _single_thread_row(
    t: str, dtype: Any, n: int, reps: int, rng: np.random.Generator
) -> str:
    a, b = (rng.standard_normal((n, n)).astype(dtype) for _ in range(2))
    y = np.empty_like(a)
    host, default = gemm(n, t=t), gemm(n, MX_OPT_CACHES, t)
    assert np.allclose(host(a, b), a @ b, rtol=1e-3, atol=1e-3 * n)
    assert np.array_equal(host(a, b), default(a, b))  # blocking changes no bit
    calls: dict[str, Callable[[], object]] = {
        "host": lambda: host(a, b, out=y),
        "default": lambda: default(a, b, out=y),
        "openblas": lambda: np.matmul(a, b, out=y),
    }
    best = dict.fromkeys(calls, float("inf"))
    with mx.num_threads(1), blas_threads(1):
        for _ in range(reps):
            for name, call in calls.items():
                best[name] = min(best[name], best_cpu_seconds(call, reps=1))
    return (
        f"| {t} | {best['host'] * 1e3:.2f} | {best['default'] * 1e3:.2f} "
        f"| {best['openblas'] * 1e3:.2f} | {best['host'] / best['openblas']:.2f}× |"
    )


def single_thread_gemm(quick: bool, reps: int) -> list[str]:
    """mx on one thread (host caches, mx-opt's caches) against OpenBLAS on
    one thread: thread CPU time, interleaved rounds, C-ordered f32 and f64."""
    n = 512 if quick else 1024
    rng = np.random.default_rng(1)
    c = host_caches()
    caches = f"{c.l1_bytes >> 10}/{c.l2_bytes >> 10}/{c.l3_bytes >> 10} KiB"
    out = [
        f"| GEMM {n}², 1 thread | mx, host caches {caches} (ms) "
        "| mx, mx-opt's caches (ms) | OpenBLAS (ms) | mx / OpenBLAS time |",
        "|---|---|---|---|---|",
    ]
    for t, dtype in (("f32", np.float32), ("f64", np.float64)):
        out.append(_single_thread_row(t, dtype, n, reps, rng))
    return out


def copy_seconds(nbytes: int, workers: int, reps: int) -> float:
    """Best time to copy `nbytes` with `workers` threads (a slice each)."""
    src = np.ones(nbytes, np.uint8)
    dst = np.empty_like(src)
    bounds = np.linspace(0, nbytes, workers + 1).astype(int)
    pool = ThreadPoolExecutor(workers)

    def part(i: int) -> None:
        np.copyto(dst[bounds[i] : bounds[i + 1]], src[bounds[i] : bounds[i + 1]])

    def copy() -> None:
        list(pool.map(part, range(workers)))

    seconds = best_seconds(copy, reps)
    pool.shutdown()
    return seconds


def rows(quick: bool, counts: list[int], reps: int, thresholds: list[str]) -> list[str]:
    """The table's rows; the measured thresholds are appended to `thresholds`."""
    out: list[str] = []
    rng = np.random.default_rng(0)

    def line(label: str, times: dict[int, float], extra: str = "") -> None:
        cells = " | ".join(f"{times[n] * 1e3:.3f}" for n in counts)
        ratio = " | ".join(f"{times[counts[0]] / times[n]:.2f}×" for n in counts[1:])
        out.append(f"| {label} | {cells} | {ratio} | {extra} |")

    header = " | ".join(f"{n} thread{'s' if n > 1 else ''} (ms)" for n in counts)
    speedups = " | ".join(f"{n} vs {counts[0]}" for n in counts[1:])
    out.append(f"| work | {header} | {speedups} | peers |")
    out.append("|---" * (2 + 2 * len(counts) - 1) + "|---|")

    # GEMM: strict (a multiply and an add a step) and with `contract` (one FMA,
    # OpenBLAS's rounding); NumPy timed once, after mx's runs (OpenBLAS's
    # threads spin on after a call and would slow mx's)
    n = 512 if quick else 1024
    a, b = (rng.standard_normal((n, n)).astype(np.float32) for _ in range(2))
    gemm_times: dict[str, dict[int, float]] = {}
    for fastmath in ("", "contract"):
        f = gemm(n, fastmath=fastmath)
        assert np.allclose(f(a, b), a @ b, rtol=1e-3, atol=1e-3 * n)
        gemm_times[fastmath] = per_threads(lambda f=f: f(a, b), counts, reps)
    numpy_default = best_seconds(lambda: a @ b, reps)
    numpy_one = "n/a (no threadpoolctl)"
    try:
        with blas_threads(1):
            numpy_one = f"{best_seconds(lambda: a @ b, reps) * 1e3:.3f} ms"
    except ImportError:
        pass
    flops = 2 * n**3
    for fastmath, times in gemm_times.items():
        rate = flops / times[counts[-1]] / 1e9
        flags = f" `{fastmath}`" if fastmath else ""
        line(
            f"f32 GEMM {n}²{flags} ({rate:.0f} GFLOP/s on {counts[-1]})",
            times,
            f"NumPy default threads {numpy_default * 1e3:.3f} ms, 1 thread {numpy_one}; "
            f"mx {counts[-1]} threads / NumPy default: "
            f"{numpy_default / times[counts[-1]]:.2f}×",
        )

    # A product after an idle spell: the threads are woken, not spinning
    half = n // 2
    f = gemm(half, fastmath="contract")
    a2, b2 = a[:half, :half].copy(), b[:half, :half].copy()
    out2 = np.empty_like(a2)
    times = after_pauses(lambda: f(a2, b2, out=out2), counts, 10 if quick else 40)
    line(
        f"f32 GEMM {half}² `contract`, each call after "
        f"{PAUSE_SECONDS * 1e3:.0f} ms idle (median)",
        times,
    )

    # Cache-resident batch
    f16 = affine(16)
    count = 5000
    a = rng.standard_normal((count, 16, 16)).astype(np.float32)
    b, c = (rng.standard_normal((16, 16)).astype(np.float32) for _ in range(2))
    y = np.empty_like(a)
    assert np.allclose(f16(a, b, c), a @ b + c, rtol=1e-4, atol=1e-4)
    times = per_threads(lambda: f16(a, b, c, out=y), counts, reps)
    line(f"{count} × 16×16 a@b+c (batch, 10 MB)", times)

    # Memory-bound batch
    f4 = affine(4)
    count = 50_000 if quick else 200_000
    a = rng.standard_normal((count, 4, 4)).astype(np.float32)
    b, c = (rng.standard_normal((4, 4)).astype(np.float32) for _ in range(2))
    y = np.empty_like(a)
    assert np.allclose(f4(a, b, c), a @ b + c, rtol=1e-4, atol=1e-4)
    times = per_threads(lambda: f4(a, b, c, out=y), counts, reps)
    moved = a.nbytes + y.nbytes
    copies = {w: copy_seconds(a.nbytes, w, reps) for w in counts}
    line(
        f"{count} × 4×4 a@b+c ({moved / 1e6:.1f} MB in+out)",
        times,
        "copy of the same bytes: "
        + ", ".join(
            f"{w} thr {2 * a.nbytes / s / 1e9:.1f} GB/s" for w, s in copies.items()
        )
        + "; mx: "
        + ", ".join(f"{w} thr {moved / times[w] / 1e9:.1f} GB/s" for w in counts),
    )

    # Decode matvec, cold weights
    case = Case(1024 if quick else 4096, 4096, "row_major", "f4e2m1fn")
    mv = compile_module(decode_module(case, contract=False)).f
    weights, scales, x = operands(case)
    copies = 2 if quick else max(8, cold_copies(weights.nbytes))
    copies_w = [weights.copy() for _ in range(copies)]
    yv = np.zeros(case.rows, np.float32)
    want = dequantized(case, weights, scales) @ x
    mv(weights, scales, x, yv)
    assert np.allclose(yv, want, rtol=1e-3, atol=1e-3 * np.abs(want).max())
    turn = [0]

    def cold() -> None:
        turn[0] = (turn[0] + 1) % len(copies_w)
        mv(copies_w[turn[0]], scales, x, yv)

    times = per_threads(cold, counts, reps)
    nbytes = case.weight_bytes
    line(
        f"MXFP4 matvec {case.rows}×{case.depth} row-major, cold W ({nbytes / 1e6:.1f} MB)",
        times,
        "mx: "
        + ", ".join(f"{w} thr {nbytes / times[w] / 1e9:.1f} GB/s" for w in counts)
        + f" (W in {BLOCK}-element MXFP4 blocks)",
    )

    # Thresholds
    forced = forced_pipeline()
    saved = threads.BATCH_PARALLEL_MIN_BYTES
    threads.BATCH_PARALLEL_MIN_BYTES = (
        1  # compile a 4x4 kernel whose batches always split
    )
    try:
        tiny = affine(4, forced)
    finally:
        threads.BATCH_PARALLEL_MIN_BYTES = saved
    batch_ratios: list[tuple[int, float]] = []
    for count in (256, 1024, 2048, 4096, 8192, 16384, 65536):
        a = rng.standard_normal((count, 4, 4)).astype(np.float32)
        y = np.empty_like(a)
        times = per_threads(lambda a=a, y=y: tiny(a, b, c, out=y), counts, reps)
        line(f"threshold: {count} × 4×4 a@b+c forced onto threads", times)
        # Bytes as BATCH_PARALLEL_MIN_BYTES counts them: every operand of each call.
        per_call = a[0].nbytes + b.nbytes + c.nbytes + y[0].nbytes
        batch_ratios.append((count * per_call, times[1] / times[counts[-1]]))
    product_ratios: list[tuple[int, float]] = []
    for size in (48, 64, 96, 128, 192, 256):
        f = gemm(size, forced)
        a, b2 = (rng.standard_normal((size, size)).astype(np.float32) for _ in range(2))
        times = per_threads(lambda f=f, a=a, b2=b2: f(a, b2), counts, reps)
        line(
            f"threshold: f32 GEMM {size}² ({size**3} multiply-adds) forced onto threads",
            times,
        )
        product_ratios.append((size**3, times[1] / times[counts[-1]]))
    if len(counts) > 1:
        batch_bytes, work = crossover(batch_ratios), crossover(product_ratios)
        thresholds.append(
            f"measured thresholds ({counts[-1]} threads at least {WIN}× faster than 1 "
            f"there and at the next size): batches from {batch_bytes} bytes "
            f"(BATCH_PARALLEL_MIN_BYTES = {threads.BATCH_PARALLEL_MIN_BYTES}), "
            f"products from {work} multiply-adds (parallel-min-work = 2^"
            f"{ConvertMatrixToAffinePass.parallel_min_work.bit_length() - 1})"
        )

    # One small call
    a, b, c = (rng.standard_normal((4, 4)).astype(np.float32) for _ in range(3))
    times = per_threads(lambda: f4(a, b, c), counts, reps)
    calls = ", ".join(f"{n} thr {times[n] * 1e6:.2f} µs" for n in counts)
    line("one 4×4 a@b+c call (the fast entry)", times, calls)
    return out


def _load_average() -> list[str]:
    with open("/proc/loadavg") as f:
        return f.read().split()[:3]


def main() -> None:
    parser = argparse.ArgumentParser(description="mx on 1..N threads")
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--max-threads", type=int, default=len(os.sched_getaffinity(0)))
    parser.add_argument("--reps", type=int, default=5)
    parser.add_argument("--out")
    args = parser.parse_args()
    counts = sorted({1, *range(2, args.max_threads + 1)})
    load = _load_average()
    thresholds: list[str] = []
    table = rows(args.quick, counts, args.reps, thresholds)
    middle = _load_average()
    lines = [
        f"CPUs available: {len(os.sched_getaffinity(0))}; load average before: {' '.join(load)}",
        "",
        *table,
        "",
        *thresholds,
        "",
        f"load average: {' '.join(middle)}",
        "",
        *single_thread_gemm(args.quick, args.reps),
        "",
        f"load average after: {' '.join(_load_average())}",
    ]
    text = "\n".join(lines) + "\n"
    print(text, end="")
    if args.out:
        with open(args.out, "w") as f:
            f.write(text)


if __name__ == "__main__":
    main()

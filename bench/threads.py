"""Threads: mx on 1 and 2 (up to --max-threads) threads, side by side with NumPy's
default multithreaded OpenBLAS and the machine's copy bandwidth.

usage: python -m bench.threads [--quick] [--max-threads N] [--out FILE]

Rows (f32; every result checked against NumPy before it is timed):
- GEMM 1024×1024·1024×1024 (`matrix.matmul`, C-ordered arrays): mx per thread count,
  NumPy `a @ b` with OpenBLAS' default threads and with one (threadpoolctl);
- cache-resident batch: 5,000 16×16 `a@b+c` (a batched, b and c shared: 10 MB in and out);
- memory-bound batch: 200,000 4×4 `a@b+c` (25.6 MB in and out), against a copy of the
  same bytes by 1 and N threads (`np.copyto` on N slices in a thread pool);
- MXFP4 decode matvec 4096×4096 row-major W with cold weights (8 copies of W, 68 MB,
  used in turn: never in L3), against the copy bandwidth;
- thresholds: 4×4 `a@b+c` batches of 256 .. 65536 calls forced onto threads, and f32
  n×n GEMMs forced onto threads (`parallel-min-work=1`), 1 vs 2 threads: where 2
  threads start to win is where `BATCH_PARALLEL_MIN_BYTES` and `parallel-min-work`
  are set;
- one 4×4 `a@b+c` call (the fast entry; the threads must cost it nothing).

Times are wall-clock (threads run in parallel: CPU time would add them up), the best
of `reps` runs, each run repeating the call for >= 20 ms. The machine's load average
is printed: on a loaded machine the second thread waits for a core and the ratios
say little.
"""

from __future__ import annotations

import argparse
import os
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import numpy as np

import mx
from bench.mx_formats import BLOCK, Case, dequantized, operands
from bench.mx_formats import _module as decode_module  # pyright: ignore[reportPrivateUsage]
from mx.jit import compile_module
from mx.passes.mx_lower_to_llvm import PIPELINE
from mx.runtime import threads

Array = np.ndarray[Any, Any]


def best_seconds(
    call: Callable[[], object], reps: int = 7, least: float = 0.02
) -> float:
    """Best wall time of one call over `reps` runs of >= `least` seconds each."""
    call()
    count = 1
    while True:
        start = time.perf_counter()
        for _ in range(count):
            call()
        if time.perf_counter() - start >= least:
            break
        count *= 2
    best = float("inf")
    for _ in range(reps):
        start = time.perf_counter()
        for _ in range(count):
            call()
        best = min(best, (time.perf_counter() - start) / count)
    return best


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


def gemm(n: int, pipeline: str = "mx-lower-to-llvm") -> Any:
    m = f"!matrix.matrix<{n}x{n}xf32>"
    return compile_module(
        f"""
func.func @f(%a: {m}, %b: {m}) -> {m} {{
  %p = matrix.matmul %a, %b : {m}, {m} -> {m}
  func.return %p : {m}
}}""",
        pipeline,
    ).f


def forced_pipeline() -> str:
    """mx-lower-to-llvm's steps with every product on threads."""
    return ",".join(
        "convert-matrix-to-affine{parallel-min-work=1}"
        if p == "convert-matrix-to-affine"
        else p
        for p in PIPELINE
    )


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


def rows(quick: bool, counts: list[int], reps: int) -> list[str]:
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

    # GEMM
    n = 512 if quick else 1024
    f = gemm(n)
    a, b = (rng.standard_normal((n, n)).astype(np.float32) for _ in range(2))
    assert np.allclose(f(a, b), a @ b, rtol=1e-3, atol=1e-3 * n)
    times = per_threads(lambda: f(a, b), counts, reps)
    numpy_default = best_seconds(lambda: a @ b, reps)
    numpy_one = "n/a (no threadpoolctl)"
    try:
        from threadpoolctl import (  # pyright: ignore[reportMissingImports]
            threadpool_limits,  # pyright: ignore[reportUnknownVariableType]
        )

        with threadpool_limits(1):
            numpy_one = f"{best_seconds(lambda: a @ b, reps) * 1e3:.3f} ms"
    except ImportError:
        pass
    flops = 2 * n**3
    line(
        f"f32 GEMM {n}² ({flops / times[counts[-1]] / 1e9:.0f} GFLOP/s on {counts[-1]})",
        times,
        f"NumPy default threads {numpy_default * 1e3:.3f} ms, 1 thread {numpy_one}; "
        f"mx {counts[-1]} threads / NumPy default: {numpy_default / times[counts[-1]]:.2f}×",
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
    copies_w = [weights.copy() for _ in range(2 if quick else 8)]
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
    for count in (256, 1024, 2048, 4096, 8192, 16384, 65536):
        a = rng.standard_normal((count, 4, 4)).astype(np.float32)
        y = np.empty_like(a)
        times = per_threads(lambda a=a, y=y: tiny(a, b, c, out=y), counts, reps)
        line(f"threshold: {count} × 4×4 a@b+c forced onto threads", times)
    for size in (48, 64, 96, 128, 192, 256):
        f = gemm(size, forced)
        a, b2 = (rng.standard_normal((size, size)).astype(np.float32) for _ in range(2))
        times = per_threads(lambda f=f, a=a, b2=b2: f(a, b2), counts, reps)
        line(
            f"threshold: f32 GEMM {size}² ({size**3} multiply-adds) forced onto threads",
            times,
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
    lines = [
        f"CPUs available: {len(os.sched_getaffinity(0))}; load average before: {' '.join(load)}",
        "",
        *rows(args.quick, counts, args.reps),
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

"""Per-op timing of a Python callable, shared by the NumPy peers and the JIT column.

The clock is the calling thread's CPU time, so mx's calls run on that thread
alone (`mx.num_threads(1)`): a product mx splits over threads would count only
the calling thread's share (bench/run.py's large products on 2 cores read up to
1.7x the core's peak before). Multithreaded runs take wall time
(bench/threads.py, bench/gemm.py). mx is not imported here: the NumPy peers'
processes time without it (and without its OpenMP runtime)."""

import sys
import time
from collections.abc import Callable
from contextlib import AbstractContextManager, nullcontext


def _iterations(fn: Callable[[], object], min_ms: float) -> int:
    """How many calls of `fn` take at least `min_ms` of thread CPU time."""
    iters = 1
    while True:
        t0 = time.thread_time_ns()
        for _ in range(iters):
            fn()
        t = time.thread_time_ns() - t0
        if t >= min_ms * 1e6:
            return iters
        iters = int(iters * min(2 * min_ms * 1e6 / max(t, 1), 1000)) + 1


def _one_thread() -> AbstractContextManager[object]:
    """mx's calls on the calling thread alone, where mx is loaded (the callables
    timed were compiled before: mx is imported by then if they are mx's)."""
    mx = sys.modules.get("mx")
    return nullcontext() if mx is None else mx.num_threads(1)


def time_per_op(
    fn: Callable[[], object], ops: int, reps: int, min_ms: float
) -> list[float]:
    """Per-op thread CPU time (ns) of `reps` reps, each repeating `fn` for at least `min_ms`."""
    return time_interleaved({"": fn}, ops, reps, min_ms)[""]


def time_interleaved(
    fns: dict[str, Callable[[], object]], ops: int, reps: int, min_ms: float
) -> dict[str, list[float]]:
    """`time_per_op` of several callables, their reps interleaved in turns
    that each start one callable later (a, b, c, b, c, a, c, a, b, ...) so
    that a drift of the shared machine's speed, and whatever a turn's first
    rep pays, hit them alike."""
    names = list(fns)
    with _one_thread():
        iters = {name: _iterations(fn, min_ms) for name, fn in fns.items()}
        out: dict[str, list[float]] = {name: [] for name in fns}
        for rep in range(reps):
            start = rep % len(names)
            for name in names[start:] + names[:start]:
                fn = fns[name]
                t0 = time.thread_time_ns()
                for _ in range(iters[name]):
                    fn()
                out[name].append((time.thread_time_ns() - t0) / (iters[name] * ops))
    return out

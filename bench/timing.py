"""Per-op timing of a Python callable, shared by the NumPy peers and the JIT column."""

import time
from collections.abc import Callable


def time_per_op(
    fn: Callable[[], object], ops: int, reps: int, min_ms: float
) -> list[float]:
    """Per-op thread CPU time (ns) of `reps` reps, each repeating `fn` for at least `min_ms`."""
    iters = 1
    while True:
        t0 = time.thread_time_ns()
        for _ in range(iters):
            fn()
        t = time.thread_time_ns() - t0
        if t >= min_ms * 1e6:
            break
        iters = int(iters * min(2 * min_ms * 1e6 / max(t, 1), 1000)) + 1
    out: list[float] = []
    for _ in range(reps):
        t0 = time.thread_time_ns()
        for _ in range(iters):
            fn()
        out.append((time.thread_time_ns() - t0) / (iters * ops))
    return out

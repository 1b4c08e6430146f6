"""The tracing front end's costs: a cached call of an `@mx.function` beside
the `mx.jit` function of the same module, and the time to trace a function.

usage: python -m bench.tracing [--quick] [--out DIR]

- Cached call: `f(a, b, c, d)` = A·B+C+D over four C-ordered 4×4 f32 arrays,
  traced and compiled by its first call; then timed interleaved with the
  `mx.jit` function compiled from the very text the trace produced (so both
  run the same machine code) and NumPy's `a @ b + c + d`.
- MXFP4 decode step: `mx.dequantize_mx(wq, s, "f4e2m1fn", block=32) @ x` with
  4096×4096 weights quantized by `mx.quantize_mx` (packed, 8 MB), beside NumPy's
  `w @ x` on the same weights decoded to float32 (64 MB: sgemv, one BLAS thread
  when run with OPENBLAS_NUM_THREADS=1 as bench/run.py does).
- Tracing: a 20-op function (matmuls, elementwise ops with scalars, a
  transpose, an fma, a conversion) traced into a module, without compiling:
  a new `mx.function` each time, so nothing is cached.

Thread CPU time, median of 7 reps (≥ 20 ms each for calls, ≥ 200 ms for tracing).
"""

from __future__ import annotations

import argparse
import statistics
from pathlib import Path
from typing import Any

import numpy as np

import mx
from bench.timing import time_interleaved, time_per_op
from mx.jit import jit

ROOT = Path(__file__).resolve().parent.parent


def abcd(a: Any, b: Any, c: Any, d: Any) -> Any:
    return a @ b + c + d


def twenty_ops(a: Any, b: Any, c: Any) -> Any:
    x = a @ b + c  # 2
    y = x * 0.5 - a.T  # 5 (the 0.5: constant and splat)
    z = mx.fma(y, b, c) / 3.0  # 8
    w = (z @ x - y) * 2  # 13
    h = w.astype(np.float16).astype(np.float32)  # 15
    return -h + x @ a + 1  # 20 (with the last constant and splat)


def decode_step(wq: Any, s: Any, x: Any) -> Any:
    return mx.dequantize_mx(wq, s, "f4e2m1fn", block=32) @ x


def run(quick: bool) -> list[str]:
    reps = 3 if quick else 7
    rng = np.random.default_rng(0)
    a, b, c, d = (rng.standard_normal((4, 4)).astype(np.float32) for _ in range(4))
    traced = mx.function(abcd)
    traced(a, b, c, d)
    same = jit(traced.mlir(a, b, c, d), "abcd")
    calls = time_interleaved(
        {
            "traced": lambda: traced(a, b, c, d),
            "jit": lambda: same(a, b, c, d),
            "numpy": lambda: a @ b + c + d,
        },
        1,
        reps,
        20,
    )
    w = rng.standard_normal((4096, 4096)).astype(np.float32)
    wq, s = mx.quantize_mx(w, "f4e2m1fn", block=32)
    decoded = mx.dequantize_mx(wq, s, "f4e2m1fn", block=32)
    x = rng.standard_normal(4096).astype(np.float32)
    step = mx.function(decode_step)
    assert np.allclose(step(wq, s, x), decoded @ x, rtol=1e-3, atol=1e-3)
    decode = time_interleaved(
        {"mx": lambda: step(wq, s, x), "numpy": lambda: decoded @ x}, 1, reps, 50
    )
    ops = mx.function(twenty_ops).mlir(a, b, c).count(" = ")
    trace = time_per_op(lambda: mx.function(twenty_ops).mlir(a, b, c), 1, reps, 200)

    def row(name: str, times: list[float], unit: float, suffix: str) -> str:
        return f"| {name} | {statistics.median(times) / unit:.2f} {suffix} (range {min(times) / unit:.2f}–{max(times) / unit:.2f}) |"

    return [
        "| what | median of thread CPU time |",
        "|---|---|",
        row("cached call of the traced A·B+C+D, 4×4 f32", calls["traced"], 1e3, "µs"),
        row("the mx.jit function of the same text", calls["jit"], 1e3, "µs"),
        row("NumPy `a @ b + c + d`", calls["numpy"], 1e3, "µs"),
        row("MXFP4 decode step 4096×4096 (packed weights)", decode["mx"], 1e6, "ms"),
        row("NumPy sgemv on the decoded f32 weights", decode["numpy"], 1e6, "ms"),
        row(f"tracing a function of {ops} ops (no compilation)", trace, 1e6, "ms"),
    ]


def main() -> None:
    parser = argparse.ArgumentParser(description="The tracing front end's costs.")
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--out", type=Path, default=ROOT / "bench" / "results")
    args = parser.parse_args()
    lines = run(args.quick)
    print("\n".join(lines))
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "tracing.md").write_text("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()

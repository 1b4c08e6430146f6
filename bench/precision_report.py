"""Time `f.precision_report` on an MXFP4-weight 4096×4096 matvec (the size of
an LLM layer): f32 weights quantized to MXFP4 (f4e2m1fn, block 32), decoded
and multiplied by a vector (docs/precision-report.md). Run with:

    python bench/precision_report.py [--size 4096] [--runs 3]

Prints the wall and process CPU time (all threads) of the function's own
call, of the first report (which compiles the row kernels of the two
conversions and of the other scale rule) and the median of the following ones, with
the load average: on a shared machine, wall time includes waiting for a core.
"""

import argparse
import os
import statistics
import time
from collections.abc import Callable
from typing import Any

import numpy as np

from mx.jit import compile_module


def kernel(n: int) -> str:
    w, q, s = (
        f"!matrix.matrix<{n}x{n}xf32>",
        f"!matrix.matrix<{n}x{n}xi4>",
        f"!matrix.matrix<{n}x{n // 32}xi8>",
    )
    return f"""
func.func @mxfp4_matvec(%w: {w}, %x: vector<{n}xf32>) -> vector<{n}xf32> {{
  %q, %s = arbfp.scaled_convert_to f4e2m1fn %w block 32 : {w} to {q}, {s}
  %d = arbfp.scaled_convert_from f4e2m1fn %q, %s block 32 : {q}, {s} to {w}
  %y = matrix.matvec %d, %x : {w}, vector<{n}xf32> -> vector<{n}xf32>
  func.return %y : vector<{n}xf32>
}}
"""


def timed(run: Callable[[], Any]) -> tuple[float, float]:
    """(wall seconds, process CPU seconds) of one call."""
    wall, cpu = time.perf_counter(), time.process_time()
    run()
    return time.perf_counter() - wall, time.process_time() - cpu


def main() -> None:
    parser = argparse.ArgumentParser(description="time f.precision_report")
    parser.add_argument("--size", type=int, default=4096)
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    n = args.size
    rng = np.random.default_rng(0)
    w = rng.standard_normal((n, n)).astype(np.float32)
    x = rng.standard_normal(n).astype(np.float32)
    wall, cpu = timed(lambda: compile_module(kernel(n)))
    f = compile_module(kernel(n))["mxfp4_matvec"]
    print(
        f"MXFP4 matvec {n}x{n}; load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs"
    )
    print(f"  compile the function:       wall {wall:6.2f} s, CPU {cpu:6.2f} s")
    call = [timed(lambda: f(w, x)) for _ in range(args.runs)]
    print(
        f"  call (median):              wall {statistics.median(c[0] for c in call):6.2f} s, "
        f"CPU {statistics.median(c[1] for c in call):6.2f} s"
    )
    wall, cpu = timed(lambda: f.precision_report(w, x))
    print(f"  first report (compiles):    wall {wall:6.2f} s, CPU {cpu:6.2f} s")
    runs = [timed(lambda: f.precision_report(w, x)) for _ in range(args.runs)]
    print(
        f"  report (median of {args.runs}):     wall {statistics.median(r[0] for r in runs):6.2f} s, "
        f"CPU {statistics.median(r[1] for r in runs):6.2f} s"
    )
    print(f"  load average after: {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()

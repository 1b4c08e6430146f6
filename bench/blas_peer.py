"""The NumPy (OpenBLAS) peer of a benchmark script, timed in a process of its own.

A script (bench/large.py, bench/mx_formats.py) gives `script_main` its `measure` function
and the function timing its NumPy peers; `measure` calls `peer_times`, which runs the same
script with `--numpy` under `bench.machine.numpy_env` (one BLAS thread, OPENBLAS_CORETYPE and
OPENBLAS_L2_SIZE cleared; threadpoolctl limits BLAS to one thread as well) and returns the
times it printed, with the BLAS kernel in use. Times are thread CPU time, the median of
`REPS` reps of at least `MIN_MS` each.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from bench.timing import time_per_op

ROOT = Path(__file__).resolve().parent.parent
REPS, MIN_MS = 5, 50.0

PeerTimes = Callable[[bool], dict[str, Any]]
"""The NumPy peers' times of a script (argument: quick), by row label."""


def median_ns(fn: Callable[[], object]) -> float:
    """Median thread CPU time of one call of `fn` (ns)."""
    return statistics.median(time_per_op(fn, 1, REPS, MIN_MS))


def cpu_name() -> str:
    for line in Path("/proc/cpuinfo").read_text().splitlines():
        if line.startswith("model name"):
            return line.split(":", 1)[1].strip()
    return "unknown CPU"


def load_average() -> str:
    """The 1-minute load average (the machine is shared: thread CPU time
    still counts only this thread, but caches and memory are shared)."""
    return Path("/proc/loadavg").read_text().split()[0]


def _peer_main(times: PeerTimes, quick: bool) -> None:
    """In the peer process: prints the times and the BLAS in use as JSON."""
    from threadpoolctl import (  # pyright: ignore[reportMissingImports]
        threadpool_info,
        threadpool_limits,
    )

    with threadpool_limits(1):
        measured = times(quick)
        blas = [
            f"{i.get('internal_api')} {i.get('version')} {i.get('architecture')}"
            for i in threadpool_info()
        ]
    json.dump({"times": measured, "blas": "; ".join(blas)}, sys.stdout)


def peer_times(module: str, quick: bool) -> tuple[dict[str, Any], str]:
    """(times by row label, BLAS description) of `python -m module --numpy`."""
    from bench.machine import numpy_env

    p = subprocess.run(
        [sys.executable, "-m", module, "--numpy", *(["--quick"] if quick else [])],
        capture_output=True,
        text=True,
        env=numpy_env(),
        cwd=ROOT,
        check=True,
    )
    data = json.loads(p.stdout)
    return data["times"], data["blas"]


def script_main(
    doc: str | None, measure: Callable[[Path, bool], str], times: PeerTimes
) -> None:
    """The command line of a benchmark script: `[--quick] [--out DIR]`, and
    the internal `--numpy` of its peer process."""
    os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
    ap = argparse.ArgumentParser(
        description=doc, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--quick", action="store_true")
    ap.add_argument(
        "--numpy", action="store_true", help="(internal) time the NumPy peer"
    )
    ap.add_argument("--out", type=Path, default=ROOT / "bench" / "results")
    args = ap.parse_args()
    if args.numpy:
        _peer_main(times, args.quick)
        return
    print(measure(args.out, args.quick))

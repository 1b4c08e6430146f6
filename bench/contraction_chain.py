"""Compile and run time of a chain of N equal matmuls, outlined or inline.

usage: python -m bench.contraction_chain [--count N] [--size S] [--element T]
       [--inline] [--jit-only | --mx-opt-only] [--calls K]

`@chain(%a, %b)` computes ((a·b)·b)·b... with N dependent S×S matmuls (200 ×
128² by default). Measures, in a fresh process each:
`mx-opt -p mx-lower-to-llvm -t llvm` (CPU time, lines of LLVM IR) and the
JIT (`mx.jit.compile_module`: CPU and wall time of the compile, then the
median wall time of K calls). `--inline` compiles with
`mx-lower-to-llvm{outline-min-work=0}` (no outlining: one inlined kernel per
matmul, the behaviour before `outline-contractions`). Results:
bench/COMPILE_TIME.md.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

from bench.build import mx_opt
from mx.testing.matrix_programs import matmul_chain

_JIT = """
import json, statistics, sys, time
import numpy as np
from mx.jit import compile_module
text, pipeline, size, dtype, calls = sys.argv[1:6]
source = open(text).read()
c0, t0 = time.process_time(), time.perf_counter()
f = compile_module(source, pipeline)["chain"]
c1, t1 = time.process_time(), time.perf_counter()
rng = np.random.default_rng(0)
n = int(size)
a = rng.standard_normal((n, n)).astype(dtype)
b = (rng.standard_normal((n, n)) / np.sqrt(n)).astype(dtype)
times = []
for _ in range(int(calls)):
    s = time.perf_counter()
    f(a, b)
    times.append(time.perf_counter() - s)
print(json.dumps({"compile_cpu": c1 - c0, "compile_wall": t1 - t0,
                  "run": statistics.median(times)}))
"""

DTYPES = {"f32": "float32", "f64": "float64"}


def _mx_opt(src: Path, pipeline: str) -> dict[str, float]:
    out = src.with_suffix(".ll")
    with tempfile.TemporaryFile() as err:
        proc = subprocess.Popen(
            [*mx_opt(), "-p", pipeline, "-t", "llvm", str(src), "-o", str(out)],
            stdout=subprocess.DEVNULL,
            stderr=err,
        )
        _, status, usage = os.wait4(proc.pid, 0)
        if os.waitstatus_to_exitcode(status) != 0:
            err.seek(0)
            raise RuntimeError(err.read()[-2000:].decode())
    return {
        "mx_opt_cpu": usage.ru_utime + usage.ru_stime,
        "llvm_ir_lines": float(len(out.read_text().splitlines())),
    }


def _jit(
    src: Path, pipeline: str, size: int, element: str, calls: int
) -> dict[str, float]:
    run = subprocess.run(
        [
            sys.executable,
            "-c",
            _JIT,
            str(src),
            pipeline,
            str(size),
            DTYPES[element],
            str(calls),
        ],
        capture_output=True,
        text=True,
        check=True,
    )
    return json.loads(run.stdout)


def main() -> None:
    ap = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    ap.add_argument("--count", type=int, default=200)
    ap.add_argument("--size", type=int, default=128)
    ap.add_argument("--element", choices=sorted(DTYPES), default="f32")
    ap.add_argument("--inline", action="store_true", help="no outlining")
    ap.add_argument("--calls", type=int, default=5)
    which = ap.add_mutually_exclusive_group()
    which.add_argument("--jit-only", action="store_true")
    which.add_argument("--mx-opt-only", action="store_true")
    args = ap.parse_args()
    pipeline = (
        "mx-lower-to-llvm{outline-min-work=0}" if args.inline else "mx-lower-to-llvm"
    )
    with open("/proc/loadavg") as load:
        report: dict[str, object] = {
            "count": args.count,
            "size": args.size,
            "element": args.element,
            "pipeline": pipeline,
            "loadavg_start": load.read().split()[:3],
        }
    with tempfile.TemporaryDirectory() as tmp:
        src = Path(tmp) / "chain.mlir"
        src.write_text(matmul_chain(args.count, args.size, args.element))
        if not args.jit_only:
            report.update(_mx_opt(src, pipeline))
        if not args.mx_opt_only:
            report.update(_jit(src, pipeline, args.size, args.element, args.calls))
    with open("/proc/loadavg") as load:
        report["loadavg_end"] = load.read().split()[:3]
    print(json.dumps(report))


if __name__ == "__main__":
    main()

"""Quick mx-vs-peers timing of the matrix kernels, for working on mx's code generation.

usage: python bench/perf.py [--runs 3] [--only SUBSTR] [--reps 5] [--min-ms 2]

Builds every kernel of the full suite (bench/build.py, into bench/build/perf), runs the C
harness `--runs` times (each with the buffers staggered differently, under `setarch -R` when
that works) and prints the median ns per op of each matrix kernel for naive C, clang matrix
(-ffp-contract=off and =fast), mx and mx contract, plus mx / best C peer. No NumPy, no JIT, no
report files: `bench/run.py` is the full benchmark.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
from pathlib import Path

if __package__ in (None, ""):  # run as a script: make `bench` importable
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.build import BENCH, build
from bench.kernels import FP8_FAMILIES, all_kernels
from bench.run import Results, _parse, _setarch  # pyright: ignore[reportPrivateUsage]

IMPLS = ("naive", "clang_off", "clang_fast", "mx", "mx_contract")
FP8_IMPLS = ("c_bits", "c_lut", "copy", "", "mx")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--min-ms", type=float, default=2.0)
    ap.add_argument("--only", default="", help="kernel name substring")
    args = ap.parse_args()
    ks = all_kernels(False)
    b = build(ks, BENCH / "build" / "perf")
    for sym, err in b.mx_errors.items():
        print(f"mx build failed: {sym}: {err}")
    results: Results = {}
    for r in range(args.runs):
        cmd = [*_setarch(), str(b.harness), "--reps", str(args.reps)]
        cmd += ["--min-ms", str(args.min_ms), "--stagger", str(r * 5)]
        if args.only:
            cmd += ["--only", args.only]
        p = subprocess.run(cmd, capture_output=True, text=True)
        _parse(p.stdout, results)
    print(f"{'kernel':34}" + "".join(f"{i:>12}" for i in IMPLS) + f"{'mx/best':>9}")
    bad = False
    for k in ks:
        rows = {impl: row for (name, impl), row in results.items() if name == k.name}
        if not rows:
            continue
        cells = ""
        impls = IMPLS if k.family not in FP8_FAMILIES else FP8_IMPLS
        for impl in impls:
            row = rows.get(impl)
            if k.family in FP8_FAMILIES and row is not None:
                row = type(row)([x / 1000 for x in row.runs], row.ok)  # µs per array
            cells += (
                f"{'':>12}"
                if row is None
                else f"{row.ns:>11.1f}" + (" " if row.ok else "!")
            )
            bad |= row is not None and not row.ok
        peers = [
            row.ns
            for i, row in rows.items()
            if not i.startswith("mx") and i != "copy" and row.ok
        ]
        mx = [rows[i].ns for i in ("mx", "mx_contract") if i in rows]
        ratio = f"{min(mx) / min(peers):>9.2f}" if mx and peers else ""
        print(f"{k.name:34}{cells}{ratio}")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())

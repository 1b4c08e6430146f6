"""Runs the whole benchmark suite and writes the report.

usage: python bench/run.py [--quick] [--out bench/results] [--runs 3] [--no-mx] [--no-large]
       [--no-pyapi] [--no-mx-formats] [--no-lowprec] [--no-compile-time]

Builds the C peers and mx's kernels into one harness (bench/build.py), runs it `--runs` times
(each with the buffers shifted differently within their pages, under `setarch -R` when that
works), runs the NumPy/ml_dtypes peers in a process of their own with single-threaded BLAS,
times mx's kernels through the Python JIT, and writes results.md, results.png, results.tsv
and machine.txt into --out. Every implementation is checked against the reference before it is
timed; the command exits with status 1 if any check failed (after writing the report).
"""

from __future__ import annotations

import argparse
import datetime
import functools
import os
import platform
import shutil
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

if __package__ in (None, ""):  # run as a script: make `bench` importable
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import numpy as np
from numpy.typing import NDArray

from bench import cabi
from bench.build import BENCH, Build, build, clang
from bench.kernels import (
    FP8_FAMILIES,
    NOVEC,
    Family,
    Kernel,
    all_kernels,
    mx_impls,
    symbol,
)
from bench.machine import (
    cpu_model,
    load_average,
    lscpu_field,
    numpy_env,
    sh,
)
from bench.timing import time_per_op

ROOT = BENCH.parent
PEER_LABELS = {
    "naive": "naive C",
    "clang_off": "clang matrix",
    "clang_fast": "clang matrix fast",
    "numpy": "NumPy",
    "c_bits": "C bits",
    "c_lut": "C table",
    "ml_dtypes": "ml_dtypes",
}
MX_LABELS = {"mx": "mx", "mx_contract": "mx contract", "mx_jit": "mx via JIT"}


@dataclass
class Row:
    """One measured (kernel, implementation): per-run medians in ns per op, and its check."""

    runs: list[float]
    ok: bool = True
    bitexact: bool = False
    maxerr: float = 0.0

    @property
    def ns(self) -> float:
        return statistics.median(self.runs)


Results = dict[tuple[str, str], Row]


def _parse(lines: str, results: Results) -> list[str]:
    """Adds the harness-format lines to `results`; returns the `#` comment lines."""
    comments: list[str] = []
    for line in lines.splitlines():
        if line.startswith("#"):
            comments.append(line[1:].strip())
            continue
        f = line.split("\t")
        if len(f) != 10:
            continue
        key = (f[0], f[1])
        row = results.setdefault(key, Row([], True, True, 0.0))
        row.runs.append(float(f[2]))
        if f[6] == "1":
            row.bitexact &= f[7] == "1"
            row.maxerr = max(row.maxerr, float(f[8]))
        row.ok &= f[9] == "1"
    return comments


def _setarch() -> list[str]:
    """`setarch <arch> -R` (no address-space randomization) if this machine allows it."""
    exe = shutil.which("setarch")
    if exe is None:
        return []
    cmd = [exe, platform.machine(), "-R"]
    return (
        cmd
        if subprocess.run([*cmd, "true"], capture_output=True).returncode == 0
        else []
    )


def run_harness(
    b: Build, runs: int, reps: int, min_ms: float, results: Results
) -> None:
    prefix = _setarch()
    for r in range(runs):
        p = subprocess.run(
            [
                *prefix,
                str(b.harness),
                "--reps",
                str(reps),
                "--min-ms",
                str(min_ms),
                "--stagger",
                str(r * 5),
            ],
            capture_output=True,
            text=True,
        )
        _parse(p.stdout, results)
        if p.returncode not in (0, 1):
            raise RuntimeError(f"harness failed ({p.returncode}):\n{p.stderr}")
        print(f"  harness run {r + 1}/{runs} done", flush=True)


def run_numpy(
    quick: bool, runs: int, reps: int, min_ms: float, results: Results
) -> list[str]:
    notes: list[str] = []
    for r in range(runs):
        cmd = [
            sys.executable,
            "-m",
            "bench.numpy_peers",
            "--reps",
            str(reps),
            "--min-ms",
            str(min_ms),
        ]
        p = subprocess.run(
            [*_setarch(), *cmd, *(["--quick"] if quick else [])],
            capture_output=True,
            text=True,
            env=numpy_env(),
            cwd=ROOT,
        )
        if p.returncode != 0:
            raise RuntimeError(f"numpy peers failed:\n{p.stderr}")
        notes = _parse(p.stdout, results)
        print(f"  numpy run {r + 1}/{runs} done", flush=True)
    return notes


JIT_VIEWS: dict[np.dtype[Any], Callable[[NDArray[Any]], NDArray[Any]]] = {
    np.dtype(np.uint8): lambda x: x.view(np.int8),
    np.dtype(np.uint16): lambda x: x.view(np.float16),
}


def run_jit(
    ks: list[Kernel], b: Build, runs: int, reps: int, min_ms: float, results: Results
) -> dict[str, str]:
    """Times mx's kernels through mx.jit (the variant that won in the harness), checking each
    against the naive C peer first. Returns notes (JIT compile time of the 4×4 kernel, errors)."""
    notes: dict[str, str] = {}
    try:
        from mx import jit
    except ImportError as e:
        return {"jit": f"not available ({e})"}
    lib = cabi.load(b.lib)
    rng = np.random.default_rng(3)
    for k in ks:
        built = [m for m in mx_impls(k) if symbol(m, k) in b.mx_ok]
        if not built:
            continue
        best = min(
            built,
            key=lambda m: (
                results[(k.name, m)].ns if (k.name, m) in results else float("inf")
            ),
        )
        text = (BENCH / "kernels" / "mx" / f"{symbol(best, k)}.mlir").read_text()
        t0 = time.perf_counter()
        try:
            fn = jit.compile_module(text, "mx-lower-to-llvm")[symbol(best, k)]
        except (
            Exception
        ) as e:  # a JIT failure is a result to report, not a reason to stop
            notes[k.name] = f"JIT failed: {type(e).__name__}: {e}"
            continue
        if k.name == "mma_f32_4x4":
            notes[
                "JIT compile of A·B+C 4×4 (in process, first compile; target < 0.2 s)"
            ] = f"{time.perf_counter() - t0:.3f} s"
        bufs = cabi.inputs(k, k.batch, rng)
        ref = [x.copy() for x in bufs]
        cabi.call(
            lib, "c_bits" if k.family in FP8_FAMILIES else "naive", k, ref, k.batch
        )
        # the JIT wants memref<?xi8> as int8 and memref<?xf16> as float16: same bytes
        views = [JIT_VIEWS.get(b.dtype, lambda x: x)(b) for b in bufs]
        args: list[object] = [
            *([k.np_dtype(0.75)] if k.has_scalar else []),
            *views,
            k.batch,
        ]
        try:
            fn(*args)
        except Exception as e:  # as above: report it
            notes[k.name] = f"JIT call failed: {type(e).__name__}: {e}"
            continue
        ok = _same(k, bufs[-1], ref[-1])
        row = Row([], ok, False, 0.0)
        for _ in range(runs):
            row.runs.append(
                statistics.median(
                    time_per_op(
                        functools.partial(fn, *args), k.per_call_ops, reps, min_ms
                    )
                )
            )
        results[(k.name, "mx_jit")] = row
    return notes


def _same(k: Kernel, got: np.ndarray, want: np.ndarray) -> bool:
    if k.family in FP8_FAMILIES:
        if k.family is Family.ENC_F32_E4M3FN_SAT:
            nan = ((got & 0x7F) == 0x7F) & ((want & 0x7F) == 0x7F)
        elif k.family is Family.DEC_E5M2_F16:
            nan = np.isnan(got.view(np.float16)) & np.isnan(want.view(np.float16))
        else:
            nan = np.isnan(got) & np.isnan(want)
        return bool(np.all((got == want) | nan))
    g, w = got.astype(np.float64), want.astype(np.float64)
    return bool(np.all(np.abs(g - w) / (1 + np.abs(w)) <= k.tolerance))


# ----------------------------------------------------------------------------- report


def _fmt_ns(ns: float) -> str:
    if ns >= 1e6:
        return f"{ns / 1e6:.2f} ms"
    if ns >= 1e4:
        return f"{ns / 1e3:.1f} µs"
    return f"{ns:.1f} ns" if ns < 100 else f"{ns:.0f} ns"


def _cell(results: Results, kernel: str, impl: str) -> str:
    row = results.get((kernel, impl))
    if row is None or not row.runs:
        return "–"
    mark = "" if row.ok else " ✗wrong"
    return _fmt_ns(row.ns) + mark


def _best(
    results: Results, kernel: str, impls: tuple[str, ...]
) -> tuple[str, float] | None:
    got = [
        (i, results[(kernel, i)].ns)
        for i in impls
        if (kernel, i) in results and results[(kernel, i)].ok
    ]
    return min(got, key=lambda x: x[1]) if got else None


def report(
    ks: list[Kernel],
    results: Results,
    b: Build | None,
    mx_note: str,
    notes: dict[str, str],
    out: Path,
) -> list[tuple[str, float]]:
    """Writes results.md; returns (kernel label, mx / best peer) for the plot."""
    ratios: list[tuple[str, float]] = []
    matrix_peers = ("naive", "clang_off", "clang_fast", "numpy")
    mx_cols = ("mx", "mx_contract", "mx_jit")
    lines = [
        "# mx benchmark results",
        "",
        "Medians over runs of the per-run median (thread CPU time per op); see machine.txt for the machine.",
        "Differences under 10 % are noise on this machine. `✗wrong` marks an implementation whose output",
        "failed the check against the reference (it is then left out of 'best').",
        "",
        "## Matrix kernels (ns per matrix op)",
        "",
        "| kernel | batch | "
        + " | ".join(PEER_LABELS[p] for p in matrix_peers)
        + " | "
        + " | ".join(MX_LABELS[m] for m in mx_cols)
        + " | best peer GFLOP/s | mx GFLOP/s | mx / best peer | diagnostic: mx .ll with -fno-vectorize |",
        "|---" * (2 + len(matrix_peers) + len(mx_cols) + 4) + "|",
    ]
    for k in ks:
        if k.family in FP8_FAMILIES:
            continue
        best_peer = _best(results, k.name, matrix_peers)
        best_mx = _best(results, k.name, ("mx", "mx_contract"))
        cells = [_cell(results, k.name, p) for p in matrix_peers]
        mx_cells = [_cell(results, k.name, m) for m in mx_cols]
        if best_mx is None:
            mx_cells[0] = _mx_missing(k, b, mx_note)

        ratio = "–"
        if best_mx and best_peer:
            r = best_mx[1] / best_peer[1]
            ratio = f"**{r:.2f}×** (vs {PEER_LABELS[best_peer[0]]})"
            ratios.append((k.label, r))
        lines.append(
            f"| {k.label} | {k.batch} | "
            + " | ".join(cells + mx_cells)
            + f" | {_rate(k, best_peer)} | {_rate(k, best_mx)} | {ratio} | {_novec_cell(results, k, best_peer)} |"
        )
    fp8_peers = ("c_bits", "c_lut", "ml_dtypes")
    lines += [
        "",
        "## FP8 conversions (time per array)",
        "",
        "The copy limit is a plain integer widening/narrowing copy of the same bytes (u8→u32, u8→u16, u32→u8).",
        "",
        "| kernel | C bits | C table | ml_dtypes | copy limit | mx | mx via JIT | mx GB/s | mx % of copy limit | mx × faster than ml_dtypes | mx / best peer |",
        "|---" * 11 + "|",
    ]
    for k in ks:
        if k.family not in FP8_FAMILIES:
            continue
        best_peer = _best(results, k.name, fp8_peers)
        mx = _best(results, k.name, ("mx",))
        copy = results.get((k.name, "copy"))
        ml = results.get((k.name, "ml_dtypes"))
        mx_cell = _cell(results, k.name, "mx") if mx else _mx_missing(k, b, mx_note)
        pct = f"{100 * copy.ns / mx[1]:.0f} %" if mx and copy else "–"
        speed = f"{ml.ns / mx[1]:.1f}×" if mx and ml else "–"
        gbs = f"{k.bytes_moved() / mx[1]:.1f}" if mx else "–"
        ratio = "–"
        if mx and best_peer:
            ratio = f"**{mx[1] / best_peer[1]:.2f}×** (vs {PEER_LABELS[best_peer[0]]})"
            ratios.append((k.label, mx[1] / best_peer[1]))
        cells = [
            _cell(results, k.name, i) for i in ("c_bits", "c_lut", "ml_dtypes", "copy")
        ]
        lines.append(
            f"| {k.label} | "
            + " | ".join(
                [
                    *cells,
                    mx_cell,
                    _cell(results, k.name, "mx_jit"),
                    gbs,
                    pct,
                    speed,
                    ratio,
                ]
            )
            + " |"
        )
    lines += ["", "## Notes", ""]
    lines += [f"- {key}: {val}" for key, val in notes.items()]
    if b is not None and b.mx_errors:
        lines += ["", "mx kernels that did not build:", ""]
        lines += [f"- `{sym}`: {err}" for sym, err in sorted(b.mx_errors.items())]
    wrong = [f"{k}/{i}" for (k, i), row in results.items() if not row.ok]
    if wrong:
        lines += ["", "**Failed checks:** " + ", ".join(wrong)]
    (out / "results.md").write_text("\n".join(lines) + "\n")
    return ratios


def _novec_cell(
    results: Results, k: Kernel, best_peer: tuple[str, float] | None
) -> str:
    """The faster -fno-vectorize build of mx's kernel, and its ratio to the best peer."""
    nv = _best(results, k.name, tuple(m + NOVEC for m in ("mx", "mx_contract")))
    if nv is None:
        return "–"
    return _fmt_ns(nv[1]) + (f" ({nv[1] / best_peer[1]:.2f}×)" if best_peer else "")


def _rate(k: Kernel, best: tuple[str, float] | None) -> str:
    """GFLOP/s of the best time, or GB/s for a kernel that only moves data."""
    if best is None:
        return "–"
    return (
        f"{k.flops / best[1]:.1f}"
        if k.flops
        else f"{k.bytes_moved() / best[1]:.1f} GB/s"
    )


def _mx_missing(k: Kernel, b: Build | None, mx_note: str) -> str:
    if b is None:
        return f"not yet available ({mx_note})"
    errs = [
        b.mx_errors[s] for s in (symbol(m, k) for m in mx_impls(k)) if s in b.mx_errors
    ]
    return "not yet available (lowering fails)" if errs else "–"


def plot(ratios: list[tuple[str, float]], out: Path) -> None:
    try:
        import matplotlib  # pyright: ignore[reportMissingImports]  (optional `bench` extra)

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt  # pyright: ignore[reportMissingImports]
    except ImportError:
        print(
            "matplotlib not installed (pip install -e '.[bench]'): no plot",
            file=sys.stderr,
        )
        return
    fig, ax = plt.subplots(figsize=(10, 0.35 * len(ratios) + 1.5))
    labels = [r[0] for r in ratios]
    values = [r[1] for r in ratios]
    colors = [
        "tab:green" if v <= 1.0 else ("tab:orange" if v <= 2.0 else "tab:red")
        for v in values
    ]
    ax.barh(range(len(values)), values, color=colors)
    ax.set_yticks(range(len(values)), labels)
    ax.invert_yaxis()
    ax.set_xscale("log")
    ax.axvline(1.0, color="black", linewidth=1)
    for i, v in enumerate(values):
        ax.text(v, i, f" {v:.2f}×", va="center", fontsize=8)
    ax.set_xlabel("mx time / best peer time (log scale; < 1 means mx is faster)")
    ax.set_title("mx vs. the best peer per kernel")
    fig.tight_layout()
    fig.savefig(out / "results.png", dpi=110)
    plt.close(fig)


def machine_txt(
    out: Path, blas: list[str], setarch: bool, started: str, load_start: str
) -> None:
    lscpu = sh(["lscpu"])
    flags = lscpu_field(lscpu, "Flags").split()
    caches = [x.strip() for x in lscpu.splitlines() if "cache" in x]

    import ml_dtypes

    text = [
        f"date: {started} (UTC)",
        f"commit: {sh(['git', '-C', str(ROOT), 'rev-parse', '--short', 'HEAD'])}"
        + f" (files of mx/ modified in the work tree, i.e. measured but not yet committed: {len(sh(['git', '-C', str(ROOT), 'status', '--porcelain', 'mx']).splitlines())})",
        f"cpu: {cpu_model(lscpu)}",
        "cpu flags (SIMD): "
        + " ".join(f for f in flags if f.startswith(("avx", "fma", "f16c", "sse4"))),
        *caches,
        f"memory: {sh(['sh', '-c', 'free -h | sed -n 2p'])}",
        f"kernel: {platform.release()}",
        f"clang: {(sh([clang() or 'clang-16', '--version']).splitlines() or ['?'])[0]}",
        f"python: {platform.python_version()}, numpy {np.__version__}, ml_dtypes {ml_dtypes.__version__}",
        *(
            f"numpy BLAS (threadpoolctl, in the NumPy timing process): {x}"
            for x in blas
        ),
        "OpenBLAS variables in the calling environment (cleared for the NumPy process only): "
        + (
            ", ".join(
                f"{v}={os.environ[v]}"
                for v in ("OPENBLAS_CORETYPE", "OPENBLAS_L2_SIZE")
                if v in os.environ
            )
            or "none"
        ),
        f"ASLR disabled with setarch -R: {setarch}",
        f"load average at start: {load_start}; at end: {load_average()}",
        "timing: thread CPU time (CLOCK_THREAD_CPUTIME_ID / time.thread_time_ns), so time spent descheduled on a shared machine is not counted",
    ]
    (out / "machine.txt").write_text("\n".join(text) + "\n")


def write_tsv(results: Results, out: Path) -> None:
    lines = ["kernel\timpl\tmedian_ns_per_op\truns_ns\tok\tbitexact\tmaxerr"]
    for (k, i), row in sorted(results.items()):
        runs = ",".join(f"{x:.4g}" for x in row.runs)
        lines.append(
            f"{k}\t{i}\t{row.ns:.4f}\t{runs}\t{int(row.ok)}\t{int(row.bitexact)}\t{row.maxerr:.3g}"
        )
    (out / "results.tsv").write_text("\n".join(lines) + "\n")


def _mx_state() -> str:
    """Why mx's kernels cannot be built yet, or '' when the lowering is registered."""
    from mx.universe import ALL_PASSES

    return (
        ""
        if "mx-lower-to-llvm" in ALL_PASSES
        else "the pass mx-lower-to-llvm is not registered yet"
    )


def main() -> int:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument(
        "--quick",
        action="store_true",
        help="a few small kernels, one short run (smoke test)",
    )
    ap.add_argument(
        "--out",
        type=Path,
        default=None,
        help="results folder (default bench/results, or bench/results-quick)",
    )
    ap.add_argument(
        "--runs",
        type=int,
        default=None,
        help="harness processes per measurement (default 3; 1 with --quick)",
    )
    ap.add_argument("--no-mx", action="store_true", help="peers only")
    ap.add_argument(
        "--no-large",
        action="store_true",
        help="skip the large products (bench/large.py: blocked matmul, matvec)",
    )
    ap.add_argument(
        "--no-pyapi",
        action="store_true",
        help="skip the Python API's rows (bench/pyapi.py: call overhead, zero-copy, batches)",
    )
    ap.add_argument(
        "--no-mx-formats",
        action="store_true",
        help="skip the MXFP4/MXFP8 matvec (bench/mx_formats.py)",
    )
    ap.add_argument(
        "--no-lowprec",
        action="store_true",
        help="skip the low-precision products (bench/lowprec.py: f16, bf16, mixed)",
    )
    ap.add_argument(
        "--no-compile-time",
        action="store_true",
        help="skip the mx-opt compile-time measurement",
    )
    args = ap.parse_args()
    quick: bool = args.quick
    out: Path = args.out or BENCH / ("results-quick" if quick else "results")
    runs: int = args.runs or (1 if quick else 3)
    reps, min_ms = (3, 0.5) if quick else (7, 5.0)
    out.mkdir(parents=True, exist_ok=True)
    started = datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%d %H:%M")
    load_start = load_average()
    ks = all_kernels(quick)
    mx_note = "" if args.no_mx else _mx_state()
    with_mx = not args.no_mx and not mx_note
    print(f"building {len(ks)} kernels{' with mx' if with_mx else ''} ...", flush=True)
    b = build(ks, BENCH / "build" / ("quick" if quick else "full"), with_mx=with_mx)
    results: Results = {}
    print("timing the C harness ...", flush=True)
    run_harness(b, runs, reps, min_ms, results)
    print("timing NumPy / ml_dtypes ...", flush=True)
    blas = run_numpy(quick, runs, reps, min_ms, results)
    notes: dict[str, str] = {}
    if with_mx:
        print("timing mx through the JIT ...", flush=True)
        notes.update(run_jit(ks, b, runs, reps, min_ms, results))
        if not args.no_compile_time and not quick:
            from bench import compile_time

            print("measuring mx-opt compile time ...", flush=True)
            notes.update(compile_time.measure(out))
    elif args.no_mx:
        mx_note = "run with --no-mx"
    large = ""
    if with_mx and not args.no_large:
        from bench import large as large_products

        large = large_products.measure(out, quick)
    if with_mx and not args.no_mx_formats:
        from bench import mx_formats

        large += "\n\n" + mx_formats.measure(out, quick)
    pyapi = ""
    if with_mx and not args.no_pyapi:
        from bench import pyapi as python_api

        print("timing the Python API ...", flush=True)
        pyapi = python_api.measure(out, quick)
    lowprec = ""
    if with_mx and not args.no_lowprec:
        from bench import lowprec as lowprec_products

        lowprec = lowprec_products.measure(out, quick)
    write_tsv(results, out)
    ratios = report(ks, results, b if with_mx else None, mx_note, notes, out)
    plot(ratios, out)
    machine_txt(out, blas, bool(_setarch()), started, load_start)
    print((out / "results.md").read_text())
    for text in (large, lowprec, pyapi):
        if text:
            print(text)
    return 0 if all(r.ok for r in results.values()) else 1


if __name__ == "__main__":
    sys.exit(main())

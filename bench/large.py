"""Large products: mx's cache-blocked matmul and matvec against single-threaded OpenBLAS.

usage: python -m bench.large [--quick] [--out DIR]     (also run by bench/run.py)

Square f32/f64 A·B at 64..1024 and 1000, a tall-skinny A·B (4096×128 by 128×128), a
4096×4096 f32 M·x with column- and row-major M, and weight-times-vector (the shape of LLM
decoding) with quantized weights against NumPy's f32 sgemv of the same shape: f8e4m3fn
weights (`arbfp.convert_from` times a per-tensor scale feeding `matvec`) and f16 weights
(a mixed-precision `matvec` to f32), 4096×4096 and 11008×4096, row- and column-major. mx: one `func.func` over flat buffers
(`matrix.column_major_load`/`row_major_load`, `matmul`/`matvec`, a store; small products
repeated in an `scf.for` so that the JIT's call overhead is spread), compiled by
`mx.jit.compile_module` (mx-lower-to-llvm, LLVM -O3 for the host CPU), strict and with
`fastmath<contract>`. NumPy: `np.matmul`/`np.dot` with `out=` on the same bytes, in its own
process with OPENBLAS_CORETYPE/OPENBLAS_L2_SIZE cleared, one thread (threadpoolctl); the
kernel OpenBLAS selects is recorded. Times are thread CPU time, median of 5 reps of ≥ 50 ms;
NumPy's 5 reps just before and 5 just after mx's of the same case (a shared machine's load
changes within minutes), median of the 10; all cases are run RUNS times over and each
figure is the median of the passes (the ratio's lowest and highest are shown).
Peak: bench/kernels/peak_fma.c (`bench.machine.peak_gflops`: independent FMA chains of
the widest vectors the CPU has), the per-core throughput as measured.
"""

from __future__ import annotations

import json
import statistics
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import ml_dtypes
import numpy as np

from bench.blas_peer import MIN_MS, REPS, ROOT, median_ns, script_main
from bench.timing import time_per_op

WEIGHTS = {"f32": np.float32, "f16": np.float16, "f8e4m3fn": np.uint8}
"""Weight types of M·x: the NumPy array of their memory."""


@dataclass(frozen=True)
class Case:
    """D = A·B (R×K by K×C), or y = M·x (R×K, `layout` of M; M of `dtype`
    weights, x and y f32 unless f64)."""

    kind: str  # "mm" or "mv"
    dtype: str
    rows: int
    depth: int
    cols: int = 1
    layout: str = "column_major"

    @property
    def label(self) -> str:
        if self.kind == "mv":
            weights = "" if self.dtype == "f32" else " weights"
            return f"M·x {self.rows}×{self.depth} {self.dtype}{weights} ({self.layout.replace('_', '-')} M)"
        r, k, c = self.rows, self.depth, self.cols
        shape = f"{r}³" if r == k == c else f"{r}×{k}·{k}×{c}"
        return f"A·B {shape} {self.dtype}"

    @property
    def flops(self) -> int:
        return 2 * self.rows * self.depth * self.cols

    @property
    def batch(self) -> int:
        """Products per call of the mx function: enough that the JIT's call
        overhead (~15 us) does not count."""
        return max(1, 50_000_000 // self.flops) if self.kind == "mm" else 1

    @property
    def np_dtype(self) -> type[np.floating]:
        """Of the vectors and results (and of A, B, M if not quantized)."""
        return np.float64 if self.dtype == "f64" else np.float32

    @property
    def weight_bytes(self) -> int:
        """Bytes of M (or A) read per op."""
        return (
            self.rows
            * self.depth
            * np.dtype(WEIGHTS.get(self.dtype, self.np_dtype)).itemsize
        )


def cases(quick: bool) -> list[Case]:
    sizes = (256, 1024) if quick else (64, 128, 256, 512, 1000, 1024)
    out = [Case("mm", t, n, n, n) for t in ("f32", "f64") for n in sizes]
    if not quick:
        out += [Case("mm", t, 4096, 128, 128) for t in ("f32", "f64")]
    shapes = [(4096, 4096)] if quick else [(4096, 4096), (11008, 4096)]
    out += [
        Case("mv", t, rows, depth, 1, layout)
        for rows, depth in shapes
        for t in ("f32", "f16", "f8e4m3fn")
        for layout in ("column_major", "row_major")
    ]
    return out


def _module(c: Case, contract: bool) -> str:
    t, fm = c.dtype, " fastmath<contract>" if contract else ""
    mem = f"memref<?x{t}>"

    def mat(r: int, k: int) -> str:
        return f"!matrix.matrix<{r}x{k}x{t}>"

    if c.kind == "mv":
        return _matvec_module(c, fm)
    a, b, d = mat(c.rows, c.depth), mat(c.depth, c.cols), mat(c.rows, c.cols)
    return f"""func.func @f(%a: {mem}, %b: {mem}, %d: {mem}) {{
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %n = arith.constant {c.batch} : index
  scf.for %i = %c0 to %n step %c1 {{
    %ma = matrix.column_major_load %a[0] : {mem} -> {a}
    %mb = matrix.column_major_load %b[0] : {mem} -> {b}
    %p = matrix.matmul %ma, %mb{fm} : {a}, {b} -> {d}
    matrix.column_major_store %p, %d[0] : {d}, {mem}
  }}
  func.return
}}"""


SCALE = 0.5
"""The per-tensor scale of the FP8 weights."""


def _matvec_module(c: Case, fm: str) -> str:
    """y = M·x over flat buffers; FP8 weights dequantized with a scale."""
    t, r, k = "f32", c.rows, c.depth  # x and y
    element = {"f8e4m3fn": "i8"}.get(c.dtype, c.dtype)
    w, mem = f"memref<?x{element}>", f"memref<?x{t}>"
    stored = f"!matrix.matrix<{r}x{k}x{element}>"
    m, x, y = f"!matrix.matrix<{r}x{k}x{t}>", f"vector<{k}x{t}>", f"vector<{r}x{t}>"
    if c.dtype == "f8e4m3fn":
        weights = f"""%q = matrix.{c.layout}_load %w[0] : {w} -> {stored}
  %d = arbfp.convert_from f8e4m3fn %q : {stored} to {m}
  %s = arith.constant {SCALE} : {t}
  %k = matrix.splat %s : {m}
  %m = matrix.mul %d, %k : {m}"""
    else:
        weights = f"%m = matrix.{c.layout}_load %w[0] : {w} -> {stored}"
        m = stored
    return f"""func.func @f(%w: {w}, %x: {mem}, %y: {mem}) {{
  %c0 = arith.constant 0 : index
  {weights}
  %v = vector.load %x[%c0] : {mem}, {x}
  %r = matrix.matvec %m, %v{fm} : {m}, {x} -> {y}
  vector.store %r, %y[%c0] : {mem}, {y}
  func.return
}}"""


def _operands(c: Case) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Flat buffers: A (or M) and B (or x) with values in [-1, 1) (FP8
    weights: every finite encoding), and the output."""
    rng = np.random.default_rng(0)
    dt = c.np_dtype
    if c.dtype == "f8e4m3fn":
        a = rng.integers(0, 256, c.rows * c.depth).astype(np.uint8)
        a[(a & 0x7F) == 0x7F] = 0x38  # NaN encodings: 1.0
    else:
        a = rng.uniform(-1, 1, c.rows * c.depth).astype(WEIGHTS.get(c.dtype, dt))
    b = rng.uniform(-1, 1, c.depth * c.cols).astype(dt)
    return a, b, np.zeros(c.rows * c.cols, dt)


def _weights(c: Case, a: np.ndarray) -> np.ndarray:
    """M (or A) as float64 values."""
    if c.dtype == "f8e4m3fn":
        return a.view(ml_dtypes.float8_e4m3fn).astype(np.float64) * SCALE
    return a.astype(np.float64)


def _reference(c: Case, w: np.ndarray, b: np.ndarray) -> np.ndarray:
    """The exact result for the weights' values `w` (float64)."""
    if c.kind == "mv":
        m = (
            w.reshape(c.depth, c.rows).T
            if c.layout == "column_major"
            else w.reshape(c.rows, c.depth)
        )
        return m @ b.astype(np.float64)
    am = w.reshape(c.depth, c.rows).T
    bm = b.reshape(c.cols, c.depth).T.astype(np.float64)
    return (am @ bm).T.reshape(-1)


def time_mx(c: Case) -> dict[str, float]:
    """ns per op of the strict and the contract build; asserts their results."""
    from mx.jit import compile_module

    out: dict[str, float] = {}
    a, b, d = _operands(c)
    w = _weights(c, a)
    want = _reference(c, w, b)
    # |A|·|B|: what a sum of K rounded steps errs against
    magnitude = _reference(c, np.abs(w), np.abs(b))
    eps = float(np.finfo(c.np_dtype).eps)
    for contract in (False, True):
        f = compile_module(_module(c, contract))["f"]
        f(a, b, d)
        error = np.abs(d.astype(np.float64) - want)
        assert np.all(error <= 2 * (c.depth + 2) * eps * magnitude), c.label
        out["mx contract" if contract else "mx"] = (
            median_ns(lambda f=f: f(a, b, d)) / c.batch
        )
    return out


def time_numpy(c: Case) -> list[float]:
    """ns per op of NumPy on the same bytes (C-order arrays of the
    transposes), each of REPS reps."""
    a, b, _ = _operands(c)
    a = a if c.dtype in ("f32", "f64") else _weights(c, a).astype(np.float32)
    if c.kind == "mv":
        m = (
            a.reshape(c.rows, c.depth)
            if c.layout == "row_major"
            else a.reshape(c.depth, c.rows).T
        )
        y = np.empty(c.rows, c.np_dtype)
        return time_per_op(lambda: np.dot(m, b, out=y), 1, REPS, MIN_MS)
    at, bt = a.reshape(c.depth, c.rows), b.reshape(c.cols, c.depth)
    dt = np.empty((c.cols, c.rows), c.np_dtype)
    return time_per_op(lambda: np.matmul(bt, at, out=dt), 1, REPS, MIN_MS)


class _NumPyPeer:
    """NumPy in its own process (bench.run's NumPy environment), timing the
    case it is sent (its label, one line) and answering with a JSON list of
    ns per op; its first line names the BLAS."""

    def __init__(self, quick: bool) -> None:
        from bench.machine import numpy_env

        self.process = subprocess.Popen(
            [sys.executable, "-m", "bench.large", "--numpy"]
            + (["--quick"] if quick else []),
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
            env=numpy_env(),
            cwd=ROOT,
        )
        self.blas = self._line()

    def _line(self) -> str:
        assert self.process.stdout is not None
        line = self.process.stdout.readline()
        if not line:
            raise RuntimeError("the NumPy peer process ended")
        return line.strip()

    def time(self, c: Case) -> list[float]:
        assert self.process.stdin is not None
        self.process.stdin.write(c.label + "\n")
        self.process.stdin.flush()
        return json.loads(self._line())

    def close(self) -> None:
        assert self.process.stdin is not None
        self.process.stdin.close()
        self.process.wait()


def _numpy_serve(quick: bool) -> dict[str, float]:
    """The peer process's work (under blas_peer's one-thread limit): names
    the BLAS, then times each case whose label it reads, until its input
    ends (what blas_peer prints afterwards is not read)."""
    from threadpoolctl import (  # pyright: ignore[reportMissingImports]
        threadpool_info,
    )

    by_label = {c.label: c for c in cases(quick)}
    blas = [
        f"{i.get('internal_api')} {i.get('version')} {i.get('architecture')}"
        for i in threadpool_info()
    ]
    print("; ".join(blas), flush=True)
    for line in sys.stdin:
        print(json.dumps(time_numpy(by_label[line.strip()])), flush=True)
    return {}


RUNS = 3
"""Passes over all cases (1 with --quick): each row reports the median over
passes, so that a slow minute of a shared machine moves one sample of each
row, not a whole row."""


def measure(out: Path, quick: bool = False) -> str:
    """Runs every case RUNS times; writes `large.md` into `out` and returns it."""
    from bench.machine import cpu_model, load_average, peak_gflops

    load_before = load_average()
    peak = peak_gflops()
    runs = 1 if quick else RUNS
    samples: dict[str, list[tuple[dict[str, float], float]]] = {}
    peer = _NumPyPeer(quick)
    blas = peer.blas
    for run in range(runs):
        for c in cases(quick):
            print(f"large products, pass {run + 1}/{runs}: {c.label} ...", flush=True)
            # NumPy's reps just before and just after mx's: the same load.
            before = peer.time(c)
            mx = time_mx(c)
            numpy_ns = statistics.median(before + peer.time(c))
            samples.setdefault(c.label, []).append((mx, numpy_ns))
    rows: list[str] = []
    for c in cases(quick):
        passes = samples[c.label]
        mx = {k: statistics.median(p[0][k] for p in passes) for k in passes[0][0]}
        numpy_ns = statistics.median(p[1] for p in passes)
        ratios = sorted(min(p[0].values()) / p[1] for p in passes)
        best = min(mx.values())
        core_peak = (
            None if peak is None else peak[0] * 1e9 / (1 if c.dtype == "f32" else 2)
        )
        of_peak = (
            "–" if core_peak is None else f"{c.flops / best * 1e9 / core_peak:.0%}"
        )
        gf = {k: c.flops / v for k, v in (*mx.items(), ("NumPy", numpy_ns))}
        read = f"{c.weight_bytes / best:.1f}" if c.kind == "mv" else "–"
        spread = f" ({ratios[0]:.2f}–{ratios[-1]:.2f})" if runs > 1 else ""
        rows.append(
            f"| {c.label} | {gf['mx']:.1f} | {gf['mx contract']:.1f} | {gf['NumPy']:.1f} "
            f"| **{statistics.median(ratios):.2f}×**{spread} "
            f"| {of_peak} | {read} |"
        )
    text = "\n".join(
        [
            f"### Large products (GFLOP/s; thread CPU time, median over {runs} passes of the"
            " median of 5 reps of ≥ 50 ms; NumPy's: of 5 reps just before and 5 just after"
            " mx's; best mx / NumPy: median of the passes' ratios (lowest–highest))",
            "",
            f"CPU: {cpu_model()}; load average (1, 5, 15 min) {load_before} before, "
            f"{load_average()} after.",
            "",
            f"OpenBLAS (NumPy, 1 thread, OPENBLAS_CORETYPE/OPENBLAS_L2_SIZE cleared): {blas}.",
            "Per-core peak (bench/kernels/peak_fma.c, fused multiply-adds of the widest "
            + (
                "vectors): not measured (no clang-16)."
                if peak is None
                else f"vectors): f32 {peak[0]:.0f}, f64 {peak[0] / 2:.0f} GFLOP/s."
            ),
            "",
            "NumPy's peer of a quantized M·x is the f32 sgemv of the same shape (4× the bytes of"
            " FP8 weights, 2× those of f16). Last column: GB/s of weights read by the best mx build.",
            "",
            "| kernel | mx | mx contract | NumPy (OpenBLAS) | best mx / NumPy | best mx, % of peak | weights GB/s |",
            "|---|---|---|---|---|---|---|",
            *rows,
        ]
    )
    out.mkdir(parents=True, exist_ok=True)
    peer.close()
    (out / "large.md").write_text(text + "\n")
    return text


if __name__ == "__main__":
    script_main(__doc__, measure, _numpy_serve)

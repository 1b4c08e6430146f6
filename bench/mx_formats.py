"""MXFP4 matvec: packed block-scaled FP4 weights × an f32 vector against NumPy's f32 sgemv.

usage: python -m bench.mx_formats [--quick] [--out DIR]     (also run by bench/run.py)

W is R×K in OCP MXFP4: f4e2m1fn elements packed two per byte (`matrix.*_load ... packed`),
one f8e8m0fnu scale per 32 consecutive elements of a row. mx: one `func.func` doing
`column_major_load packed` → `arbfp.scaled_convert_from` → `matrix.matvec` (decoded in
registers, nothing materialized), strict and with `fastmath<contract>`, compiled by
`mx.jit.compile_module`; the row-major layout (decoded element by element) for the
square shape. NumPy: `np.dot(W, x, out=y)` on the f32 matrix of the same values (C order),
single-threaded OpenBLAS in its own process (`bench.run.numpy_env`, threadpoolctl). Copy
limit: `np.copyto` of the packed weight and scale bytes (the rate at which one core streams
those bytes through memory). Times are thread CPU time, median of 5 reps of ≥ 50 ms.
Results are checked against a float64 product of the weights decoded by ml_dtypes.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import ml_dtypes
import numpy as np
import numpy.typing as npt

from bench.timing import time_per_op

ROOT = Path(__file__).resolve().parent.parent
REPS, MIN_MS, BLOCK = 5, 50.0, 32
Array = npt.NDArray[np.uint8]


@dataclass(frozen=True)
class Case:
    rows: int
    depth: int
    layout: str = "column_major"

    @property
    def label(self) -> str:
        layout = self.layout.replace("_", "-")
        return f"MXFP4 W·x {self.rows}×{self.depth} ({layout} W)"

    @property
    def weight_bytes(self) -> int:
        """Packed elements and scales."""
        return self.rows * self.depth // 2 + self.rows * self.depth // BLOCK


def cases(quick: bool) -> list[Case]:
    if quick:
        return [Case(1024, 1024)]
    return [
        Case(4096, 4096),
        Case(11008, 4096),
        Case(4096, 4096, "row_major"),
    ]


def operands(c: Case) -> tuple[Array, Array, npt.NDArray[np.float32]]:
    """(packed weights in the case's layout, column-major scale codes, x):
    random FP4 codes, scales 2^-3 .. 2^3."""
    rng = np.random.default_rng(0)
    packed = rng.integers(0, 256, c.rows * c.depth // 2, dtype=np.uint8)
    scales = rng.integers(124, 131, c.rows * c.depth // BLOCK, dtype=np.uint8)
    x = rng.standard_normal(c.depth).astype(np.float32)
    return packed, scales, x


def dequantized(c: Case, packed: Array, scales: Array) -> npt.NDArray[np.float32]:
    """W as f32 (exact), decoded with ml_dtypes: row-major R×K."""
    nibbles = np.empty(packed.size * 2, np.uint8)
    nibbles[0::2], nibbles[1::2] = packed & 15, packed >> 4
    values = nibbles.view(ml_dtypes.float4_e2m1fn).astype(np.float32)
    w = (
        values.reshape(c.depth, c.rows).T
        if c.layout == "column_major"
        else values.reshape(c.rows, c.depth)
    )
    s = np.ldexp(1.0, scales.astype(np.int32) - 127).astype(np.float32)
    s = s.reshape(c.depth // BLOCK, c.rows).T
    return np.ascontiguousarray(w * np.repeat(s, BLOCK, axis=1))


def _module(c: Case, contract: bool) -> str:
    r, k, fm = c.rows, c.depth, " fastmath<contract>" if contract else ""
    q, s, f = (
        f"!matrix.matrix<{r}x{k}xi4>",
        f"!matrix.matrix<{r}x{k // BLOCK}xi8>",
        f"!matrix.matrix<{r}x{k}xf32>",
    )
    return f"""func.func @f(%w: memref<?xi8>, %s: memref<?xi8>, %x: memref<?xf32>, %y: memref<?xf32>) {{
  %c0 = arith.constant 0 : index
  %q = matrix.{c.layout}_load %w[0] packed : memref<?xi8> -> {q}
  %sc = matrix.column_major_load %s[0] : memref<?xi8> -> {s}
  %m = arbfp.scaled_convert_from f4e2m1fn %q, %sc block {BLOCK} : {q}, {s} to {f}
  %v = vector.load %x[%c0] : memref<?xf32>, vector<{k}xf32>
  %r = matrix.matvec %m, %v{fm} : {f}, vector<{k}xf32> -> vector<{r}xf32>
  vector.store %r, %y[%c0] : memref<?xf32>, vector<{r}xf32>
  func.return
}}"""


def _median_ns(fn: Callable[[], object]) -> float:
    return statistics.median(time_per_op(fn, 1, REPS, MIN_MS))


def time_mx(c: Case) -> dict[str, float]:
    """ns per matvec, strict and contract; asserts the results."""
    from mx.jit import compile_module

    packed, scales, x = operands(c)
    w = dequantized(c, packed, scales)
    want = w.astype(np.float64) @ x.astype(np.float64)
    bound = (c.depth + 2) * float(np.finfo(np.float32).eps)
    bound *= np.abs(w).astype(np.float64) @ np.abs(x).astype(np.float64)
    y = np.zeros(c.rows, np.float32)
    out: dict[str, float] = {}
    for contract in (False, True):
        f = compile_module(_module(c, contract))["f"]
        f(packed, scales, x, y)
        assert np.all(np.abs(y - want) <= bound), c.label
        name = "mx contract" if contract else "mx"
        out[name] = _median_ns(lambda f=f: f(packed, scales, x, y))
    return out


def _numpy_main(quick: bool) -> None:
    from threadpoolctl import (  # pyright: ignore[reportMissingImports]
        threadpool_info,
        threadpool_limits,
    )

    times: dict[str, dict[str, float]] = {}
    with threadpool_limits(1):
        for c in cases(quick):
            packed, scales, x = operands(c)
            w = dequantized(c, packed, scales)
            y = np.empty(c.rows, np.float32)
            source = np.concatenate([packed, scales])
            copy = np.empty_like(source)
            times[c.label] = {
                "sgemv": _median_ns(lambda w=w, x=x, y=y: np.dot(w, x, out=y)),
                "copy": _median_ns(
                    lambda s=source, d=copy: np.copyto(d, s)  # pyright: ignore[reportUnknownLambdaType]
                ),
            }
        blas = [
            f"{i.get('internal_api')} {i.get('version')} {i.get('architecture')}"
            for i in threadpool_info()
        ]
    json.dump({"times": times, "blas": "; ".join(blas)}, sys.stdout)


def _numpy_process(quick: bool) -> tuple[dict[str, dict[str, float]], str]:
    from bench.run import numpy_env

    p = subprocess.run(
        [sys.executable, "-m", "bench.mx_formats", "--numpy"]
        + (["--quick"] if quick else []),
        capture_output=True,
        text=True,
        env=numpy_env(),
        cwd=ROOT,
        check=True,
    )
    data = json.loads(p.stdout)
    return data["times"], data["blas"]


def _cpu() -> str:
    for line in Path("/proc/cpuinfo").read_text().splitlines():
        if line.startswith("model name"):
            return line.split(":", 1)[1].strip()
    return "unknown CPU"


def measure(out: Path, quick: bool = False) -> str:
    """Runs every case; writes `mx_formats.md` into `out` and returns it."""
    print("MX formats: NumPy ...", flush=True)
    numpy_ns, blas = _numpy_process(quick)
    rows: list[str] = []
    for c in cases(quick):
        print(f"MX formats: mx {c.label} ...", flush=True)
        mx = time_mx(c)
        best = min(mx.values())
        peer = numpy_ns[c.label]
        gbs = c.weight_bytes / best
        copy_gbs = c.weight_bytes / peer["copy"]
        rows.append(
            f"| {c.label} | {mx['mx'] / 1e6:.2f} ms | {mx['mx contract'] / 1e6:.2f} ms "
            f"| {peer['sgemv'] / 1e6:.2f} ms | **{peer['sgemv'] / best:.2f}×** "
            f"| {gbs:.1f} GB/s | {copy_gbs:.1f} GB/s | {gbs / copy_gbs:.0%} |"
        )
    text = "\n".join(
        [
            "### MXFP4 matvec (thread CPU time, median of 5 reps of ≥ 50 ms)",
            "",
            f"CPU: {_cpu()}. OpenBLAS (NumPy, 1 thread, OPENBLAS_CORETYPE/"
            f"OPENBLAS_L2_SIZE cleared): {blas}. Weights: f4e2m1fn packed two per byte, "
            f"one f8e8m0fnu scale per {BLOCK} elements of a row.",
            "",
            "| kernel | mx | mx contract | NumPy sgemv (f32 W) | sgemv / best mx "
            "| mx weight bytes/s | copy of the same bytes | of the copy rate |",
            "|---|---|---|---|---|---|---|---|",
            *rows,
        ]
    )
    out.mkdir(parents=True, exist_ok=True)
    (out / "mx_formats.md").write_text(text + "\n")
    return text


def main() -> None:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--quick", action="store_true")
    ap.add_argument(
        "--numpy", action="store_true", help="(internal) time the NumPy peer"
    )
    ap.add_argument("--out", type=Path, default=ROOT / "bench" / "results")
    args = ap.parse_args()
    if args.numpy:
        _numpy_main(args.quick)
        return
    print(measure(args.out, args.quick))


if __name__ == "__main__":
    os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
    main()

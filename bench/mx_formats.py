"""MX matvec: block-scaled FP4/FP8 weights × an f32 vector against NumPy's f32 sgemv.

usage: python -m bench.mx_formats [--quick] [--out DIR]     (also run by bench/run.py)

W is R×K in OCP MXFP4 (f4e2m1fn elements packed two per byte, `matrix.*_load ... packed`)
or MXFP8 (f8e4m3fn, one byte each), one f8e8m0fnu scale per 32 consecutive elements of a
row. mx: one `func.func` doing `column_major_load`/`row_major_load` → `arbfp.scaled_convert_from`
→ `matrix.matvec` (decoded in registers, nothing materialized), strict and with
`fastmath<contract>`, compiled by `mx.jit.compile_module`; both layouts for the square
shape. NumPy: `np.dot(W, x, out=y)` on the f32 matrix of the same values (C order),
single-threaded OpenBLAS in its own process (`bench.blas_peer`). Copy limit: `np.copyto`
of the weight and scale bytes (the rate at which one core streams those bytes through
memory). Times are thread CPU time, median of 5 reps of ≥ 50 ms. Results are checked
against a float64 product of the weights decoded by ml_dtypes.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import ml_dtypes
import numpy as np
import numpy.typing as npt

from bench.blas_peer import (
    cpu_name,
    load_average,
    median_ns,
    peer_times,
    script_main,
)

BLOCK = 32
Array = npt.NDArray[np.uint8]
NAMES = {"f4e2m1fn": "MXFP4", "f8e4m3fn": "MXFP8"}


@dataclass(frozen=True)
class Case:
    rows: int
    depth: int
    layout: str = "column_major"
    format: str = "f4e2m1fn"

    @property
    def label(self) -> str:
        layout = self.layout.replace("_", "-")
        return f"{NAMES[self.format]} W·x {self.rows}×{self.depth} ({layout} W)"

    @property
    def packed(self) -> bool:
        return self.format == "f4e2m1fn"

    @property
    def weight_bytes(self) -> int:
        """Elements (packed for FP4) and scales."""
        elements = self.rows * self.depth
        return (elements // 2 if self.packed else elements) + elements // BLOCK


def cases(quick: bool) -> list[Case]:
    if quick:
        return [Case(1024, 1024, "column_major", f) for f in NAMES]
    return [
        Case(rows, 4096, layout, f)
        for f in NAMES
        for rows, layout in (
            (4096, "column_major"),
            (11008, "column_major"),
            (4096, "row_major"),
        )
    ]


def operands(c: Case) -> tuple[Array, Array, npt.NDArray[np.float32]]:
    """(weight bytes in the case's layout, column-major scale codes, x):
    random FP4 codes or finite FP8 codes, scales 2^-3 .. 2^3."""
    rng = np.random.default_rng(0)
    count = c.rows * c.depth // (2 if c.packed else 1)
    weights = rng.integers(0, 256, count, dtype=np.uint8)
    if not c.packed:
        weights[(weights & 0x7F) == 0x7F] = 0x38  # NaN codes: 1.0
    scales = rng.integers(124, 131, c.rows * c.depth // BLOCK, dtype=np.uint8)
    x = rng.standard_normal(c.depth).astype(np.float32)
    return weights, scales, x


def dequantized(c: Case, weights: Array, scales: Array) -> npt.NDArray[np.float32]:
    """W as f32 (exact), decoded with ml_dtypes: row-major R×K."""
    if c.packed:
        nibbles = np.empty(weights.size * 2, np.uint8)
        nibbles[0::2], nibbles[1::2] = weights & 15, weights >> 4
        values = nibbles.view(ml_dtypes.float4_e2m1fn).astype(np.float32)
    else:
        values = weights.view(ml_dtypes.float8_e4m3fn).astype(np.float32)
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
    element, packed = ("i4", " packed") if c.packed else ("i8", "")
    q, s, f = (
        f"!matrix.matrix<{r}x{k}x{element}>",
        f"!matrix.matrix<{r}x{k // BLOCK}xi8>",
        f"!matrix.matrix<{r}x{k}xf32>",
    )
    return f"""func.func @f(%w: memref<?xi8>, %s: memref<?xi8>, %x: memref<?xf32>, %y: memref<?xf32>) {{
  %c0 = arith.constant 0 : index
  %q = matrix.{c.layout}_load %w[0]{packed} : memref<?xi8> -> {q}
  %sc = matrix.column_major_load %s[0] : memref<?xi8> -> {s}
  %m = arbfp.scaled_convert_from {c.format} %q, %sc block {BLOCK} : {q}, {s} to {f}
  %v = vector.load %x[%c0] : memref<?xf32>, vector<{k}xf32>
  %r = matrix.matvec %m, %v{fm} : {f}, vector<{k}xf32> -> vector<{r}xf32>
  vector.store %r, %y[%c0] : memref<?xf32>, vector<{r}xf32>
  func.return
}}"""


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
        out[name] = median_ns(lambda f=f: f(packed, scales, x, y))
    return out


def _numpy_times(quick: bool) -> dict[str, dict[str, float]]:
    """sgemv of the decoded weights and a copy of their bytes, per case."""
    times: dict[str, dict[str, float]] = {}
    for c in cases(quick):
        weights, scales, x = operands(c)
        w = dequantized(c, weights, scales)
        y = np.empty(c.rows, np.float32)
        source = np.concatenate([weights, scales])
        copy = np.empty_like(source)
        times[c.label] = {
            "sgemv": median_ns(lambda w=w, x=x, y=y: np.dot(w, x, out=y)),
            "copy": median_ns(
                lambda s=source, d=copy: np.copyto(d, s)  # pyright: ignore[reportUnknownLambdaType]
            ),
        }
    return times


def measure(out: Path, quick: bool = False) -> str:
    """Runs every case; writes `mx_formats.md` into `out` and returns it."""
    print("MX formats: NumPy ...", flush=True)
    load = load_average()
    numpy_ns, blas = peer_times("bench.mx_formats", quick)
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
            "### MX matvec (thread CPU time, median of 5 reps of ≥ 50 ms)",
            "",
            f"CPU: {cpu_name()}; 1-minute load average {load} at the start, "
            f"{load_average()} at the end. OpenBLAS (NumPy, 1 "
            f"thread, OPENBLAS_CORETYPE/OPENBLAS_L2_SIZE cleared): {blas}. Weights: MXFP4 "
            f"(f4e2m1fn packed two per byte) or MXFP8 (f8e4m3fn), one f8e8m0fnu scale per "
            f"{BLOCK} elements of a row.",
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


if __name__ == "__main__":
    script_main(__doc__, measure, _numpy_times)

"""Spellings of one weight-times-vector: the same MX matvec written the ways a user
writes it, timed per weight relative to the fastest spelling of the same format (every
ratio should be at most 1.15×), with the kernel the lowering reports for it.

usage: python -m bench.spellings [--quick] [--out DIR]

Weights R×K in MXFP4 (f4e2m1fn packed two per byte) or MXFP8 (f8e4m3fn), one f8e8m0fnu
scale per 32 elements of a row, column- or row-major; x and y f32; strict (no
`contract`). Spellings:
- `literal`: offsets `[0]`;
- `index`: offsets are `index` arguments (0 at run time);
- `layers`: a `scf.for` over 4 layers, weights and scales of layer i at offsets `i·size`
  (the time is per layer: 4× the weights);
- `odd K`: K − 32 columns (not a multiple of the kernel's 64-column chunk), literal offsets;
- `matrix args`: codes and scales as `!matrix.matrix` arguments (one byte per code;
  F-ordered arrays for column-major weights, C-ordered for row-major ones, the
  scales in the same order: row-major scales are copied into columns per call).
Like with like: every spelling reads the same bytes of weights per round — `layers`
its 4 layers in one call, the others one layer a call from 4 copies of the weights
in turn — so no spelling runs from a warmer cache than another.
Thread CPU time, median of 5 reps of ≥ 30 ms, the spellings of a format interleaved
(`bench.timing.time_interleaved`); results checked bit for bit against the `literal`
spelling (the same k order).
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from bench.blas_peer import cpu_name, load_average, script_main
from bench.timing import time_interleaved

BLOCK = 32
LAYERS = 4
SPELLINGS = ("literal", "index", "layers", "odd K", "matrix args")
NAMES = {"f4e2m1fn": "MXFP4", "f8e4m3fn": "MXFP8"}


@dataclass(frozen=True)
class Case:
    format: str
    layout: str
    spelling: str
    rows: int
    depth: int

    @property
    def packed(self) -> bool:
        return self.format == "f4e2m1fn"

    @property
    def cols(self) -> int:
        return self.depth - BLOCK if self.spelling == "odd K" else self.depth

    @property
    def layers(self) -> int:
        return LAYERS if self.spelling == "layers" else 1

    @property
    def weights(self) -> int:
        """Weights read per call."""
        return self.layers * self.rows * self.cols


def _types(c: Case) -> tuple[str, str, str]:
    element = "i4" if c.packed else "i8"
    return (
        f"!matrix.matrix<{c.rows}x{c.cols}x{element}>",
        f"!matrix.matrix<{c.rows}x{c.cols // BLOCK}xi8>",
        f"!matrix.matrix<{c.rows}x{c.cols}xf32>",
    )


def source(c: Case) -> str:
    q, s, w = _types(c)
    r, k = c.rows, c.cols
    packed = " packed" if c.packed else ""
    convert = f"""%m = arbfp.scaled_convert_from {c.format} %q, %sc block {BLOCK} : {q}, {s} to {w}
    %r = matrix.matvec %m, %v : {w}, vector<{k}xf32> -> vector<{r}xf32>"""
    if c.spelling == "matrix args":  # (the comment: a module of its own per layout)
        return f"""// {c.layout} arguments
func.func @f(%q: {q}, %sc: {s}, %x: memref<?xf32>, %y: memref<?xf32>) {{
  %c0 = arith.constant 0 : index
  %v = vector.load %x[%c0] : memref<?xf32>, vector<{k}xf32>
    {convert}
  vector.store %r, %y[%c0] : memref<?xf32>, vector<{r}xf32>
  func.return
}}"""
    loads = f"""%q = matrix.{c.layout}_load %w[OFFSET]{packed} : memref<?xi8> -> {q}
    %sc = matrix.column_major_load %s[SCALES] : memref<?xi8> -> {s}
    {convert}"""
    if c.spelling == "layers":
        body = loads.replace("OFFSET", "%o").replace("SCALES", "%so")
        return f"""func.func @f(%w: memref<?xi8>, %s: memref<?xi8>, %x: memref<?xf32>, %y: memref<?xf32>) {{
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %n = arith.constant {c.layers} : index
  %size = arith.constant {r * k} : index
  %ssize = arith.constant {r * k // BLOCK} : index
  %rows = arith.constant {r} : index
  %v = vector.load %x[%c0] : memref<?xf32>, vector<{k}xf32>
  scf.for %i = %c0 to %n step %c1 {{
    %o = arith.muli %i, %size : index
    %so = arith.muli %i, %ssize : index
    {body}
    %at = arith.muli %i, %rows : index
    vector.store %r, %y[%at] : memref<?xf32>, vector<{r}xf32>
  }}
  func.return
}}"""
    index = c.spelling == "index"
    body = loads.replace("OFFSET", "%o" if index else "0")
    body = body.replace("SCALES", "%so" if index else "0")
    extra = ", %o: index, %so: index" if index else ""
    return f"""func.func @f(%w: memref<?xi8>, %s: memref<?xi8>, %x: memref<?xf32>, %y: memref<?xf32>{extra}) {{
  %c0 = arith.constant 0 : index
  %v = vector.load %x[%c0] : memref<?xf32>, vector<{k}xf32>
    {body}
  vector.store %r, %y[%c0] : memref<?xf32>, vector<{r}xf32>
  func.return
}}"""


def operands(c: Case) -> tuple[list[Any], np.ndarray]:
    """The call's arguments (y last but for `index`'s offsets) and y."""
    rng = np.random.default_rng(0)
    count = c.weights
    codes = rng.integers(0, 256, count // 2 if c.packed else count, dtype=np.uint8)
    if not c.packed:
        codes[(codes & 0x7F) == 0x7F] = 0x38  # NaN codes: 1.0
    scales = rng.integers(124, 131, count // BLOCK, dtype=np.uint8)
    x = rng.standard_normal(c.cols).astype(np.float32)
    y = np.zeros(c.layers * c.rows, np.float32)
    if c.spelling == "matrix args":
        if c.packed:
            nibbles = np.empty(count, np.uint8)
            nibbles[0::2], nibbles[1::2] = codes & 15, codes >> 4
            codes = nibbles
        if c.layout == "column_major":  # (R, K) F-ordered arrays
            q = codes.reshape(c.cols, c.rows).T
            s = scales.reshape(c.cols // BLOCK, c.rows).T
        else:  # C-ordered
            q = codes.reshape(c.rows, c.cols)
            s = np.ascontiguousarray(scales.reshape(c.cols // BLOCK, c.rows).T)
        return [q, s, x, y], y
    args: list[Any] = [codes, scales, x, y]
    if c.spelling == "index":
        args += [0, 0]
    return args, y


def cases(quick: bool) -> list[Case]:
    rows, depth = (512, 1024) if quick else (2048, 4096)
    return [
        Case(fmt, layout, spelling, rows, depth)
        for fmt in NAMES
        for layout in ("column_major", "row_major")
        for spelling in SPELLINGS
    ]


def measure(out: Path, quick: bool = False) -> str:
    """Times every spelling; writes `spellings.md` into `out` and returns it."""
    from mx.jit import compile_module
    from mx.lowering.matrix_to_affine.kernel_remarks import recording

    load = load_average()
    rows: list[str] = []
    groups: dict[tuple[str, str], list[Case]] = {}
    for c in cases(quick):
        groups.setdefault((c.format, c.layout), []).append(c)
    for (fmt, layout), group in groups.items():
        print(f"spellings: {NAMES[fmt]} {layout} ...", flush=True)
        calls: dict[str, Any] = {}
        remarks: dict[str, str] = {}
        reference: np.ndarray | None = None
        for c in group:
            copies = [operands(c) for _ in range(LAYERS // c.layers)]
            args, y = copies[0]
            with recording() as kernels:  # (the variant of the arguments' orders)
                f = compile_module(source(c))["f"]
                f(*args)
            if c.spelling in ("literal", "index", "matrix args"):
                if reference is None:
                    reference = y.copy()
                assert np.array_equal(y.view(np.uint32), reference.view(np.uint32)), c
            turns = itertools.cycle([a for a, _ in copies])
            calls[c.spelling] = lambda f=f, t=turns: f(*next(t))  # pyright: ignore[reportUnknownLambdaType]
            remarks[c.spelling] = kernels[-1].message.removeprefix("kernel: ")
        times = time_interleaved(calls, 1, 5, 30.0)
        per_weight = {
            c.spelling: float(np.median(times[c.spelling])) * 1e3 / c.weights
            for c in group
        }
        best = min(per_weight.values())
        for c in group:
            ps = per_weight[c.spelling]
            ratio = ps / best
            flag = "" if ratio <= 1.15 else " ✗"
            rows.append(
                f"| {NAMES[fmt]} | {layout.replace('_', '-')} | {c.spelling} "
                f"| {c.rows}×{c.cols}{' ×4' if c.layers > 1 else ''} "
                f"| {ps:.0f} ps | **{ratio:.2f}×**{flag} | {remarks[c.spelling]} |"
            )
    text = "\n".join(
        [
            "### Spellings of an MX matvec (time per weight, thread CPU time, median of 5 reps)",
            "",
            f"CPU: {cpu_name()}; 1-minute load average {load} at the start, "
            f"{load_average()} at the end (other processes share the machine: ratios "
            "within one format are measured interleaved, absolute times are noisy).",
            "",
            "| weights | layout | spelling | shape | per weight | vs fastest | kernel (remark) |",
            "|---|---|---|---|---|---|---|",
            *rows,
            "",
        ]
    )
    (out / "spellings.md").write_text(text)
    return text


if __name__ == "__main__":
    script_main(__doc__, measure, lambda quick: {})

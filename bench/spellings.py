"""Spellings of one weight-times-vector: the same decode matvec written the ways a user
writes it, timed per weight relative to the fastest spelling of the same format and
layout (every ratio should be at most 1.15×), with the kernel the lowering reports for it.

usage: python -m bench.spellings [--quick] [--only NAME ...] [--out DIR]

Weights R×K, x and y f32, strict (no `contract`), column- or row-major, in the formats of
bench/decode.py: MXFP4 (f4e2m1fn packed two per byte), MXFP8 (f8e4m3fn, f8e5m2) with one
f8e8m0fnu scale per 32 elements of a row (`scaled_convert_from`); FP8 (f8e4m3fn, f8e5m2)
times a per-tensor f32 scale argument (`convert_from`, `matrix.splat`, `matrix.mul`);
f16 and bf16 (`matrix.cast`). Spellings:
- `literal`: offsets `[0]`, K = 4096 (a power of two: rows 2, 4 or 8 KB apart);
- `index`: offsets are `index` arguments (0 at run time);
- `layers`: a `scf.for` over 4 layers, weights (and scales) of layer i at offsets
  `i·size` (the time is per layer: 4× the weights);
- `odd K`: K − 32 columns (4064: not a power of two, nor a multiple of the kernels'
  64-column chunks), literal offsets;
- `matrix args`: the codes (FP4 one a byte), f16/bf16 weights and the scales as
  `!matrix.matrix` arguments (F-ordered arrays for column-major weights, C-ordered for
  row-major ones, the scales in the same order: row-major scales are copied into columns
  per call).
Cold weights, like with like: each spelling's calls rotate over copies of its weights
(and scales) that together take 3× the host's last-level cache (`bench.decode.COLD_BYTES`),
so every call reads them from DRAM, as a loop over a model's layers does; the copies
start at eight places in a page in turn (`bench.decode.PAGE_OFFSETS`), the same for every
spelling, so that no spelling is timed on where malloc happened to put its arrays. (With weights
that fit the cache, as the 4 copies of session 23's runs did in a 480 MiB L3, a
spelling's time depended on how much of its copies the cache still held when its turn
came: a call ran at 146 ps a weight after another spelling's turn and 77 twenty
calls later.)
One thread (`MX_NUM_THREADS=1`), thread CPU time, median of 5 reps of ≥ 30 ms, the
spellings of a format and layout interleaved (`bench.timing.time_interleaved`); results
checked bit for bit against the `literal` spelling (the same k order).

Before the timing every callable runs once over all of its copies, in turns (`_warm`).
Memory read for the first time since it was written ran slower on this VM for about one
pass: 4 sets of the same copies of one spelling, timed interleaved in one process, ran at
180, 154, 137, 121 ps a weight (the first allocated slowest, each settling to ~121 after
one pass over its copies); one pass first made them 124, 123, 121. Without it the
spelling timed first in a group (`literal`) looked the slowest (MXFP8 e4m3 column-major
literal 2.00× of `matrix args`, timed last, in session 30's first run).
"""

from __future__ import annotations

import argparse
import itertools
import os
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from bench.blas_peer import cpu_name, load_average
from bench.decode import (
    FORMATS,
    PAGE_OFFSETS,
    Format,
    cold_copies,
    placed_copy,
    random_codes,
)
from bench.timing import time_interleaved

ROOT = Path(__file__).resolve().parent.parent
BLOCK = 32
LAYERS = 4
SCALE = 0.75
"""The per-tensor scale of the FP8 rows."""
BIG_ARRAY = 1 << 16
"""Arguments of at least this many bytes are weights (or their scales): each
call of the rotation gets copies of its own."""
SPELLINGS = ("literal", "index", "layers", "odd K", "matrix args")


@dataclass(frozen=True)
class Case:
    format: Format
    layout: str
    spelling: str
    rows: int
    depth: int

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


def _decoded(c: Case, q: str, s: str, w: str) -> str:
    """The ops from the codes `%q` (type `q`; scales `%sc` of type `s`) to the
    f32 weights `%m` (type `w`)."""
    f = c.format
    if f.kind == "mx":
        return f"%m = arbfp.scaled_convert_from {f.element} %q, %sc block {BLOCK} : {q}, {s} to {w}"
    if f.kind == "fp8":
        return f"""%d = arbfp.convert_from {f.element} %q : {q} to {w}
    %k = matrix.splat %scale : {w}
    %m = matrix.mul %d, %k : {w}"""
    return f"%m = matrix.cast %q : {q} to {w}"


def source(c: Case) -> str:
    f, r, k = c.format, c.rows, c.cols
    code = "i4" if f.packed else f.element if f.kind == "float" else "i8"
    q = f"!matrix.matrix<{r}x{k}x{code}>"
    s = f"!matrix.matrix<{r}x{k // BLOCK}xi8>"
    w = f"!matrix.matrix<{r}x{k}xf32>"
    memref = f"memref<?x{f.element}>" if f.kind == "float" else "memref<?xi8>"
    scale_arg = {"mx": "%s: memref<?xi8>, ", "fp8": "%scale: f32, "}.get(f.kind, "")
    product = f"""{_decoded(c, q, s, w)}
    %r = matrix.matvec %m, %v : {w}, vector<{k}xf32> -> vector<{r}xf32>"""
    if c.spelling == "matrix args":  # (the comment: a module of its own per layout)
        scale_arg = {"mx": f"%sc: {s}, ", "fp8": "%scale: f32, "}.get(f.kind, "")
        return f"""// {c.layout} arguments
func.func @f(%q: {q}, {scale_arg}%x: memref<?xf32>, %y: memref<?xf32>) {{
  %c0 = arith.constant 0 : index
  %v = vector.load %x[%c0] : memref<?xf32>, vector<{k}xf32>
    {product}
  vector.store %r, %y[%c0] : memref<?xf32>, vector<{r}xf32>
  func.return
}}"""
    packed = " packed" if f.packed else ""
    loads = f"%q = matrix.{c.layout}_load %w[OFFSET]{packed} : {memref} -> {q}"
    if f.kind == "mx":
        loads += f"""
    %sc = matrix.column_major_load %s[SCALES] : memref<?xi8> -> {s}"""
    loads += f"\n    {product}"
    if c.spelling == "layers":
        body = loads.replace("OFFSET", "%o").replace("SCALES", "%so")
        return f"""func.func @f(%w: {memref}, {scale_arg}%x: memref<?xf32>, %y: memref<?xf32>) {{
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
    return f"""func.func @f(%w: {memref}, {scale_arg}%x: memref<?xf32>, %y: memref<?xf32>{extra}) {{
  %c0 = arith.constant 0 : index
  %v = vector.load %x[%c0] : memref<?xf32>, vector<{k}xf32>
    {body}
  vector.store %r, %y[%c0] : memref<?xf32>, vector<{r}xf32>
  func.return
}}"""


def operands(c: Case) -> tuple[list[Any], np.ndarray]:
    """The call's arguments and y."""
    f = c.format
    rng = np.random.default_rng(0)
    count = c.weights
    codes = random_codes(f, (count,), rng)
    scales = rng.integers(124, 131, count // BLOCK, dtype=np.uint8)
    x = rng.standard_normal(c.cols).astype(np.float32)
    y = np.zeros(c.layers * c.rows, np.float32)
    middle: list[Any] = {"mx": [scales], "fp8": [np.float32(SCALE)]}.get(f.kind, [])
    if c.spelling == "matrix args":
        if c.layout == "column_major":  # (R, K) F-ordered arrays
            q = codes.reshape(c.cols, c.rows).T
            s = scales.reshape(c.cols // BLOCK, c.rows).T
        else:  # C-ordered
            q = codes.reshape(c.rows, c.cols)
            s = np.ascontiguousarray(scales.reshape(c.cols // BLOCK, c.rows).T)
        if f.kind == "mx":
            middle = [s]
        return [q, *middle, x, y], y
    if f.packed:
        codes = codes[0::2] | (codes[1::2] << 4)
    args: list[Any] = [codes, *middle, x, y]
    if c.spelling == "index":
        args += [0, 0]
    return args, y


def _cold_copies(calls: list[list[Any]]) -> list[list[list[Any]]]:
    """For each call's `args`, copies of them with copies of its weights (and
    scales; x and y shared): together at least `COLD_BYTES`, so that each
    call reads its weights from DRAM. Copy i starts at `PAGE_OFFSETS[i % 8]`
    in a page, the same for every spelling, and the spellings' copies are
    allocated in turns (copy 0 of each, copy 1 of each, ...): allocated one
    spelling after another, the copies allocated first were read more slowly
    even after a pass over all of them (FP8 e5m2 row-major, 2048 x 4096, the
    `literal` and `index` kernels on the same two sets of copies, ps a
    weight: 160 and 157 on the first set, 152 and 146 on the second), and
    `literal` was the slowest spelling of most rows."""
    bigs = [
        [isinstance(a, np.ndarray) and a.nbytes >= BIG_ARRAY for a in args]
        for args in calls
    ]
    counts = [
        cold_copies(sum(a.nbytes for a, big in zip(args, b, strict=True) if big))
        for args, b in zip(calls, bigs, strict=True)
    ]
    copies: list[list[list[Any]]] = [[] for _ in calls]
    for i in range(max(counts)):
        for args, big, count, made in zip(calls, bigs, counts, copies, strict=True):
            if i < count:
                at = PAGE_OFFSETS[i % len(PAGE_OFFSETS)]
                made.append(
                    [
                        placed_copy(a, at) if b else a
                        for a, b in zip(args, big, strict=True)
                    ]
                )
    return copies


def _warm(calls: dict[str, Any], rotations: dict[str, int]) -> None:
    """Each call once over all of its copies (`rotations[name]` calls), the
    callables in turns: the module docs say why."""
    for turn in range(max(rotations.values())):
        for name, call in calls.items():
            if turn < rotations[name]:
                call()


def cases(quick: bool, only: list[str] | None = None) -> list[Case]:
    rows, depth = (512, 1024) if quick else (2048, 4096)
    return [
        Case(f, layout, spelling, rows, depth)
        for f in FORMATS
        if not only or f.name in only
        for layout in ("column_major", "row_major")
        for spelling in SPELLINGS
    ]


def measure(out: Path, quick: bool = False, only: list[str] | None = None) -> str:
    """Times every spelling; writes `spellings.md` into `out` and returns it."""
    from mx.jit import compile_module
    from mx.lowering.matrix_to_affine.kernel_remarks import recording

    load = load_average()
    rows: list[str] = []
    groups: dict[tuple[str, str], list[Case]] = {}
    for c in cases(quick, only):
        groups.setdefault((c.format.name, c.layout), []).append(c)
    for (name, layout), group in groups.items():
        print(f"spellings: {name} {layout} ...", flush=True)
        calls: dict[str, Any] = {}
        rotations: dict[str, int] = {}
        remarks: dict[str, str] = {}
        reference: np.ndarray | None = None
        arguments = [operands(c) for c in group]
        every_copy = _cold_copies([args for args, _ in arguments])
        for c, (args, y), copies in zip(group, arguments, every_copy, strict=True):
            with recording() as kernels:  # (the variant of the arguments' orders)
                f = compile_module(source(c))["f"]
                f(*args)
            if c.spelling in ("literal", "index", "matrix args"):
                if reference is None:
                    reference = y.copy()
                assert np.array_equal(y.view(np.uint32), reference.view(np.uint32)), c
            turns = itertools.cycle(copies)
            calls[c.spelling] = lambda f=f, t=turns: f(*next(t))  # pyright: ignore[reportUnknownLambdaType]
            rotations[c.spelling] = len(copies)
            remarks[c.spelling] = kernels[-1].message.removeprefix("kernel: ")
        _warm(calls, rotations)
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
                f"| {name} | {layout.replace('_', '-')} | {c.spelling} "
                f"| {c.rows}×{c.cols}{' ×4' if c.layers > 1 else ''} "
                f"| {ps:.0f} ps | **{ratio:.2f}×**{flag} | {remarks[c.spelling]} |"
            )
    text = "\n".join(
        [
            "### Spellings of a decode matvec (time per weight, one thread, thread CPU "
            "time, median of 5 reps)",
            "",
            f"CPU: {cpu_name()}; 1-minute load average {load} at the start, "
            f"{load_average()} at the end (other processes share the machine: ratios "
            "within one format and layout are measured interleaved, absolute times "
            "are noisy).",
            "",
            "| weights | layout | spelling | shape | per weight | vs fastest | kernel (remark) |",
            "|---|---|---|---|---|---|---|",
            *rows,
            "",
        ]
    )
    out.mkdir(parents=True, exist_ok=True)
    (out / "spellings.md").write_text(text)
    return text


def main() -> None:
    # thread CPU time counts one thread: mx's OpenMP loops must not start others
    if os.environ.get("MX_NUM_THREADS") != "1":
        env = {**os.environ, "MX_NUM_THREADS": "1"}
        argv = [sys.executable, "-m", "bench.spellings", *sys.argv[1:]]
        os.execve(sys.executable, argv, env)
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--quick", action="store_true")
    ap.add_argument(
        "--only",
        nargs="+",
        metavar="NAME",
        choices=[f.name for f in FORMATS],
        help="formats to time (default: all)",
    )
    ap.add_argument("--out", type=Path, default=ROOT / "bench" / "results")
    args = ap.parse_args()
    print(measure(args.out, args.quick, args.only))


if __name__ == "__main__":
    main()

"""MX matvec: block-scaled FP4/FP8 weights × an f32 vector against NumPy's f32 sgemv;
MX quantize/dequantize and packed copies against NumPy + ml_dtypes and a copy (see
"conversions" below; `conversions_only()` runs just those rows).

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
from typing import Any

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
    times["conversions"] = _conversions_numpy(quick)
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
            "",
            conversion_table(quick, numpy_ns["conversions"]),
        ]
    )
    out.mkdir(parents=True, exist_ok=True)
    (out / "mx_formats.md").write_text(text + "\n")
    return text


# ----------------------------------------------------------------------------- conversions
#
# Quantize 16M f32 values to MXFP8 (e4m3) and MXFP4 (packed), dequantize them back, and
# copy packed i4 data: mx against ml_dtypes-based NumPy code and a copy of the same bytes.

CONVERSION_ROWS, CONVERSION_COLS, CHUNK = 4096, 4096, 256
"""The data is a column-major R×C matrix (the matvec's weight layout: each block of 32
runs along a row, its elements R apart in memory), converted CHUNK columns per step."""


@dataclass(frozen=True)
class Conversion:
    kind: str  # quantize, dequantize, copy
    fmt: str  # MXFP8, MXFP4

    @property
    def label(self) -> str:
        if self.kind == "copy":
            return "packed i4 load+store 4096×4096"
        if self.kind == "quantize":
            return f"quantize 16M f32 → {self.fmt}"
        return f"dequantize 16M {self.fmt} → f32"

    @property
    def element(self) -> tuple[str, str]:
        """(arbfp format, container type)."""
        return ("f8e4m3fn", "i8") if self.fmt == "MXFP8" else ("f4e2m1fn", "i4")

    @property
    def coded_bytes(self) -> int:
        n = CONVERSION_ROWS * CONVERSION_COLS
        return (n if self.fmt == "MXFP8" else n // 2) + n // BLOCK

    @property
    def moved_bytes(self) -> int:
        """Bytes read plus bytes written."""
        n = CONVERSION_ROWS * CONVERSION_COLS
        if self.kind == "copy":
            return n  # n/2 read, n/2 written
        return 4 * n + self.coded_bytes


def conversions(quick: bool) -> list[Conversion]:
    out = [
        Conversion(k, f) for f in ("MXFP8", "MXFP4") for k in ("quantize", "dequantize")
    ]
    return out[:2] if quick else [*out, Conversion("copy", "MXFP4")]


def _conversion_module(c: Conversion) -> str:
    """One function converting the whole matrix in CHUNK-column steps, each
    step its own statements with literal offsets (packed accesses at literal
    even offsets move whole bytes in vectors)."""
    r, w = CONVERSION_ROWS, CHUNK
    fmt, elem = c.element
    packed = " packed" if elem == "i4" else ""
    x, q = f"!matrix.matrix<{r}x{w}xf32>", f"!matrix.matrix<{r}x{w}x{elem}>"
    s = f"!matrix.matrix<{r}x{w // BLOCK}xi8>"
    steps: list[str] = []
    for k in range(CONVERSION_COLS // w):
        at, sat = k * r * w, k * r * w // BLOCK
        if c.kind == "quantize":
            steps.append(f"""  %m{k} = matrix.column_major_load %x[{at}] : memref<?xf32> -> {x}
  %q{k}, %s{k} = arbfp.scaled_convert_to {fmt} %m{k} block {BLOCK} : {x} to {q}, {s}
  matrix.column_major_store %q{k}, %q[{at}]{packed} : {q}, memref<?xi8>
  matrix.column_major_store %s{k}, %s[{sat}] : {s}, memref<?xi8>""")
        elif c.kind == "dequantize":
            steps.append(f"""  %q{k} = matrix.column_major_load %q[{at}]{packed} : memref<?xi8> -> {q}
  %s{k} = matrix.column_major_load %s[{sat}] : memref<?xi8> -> {s}
  %m{k} = arbfp.scaled_convert_from {fmt} %q{k}, %s{k} block {BLOCK} : {q}, {s} to {x}
  matrix.column_major_store %m{k}, %x[{at}] : {x}, memref<?xf32>""")
        else:
            steps.append(f"""  %m{k} = matrix.column_major_load %a[{at}] packed : memref<?xi8> -> {q}
  matrix.column_major_store %m{k}, %b[{at}] packed : {q}, memref<?xi8>""")
    args = {
        "quantize": "%x: memref<?xf32>, %q: memref<?xi8>, %s: memref<?xi8>",
        "dequantize": "%q: memref<?xi8>, %s: memref<?xi8>, %x: memref<?xf32>",
        "copy": "%a: memref<?xi8>, %b: memref<?xi8>",
    }[c.kind]
    body = "\n".join(steps)
    return f"""func.func @f({args}) {{
{body}
  func.return
}}"""


def _f32_data() -> npt.NDArray[np.float32]:
    """Random f32 values over a wide range (blocks with very different scales)."""
    rng = np.random.default_rng(1)
    n = CONVERSION_ROWS * CONVERSION_COLS
    return (rng.standard_normal(n) * np.exp2(rng.integers(-20, 20, n))).astype(
        np.float32
    )


def _blocks_first(x: npt.NDArray[Any]) -> npt.NDArray[Any]:
    """The column-major R×C data as row-major rows (each block contiguous)."""
    return np.ascontiguousarray(x.reshape(CONVERSION_COLS, CONVERSION_ROWS).T)


def numpy_quantize(
    x: npt.NDArray[np.float32], fmt: str
) -> tuple[npt.NDArray[np.uint8], npt.NDArray[np.uint8]]:
    """The NumPy peer (contiguous blocks of 32): OCP MX scales 2^(⌊log2 amax⌋ − emax),
    elements x / scale rounded to nearest even by ml_dtypes, saturated; MXFP4 codes
    packed two per byte (low nibble first). Returns (element bytes, scale codes)."""
    blocks = x.reshape(-1, BLOCK)
    amax = np.abs(blocks).max(axis=1)
    emax, dtype, largest = (
        (8, ml_dtypes.float8_e4m3fn, 448.0)
        if fmt == "MXFP8"
        else (2, ml_dtypes.float4_e2m1fn, 6.0)
    )
    _, exponent = np.frexp(amax)  # amax = m * 2^exponent, 0.5 <= m < 1
    shared = np.clip(exponent - 1 - emax, -127, 127)
    shared = np.where(amax == 0, -127, shared)
    scaled = blocks * np.ldexp(np.float32(1), -shared)[:, None]
    codes = np.clip(scaled, -largest, largest).astype(dtype).view(np.uint8)
    if fmt == "MXFP4":
        codes = codes.reshape(-1, 2)
        codes = ((codes[:, 0] & 15) | ((codes[:, 1] & 15) << 4)).astype(np.uint8)
    return codes.reshape(-1), (shared + 127).astype(np.uint8)


def numpy_dequantize(
    codes: npt.NDArray[np.uint8], scales: npt.NDArray[np.uint8], fmt: str
) -> npt.NDArray[np.float32]:
    """The NumPy peer's dequantization of `numpy_quantize`'s output."""
    if fmt == "MXFP4":
        nibbles = np.empty(codes.size * 2, np.uint8)
        nibbles[0::2], nibbles[1::2] = codes & 15, codes >> 4
        values = nibbles.view(ml_dtypes.float4_e2m1fn).astype(np.float32)
    else:
        values = codes.view(ml_dtypes.float8_e4m3fn).astype(np.float32)
    factors = np.ldexp(np.float32(1), scales.astype(np.int32) - 127)
    return (values.reshape(-1, BLOCK) * factors[:, None]).reshape(-1)


def _conversions_numpy(quick: bool) -> dict[str, float]:
    """ns per call of the NumPy peers and of copies of the same bytes (in the
    NumPy process)."""
    x = _f32_data()
    times: dict[str, float] = {}
    for c in conversions(quick):
        if c.kind == "copy":
            source = np.random.default_rng(2).integers(
                0, 256, c.moved_bytes // 2, dtype=np.uint8
            )
            target = np.empty_like(source)
            times[c.label + " copy"] = median_ns(
                lambda s=source, t=target: np.copyto(t, s)  # pyright: ignore[reportUnknownLambdaType]
            )
            continue
        codes, scales = numpy_quantize(x, c.fmt)
        if c.kind == "quantize":
            times[c.label] = median_ns(lambda f=c.fmt: numpy_quantize(x, f))
        else:
            times[c.label] = median_ns(
                lambda q=codes, s=scales, f=c.fmt: numpy_dequantize(q, s, f)
            )
        # A copy moving as many bytes (read + written) as the conversion.
        source = np.empty(c.moved_bytes // 2, np.uint8)
        source[:] = 1
        target = np.empty_like(source)
        times[c.label + " copy"] = median_ns(
            lambda s=source, t=target: np.copyto(t, s)  # pyright: ignore[reportUnknownLambdaType]
        )
    return times


def time_conversion(c: Conversion) -> float:
    """ns per call of mx's kernel; checks its output bit for bit against the
    NumPy peer's (in the same blocks) or, for the copy, against the input."""
    from mx.jit import compile_module

    f = compile_module(_conversion_module(c))["f"]
    n = CONVERSION_ROWS * CONVERSION_COLS
    if c.kind == "copy":
        a = np.random.default_rng(2).integers(0, 256, n // 2, dtype=np.uint8)
        b = np.zeros_like(a)
        f(a, b)
        assert np.array_equal(a, b), c.label
        return median_ns(lambda: f(a, b))
    x = _f32_data()
    codes, scales = numpy_quantize(_blocks_first(x), c.fmt)
    q = np.zeros(c.coded_bytes - n // BLOCK, np.uint8)
    s = np.zeros(n // BLOCK, np.uint8)
    if c.kind == "quantize":
        f(x, q, s)
        q_rows = _blocks_first_codes(q, c.fmt)
        assert np.array_equal(_blocks_first_scales(s), scales), c.label
        assert np.array_equal(q_rows, codes), c.label
        return median_ns(lambda: f(x, q, s))
    q[:] = _column_major_codes(codes, c.fmt)
    s[:] = _column_major_scales(scales)
    y = np.zeros(n, np.float32)
    f(q, s, y)
    want = numpy_dequantize(codes, scales, c.fmt)
    assert np.array_equal(_blocks_first(y).reshape(-1), want), c.label
    return median_ns(lambda: f(q, s, y))


def _scale_grid() -> tuple[int, int]:
    return CONVERSION_ROWS, CONVERSION_COLS // BLOCK


def _blocks_first_scales(s: npt.NDArray[np.uint8]) -> npt.NDArray[np.uint8]:
    rows, cols = _scale_grid()
    return np.ascontiguousarray(s.reshape(cols, rows).T).reshape(-1)


def _column_major_scales(s: npt.NDArray[np.uint8]) -> npt.NDArray[np.uint8]:
    rows, cols = _scale_grid()
    return np.ascontiguousarray(s.reshape(rows, cols).T).reshape(-1)


def _nibbles(q: npt.NDArray[np.uint8]) -> npt.NDArray[np.uint8]:
    out = np.empty(q.size * 2, np.uint8)
    out[0::2], out[1::2] = q & 15, q >> 4
    return out


def _pack(nibbles: npt.NDArray[np.uint8]) -> npt.NDArray[np.uint8]:
    return (nibbles[0::2] | (nibbles[1::2] << 4)).astype(np.uint8)


def _blocks_first_codes(q: npt.NDArray[np.uint8], fmt: str) -> npt.NDArray[np.uint8]:
    """mx's column-major codes in the peer's row order (repacked for MXFP4)."""
    if fmt == "MXFP8":
        return _blocks_first(q).reshape(-1)
    return _pack(_blocks_first(_nibbles(q)).reshape(-1))


def _column_major_codes(q: npt.NDArray[np.uint8], fmt: str) -> npt.NDArray[np.uint8]:
    if fmt == "MXFP8":
        rows = q.reshape(CONVERSION_ROWS, CONVERSION_COLS)
        return np.ascontiguousarray(rows.T).reshape(-1)
    rows = _nibbles(q).reshape(CONVERSION_ROWS, CONVERSION_COLS)
    return _pack(np.ascontiguousarray(rows.T).reshape(-1))


BOUNDS = {
    "quantize": "≤ 2× dequantize",
    "dequantize": "≥ 80% of copy",
    "copy": "≥ 80% of copy",
}


def conversions_only(quick: bool = False) -> str:
    """The conversions table alone (its NumPy peers timed as in `measure`)."""
    numpy_ns, _ = peer_times("bench.mx_formats", quick)
    return conversion_table(quick, numpy_ns["conversions"])


def conversion_table(quick: bool, numpy_ns: dict[str, float]) -> str:
    """Times every conversion (mx checked against the NumPy peer) and returns
    the table of them."""
    mx_ns: dict[str, float] = {}
    for c in conversions(quick):
        print(f"MX formats: mx {c.label} ...", flush=True)
        mx_ns[c.label] = time_conversion(c)
    rows: list[str] = []
    for c in conversions(quick):
        t, copy = mx_ns[c.label], numpy_ns[c.label + " copy"]
        peer = numpy_ns.get(c.label)
        back = mx_ns.get(f"dequantize 16M {c.fmt} → f32")
        rows.append(
            f"| {c.label} | {t / 1e6:.2f} ms "
            f"| {f'{peer / 1e6:.2f} ms' if peer else '–'} "
            f"| {f'**{peer / t:.2f}×**' if peer else '–'} "
            f"| {c.moved_bytes / t:.1f} GB/s | {c.moved_bytes / copy:.1f} GB/s "
            f"| {copy / t:.0%} "
            f"| {f'{t / back:.1f}×' if back and c.kind == 'quantize' else '–'} "
            f"| {BOUNDS[c.kind]} |"
        )
    return "\n".join(
        [
            "### MX conversions (thread CPU time, median of 5 reps of ≥ 50 ms)",
            "",
            f"16M = {CONVERSION_ROWS}×{CONVERSION_COLS} f32 values, a column-major "
            f"matrix (the matvec's weight layout: each block of {BLOCK} runs along a row), "
            f"{CHUNK} columns per step (straight-line steps): `arbfp.scaled_convert_to` / "
            "`scaled_convert_from` (e8m0 scales, `floor` rule, nearest even, "
            "saturating) between `column_major_load`/`store` (MXFP4: `packed`). "
            "Peer: NumPy with ml_dtypes (contiguous blocks; same codes and scales bit "
            "for bit, checked). Copy: `np.copyto` moving as many bytes (read + "
            "written) as the conversion; GB/s count bytes read + written.",
            "",
            "| kernel | mx | NumPy + ml_dtypes | NumPy / mx | mx GB/s | copy GB/s "
            "| of the copy rate | quantize / dequantize | bound |",
            "|---|---|---|---|---|---|---|---|---|",
            *rows,
        ]
    )


if __name__ == "__main__":
    script_main(__doc__, measure, _numpy_times)

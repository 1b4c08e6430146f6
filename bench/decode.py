"""LLM decoding: weight times vector over 4 layers, cold weights, x and y in f32.

usage: python -m bench.decode [--quick] [--only NAME ...] [--out DIR]

Each call computes y_l = W_l·x for 4 layers of row-major R×K weights stored one after the
other (the mx function is an `scf.for` over the layers, offsets `i·size`); the weights
rotate over enough copies that each call reads them from DRAM (every set of 4 layers
together with the others ≥ 3× the L3 cache). Weights:
- MXFP4 (f4e2m1fn packed two per byte), MXFP8 (f8e4m3fn, f8e5m2): one f8e8m0fnu scale
  per 32 elements of a row (`scaled_convert_from`; mx reads the scales column-major, the
  C kernel row-major: the same bytes);
- FP8 (f8e4m3fn, f8e5m2) times a per-tensor f32 scale passed as an argument
  (`convert_from`, `matrix.splat`, `matrix.mul`);
- f16, bf16 (`matrix.cast` to f32).
Peers, in the same interleaved run (`bench.timing.time_interleaved`): NumPy's f32 sgemv
(OpenBLAS, one thread) on the f32 weights (the ratio's unit), the hand-written C kernel
of the format (bench/kernels/decode.c, clang-16 -O3 -march=native: AVX-512 intrinsics
where the CPU has them, else AVX2 + FMA + F16C ones, else a portable loop), llama.cpp's ggml `ggml_mul_mat` when `ggml` (ggml-python) is
importable (an optional peer: MXFP4, Q8_0 for the 8-bit rows, F16), and a read of as
many bytes (bench/kernels/decode.c's `c_read_bytes`: the single-thread read bandwidth,
whose time per weight is the memory bound). Everything on one thread (mx with
`MX_NUM_THREADS=1`, OpenBLAS with `OPENBLAS_NUM_THREADS=1`, ggml `n_threads=1`); thread CPU
time, median of 5 reps of ≥ 40 ms. Each result is checked against the float64 product of the decoded weights
within 4·K·2^-24·Σ|w·x| (mx strict sums in k order; mx reassoc, with `fastmath<fast>`,
along K as the peers do, in their own orders).
"""

from __future__ import annotations

import argparse
import ctypes
import os
import subprocess
import sys
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from itertools import cycle
from pathlib import Path
from typing import Any

import ml_dtypes
import numpy as np
import numpy.typing as npt

from bench.blas_peer import cpu_name, load_average
from bench.ggml_peer import import_ggml, mul_mat_peer
from bench.machine import cpu_flags, last_level_cache_bytes
from bench.timing import time_interleaved

ROOT = Path(__file__).resolve().parent.parent
KERNEL = ROOT / "bench" / "kernels" / "decode.c"
BLOCK = 32
LAYERS = 4
COLD_BYTES = 3 * last_level_cache_bytes()
"""Bytes each implementation rotates over, so that every call reads from DRAM."""


def cold_copies(bytes_per_call: int) -> int:
    """How many copies of a call's `bytes_per_call` of weights together take
    `COLD_BYTES` (at least one)."""
    return max(1, -(-COLD_BYTES // bytes_per_call))


PAGE = 4096
PAGE_OFFSETS = tuple(528 * i for i in range(8))
"""Where copies of weights start in a 4 KiB page, in turn (`placed_copy`): 0,
528, ..., 3696, across the page and at each 16-byte place in a cache line.
A NumPy array starts where malloc puts it: 16 bytes into a page when mmap
serves it, anywhere once glibc has raised its mmap threshold (after a large
temporary is freed). A kernel's time depends on it: one thread, 2048 x 4096
from DRAM, Intel Xeon with AVX512-FP16, ps a weight at page offsets 0, 16,
64, 1024, 2048, 3072: a row-major FP8 e4m3fn matvec 145, 141, 140, 152, 152,
150 (K = 4064: 131-134 at all six); so spellings timed on the copies malloc
happened to give them differed by up to 1.4x for that alone."""


def placed_copy(a: Array, offset: int) -> Array:
    """A copy of the C- or F-contiguous `a`, in the same order, whose data
    starts `offset` bytes into a page."""
    assert a.flags.c_contiguous or a.flags.f_contiguous
    buffer = np.empty(a.nbytes + 2 * PAGE, np.uint8)
    start = -buffer.ctypes.data % PAGE + offset
    flat = buffer[start : start + a.nbytes].view(a.dtype)
    c_order = a.flags.c_contiguous
    copy = flat.reshape(a.shape) if c_order else flat.reshape(a.shape[::-1]).T
    copy[...] = a
    return copy


REPS, MIN_MS = 5, 40.0
MX_FLAGS = {"mx": "", "mx reassoc": "fast"}
"""The mx functions timed: their names and matvec flags."""
CHECKED = (*MX_FLAGS, "C", "ggml")
"""The implementations whose results are checked."""

Array = npt.NDArray[Any]


@dataclass(frozen=True)
class Format:
    name: str
    kind: str
    """"mx" (block-scaled), "fp8" (per-tensor scale) or "float" (f16, bf16)."""
    element: str
    """The arbfp format or the MLIR float type."""
    symbol: str
    """The C kernel."""

    @property
    def packed(self) -> bool:
        return self.element == "f4e2m1fn"

    @property
    def bits(self) -> int:
        return 4 if self.packed else 16 if self.kind == "float" else 8


FORMATS = (
    Format("MXFP4", "mx", "f4e2m1fn", "c_decode_mxfp4"),
    Format("MXFP8 e4m3", "mx", "f8e4m3fn", "c_decode_mxfp8_e4m3"),
    Format("MXFP8 e5m2", "mx", "f8e5m2", "c_decode_mxfp8_e5m2"),
    Format("FP8 e4m3fn", "fp8", "f8e4m3fn", "c_decode_fp8_e4m3fn"),
    Format("FP8 e5m2", "fp8", "f8e5m2", "c_decode_fp8_e5m2"),
    Format("f16", "float", "f16", "c_decode_f16"),
    Format("bf16", "float", "bf16", "c_decode_bf16"),
)

_DTYPES: dict[str, Any] = {
    "f4e2m1fn": ml_dtypes.float4_e2m1fn,
    "f8e4m3fn": ml_dtypes.float8_e4m3fn,
    "f8e5m2": ml_dtypes.float8_e5m2,
    "f16": np.float16,
    "bf16": ml_dtypes.bfloat16,
}


@dataclass(frozen=True)
class Case:
    format: Format
    rows: int
    cols: int

    @property
    def weights(self) -> int:
        """Weights per call."""
        return LAYERS * self.rows * self.cols

    @property
    def weight_bytes(self) -> float:
        """Bytes read per weight (codes and block scales)."""
        scales = 1 / BLOCK if self.format.kind == "mx" else 0
        return self.format.bits / 8 + scales

    @property
    def label(self) -> str:
        return f"{self.format.name} {self.rows}×{self.cols}"


def cases(quick: bool, only: list[str] | None = None) -> list[Case]:
    shapes = ((512, 1024),) if quick else ((4096, 4096), (4096, 4064))
    return [
        Case(f, r, k) for f in FORMATS if not only or f.name in only for r, k in shapes
    ]


# -- the mx functions ------------------------------------------------------------


def source(c: Case, fastmath: str = "") -> str:
    """The mx function: `f(w, s|scale, x, y)` over `LAYERS` layers; `fastmath`
    the flags of its matvec (and of the per-tensor scale's multiply)."""
    f, r, k = c.format, c.rows, c.cols
    fm = f" fastmath<{fastmath}>" if fastmath else ""
    w_type = f"!matrix.matrix<{r}x{k}xf32>"
    scales_arg = "%s: memref<?xi8>" if f.kind == "mx" else "%scale: f32"
    memref = f"memref<?x{f.element}>" if f.kind == "float" else "memref<?xi8>"
    size, ssize = r * k, r * k // BLOCK
    if f.kind == "mx":
        element = "i4" if f.packed else "i8"
        q, s = (
            f"!matrix.matrix<{r}x{k}x{element}>",
            f"!matrix.matrix<{r}x{k // BLOCK}xi8>",
        )
        packed = " packed" if f.packed else ""
        body = f"""%q = matrix.row_major_load %w[%o]{packed} : {memref} -> {q}
    %so = arith.muli %i, %ssize : index
    %sc = matrix.column_major_load %s[%so] : memref<?xi8> -> {s}
    %m = arbfp.scaled_convert_from {f.element} %q, %sc block {BLOCK} : {q}, {s} to {w_type}"""
    elif f.kind == "fp8":
        q = f"!matrix.matrix<{r}x{k}xi8>"
        body = f"""%q = matrix.row_major_load %w[%o] : {memref} -> {q}
    %d = arbfp.convert_from {f.element} %q : {q} to {w_type}
    %k = matrix.splat %scale : {w_type}
    %m = matrix.mul %d, %k{fm} : {w_type}"""
    else:
        q = f"!matrix.matrix<{r}x{k}x{f.element}>"
        body = f"""%q = matrix.row_major_load %w[%o] : {memref} -> {q}
    %m = matrix.cast %q : {q} to {w_type}"""
    return f"""func.func @f(%w: {memref}, {scales_arg}, %x: memref<?xf32>, %y: memref<?xf32>) {{
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %n = arith.constant {LAYERS} : index
  %size = arith.constant {size} : index
  %ssize = arith.constant {ssize} : index
  %rows = arith.constant {r} : index
  %v = vector.load %x[%c0] : memref<?xf32>, vector<{k}xf32>
  scf.for %i = %c0 to %n step %c1 {{
    %o = arith.muli %i, %size : index
    {body}
    %r = matrix.matvec %m, %v{fm} : {w_type}, vector<{k}xf32> -> vector<{r}xf32>
    %at = arith.muli %i, %rows : index
    vector.store %r, %y[%at] : memref<?xf32>, vector<{r}xf32>
  }}
  func.return
}}"""


# -- data --------------------------------------------------------------------------


@dataclass
class WeightSet:
    """One copy of the 4 layers in every layout the implementations read."""

    codes: Array
    """(LAYERS, R, K) codes (uint8; f16/bf16: their own dtype)."""
    scales: Array | None
    """(LAYERS, R, K/32) e8m0 codes."""
    packed: Array
    """The weight bytes of the row-major layers (FP4: two codes per byte)."""
    scales_column_major: Array | None
    scales_row_major: Array | None


def random_codes(f: Format, shape: tuple[int, ...], rng: np.random.Generator) -> Array:
    """Random weights' codes (f16/bf16: values of their dtype), NaN and inf
    codes replaced by 1.0."""
    if f.kind == "float":
        return rng.standard_normal(shape).astype(_DTYPES[f.element])
    codes = rng.integers(0, 16 if f.packed else 256, shape, dtype=np.uint8)
    if f.element == "f8e4m3fn":
        codes[(codes & 0x7F) == 0x7F] = 0x38  # NaN codes: 1.0
    elif f.element == "f8e5m2":
        codes[(codes & 0x7C) == 0x7C] = 0x3C  # inf and NaN codes: 1.0
    return codes


def weight_set(c: Case, rng: np.random.Generator) -> WeightSet:
    f, shape = c.format, (LAYERS, c.rows, c.cols)
    codes = random_codes(f, shape, rng)
    if f.packed:
        packed = (codes[..., 0::2] | (codes[..., 1::2] << 4)).ravel()
    else:
        packed = codes.ravel()
    if f.kind != "mx":
        return WeightSet(codes, None, packed, None, None)
    scales = rng.integers(124, 131, (LAYERS, c.rows, c.cols // BLOCK), dtype=np.uint8)
    column_major = np.ascontiguousarray(scales.transpose(0, 2, 1)).ravel()
    return WeightSet(codes, scales, packed, column_major, scales.ravel())


def decoded(c: Case, ws: WeightSet, *, scale: float) -> npt.NDArray[np.float64]:
    """The (LAYERS, R, K) weights' values, exactly."""
    f = c.format
    if f.kind == "float":
        return ws.codes.astype(np.float64)
    values = ws.codes.view(_DTYPES[f.element]).astype(np.float64)
    if f.kind == "fp8":
        return values * np.float64(np.float32(scale))
    assert ws.scales is not None
    block = np.exp2(ws.scales.astype(np.float64) - 127)
    return values * np.repeat(block, BLOCK, axis=-1)


# -- the implementations ---------------------------------------------------------


def _c_library(tmp: Path) -> ctypes.CDLL:
    library = tmp / "decode.so"
    subprocess.run(
        [
            "clang-16",
            "-O3",
            "-march=native",
            "-shared",
            "-fPIC",
            str(KERNEL),
            "-o",
            str(library),
        ],
        check=True,
    )
    return ctypes.CDLL(str(library))


def _pointer(a: Array) -> ctypes.c_void_p:
    return ctypes.c_void_p(a.ctypes.data)


def _c_call(
    lib: ctypes.CDLL, c: Case, ws: WeightSet, scale: float, x: Array, y: Array
) -> Callable[[], object]:
    fn = getattr(lib, c.format.symbol)
    second: Any = (
        _pointer(ws.scales_row_major)
        if ws.scales_row_major is not None
        else ctypes.c_float(scale if c.format.kind == "fp8" else 1.0)
    )
    args = (_pointer(ws.packed), second, _pointer(x), _pointer(y))
    sizes = (ctypes.c_int64(c.rows), ctypes.c_int64(c.cols), ctypes.c_int64(LAYERS))
    return lambda: fn(*args, *sizes)


def _mx_call(
    f: Any, ws: WeightSet, scale: float, x: Array, y: Array
) -> Callable[[], object]:
    w = ws.packed.view(np.uint8) if ws.packed.dtype == np.uint8 else ws.packed
    second = (
        ws.scales_column_major
        if ws.scales_column_major is not None
        else np.float32(scale)
    )
    return lambda: f(w, second, x, y)


def _rotating(calls: list[Callable[[], object]]) -> Callable[[], object]:
    """One call of the next weight set at each call."""
    turn = cycle(calls)
    return lambda: next(turn)()


def _check(
    name: str,
    y: Array,
    exact: npt.NDArray[np.float64],
    size: npt.NDArray[np.float64],
    k: int,
) -> str | None:
    error = np.abs(y.astype(np.float64) - exact.ravel())
    # ggml rounds x to 8-bit integers for its quantized types
    bound = (0.02 if name == "ggml" else 4 * k * 2.0**-24) * size.ravel()
    if bool(np.all(error <= bound)):
        return None
    worst = int(np.argmax(error - bound))
    return f"{name}: y[{worst}] = {y[worst]!r}, exact {exact.ravel()[worst]!r}"


def measure_case(
    c: Case, lib: ctypes.CDLL, ggml: Any | None
) -> tuple[dict[str, float], list[str]]:
    """Per-weight times (ps) of each implementation, and failed checks."""
    from mx.jit import compile_module

    rng = np.random.default_rng(0)
    per_set = c.weights * c.weight_bytes
    sets = [weight_set(c, rng) for _ in range(cold_copies(int(per_set)))]
    scale = 0.75
    x = rng.standard_normal(c.cols).astype(np.float32)
    functions = {
        name: compile_module(source(c, flags))["f"] for name, flags in MX_FLAGS.items()
    }
    outputs = {name: np.zeros(LAYERS * c.rows, np.float32) for name in CHECKED}
    calls: dict[str, Callable[[], object]] = {
        name: _rotating([_mx_call(f, ws, scale, x, outputs[name]) for ws in sets])
        for name, f in functions.items()
    }
    calls["C"] = _rotating([_c_call(lib, c, ws, scale, x, outputs["C"]) for ws in sets])
    if ggml is not None:
        values = partial(decoded, c, scale=scale)
        calls["ggml"] = mul_mat_peer(ggml, c, sets, values, x, outputs["ggml"], LAYERS)
    # NumPy: f32 weights of the same shape, rotating over as many bytes
    dense_bytes = LAYERS * c.rows * c.cols * 4
    denses = [
        rng.standard_normal((LAYERS, c.rows, c.cols), np.float32)
        for _ in range(cold_copies(dense_bytes))
    ]
    y32 = np.zeros((LAYERS, c.rows), np.float32)

    def sgemv(dense: Array) -> None:
        for layer in range(LAYERS):
            np.matmul(dense[layer], x, out=y32[layer])

    calls["NumPy f32"] = _rotating([partial(sgemv, d) for d in denses])
    stream = np.ones(max(COLD_BYTES, int(per_set)) // 256 * 256, np.uint8)
    read_bytes = lib.c_read_bytes
    read_bytes.restype = ctypes.c_uint64
    calls["read"] = lambda: read_bytes(_pointer(stream), ctypes.c_int64(stream.size))
    # check the first set
    for name in CHECKED:
        if name in calls:
            calls[name]()  # (each rotation starts at set 0)
    values = decoded(c, sets[0], scale=scale)
    x64 = x.astype(np.float64)
    exact = values @ x64
    size = np.abs(values) @ np.abs(x64)
    failures = [
        why
        for name in CHECKED
        if name in calls and (why := _check(name, outputs[name], exact, size, c.cols))
    ]
    for _ in range(len(sets) - 1):  # back to set 0 for the timing
        for name in CHECKED:
            if name in calls:
                calls[name]()
    # and a first pass over the other weights: memory read for the first time
    # since it was written runs slower for a pass (bench.spellings' docs)
    for _ in denses:
        calls["NumPy f32"]()
    calls["read"]()
    times = time_interleaved(calls, 1, REPS, MIN_MS)
    out: dict[str, float] = {}
    for name, ts in times.items():
        weights = stream.size / c.weight_bytes if name == "read" else c.weights
        out[name] = float(np.median(ts)) * 1e3 / weights
    return out, failures


# -- the table ---------------------------------------------------------------------


def _row(c: Case, t: dict[str, float]) -> str:
    sgemv, mx, fast = t["NumPy f32"], t["mx"], t["mx reassoc"]
    bound = sgemv / t["read"]
    bandwidth = c.weight_bytes / fast  # bytes/ps = TB/s
    fraction = t["read"] / fast
    ggml = f"{t['ggml']:.0f} ps ({sgemv / t['ggml']:.2f}×)" if "ggml" in t else "–"
    return (
        f"| {c.label} | {mx:.0f} ps ({sgemv / mx:.2f}×) | {fast:.0f} ps "
        f"| **{sgemv / fast:.2f}×** | {t['C']:.0f} ps ({sgemv / t['C']:.2f}×) "
        f"| **{t['C'] / fast:.2f}×** | {ggml} | {sgemv:.0f} ps "
        f"| {bound:.2f}× | {bandwidth * 1e3:.1f} GB/s | {fraction:.0%} |"
    )


def measure(out: Path, quick: bool = False, only: list[str] | None = None) -> str:
    """Times every case; writes `decode.md` into `out` and returns it."""
    ggml = import_ggml()
    start = load_average()
    rows: list[str] = []
    failures: list[str] = []
    with tempfile.TemporaryDirectory() as tmp:
        lib = _c_library(Path(tmp))
        for c in cases(quick, only):
            print(f"decode: {c.label} ...", flush=True)
            t, failed = measure_case(c, lib, ggml)
            rows.append(_row(c, t))
            print(rows[-1], flush=True)
            failures += [f"{c.label}: {why}" for why in failed]
    peer = (
        "ggml-python"
        if ggml is not None
        else "not installed (optional: bench/ggml_peer.py)"
    )
    # the C kernels take the intrinsics of the CPU's widest vectors
    flags = cpu_flags()
    c_label = (
        "C (AVX-512)"
        if {"avx512f", "avx512bw"} <= flags
        else "C (AVX2)"
        if {"avx2", "fma", "f16c"} <= flags
        else "C (portable)"
    )
    text = "\n".join(
        [
            f"### LLM decoding: W·x over {LAYERS} layers, cold weights (time per weight; "
            f"thread CPU time, median of {REPS} reps of ≥ {MIN_MS:.0f} ms, interleaved)",
            "",
            f"CPU: {cpu_name()}; 1-minute load average {start} at the start, "
            f"{load_average()} at the end (other processes share the machine: ratios are "
            f"within one interleaved run, absolute times are noisy). ggml: {peer}.",
            "",
            "×: NumPy f32 sgemv time per weight ÷ this one (higher is faster). mx strict: "
            "the matvec without fastmath flags (each y(r) summed in k order); mx reassoc: "
            "`fastmath<fast>` (summed along K, as the C kernel and ggml do). Memory bound: "
            "sgemv ÷ the time to read the format's bytes per weight at the measured "
            "single-thread read bandwidth. C / mx > 1: mx reassoc is faster than the "
            "hand-written C kernel; the last two columns are mx reassoc's.",
            "",
            f"| weights R×K | mx strict | mx reassoc | × sgemv | {c_label} | C / mx "
            "| ggml | NumPy f32 | memory bound | weight bytes/s | of the read bandwidth |",
            "|---|---|---|---|---|---|---|---|---|---|---|",
            *rows,
            "",
            "Every check passed."
            if not failures
            else "FAILED checks:\n" + "\n".join(failures),
        ]
    )
    out.mkdir(parents=True, exist_ok=True)
    (out / "decode.md").write_text(text + "\n")
    return text


def main() -> None:
    # thread CPU time counts one thread: OpenBLAS and mx's OpenMP loops must
    # not start others
    single = {"OPENBLAS_NUM_THREADS": "1", "MX_NUM_THREADS": "1"}
    if any(os.environ.get(k) != v for k, v in single.items()):
        env = {**os.environ, **single}
        os.execve(
            sys.executable, [sys.executable, "-m", "bench.decode", *sys.argv[1:]], env
        )
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

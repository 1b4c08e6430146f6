"""Row-major weights given as C-ordered `!matrix.matrix` arguments (the
buffer `memref<RxK>` of the transposed matrix, read through a fused
transpose: `abi.py`) are read in whole cache lines of each row from the
first column at a line's start, as the weights of a row-major load are
(`blocked.RowMajorMemory`): the lowering reads the argument's address, and
the JIT equals the interpreter bit for bit at every start of the argument
in a cache line, for the cache-blocked matvec (f16, bf16, i8, f32) and the
fused kernel of per-tensor FP8 codes (on a host whose L1 set one tile's
lines overflow, `placement.lines_host`; else by chunks)."""

from typing import Any

import ml_dtypes
import numpy as np
import numpy.typing as npt
import pytest
from xdsl.parser import Parser

from mx.frontend import mx_context
from mx.interpreters import run_function
from mx.jit import compile_module
from mx.jit_machine_code import host_cpu
from tests.fixtures import JitHost
from tests.placement import at_byte, lines_host, reads_address

Array = npt.NDArray[Any]

_DTYPES: dict[str, Any] = {
    "f16": np.float16,
    "bf16": ml_dtypes.bfloat16,
    "f32": np.float32,
    "i8": np.int8,
    "f8e4m3fn": np.uint8,
    "f8e5m2": np.uint8,
}
_FP8 = ("f8e4m3fn", "f8e5m2")


def _source(t: str, rows: int, cols: int) -> str:
    """y = W·x of the C-ordered matrix argument %q: f16/bf16 cast to f32,
    i8 to i32, f32 as is, FP8 codes decoded and times the f32 argument %s."""
    wide = "i32" if t == "i8" else "f32"
    q = f"!matrix.matrix<{rows}x{cols}x{'i8' if t in _FP8 else t}>"
    m = f"!matrix.matrix<{rows}x{cols}x{wide}>"
    scale, weights = "", "%q"
    if t in _FP8:
        scale, weights = ", %s: f32", "%m"
        decoded = f"""%d = arbfp.convert_from {t} %q : {q} to {m}
  %k = matrix.splat %s : {m}
  %m = matrix.mul %d, %k : {m}"""
    elif t != wide:
        weights = "%m"
        decoded = f"%m = matrix.cast %q : {q} to {m}"
    else:
        decoded = ""
    return f"""func.func @f(%q: {q}{scale}, %x: vector<{cols}x{wide}>) -> vector<{rows}x{wide}> {{
  {decoded}
  %y = matrix.matvec {weights}, %x : {m}, vector<{cols}x{wide}> -> vector<{rows}x{wide}>
  func.return %y : vector<{rows}x{wide}>
}}"""


def _operands(t: str, rows: int, cols: int) -> tuple[Array, list[Any]]:
    """The weights (rows, cols) and the other arguments."""
    rng = np.random.default_rng(rows * 1000 + cols)
    if t == "i8":
        w: Array = rng.integers(-128, 128, (rows, cols), dtype=np.int8)
        return w, [rng.integers(-1000, 1000, cols, dtype=np.int32)]
    x = rng.standard_normal(cols).astype(np.float32)
    if t in _FP8:  # every finite code (the sums stay finite)
        w = rng.integers(0, 256, (rows, cols)).astype(np.uint8)
        w[(w & 0x7F) >= (0x7F if t == "f8e4m3fn" else 0x7C)] = 0x3C
        return w, [np.float32(-0.625), x]
    # mixed magnitudes: a different order of the sums rounds differently
    scale = np.exp2(rng.integers(-12, 12, (rows, cols))).astype(np.float32)
    w = (rng.standard_normal((rows, cols)).astype(np.float32) * scale).astype(
        _DTYPES[t]
    )
    return w, [x]


CASES = [
    # element type, rows, columns, kernel
    ("f16", 37, 117, "cache-blocked vector"),  # lines, a narrow step, single columns
    ("f16", 37, 7, "cache-blocked vector"),  # shorter than a line: from column 0
    ("bf16", 37, 192, "cache-blocked vector"),  # whole lines only
    ("i8", 37, 200, "cache-blocked vector"),
    ("f32", 37, 53, "cache-blocked vector"),
    ("f8e4m3fn", 64, 64, "fused decode vector"),  # one line: only masked steps
    ("f8e4m3fn", 70, 192, "fused decode vector"),  # a last, overlapping group
    ("f8e5m2", 32, 200, "fused decode vector"),  # rows not whole lines: chunks
]


@pytest.mark.ci_sample(4)
@pytest.mark.parametrize(("t", "rows", "cols", "kernel"), CASES, ids=str)
def test_rows_of_an_argument_at_every_start_in_a_line(
    t: str, rows: int, cols: int, kernel: str, jit_host: JitHost
) -> None:
    """At each element offset in a cache line, the first and last masked
    steps take every number of columns (FP8 codes on a `lines_host`): the
    sums keep the interpreter's bits."""
    text = _source(t, rows, cols)
    if t in _FP8:
        jit_host(lines_host(host_cpu()))
        text = "// by lines\n" + text
    f = compile_module(text)["f"]
    assert f.remarks[0].endswith(f"kernel: {kernel}"), f.remarks
    w, rest = _operands(t, rows, cols)
    (want,) = run_function(Parser(mx_context(), text).parse_module(), "f", w, *rest)
    want = np.asarray(want)
    assert np.isfinite(want).all() if t != "i8" else want.any()
    for by in range(0, 64, w.itemsize):
        got = np.asarray(f(at_byte(w, by), *rest))
        assert got.tobytes() == want.tobytes(), (t, by)


@pytest.mark.parametrize(("t", "rows", "cols", "kernel"), CASES, ids=str)
def test_the_steps_start_at_the_arguments_address(
    t: str, rows: int, cols: int, kernel: str
) -> None:
    """The lowering (NumPy's layout at the boundary) reads the address of
    the argument's buffer for the first column at a line's start, wherever
    a row has a whole line (a line is 64 bytes: the kernels' step); FP8
    codes only if rows are a whole number of lines apart (one line start
    serves every row) and one tile's lines overflow their L1 set (on a
    `lines_host`; for mx-opt's 16 lanes and 12-way L1 these rows are in
    different sets: chunks)."""
    text = _source(t, rows, cols)
    row_bytes = cols * np.dtype(_DTYPES[t]).itemsize
    if t in _FP8:
        assert reads_address(text, lines_host(host_cpu())) == (row_bytes % 64 == 0)
        assert not reads_address(text)
    else:
        assert reads_address(text) == (row_bytes >= 64), kernel

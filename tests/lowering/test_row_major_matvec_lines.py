"""The cache-blocked matvec of a row-major matrix (`blocked._matvec_by_tiles`)
reads a cache line of every row a step (f16/bf16: two square tiles a step,
i8: four), then narrower steps and element by element for the columns left
over: the JIT equals the interpreter bit for bit (each row summed in k
order) for every mix of whole lines, narrow steps and single columns, rows
past the last full tile, with literal and `index` offsets and in a loop over
layers, and at every start of the weights in a cache line (the steps start
at the first column at a line's start, the address of the weights)."""

from typing import Any

import ml_dtypes
import numpy as np
import numpy.typing as npt
import pytest
from xdsl.parser import Parser

from mx.frontend import mx_context
from mx.interpreters import run_function
from mx.jit import compile_module

Array = npt.NDArray[Any]

_DTYPES: dict[str, Any] = {
    "f16": np.float16,
    "bf16": ml_dtypes.bfloat16,
    "f32": np.float32,
    "i8": np.int8,
}

COLS = [
    7,  # element by element only
    16,  # one narrow step
    32,  # one line of f16 (two tiles)
    53,  # a line, no narrow step (f16), 21 columns left
    117,  # lines, a narrow step and single columns
    192,  # whole lines only
]
"""Columns covering each mix of line steps, narrow steps and single columns
(16 f32 lanes: a line is 32 f16 or bf16, 64 i8, 16 f32)."""


def _source(t: str, rows: int, cols: int, spelling: str) -> str:
    """y = cast(W)·x of row-major W in memory (f16/bf16 to f32, i8 to i32,
    f32 as is) for each layer, offsets literal, `index` or `i·size`."""
    wide = "i32" if t == "i8" else "f32"
    q = f"!matrix.matrix<{rows}x{cols}x{t}>"
    m = f"!matrix.matrix<{rows}x{cols}x{wide}>"
    cast = "" if t == "f32" else f"\n    %m = matrix.cast %q : {q} to {m}"
    matrix = "%q" if t == "f32" else "%m"
    body = f"""%q = matrix.row_major_load %w[OFFSET] : memref<?x{t}> -> {q}{cast}
    %r = matrix.matvec {matrix}, %v : {m}, vector<{cols}x{wide}> -> vector<{rows}x{wide}>"""
    head = f"func.func @f(%w: memref<?x{t}>, %x: memref<?x{wide}>, %y: memref<?x{wide}>"
    if spelling == "layers":
        return f"""{head}) {{
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %n = arith.constant 3 : index
  %size = arith.constant {rows * cols} : index
  %rows = arith.constant {rows} : index
  %v = vector.load %x[%c0] : memref<?x{wide}>, vector<{cols}x{wide}>
  scf.for %i = %c0 to %n step %c1 {{
    %o = arith.muli %i, %size : index
    {body.replace("OFFSET", "%o")}
    %at = arith.muli %i, %rows : index
    vector.store %r, %y[%at] : memref<?x{wide}>, vector<{rows}x{wide}>
  }}
  func.return
}}"""
    index = spelling == "index"
    return f"""{head}{", %o: index" if index else ""}) {{
  %c0 = arith.constant 0 : index
  %v = vector.load %x[%c0] : memref<?x{wide}>, vector<{cols}x{wide}>
    {body.replace("OFFSET", "%o" if index else "0")}
  vector.store %r, %y[%c0] : memref<?x{wide}>, vector<{rows}x{wide}>
  func.return
}}"""


def _operands(t: str, rows: int, cols: int, spelling: str) -> list[Any]:
    rng = np.random.default_rng(rows * 1000 + cols)
    layers = 3 if spelling == "layers" else 1
    offset = 5 if spelling == "index" else 0
    count = offset + layers * rows * cols
    if t == "i8":
        w: Array = rng.integers(-128, 128, count, dtype=np.int8)
        x: Array = rng.integers(-1000, 1000, cols, dtype=np.int32)
        y: Array = np.zeros(layers * rows, np.int32)
    else:
        # mixed magnitudes: a different order of the sums rounds differently
        scale = np.exp2(rng.integers(-12, 12, count)).astype(np.float32)
        w = (rng.standard_normal(count).astype(np.float32) * scale).astype(_DTYPES[t])
        x = rng.standard_normal(cols).astype(np.float32)
        y = np.zeros(layers * rows, np.float32)
    args = [w, x, y]
    return [*args, offset] if offset else args


CASES = [(t, cols, "literal") for t in ("bf16", "i8", "f32") for cols in COLS] + [
    ("f16", cols, spelling)
    for cols in COLS
    for spelling in ("literal", "index", "layers")
]
"""Every element type with every mix of steps; f16 in every spelling too."""


@pytest.mark.ci_sample(14)
@pytest.mark.parametrize("t, cols, spelling", CASES, ids=str)
def test_row_major_matvec_equals_the_interpreter(
    t: str, cols: int, spelling: str
) -> None:
    rows = 37  # two full tiles of 16 rows and 5 rows past them
    text = _source(t, rows, cols, spelling)
    f = compile_module(text)["f"]  # (its remarks: cached with it, like it)
    assert any("kernel: cache-blocked vector" in r for r in f.remarks), f.remarks
    got = _operands(t, rows, cols, spelling)
    f(*got)
    want = _operands(t, rows, cols, spelling)
    run_function(Parser(mx_context(), text).parse_module(), "f", *want)
    assert np.asarray(got[2]).tobytes() == np.asarray(want[2]).tobytes(), (
        t,
        cols,
        spelling,
    )


def _shifted(w: Array, by: int) -> Array:
    """`w` copied to `by` bytes past a 64-byte boundary."""
    raw = np.zeros(w.nbytes + 128, np.uint8)
    start = (-raw.ctypes.data) % 64 + by
    view = raw[start : start + w.nbytes].view(w.dtype)
    view[:] = w
    return view


@pytest.mark.parametrize("t, cols", [("f16", 117), ("i8", 200), ("f32", 53)], ids=str)
def test_every_start_in_a_line_equals_the_interpreter(t: str, cols: int) -> None:
    """The same weights at each element offset in a cache line: the first
    and last masked steps take every number of columns, the sums the same
    bits."""
    rows = 37
    text = _source(t, rows, cols, "literal")
    f = compile_module(text)["f"]
    want = _operands(t, rows, cols, "literal")
    run_function(Parser(mx_context(), text).parse_module(), "f", *want)
    w, x, y = _operands(t, rows, cols, "literal")
    size = w.itemsize
    for by in range(0, 64, size):
        y[:] = 0
        f(_shifted(w, by), x, y)
        assert y.tobytes() == np.asarray(want[2]).tobytes(), (t, by)

"""Row-major block-scaled FP8 weights (MXFP8: `scaled_convert_from` of
f8e4m3fn/f8e5m2 codes; MXFP4 codes one a byte, and packed two a byte, too)
whose rows are a whole number of cache lines apart, on a host whose L1 set
one tile's lines of a step overflow (`placement.lines_host`), are read a
cache line of each row at a time from the first column at a line's start
(`decoded_matvec._row_passes`), which is no block's start: a word's block
scales are those of its own block (`_line_scales`). The JIT equals the
interpreter bit for bit at every byte start of the codes in a cache line
(the line start rounded down to a word), for blocks smaller than a line, of
a line, and longer than it, codes from a load (literal or `index` offset) or
a C-ordered matrix argument; the lowering reads the codes' address exactly
when the rows are a whole number of lines apart and one tile's lines
overflow their L1 set. Rows 4 KiB apart on a host whose L1 set holds one
tile's lines but not two are read by chunks, one tile at a time."""

from typing import Any

import numpy as np
import numpy.typing as npt
import pytest
from xdsl.parser import Parser

from mx.frontend import mx_context
from mx.interpreters import run_function
from mx.jit import compile_module, lower_to_llvm_ir
from mx.jit_machine_code import host_cpu
from mx.runtime.threads import num_threads
from tests.fixtures import JitHost
from tests.placement import (
    at_byte,
    lines_host,
    one_tile_host,
    one_tile_loops,
    reads_address,
)
from tests.sampling import LONG

Array = npt.NDArray[Any]


def _source(
    rows: int, cols: int, fmt: str, block: int, scale: str, pitch: int, codes: str
) -> str:
    """y = W·x + b, W the `scaled_convert_from` of row-major codes (rows
    `pitch` bytes apart) from a load at a literal or `index` offset (FP4
    codes packed), or of a C-ordered matrix argument (`codes`: "literal",
    "index", "argument")."""
    q = f"!matrix.matrix<{rows}x{cols}x{'i4' if fmt == 'f4e2m1fn' else 'i8'}>"
    s = f"!matrix.matrix<{rows}x{cols // block}xi8>"
    w = f"!matrix.matrix<{rows}x{cols}xf32>"
    if codes == "argument":
        head, load = f"%q: {q}", ""
    else:
        at = "%o" if codes == "index" else "0"
        per_byte = 2 if fmt == "f4e2m1fn" else 1
        step = pitch * per_byte
        stride = "" if step == cols else f" stride {step}"
        packed = " packed" if per_byte == 2 else ""
        head = "%w: memref<?xi8>" + (", %o: index" if codes == "index" else "")
        load = (
            f"%q = matrix.row_major_load %w[{at}]{stride}{packed} : memref<?xi8> -> {q}"
        )
    # (x, the bias and y in memory: vector arguments past 64 lanes next to
    # an index argument crash the JIT's call, a bug of its own)
    return f"""func.func @mv({head}, %s: memref<?xi8>, %xs: memref<?xf32>, %bs: memref<?xf32>, %ys: memref<?xf32>) {{
  %c0 = arith.constant 0 : index
  %x = vector.load %xs[%c0] : memref<?xf32>, vector<{cols}xf32>
  %b = vector.load %bs[%c0] : memref<?xf32>, vector<{rows}xf32>
  {load}
  %sc = matrix.column_major_load %s[0] : memref<?xi8> -> {s}
  %f = arbfp.scaled_convert_from {fmt} %q, %sc block {block} scale {scale} : {q}, {s} to {w}
  %y = matrix.matvec %f, %x, %b : {w}, vector<{cols}xf32>, vector<{rows}xf32> -> vector<{rows}xf32>
  vector.store %y, %ys[%c0] : memref<?xf32>, vector<{rows}xf32>
  func.return
}}"""


CASES = [
    # rows, cols, element, block, scale format, pitch (bytes from a row to the next)
    (32, 128, "f8e4m3fn", 32, "f8e8m0fnu", 128),  # MXFP8: two blocks a line
    (70, 192, "f8e5m2", 32, "f8e8m0fnu", 192),  # a last, overlapping group of rows
    (32, 256, "f8e4m3fn", 8, "f8e8m0fnu", 320),  # 8 blocks a line, rows strided
    (32, 192, "f8e4m3fn", 64, "f8e8m0fnu", 192),  # a block a line
    (32, 192, "f8e4m3fn", 96, "f8e8m0fnu", 192),  # longer than a line, not a multiple
    (32, 256, "f8e4m3fn", 16, "f8e4m3fn", 256),  # f8e4m3fn scales
    (64, 128, "f4e2m1fn", 32, "f8e8m0fnu", 128),  # MXFP4 codes one a byte
    (32, 256, "f4e2m1fn", 32, "f8e8m0fnu", 128),  # MXFP4 packed: a line a row
    (70, 256, "f4e2m1fn", 64, "f8e8m0fnu", 192),  # packed, strided, a last group
    (32, 192, "f4e2m1fn", 32, "f8e8m0fnu", 128),  # packed, K not whole lines
]
SPELLINGS = ("literal", "index", "argument")


def _params() -> list[Any]:
    """Each case in one spelling, in turn (MX_LONG_TESTS=1: in every
    spelling; a case compiles in seconds); FP4 codes one a byte (a row of K
    bytes) come from a matrix argument only, packed ones from a load only."""
    params: list[Any] = []
    for i, case in enumerate(CASES):
        spellings = SPELLINGS
        if case[2] == "f4e2m1fn":
            one_a_byte = case[5] == case[1]
            spellings = ("argument",) if one_a_byte else ("literal", "index")
        for j, spelling in enumerate(spellings):
            if LONG or i % len(spellings) == j:
                name = f"{spelling}-{case[2]}-{case[0]}x{case[1]}-{case[3]}"
                params.append(pytest.param(*case, spelling, id=name))
    return params


def _codes(
    rng: np.random.Generator, fmt: str, rows: int, pitch: int, spelling: str
) -> Array:
    """Every finite code (no NaN, whose sign LLVM may not keep; f4e2m1fn:
    every code, one a byte in an argument, packed in a load), `rows` rows
    `pitch` bytes apart."""
    if fmt == "f4e2m1fn":
        top = 16 if spelling == "argument" else 256
        return rng.integers(0, top, rows * pitch).astype(np.uint8)
    codes = rng.integers(0, 256, rows * pitch).astype(np.uint8)
    codes[: min(codes.size, 256)] = np.arange(min(codes.size, 256))
    finite = 0x7F if fmt == "f8e4m3fn" else 0x7C
    codes[(codes & 0x7F) >= finite] = 0x3C
    return codes


def _same_as_interpreter(
    text: str, mv: Any, codes: Array, args: list[Any], outputs: int, starts: Any
) -> None:
    """The JIT's `mv(codes, *args, y)` equals the interpreter's bits with the
    codes at each byte start in a line (`at_byte`); `outputs`: y's length."""
    module = Parser(mx_context(), text).parse_module()
    want = np.zeros(outputs, np.float32)
    run_function(module, "mv", codes, *args, want)
    assert np.isfinite(want).all()
    for by in starts:
        got = np.zeros(outputs, np.float32)
        mv(at_byte(codes, by), *args, got)
        assert got.tobytes() == want.tobytes(), by


@pytest.mark.ci_sample(4)
@pytest.mark.parametrize("by_lines", [True, False], ids=["lines", "host"])
@pytest.mark.parametrize(
    ("rows", "cols", "fmt", "block", "scale", "pitch", "spelling"), _params()
)
def test_rows_at_every_start_in_a_line(
    rows: int,
    cols: int,
    fmt: str,
    block: int,
    scale: str,
    pitch: int,
    spelling: str,
    by_lines: bool,
    jit_host: JitHost,
) -> None:
    """At each byte offset of the codes in a cache line (words of 4 codes
    at every alignment), on a `lines_host` the first and last masked steps
    and the blocks each word of a line step falls in, and on this host (rows
    in different L1 sets: chunks) the chunks: the interpreter's bits."""
    if spelling == "argument":
        pitch = cols  # (a C-ordered array: rows K bytes apart)
    text = _source(rows, cols, fmt, block, scale, pitch, spelling)
    if by_lines:
        host = lines_host(host_cpu())
        assert reads_address(text, host) == (pitch % 64 == 0)
        jit_host(host)
        text = "// by lines\n" + text
    mv = compile_module(text).mv
    assert "kernel: fused block-scaled vector" in mv.remarks[0], mv.remarks
    rng = np.random.default_rng(rows + cols + block)
    codes = _codes(rng, fmt, rows, pitch, spelling)
    low, high = (120, 136) if scale == "f8e8m0fnu" else (0x20, 0x48)
    scales = rng.integers(low, high, rows * cols // block).astype(np.uint8)
    x = rng.standard_normal(cols).astype(np.float32)
    bias = rng.standard_normal(rows).astype(np.float32)
    extra: list[Any] = [0] if spelling == "index" else []
    module = Parser(mx_context(), text).parse_module()
    weights = codes.reshape(rows, pitch) if spelling == "argument" else codes
    want = np.zeros(rows, np.float32)
    run_function(module, "mv", weights, *extra, scales, x, bias, want)
    assert np.isfinite(want).all()
    for by in range(64):
        w = at_byte(codes, by)
        got = np.zeros(rows, np.float32)
        w = w.reshape(rows, pitch) if spelling == "argument" else w
        mv(w, *extra, scales, x, bias, got)
        assert got.tobytes() == want.tobytes(), by


@pytest.mark.parametrize(
    ("fmt", "spelling"),
    [*(("f8e4m3fn", s) for s in SPELLINGS), ("f4e2m1fn", "literal")],
)
@pytest.mark.parametrize("pitch", [128, 160], ids=str)
def test_the_steps_start_at_the_codes_address(
    pitch: int, fmt: str, spelling: str
) -> None:
    """The lowering (NumPy's layout at the boundary) for a `lines_host`
    reads the codes' address when rows are a whole number of lines apart
    (pitch in bytes, packed FP4 codes too), else steps from column 0 (no
    line start serves every row); for mx-opt's 16 lanes and 12-way L1
    (rows in different sets) it steps from column 0."""
    cols = 128 if spelling != "argument" else pitch
    text = _source(32, cols, fmt, 32, "f8e8m0fnu", pitch, spelling)
    assert reads_address(text, lines_host(host_cpu())) == (pitch % 64 == 0)
    assert not reads_address(text)


def _layers_source(rows: int, cols: int, layers: int, pitch: int = 0) -> str:
    """y(i) = W(i)·x over `layers` layers of packed MXFP4 codes, rows `pitch`
    bytes apart (0: K/2, contiguous), layer i at offset %o + i·size: the
    offsets' parity is known at run time only."""
    step = 2 * pitch if pitch else cols
    stride = f" stride {step}" if step != cols else ""
    q = f"!matrix.matrix<{rows}x{cols}xi4>"
    s = f"!matrix.matrix<{rows}x{cols // 32}xi8>"
    w = f"!matrix.matrix<{rows}x{cols}xf32>"
    return f"""func.func @mv(%w: memref<?xi8>, %o: index, %s: memref<?xi8>, %xs: memref<?xf32>, %ys: memref<?xf32>) {{
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %n = arith.constant {layers} : index
  %rows = arith.constant {rows} : index
  %size = arith.constant {rows * step} : index
  %ssize = arith.constant {rows * cols // 32} : index
  %x = vector.load %xs[%c0] : memref<?xf32>, vector<{cols}xf32>
  scf.for %i = %c0 to %n step %c1 {{
    %at = arith.muli %i, %size : index
    %off = arith.addi %o, %at : index
    %so = arith.muli %i, %ssize : index
    %q = matrix.row_major_load %w[%off]{stride} packed : memref<?xi8> -> {q}
    %sc = matrix.column_major_load %s[%so] : memref<?xi8> -> {s}
    %f = arbfp.scaled_convert_from f4e2m1fn %q, %sc block 32 : {q}, {s} to {w}
    %y = matrix.matvec %f, %x : {w}, vector<{cols}xf32> -> vector<{rows}xf32>
    %yo = arith.muli %i, %rows : index
    vector.store %y, %ys[%yo] : memref<?xf32>, vector<{rows}xf32>
  }}
  func.return
}}"""


def test_packed_lines_in_a_loop_at_index_offsets(jit_host: JitHost) -> None:
    """Packed FP4 rows in a loop over three layers at offsets %o + i·size
    on a `lines_host` (the kernel behind the run-time parity check steps by
    lines): the interpreter's bits at several byte starts of the codes in a
    line, and at an odd %o (element by element)."""
    rows, cols, layers = 32, 256, 3
    text = _layers_source(rows, cols, layers)
    host = lines_host(host_cpu())
    assert reads_address(text, host)
    jit_host(host)
    mv = compile_module("// by lines\n" + text).mv
    assert "kernel: fused block-scaled vector" in mv.remarks[0], mv.remarks
    rng = np.random.default_rng(7)
    codes = rng.integers(0, 256, layers * rows * cols // 2 + 1).astype(np.uint8)
    scales = rng.integers(120, 136, layers * rows * cols // 32).astype(np.uint8)
    x = rng.standard_normal(cols).astype(np.float32)
    for offset in (0, 1):
        args = [offset, scales, x]
        _same_as_interpreter(text, mv, codes, args, layers * rows, (0, 5, 16, 60))


@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize(
    ("rows", "cols"),
    [
        pytest.param(256, 1024, id="whole-lines"),
        # rows 512 bytes apart holding 480 (K not whole lines), and a last
        # group of rows overlapping the one before
        pytest.param(290, 960, id="tails"),
    ],
)
def test_packed_lines_on_threads(
    rows: int, cols: int, threads: int, jit_host: JitHost
) -> None:
    """The threaded kernel (at least 2^18 multiply-adds, literal offset)
    steps packed FP4 rows by lines too on a `lines_host` (it reads the
    codes' address): the interpreter's bits on one and two threads at
    several byte starts of the codes in a line, with and without tails."""
    pitch = 512
    text = _source(rows, cols, "f4e2m1fn", 32, "f8e8m0fnu", pitch, "literal")
    host = lines_host(host_cpu())
    assert reads_address(text, host)
    jit_host(host)
    text = "// by lines\n" + text
    assert "mv__parallel" in lower_to_llvm_ir(text)[0]
    mv = compile_module(text).mv
    assert "kernel: fused block-scaled vector" in mv.remarks[0], mv.remarks
    rng = np.random.default_rng(threads)
    codes = rng.integers(0, 256, rows * pitch).astype(np.uint8)
    scales = rng.integers(120, 136, rows * cols // 32).astype(np.uint8)
    x = rng.standard_normal(cols).astype(np.float32)
    bias = rng.standard_normal(rows).astype(np.float32)
    with num_threads(threads):
        _same_as_interpreter(text, mv, codes, [scales, x, bias], rows, (0, 5, 16, 60))


@pytest.mark.parametrize("spelling", ["literal", "index"])
@pytest.mark.parametrize(
    ("fmt", "cols"), [("f8e4m3fn", 128), ("f4e2m1fn", 256)], ids=["mxfp8", "mxfp4"]
)
def test_one_tile_at_a_time_where_two_overflow_an_l1_set(
    fmt: str, cols: int, spelling: str, jit_host: JitHost
) -> None:
    """Rows 4 KiB apart (all in one L1 set) on a host whose L1 has as many
    ways as a tile has rows: the group's tiles are read by chunks, one
    after the other (`one_by_one`), each loop carrying one tile's sums; the
    interpreter's bits at several byte starts of the codes in a line, with a
    last group of rows overlapping the one before, at a literal offset and
    an `index` one (0 at run time)."""
    host = one_tile_host(host_cpu())
    jit_host(host)
    rows, pitch = 3 * host.f32_lanes, 4096
    text = _source(rows, cols, fmt, 32, "f8e8m0fnu", pitch, spelling)
    assert one_tile_loops(text, host)
    assert not reads_address(text, host)
    mv = compile_module("// one tile at a time\n" + text).mv
    assert "kernel: fused block-scaled vector" in mv.remarks[0], mv.remarks
    rng = np.random.default_rng(cols)
    codes = _codes(rng, fmt, rows, pitch, "literal")
    scales = rng.integers(120, 136, rows * cols // 32).astype(np.uint8)
    x = rng.standard_normal(cols).astype(np.float32)
    bias = rng.standard_normal(rows).astype(np.float32)
    args = [*([0] if spelling == "index" else []), scales, x, bias]
    _same_as_interpreter(text, mv, codes, args, rows, (0, 5, 16, 32, 60))


def test_one_tile_at_a_time_in_a_loop_at_index_offsets(jit_host: JitHost) -> None:
    """The same in the decode loop: packed MXFP4 rows 4 KiB apart in a loop
    over two layers at offsets %o + i·size (the kernel behind the run-time
    parity check), at an even and an odd %o (element by element)."""
    host = one_tile_host(host_cpu())
    jit_host(host)
    rows, cols, layers, pitch = 3 * host.f32_lanes, 256, 2, 4096
    text = _layers_source(rows, cols, layers, pitch)
    assert one_tile_loops(text, host)
    mv = compile_module("// one tile at a time\n" + text).mv
    assert "kernel: fused block-scaled vector" in mv.remarks[0], mv.remarks
    rng = np.random.default_rng(11)
    codes = rng.integers(0, 256, layers * rows * pitch + 1).astype(np.uint8)
    scales = rng.integers(120, 136, layers * rows * cols // 32).astype(np.uint8)
    x = rng.standard_normal(cols).astype(np.float32)
    for offset in (0, 1):
        args = [offset, scales, x]
        _same_as_interpreter(text, mv, codes, args, layers * rows, (0, 5, 16, 60))


@pytest.mark.parametrize("block", [96, 128, 192], ids=str)
def test_line_steps_of_blocks_longer_than_a_line(block: int, jit_host: JitHost) -> None:
    """MXFP8 rows read by lines (a `lines_host`) whose blocks are longer
    than a line (64 codes): 96, not a multiple of it (a step after one on a
    block's start starts inside a block: its words took the scales of the
    block holding the step's first column until session 36), 128 and 192
    (whole lines a block): the interpreter's bits with the rows starting on
    a block's start and elsewhere in a line. Every case runs in CI (the
    every-start test samples its cases)."""
    rows, cols = 32, 384
    text = _source(rows, cols, "f8e4m3fn", block, "f8e8m0fnu", cols, "literal")
    host = lines_host(host_cpu())
    assert reads_address(text, host)
    jit_host(host)
    mv = compile_module("// by lines, odd blocks\n" + text).mv
    assert "kernel: fused block-scaled vector" in mv.remarks[0], mv.remarks
    rng = np.random.default_rng(block)
    codes = _codes(rng, "f8e4m3fn", rows, cols, "literal")
    scales = rng.integers(120, 136, rows * cols // block).astype(np.uint8)
    x = rng.standard_normal(cols).astype(np.float32)
    bias = rng.standard_normal(rows).astype(np.float32)
    _same_as_interpreter(text, mv, codes, [scales, x, bias], rows, (0, 4, 32, 60))

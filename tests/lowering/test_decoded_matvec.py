"""The weight-times-vector kernel of FP4/FP8 dequantizations (column-major
weights, rows a multiple of two machine vectors: `decoded_matvec.py`):
the JIT equals the interpreter bit for bit (NaN, subnormal and extreme
scales included) on every form it takes — per-tensor constant or runtime
scales, MXFP4/MXFP8/NVFP4 block scales, packed offsets and strides, narrow
last passes, bias, strict and `contract` — and, strict, a reference of
ml_dtypes decoding and NumPy summing each row in k order."""

import re
from typing import Any

import ml_dtypes
import numpy as np
import numpy.typing as npt
import pytest
from xdsl.context import Context
from xdsl.dialects import arith
from xdsl.dialects.builtin import DenseIntOrFPElementsAttr, IntegerType, ModuleOp
from xdsl.dialects.func import FuncOp
from xdsl.parser import Parser

from mx.frontend import mx_context
from mx.interpreters import run_function
from mx.jit import compile_module
from mx.jit_compile import compile_text
from mx.jit_machine_code import host_cpu
from mx.jit_runtime import DEFAULT_PIPELINE
from mx.lowering.matrix_to_affine.convert_matrix_to_affine import (
    ConvertMatrixToAffinePass,
)
from mx.lowering.matrix_to_affine.kernel_remarks import (
    FUSED_BLOCK_SCALED,
    FUSED_DECODE,
    recording,
)
from mx.lowering.matrix_to_affine.target_cpu import TargetCpu, for_target_cpu
from mx.passes.mx_lower_to_llvm import PIPELINE
from tests.fixtures import JitHost
from tests.placement import at_byte, lines_host, reads_address
from tests.sampling import LONG

Array = npt.NDArray[Any]


def _parse(text: str) -> ModuleOp:
    return Parser(mx_context(), text).parse_module()


def _same(actual: Any, expected: Any) -> bool:
    """Bit for bit, but for a NaN's sign: where sums meet infinities of both
    signs (f8e5m2 has them), the sign of inf - inf's NaN follows the order of
    an fadd's operands, which LLVM may swap."""
    a, b = np.asarray(actual), np.asarray(expected)
    if a.shape != b.shape:
        return False
    bits_a, bits_b = a.view(np.uint32).copy(), b.view(np.uint32).copy()
    bits_a[np.isnan(a)] &= 0x7FFFFFFF
    bits_b[np.isnan(b)] &= 0x7FFFFFFF
    return bits_a.tobytes() == bits_b.tobytes()


def _fp8_codes(rng: np.random.Generator, n: int) -> Array:
    """Every f8e4m3fn encoding, NaNs and subnormals included."""
    codes = rng.integers(0, 256, n).astype(np.uint8)
    codes[: min(n, 256)] = np.arange(min(n, 256))
    return codes


def _scale_codes(rng: np.random.Generator, n: int, fmt: str) -> Array:
    """Mostly moderate scales, NaN and the extremes mixed in."""
    if fmt == "f8e8m0fnu":
        codes = rng.integers(112, 142, n)
        special = [0xFF, 0x00, 0xFE, 0x01]
    else:
        codes = rng.integers(0x20, 0x60, n) | (rng.integers(0, 2, n) << 7)
        special = [0x7F, 0x00, 0x80, 0x7E]
    codes[rng.choice(n, size=min(n, 4), replace=False)] = special[: min(n, 4)]
    return codes.astype(np.uint8)


PER_TENSOR = [
    # rows, cols, format, scale ("" none, a constant, or "arg"), fastmath, bias, layout
    (32, 40, "f8e4m3fn", "", "", False, "column_major"),
    (64, 17, "f8e4m3fn", "0.375", "contract", True, "column_major"),
    (96, 33, "f8e4m3fn", "arg", "", False, "column_major"),
    (32, 40, "f8e4m3fn", "3.0e38", "contract", False, "column_major"),  # not folded
    (32, 48, "f4e2m1fn", "", "contract", True, "column_major"),
    (64, 18, "f4e2m1fn", "0.1", "", False, "column_major"),
    (32, 20, "f4e2m1fn", "arg", "contract", False, "column_major"),
    (32, 64, "f4e2m1fn", "", "", True, "row_major"),
    (64, 128, "f4e2m1fn", "0.1", "contract", False, "row_major"),
    (32, 192, "f4e2m1fn", "arg", "", False, "row_major"),
    (32, 64, "f8e4m3fn", "0.375", "", True, "row_major"),
    (64, 32, "f8e4m3fn", "arg", "contract", False, "row_major"),
    # row-major K not a multiple of a chunk (64 f4e2m1fn, 32 f8e4m3fn): a
    # narrower last chunk, alone or after whole ones
    (32, 40, "f4e2m1fn", "", "contract", True, "row_major"),
    (32, 72, "f4e2m1fn", "0.1", "", False, "row_major"),
    (64, 44, "f8e4m3fn", "arg", "", True, "row_major"),
    (32, 12, "f8e4m3fn", "", "contract", False, "row_major"),
    # rows not a multiple of 32: a last group overlapping the one before
    (40, 48, "f4e2m1fn", "0.1", "", True, "column_major"),
    (33, 40, "f8e4m3fn", "arg", "contract", True, "column_major"),
    (45, 64, "f4e2m1fn", "", "", True, "row_major"),
    (70, 36, "f8e4m3fn", "0.375", "", False, "row_major"),
    # f8e5m2: f16's high byte (no power of two; a constant factor still folds)
    (32, 40, "f8e5m2", "", "", False, "column_major"),
    (33, 24, "f8e5m2", "0.375", "contract", True, "column_major"),
    (32, 64, "f8e5m2", "arg", "", True, "row_major"),
    (70, 36, "f8e5m2", "", "contract", False, "row_major"),
]


def _per_tensor_source(case: tuple[int, int, str, str, str, bool, str]) -> str:
    rows, cols, fmt, scale, fastmath, bias, layout = case
    element = "i4" if fmt == "f4e2m1fn" else "i8"
    packed = " packed" if element == "i4" else ""
    q = f"!matrix.matrix<{rows}x{cols}x{element}>"
    w = f"!matrix.matrix<{rows}x{cols}xf32>"
    fm = f" fastmath<{fastmath}>" if fastmath else ""
    arg = ", %s: f32" if scale == "arg" else ""
    b_arg = f", %b: vector<{rows}xf32>" if bias else ""
    b_use, b_type = (", %b", f", vector<{rows}xf32>") if bias else ("", "")
    if scale == "":
        scaled = ""
        m = "%d"
    else:
        value = "%s" if scale == "arg" else "%c"
        constant = "" if scale == "arg" else f"%c = arith.constant {scale} : f32\n  "
        scaled = f"{constant}%k = matrix.splat {value} : {w}\n  %m = matrix.mul %k, %d : {w}\n  "
        m = "%m"
    leading = rows if layout == "column_major" else cols
    stride = leading + 2 if element == "i4" else leading + 3
    offset = 4 if element == "i4" else 5
    return f"""
func.func @mv(%mem: memref<?xi8>, %x: vector<{cols}xf32>{arg}{b_arg}) -> vector<{rows}xf32> {{
  %q = matrix.{layout}_load %mem[{offset}] stride {stride}{packed} : memref<?xi8> -> {q}
  %d = arbfp.convert_from {fmt} %q : {q} to {w}
  {scaled}%y = matrix.matvec {m}, %x{b_use}{fm} : {w}, vector<{cols}xf32>{b_type} -> vector<{rows}xf32>
  func.return %y : vector<{rows}xf32>
}}
func.func @w(%mem: memref<?xi8>, %x: vector<{cols}xf32>{arg}{b_arg}) -> {w} {{
  %q = matrix.{layout}_load %mem[{offset}] stride {stride}{packed} : memref<?xi8> -> {q}
  %d = arbfp.convert_from {fmt} %q : {q} to {w}
  {scaled}func.return {m} : {w}
}}
"""


def _fma(a: Array, b: np.float32, c: Array) -> Array:
    """a*b + c rounded once to f32, elementwise: the product is exact in
    f64, TwoSum gives the error of the f64 sum exactly, and that sum rounded
    to odd (53 bits, at least 24 + 2) then to f32 rounds as the exact value
    would (overflow to inf); infinities, NaNs and the sign of an exact zero
    as IEEE f64 arithmetic gives them, which f32's would too."""
    with np.errstate(invalid="ignore", over="ignore"):
        p = a.astype(np.float64) * np.float64(b)
        c64 = c.astype(np.float64)
        s = p + c64
        t = s - p
        err = (p - (s - t)) + (c64 - t)
        inexact = np.isfinite(s) & (err != 0)
        toward_zero = inexact & ((err < 0) != (s < 0))  # |a*b + c| < |s|
        truncated = np.where(toward_zero, np.nextafter(s, 0), s)
        odd = truncated.view(np.uint64) | inexact.astype(np.uint64)
        return odd.view(np.float64).astype(np.float32)


def _contracted(
    jit: Array, interpreted: Array, w: Array, x: Array, bias: Array | None
) -> None:
    """With `contract` each step is one FMA: y(r) = fma(w(r, k), x(k), ..)
    from -0 in k order (then + bias), checked exactly; the interpreter
    computes the unfused order, so only its NaNs must agree."""
    assert np.array_equal(np.isnan(jit), np.isnan(interpreted))
    acc = np.full(w.shape[0], -0.0, np.float32)
    for k in range(w.shape[1]):
        acc = _fma(w[:, k], x[k], acc)
    if bias is not None:
        with np.errstate(invalid="ignore"):
            acc = (acc + bias).astype(np.float32)
    assert np.array_equal(np.isnan(acc), np.isnan(jit))
    finite = ~np.isnan(acc)
    assert np.array_equal(acc[finite].view(np.uint32), jit[finite].view(np.uint32))


def _check(
    source: str, args: list[Any], actual: Any, expected: Any, bias: bool
) -> None:
    if "contract" not in source:
        assert _same(actual, expected)
        return
    (w,) = run_function(_parse(source), "w", *args)
    b = args[-1] if bias else None
    _contracted(
        np.asarray(actual),
        np.asarray(expected),
        np.asarray(w),
        args[2 if "%s: memref" in source else 1],
        b,
    )


def _kernel_ir(source: str) -> bool:
    """The lowering of `@mv` holds the kernel: its f4e2m1fn table, or its
    f8e4m3fn bytes sign-extended into f16 lanes (column-major) or words
    read as two 16-bit lanes, whose bytes become f16 bits (row-major)."""
    module = _parse(_mv(source))
    ConvertMatrixToAffinePass().apply(Context(), module)
    text = str(module)
    table = re.search(r"dense<\[[^]]*\]> : vector<16xf32>", text)
    return (
        "vector<32xi8> to vector<32xi16>" in text
        or "vector<16xi32> to vector<32xi16>" in text
        or table is not None
    )


def _mv(source: str) -> str:
    """The kernel `@mv` alone: `@w` (the decoded weights) is only
    interpreted, so the JIT need not compile it."""
    return source.split("func.func @w")[0]


def _compiled_kernel(source: str, kernel: str, cached: bool = True) -> Any:
    """The JIT's `@mv`, which the lowering gave the fused `kernel` (its
    remark; `test_the_remark_names_the_emitted_kernel` checks the IR of one
    case of each format, layout and scaling); not `cached`: compiled anew
    (for a host a test makes up)."""
    compile = compile_module if cached else compile_text
    f = compile(_mv(source), DEFAULT_PIPELINE).mv
    assert f.remarks[0].endswith(f"kernel: {kernel}"), f.remarks
    return f


@pytest.mark.ci_sample(10)
@pytest.mark.parametrize("case", PER_TENSOR, ids=str)
def test_per_tensor_matches_the_interpreter(
    case: tuple[int, int, str, str, str, bool, str],
) -> None:
    source = _per_tensor_source(case)
    args = _per_tensor_args(case)
    actual = _compiled_kernel(source, FUSED_DECODE)(*args)
    (expected,) = run_function(_parse(source), "mv", *args)
    _check(source, args, actual, expected, case[5])
    assert np.isfinite(expected).any() or case[3] == "3.0e38"  # (inf - inf)


RUN_TIME_SCALES = [
    -0.625,
    2.0**-140,
    0.0,
    2.0**119,
    (2 - 2.0**-23) * 2.0**119,
    2.0**120,
    -1.5 * 2.0**120,
    2.0**121,
]
"""Run-time scales s of f8e4m3fn codes: s·2^8 finite (a subnormal s, and
the largest s, whose s·2^8 is f32's largest value), or overflowing (from
2^120); ±inf and NaN are added below."""


def test_run_time_scales_of_f8e4m3fn_rows() -> None:
    """Row-major f8e4m3fn codes times a run-time scale s take s·2^8 as one
    factor where that is finite (`_Kernel.folded`), else 2^8 and s apart:
    the same bits as the interpreter for every s, with codes of every value
    and with codes below 2^-3 (whose products with s up to 2^121 are
    finite, and would be infinite with s·2^8)."""
    case = (64, 44, "f8e4m3fn", "arg", "", True, "row_major")
    source = _per_tensor_source(case)
    args = _per_tensor_args(case)
    mv = _compiled_kernel(source, FUSED_DECODE)
    every = args[0]
    small = every & np.uint8(0x9F)  # (exponent field at most 3)
    for codes in (every, small):
        for s in [*RUN_TIME_SCALES, np.inf, -np.inf, np.nan]:
            values = [codes, args[1], np.float32(s), *args[3:]]
            actual = mv(*values)
            (expected,) = run_function(_parse(source), "mv", *values)
            assert _same(actual, expected), s
            if codes is small and s == 2.0**121:
                assert np.isfinite(expected).all()


def _per_tensor_args(case: tuple[int, int, str, str, str, bool, str]) -> list[Any]:
    """Codes (every f8e4m3fn one), x, the scale if an argument, the bias."""
    rows, cols, _, scale, _, bias, _ = case
    rng = np.random.default_rng(rows * cols)
    size = 5 + (rows + 3) * (cols + 3) + 8
    codes = _fp8_codes(rng, size)
    args: list[Any] = [codes, rng.standard_normal(cols).astype(np.float32)]
    if scale == "arg":
        args.append(np.float32(-0.625))
    if bias:
        args.append(rng.standard_normal(rows).astype(np.float32))
    return args


FP4_COLUMNS = (32, 40, "f4e2m1fn", "-0.375", "", True, "column_major")
"""A negative constant factor, folded into the table."""
FP4_ROWS = (32, 72, "f4e2m1fn", "arg", "contract", False, "row_major")


@pytest.mark.parametrize(
    ("case", "permutes"),
    # (the row-major kernel with 16 values takes LLVM ~50 s on an AVX2 host;
    # every other FP4 test compiles it on AVX-512 hosts)
    [(FP4_COLUMNS, 16), (FP4_COLUMNS, 8), (FP4_ROWS, 8)],
    ids=str,
)
def test_fp4_tables_for_either_permute_width(
    case: tuple[int, int, str, str, str, bool, str],
    permutes: int,
    jit_host: JitHost,
) -> None:
    """The f4e2m1fn kernel as the JIT compiles it for a host whose permutes
    pick from 16 lanes (AVX-512: a table of the 16 values) and from 8 (AVX2:
    the 8 magnitudes, the sign set from the code), whatever the host, against
    the interpreter."""
    target = TargetCpu(permutes)
    jit_host(target)
    source = _per_tensor_source(case)
    module = _parse(_mv(source))
    with for_target_cpu(target):
        ConvertMatrixToAffinePass().apply(Context(), module)
    assert re.search(rf"dense<\[[^]]*\]> : vector<{permutes}xf32>", str(module))
    args = _per_tensor_args(case)
    actual = _compiled_kernel(source, FUSED_DECODE, cached=False)(*args)
    (expected,) = run_function(_parse(source), "mv", *args)
    _check(source, args, actual, expected, case[5])


LINE_STEP_CASES = [
    (64, 64, "f8e4m3fn", "arg", "", False, "row_major"),
    (32, 200, "f8e5m2", "", "contract", True, "row_major"),
    (70, 132, "f8e4m3fn", "0.375", "", False, "row_major"),
]


def _line_step_params() -> list[Any]:
    """Each case with strided and with dense rows where that changes the
    class: dense 64-byte rows are a line apart, strided ones are not; the
    other cases' rows are not a line's multiple apart either way, so they
    take one of the two in turn (MX_LONG_TESTS=1: both)."""
    return [
        pytest.param(case, dense, id=f"{'dense' if dense else 'stride'}-{case}")
        for i, case in enumerate(LINE_STEP_CASES)
        for dense in (False, True)
        if LONG or case[1] % 64 == 0 or dense == (i % 2 == 0)
    ]


@pytest.mark.parametrize(("case", "dense"), _line_step_params())
def test_per_tensor_rows_at_every_start_in_a_line(
    case: tuple[int, int, str, str, str, bool, str], dense: bool, jit_host: JitHost
) -> None:
    """Row-major per-tensor FP8 codes on a `lines_host` step by cache lines
    from the first column at a line's start (the codes' address) where the
    rows are a whole number of lines apart, the columns before and after in
    masked steps (else by chunks): at each of the 64 byte offsets the same
    bits as the interpreter (with a run-time scale, by the folded kernel:
    `_Kernel.folded`)."""
    rows, cols, _, scale, _, bias, _ = case
    source = _per_tensor_source(case)
    if dense:
        source = source.replace(f" stride {cols + 3}", "")
    host = lines_host(host_cpu())
    assert reads_address(source, host) == (dense and cols % 64 == 0)
    jit_host(host)
    source = "// by lines\n" + source
    rng = np.random.default_rng(rows * cols)
    codes = _fp8_codes(rng, 5 + (rows + 3) * (cols + 3) + 8)
    rest: list[Any] = [rng.standard_normal(cols).astype(np.float32)]
    if scale == "arg":
        rest.append(np.float32(-0.625))
    if bias:
        rest.append(rng.standard_normal(rows).astype(np.float32))
    (expected,) = run_function(_parse(source), "mv", codes, *rest)
    mv = compile_module(_mv(source)).mv
    assert mv.remarks[0].endswith("kernel: fused decode vector"), mv.remarks
    for by in range(64):
        actual = mv(at_byte(codes, by), *rest)
        assert _same(actual, expected), by


BLOCK_SCALED = [
    # rows, cols, format, block, scale format, fastmath, bias, layout
    (32, 64, "f4e2m1fn", 32, "f8e8m0fnu", "", False, "column_major"),
    (64, 96, "f4e2m1fn", 32, "f8e8m0fnu", "contract", True, "column_major"),
    (32, 48, "f4e2m1fn", 16, "f8e4m3fn", "", True, "column_major"),
    (32, 64, "f8e4m3fn", 32, "f8e8m0fnu", "", True, "column_major"),
    (96, 64, "f8e4m3fn", 32, "f8e8m0fnu", "contract", False, "column_major"),
    (32, 24, "f8e4m3fn", 8, "f8e8m0fnu", "contract", False, "column_major"),
    (32, 128, "f4e2m1fn", 32, "f8e8m0fnu", "", True, "row_major"),
    (64, 64, "f4e2m1fn", 16, "f8e4m3fn", "contract", False, "row_major"),
    (32, 256, "f4e2m1fn", 128, "f8e8m0fnu", "", False, "row_major"),
    (32, 64, "f8e4m3fn", 32, "f8e8m0fnu", "", True, "row_major"),
    (32, 96, "f8e4m3fn", 16, "f8e8m0fnu", "contract", False, "row_major"),
    # row-major K not a multiple of a chunk
    (32, 96, "f4e2m1fn", 32, "f8e8m0fnu", "", True, "row_major"),
    (64, 160, "f4e2m1fn", 32, "f8e8m0fnu", "contract", False, "row_major"),
    # a whole cache line (128 columns) of each row, then 13 words (8 + 5)
    (32, 232, "f4e2m1fn", 8, "f8e8m0fnu", "", False, "row_major"),
    (32, 48, "f8e4m3fn", 16, "f8e8m0fnu", "", False, "row_major"),
    # rows not a multiple of 32
    (50, 64, "f4e2m1fn", 32, "f8e8m0fnu", "", True, "column_major"),
    (47, 64, "f8e4m3fn", 32, "f8e8m0fnu", "contract", False, "column_major"),
    (39, 96, "f4e2m1fn", 32, "f8e8m0fnu", "", True, "row_major"),
    (81, 64, "f8e4m3fn", 16, "f8e8m0fnu", "", False, "row_major"),
    # MXFP8 with f8e5m2 elements
    (32, 64, "f8e5m2", 32, "f8e8m0fnu", "", True, "column_major"),
    (47, 96, "f8e5m2", 32, "f8e8m0fnu", "contract", False, "column_major"),
    (32, 96, "f8e5m2", 32, "f8e8m0fnu", "", False, "row_major"),
    (64, 232, "f8e5m2", 8, "f8e8m0fnu", "contract", True, "row_major"),
]


def _scaled_source(case: tuple[int, int, str, int, str, str, bool, str]) -> str:
    rows, cols, fmt, block, scale, fastmath, bias, layout = case
    stride = (rows if layout == "column_major" else cols) + 4
    element = "i4" if fmt == "f4e2m1fn" else "i8"
    packed = " packed" if element == "i4" else ""
    q = f"!matrix.matrix<{rows}x{cols}x{element}>"
    s = f"!matrix.matrix<{rows}x{cols // block}xi8>"
    w = f"!matrix.matrix<{rows}x{cols}xf32>"
    fm = f" fastmath<{fastmath}>" if fastmath else ""
    b_arg = f", %b: vector<{rows}xf32>" if bias else ""
    b_use, b_type = (", %b", f", vector<{rows}xf32>") if bias else ("", "")
    return f"""
func.func @mv(%w: memref<?xi8>, %s: memref<?xi8>, %x: vector<{cols}xf32>{b_arg}) -> vector<{rows}xf32> {{
  %q = matrix.{layout}_load %w[2] stride {stride}{packed} : memref<?xi8> -> {q}
  %sc = matrix.column_major_load %s[0] : memref<?xi8> -> {s}
  %f = arbfp.scaled_convert_from {fmt} %q, %sc block {block} scale {scale} : {q}, {s} to {w}
  %y = matrix.matvec %f, %x{b_use}{fm} : {w}, vector<{cols}xf32>{b_type} -> vector<{rows}xf32>
  func.return %y : vector<{rows}xf32>
}}
func.func @w(%w: memref<?xi8>, %s: memref<?xi8>, %x: vector<{cols}xf32>{b_arg}) -> {w} {{
  %q = matrix.{layout}_load %w[2] stride {stride}{packed} : memref<?xi8> -> {q}
  %sc = matrix.column_major_load %s[0] : memref<?xi8> -> {s}
  %f = arbfp.scaled_convert_from {fmt} %q, %sc block {block} scale {scale} : {q}, {s} to {w}
  func.return %f : {w}
}}
"""


def _scaled_args(case: tuple[int, int, str, int, str, str, bool, str]) -> list[Any]:
    """Weights (every f8e4m3fn code), scale codes, x and the bias if any."""
    rows, cols, _, block, scale, _, bias, _ = case
    rng = np.random.default_rng(rows + cols + block)
    args: list[Any] = [
        _fp8_codes(rng, 2 + (cols + 4) * (rows + 4) + 8),
        _scale_codes(rng, rows * cols // block, scale),
        rng.standard_normal(cols).astype(np.float32),
    ]
    if bias:
        args.append(rng.standard_normal(rows).astype(np.float32))
    return args


@pytest.mark.ci_sample(10)
@pytest.mark.parametrize("case", BLOCK_SCALED, ids=str)
def test_block_scaled_matches_the_interpreter(
    case: tuple[int, int, str, int, str, str, bool, str],
) -> None:
    source = _scaled_source(case)
    args = _scaled_args(case)
    bias = case[6]
    actual = _compiled_kernel(source, FUSED_BLOCK_SCALED)(*args)
    (expected,) = run_function(_parse(source), "mv", *args)
    _check(source, args, actual, expected, bias)
    assert np.isnan(expected).any() and np.isfinite(expected).any()


def _smallest_of_each_class() -> list[Any]:
    """(source, kernel) of the smallest case of each format and layout,
    per-tensor and block-scaled."""
    chosen: dict[tuple[str, str, str], tuple[int, str]] = {}
    cases = [(c, _per_tensor_source(c), FUSED_DECODE) for c in PER_TENSOR] + [
        (c, _scaled_source(c), FUSED_BLOCK_SCALED) for c in BLOCK_SCALED
    ]
    for case, source, kernel in cases:
        size, key = case[0] * case[1], (str(case[2]), str(case[-1]), kernel)
        if key not in chosen or size < chosen[key][0]:
            chosen[key] = (size, source)
    return [
        pytest.param(source, kernel, id=f"{fmt}-{layout}-{kernel}")
        for (fmt, layout, kernel), (_, source) in chosen.items()
    ]


@pytest.mark.parametrize(("source", "kernel"), _smallest_of_each_class())
def test_the_remark_names_the_emitted_kernel(source: str, kernel: str) -> None:
    """The remark the tests above trust names the kernel whose IR the same
    lowering emits (one case of each class: lowering each case again would
    double their cost)."""
    with recording() as remarks:
        assert _kernel_ir(source)
    assert [r.kernel for r in remarks] == [kernel], remarks


@pytest.mark.parametrize(
    "case", [BLOCK_SCALED[6], BLOCK_SCALED[9]], ids=["mxfp4", "mxfp8"]
)
def test_the_steps_masks_and_shifts_are_built_once(case: tuple[Any, ...]) -> None:
    """The integer vector constants of the decode steps (masks, shifts,
    the NaN half) are the function's, each built once in its entry block:
    built where each step used them, they were a fifth of a row-major
    kernel's ops, in every loop body."""
    module = _parse(_mv(_scaled_source(case)))
    ConvertMatrixToAffinePass().apply(Context(), module)
    (function,) = [op for op in module.ops if isinstance(op, FuncOp)]
    constants = [
        op
        for op in function.walk()
        if isinstance(op, arith.ConstantOp)
        and isinstance(op.value, DenseIntOrFPElementsAttr)
        and isinstance(op.value.get_element_type(), IntegerType)
    ]
    assert len(constants) >= 3
    assert all(op.parent_block() is function.body.block for op in constants)
    values = [op.value for op in constants]
    assert len(set(values)) == len(values)


def _decoded(codes: Array, fmt: str) -> Array:
    """ml_dtypes' values of FP8 bytes or of packed f4e2m1fn nibbles."""
    if fmt == "f8e4m3fn":
        return codes.view(ml_dtypes.float8_e4m3fn).astype(np.float32)
    if fmt == "f8e5m2":
        return codes.view(ml_dtypes.float8_e5m2).astype(np.float32)
    nibbles = np.empty(codes.size * 2, np.uint8)
    nibbles[0::2], nibbles[1::2] = codes & 15, codes >> 4
    return nibbles.view(ml_dtypes.float4_e2m1fn).astype(np.float32)


@pytest.mark.parametrize(
    ("fmt", "layout"),
    [
        ("f4e2m1fn", "column_major"),
        ("f8e4m3fn", "column_major"),
        ("f4e2m1fn", "row_major"),
        ("f8e4m3fn", "row_major"),
        ("f8e5m2", "column_major"),
        ("f8e5m2", "row_major"),
    ],
)
def test_mx_matvec_equals_numpy(fmt: str, layout: str) -> None:
    """Independent of mx: ml_dtypes decodes elements and scales, NumPy
    multiplies them in f32 and sums each row in k order."""
    rows, cols, block = 64, 128, 32
    source = _scaled_source((rows, cols, fmt, block, "f8e8m0fnu", "", False, layout))
    rng = np.random.default_rng(11)
    codes = rng.integers(0, 256, 2 + (rows + 4) * (cols + 4) + 8).astype(np.uint8)
    if fmt == "f8e4m3fn":
        codes[(codes & 0x7F) == 0x7F] = 0x3C
    if fmt == "f8e5m2":  # (no infinities or NaNs: finite sums to compare)
        codes[(codes & 0x7F) >= 0x7C] = 0x3C
    scales = rng.integers(120, 136, rows * cols // block).astype(np.uint8)
    x = rng.standard_normal(cols).astype(np.float32)
    values = _decoded(codes, fmt)  # element n of the load's memory at n + 2
    if layout == "column_major":
        lines = [values[2 + k * (rows + 4) :][:rows] for k in range(cols)]
        m = np.stack(lines, axis=1)
    else:
        m = np.stack([values[2 + r * (cols + 4) :][:cols] for r in range(rows)])
    s = np.ldexp(np.float32(1), scales.astype(np.int32) - 127).astype(np.float32)
    s = s.reshape(cols // block, rows).T  # (column-major scales)
    w = m * np.repeat(s, block, axis=1)
    want = w[:, 0] * x[0]
    for k in range(1, cols):
        want = want + w[:, k] * x[k]
    got = np.asarray(_compiled_kernel(source, FUSED_BLOCK_SCALED)(codes, scales, x))
    assert np.array_equal(got.view(np.uint32), want.view(np.uint32))


AVX2_PIPELINE = ",".join(
    "convert-matrix-to-affine{vector-bits=256}"
    if p == "convert-matrix-to-affine"
    else p
    for p in PIPELINE
)


@pytest.mark.parametrize(
    "case",
    [
        (16, 48, "f4e2m1fn", 16, "f8e8m0fnu", "", True, "column_major"),
        (48, 32, "f8e4m3fn", 32, "f8e8m0fnu", "contract", False, "column_major"),
        (16, 64, "f4e2m1fn", 32, "f8e8m0fnu", "", False, "row_major"),
        (32, 32, "f8e4m3fn", 16, "f8e8m0fnu", "", True, "row_major"),
    ],
    ids=str,
)
def test_eight_lanes_match_the_interpreter(
    case: tuple[int, int, str, int, str, str, bool, str],
) -> None:
    """With 256-bit vectors (8 f32 lanes): groups of 16 rows, row-major
    chunks of 4 words."""
    source = _scaled_source(case)
    args = _scaled_args(case)
    bias = case[6]
    module = _parse(_mv(source))
    ConvertMatrixToAffinePass(vector_bits=256).apply(Context(), module)
    text = str(module)
    assert re.search(r"(arith\.addf|math\.fma) .* : vector<8xf32>", text)
    table = re.search(r"dense<\[[^]]*\]> : vector<8xf32>", text)  # (magnitudes)
    assert table or "to vector<16xi16>" in text or "to vector<8xi16>" in text
    actual = compile_module(_mv(source), AVX2_PIPELINE).mv(*args)
    (expected,) = run_function(_parse(source), "mv", *args)
    _check(source, args, actual, expected, bias)


def _kernel_remarks(source: str, name: str = "mv") -> tuple[str, ...]:
    return compile_module(source)[name].remarks


def _index_source(fmt: str, layout: str, rows: int, cols: int) -> str:
    """The MX matvec with the offsets of the weights and the scales as
    `index` arguments."""
    element, packed = ("i4", " packed") if fmt == "f4e2m1fn" else ("i8", "")
    q = f"!matrix.matrix<{rows}x{cols}x{element}>"
    s = f"!matrix.matrix<{rows}x{cols // 32}xi8>"
    w = f"!matrix.matrix<{rows}x{cols}xf32>"
    return f"""
func.func @mv(%w: memref<?xi8>, %s: memref<?xi8>, %x: vector<{cols}xf32>, %o: index, %so: index) -> vector<{rows}xf32> {{
  %q = matrix.{layout}_load %w[%o]{packed} : memref<?xi8> -> {q}
  %sc = matrix.column_major_load %s[%so] : memref<?xi8> -> {s}
  %f = arbfp.scaled_convert_from {fmt} %q, %sc block 32 : {q}, {s} to {w}
  %y = matrix.matvec %f, %x : {w}, vector<{cols}xf32> -> vector<{rows}xf32>
  func.return %y : vector<{rows}xf32>
}}
"""


@pytest.mark.parametrize(
    ("fmt", "layout", "rows", "cols"),
    [
        ("f4e2m1fn", "column_major", 32, 96),
        ("f4e2m1fn", "row_major", 64, 96),
        ("f8e4m3fn", "column_major", 32, 64),
        ("f8e4m3fn", "row_major", 32, 96),
    ],
)
def test_index_offsets_match_the_interpreter(
    fmt: str, layout: str, rows: int, cols: int
) -> None:
    """Offsets given at run time get the fused kernel; packed offsets are
    checked even at run time (an odd one is read element by element): every
    offset gives the interpreter's result bit for bit."""
    source = _index_source(fmt, layout, rows, cols)
    (remark,) = _kernel_remarks(source)
    assert "kernel: fused block-scaled vector" in remark
    assert ("checked even at run time" in remark) == (fmt == "f4e2m1fn")
    rng = np.random.default_rng(rows + cols)
    codes = _fp8_codes(rng, 8 + rows * cols)
    scales = _scale_codes(rng, 5 + rows * cols // 32, "f8e8m0fnu")
    x = rng.standard_normal(cols).astype(np.float32)
    f = compile_module(source).mv
    for offset, scale_offset in ((0, 0), (2, 5), (3, 1), (7, 4)):
        args: list[Any] = [codes, scales, x, offset, scale_offset]
        (expected,) = run_function(_parse(source), "mv", *args)
        assert _same(f(*args), expected), (offset, scale_offset)


def _layers_source(fmt: str, layout: str, rows: int, cols: int, layers: int) -> str:
    """y of every layer of a loop: the weights and scales of layer i at
    offsets i times their sizes (even: no run-time check)."""
    element, packed = ("i4", " packed") if fmt == "f4e2m1fn" else ("i8", "")
    q = f"!matrix.matrix<{rows}x{cols}x{element}>"
    s = f"!matrix.matrix<{rows}x{cols // 32}xi8>"
    w = f"!matrix.matrix<{rows}x{cols}xf32>"
    return f"""
func.func @mv(%w: memref<?xi8>, %s: memref<?xi8>, %x: memref<?xf32>, %y: memref<?xf32>) {{
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %n = arith.constant {layers} : index
  %size = arith.constant {rows * cols} : index
  %ssize = arith.constant {rows * cols // 32} : index
  %rows = arith.constant {rows} : index
  %v = vector.load %x[%c0] : memref<?xf32>, vector<{cols}xf32>
  scf.for %i = %c0 to %n step %c1 {{
    %o = arith.muli %i, %size : index
    %so = arith.muli %ssize, %i : index
    %q = matrix.{layout}_load %w[%o]{packed} : memref<?xi8> -> {q}
    %sc = matrix.column_major_load %s[%so] : memref<?xi8> -> {s}
    %f = arbfp.scaled_convert_from {fmt} %q, %sc block 32 : {q}, {s} to {w}
    %r = matrix.matvec %f, %v : {w}, vector<{cols}xf32> -> vector<{rows}xf32>
    %at = arith.muli %i, %rows : index
    vector.store %r, %y[%at] : memref<?xf32>, vector<{rows}xf32>
  }}
  func.return
}}
"""


@pytest.mark.ci_sample(4)
@pytest.mark.parametrize("fmt", ["f4e2m1fn", "f8e4m3fn", "f8e5m2"])
@pytest.mark.parametrize("layout", ["column_major", "row_major"])
def test_layer_loop_matches_the_interpreter(fmt: str, layout: str) -> None:
    """A loop over layers (offsets i·size): the fused kernel with no run-time
    check (the offsets are proven even), every layer's y bit for bit."""
    rows, cols, layers = 32, 64, 3
    source = _layers_source(fmt, layout, rows, cols, layers)
    (remark,) = _kernel_remarks(source)
    assert remark.endswith("kernel: fused block-scaled vector"), remark
    rng = np.random.default_rng(layers)
    codes = _fp8_codes(rng, layers * rows * cols)
    scales = _scale_codes(rng, layers * rows * cols // 32, "f8e8m0fnu")
    x = rng.standard_normal(cols).astype(np.float32)
    actual = np.zeros(layers * rows, np.float32)
    expected = np.zeros(layers * rows, np.float32)
    compile_module(source).mv(codes, scales, x, actual)
    run_function(_parse(source), "mv", codes, scales, x, expected)
    assert _same(actual, expected)


def _argument_source(fmt: str, rows: int, cols: int, bias: bool) -> str:
    """The MX matvec of codes and scales given as matrix arguments (FP4
    codes one a byte)."""
    element = "i4" if fmt == "f4e2m1fn" else "i8"
    q = f"!matrix.matrix<{rows}x{cols}x{element}>"
    s = f"!matrix.matrix<{rows}x{cols // 32}xi8>"
    w = f"!matrix.matrix<{rows}x{cols}xf32>"
    b_arg, b_use, b_type = (
        (f", %b: vector<{rows}xf32>", ", %b", f", vector<{rows}xf32>")
        if bias
        else ("", "", "")
    )
    return f"""
func.func @mv(%q: {q}, %sc: {s}, %x: vector<{cols}xf32>{b_arg}) -> vector<{rows}xf32> {{
  %f = arbfp.scaled_convert_from {fmt} %q, %sc block 32 : {q}, {s} to {w}
  %y = matrix.matvec %f, %x{b_use} : {w}, vector<{cols}xf32>{b_type} -> vector<{rows}xf32>
  func.return %y : vector<{rows}xf32>
}}
"""


ARGUMENT_CASES = [
    # format, rows, cols, bias
    ("f4e2m1fn", 64, 128, False),
    ("f4e2m1fn", 50, 96, True),  # a last group of rows overlapping; a narrow chunk
    ("f8e4m3fn", 32, 64, True),
    ("f8e4m3fn", 47, 96, False),
]
ORDERS = ("CC", "CF", "FC", "FF")


def _argument_params() -> list[Any]:
    """Each case in two orders, codes C- and F-ordered, so that each format
    takes all four (MX_LONG_TESTS=1: every case in every order)."""
    return [
        pytest.param(*case, orders, id=f"{orders}-{case[0]}-{case[1]}-{case[2]}")
        for i, case in enumerate(ARGUMENT_CASES)
        for j, orders in enumerate(ORDERS)
        if LONG or j % 2 == i % 2
    ]


@pytest.mark.ci_sample(4)
@pytest.mark.parametrize(("fmt", "rows", "cols", "bias", "orders"), _argument_params())
def test_matrix_arguments_take_the_kernel(
    fmt: str, rows: int, cols: int, bias: bool, orders: str
) -> None:
    """Codes and scales as matrix arguments, each C- or F-ordered (weights
    row- or column-major, scales copied into columns where they are rows):
    the fused kernel, equal bit for bit to ml_dtypes decoding and NumPy
    summing each row in k order (and to the interpreter)."""
    source = _argument_source(fmt, rows, cols, bias)
    rng = np.random.default_rng(rows * cols)
    if fmt == "f4e2m1fn":
        codes = rng.integers(0, 16, (rows, cols)).astype(np.uint8)
        m = codes.view(ml_dtypes.float4_e2m1fn).astype(np.float32)
    else:
        codes = _fp8_codes(rng, rows * cols).reshape(rows, cols)
        codes[(codes & 0x7F) == 0x7F] = 0x3C  # (no NaN: checked against NumPy)
        m = codes.view(ml_dtypes.float8_e4m3fn).astype(np.float32)
    scales = rng.integers(120, 136, (rows, cols // 32)).astype(np.uint8)
    x = rng.standard_normal(cols).astype(np.float32)
    ordered = {"C": np.ascontiguousarray, "F": np.asfortranarray}
    args: list[Any] = [ordered[orders[0]](codes), ordered[orders[1]](scales), x]
    if bias:
        args.append(rng.standard_normal(rows).astype(np.float32))
    f = compile_module(source).mv
    with recording() as remarks:
        got = np.asarray(f(*args))
    if orders != "CC":  # (the C-ordered variant compiled with the module)
        (remark,) = remarks
        assert str(remark).endswith("kernel: fused block-scaled vector"), remark
    assert f.remarks[0].endswith("kernel: fused block-scaled vector"), f.remarks
    s = np.ldexp(np.float32(1), scales.astype(np.int32) - 127).astype(np.float32)
    w = m * np.repeat(s, 32, axis=1)
    want = w[:, 0] * x[0]
    for k in range(1, cols):
        want = want + w[:, k] * x[k]
    if bias:
        want = want + args[3]
    assert np.array_equal(got.view(np.uint32), want.view(np.uint32))
    (interpreted,) = run_function(_parse(source), "mv", *args)
    assert _same(got, interpreted)


@pytest.mark.parametrize("layout", ["column_major", "row_major"])
def test_unpacked_fp4_codes_take_the_kernel(layout: str) -> None:
    """FP4 codes one a byte (a load of `memref<?xi4>`): the fused kernel,
    bit for bit the interpreter's result."""
    rows, cols = 40, 96
    q = f"!matrix.matrix<{rows}x{cols}xi4>"
    s = f"!matrix.matrix<{rows}x{cols // 32}xi8>"
    w = f"!matrix.matrix<{rows}x{cols}xf32>"
    source = f"""
func.func @mv(%w: memref<?xi4>, %s: memref<?xi8>, %x: vector<{cols}xf32>) -> vector<{rows}xf32> {{
  %q = matrix.{layout}_load %w[3] : memref<?xi4> -> {q}
  %sc = matrix.column_major_load %s[0] : memref<?xi8> -> {s}
  %f = arbfp.scaled_convert_from f4e2m1fn %q, %sc block 32 : {q}, {s} to {w}
  %y = matrix.matvec %f, %x : {w}, vector<{cols}xf32> -> vector<{rows}xf32>
  func.return %y : vector<{rows}xf32>
}}
"""
    (remark,) = _kernel_remarks(source)
    assert remark.endswith("kernel: fused block-scaled vector"), remark
    rng = np.random.default_rng(7)
    codes = rng.integers(0, 16, 3 + rows * cols).astype(np.uint8)
    scales = _scale_codes(rng, rows * cols // 32, "f8e8m0fnu")
    x = rng.standard_normal(cols).astype(np.float32)
    (expected,) = run_function(_parse(source), "mv", codes, scales, x)
    assert _same(compile_module(source).mv(codes, scales, x), expected)

"""JIT tests of the cache-blocked, packed products (matmul, matmul_add,
and matvec of column- and row-major matrices):
compiled with small cache sizes, so that every block and panel boundary of
the blocking is crossed by small matrices, and with the default sizes on
large ones; compared with the interpreter bit for bit (without `contract`
and `reassoc`), or with the exact result within the error bound of a dot
product (with them).

The hypothesis property test draws shapes up to 400 and cache sizes;
MX_BLOCKED_EXAMPLES=N runs N examples instead of the CI sample.
"""

import os
import re
from dataclasses import replace
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from xdsl.parser import Parser

from mx.frontend import mx_context
from mx.interpreters import run_function
from mx.jit import DEFAULT_PIPELINE, compile_module, lower_to_llvm_ir
from mx.jit_machine_code import host_cpu
from mx.lowering.matrix_to_affine.blocked import PANEL_SHAPES
from mx.testing.target_coverage import CPU_TARGETS
from tests.fixtures import JitHost
from tests.reference.element_types import ELEMENT_DTYPES
from tests.system_tools import blocks_with, llc_assembly, vector_spills

DTYPES: dict[str, Any] = {"f32": np.float32, "f64": np.float64, "i32": np.int32}
SMALL_CACHES = "l1-bytes=2048 l2-bytes=16384 l3-bytes=8192 blocked-min-bytes=0"
"""Depth blocks of at most 16 (f32) or 32 (f64), row blocks of one panel
(16 rows f32, 8 f64) from a depth of 65 (f32) or 33 (f64) on, column blocks
of 4 (f32) or 2 (f64) panels of 16 columns."""


def _pipeline(options: str) -> str:
    return (
        "matrix-fold-transposes,matrix-fuse-contractions,"
        f"convert-matrix-to-affine{{{options}}},canonicalize,convert-to-llvm,cse"
    )


def _module(t: str, r: int, k: int, c: int, flags: str) -> str:
    def m(rows: int, cols: int) -> str:
        return f"!matrix.matrix<{rows}x{cols}x{t}>"

    fm = f" fastmath<{flags}>" if flags else ""
    a, b, s, at = m(r, k), m(k, c), m(r, c), m(k, r)
    return f"""
func.func @matmul(%x: {a}, %y: {b}) -> {s} {{
  %r = matrix.matmul %x, %y{fm} : {a}, {b} -> {s}
  func.return %r : {s}
}}
func.func @matmul_add(%x: {a}, %y: {b}, %z: {s}) -> {s} {{
  %r = matrix.matmul_add %x, %y, %z{fm} : {a}, {b}, {s} -> {s}
  func.return %r : {s}
}}
func.func @transposed_lhs(%x: {at}, %y: {b}) -> {s} {{
  %t = matrix.transpose %x : {at} -> {a}
  %r = matrix.matmul %t, %y{fm} : {a}, {b} -> {s}
  func.return %r : {s}
}}
"""


def _values(rng: np.random.Generator, t: str, shape: tuple[int, int]) -> np.ndarray:
    """Normal values of mixed magnitudes with some +0 and -0 (a sum of -0
    products must stay -0); small integers."""
    if t.startswith("i"):
        return rng.integers(-100, 101, shape).astype(DTYPES[t])
    values = rng.standard_normal(shape) * 4.0 ** rng.integers(-3, 4, shape)
    zeros = rng.random(shape)
    values[zeros < 0.05] = 0.0
    values[zeros > 0.95] = -0.0
    return values.astype(DTYPES[t])


def _same_bits(x: np.ndarray, y: np.ndarray) -> bool:
    if x.dtype.kind != "f":
        return bool(np.array_equal(x, y))
    unsigned = f"u{x.itemsize}"
    nan = np.isnan(x) & np.isnan(y)
    return bool(np.all(nan | (x.view(unsigned) == y.view(unsigned))))


def _within_bound(
    got: np.ndarray, a: np.ndarray, b: np.ndarray, acc: np.ndarray | None
) -> bool:
    """|got - exact| <= 2(K + 2) eps (|A||B| + |Acc|): the bound of a dot
    product summed in any order, with or without fused multiply-adds."""
    wide_a, wide_b = a.astype(np.float64), b.astype(np.float64)
    exact = wide_a @ wide_b
    magnitude = np.abs(wide_a) @ np.abs(wide_b)
    if acc is not None:
        exact = exact + acc.astype(np.float64)
        magnitude = magnitude + np.abs(acc.astype(np.float64))
    eps = float(np.finfo(a.dtype).eps)
    error = np.abs(got.astype(np.float64) - exact)
    return bool(np.all(error <= 2 * (a.shape[1] + 2) * eps * magnitude))


def _check(
    t: str,
    shape: tuple[int, int, int],
    flags: str,
    options: str,
    seed: int,
    fortran: bool = False,
    tag: str = "",
) -> None:
    """The three products of `_module` against the interpreter (or the error
    bound); `fortran`: also with F-ordered arguments (B then reaches the
    kernel column-major, packed by transposed tiles, where C-ordered it is
    row-major: packed a row at a time), bit for bit the same. `tag` is
    added to the text as a comment (a text of its own in the JIT's cache)."""
    r, k, c = shape
    text = _module(t, r, k, c, flags) + (f"// {tag}\n" if tag else "")
    compiled = compile_module(text, _pipeline(options))
    module = Parser(mx_context(), text).parse_module()
    rng = np.random.default_rng(seed)
    a, b, acc = (
        _values(rng, t, (r, k)),
        _values(rng, t, (k, c)),
        _values(rng, t, (r, c)),
    )
    if seed % 3 == 0 and t.startswith("f"):
        # Every product -0, so every sum must stay -0 (not +0).
        a, b = np.full_like(a, -0.0), np.abs(b)
    for name, args, addend, lhs in (
        ("matmul", (a, b), None, a),
        ("matmul_add", (a, b, acc), acc, a),
        ("transposed_lhs", (np.ascontiguousarray(a.T), b), None, a),
    ):
        got = np.asarray(compiled[name](*(x.copy() for x in args)))
        if fortran:
            again = compiled[name](*(np.asfortranarray(x) for x in args))
            assert _same_bits(got, np.asarray(again)), (name, shape, flags)
        if flags and t.startswith("f"):
            assert _within_bound(got, lhs, b, addend), (name, shape, flags)
        else:
            (want,) = run_function(module, name, *(x.copy() for x in args))
            assert _same_bits(got, np.asarray(want)), (name, shape, flags, got - want)


TILED_CASES = [
    ("f32", (1, 7, 1), ""),
    ("f32", (33, 65, 7), "contract"),
    ("f32", (97, 43, 49), ""),
    ("f32", (1, 64, 100), "reassoc"),
    ("f64", (7, 7, 7), ""),
    ("f64", (65, 33, 40), ""),
    ("f64", (200, 3, 1), "contract"),
    ("i32", (65, 33, 40), ""),
    # Rows a multiple of a panel (16 f32) and fewer columns than one panel;
    # full panels and one row, columns a multiple of a panel (16).
    ("f32", (128, 20, 5), ""),
    ("f64", (65, 40, 32), "contract"),
    ("f32", (129, 37, 31), "reassoc"),
    # Several row, column and depth blocks, each with a partial panel last.
    ("f32", (40, 70, 140), ""),
    ("f64", (20, 70, 90), ""),
]


@pytest.mark.ci_sample(5)
@pytest.mark.parametrize("t, shape, flags", TILED_CASES, ids=str)
def test_small_caches_cross_every_block(
    t: str, shape: tuple[int, int, int], flags: str
) -> None:
    wide = shape[2] >= 40 and t != "i32"
    _check(t, shape, flags, SMALL_CACHES, sum(shape), fortran=wide)


@pytest.mark.parametrize("target", sorted(PANEL_SHAPES), ids=str)
@pytest.mark.parametrize(
    "t, shape, flags",
    [("f32", (40, 70, 140), ""), ("f64", (20, 70, 90), "contract")],
    ids=str,
)
def test_each_register_file_crosses_every_block(
    t: str,
    shape: tuple[int, int, int],
    flags: str,
    target: tuple[int, bool],
    jit_host: JitHost,
) -> None:
    """The micro-kernel of each target (`PANEL_SHAPES`: 4 x 6 vectors for
    AVX-512's 32 registers on Intel, 1 x 16 on AMD Zen, 2 x 6 for AVX2's 16)
    run on this host, whichever the host has, with full and partial panels in
    every block."""
    registers, broadcasts = target
    jit_host(
        replace(
            host_cpu(),
            vector_registers=registers,
            broadcast_registers=broadcasts,
        )
    )
    _check(t, shape, flags, SMALL_CACHES, sum(shape), True, f"{target} panels")


MIXED_CASES = [
    ("bf16", "bf16", "f32", ""),
    ("f16", "bf16", "f32", "contract"),
    ("f16", "f32", "f32", ""),
    ("f32", "f32", "f64", ""),
    ("bf16", "f16", "f64", ""),
    ("i8", "i8", "i32", ""),
    ("i8", "i8", "i32", "unsigned"),
    ("i16", "i8", "i64", ""),
    ("i32", "i32", "i64", "unsigned"),
]
"""Factors narrower than the result (docs/low-precision.md): each exact
widening kind, both factors or one, signed and unsigned."""


@pytest.mark.ci_sample(4)
@pytest.mark.parametrize("a, b, r, attrs", MIXED_CASES, ids=str)
def test_mixed_products_take_the_packed_kernel(
    a: str, b: str, r: str, attrs: str
) -> None:
    """Mixed-precision products widen their factors while packing them and
    then run the same-type packed kernel: bit for bit the interpreter's
    result, every block and panel boundary crossed (small caches)."""
    rows, depth, cols = 37, 70, 45
    ta, tb, tr = (
        f"!matrix.matrix<{rows}x{depth}x{a}>",
        f"!matrix.matrix<{depth}x{cols}x{b}>",
        f"!matrix.matrix<{rows}x{cols}x{r}>",
    )
    suffix = {"contract": " fastmath<contract>", "unsigned": " {unsigned}", "": ""}[
        attrs
    ]
    text = f"""
func.func @matmul(%x: {ta}, %y: {tb}) -> {tr} {{
  %r = matrix.matmul %x, %y{suffix} : {ta}, {tb} -> {tr}
  func.return %r : {tr}
}}
func.func @matmul_add(%x: {ta}, %y: {tb}, %z: {tr}) -> {tr} {{
  %r = matrix.matmul_add %x, %y, %z{suffix} : {ta}, {tb}, {tr} -> {tr}
  func.return %r : {tr}
}}
"""
    compiled = compile_module(text, _pipeline(SMALL_CACHES))
    module = Parser(mx_context(), text).parse_module()
    rng = np.random.default_rng(len(text))
    x, y, z = (
        _narrow_values(rng, a, (rows, depth)),
        _narrow_values(rng, b, (depth, cols)),
        _narrow_values(rng, r, (rows, cols)),
    )
    for name, args in (("matmul", (x, y)), ("matmul_add", (x, y, z))):
        function = compiled[name]
        assert function.remarks[0].endswith("kernel: cache-blocked vector"), (
            function.remarks
        )
        got = np.asarray(function(*args))
        (want,) = run_function(module, name, *args)
        assert _same_bits(got, np.asarray(want)), (name, got, want)


def _layer_loop_module(a: str, b: str, r: str, suffix: str) -> str:
    """The mixed products of `MIXED_CASES` as users write them in a loop over
    layers: factors loaded at `index` offsets computed from the induction
    variable (A row-major with a padded stride, B column-major), the result
    stored row-major at the layer's offset."""
    rows, depth, cols = 37, 70, 45
    ta, tb, tr = (
        f"!matrix.matrix<{rows}x{depth}x{a}>",
        f"!matrix.matrix<{depth}x{cols}x{b}>",
        f"!matrix.matrix<{rows}x{cols}x{r}>",
    )
    return f"""
func.func @layers(%x: memref<?x{a}>, %y: memref<?x{b}>, %out: memref<?x{r}>, %n: index, %base: index) {{
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %x_size = arith.constant {rows * (depth + 3)} : index
  %y_size = arith.constant {depth * cols} : index
  %out_size = arith.constant {rows * cols} : index
  %stride = arith.constant {depth + 3} : index
  scf.for %i = %c0 to %n step %c1 {{
    %xo0 = arith.muli %i, %x_size : index
    %xo = arith.addi %xo0, %base : index
    %yo = arith.muli %i, %y_size : index
    %oo = arith.muli %i, %out_size : index
    %p = matrix.row_major_load %x[%xo] stride %stride : memref<?x{a}> -> {ta}
    %q = matrix.column_major_load %y[%yo] : memref<?x{b}> -> {tb}
    %m = matrix.matmul %p, %q{suffix} : {ta}, {tb} -> {tr}
    matrix.row_major_store %m, %out[%oo] : {tr}, memref<?x{r}>
  }}
  func.return
}}
"""


@pytest.mark.ci_sample(4)
@pytest.mark.parametrize("a, b, r, attrs", MIXED_CASES, ids=str)
def test_mixed_products_in_a_layer_loop_take_the_packed_kernel(
    a: str, b: str, r: str, attrs: str
) -> None:
    """The packed kernel does not depend on the spelling: factors loaded at
    run-time offsets (one not a multiple of the vector width) and a padded
    stride inside an `scf.for` get it too, bit for bit the interpreter's
    result for every layer."""
    suffix = {"contract": " fastmath<contract>", "unsigned": " {unsigned}", "": ""}[
        attrs
    ]
    text = _layer_loop_module(a, b, r, suffix)
    function = compile_module(text, _pipeline(SMALL_CACHES))["layers"]
    assert function.remarks[0].endswith("kernel: cache-blocked vector"), (
        function.remarks
    )
    module = Parser(mx_context(), text).parse_module()
    rng = np.random.default_rng(len(text))
    layers, base, rows, depth, cols = 3, 5, 37, 70, 45
    x = _narrow_values(rng, a, (1, base + layers * rows * (depth + 3)))[0]
    y = _narrow_values(rng, b, (1, layers * depth * cols))[0]
    got = np.zeros(layers * rows * cols, ELEMENT_DTYPES[r])
    want = np.zeros_like(got)
    function(x, y, got, layers, base)
    run_function(module, "layers", x, y, want, layers, base)
    assert _same_bits(got, want)


def _narrow_values(
    rng: np.random.Generator, t: str, shape: tuple[int, int]
) -> np.ndarray:
    """Values of every magnitude the type holds (integers of the full range:
    products and sums wrap), signed zeros among them."""
    dtype = ELEMENT_DTYPES[t]
    if t.startswith("i"):
        info = np.iinfo(dtype)
        return rng.integers(info.min, info.max, shape, dtype=dtype, endpoint=True)
    values = rng.standard_normal(shape) * 2.0 ** rng.integers(-8, 8, shape)
    values[rng.random(shape) < 0.05] = -0.0
    return values.astype(dtype)


@pytest.mark.parametrize(
    "t, shape, flags",
    [
        ("f32", (333, 333, 333), ""),
        ("f64", (333, 200, 100), "contract"),
        ("f32", (1000, 40, 7), ""),
        ("f32", (65, 1000, 70), "contract,reassoc"),
    ],
    ids=str,
)
def test_default_caches_large(t: str, shape: tuple[int, int, int], flags: str) -> None:
    _check(t, shape, flags, "", 1)


@pytest.mark.parametrize("t, lanes", [("f32", 16), ("f64", 8)])
def test_kernel_broadcasts_fold_into_the_multiplies_on_zen(
    t: str, lanes: int, jit_host: JitHost
) -> None:
    """On AMD Zen each broadcast of packed B feeds one multiply, so that x86
    folds it into the multiply's memory operand ({1toN}): a broadcast of its
    own takes an FP pipe's cycle on Zen 4 (blocked.py's PANEL_SHAPES). The IR
    is the JIT's on a Zen 4 host."""
    jit_host(CPU_TARGETS["znver4"])
    llvm_ir, _, _ = lower_to_llvm_ir(_module(t, 256, 256, 256, ""), DEFAULT_PIPELINE)
    assembly = llc_assembly(llvm_ir, "znver4")
    folded = re.findall(rf"vmulp[sd]\s+\S*\{{1to{lanes}\}}, %zmm", assembly)
    # Three functions, each with the kernel on full panels (16 columns).
    assert len(folded) >= 3 * 16, assembly.count("vbroadcasts")


@pytest.mark.parametrize("t", ["f32", "f64"])
def test_kernel_broadcasts_feed_four_multiplies_on_intel(
    t: str, jit_host: JitHost
) -> None:
    """On Intel cores with AVX-512 the k loop of the micro-kernel loads 4
    vectors of packed A and broadcasts 6 values of packed B, each into a
    register feeding 4 multiplies (a broadcast from memory is a load µop
    alone there), and spills nothing. The IR is the JIT's on a Sapphire
    Rapids host."""
    jit_host(CPU_TARGETS["sapphirerapids"])
    llvm_ir, _, _ = lower_to_llvm_ir(_module(t, 256, 256, 256, ""), DEFAULT_PIPELINE)
    assembly = llc_assembly(llvm_ir, "sapphirerapids")
    kernels = blocks_with(assembly, r"\bvmulp[sd]\b", 24)
    assert kernels
    for kernel in kernels:
        multiplies = re.findall(r"\bvmulp[sd]\b", kernel)
        broadcasts = re.findall(r"\bvbroadcasts[sd]\b", kernel)
        assert len(multiplies) % 24 == 0, kernel
        assert len(broadcasts) * 4 == len(multiplies), kernel
        assert not vector_spills(kernel), vector_spills(kernel)


@pytest.mark.parametrize("t", ["f32", "f64"])
@pytest.mark.parametrize("n", [256, 32])
def test_avx2_kernels_keep_their_sums_in_registers(
    t: str, n: int, jit_host: JitHost
) -> None:
    """On a target of 16 vector registers the k loops of the cache-blocked
    micro-kernel (256^3) and of the register-blocked one (32^3) neither spill
    nor reload a vector: with the tiles of AVX-512 (16 sums; 24) LLVM spilled sums
    each k, and on a Zen 1 f32 1024^3 ran 1.5x, f64 32^3 1.4x slower
    (blocked.py's PANEL_SHAPES, products.py's `accumulator_registers`). The
    IR is the JIT's on an AVX2 host."""
    jit_host(CPU_TARGETS["x86-64-v3"])
    text = _module(t, n, n, n, "") + "// AVX2 host\n"
    llvm_ir, _, _ = lower_to_llvm_ir(text, DEFAULT_PIPELINE)
    kernels = blocks_with(llc_assembly(llvm_ir, "x86-64-v3"), r"\bvmulp[sd]\b", 8)
    # Three functions, each with its kernel's k loop.
    assert len(kernels) >= 3, len(kernels)
    for kernel in kernels:
        assert not vector_spills(kernel), kernel


_EXAMPLES = int(os.environ.get("MX_BLOCKED_EXAMPLES", "5"))
_sizes = st.one_of(st.integers(1, 70), st.sampled_from([1, 7, 33, 65, 129, 333, 400]))


@settings(
    max_examples=_EXAMPLES,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)
@given(
    t=st.sampled_from(["f32", "f64"]),
    shape=st.tuples(_sizes, st.integers(2, 400), _sizes),
    flags=st.sampled_from(["", "", "contract", "reassoc", "contract,reassoc"]),
    caches=st.tuples(
        st.sampled_from([1024, 4096, 48 * 1024]),
        st.sampled_from([8192, 65536, 2 * 1024 * 1024]),
        st.sampled_from([4096, 1 << 20, 32 << 20]),
    ),
    seed=st.integers(0, 2**16),
)
def test_blocked_property(
    t: str,
    shape: tuple[int, int, int],
    flags: str,
    caches: tuple[int, int, int],
    seed: int,
) -> None:
    l1, l2, l3 = caches
    options = f"l1-bytes={l1} l2-bytes={l2} l3-bytes={l3} blocked-min-bytes=0"
    _check(t, shape, flags, options, seed)


def _matvec_module(t: str, r: int, k: int, layout: str, flags: str) -> str:
    m = f"!matrix.matrix<{r}x{k}x{t}>"
    mem = f"memref<?x{t}>"
    fm = f" fastmath<{flags}>" if flags else ""
    x, y = f"vector<{k}x{t}>", f"vector<{r}x{t}>"
    return f"""
func.func @matvec(%w: {mem}, %x: {x}, %b: {y}) -> {y} {{
  %m = matrix.{layout}_load %w[0] : {mem} -> {m}
  %y = matrix.matvec %m, %x, %b{fm} : {m}, {x}, {y} -> {y}
  func.return %y : {y}
}}
"""


@pytest.mark.ci_sample(6)
@pytest.mark.parametrize(
    "t, shape, flags, options",
    [
        ("f32", (1, 7), "", SMALL_CACHES),
        ("f32", (33, 65), "", SMALL_CACHES),
        ("f64", (65, 33), "", SMALL_CACHES),
        ("i32", (40, 300), "", SMALL_CACHES),
        ("f32", (100, 37), "contract", SMALL_CACHES),
        ("f32", (333, 1000), "", ""),
        ("f64", (1000, 77), "contract", ""),
    ],
    ids=str,
)
@pytest.mark.parametrize("layout", ["column_major", "row_major"])
def test_matvec(
    t: str, shape: tuple[int, int], flags: str, options: str, layout: str
) -> None:
    """Column-major matrices are read column by column, row-major ones in
    tiles transposed in registers (rows past the last full tile and columns
    past the last full tile take their own paths)."""
    r, k = shape
    text = _matvec_module(t, r, k, layout, flags)
    compiled = compile_module(text, _pipeline(options))
    rng = np.random.default_rng(r + k)
    w, x, b = (
        _values(rng, t, (r, k)),
        _values(rng, t, (1, k))[0],
        _values(rng, t, (1, r))[0],
    )
    memory = (w.T if layout == "column_major" else w).reshape(-1)
    got = np.asarray(compiled["matvec"](memory.copy(), x.copy(), b.copy()))
    if flags:
        assert _within_bound(got[:, None], w, x[:, None], b[:, None])
    else:
        module = Parser(mx_context(), text).parse_module()
        (want,) = run_function(module, "matvec", memory.copy(), x.copy(), b.copy())
        assert _same_bits(got, np.asarray(want)), (shape, layout)


MIXED = """
func.func @matmul_add(%x: !matrix.matrix<70x40xf16>, %y: !matrix.matrix<40x30xf16>, %z: !matrix.matrix<70x30xf32>) -> !matrix.matrix<70x30xf32> {
  %r = matrix.matmul_add %x, %y, %z : !matrix.matrix<70x40xf16>, !matrix.matrix<40x30xf16>, !matrix.matrix<70x30xf32> -> !matrix.matrix<70x30xf32>
  func.return %r : !matrix.matrix<70x30xf32>
}
func.func @matvec_columns(%w: memref<?xi8>, %x: vector<50xi8>) -> vector<70xi32> {
  %m = matrix.column_major_load %w[0] : memref<?xi8> -> !matrix.matrix<70x50xi8>
  %y = matrix.matvec %m, %x {unsigned} : !matrix.matrix<70x50xi8>, vector<50xi8> -> vector<70xi32>
  func.return %y : vector<70xi32>
}
func.func @matvec_rows(%w: memref<?xi8>, %x: vector<50xi8>) -> vector<70xi32> {
  %m = matrix.row_major_load %w[0] : memref<?xi8> -> !matrix.matrix<70x50xi8>
  %y = matrix.matvec %m, %x : !matrix.matrix<70x50xi8>, vector<50xi8> -> vector<70xi32>
  func.return %y : vector<70xi32>
}
"""


def test_mixed_precision_factors_are_widened() -> None:
    """Narrower factors (f16 -> f32, unsigned and signed i8 -> i32) are
    widened exactly where the blocked code reads them."""
    compiled = compile_module(MIXED, _pipeline(SMALL_CACHES))
    module = Parser(mx_context(), MIXED).parse_module()
    rng = np.random.default_rng(5)
    a = rng.standard_normal((70, 40)).astype(np.float16)
    b = rng.standard_normal((40, 30)).astype(np.float16)
    c = rng.standard_normal((70, 30)).astype(np.float32)
    w = rng.integers(-128, 128, 70 * 50).astype(np.int8)
    x = rng.integers(-128, 128, 50).astype(np.int8)
    for name, args in (
        ("matmul_add", (a, b, c)),
        ("matvec_columns", (w, x)),
        ("matvec_rows", (w, x)),
    ):
        got = np.asarray(compiled[name](*(v.copy() for v in args)))
        (want,) = run_function(module, name, *(v.copy() for v in args))
        assert _same_bits(got, np.asarray(want)), name

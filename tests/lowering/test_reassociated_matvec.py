"""The reassociated weight-times-vector kernel (`reassociated_matvec.py`):
`matrix.matvec` with `reassoc` of FP4/FP8 row-major codes — per-tensor
(none, a constant, an argument, its `matrix.mul` with or without
`reassoc`) or block scales (MXFP4, MXFP8 e4m3/e5m2, NVFP4) — with literal or
`index` offsets (packed: even and odd at run time), in a loop over layers,
K not a multiple of a chunk or of the vector width, a bias, NaN and inf
codes and scales.

Each result is checked against the float64 product of ml_dtypes' decoded
weights (and NumPy's block scales): within `_bound` where it is finite, the
same NaN or infinity where it is not; against the interpreter (the strict k
order) within twice that; and bit for bit between 1 and 2 threads (the
lowering told to put every product on threads). The remark names the
kernel."""

import itertools
import os
from dataclasses import dataclass, replace
from typing import Any

import ml_dtypes
import numpy as np
import numpy.typing as npt
import pytest
from xdsl.parser import Parser

import mx
from mx.frontend import mx_context
from mx.interpreters import run_function
from mx.jit import compile_module, lower_to_llvm_ir
from mx.jit_compile import compile_text
from mx.jit_machine_code import host_cpu
from mx.jit_runtime import DEFAULT_PIPELINE
from mx.lowering.matrix_to_affine.kernel_remarks import (
    FUSED_BLOCK_SCALED,
    FUSED_DECODE,
    FUSED_REASSOCIATED,
)
from mx.lowering.matrix_to_affine.reassociated_matvec import (
    _block_pure_words,
    _group_order,
)
from mx.lowering.matrix_to_affine.target_cpu import TargetCpu, for_target_cpu
from mx.testing.target_coverage import CPU_TARGETS
from tests.fixtures import JitHost
from tests.pipelines import THREADED, lowering_with
from tests.reference.bits import same_bits
from tests.system_tools import blocks_with, llc_assembly, vector_spills

Array = npt.NDArray[Any]


SAMPLE = int(os.environ.get("MX_REASSOC_CASES", "14"))
"""Generated cases the CI runs (docs/long-runs.md)."""

_DTYPES: dict[str, Any] = {
    "f4e2m1fn": ml_dtypes.float4_e2m1fn,
    "f8e4m3fn": ml_dtypes.float8_e4m3fn,
    "f8e5m2": ml_dtypes.float8_e5m2,
}


@dataclass(frozen=True)
class Case:
    rows: int
    cols: int
    format: str
    scaling: str
    """"none", "const", "arg" (the `matrix.mul` with the matvec's flags),
    "const-strict", "arg-strict" (a `matrix.mul` without flags), "mx" (f8e8m0fnu scales per
    32; "mxN": per N), "nv" (f8e4m3fn scales per 16)."""
    flags: str
    bias: bool
    offsets: str
    """"literal", or "index" (an argument: even or odd at run time)."""
    layers: int
    """0: one matvec; else a `scf.for` over this many layers."""
    column_scales: bool = False
    """Block scales column-major (else row-major, as they are stored)."""

    @property
    def packed(self) -> bool:
        return self.format == "f4e2m1fn"

    @property
    def block(self) -> int:
        if self.scaling.startswith("mx"):
            return int(self.scaling[2:] or 32)
        return 16 if self.scaling == "nv" else 0

    @property
    def stride(self) -> int:
        """Row stride of the codes, in elements: past the row, even."""
        return self.cols + 2 + self.cols % 2

    @property
    def layer_codes(self) -> int:
        return self.rows * self.stride

    def __str__(self) -> str:
        return (
            f"{self.rows}x{self.cols}-{self.format}-{self.scaling}-{self.flags}"
            f"-{'bias' if self.bias else 'nobias'}-{self.offsets}-{self.layers}"
            + ("-column-scales" if self.column_scales else "")
        )


def source(c: Case) -> str:
    """`@f(%w, %s, %x, %y, %b, %o, %scale)`: y of each layer stored at
    layer·R; codes at %o + layer·R·stride (literal: 4)."""
    r, k, fmt = c.rows, c.cols, c.format
    element = "i4" if c.packed else "i8"
    q = f"!matrix.matrix<{r}x{k}x{element}>"
    w = f"!matrix.matrix<{r}x{k}xf32>"
    fm = f" fastmath<{c.flags}>"
    packed = " packed" if c.packed else ""
    start = "%o" if c.offsets == "index" else "%c4"
    body = f"""%wo = arith.addi {start}, %at_w : index
    %q = matrix.row_major_load %w[%wo] stride {c.stride}{packed} : memref<?xi8> -> {q}
"""
    if c.block:
        blocks = -(-k // c.block)
        s = f"!matrix.matrix<{r}x{blocks}xi8>"
        scale_format = "f8e8m0fnu" if c.scaling != "nv" else "f8e4m3fn"
        body += f"""%so = arith.muli %i, %c{r * blocks} : index
    %sc = matrix.{"column" if c.column_scales else "row"}_major_load %s[%so] : memref<?xi8> -> {s}
    %m = arbfp.scaled_convert_from {fmt} %q, %sc block {c.block} scale {scale_format} : {q}, {s} to {w}
"""
    elif c.scaling == "none":
        body += f"%m = arbfp.convert_from {fmt} %q : {q} to {w}\n"
    else:
        scalar = "%c0_375" if c.scaling.startswith("const") else "%scale"
        mul_fm = "" if c.scaling.endswith("-strict") else fm
        body += f"""%d = arbfp.convert_from {fmt} %q : {q} to {w}
    %k = matrix.splat {scalar} : {w}
    %m = matrix.mul %d, %k{mul_fm} : {w}
"""
    bias, bias_type = "", ""
    if c.bias:
        body += f"%bv = vector.load %b[%at_y] : memref<?xf32>, vector<{r}xf32>\n"
        bias, bias_type = ", %bv", f", vector<{r}xf32>"
    body += f"""%v = vector.load %x[%c0] : memref<?xf32>, vector<{k}xf32>
    %r = matrix.matvec %m, %v{bias}{fm} : {w}, vector<{k}xf32>{bias_type} -> vector<{r}xf32>
    vector.store %r, %y[%at_y] : memref<?xf32>, vector<{r}xf32>
"""
    constants = {0, 1, 4, r, c.layer_codes, max(c.layers, 1)}
    if c.block:
        constants.add(r * -(-k // c.block))
    lines = "\n".join(
        f"  %c{n} = arith.constant {n} : index" for n in sorted(constants)
    )
    layer = f"""%at_w = arith.muli %i, %c{c.layer_codes} : index
    %at_y = arith.muli %i, %c{r} : index
    {body}"""
    if c.layers:
        loop = f"""scf.for %i = %c0 to %c{c.layers} step %c1 {{
    {layer}  }}"""
    else:
        loop = f"%i = arith.constant 0 : index\n  {layer}"
    return f"""func.func @f(%w: memref<?xi8>, %s: memref<?xi8>, %x: memref<?xf32>, %y: memref<?xf32>, %b: memref<?xf32>, %o: index, %scale: f32) {{
{lines}
  %c0_375 = arith.constant 0.375 : f32
  {loop}
  func.return
}}
"""


@dataclass
class Data:
    memory: Array
    scales: Array
    x: Array
    bias: Array
    offset: int
    scale: np.float32
    weights: Array
    """(layers, R, K) float64 values of the weights: the reference's."""


def data(c: Case, rng: np.random.Generator, offset: int) -> Data:
    """Codes with NaN/inf codes in some rows (FP8), moderate scales with a
    NaN scale in some rows (block-scaled), x and bias of mixed signs; no NaN
    or inf where the flags promise none (`fast`: nnan, ninf)."""
    specials = "fast" not in c.flags
    layers, r, k = max(c.layers, 1), c.rows, c.cols
    codes = rng.integers(0, 16 if c.packed else 256, (layers, r, k), dtype=np.uint8)
    if not c.packed:
        e4m3 = c.format == "f8e4m3fn"
        special = (0x7F, 0xFF) if e4m3 else (0x7C, 0xFC, 0x7E)
        mask = 0x7F if e4m3 else 0x7C
        codes[(codes & mask) == mask] = 0x38  # (NaN/inf codes: placed below)
        rows = range(1, r, 4) if specials else range(0)
        for layer, row in itertools.product(range(layers), rows):
            codes[layer, row, rng.integers(0, k)] = special[row % len(special)]
    # memory: element (layer, row, col) at offset + layer·R·stride + row·stride + col
    elements = np.zeros(offset + layers * c.layer_codes + 8, np.uint8)
    at = (
        offset
        + np.arange(layers)[:, None, None] * c.layer_codes
        + np.arange(r)[None, :, None] * c.stride
        + np.arange(k)[None, None, :]
    )
    elements[at] = codes
    if c.packed:
        elements = np.append(elements, np.uint8(0))[: elements.size + elements.size % 2]
        memory = elements[0::2] | (elements[1::2] << 4)
    else:
        memory = elements
    values = codes.view(_DTYPES[c.format]).astype(np.float64)
    scale = np.float32(-0.625)
    scales = np.zeros(1, np.uint8)
    if c.block:
        blocks = -(-k // c.block)
        if c.scaling != "nv":
            scale_codes = rng.integers(120, 135, (layers, r, blocks), dtype=np.uint8)
            if specials:
                scale_codes[:, 3::7, 0] = 0xFF  # NaN
            block_values = np.exp2(scale_codes.astype(np.float64) - 127)
            block_values[scale_codes == 0xFF] = np.nan
        else:
            scale_codes = rng.integers(0x28, 0x48, (layers, r, blocks), dtype=np.uint8)
            block_values = scale_codes.view(ml_dtypes.float8_e4m3fn).astype(np.float64)
        scales = (
            scale_codes.transpose(0, 2, 1) if c.column_scales else scale_codes
        ).ravel()
        values = values * np.repeat(block_values, c.block, axis=-1)[..., :k]
    elif c.scaling.startswith("const"):
        values = values * 0.375
    elif c.scaling.startswith("arg"):
        values = values * np.float64(scale)
    x = rng.standard_normal(k).astype(np.float32)
    bias = rng.standard_normal(layers * r).astype(np.float32)
    return Data(memory, scales, x, bias, offset, scale, values)


def run(f: Any, c: Case, d: Data) -> Array:
    y = np.full(max(c.layers, 1) * c.rows, np.nan, np.float32)
    f(d.memory, d.scales, d.x, y, d.bias, d.offset, d.scale)
    return y


def _bound(c: Case, d: Data) -> tuple[Array, Array]:
    """The exact y and the bound on |y - exact|: (K + 4)·2^-23·Σ|w·x|
    (any order of the K sums, the products', the scales' and the bias's
    roundings) plus K·2^-140 for products of subnormal size."""
    x = d.x.astype(np.float64)
    with np.errstate(invalid="ignore"):
        exact = (d.weights @ x).ravel()
        size = (np.abs(d.weights) @ np.abs(x)).ravel()
    if c.bias:
        exact = exact + d.bias.astype(np.float64)
        size = size + np.abs(d.bias.astype(np.float64))
    return exact, (c.cols + 4) * 2.0**-23 * size + c.cols * 2.0**-140


def _within(y: Array, exact: Array, bound: Array) -> None:
    """`y` within `bound` of `exact` where that is finite; the same NaN or
    infinity where it is not."""
    finite = np.isfinite(exact)
    assert np.array_equal(np.isnan(y), np.isnan(exact))
    assert np.array_equal(y[np.isinf(exact)], exact[np.isinf(exact)])
    error = np.abs(y[finite].astype(np.float64) - exact[finite])
    worst = int(np.argmax(error - bound[finite])) if error.size else 0
    assert np.all(error <= bound[finite]), (worst, error[worst], bound[finite][worst])


def check(
    c: Case, seed: int, vector_bits: int | None = None, cached: bool = True
) -> None:
    """`c` as the JIT compiles it (`cached`: through its cache, else anew:
    for a host a test makes up)."""
    text = source(c)
    compile = compile_module if cached else compile_text
    width = "" if vector_bits is None else f"vector-bits={vector_bits}"
    module = compile(text, lowering_with(width) if width else DEFAULT_PIPELINE)
    threaded = compile(
        text, lowering_with(f"{width} parallel-min-work=1") if width else THREADED
    )
    remarks = module.f.remarks
    assert remarks and all(
        f"kernel: {FUSED_REASSOCIATED}" in r and "; not " not in r for r in remarks
    ), remarks
    rng = np.random.default_rng(seed)
    offsets = [4] if c.offsets == "literal" else [2, 7] if c.packed else [5]
    for offset in offsets:
        d = data(c, rng, offset)
        y = run(module.f, c, d)
        exact, bound = _bound(c, d)
        _within(y, exact, bound)
        assert np.isfinite(y).any()
        strict = np.full_like(y, np.nan)
        run_function(
            Parser(mx_context(), text).parse_module(),
            "f",
            d.memory,
            d.scales,
            d.x,
            strict,
            d.bias,
            offset,
            d.scale,
        )
        _within(y, strict.astype(np.float64), 2 * bound)
        with mx.num_threads(1):
            one = run(threaded.f, c, d)
        with mx.num_threads(2):
            two = run(threaded.f, c, d)
        assert same_bits(one, two)
        _within(one, exact, bound)


PINNED = [
    # the bench's spelling, small: MXFP4 and MXFP8 in a layer loop, index
    # offsets; NaN and inf codes and scales (flags without nnan, ninf)
    Case(37, 256, "f4e2m1fn", "mx", "contract,reassoc", False, "index", 3),
    Case(9, 160, "f8e4m3fn", "mx", "contract,reassoc", True, "index", 2),
    Case(6, 96, "f8e5m2", "mx", "reassoc", False, "literal", 0),
    # NVFP4: blocks of 16 (8-lane vectors on AVX-512)
    Case(13, 80, "f4e2m1fn", "nv", "contract,reassoc", True, "literal", 2),
    # K not a multiple of a chunk: the last columns element by element
    Case(5, 407, "f8e4m3fn", "arg", "reassoc", False, "index", 2),
    Case(3, 77, "f4e2m1fn", "none", "fast", True, "index", 0),
    Case(7, 100, "f8e5m2", "none", "contract,reassoc", True, "literal", 0),
    Case(4, 13, "f8e4m3fn", "const", "reassoc", False, "literal", 0),
    # a per-tensor scale whose multiply does not reassociate: per weight
    Case(11, 128, "f8e4m3fn", "arg-strict", "fast", False, "literal", 2),
    Case(10, 96, "f4e2m1fn", "arg-strict", "fast", True, "index", 0),
    # packed FP4 in groups of 8·16 columns (a 32-bit lane's codes in each
    # lane), then whole blocks, chunks and single columns: blocks of 8, 16,
    # 32 (column-major scales, read in place), 64 (within a group) and 256
    # (two groups a block); no block scales, a per-tensor scale folded into
    # x or multiplying each weight
    Case(9, 288, "f4e2m1fn", "mx", "contract,reassoc", True, "index", 2, True),
    Case(6, 136, "f4e2m1fn", "mx8", "fast", False, "literal", 0),
    Case(5, 144, "f4e2m1fn", "nv", "reassoc", False, "index", 0),
    Case(4, 192, "f4e2m1fn", "mx64", "fast", True, "literal", 0),
    Case(4, 512, "f4e2m1fn", "mx256", "contract,reassoc", False, "index", 0),
    Case(3, 300, "f4e2m1fn", "none", "contract,reassoc", False, "index", 2),
    Case(3, 130, "f4e2m1fn", "const", "fast", True, "literal", 0),
    Case(3, 128, "f4e2m1fn", "const-strict", "fast", True, "literal", 0),
    Case(2, 128, "f4e2m1fn", "arg-strict", "fast", False, "index", 0),
    # one row; fewer rows than a group of 4
    Case(1, 64, "f4e2m1fn", "mx", "fast", False, "literal", 2),
    Case(2, 64, "f8e5m2", "none", "fast", True, "literal", 0),
]


@pytest.mark.parametrize("case", PINNED, ids=str)
def test_pinned(case: Case) -> None:
    check(case, case.rows * case.cols)


@pytest.mark.parametrize("vector_bits", [256, 128])
def test_groups_of_narrower_vectors(vector_bits: int) -> None:
    """8-lane (AVX2) and 4-lane vectors: groups of 64 and 32 columns,
    blocks of 32 spanning two groups or filling one."""
    check(
        Case(3, 160, "f4e2m1fn", "mx", "contract,reassoc", True, "index", 0),
        vector_bits,
        vector_bits,
    )


@pytest.mark.parametrize(
    ("byte_shuffle", "vector_bits"), [(0, 512), (16, 256), (32, 256), (64, 512)]
)
def test_group_look_ups_of_other_targets(
    byte_shuffle: int, vector_bits: int, jit_host: JitHost
) -> None:
    """Packed f4e2m1fn groups as the JIT compiles them for a host without x86
    byte shuffles (f32 permutes: the IR mx-opt writes), with SSSE3's
    128-bit ones, AVX2's 256-bit ones and AVX-512's (permutes of shifted
    lanes), whatever the host's (which needs those instructions to run
    them)."""
    host = host_cpu()
    if byte_shuffle > host.byte_shuffle:
        pytest.skip(f"the host has no byte shuffles of {byte_shuffle} bytes")
    jit_host(TargetCpu(host.f32_lanes, byte_shuffle))
    for case in (
        Case(5, 288, "f4e2m1fn", "mx", "contract,reassoc", True, "index", 2),
        Case(3, 128, "f4e2m1fn", "const-strict", "fast", True, "literal", 0),
    ):
        check(case, case.rows * case.cols, vector_bits, cached=False)


@pytest.mark.parametrize(
    ("lanes", "byte_shuffle"), [(4, 16), (8, 16), (8, 32), (16, 32), (16, 64)]
)
@pytest.mark.parametrize("block", [8, 16, 32, 64, 128])
def test_group_vectors_of_one_block_where_reordered(
    lanes: int, byte_shuffle: int, block: int
) -> None:
    """For targets with x86 byte shuffles (the host need not have them): the
    columns of a group in the order of its decoded vectors are each column
    once; where the codes' words are reordered, every vector's columns lie
    in one block and the reordering moves whole 64-bit pieces (a `vpermq`);
    with AVX2's 8 lanes and MXFP4's 32-column blocks it is reordered."""
    columns = 8 * lanes
    with for_target_cpu(TargetCpu(lanes, byte_shuffle)):
        order = _group_order(lanes, block)
        words = _block_pure_words(lanes, block)
    assert sorted(order) == list(range(columns))
    if (lanes, byte_shuffle, block) == (8, 32, 32):
        assert words is not None
    if words is None:
        return
    assert sorted(words) == list(range(lanes))
    assert all(
        words[i + 1] == words[i] + 1 and words[i] % 2 == 0 for i in range(0, lanes, 2)
    )
    for v in range(8):
        assert len({c // block for c in order[v * lanes : (v + 1) * lanes]}) == 1


@pytest.mark.parametrize("registers", [16, 32])
def test_group_rows_at_once_for_each_register_file(
    registers: int, jit_host: JitHost
) -> None:
    """Packed f4e2m1fn groups one row at a time (16 vector registers) and
    `ROWS` rows at a time (32), whatever the host's: 7 rows, not a multiple
    of 4, in a layer loop, on 1 and 2 threads."""
    jit_host(replace(host_cpu(), vector_registers=registers))
    case = Case(7, 288, "f4e2m1fn", "mx", "contract,reassoc", True, "index", 2)
    check(case, registers, cached=False)


def test_avx2_group_kernel_spills_no_vector(jit_host: JitHost) -> None:
    """On an AVX2 host (16 vector registers) the MXFP4 group loop keeps its
    vectors in registers: with 4 rows at a time LLVM spilled about a vector
    per multiply-add (`_rows_at_once`)."""
    jit_host(CPU_TARGETS["x86-64-v3"])
    case = Case(64, 1024, "f4e2m1fn", "mx", "fast", False, "index", 0)
    llvm_ir, _, _ = lower_to_llvm_ir(source(case) + "// AVX2 host\n")
    # The group loop: 8 decoded vectors times x's.
    loops = blocks_with(llc_assembly(llvm_ir, "x86-64-v3"), r"\bvfmadd\w+ps\b", 8)
    assert loops
    for loop in loops:
        assert not vector_spills(loop), loop


def _generated(count: int) -> list[Case]:
    """`count` cases drawn (fixed seed) from every choice of every field."""
    rng = np.random.default_rng(2026)
    cases: list[Case] = []
    while len(cases) < count:
        fmt = str(rng.choice(list(_DTYPES)))
        scaling = str(
            rng.choice(
                [
                    "none",
                    "const",
                    "arg",
                    "const-strict",
                    "arg-strict",
                    "mx",
                    "nv",
                    "mx64",
                ]
            )
        )
        if scaling in ("nv", "mx64") and fmt != "f4e2m1fn":
            continue
        block = {"mx": 32, "nv": 16, "mx64": 64}.get(scaling, 8)
        cols = int(rng.integers(1, 12)) * block
        if scaling not in ("mx", "nv", "mx64"):  # (block scales: whole blocks)
            cols += int(rng.choice([0, 1, 5, 12]))
        cases.append(
            Case(
                int(rng.integers(1, 23)),
                cols,
                fmt,
                scaling,
                str(rng.choice(["fast", "reassoc", "contract,reassoc"])),
                bool(rng.integers(0, 2)),
                str(rng.choice(["literal", "index"])),
                int(rng.choice([0, 2])),
                bool(rng.integers(0, 2)),
            )
        )
    return cases


@pytest.mark.ci_sample(7)
@pytest.mark.parametrize("case", _generated(SAMPLE), ids=str)
def test_generated(case: Case) -> None:
    check(case, case.rows + case.cols)


@pytest.mark.parametrize(
    ("flags", "kernel"),
    [("contract", FUSED_BLOCK_SCALED), ("fast", FUSED_REASSOCIATED)],
)
def test_only_reassoc_sums_along_k(flags: str, kernel: str) -> None:
    """Without `reassoc` the strict kernel (rows in lanes, k order)."""
    c = Case(32, 64, "f4e2m1fn", "mx", flags, False, "literal", 0)
    remarks = compile_module(source(c)).f.remarks
    assert len(remarks) == 1 and remarks[0].endswith(f"kernel: {kernel}")


def test_per_tensor_without_reassoc_is_strict() -> None:
    c = Case(32, 64, "f8e4m3fn", "arg", "contract", False, "literal", 0)
    assert compile_module(source(c)).f.remarks[0].endswith(f"kernel: {FUSED_DECODE}")


@pytest.mark.parametrize(
    ("fmt", "one", "registers"),
    [("f4e2m1fn", 2, 16), ("f4e2m1fn", 2, 32), ("f8e4m3fn", 0x38, 16)],
)
def test_every_scale_code(
    fmt: str, one: int, registers: int, jit_host: JitHost
) -> None:
    """Each of the 256 f8e8m0fnu codes as a row's scale of a block whose sum
    is 1 (32 weights 1.0 times x = 1/32: exact in any order): the row is the
    scale's value, 2^-127 (an f32 subnormal) to 2^127 and NaN, as ml_dtypes
    decodes it. Packed FP4 in groups of one row (16 registers: the scales
    looked up in the module's table) and of 4 (decoded in a vector); FP8 in
    chunks (looked up)."""
    jit_host(replace(host_cpu(), vector_registers=registers))
    rows, cols = 256, 64
    packed = fmt == "f4e2m1fn"
    codes = np.zeros((rows, cols), np.uint8)
    codes[:, :32] = one
    weights = codes[:, 0::2] | codes[:, 1::2] << 4 if packed else codes
    scale_codes = np.stack([np.arange(rows), np.full(rows, 127)], 1).astype(np.uint8)
    element = "i4" if packed else "i8"
    src = f"""
func.func @f(%w: memref<?xi8>, %s: memref<?xi8>, %x: vector<{cols}xf32>) -> vector<{rows}xf32> {{
  %q = matrix.row_major_load %w[0]{" packed" if packed else ""} : memref<?xi8> -> !matrix.matrix<{rows}x{cols}x{element}>
  %sc = matrix.column_major_load %s[0] : memref<?xi8> -> !matrix.matrix<{rows}x2xi8>
  %m = arbfp.scaled_convert_from {fmt} %q, %sc block 32 : !matrix.matrix<{rows}x{cols}x{element}>, !matrix.matrix<{rows}x2xi8> to !matrix.matrix<{rows}x{cols}xf32>
  %y = matrix.matvec %m, %x fastmath<reassoc,contract> : !matrix.matrix<{rows}x{cols}xf32>, vector<{cols}xf32> -> vector<{rows}xf32>
  func.return %y : vector<{rows}xf32>
}}
// {registers} vector registers
"""
    f = compile_module(src)["f"]
    assert any(f"kernel: {FUSED_REASSOCIATED}" in r for r in f.remarks), f.remarks
    y = f(weights.ravel(), scale_codes.T.ravel(), np.full(cols, 1 / 32, np.float32))
    expected = np.arange(rows, dtype=np.uint8).view(ml_dtypes.float8_e8m0fnu)
    assert same_bits(y, expected.astype(np.float32))

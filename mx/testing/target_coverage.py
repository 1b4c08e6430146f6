"""A module covering every `matrix` and `arbfp` op on every element type, for
compiling on several CPUs.

LLVM's X86 back end legalizes a type differently per CPU (f16 and bf16
vectors above all: native on AVX512-FP16 or AVX512-BF16, promoted
elsewhere), so IR that one machine compiles may abort LLVM for another CPU.
`coverage_functions(shapes)` writes one `func.func` per op, element type (or
mixed-precision pair) and shape, with 1-element and odd shapes, so that a
test can lower them once and compile the LLVM IR for each CPU of
`CHECKED_CPUS`.

`compile_for_cpu` is the child side: run as
`python -m mx.testing.target_coverage CPU FILE.ll`, it optimizes and emits an
object for CPU with llvmlite's LLVM (an abort kills only that process).
"""

from __future__ import annotations

import itertools
import sys
from collections.abc import Callable, Iterator, Sequence
from functools import partial

from mx.lowering.matrix_to_affine.target_cpu import TargetCpu

CHECKED_CPUS = ("x86-64", "x86-64-v3", "skylake-avx512", "znver4", "sapphirerapids")
"""The x86 CPUs the LLVM IR is compiled for: baseline, AVX2, AVX-512 without
bf16/fp16, AVX-512 with BF16 but without FP16 (Zen 4), and with both."""

CPU_TARGETS = {
    "x86-64": TargetCpu(4, 0, 128, 16),
    "x86-64-v3": TargetCpu(8, 32, 256, 16),
    "skylake-avx512": TargetCpu(16, 64, 512),
    "znver4": TargetCpu(16, 64, 512, 32, 1, False),
    "sapphirerapids": TargetCpu(16, 64, 512),
}
"""What the JIT compiles for on a host with each CPU of `CHECKED_CPUS`
(`cpu_of` its features): AVX2's `vpermps` picks from 8 f32 lanes, its
`vpshufb` takes 32 bytes, its vectors are 256 bits, 16 of them; AVX-512's
16 lanes, 64 bytes with AVX-512BW, 512 bits, 32 registers; the baseline's
SSE2 has no byte shuffle the kernels take, and 16 registers; Zen 4 reads one
row of float weights at a time and folds the products' broadcasts."""

INTEGERS = ("i8", "i16", "i32", "i64")
FLOATS = ("f16", "bf16", "f32", "f64")
ELEMENTS = INTEGERS + FLOATS

WIDENINGS = {
    "i8": ("i16", "i32", "i64"),
    "i16": ("i32", "i64"),
    "i32": ("i64",),
    "i64": (),
    "f16": ("f32", "f64"),
    "bf16": ("f32", "f64"),
    "f32": ("f64",),
    "f64": (),
}
"""Each factor type and the wider result types it widens to exactly (the
mixed contractions of docs/low-precision.md)."""

FORMATS = {
    "f8e4m3fn": "i8",
    "f8e5m2": "i8",
    "f8e8m0fnu": "i8",
    "f6e2m3fn": "i6",
    "f6e3m2fn": "i6",
    "f4e2m1fn": "i4",
}
"""A selection of arbfp formats, one per container and encoding style."""

CI_SHAPES: tuple[tuple[int, int], ...] = ((1, 1), (3, 1), (5, 3), (16, 16))
"""Rows x columns of the test suite's module: 1-element, one column (a
1-element vector per row), odd, and a full vector tile."""

LONG_SHAPES: tuple[tuple[int, int], ...] = (
    *CI_SHAPES,
    (1, 5),
    (2, 2),
    (7, 9),
    (8, 8),
    (17, 33),
    (32, 32),
    (4, 64),
)
"""The long run's shapes (`MX_TARGET_SWEEP=1`)."""


def _m(rows: int, cols: int, element: str) -> str:
    return f"!matrix.matrix<{rows}x{cols}x{element}>"


def _function(
    name: str, params: Sequence[str], results: Sequence[str], body: str
) -> str:
    args = ", ".join(f"%a{i}: {t}" for i, t in enumerate(params))
    returns = ", ".join(results)
    arrow = f" -> ({returns})" if len(results) > 1 else f" -> {returns}"
    return (
        f"func.func @{name}({args}){arrow if results else ''} {{\n"
        f"{body}"
        f"  func.return %r : {returns}\n"
        "}\n"
    )


def _contract(element: str, contract: bool) -> str:
    return " fastmath<contract>" if contract and element in FLOATS else ""


def _elementwise(rows: int, cols: int, t: str) -> Iterator[tuple[str, str]]:
    m = _m(rows, cols, t)
    tag = f"{t}_{rows}x{cols}"
    for op in ("add", "sub", "mul", "div"):
        if op == "div" and t in INTEGERS:
            # Divide by a splat of one: defined for every dividend.
            body = (
                f"  %one = arith.constant 1 : {t}\n"
                f"  %s = matrix.splat %one : {m}\n"
                f"  %r = matrix.div %a0, %s {{unsigned}} : {m}\n"
            )
            yield f"div_{tag}", _function(f"div_{tag}", [m], [m], body)
            continue
        body = f"  %r = matrix.{op} %a0, %a1 : {m}\n"
        yield f"{op}_{tag}", _function(f"{op}_{tag}", [m, m], [m], body)
    yield (
        f"splat_{tag}",
        _function(
            f"splat_{tag}",
            [m, t],
            [m],
            f"  %s = matrix.splat %a1 : {m}\n  %r = matrix.mul %a0, %s : {m}\n",
        ),
    )
    one = "1.5" if t in FLOATS else "3"
    yield (
        f"constant_{tag}",
        _function(
            f"constant_{tag}",
            [m],
            [m],
            f"  %c = matrix.constant dense<{one}> : {m}\n"
            f"  %r = matrix.sub %c, %a0 : {m}\n",
        ),
    )
    yield (
        f"insert_extract_{tag}",
        _function(
            f"insert_extract_{tag}",
            [m, "index", "index"],
            [m],
            f"  %e = matrix.extract %a0[%a1, %a2] : {m}\n"
            f"  %r = matrix.insert %e, %a0[0, {cols - 1}] : {m}\n",
        ),
    )
    yield (
        f"transpose_{tag}",
        _function(
            f"transpose_{tag}",
            [m],
            [_m(cols, rows, t)],
            f"  %r = matrix.transpose %a0 : {m} -> {_m(cols, rows, t)}\n",
        ),
    )
    if t in FLOATS:
        yield (
            f"neg_{tag}",
            _function(f"neg_{tag}", [m], [m], f"  %r = matrix.neg %a0 : {m}\n"),
        )
        yield (
            f"fma_{tag}",
            _function(
                f"fma_{tag}", [m, m, m], [m], f"  %r = matrix.fma %a0, %a1, %a2 : {m}\n"
            ),
        )
        yield (
            f"outer_{tag}",
            _function(
                f"outer_{tag}",
                [f"vector<{rows}x{t}>", f"vector<{cols}x{t}>"],
                [m],
                f"  %r = matrix.outer_product %a0, %a1 : vector<{rows}x{t}>, "
                f"vector<{cols}x{t}> -> {m}\n",
            ),
        )


def _memory(rows: int, cols: int, t: str) -> Iterator[tuple[str, str]]:
    m = _m(rows, cols, t)
    tag = f"{t}_{rows}x{cols}"
    mem = f"memref<?x{t}>"
    yield (
        f"load_store_{tag}",
        _function(
            f"load_store_{tag}",
            [mem, mem, "index"],
            [m],
            f"  %l = matrix.column_major_load %a0[%a2] stride {rows + 1} : {mem} -> {m}\n"
            f"  %k = matrix.row_major_load %a0[1] : {mem} -> {m}\n"
            f"  matrix.row_major_store %l, %a1[%a2] stride {cols + 2} : {m}, {mem}\n"
            f"  matrix.column_major_store %k, %a1[0] : {m}, {mem}\n"
            f"  %r = matrix.add %l, %k : {m}\n",
        ),
    )


def _contractions(
    rows: int, cols: int, a: str, b: str, r: str, contract: bool
) -> Iterator[tuple[str, str]]:
    """matmul (rows x cols by cols x rows), matmul_add and matvec (with and
    without bias) with factors `a` and `b` and result `r`."""
    k = cols
    fm = _contract(r, contract)
    tag = f"{a}_{b}_{r}_{rows}x{cols}{'_contract' if fm else ''}"
    ma, mb, mr = _m(rows, k, a), _m(k, rows, b), _m(rows, rows, r)
    yield (
        f"matmul_{tag}",
        _function(
            f"matmul_{tag}",
            [ma, mb],
            [mr],
            f"  %r = matrix.matmul %a0, %a1{fm} : {ma}, {mb} -> {mr}\n",
        ),
    )
    yield (
        f"matmul_add_{tag}",
        _function(
            f"matmul_add_{tag}",
            [ma, mb, mr],
            [mr],
            f"  %r = matrix.matmul_add %a0, %a1, %a2{fm} : {ma}, {mb}, {mr} -> {mr}\n",
        ),
    )
    x, y = f"vector<{k}x{b}>", f"vector<{rows}x{r}>"
    # The result is stored and returned (odd-length bf16 vector results
    # crashed llc-16).
    out = f"memref<{rows}x{r}>"
    yield (
        f"matvec_{tag}",
        _function(
            f"matvec_{tag}",
            [ma, x, y, out],
            [y],
            f"  %v = matrix.matvec %a0, %a1{fm} : {ma}, {x} -> {y}\n"
            f"  %r = matrix.matvec %a0, %a1, %v{fm} : {ma}, {x}, {y} -> {y}\n"
            f"  %c0 = arith.constant 0 : index\n"
            f"  vector.store %r, %a3[%c0] : {out}, {y}\n",
        ),
    )


def _cast(rows: int, cols: int, source: str, target: str) -> Iterator[tuple[str, str]]:
    m, mt = _m(rows, cols, source), _m(rows, cols, target)
    unsigned = " {unsigned}" if source in INTEGERS or target in INTEGERS else ""
    name = f"cast_{source}_{target}_{rows}x{cols}"
    yield (
        name,
        _function(name, [m], [mt], f"  %r = matrix.cast %a0{unsigned} : {m} to {mt}\n"),
    )


def _arbfp(rows: int, cols: int, fmt: str, dest: str) -> Iterator[tuple[str, str]]:
    container = FORMATS[fmt]
    mc = _m(rows, cols, container)
    md = _m(rows, cols, dest)
    tag = f"{fmt}_{dest}_{rows}x{cols}"
    yield (
        f"convert_from_{tag}",
        _function(
            f"convert_from_{tag}",
            [mc],
            [md],
            f"  %r = arbfp.convert_from {fmt} %a0 : {mc} to {md}\n",
        ),
    )
    yield (
        f"convert_to_{tag}",
        _function(
            f"convert_to_{tag}",
            [md],
            [mc],
            f"  %r = arbfp.convert_to {fmt} %a0 rounding toward_zero "
            f"saturate : {md} to {mc}\n",
        ),
    )
    vc, vd = f"vector<{cols}x{container}>", f"vector<{cols}x{dest}>"
    yield (
        f"convert_vector_{tag}",
        _function(
            f"convert_vector_{tag}",
            [vc, f"memref<{cols}x{dest}>"],
            [vc],
            f"  %d = arbfp.convert_from {fmt} %a0 : {vc} to {vd}\n"
            f"  %c0 = arith.constant 0 : index\n"
            f"  vector.store %d, %a1[%c0] : memref<{cols}x{dest}>, {vd}\n"
            f"  %r = arbfp.convert_to {fmt} %d : {vd} to {vc}\n",
        ),
    )


def _block_scaled(rows: int, dest: str) -> Iterator[tuple[str, str]]:
    """MXFP4 and NVFP4 matrices of 64 columns, packed in memory, decoded and
    multiplied by a vector; and the quantizer."""
    cols = 64
    packed, scales = _m(rows, cols, "i4"), _m(rows, cols // 32, "i8")
    md = _m(rows, cols, dest)
    tag = f"{dest}_{rows}x{cols}"
    x, y = f"vector<{cols}x{dest}>", f"vector<{rows}x{dest}>"
    yield (
        f"scaled_matvec_{tag}",
        _function(
            f"scaled_matvec_{tag}",
            ["memref<?xi8>", "memref<?xi8>", "index", x, f"memref<{rows}x{dest}>"],
            [y],
            f"  %q = matrix.row_major_load %a0[%a2] packed : memref<?xi8> -> {packed}\n"
            f"  %s = matrix.row_major_load %a1[0] : memref<?xi8> -> {scales}\n"
            f"  %w = arbfp.scaled_convert_from f4e2m1fn %q, %s block 32 : "
            f"{packed}, {scales} to {md}\n"
            f"  %r = matrix.matvec %w, %a3 : {md}, {x} -> {y}\n"
            f"  %c0 = arith.constant 0 : index\n"
            f"  vector.store %r, %a4[%c0] : memref<{rows}x{dest}>, {y}\n",
        ),
    )
    e8, s8 = _m(rows, cols, "i8"), _m(rows, cols // 16, "i8")
    yield (
        f"nvfp4_{tag}",
        _function(
            f"nvfp4_{tag}",
            [e8, s8],
            [md],
            f"  %r = arbfp.scaled_convert_from f8e4m3fn %a0, %a1 block 16 scale "
            f"f8e4m3fn : {e8}, {s8} to {md}\n",
        ),
    )
    yield (
        f"quantize_{tag}",
        _function(
            f"quantize_{tag}",
            [md, "memref<?xi8>"],
            [packed],
            f"  %r, %s = arbfp.scaled_convert_to f4e2m1fn %a0 block 32 : "
            f"{md} to {packed}, {scales}\n"
            f"  matrix.row_major_store %s, %a1[0] : {scales}, memref<?xi8>\n",
        ),
    )


DECODE_SPELLINGS = ("index", "layers", "arguments", "threads")
"""How `_decoded_matvecs` spells the fused FP4/FP8 matvec kernels: `index`
offsets (FP4: a run-time parity check, versioned), a loop over 2 layers
(offsets i·size), codes and scales as matrix arguments, and rows enough for
threads (outline-parallel-loops' outlined functions)."""


def _decoded_matvecs(long: bool) -> Iterator[tuple[str, str]]:
    """The fused block-scaled matvec of MXFP4 (packed) and MXFP8 (e4m3, e5m2) weights,
    column- and row-major, in each of `DECODE_SPELLINGS` (each kernel is
    large, 0.3 to 1.4 MB of LLVM IR: without `long`, each format and layout
    in one spelling, every spelling once)."""
    kernels = itertools.product(
        ("f4e2m1fn", "f8e4m3fn", "f8e5m2"), ("column_major", "row_major")
    )
    for i, (fmt, layout) in enumerate(kernels):
        first = i % len(DECODE_SPELLINGS)
        for spelling in (
            DECODE_SPELLINGS if long else DECODE_SPELLINGS[first : first + 1]
        ):
            yield _decoded_matvec(fmt, layout, spelling)


def _decoded_matvec(fmt: str, layout: str, spelling: str) -> tuple[str, str]:
    rows, cols = (1024, 1024) if spelling == "threads" else (64, 128)
    name = f"decode_{fmt}_{layout}_{spelling}"
    fp4 = fmt == "f4e2m1fn"
    q, s = _m(rows, cols, "i4" if fp4 else "i8"), _m(rows, cols // 32, "i8")
    w, x, y = _m(rows, cols, "f32"), f"vector<{cols}xf32>", f"vector<{rows}xf32>"
    packed = " packed" if fp4 else ""

    def decoded(q_value: str, s_value: str, result: str) -> str:
        return (
            f"  %w{result} = arbfp.scaled_convert_from {fmt} {q_value}, "
            f"{s_value} block 32 : {q}, {s} to {w}\n"
            f"  %{result} = matrix.matvec %w{result}, %x : {w}, {x} -> {y}\n"
        )

    def loads(offset: str, scale_offset: str) -> str:
        return (
            f"  %q = matrix.{layout}_load %a0[{offset}]{packed} : "
            f"memref<?xi8> -> {q}\n"
            f"  %s = matrix.column_major_load %a1[{scale_offset}] : "
            f"memref<?xi8> -> {s}\n"
        )

    memory = ["memref<?xi8>", "memref<?xi8>", x]
    if spelling == "index":
        body = loads("%a3", "%a4") + decoded("%q", "%s", "r")
        params = [*memory, "index", "index"]
    elif spelling == "threads":
        body = loads("0", "0") + decoded("%q", "%s", "r")
        params = memory
    elif spelling == "layers":
        body = (
            "  %c0 = arith.constant 0 : index\n"
            "  %c1 = arith.constant 1 : index\n"
            "  %c2 = arith.constant 2 : index\n"
            f"  %size = arith.constant {rows * cols} : index\n"
            f"  %ssize = arith.constant {rows * cols // 32} : index\n"
            f"  %zero = arith.constant dense<0.0> : {y}\n"
            f"  %r = scf.for %i = %c0 to %c2 step %c1 iter_args(%acc = %zero) "
            f"-> ({y}) {{\n"
            "  %o = arith.muli %i, %size : index\n"
            "  %so = arith.muli %i, %ssize : index\n"
            + loads("%o", "%so")
            + decoded("%q", "%s", "y")
            + f"  %sum = arith.addf %acc, %y : {y}\n"
            f"  scf.yield %sum : {y}\n"
            "  }\n"
        )
        params = memory
    else:  # row-major codes: the transpose of a K x R argument
        if layout == "row_major":
            codes = _m(cols, rows, "i4" if fp4 else "i8")
            body = f"  %q = matrix.transpose %a0 : {codes} -> {q}\n"
            body += decoded("%q", "%a1", "r")
        else:
            codes = q
            body = decoded("%a0", "%a1", "r")
        params = [codes, s, x]
    body = body.replace("%x", "%a2")
    return name, _function(name, params, [y], body)


PER_TENSOR_FP8 = ("f8e4m3fn", "f8e5m2")
"""The FP8 formats of the per-tensor row-major matvecs: without `long`, the
first only. f8e4m3fn's kernel with a run-time scale has a version of its
row groups that multiplies by s·2^8 once (`decoded_matvec._Kernel.folded`),
an `scf.if` and code that no block-scaled kernel has; f8e5m2's has the same
instructions on the same vector types as the block-scaled one of its
format, whose row-major kernels `_decoded_matvecs` compiles; each is ~1 MB
of LLVM IR, several seconds of `llc-16` for `x86-64`."""


def _row_major_float_matvecs(long: bool) -> Iterator[tuple[str, str]]:
    """f16 and bf16 row-major weights cast to f32 times an f32 vector, in a
    shape taking every step of the tiled kernel (a cache line of each row,
    a narrower step, single columns; rows past the last tile); FP8 codes
    times a per-tensor scale argument (the fused kernel by cache lines) in
    the formats of `PER_TENSOR_FP8`."""
    rows, cols = 37, 117
    for t, flags in (("f16", ""), ("bf16", ""), ("f16", "fast"), ("bf16", "reassoc")):
        # (with reassoc: the kernel summing along K, an index offset)
        suffix = f"_{flags}" if flags else ""
        name = f"row_major_matvec_{t}_{rows}x{cols}{suffix}"
        q, w = _m(rows, cols, t), _m(rows, cols, "f32")
        x, y = f"vector<{cols}xf32>", f"vector<{rows}xf32>"
        at, fm = ("%a2", f" fastmath<{flags}>") if flags else ("0", "")
        body = (
            f"  %q = matrix.row_major_load %a0[{at}] : memref<?x{t}> -> {q}\n"
            f"  %w = matrix.cast %q : {q} to {w}\n"
            f"  %r = matrix.matvec %w, %a1{fm} : {w}, {x} -> {y}\n"
        )
        params = [f"memref<?x{t}>", x] + (["index"] if flags else [])
        yield name, _function(name, params, [y], body)
    rows, cols = 64, 192  # (FP8 per-tensor: whole lines apart, so in lines of 64
    # columns, with masked ends)
    for fmt in PER_TENSOR_FP8 if long else PER_TENSOR_FP8[:1]:
        name = f"row_major_matvec_{fmt}_{rows}x{cols}"
        q, w = _m(rows, cols, "i8"), _m(rows, cols, "f32")
        x, y = f"vector<{cols}xf32>", f"vector<{rows}xf32>"
        body = (
            f"  %q = matrix.row_major_load %a0[0] : memref<?xi8> -> {q}\n"
            f"  %d = arbfp.convert_from {fmt} %q : {q} to {w}\n"
            f"  %k = matrix.splat %a2 : {w}\n"
            f"  %w = matrix.mul %d, %k : {w}\n"
            f"  %r = matrix.matvec %w, %a1 : {w}, {x} -> {y}\n"
        )
        yield name, _function(name, ["memref<?xi8>", x, "f32"], [y], body)


Unit = Callable[[int, int], Iterator[tuple[str, str]]]
"""The functions of one op (or op family) and element type(s), for a shape."""


def _units() -> list[Unit]:
    units: list[Unit] = []
    for t in ELEMENTS:
        units += [partial(_elementwise, t=t), partial(_memory, t=t)]
        units += [partial(_cast, source=t, target=u) for u in ELEMENTS if u != t]
    for a, results in WIDENINGS.items():
        for r in (a, *results):
            for contract in (False, True) if r in FLOATS else (False,):
                units.append(partial(_contractions, a=a, b=a, r=r, contract=contract))
    for a, b in itertools.permutations(("f16", "bf16"), 2):
        for contract in (False, True):
            units.append(partial(_contractions, a=a, b=b, r="f32", contract=contract))
    for fmt, dest in itertools.product(FORMATS, FLOATS):
        units.append(partial(_arbfp, fmt=fmt, dest=dest))
    return units


def coverage_functions(long: bool = False) -> list[tuple[str, str]]:
    """(name, `func.func` text) for every op x element type: each in one
    shape of `CI_SHAPES` (in turn), or with `long` in every `LONG_SHAPES`."""
    functions: list[tuple[str, str]] = []
    for i, unit in enumerate(_units()):
        for rows, cols in LONG_SHAPES if long else (CI_SHAPES[i % len(CI_SHAPES)],):
            functions += unit(rows, cols)
    dests = ("f32", "bf16", "f16")
    scaled = (
        itertools.product((1, 3, 32), dests)
        if long
        else zip((1, 3, 32), dests, strict=True)
    )
    for rows, dest in scaled:
        functions += _block_scaled(rows, dest)
    functions += _row_major_float_matvecs(long)
    return (
        functions
        + list(_decoded_matvecs(long))
        + _reassociated_matvecs()
        + _packed_products()
    )


REASSOCIATED = (
    ("f4e2m1fn", "mx", "index"),
    ("f8e4m3fn", "mx", "layers"),
    ("f8e5m2", "arg", "index"),
    ("f4e2m1fn", "nv", "layers"),
)
"""The reassociated matvec kernels of the sample (format, scaling, spelling):
MXFP4 at `index` offsets (versioned; a group of 128 columns and a block),
MXFP8 in a loop over layers, FP8 times
a per-tensor scale argument with K not a multiple of the chunk, NVFP4 (blocks
of 16: half-width vectors)."""


def _reassociated_matvecs() -> list[tuple[str, str]]:
    """`matrix.matvec` with `fastmath<fast>` of row-major codes: the kernel
    summing along K (`reassociated_matvec.py`), 7 rows (a group of 4 and a
    last one overlapping it)."""
    functions: list[tuple[str, str]] = []
    for fmt, scaling, spelling in REASSOCIATED:
        rows = 7
        cols = 100 if scaling == "arg" else 160 if scaling == "mx" else 128
        block, scale = (16, "f8e4m3fn") if scaling == "nv" else (32, "f8e8m0fnu")
        fp4 = fmt == "f4e2m1fn"
        q, w = _m(rows, cols, "i4" if fp4 else "i8"), _m(rows, cols, "f32")
        s = _m(rows, cols // block, "i8")
        x, y = f"vector<{cols}xf32>", f"vector<{rows}xf32>"
        packed = " packed" if fp4 else ""
        offset = "%a3" if spelling == "index" else "%o"
        body = (
            f"  %q = matrix.row_major_load %a0[{offset}]{packed} : "
            f"memref<?xi8> -> {q}\n"
        )
        if scaling == "arg":
            body += (
                f"  %d = arbfp.convert_from {fmt} %q : {q} to {w}\n"
                f"  %k = matrix.splat %a4 : {w}\n"
                f"  %m = matrix.mul %d, %k fastmath<fast> : {w}\n"
            )
        else:
            body += (
                f"  %s = matrix.row_major_load %a1[0] : memref<?xi8> -> {s}\n"
                f"  %m = arbfp.scaled_convert_from {fmt} %q, %s block {block} "
                f"scale {scale} : {q}, {s} to {w}\n"
            )
        body += f"  %r = matrix.matvec %m, %a2 fastmath<fast> : {w}, {x} -> {y}\n"
        if spelling == "layers":
            body = (
                "  %c0 = arith.constant 0 : index\n"
                "  %c1 = arith.constant 1 : index\n"
                "  %c2 = arith.constant 2 : index\n"
                f"  %size = arith.constant {rows * cols} : index\n"
                f"  %zero = arith.constant dense<0.0> : {y}\n"
                f"  %r = scf.for %i = %c0 to %c2 step %c1 iter_args(%acc = %zero) "
                f"-> ({y}) {{\n"
                "  %o = arith.muli %i, %size : index\n"
                + body.replace("%r = ", "%layer = ")
                + f"  %sum = arith.addf %acc, %layer fastmath<fast> : {y}\n"
                f"  scf.yield %sum : {y}\n"
                "  }\n"
            )
        name = f"reassoc_{fmt}_{scaling}_{spelling}_{rows}x{cols}"
        params = ["memref<?xi8>", "memref<?xi8>", x, "index", "f32"]
        functions.append((name, _function(name, params, [y], body)))
    return functions


PACKED_PRODUCTS = (
    ("bf16", "f16", "f32", " fastmath<contract>"),
    ("i8", "i8", "i32", ""),
)
"""Mixed-precision products large enough for the packed, cache-blocked
kernel (which widens while packing): both half types, and int8."""


def _packed_products() -> list[tuple[str, str]]:
    functions: list[tuple[str, str]] = []
    for a, b, r, flags in PACKED_PRODUCTS:
        name = f"packed_{a}_{b}_{r}"
        ta, tb, tr = _m(96, 96, a), _m(96, 96, b), _m(96, 96, r)
        functions.append(
            (
                name,
                f"func.func @{name}(%a: {ta}, %b: {tb}, %c: {tr}) -> {tr} {{\n"
                f"  %r = matrix.matmul_add %a, %b, %c{flags} : {ta}, {tb}, {tr} -> {tr}\n"
                f"  func.return %r : {tr}\n}}\n",
            )
        )
    return functions


def compile_for_cpu(cpu: str, llvm_ir: str) -> bytes:
    """Optimizes `llvm_ir` at -O3 and emits an object for `cpu` with
    llvmlite's LLVM, as the JIT does (an LLVM abort ends the process): the
    object code."""
    from llvmlite import binding

    binding.initialize_native_target()
    binding.initialize_native_asmprinter()
    module = binding.parse_assembly(llvm_ir)
    module.verify()
    machine = binding.Target.from_triple(module.triple).create_target_machine(
        cpu=cpu, opt=3
    )
    tuning = binding.create_pipeline_tuning_options(speed_level=3)
    builder = binding.create_pass_builder(machine, tuning)
    builder.getModulePassManager().run(module, builder)
    return machine.emit_object(module)


if __name__ == "__main__":
    # cpu, .ll file, object file
    with open(sys.argv[2]) as ir_file:
        obj = compile_for_cpu(sys.argv[1], ir_file.read())
    with open(sys.argv[3], "wb") as obj_file:
        obj_file.write(obj)

"""The LLVM IR of every `matrix`/`arbfp` op on every element type compiles
for every x86 CPU of `CHECKED_CPUS` with llvmlite's LLVM (-O3 and code
generation, as the JIT does), for the CPUs of `LLC_CPUS` with `llc-16 -O3`
and for those of `CLANG_CPUS` with `clang-16 -O3` (LLVM 16's optimizer
too), each in a child process (an LLVM abort cannot be caught).

LLVM legalizes f16/bf16 vectors per CPU: a machine with AVX512-FP16 never
showed the aborts that Zen 4 (AVX512-BF16 only) and the baseline x86-64 did,
so the test names the CPUs instead of using the host's. The CI sample has
every op x element type (and mixed-precision pair) once, in a shape of
`CI_SHAPES` in turn; `MX_TARGET_SWEEP=1` takes every shape of `LONG_SHAPES`.

Found when written (before bf16 values were held as i16 in LLVM IR): the
3x1 bf16 matvec (llvmlite, every CPU: a lane-by-lane zext chain beside a
splat), bf16 vector arguments (llc-16 on x86-64: `<16 x bfloat>`; any CPU:
`<1 x bfloat>`), and an odd-length bf16 vector result (llc-16 on znver4).
"""

import os
import re
import subprocess
import sys
from collections.abc import Callable, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from mx.errors import CompileError
from mx.jit import compile_module, lower_to_llvm_ir
from mx.jit_machine_code import host_cpu
from mx.lowering.matrix_to_affine.kernel_remarks import (
    CACHE_BLOCKED,
    FUSED_BLOCK_SCALED,
    FUSED_REASSOCIATED,
    REASSOCIATED_VECTOR,
    VERSIONED,
    KernelRemark,
    recording,
)
from mx.targets.compile_guard import compile_in_child, failing_functions, functions
from mx.testing.target_coverage import (
    CHECKED_CPUS,
    CI_SHAPES,
    CPU_TARGETS,
    DECODE_SPELLINGS,
    ELEMENTS,
    FLOATS,
    FORMATS,
    PACKED_PRODUCTS,
    PER_TENSOR_FP8,
    REASSOCIATED,
    WIDENINGS,
    coverage_functions,
)
from tests.fixtures import JitHost
from tests.placement import lines_host, one_tile_host, one_tile_loops
from tests.system_tools import llc_assembly, required_tool, vector_spills

LONG = bool(os.environ.get("MX_TARGET_SWEEP"))
ABORTS = Path(__file__).parents[1] / "llvm_aborts"


@pytest.fixture(scope="module")
def lowered(
    tmp_path_factory: pytest.TempPathFactory,
) -> tuple[Path, list[KernelRemark]]:
    """The coverage module, lowered once, as a `.ll` file; its kernel remarks.
    It is lowered as the JIT lowers it for a host without x86 byte shuffles,
    whose intrinsics the JIT writes only for a host that has them
    (`test_fp4_lookups_are_permutes_for_cpu` compiles them for each CPU that
    has them)."""
    import mx.jit_compile

    source = "".join(text for _, text in coverage_functions(LONG))
    portable = replace(host_cpu(), byte_shuffle=0)
    with pytest.MonkeyPatch.context() as patch, recording() as remarks:
        patch.setattr(mx.jit_compile, "host_cpu", lambda: portable)
        ir, _, _ = lower_to_llvm_ir(source)
    path = tmp_path_factory.mktemp("targets") / "coverage.ll"
    path.write_text(ir)
    return path, remarks


@pytest.fixture(scope="module")
def llvm_ir(lowered: tuple[Path, list[KernelRemark]]) -> Path:
    return lowered[0]


Compiler = Callable[[str, Path, str], list[str]]
"""The command compiling a `.ll` file for a CPU into an object file."""


def _llvmlite(cpu: str, path: Path, obj: str) -> list[str]:
    return [sys.executable, "-m", "mx.testing.target_coverage", cpu, str(path), obj]


def _llc(cpu: str, path: Path, obj: str) -> list[str]:
    llc = required_tool("llc-16")
    return [llc, "-O3", f"-mcpu={cpu}", "-filetype=obj", "-o", obj, str(path)]


def _clang(cpu: str, path: Path, obj: str) -> list[str]:
    """LLVM 16's optimizer and back end, as a C user would build the `.ll`."""
    clang = required_tool("clang-16")
    return [clang, "-O3", f"-march={cpu}", "-c", "-o", obj, str(path)]


C_LIBRARY = {
    *("memcpy", "memmove", "memset", "aligned_alloc", "free"),  # libc
    *("fma", "fmaf"),  # libm (x86-64 without FMA)
    *("__extendhfsf2", "__truncsfhf2"),  # libgcc (f16 without F16C)
}
"""What LLVM 16 may call that a C program built by clang-16 has (OpenMP and
the thread count are declared weak: a program without them runs
single-threaded)."""


def _resolved_in_the_jit(symbols: set[str]) -> set[str]:
    """Those of `symbols` the JIT's engines find (what MCJIT looks up)."""
    from llvmlite import binding

    from mx.jit_machine_code import install_runtime_symbols

    install_runtime_symbols()
    return {s for s in symbols if binding.address_of_symbol(s) is not None}


def _undefined(obj: Path) -> set[str]:
    """The symbols `obj` needs that it does not define, weak ones aside."""
    listing = subprocess.run(
        [required_tool("llvm-nm-16"), "-u", str(obj)],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    return {line.split()[1] for line in listing.splitlines() if line.split()[0] == "U"}


def _compiles(command: list[str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(command, capture_output=True, text=True, check=False)


CLANG_CPUS = CHECKED_CPUS if LONG else ("znver4", "sapphirerapids")
"""The CPUs the CI sample is compiled for with clang-16 too (LLVM 16's
optimizer before its back end): those where LLVM 16 aborted (AVX512-BF16);
every CPU with `MX_TARGET_SWEEP=1`."""

LLC_CPUS = CHECKED_CPUS if LONG else ("x86-64", "znver4", "sapphirerapids")
"""The CPUs the CI sample is compiled for with llc-16: where LLVM 16's back
end aborted (bf16 vector arguments on x86-64, an odd-length bf16 vector on
Zen 4) and the CPU with AVX512-FP16; every CPU with `MX_TARGET_SWEEP=1`.
llvmlite's LLVM, the JIT's, takes every CPU."""


@pytest.mark.parametrize(
    ("cpu", "compiler"),
    [
        pytest.param(cpu, compiler, id=f"{cpu}-{name}")
        for cpu in CHECKED_CPUS
        for compiler, name in (
            (_llvmlite, "llvmlite"),
            (_llc, "llc-16"),
            (_clang, "clang-16"),
        )
        if (compiler is not _clang or cpu in CLANG_CPUS)
        and (compiler is not _llc or cpu in LLC_CPUS)
    ],
)
def test_every_op_compiles_for_cpu(llvm_ir: Path, cpu: str, compiler: Compiler) -> None:
    """...into an object file whose calls the JIT resolves (llvmlite's LLVM)
    or a C program links (LLVM 16): a libcall nobody defines is a call to
    address 0 in the JIT (`__truncsfbf2` for bf16 on CPUs without
    AVX512-BF16 was)."""
    obj = llvm_ir.with_suffix(f".{cpu}.{compiler.__name__}.o")
    command = compiler(cpu, llvm_ir, str(obj))
    result = _compiles(command)
    if result.returncode == 0:
        needed = _undefined(obj)
        found = _resolved_in_the_jit(needed) if compiler is _llvmlite else C_LIBRARY
        assert needed <= found, (cpu, needed - found)
        return

    def compiles(text: str) -> bool:
        part = llvm_ir.with_suffix(".part.ll")
        part.write_text(text)
        return _compiles(compiler(cpu, part, os.devnull)).returncode == 0

    failing = failing_functions(llvm_ir.read_text(), compiles)
    pytest.fail(
        f"{cpu}: {' '.join(command[:2])} ended with {result.returncode}; "
        f"failing functions: {failing}\n{result.stderr[-1500:]}"
    )


ENTRIES = "".join(
    f"func.func @{t}_{n}(%a: vector<{n}x{t}>, %s: {t}, %m: !matrix.matrix<3x{n}x{t}>)"
    f" -> (vector<{n}x{t}>, !matrix.matrix<3x{n}x{t}>) {{\n"
    f"  %b = vector.broadcast %s : {t} to vector<{n}x{t}>\n"
    f"  %c = arith.addf %a, %b : vector<{n}x{t}>\n"
    f"  %d = matrix.add %m, %m : !matrix.matrix<3x{n}x{t}>\n"
    f"  func.return %c, %d : vector<{n}x{t}>, !matrix.matrix<3x{n}x{t}>\n}}\n"
    for t in FLOATS
    for n in (1, 3, 16)
)
"""Functions whose JIT entries pass f16/bf16 vectors, scalars and matrices."""


@pytest.fixture(scope="module")
def jit_entries(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The LLVM IR the JIT compiles for `ENTRIES`: the kernels, their fast
    entries (not optimized: `optnone`) and batch loops."""
    path = tmp_path_factory.mktemp("entries") / "entries.ll"
    path.write_text(compile_module(ENTRIES).llvm_ir)
    return path


@pytest.mark.parametrize("cpu", CHECKED_CPUS)
def test_the_jit_entries_compile_for_cpu(jit_entries: Path, cpu: str) -> None:
    """What the JIT adds to the kernels compiles for every CPU too (with the
    llvmlite the JIT uses): its entries' IR is not the coverage module's."""
    assert "optnone" in jit_entries.read_text()
    obj = jit_entries.with_suffix(f".{cpu}.o")
    result = _compiles(_llvmlite(cpu, jit_entries, str(obj)))
    assert result.returncode == 0, f"{cpu}: {result.stderr[-1500:]}"
    needed = _undefined(obj)
    assert needed <= _resolved_in_the_jit(needed), (cpu, needed)


def test_the_sample_has_every_op_on_every_element_type() -> None:
    names = [name for name, _ in coverage_functions()]
    assert len(names) == len(set(names))
    expected = [
        f"{op}_{e}_"
        for e in ELEMENTS
        for op in (
            "add", "sub", "mul", "div", "splat", "constant", "insert_extract",
            "transpose", "load_store", "cast",
            *(("neg", "fma", "outer") if e in FLOATS else ()),
        )
    ]  # fmt: skip
    expected += [
        f"{op}_{a}_{b}_{r}_"
        for a, results in WIDENINGS.items()
        for b, r in [(a, a), *((a, r) for r in results)]
        for op in ("matmul", "matmul_add", "matvec")
    ]
    expected += [
        f"{op}_{a}_{b}_f32_"
        for a, b in (("f16", "bf16"), ("bf16", "f16"))
        for op in ("matmul", "matmul_add", "matvec")
    ]
    expected += [
        f"{op}_{fmt}_{dest}_"
        for fmt in FORMATS
        for dest in FLOATS
        for op in ("convert_from", "convert_to", "convert_vector")
    ]
    expected += ["scaled_matvec_", "nvfp4_", "quantize_"]
    expected += [f"row_major_matvec_{t}_" for t in ("f16", "bf16", PER_TENSOR_FP8[0])]
    expected += [
        f"decode_{fmt}_{layout}_"
        for fmt in ("f4e2m1fn", "f8e4m3fn", "f8e5m2")
        for layout in ("column_major", "row_major")
    ]
    missing = [p for p in expected if not any(n.startswith(p) for n in names)]
    assert not missing, missing
    shapes = {name.rsplit("_", 1)[-1] for name in names}
    assert {f"{r}x{c}" for r, c in CI_SHAPES} <= shapes
    decoders = [n for n in names if n.startswith("decode_")]
    assert {n.rsplit("_", 1)[1] for n in decoders} == set(DECODE_SPELLINGS)
    # The long run compiles the per-tensor FP8 kernel in every format.
    long_names = [name for name, _ in coverage_functions(long=True)]
    for fmt in PER_TENSOR_FP8:
        assert any(n.startswith(f"row_major_matvec_{fmt}_") for n in long_names)
    # The shapes that aborted LLVM.
    assert {"matvec_bf16_bf16_f32_5x3", "outer_bf16_3x1"} <= set(names)


def test_the_decode_kernels_of_the_sample_are_fused(
    lowered: tuple[Path, list[KernelRemark]],
) -> None:
    """The sample's decode functions get the fused kernel in each spelling
    (index offsets of packed FP4: versioned; threads: outlined loops), so
    the CPUs compile the kernels' own IR."""
    _, remarks = lowered
    decoders = {r.function: r for r in remarks if r.function.startswith("decode_")}
    assert decoders
    for name, remark in decoders.items():
        assert remark.kernel == FUSED_BLOCK_SCALED and remark.reason is None, remark
        assert (remark.note == VERSIONED) == (
            name.startswith("decode_f4e2m1fn") and name.endswith("_index")
        ), remark
    ir = lowered[0].read_text()
    threads = [name for name in decoders if name.endswith("_threads")]
    assert threads and all(f"@{name}__parallel_" in ir for name in threads)


def test_the_reassociated_kernels_of_the_sample_are_fused(
    lowered: tuple[Path, list[KernelRemark]],
) -> None:
    """The sample's `reassoc` matvecs of row-major codes get the kernel
    summing along K, so the CPUs compile its IR (packed FP4 at `index`
    offsets: versioned)."""
    _, remarks = lowered
    reassociated = {r.function: r for r in remarks if r.function.startswith("reassoc_")}
    assert len(reassociated) == len(REASSOCIATED)
    for name, remark in reassociated.items():
        assert remark.kernel == FUSED_REASSOCIATED and remark.reason is None, remark
        assert (remark.note == VERSIONED) == (
            name.startswith("reassoc_f4e2m1fn") and "_index_" in name
        ), remark


def test_the_reassociated_float_matvecs_of_the_sample_sum_along_k(
    lowered: tuple[Path, list[KernelRemark]],
) -> None:
    """The sample's row-major f16/bf16 matvecs with `reassoc` get the kernel
    summing along K (and those without it the tiled one), so the CPUs
    compile both."""
    _, remarks = lowered
    kernels = {
        r.function: r.kernel
        for r in remarks
        if r.function.startswith(("row_major_matvec_f16_", "row_major_matvec_bf16_"))
    }
    assert len(kernels) == 4, kernels
    for name, kernel in kernels.items():
        reassociated = name.endswith(("_fast", "_reassoc"))
        assert kernel == (REASSOCIATED_VECTOR if reassociated else CACHE_BLOCKED), name


def test_the_packed_products_of_the_sample_are_cache_blocked(
    lowered: tuple[Path, list[KernelRemark]],
) -> None:
    """The sample's large mixed-precision products get the packed kernel, so
    the CPUs compile its widening of f16/bf16/i8 factors."""
    _, remarks = lowered
    packed = [r for r in remarks if r.function.startswith("packed_")]
    assert len(packed) == len(PACKED_PRODUCTS)
    assert all(r.kernel == CACHE_BLOCKED for r in packed), packed


def _abort_on(symbol: str) -> Callable[[str], bytes]:
    """A compilation that aborts on modules defining `symbol`; else its
    output is the module's text 1000 times (more than a pipe holds)."""

    def compile_(text: str) -> bytes:
        _, defined = functions(text)
        if any(f.name == symbol for f in defined):
            os.abort()
        return text.encode() * 1000

    return compile_


def test_an_abort_in_llvm_is_an_error_naming_the_function_and_cpu() -> None:
    ir = "\n".join(
        f"define i32 @{name}(i32 %x) {{\n  %y = add i32 %x, 1\n  ret i32 %y\n}}"
        for name in ("a", "b", "_mx_fn_bad", "c")
    )
    with pytest.raises(CompileError, match=r"@bad for CPU 'znver4' .*SIGABRT"):
        compile_in_child(ir, "znver4", _abort_on("_mx_fn_bad"), lambda s: s[7:])
    assert compile_in_child(ir, "znver4", _abort_on("other")) == ir.encode() * 1000


def test_llvm_abort_of_the_old_bf16_matvec_is_caught() -> None:
    """A real LLVM abort (the IR mx wrote for a 3x1 bf16 matvec before the
    fix) ends a child, not this process, and names the function."""
    from mx.testing.target_coverage import compile_for_cpu

    ir = (ABORTS / "bf16_matvec_3x1.ll").read_text()
    with pytest.raises(CompileError, match=r"@f for CPU 'x86-64'"):
        compile_in_child(ir, "x86-64", lambda text: compile_for_cpu("x86-64", text))


HALVES = """
func.func @NAME(%a: vector<4xf16>, %b: vector<4xf16>) -> vector<4xf16> {
  %r = arith.addf %a, %b : vector<4xf16>
  func.return %r : vector<4xf16>
}"""


def test_jit_raises_instead_of_aborting(monkeypatch: pytest.MonkeyPatch) -> None:
    """The JIT compiles a module in a child: an LLVM abort there, at -O3 and
    at -O2, is an `MXError` naming the source function."""
    import mx.jit
    import mx.jit_machine_code

    aborting = _abort_on("_mx_fn_halves")

    def at_every_level(text: str, _speeds: Sequence[int]) -> bytes:
        return aborting(text)

    monkeypatch.setattr(mx.jit_machine_code, "_emit_object_at", at_every_level)
    with pytest.raises(CompileError, match=r"@halves for CPU '[^']+'"):
        mx.jit.compile_module(HALVES.replace("NAME", "halves"))


def test_jit_compiles_at_o2_where_o3_aborts(monkeypatch: pytest.MonkeyPatch) -> None:
    """A module whose compilation at -O3 aborts LLVM is compiled again at
    -O2 in another child, runs, and its functions' remarks say so."""
    import numpy as np

    import mx.jit
    import mx.jit_machine_code

    monkeypatch.setattr(mx.jit_machine_code, "_emit_object", _abort_on("_mx_fn_o2"))
    add = mx.jit.compile_module(HALVES.replace("NAME", "o2"))["o2"]
    a = np.array([1.5, -2.0, 1000.0, 0.1], np.float16)
    np.testing.assert_array_equal(add(a, a), a + a)
    assert add.remarks[-1].startswith("remark: compiled at -O2, not -O3"), add.remarks


def test_jit_compiles_at_o2_where_o3_leaves_the_module_invalid(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Where the module -O3 gives does not verify, the same child compiles
    it at -O2; the functions' remarks say so."""
    import numpy as np

    import mx.jit
    import mx.jit_machine_code

    optimized = mx.jit_machine_code._optimized_object  # pyright: ignore[reportPrivateUsage]

    def invalid_at_o3(module: Any, speed: int) -> bytes | None:
        return None if speed == 3 else optimized(module, speed)

    monkeypatch.setattr(mx.jit_machine_code, "_optimized_object", invalid_at_o3)
    add = mx.jit.compile_module(HALVES.replace("NAME", "o2_invalid"))["o2_invalid"]
    a = np.array([1.5, -2.0, 1000.0, 0.1], np.float16)
    np.testing.assert_array_equal(add(a, a), a + a)
    assert add.remarks[-1].startswith("remark: compiled at -O2, not -O3"), add.remarks


def test_jit_at_o3_adds_no_optimization_remark() -> None:
    """A module LLVM compiles at -O3 gets only its kernels' remarks."""
    import mx.jit

    add = mx.jit.compile_module(HALVES.replace("NAME", "o3"))["o3"]
    assert not [r for r in add.remarks if "compiled at" in r], add.remarks


def test_llvm_optimizer_abort_of_a_layer_loop_is_survived() -> None:
    """A packed MXFP4 matvec with an `index` offset in a loop over layers
    (the random program of seed 2420): llvmlite's LLVM 22 at -O3 left it
    invalid and aborted in instruction selection; the JIT compiles it
    (at -O2) and it computes what the interpreter does."""
    import numpy as np
    from xdsl.parser import Parser

    import mx.jit
    from mx.frontend import mx_context
    from mx.interpreters import run_function
    from mx.testing.quantized_programs import QuantizedProgram

    program = QuantizedProgram(2420)
    assert "scf.for %layer" in program.source and " packed " in program.source
    module = Parser(mx_context(), program.source).parse_module()
    (want,) = run_function(module, "f", *program.arguments)
    got = mx.jit.jit(program.source, "f")(*program.arguments)
    assert np.asarray(got).tobytes() == np.asarray(want).tobytes()


def test_jit_loads_the_object_code_of_the_guard_child(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """LLVM compiles a module once, in the guard's child; the JIT runs the
    object code the child sent back."""
    import numpy as np

    import mx.jit
    import mx.jit_machine_code

    compiled_by = tmp_path / "pids"
    emit_object = mx.jit_machine_code._emit_object  # pyright: ignore[reportPrivateUsage]

    def logged(text: str) -> bytes:
        with compiled_by.open("a") as log:
            log.write(f"{os.getpid()}\n")
        return emit_object(text)

    monkeypatch.setattr(mx.jit_machine_code, "_emit_object", logged)
    add = mx.jit.jit(HALVES.replace("NAME", "guarded_halves"), "guarded_halves")
    pids = compiled_by.read_text().split()
    assert len(pids) == 1 and int(pids[0]) != os.getpid(), pids
    a = np.array([1.5, -2.0, 1000.0, 0.1], np.float16)
    b = np.array([0.25, 3.0, 24.0, 0.2], np.float16)
    np.testing.assert_array_equal(add(a, b), a + b)


ABORTED = """
func.func @matvec_3x1(%w: !matrix.matrix<3x1xbf16>, %x: vector<1xbf16>) -> vector<3xf32> {
  %y = matrix.matvec %w, %x : !matrix.matrix<3x1xbf16>, vector<1xbf16> -> vector<3xf32>
  func.return %y : vector<3xf32>
}
func.func @mixed_5x3(%w: !matrix.matrix<5x3xbf16>, %x: vector<3xf16>, %b: vector<5xf32>) -> vector<5xf32> {
  %y = matrix.matvec %w, %x, %b : !matrix.matrix<5x3xbf16>, vector<3xf16>, vector<5xf32> -> vector<5xf32>
  func.return %y : vector<5xf32>
}
func.func @bf16_result_5(%w: !matrix.matrix<5x3xbf16>, %x: vector<3xbf16>) -> vector<5xbf16> {
  %y = matrix.matvec %w, %x : !matrix.matrix<5x3xbf16>, vector<3xbf16> -> vector<5xbf16>
  func.return %y : vector<5xbf16>
}
func.func @outer_1x16(%u: vector<1xbf16>, %v: vector<16xbf16>) -> !matrix.matrix<1x16xbf16> {
  %m = matrix.outer_product %u, %v : vector<1xbf16>, vector<16xbf16> -> !matrix.matrix<1x16xbf16>
  func.return %m : !matrix.matrix<1x16xbf16>
}
"""


def test_what_aborted_runs_as_the_interpreter() -> None:
    """The functions that aborted LLVM, JIT-compiled, bit for bit against the
    interpreter on random bf16/f16 values (specials included)."""
    import ml_dtypes
    import numpy as np
    from xdsl.parser import Parser

    from mx.frontend import mx_context
    from mx.interpreters import run_function
    from mx.jit import compile_module

    compiled = compile_module(ABORTED)
    module = Parser(mx_context(), ABORTED).parse_module()
    rng = np.random.default_rng(25)
    kinds = {"bf16": ml_dtypes.bfloat16, "f16": np.float16, "f32": np.float32}

    def values(type_: str) -> np.ndarray:
        dims, element = type_.split("<")[1].rstrip(">").rsplit("x", 1)
        shape = tuple(int(d) for d in dims.split("x"))
        x = rng.standard_normal(shape) * rng.choice([1.0, 1e-30, 1e30])
        x.flat[0] = rng.choice([0.0, -0.0, np.inf, np.nan, 1.0])
        with np.errstate(over="ignore"):  # 1e30 is inf in f16
            return x.astype(kinds[element])

    for op in module.ops:
        name = op.sym_name.data  # type: ignore[attr-defined]
        types = [str(t) for t in op.function_type.inputs]  # type: ignore[attr-defined]
        for _ in range(20):
            args = [values(t) for t in types]
            got = np.asarray(compiled[name](*[a.copy() for a in args]))
            (want,) = run_function(module, name, *args)
            want = np.asarray(want)
            same = (got.view(f"u{got.itemsize}") == want.view(f"u{want.itemsize}")) | (
                np.isnan(got.astype(np.float64)) & np.isnan(want.astype(np.float64))
            )
            assert same.all(), (name, args, got, want)


FP4_MATVEC = """
func.func @mv(%w: memref<?xi8>, %s: memref<?xi8>, %x: vector<64xf32>) -> vector<32xf32> {
  %q = matrix.row_major_load %w[2] stride 68 packed : memref<?xi8> -> !matrix.matrix<32x64xi4>
  %sc = matrix.column_major_load %s[0] : memref<?xi8> -> !matrix.matrix<32x2xi8>
  %f = arbfp.scaled_convert_from f4e2m1fn %q, %sc block 32 : !matrix.matrix<32x64xi4>, !matrix.matrix<32x2xi8> to !matrix.matrix<32x64xf32>
  %y = matrix.matvec %f, %x : !matrix.matrix<32x64xf32>, vector<64xf32> -> vector<32xf32>
  func.return %y : vector<32xf32>
}
func.func @groups(%w: memref<?xi8>, %s: memref<?xi8>, %x: vector<256xf32>, %o: index) -> vector<4xf32> {
  %q = matrix.row_major_load %w[%o] packed : memref<?xi8> -> !matrix.matrix<4x256xi4>
  %sc = matrix.row_major_load %s[0] : memref<?xi8> -> !matrix.matrix<4x8xi8>
  %f = arbfp.scaled_convert_from f4e2m1fn %q, %sc block 32 : !matrix.matrix<4x256xi4>, !matrix.matrix<4x8xi8> to !matrix.matrix<4x256xf32>
  %y = matrix.matvec %f, %x fastmath<fast> : !matrix.matrix<4x256xf32>, vector<256xf32> -> vector<4xf32>
  func.return %y : vector<4xf32>
}"""


@pytest.mark.parametrize(
    "cpu", [c for c in CHECKED_CPUS if CPU_TARGETS[c].byte_shuffle]
)
def test_fp4_lookups_are_permutes_for_cpu(cpu: str, jit_host: JitHost) -> None:
    """The JIT's f4e2m1fn kernels for a host like `cpu` look codes up with
    permutes and byte shuffles, not lane by lane: a 16-entry table on an
    AVX2 CPU was an insert and an extract per lane (3000 of each in a 32x128
    kernel, 40 s of LLVM); the groups' byte look-ups were one per byte
    until they called the intrinsic (64 inserts or extracts a step of a row;
    one row's two block scales of a step may be gathered so). With AVX-512
    the groups permute f32s by shifted 32-bit lanes of codes, with no byte
    shuffle and no mask."""
    jit_host(CPU_TARGETS[cpu])
    mv, groups = llc_assembly(lower_to_llvm_ir(FP4_MATVEC)[0], cpu).split("\ngroups:")
    assert "vperm" in mv
    assert not re.search(r"\b(v?insertps|v?pextrd|v?pinsrd)\b", mv)
    if CPU_TARGETS[cpu].f32_lanes == 16:
        permutes = len(re.findall(r"\bvperm(d|ps)\b", groups))
        assert permutes >= 8
        assert len(re.findall(r"\bvpsrld\b", groups)) >= permutes * 7 // 8
        assert not re.search(r"\bvpshufb\b", groups)
    else:
        assert "vpshufb" in groups
    assert len(re.findall(r"\b(v?pextrb|v?pinsrb)\b", groups)) <= 2


THREADED_MATVEC = """
func.func @mv(%w: memref<?xi8>, %s: memref<?xi8>, %x: vector<1024xf32>) -> vector<256xf32> {
  %q = matrix.row_major_load %w[0] packed : memref<?xi8> -> !matrix.matrix<256x1024xi4>
  %sc = matrix.column_major_load %s[0] : memref<?xi8> -> !matrix.matrix<256x32xi8>
  %f = arbfp.scaled_convert_from f4e2m1fn %q, %sc block 32 : !matrix.matrix<256x1024xi4>, !matrix.matrix<256x32xi8> to !matrix.matrix<256x1024xf32>
  %y = matrix.matvec %f, %x : !matrix.matrix<256x1024xf32>, vector<1024xf32> -> vector<256xf32>
  func.return %y : vector<256xf32>
}"""


def test_vector_spills_of_threaded_loops_are_aligned(jit_host: JitHost) -> None:
    """The loop outlined for threads (here the row-major MXFP4 matvec's
    groups of rows, 2^18 multiply-adds) spills 512-bit vectors only to
    64-byte-aligned slots: without `alignstack(64)` LLVM spilled them to
    16-byte-aligned ones (`vmovups`), each access straddling two cache lines
    (from DRAM, 2048 x 4096: 121 against 108 ps a weight). Lowered as for a
    sapphirerapids host (on an AVX2 host the JIT's vectors are 256 bits)
    whose L1 makes the rows be read by lines (`lines_host`: the kernel
    that spills)."""
    jit_host(lines_host(CPU_TARGETS["sapphirerapids"]))
    assembly = llc_assembly(lower_to_llvm_ir(THREADED_MATVEC)[0], "sapphirerapids")
    outlined = assembly[assembly.index("mv__parallel_0:") :]
    body = outlined[: outlined.index(".Lfunc_end")]
    spills = [s for s in vector_spills(body) if "zmm" in s]
    assert spills
    assert "andq\t$-64, %rsp" in body
    assert not [s for s in spills if re.search(r"\bvmov(ups|dqu)", s)]


def _one_tile_matvecs(rows: int) -> str:
    """MXFP8 and packed MXFP4 (at an `index` offset) weights whose rows are
    4 KiB apart: every row's line of a step in one L1 set."""
    fp8 = f"!matrix.matrix<{rows}x128xi8>"
    fp4 = f"!matrix.matrix<{rows}x256xi4>"
    return f"""
func.func @mxfp8(%w: memref<?xi8>, %s: memref<?xi8>, %x: vector<128xf32>) -> vector<{rows}xf32> {{
  %q = matrix.row_major_load %w[0] stride 4096 : memref<?xi8> -> {fp8}
  %sc = matrix.column_major_load %s[0] : memref<?xi8> -> !matrix.matrix<{rows}x4xi8>
  %f = arbfp.scaled_convert_from f8e4m3fn %q, %sc block 32 : {fp8}, !matrix.matrix<{rows}x4xi8> to !matrix.matrix<{rows}x128xf32>
  %y = matrix.matvec %f, %x : !matrix.matrix<{rows}x128xf32>, vector<128xf32> -> vector<{rows}xf32>
  func.return %y : vector<{rows}xf32>
}}
func.func @mxfp4(%w: memref<?xi8>, %o: index, %s: memref<?xi8>, %x: vector<256xf32>) -> vector<{rows}xf32> {{
  %q = matrix.row_major_load %w[%o] stride 8192 packed : memref<?xi8> -> {fp4}
  %sc = matrix.column_major_load %s[0] : memref<?xi8> -> !matrix.matrix<{rows}x8xi8>
  %f = arbfp.scaled_convert_from f4e2m1fn %q, %sc block 32 : {fp4}, !matrix.matrix<{rows}x8xi8> to !matrix.matrix<{rows}x256xf32>
  %y = matrix.matvec %f, %x : !matrix.matrix<{rows}x256xf32>, vector<256xf32> -> vector<{rows}xf32>
  func.return %y : vector<{rows}xf32>
}}"""


@pytest.mark.parametrize("cpu", CHECKED_CPUS)
def test_one_tile_kernels_compile_for_cpu(cpu: str, jit_host: JitHost) -> None:
    """The strict row-major kernels that stream a group's tiles one after
    the other by chunks (`decoded_matvec.one_by_one`: one tile's lines of a
    step fit an L1 set, two tiles' fill it), lowered as the JIT lowers them for a host like
    `cpu` whose L1 has as many ways as a tile has rows, compile with llc-16
    for that CPU (the JIT compiles them for the host only)."""
    host = one_tile_host(CPU_TARGETS[cpu])
    jit_host(host)
    source = _one_tile_matvecs(3 * host.f32_lanes)
    assert "mxfp8" in llc_assembly(lower_to_llvm_ir(source)[0], cpu)
    assert one_tile_loops(source, host) >= 2

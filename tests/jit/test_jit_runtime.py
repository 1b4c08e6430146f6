"""The JIT's runtime behaviour: the compile cache is bounded in bytes, the
machine code of a function lives exactly as long as something can call it,
many kernels compiled and dropped keep memory bounded, and `import mx.jit`
loads no compiler."""

import collections
import contextlib
import gc
import json
import os
import subprocess
import sys
import textwrap
from collections.abc import Callable
from typing import Any

import llvmlite.binding as binding
import ml_dtypes
import numpy as np
import pytest
from xdsl.ir import Attribute, Operation

from mx import jit
from mx.errors import ArgumentError
from mx.jit import cache_info, compile_module, set_cache_limit
from mx.testing.matrix_dags import ProgramGenerator

SOAK_KERNELS = int(os.environ.get("MX_JIT_SOAK_KERNELS", "300"))
"""Kernels the soak test compiles and drops (a long run: 10000)."""

SOAK_CACHE_BYTES = 8 << 20
"""The soak test's cache: full after ~125 of its kernels, so that half of
them are compiled into a full cache."""

M2 = "!matrix.matrix<2x2xf32>"


def _kernel(i: int) -> str:
    return (
        f"func.func @k(%a: {M2}, %b: {M2}) -> {M2} {{\n"
        f"  %p = matrix.matmul %a, %b : {M2}, {M2} -> {M2}\n"
        f"  func.return %p : {M2}\n}} // {i}\n"
    )


def test_code_lives_while_a_function_does(no_cache: object) -> None:
    a = np.arange(4, dtype=np.float32).reshape(2, 2)
    gc.collect()  # the engines of earlier tests' garbage
    before = cache_info().engines
    f = jit.jit(_kernel(1), "k")
    assert cache_info().engines == before + 1
    g = jit.jit(_kernel(2), "k")
    del g  # its code is freed at once, not at the next garbage collection
    assert cache_info().engines == before + 1
    np.testing.assert_array_equal(f(a, a), a @ a)
    np.testing.assert_array_equal(f(np.asfortranarray(a), a), a @ a)  # a variant
    assert cache_info().engines == before + 2
    del f  # frees the module's code and its variant's
    assert cache_info().engines == before


def test_the_cache_drops_the_least_recently_used_beyond_its_bytes() -> None:
    first = compile_module(_kernel(10))
    size = first.nbytes
    assert size > 50_000  # machine code, engine, IR and source
    previous = set_cache_limit(int(3.5 * size))
    try:
        for i in range(11, 13):
            compile_module(_kernel(i))
        assert compile_module(_kernel(10)) is first  # now the most recent
        compile_module(_kernel(13))  # drops 11, the least recently used
        info = cache_info()
        assert info.modules == 3 and info.nbytes <= info.limit
        assert compile_module(_kernel(10)) is first
        assert compile_module(_kernel(12)) is compile_module(_kernel(12))
        set_cache_limit(0)
        assert cache_info()[:3] == (0, 0, 0)
    finally:
        set_cache_limit(previous)


def test_a_module_grows_with_the_orders_it_compiles(no_cache: object) -> None:
    module = compile_module(_kernel(20))
    size = module.nbytes
    a = np.asfortranarray(np.ones((2, 2), np.float32))
    module.k(a, a)
    assert module.nbytes > size + 50_000  # one more engine


def test_bad_cache_limits_are_the_package_error() -> None:
    with pytest.raises(ArgumentError, match="must be >= 0 bytes, got -1"):
        set_cache_limit(-1)
    code = "import mx.jit; print(mx.jit.cache_limit())"
    env = {**os.environ, "MX_JIT_CACHE_BYTES": "12345"}
    run = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=env
    )
    assert run.stdout == "12345\n"
    env["MX_JIT_CACHE_BYTES"] = "12 MB"
    run = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=env
    )
    assert "MX_JIT_CACHE_BYTES must be a number of bytes >= 0, got '12 MB'" in (
        run.stderr
    )


LAZY = (
    "xdsl",
    "llvmlite",
    "ml_dtypes",
    "mx.jit_compile",
    "mx.precision",
    "mx.dialects",
    "importlib.metadata",
)
"""What `import mx.jit` must not import: the compiler, the precision report
(which `mx.jit` installs for `JitFunction.precision_report`), xDSL, LLVM,
ml_dtypes (0.6 s alone), and the package metadata."""


def test_importing_the_jit_loads_no_compiler() -> None:
    code = textwrap.dedent(
        """
        import json, sys
        import mx.jit
        print(json.dumps(sorted(sys.modules)))
        """
    )
    run = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    )
    loaded = json.loads(run.stdout)
    assert "numpy" in loaded and "mx.jit" in loaded
    eager = [m for m in loaded if m.startswith(LAZY)]
    assert not eager


SOAK = """
import json, sys
import numpy as np
from mx import jit

def resident_bytes():
    with open("/proc/self/statm") as statm:
        return int(statm.read().split()[1]) * 4096

M2 = "!matrix.matrix<2x2xf32>"
count, marks = int(sys.argv[1]), {int(m) for m in sys.argv[2:]}
a = np.ones((2, 2), np.float32)
resident = {}
for i in range(count + 1):
    scale = float(i)
    f = jit.jit(
        f"func.func @k(%a: {M2}) -> {M2} {{\\n"
        f"  %c = arith.constant {scale:.1f} : f32\\n"
        f"  %s = matrix.splat %c : {M2}\\n"
        f"  %r = matrix.mul %a, %s : {M2}\\n"
        f"  func.return %r : {M2}\\n}}\\n",
        "k",
    )
    assert (f(a) == scale).all()
    del f
    if i in marks or i in (0, count):
        resident[i] = resident_bytes()
print(json.dumps({"resident": resident, "cache": jit.cache_info()._asdict()}))
"""


def test_many_kernels_compiled_and_dropped_keep_memory_bounded() -> None:
    """Kernels compiled one after another and dropped, with an 8 MiB cache:
    memory grows until the cache is full, then by a few KB per compile only
    (llvmlite's pass builder keeps ~1.5 KB of native memory per compile, the
    allocator fragments; docs/long-runs.md#the-jit-soak)."""
    full = SOAK_KERNELS // 2  # the cache is full after ~125 such kernels
    env = {**os.environ, "MX_JIT_CACHE_BYTES": str(SOAK_CACHE_BYTES)}
    run = subprocess.run(
        [sys.executable, "-c", SOAK, str(SOAK_KERNELS), str(full)],
        capture_output=True,
        text=True,
        env=env,
        check=True,
    )
    report = json.loads(run.stdout)
    resident = {int(k): v for k, v in report["resident"].items()}
    growth = resident[SOAK_KERNELS] - resident[0]
    late = resident[SOAK_KERNELS] - resident[full]
    # the cache filled up (so that the late kernels were compiled into a full
    # cache) and stayed within its bound
    assert SOAK_CACHE_BYTES // 2 < report["cache"]["nbytes"] <= SOAK_CACHE_BYTES
    assert growth <= 60e6 + 12e3 * max(0, SOAK_KERNELS - 600), growth  # 600: 60 MB
    assert late <= 12e3 * (SOAK_KERNELS - full) + 2e6, late
    assert report["cache"]["engines"] == report["cache"]["modules"]


def _ir_objects() -> collections.Counter[str]:
    """The live xDSL attributes and operations, by class."""
    gc.collect()
    return collections.Counter(
        type(o).__qualname__
        for o in gc.get_objects()
        if isinstance(o, Attribute | Operation)
    )


def test_kernels_compiled_and_dropped_leave_no_ir_alive(no_cache: object) -> None:
    """Nothing keeps a dropped kernel's IR: after a first kernel (which fills
    the caches of what every kernel shares), compiling, calling (in both
    matrix orders) and dropping kernels of other constants and shapes leaves
    as many attributes and operations alive as before. The verifier's
    remembered signatures kept each kernel's constants and types (~3 KB a
    kernel, up to ~60 MB), the LLVM IR writer's type spellings its types."""

    def compile_and_drop(scale: float, cols: int) -> None:
        m = f"!matrix.matrix<2x{cols}xf32>"
        f = jit.jit(
            f"func.func @k(%a: {m}) -> {m} {{\n"
            f"  %c = arith.constant {scale} : f32\n"
            f"  %s = matrix.splat %c : {m}\n"
            f"  %r = matrix.mul %a, %s : {m}\n"
            f"  func.return %r : {m}\n}}\n",
            "k",
        )
        a = np.arange(2 * cols, dtype=np.float32).reshape(2, cols)
        np.testing.assert_array_equal(f(a), a * np.float32(scale))
        np.testing.assert_array_equal(f(np.asfortranarray(a)), a * np.float32(scale))

    compile_and_drop(0.5, 2)
    before = _ir_objects()
    for i in range(1, 7):
        compile_and_drop(i + 0.5, 2 + i % 2 * i)  # shapes 2x2 and new ones
    after = _ir_objects()
    assert after - before == collections.Counter()


def test_generated_programs_compiled_and_dropped_leave_no_ir_alive(
    no_cache: object,
) -> None:
    """The same for random programs of every matrix op, element type and
    control flow (`mx.testing.matrix_dags`, seeds 0..17): once a first round
    has met what they share, a round of new programs leaves as many
    attributes and operations alive as the round before it."""

    def compile_and_drop(seeds: range) -> collections.Counter[str]:
        for seed in seeds:
            module, arguments = ProgramGenerator(seed).build()
            jit.jit(module, "f")(*arguments)
            del module  # the program's own IR
        return _ir_objects()

    compile_and_drop(range(6))
    before = compile_and_drop(range(6, 12))
    after = compile_and_drop(range(12, 18))
    assert after - before == collections.Counter()


def test_the_jit_process_parses_no_module_llvm_ir(
    no_cache: object, monkeypatch: pytest.MonkeyPatch
) -> None:
    """LLVM's global context keeps the constants and distinct metadata of every
    module parsed into it for the life of the process (~0.5 KB a kernel of a
    few distinct constants): the JIT parses each module's LLVM IR in the
    compile guard's child, whose memory ends with it, never in its own
    process (there only the execution engine's empty module, and once the
    runtime's libcalls)."""
    from mx.jit_machine_code import RUNTIME_LIBCALLS

    parse = binding.parse_assembly
    parsed: list[str] = []

    def parse_recorded(
        text: str, context: binding.ContextRef | None = None
    ) -> binding.ModuleRef:
        parsed.append(text)
        return parse(text, context=context)

    monkeypatch.setattr(binding, "parse_assembly", parse_recorded)
    compile_module(_kernel(40))
    runtime = "".join(RUNTIME_LIBCALLS.values())
    assert parsed and set(parsed) <= {"", runtime}, [text[:80] for text in parsed]


# -- calling conventions: out=, C/F orders, batches of one ---------------------

M4 = "!matrix.matrix<4x4xf32>"
CONVENTIONS = f"""
func.func @mma(%a: {M4}, %b: {M4}, %c: {M4}) -> {M4} {{
  %p = matrix.matmul %a, %b : {M4}, {M4} -> {M4}
  %r = matrix.add %p, %c : {M4}
  func.return %r : {M4}
}}

func.func @rect(%a: !matrix.matrix<2x3xf64>, %k: f64) -> (!matrix.matrix<3x2xf64>, f64) {{
  %t = matrix.transpose %a : !matrix.matrix<2x3xf64> -> !matrix.matrix<3x2xf64>
  %s = matrix.splat %k : !matrix.matrix<3x2xf64>
  %r = matrix.mul %t, %s : !matrix.matrix<3x2xf64>
  %e = matrix.extract %a[1, 2] : !matrix.matrix<2x3xf64>
  %x = arith.addf %e, %k : f64
  func.return %r, %x : !matrix.matrix<3x2xf64>, f64
}}
"""


class _Calls:
    """Counts the calls that take the general path."""

    def __init__(self, function: Any) -> None:
        self.count = 0
        general = function._call  # pyright: ignore[reportPrivateUsage]

        def counted(args: Any, out: Any) -> Any:
            self.count += 1
            return general(args, out)

        function._call = counted  # pyright: ignore[reportPrivateUsage]


def test_every_calling_convention_takes_the_fast_entry() -> None:
    """`out=` (C- or F-ordered), F-ordered arguments and batches of one are
    handled by the native entry, not by the general path (44x slower), once
    their order has been compiled."""
    module = compile_module(CONVENTIONS.replace("@mma", "@mma_fast"))
    mma, rect = module.mma_fast, module.rect
    rng = np.random.default_rng(7)
    a, b, c = (rng.standard_normal((4, 4)).astype(np.float32) for _ in range(3))
    expected = mma(a, b, c)
    d, d_f = (
        np.empty((4, 4), np.float32),
        np.asfortranarray(np.empty((4, 4), np.float32)),
    )
    a_f = np.asfortranarray(a)
    for call in (  # compile the orders first
        lambda: mma(a, b, c, out=d_f),
        lambda: mma(a_f, b, c),
        lambda: mma(a_f, b, c, out=d_f),
    ):
        call()
    calls = _Calls(mma)
    assert mma(a, b, c, out=d) is d
    np.testing.assert_array_equal(d, expected)
    assert mma(a, b, c, out=d_f) is d_f
    np.testing.assert_array_equal(d_f, expected)
    np.testing.assert_array_equal(mma(a_f, b, c), expected)
    np.testing.assert_array_equal(mma(a_f, b, c, out=d_f), expected)
    one = mma(a[None], b, c[None, None])
    assert one.shape == (1, 1, 4, 4)
    np.testing.assert_array_equal(one[0, 0], expected)
    d1 = np.empty((1, 4, 4), np.float32)
    assert mma(a[None], b[None], c, out=d1) is d1
    np.testing.assert_array_equal(d1[0], expected)
    # Batches of C-ordered values, broadcasting values of size 1.
    a16, c16 = (rng.standard_normal((2, 8, 4, 4)).astype(np.float32) for _ in range(2))
    each = np.array(
        [
            [mma(x, b, z) for x, z in zip(*pair, strict=True)]
            for pair in zip(a16, c16, strict=True)
        ]
    )
    np.testing.assert_array_equal(mma(a16, b, c16), each)
    np.testing.assert_array_equal(mma(a16, b[None, None], c16), each)
    d16 = np.empty((2, 8, 4, 4), np.float32)
    assert mma(a16, b, c16, out=d16) is d16
    np.testing.assert_array_equal(d16, each)
    assert calls.count == 0
    m = rng.standard_normal((2, 3))
    r, x = np.empty((3, 2)), np.empty(())
    calls = _Calls(rect)
    assert rect(m, 2.0, out=(r, x)) == (r, x)
    np.testing.assert_array_equal(r, m.T * 2.0)
    assert x == m[1, 2] + 2.0
    assert calls.count == 0


def _convention_cases(count: int) -> list[dict[str, Any]]:
    """Random calls of @mma mixing every convention, valid or not: orders,
    leading dimensions (of size 1: a batch of one; a batch of 2 or 3,
    broadcast or not, and now and then one that does not broadcast), dtypes,
    `out=` arrays of any shape and order, read-only, or overlapping an
    argument."""
    rng = np.random.default_rng(2026)
    cases: list[dict[str, Any]] = []
    for _ in range(count):
        size, other = (int(n) for n in rng.permutation([2, 3]))
        sizes = [1, 1, size, size, size] + [other] * int(rng.integers(0, 6) == 0)
        lead = [
            tuple(int(n) for n in rng.choice(sizes, rng.integers(0, 3)))
            for _ in range(3)
        ]
        cases.append(
            {
                "lead": lead,
                "orders": [str(o) for o in rng.choice(["C", "C", "C", "F"], 3)],
                "f64": int(rng.integers(0, 12)) == 0,  # a wrong dtype
                "out": str(
                    rng.choice(
                        ["none", "C", "F", "lead", "short", "read-only", "alias"]
                    )
                ),
                "out_order": str(rng.choice(["C", "F"])),
            }
        )
    return cases


def _build(case: dict[str, Any], rng: np.random.Generator) -> tuple[list[Any], Any]:
    args: list[Any] = []
    for lead, order in zip(case["lead"], case["orders"], strict=True):
        x = rng.standard_normal((*lead, 4, 4)).astype(np.float32)
        args.append(np.asfortranarray(x) if order == "F" else x)
    if case["f64"]:
        args[1] = args[1].astype(np.float64)
    try:
        batch = np.broadcast_shapes(*(x.shape[:-2] for x in args))
    except ValueError:  # a call both paths refuse
        batch = args[0].shape[:-2]
    kind = case["out"]
    if kind == "none":
        return args, None
    shape = {"short": (4, 4), "lead": (1, *batch, 4, 4)}.get(kind, (*batch, 4, 4))
    out = np.zeros(shape, np.float32)
    if case["out_order"] == "F":
        out = np.asfortranarray(out)
    if kind == "read-only":
        out.flags.writeable = False
    if kind == "alias":
        args[2] = out  # the addend is the result array
    return args, out


def _outcome(call: Callable[[], Any]) -> tuple[str, Any]:
    try:
        return "value", call()
    except ArgumentError as err:
        return "error", str(err)


@pytest.mark.parametrize("seed", range(4))
def test_the_fast_entry_agrees_with_the_general_path(seed: int) -> None:
    """For random calls mixing the conventions, the fast entry (with its
    fallback) and the general path alone give the same results, write the
    same `out=` arrays and raise the same errors; values match NumPy's."""
    mma = compile_module(CONVENTIONS).mma
    general = mma._call  # pyright: ignore[reportPrivateUsage]
    outcomes: list[str] = []
    for i, case in enumerate(_convention_cases(160)[seed::4]):
        args, out = _build(case, np.random.default_rng(seed * 1000 + i))
        copies = [x.copy(order="A") for x in args]
        twin = None
        if out is not None:
            twin = copies[2] if out is args[2] else out.copy(order="A")
            twin.flags.writeable = out.flags.writeable
        fast = _outcome(lambda: mma(*args, out=out))  # noqa: B023
        slow = _outcome(lambda: general(copies, twin))  # noqa: B023
        outcomes.append(fast[0])
        assert fast[0] == slow[0], (case, fast, slow)
        if fast[0] == "error":
            assert fast[1] == slow[1], case
            continue
        np.testing.assert_array_equal(fast[1], slow[1])
        assert fast[1].shape == slow[1].shape, case
        a, b, c = (x.astype(np.float64) for x in copies)
        np.testing.assert_allclose(fast[1], a @ b + c, rtol=1e-5, atol=1e-5)
        if out is not None:
            assert fast[1] is out
    assert 3 <= outcomes.count("error") <= len(outcomes) - 3, outcomes


def test_the_fast_entry_keeps_reference_counts_balanced() -> None:
    """The native entry allocates results through NumPy's C API, returns
    tuples, None and NotImplemented: after many calls, no reference to a
    dtype or a singleton is leaked or lost (a lost one crashes later)."""
    module = compile_module(CONVENTIONS)
    rect, mma = module.rect, module.mma
    m = np.ones((2, 3))
    r, x = np.empty((3, 2)), np.empty(())
    batch = np.ones((3, 4, 4), np.float32)
    watched = (np.dtype(np.float64), np.dtype(np.float32), None, NotImplemented, True)

    def calls(count: int) -> list[int]:
        for _ in range(count):
            mma(batch, batch[0], batch)  # a batch, its results allocated
            rect(m, 2.0)
            rect(m[None], 2.0)  # a batch of one with a scalar result: general path
            rect(m, 2.0, out=(r, x))
            with contextlib.suppress(ArgumentError):
                rect(m.astype(np.float32), 2.0)
        return [sys.getrefcount(w) for w in watched]

    before = calls(10)  # references the first calls leave (caches) counted
    assert calls(2000) == before
    result, scalar = rect(m, 2.0)
    assert type(scalar) is np.float64 and result.flags.c_contiguous


def test_threads_compiling_calling_and_dropping_at_once(no_cache: object) -> None:
    """Engines are freed (in whichever thread drops the last function, or a
    garbage collection runs) while other threads compile and call: every use
    of LLVM holds one lock, so none of this crashes or mixes up kernels."""
    import threading

    a = np.arange(4, dtype=np.float32).reshape(2, 2)
    gc.collect()  # the engines of earlier tests' garbage
    engines = cache_info().engines
    held = [jit.jit(_kernel(30), "k")]
    failures: list[str] = []
    start = threading.Barrier(3)

    def work(t: int) -> None:
        start.wait()
        for i in range(6):
            f = jit.jit(_kernel(100 * t + i + 31), "k")
            if not np.array_equal(f(a, a), a @ a) or not np.array_equal(
                held[0](a, a), a @ a
            ):
                failures.append(f"thread {t}, kernel {i}")
            del f
            gc.collect()

    threads = [threading.Thread(target=work, args=(t,)) for t in range(3)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert not failures
    held.clear()
    assert cache_info().engines == engines


def test_bf16_scalars_cross_calls_bit_exact() -> None:
    """A bf16 scalar argument and result keep their bits, subnormals
    included (the fast entry's phis and stores of bf16 let LLVM narrow
    through the CPU's bf16 instruction, which flushed them to zero on CPUs
    with AVX512-BF16)."""
    module = compile_module(
        """
func.func @same(%a: bf16) -> bf16 {
  func.return %a : bf16
}
func.func @widen(%a: bf16) -> f32 {
  %r = arith.extf %a : bf16 to f32
  func.return %r : f32
}"""
    )
    bits = np.array(
        [*range(0x0001, 0x0080), *range(0x8001, 0x8080), 0x0080, 0x7F7F, 0x3F80],
        np.uint16,
    )
    for value in bits.view(ml_dtypes.bfloat16):
        same = np.array(module.same(value), ml_dtypes.bfloat16).view(np.uint16)
        assert same == np.array(value).view(np.uint16), hex(int(same))
        assert module.widen(value) == np.float32(value)


INTEGERS = """
func.func @at(%w: memref<?xf32>, %o: index) -> f32 {
  %v = memref.load %w[%o] : memref<?xf32>
  func.return %v : f32
}
func.func @same_index(%o: index) -> index {
  func.return %o : index
}
func.func @same_i64(%o: i64) -> i64 {
  func.return %o : i64
}
func.func @same_i8(%o: i8) -> i8 {
  func.return %o : i8
}
"""


@pytest.mark.parametrize(
    ("name", "bits"), [("same_index", 64), ("same_i64", 64), ("same_i8", 8)]
)
def test_python_ints_take_the_fast_entry(name: str, bits: int) -> None:
    """A Python int for an `index` or integer parameter is read by the native
    entry over the whole range of the type, its ends included (a 64-bit
    range's end once made the check refuse every int); an int that fits in
    no signed or unsigned value of the type goes to the general path, which
    refuses it."""
    module = compile_module(INTEGERS)
    function = module[name]
    low, high = -(1 << (bits - 1)), (1 << (bits - 1)) - 1
    calls = _Calls(function)
    for value in (0, 7, -3, low, high):
        assert int(function(value)) == value
    w = np.arange(8, dtype=np.float32)
    at = module.at
    at_calls = _Calls(at)
    assert at(w, 5) == 5.0
    assert calls.count == 0 and at_calls.count == 0
    for value in (low - 1, 1 << bits):  # (signless: unsigned bits fit too)
        with pytest.raises(ArgumentError):
            function(value)
    assert calls.count == 2


TRUNCATE = """
declare <8 x i16> @__truncsfbf2(float)
define i16 @truncate(i32 %bits) {
  %x = bitcast i32 %bits to float
  %v = call <8 x i16> @__truncsfbf2(float %x)
  %narrow = extractelement <8 x i16> %v, i64 0
  ret i16 %narrow
}
"""


def test_the_jit_defines_the_bf16_libcall_rounding_to_nearest_even() -> None:
    """`__truncsfbf2`, which LLVM calls on CPUs without AVX512-BF16 (the
    JIT called address 0 before it defined it), rounds as ml_dtypes does,
    and gives every bf16 back bit for bit (NaN payloads included)."""
    import ctypes

    from mx.jit_machine_code import machine_code

    code = machine_code(TRUNCATE, ["truncate"], str)
    # (bits in and out: a float through ctypes would quiet signaling NaNs)
    truncate = ctypes.CFUNCTYPE(ctypes.c_uint16, ctypes.c_uint32)(
        code.addresses["truncate"]
    )
    every_bf16 = np.arange(1 << 16, dtype=np.uint32) << 16
    got = np.array([truncate(int(b)) for b in every_bf16], np.uint16)
    np.testing.assert_array_equal(got, every_bf16 >> 16)
    rng = np.random.default_rng(26)
    bits = rng.integers(0, 1 << 32, 20000, dtype=np.uint64).astype(np.uint32)
    bits[:4] = [0x7F800001, 0xFF800001, 0x7F7FFFFF, 0x00008000]  # NaNs, overflow, tie
    x = bits.view(np.float32)
    got = np.array([truncate(int(b)) for b in bits], np.uint16)
    with np.errstate(invalid="ignore"):  # (NaN inputs)
        want = x.astype(ml_dtypes.bfloat16).view(np.uint16)
    nan = np.isnan(x)
    np.testing.assert_array_equal(got[~nan], want[~nan])
    assert np.isnan(got[nan].view(ml_dtypes.bfloat16).astype(np.float32)).all()
    assert ((got[nan] >> 15) == (bits[nan] >> 31)).all()

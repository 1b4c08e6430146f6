"""Threads (docs/python-api.md#threads): the controls, and results bitwise
identical for 1, 2, 3 and 4 threads, equal to the reference interpreter.

Kernels are compiled with `parallel-min-work=1` and small cache sizes, so
that small products already run their blocks on threads and cross every
block boundary; the batch loop runs on threads from `parallel_min_count`
calls. The property tests draw shapes (derandomized);
MX_THREADS_EXAMPLES=N runs N examples each instead of the CI sample;
MX_LONG_TESTS=1 runs every decoded matvec with and without `contract`.
"""

import json
import os
import subprocess
import sys
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import ml_dtypes
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from xdsl.parser import Parser

import mx
from mx.frontend import mx_context
from mx.interpreters import run_function
from mx.jit import compile_module
from mx.runtime.threads import parallel_min_count
from tests.pipelines import lowering_with
from tests.reference.bits import same_bits
from tests.sampling import LONG
from tests.system_tools import required_tool

THREAD_COUNTS = (1, 2, 3, 4)

PARALLEL_PIPELINE = lowering_with(
    "parallel-min-work=1 blocked-min-bytes=0 l1-bytes=2048 l2-bytes=16384 l3-bytes=8192"
)
"""mx-lower-to-llvm's steps, every product on threads, small blocks."""

EXAMPLES = int(os.environ.get("MX_THREADS_EXAMPLES", "6"))

DTYPES: dict[str, Any] = {
    "f16": np.float16,
    "bf16": ml_dtypes.bfloat16,
    "f32": np.float32,
    "f64": np.float64,
}


def _settings() -> Callable[[Callable[..., None]], Callable[..., None]]:
    return settings(
        max_examples=EXAMPLES,
        deadline=None,
        suppress_health_check=[HealthCheck.too_slow],
    )


def _per_thread_count(f: Callable[..., Any], *args: Any) -> list[Any]:
    """f(*args) with each of THREAD_COUNTS threads."""
    results: list[Any] = []
    for n in THREAD_COUNTS:
        with mx.num_threads(n):
            results.append(f(*args))
    return results


def _check(
    source: str, name: str, args: Sequence[Any], exact: bool = True
) -> list[Any]:
    """Compiles `source` for threads and checks `name`: the same bits with
    every thread count and, if `exact`, the interpreter's bits."""
    module = compile_module(source, PARALLEL_PIPELINE)
    results = _per_thread_count(module[name], *args)
    for n, result in zip(THREAD_COUNTS[1:], results[1:], strict=True):
        assert same_bits(results[0], result), f"{n} threads differ from 1"
    if exact:
        parsed = Parser(mx_context(), source).parse_module()
        (expected,) = run_function(parsed, name, *args)
        assert same_bits(results[0], np.asarray(expected))
    return results


def _values(rng: np.random.Generator, t: str, shape: tuple[int, ...]) -> np.ndarray:
    """Values of mixed magnitudes, with some +0 and -0."""
    values = rng.standard_normal(shape) * 4.0 ** rng.integers(-3, 4, shape)
    zeros = rng.random(shape)
    values[zeros < 0.05] = 0.0
    values[zeros > 0.95] = -0.0
    return values.astype(DTYPES[t])


def _m(rows: int, cols: int, t: str) -> str:
    return f"!matrix.matrix<{rows}x{cols}x{t}>"


def _matmul_add(r: int, k: int, c: int, factors: str, t: str, flags: str) -> str:
    fm = f" fastmath<{flags}>" if flags else ""
    a, b, s = _m(r, k, factors), _m(k, c, factors), _m(r, c, t)
    return f"""
func.func @f(%a: {a}, %b: {b}, %c: {s}) -> {s} {{
  %r = matrix.matmul_add %a, %b, %c{fm} : {a}, {b}, {s} -> {s}
  func.return %r : {s}
}}
"""


@_settings()
@given(
    st.sampled_from([("f32", "f32"), ("f64", "f64"), ("f16", "f32"), ("bf16", "f32")]),
    st.sampled_from(["", "contract", "fast"]),
    st.integers(1, 140),
    st.integers(1, 60),
    st.integers(1, 140),
    st.integers(0, 2**32 - 1),
)
def test_matmul_add_same_bits_for_every_thread_count(
    types: tuple[str, str], flags: str, r: int, k: int, c: int, seed: int
) -> None:
    """Cache-blocked (f32, f64) and register-blocked mixed-precision
    (f16/bf16 factors, f32 sums) products; the interpreter's bits without
    fastmath flags."""
    factors, t = types
    rng = np.random.default_rng(seed)
    args = [
        _values(rng, factors, (r, k)),
        _values(rng, factors, (k, c)),
        _values(rng, t, (r, c)),
    ]
    _check(_matmul_add(r, k, c, factors, t, flags), "f", args, exact=not flags)


@_settings()
@given(
    st.sampled_from(["f32", "f64"]),
    st.sampled_from(["C", "F"]),
    st.sampled_from(["", "contract"]),
    st.integers(1, 300),
    st.integers(1, 200),
    st.integers(0, 2**32 - 1),
)
def test_matvec_same_bits_for_every_thread_count(
    t: str, order: str, flags: str, r: int, k: int, seed: int
) -> None:
    """Cache-blocked matvec, by columns (an F-ordered matrix) and by tiles
    (C-ordered)."""
    fm = f" fastmath<{flags}>" if flags else ""
    m = _m(r, k, t)
    source = f"""
func.func @f(%m: {m}, %x: vector<{k}x{t}>) -> vector<{r}x{t}> {{
  %y = matrix.matvec %m, %x{fm} : {m}, vector<{k}x{t}> -> vector<{r}x{t}>
  func.return %y : vector<{r}x{t}>
}}
"""
    rng = np.random.default_rng(seed)
    values = _values(rng, t, (r, k))
    matrix = np.asfortranarray(values) if order == "F" else values
    _check(source, "f", [matrix, _values(rng, t, (k,))], exact=not flags)


def _decoded_matvec(rows: int, cols: int, fmt: str, flags: str, layout: str) -> str:
    """Block-scaled W (32 elements a scale) times x."""
    element = "i4" if fmt == "f4e2m1fn" else "i8"
    packed = " packed" if element == "i4" else ""
    q, s, w = _m(rows, cols, element), _m(rows, cols // 32, "i8"), _m(rows, cols, "f32")
    fm = f" fastmath<{flags}>" if flags else ""
    return f"""
func.func @f(%w: memref<?xi8>, %s: memref<?xi8>, %x: vector<{cols}xf32>) -> vector<{rows}xf32> {{
  %q = matrix.{layout}_load %w[0]{packed} : memref<?xi8> -> {q}
  %sc = matrix.column_major_load %s[0] : memref<?xi8> -> {s}
  %f = arbfp.scaled_convert_from {fmt} %q, %sc block 32 scale f8e8m0fnu : {q}, {s} to {w}
  %y = matrix.matvec %f, %x{fm} : {w}, vector<{cols}xf32> -> vector<{rows}xf32>
  func.return %y : vector<{rows}xf32>
}}
"""


DECODED = [
    (fmt, layout, flags)
    for fmt in ("f4e2m1fn", "f8e4m3fn")
    for layout in ("row_major", "column_major")
    for flags in ("", "contract")
    if LONG or (flags == "contract") == ((fmt == "f8e4m3fn") == (layout == "row_major"))
]
"""Each format and layout; `contract` or not in turn (the rows a thread
takes do not depend on it), both with MX_LONG_TESTS=1."""


@pytest.mark.parametrize(("fmt", "layout", "flags"), DECODED)
def test_decoded_matvec_same_bits_for_every_thread_count(
    fmt: str, layout: str, flags: str
) -> None:
    """MXFP4/MXFP8 weights decoded in registers, blocks of rows on threads."""
    rows, cols = 352, 128
    rng = np.random.default_rng(7)
    codes = rng.integers(0, 256, rows * cols).astype(np.uint8)
    scales = rng.integers(118, 138, rows * cols // 32).astype(np.uint8)
    x = rng.standard_normal(cols).astype(np.float32)
    source = _decoded_matvec(rows, cols, fmt, flags, layout)
    assert "_mx_parallel_for_" in compile_module(source, PARALLEL_PIPELINE).llvm_ir
    _check(source, "f", [codes, scales, x], exact=not flags)


@pytest.mark.parametrize("scale", [-0.625, 1.5 * 2.0**120])
def test_per_tensor_fp8_rows_same_bits_for_every_thread_count(scale: float) -> None:
    """Row-major f8e4m3fn codes times a run-time scale s, blocks of rows on
    threads: each group's rows take s·2^8 as one factor where that is finite
    (-0.625), else 2^8 and s apart (1.5·2^120: s·2^8 overflows from 2^120),
    a version chosen inside the threads' loop; codes below 2^-3, so that
    the products stay finite."""
    rows, cols = 352, 128
    q, w = _m(rows, cols, "i8"), _m(rows, cols, "f32")
    source = f"""
func.func @f(%w: memref<?xi8>, %s: f32, %x: vector<{cols}xf32>) -> vector<{rows}xf32> {{
  %q = matrix.row_major_load %w[0] : memref<?xi8> -> {q}
  %d = arbfp.convert_from f8e4m3fn %q : {q} to {w}
  %k = matrix.splat %s : {w}
  %m = matrix.mul %d, %k : {w}
  %y = matrix.matvec %m, %x : {w}, vector<{cols}xf32> -> vector<{rows}xf32>
  func.return %y : vector<{rows}xf32>
}}
"""
    rng = np.random.default_rng(11)
    codes = rng.integers(0, 256, rows * cols).astype(np.uint8) & np.uint8(0x9F)
    x = rng.standard_normal(cols).astype(np.float32)
    assert "_mx_parallel_for_" in compile_module(source, PARALLEL_PIPELINE).llvm_ir
    (result, *_) = _check(source, "f", [codes, np.float32(scale), x])
    assert np.isfinite(result).all()


def test_products_run_through_the_parallel_path() -> None:
    """The kernels above do run their blocks through the threads' trampoline
    (otherwise the tests would compare serial code with itself)."""
    for source in (
        _matmul_add(100, 20, 90, "f32", "f32", ""),
        _matmul_add(100, 20, 90, "f16", "f32", ""),
    ):
        ir = compile_module(source, PARALLEL_PIPELINE).llvm_ir
        assert "call void @GOMP_parallel" in ir
        assert "define internal void @_mx_parallel_for_" in ir
    default = compile_module(_matmul_add(512, 512, 512, "f32", "f32", "")).llvm_ir
    assert "define internal void @_mx_parallel_for_" in default
    # The default parallel-min-work, 2^18 multiply-adds: 64^3 on threads, 48^3 not.
    at_threshold = compile_module(_matmul_add(64, 64, 64, "f32", "f32", "")).llvm_ir
    assert "define internal void @_mx_parallel_for_" in at_threshold
    small = compile_module(_matmul_add(48, 48, 48, "f32", "f32", "")).llvm_ir
    assert "_mx_parallel_for_" not in small


AFFINE = """
func.func @affine(%a: !matrix.matrix<4x4xf32>, %b: !matrix.matrix<4x4xf32>,
                  %c: !matrix.matrix<4x4xf32>) -> !matrix.matrix<4x4xf32> {
  %p = matrix.matmul %a, %b : !matrix.matrix<4x4xf32>, !matrix.matrix<4x4xf32> -> !matrix.matrix<4x4xf32>
  %r = matrix.add %p, %c : !matrix.matrix<4x4xf32>
  func.return %r : !matrix.matrix<4x4xf32>
}
"""


@_settings()
@given(
    st.integers(1, 4 * parallel_min_count(4 * 64)),
    st.sampled_from(["none", "b", "bc"]),
    st.integers(0, 2**32 - 1),
)
def test_batches_same_bits_for_every_thread_count(
    count: int, broadcast: str, seed: int
) -> None:
    """Batches above and below the threshold, with broadcast operands: the
    same bits as one call per matrix."""
    f = compile_module(AFFINE).affine
    rng = np.random.default_rng(seed)
    a = _values(rng, "f32", (count, 4, 4))
    b = _values(rng, "f32", (4, 4) if "b" in broadcast else (count, 4, 4))
    c = _values(rng, "f32", (1, 4, 4) if "c" in broadcast else (count, 4, 4))
    results = _per_thread_count(f, a, b, c)
    for result in results[1:]:
        assert same_bits(results[0], result)
    for i in sorted({0, count // 2, count - 1}):
        one = f(a[i], b if b.ndim == 2 else b[i], c[0] if c.shape[0] == 1 else c[i])
        assert same_bits(results[0][i], one)


def test_batch_threshold_is_measured_in_bytes() -> None:
    """Calls of 4x4 f32 a@b+c move 256 bytes: from 4096 of them on threads."""
    assert parallel_min_count(256) == 4096
    assert parallel_min_count(1 << 30) == 2


def test_concurrent_calls_from_python_threads() -> None:
    """The same compiled functions (a parallel product, a parallel batch)
    called from 4 Python threads at once give each caller its own result."""
    product = compile_module(
        _matmul_add(200, 64, 150, "f32", "f32", ""), PARALLEL_PIPELINE
    ).f
    batch = compile_module(AFFINE).affine
    rng = np.random.default_rng(3)
    inputs = [
        (
            [_values(rng, "f32", s) for s in ((200, 64), (64, 150), (200, 150))],
            [_values(rng, "f32", (6000, 4, 4)) for _ in range(3)],
        )
        for _ in range(8)
    ]
    with mx.num_threads(1):
        expected = [(product(*p), batch(*b)) for p, b in inputs]

    def run(i: int) -> tuple[np.ndarray, np.ndarray]:
        p, b = inputs[i % len(inputs)]
        return product(*p), batch(*b)

    with mx.num_threads(2), ThreadPoolExecutor(4) as pool:
        results = list(pool.map(run, range(32)))
    for i, (p, b) in enumerate(results):
        want_p, want_b = expected[i % len(inputs)]
        assert same_bits(p, want_p) and same_bits(b, want_b)


# ------------------------------------------------------------- controls


def test_set_and_get() -> None:
    previous = mx.get_num_threads()
    try:
        mx.set_num_threads(3)
        assert mx.get_num_threads() == 3
        mx.set_num_threads(1)
        assert mx.get_num_threads() == 1
    finally:
        mx.set_num_threads(previous)


def test_context_restores_the_count() -> None:
    previous = mx.get_num_threads()
    with mx.num_threads(2):
        assert mx.get_num_threads() == 2
        with mx.num_threads(1):
            assert mx.get_num_threads() == 1
        assert mx.get_num_threads() == 2
    assert mx.get_num_threads() == previous
    with pytest.raises(RuntimeError), mx.num_threads(3):
        raise RuntimeError
    assert mx.get_num_threads() == previous


@pytest.mark.parametrize("bad", [0, -1, 1.5, 2.0, "2", None, True])
def test_bad_counts_are_refused(bad: Any) -> None:
    previous = mx.get_num_threads()
    with pytest.raises(mx.MXError, match=r"must be an int >= 1, got "):
        mx.set_num_threads(bad)
    with pytest.raises(mx.MXError, match=r"must be an int >= 1"), mx.num_threads(bad):
        pass
    assert mx.get_num_threads() == previous


def _count_in_subprocess(value: str | None) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k != "MX_NUM_THREADS"}
    if value is not None:
        env["MX_NUM_THREADS"] = value
    return subprocess.run(
        [sys.executable, "-c", "import mx; print(mx.get_num_threads())"],
        env=env,
        capture_output=True,
        text=True,
        check=True,
    )


def test_default_is_the_available_cpus() -> None:
    cpus = len(os.sched_getaffinity(0))
    assert _count_in_subprocess(None).stdout.strip() == str(cpus)
    assert _count_in_subprocess("").stdout.strip() == str(cpus)


def test_environment_variable() -> None:
    assert _count_in_subprocess("3").stdout.strip() == "3"
    assert _count_in_subprocess(" 5 ").stdout.strip() == "5"


@pytest.mark.parametrize("bad", ["0", "-2", "two", "1.5"])
def test_bad_environment_variable_warns(bad: str) -> None:
    """A bad MX_NUM_THREADS must not make `import mx` fail: a warning naming
    it, and the default."""
    run = _count_in_subprocess(bad)
    assert run.stdout.strip() == str(len(os.sched_getaffinity(0)))
    assert f"MX_NUM_THREADS={bad!r} is not an int >= 1" in run.stderr


# ------------------------------------------------------------- C callers

C_DRIVER = r"""
#define _GNU_SOURCE
#include <dirent.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
void f(const float *a, const float *b, const float *c, float *out);
#ifdef MX_THREADS
int mx_num_threads = MX_THREADS; /* read by mx's trampolines */
#endif
#ifdef MX_PIN
int mx_pin_threads = 1;
#endif
int main(void) {
  static float a[ROWS * DEPTH], b[DEPTH * COLS], c[ROWS * COLS], d[ROWS * COLS];
  uint32_t state = 12345;
  float *all[] = {a, b, c};
  int sizes[] = {ROWS * DEPTH, DEPTH * COLS, ROWS * COLS};
  for (int m = 0; m < 3; ++m)
    for (int i = 0; i < sizes[m]; ++i) {
      state = state * 1664525u + 1013904223u;
      all[m][i] = (float)(state >> 8) / 8388608.0f;
    }
  f(a, b, c, d);
  /* The process's threads, OpenMP's pool included, and how many of them
     may run on other CPUs than the main thread. */
  int threads = 0, pinned = 0;
  cpu_set_t main_cpus, cpus;
  sched_getaffinity(0, sizeof main_cpus, &main_cpus);
  DIR *tasks = opendir("/proc/self/task");
  for (struct dirent *e; (e = readdir(tasks));) {
    if (e->d_name[0] == '.') continue;
    ++threads;
    sched_getaffinity(atoi(e->d_name), sizeof cpus, &cpus);
    pinned += !CPU_EQUAL(&cpus, &main_cpus);
  }
  closedir(tasks);
  printf("%d %d\n", threads, pinned);
  fwrite(d, sizeof d, 1, stdout);
  return 0;
}
"""


def test_c_callers_link_serial_or_with_openmp(tmp_path: Path) -> None:
    """mx's LLVM IR linked without an OpenMP runtime runs on one thread;
    linked with libgomp, on OMP_NUM_THREADS threads, or on the program's
    `mx_num_threads`; the same bytes, the interpreter's. Its threads keep
    the main thread's CPUs unless the program defines `mx_pin_threads`, and
    then only when every worker can have a CPU other than the main thread's."""
    clang = required_tool("clang-16")
    rows, depth, cols = 150, 40, 130
    source = _matmul_add(rows, depth, cols, "f32", "f32", "")
    ll = tmp_path / "f.ll"
    run = subprocess.run(
        [
            sys.executable,
            "-m",
            "mx.tools.mx_opt",
            "-",
            "-p",
            PARALLEL_PIPELINE,
            "-t",
            "llvm",
        ],
        input=source,
        capture_output=True,
        text=True,
        check=True,
    )
    ll.write_text(run.stdout)
    driver = tmp_path / "main.c"
    sizes = f"#define ROWS {rows}\n#define DEPTH {depth}\n#define COLS {cols}\n"
    driver.write_text(sizes + C_DRIVER)
    outputs: dict[str, tuple[int, int, bytes]] = {}
    gomp = ["-l:libgomp.so.1"]
    for name, options in (
        ("serial", []),
        ("gomp", gomp),
        ("gomp count 3", [*gomp, "-DMX_THREADS=3"]),
        ("gomp count 1", [*gomp, "-DMX_THREADS=1"]),
        ("gomp pin", [*gomp, "-DMX_PIN"]),
    ):
        exe = tmp_path / name.replace(" ", "_")
        subprocess.run(
            [clang, "-O2", str(driver), str(ll), *options, "-o", str(exe)],
            check=True,
        )
        for threads in ("1", "2", "3"):
            env = {**os.environ, "OMP_NUM_THREADS": threads}
            out = subprocess.run([str(exe)], env=env, capture_output=True, check=True)
            counts, data = out.stdout.split(b"\n", 1)
            count, pinned = map(int, counts.split())
            outputs[f"{name} {threads}"] = (count, pinned, data)
    assert outputs["serial 3"][0] == 1
    assert outputs["gomp 3"][0] >= 3
    # A program's mx_num_threads overrides OMP_NUM_THREADS.
    assert outputs["gomp count 3 1"][0] >= 3
    assert outputs["gomp count 1 3"][0] == 1
    cpus = len(os.sched_getaffinity(0))
    for key, (_, pinned, _) in outputs.items():
        workers = int(key[-1]) - 1 if key.startswith("gomp pin") else 0
        assert pinned == (workers if cpus > workers else 0), key
    results = {data for _, _, data in outputs.values()}
    assert len(results) == 1
    # The same bytes as the interpreter (the driver's column-major inputs).
    (data,) = results
    state = 12345
    values: list[np.ndarray] = []
    for count in (rows * depth, depth * cols, rows * cols):
        out = np.empty(count, np.float32)
        for i in range(count):
            state = (state * 1664525 + 1013904223) % 2**32
            out[i] = np.float32(state >> 8) / np.float32(8388608.0)
        values.append(out)
    a, b, c = (
        v.reshape(n, m).T.copy()
        for v, (m, n) in zip(
            values, ((rows, depth), (depth, cols), (rows, cols)), strict=True
        )
    )
    (expected,) = run_function(
        Parser(mx_context(), source).parse_module(), "f", a, b, c
    )
    got = np.frombuffer(data, np.float32).reshape(cols, rows).T
    assert same_bits(got, np.asarray(expected))


PRODUCT_ON_THREADS = """
import numpy as np
import mx
from mx.jit import compile_module
m = "!matrix.matrix<256x256xf32>"
f = compile_module(f'''
func.func @f(%a: {m}, %b: {m}) -> {m} {{
  %p = matrix.matmul %a, %b : {m}, {m} -> {m}
  func.return %p : {m}
}}''').f
a = np.ones((256, 256), np.float32)
"""
"""A subprocess's first lines: `f`, a 256² f32 product (2^24 multiply-adds, on
threads), and `a`, its operand."""


FORK_AFTER_THREADS = (
    PRODUCT_ON_THREADS
    + """
import multiprocessing, warnings
mx.set_num_threads(2)
f(a, a)  # the parent starts OpenMP's threads

def child(_):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        mx.set_num_threads(2)
    return float(f(a, a)[0, 0]), mx.get_num_threads(), len(caught)

with multiprocessing.get_context("fork").Pool(2) as pool:
    print(pool.map(child, [0, 1]))
"""
)


def test_fork_after_threads_does_not_hang() -> None:
    """libgomp's threads do not survive a fork (a parallel region in the
    child waited forever): a forked child runs compiled code on one thread,
    and says so if asked for more."""
    run = subprocess.run(
        [sys.executable, "-c", FORK_AFTER_THREADS],
        capture_output=True,
        text=True,
        timeout=300,
        check=True,
    )
    assert run.stdout.strip() == "[(256.0, 1, 1), (256.0, 1, 1)]"


EXIT_AFTER_THREADS = (
    PRODUCT_ON_THREADS
    + """
import sys
mx.set_num_threads(int(sys.argv[1]))
print(float(f(a, np.eye(256, dtype=np.float32))[0, 0]))
"""
)


def test_exit_while_threads_spin() -> None:
    """A process may exit while OpenMP's threads still spin in libgomp (here
    for good: OMP_WAIT_POLICY=active): libgomp stays mapped (LLVM unloaded
    it at exit, and the spinning thread crashed the process)."""
    output = _threads_script(EXIT_AFTER_THREADS, 2, {"OMP_WAIT_POLICY": "active"})
    assert output.strip() == "1.0"  # and exit status 0: _threads_script checks


TEAM_SIZE = """
import os, sys
import numpy as np
import mx
from mx.jit import compile_module
m = "!matrix.matrix<4x4xf32>"
f = compile_module(f'''
func.func @f(%a: {m}, %b: {m}) -> {m} {{
  %p = matrix.matmul %a, %b : {m}, {m} -> {m}
  func.return %p : {m}
}}''').f
a = np.ones((8192, 4, 4), np.float32)
before = len(os.listdir("/proc/self/task"))
mx.set_num_threads(int(sys.argv[1]))
f(a, a[0])  # a batch above the threshold
print(len(os.listdir("/proc/self/task")) - before)
"""


def _threads_script(
    script: str, threads: int, environment: dict[str, str] | None = None
) -> str:
    """The output of `script` run with argument `threads`, OpenBLAS on one
    thread (so that the process's other threads are OpenMP's), no
    OMP_NUM_THREADS, and `environment`."""
    env = {**os.environ, "OPENBLAS_NUM_THREADS": "1", **(environment or {})}
    env.pop("OMP_NUM_THREADS", None)
    run = subprocess.run(
        [sys.executable, "-c", script, str(threads)],
        env=env,
        capture_output=True,
        text=True,
        check=True,
    )
    return run.stdout


PLACEMENT = (
    PRODUCT_ON_THREADS
    + """
import json, os, sys
caller = os.sched_getaffinity(0)
mx.set_num_threads(int(sys.argv[1]))
f(a, a)
workers = [
    sorted(os.sched_getaffinity(int(t)))
    for t in os.listdir("/proc/self/task")
    if int(t) != os.getpid()
]
print(json.dumps([sorted(caller), sorted(os.sched_getaffinity(0)), sorted(workers)]))
"""
)


@pytest.mark.parametrize(
    ("threads", "placement", "pinned"),
    [(2, {}, True), (2, {"OMP_PROC_BIND": "false"}, False), (3, {}, False)],
)
def test_workers_are_pinned_off_the_calling_cpu(
    threads: int, placement: dict[str, str], pinned: bool
) -> None:
    """A parallel call's workers may run on the calling thread's CPUs but the
    one it is on (woken, they are not queued behind it), if that leaves a
    CPU a worker; the calling thread keeps its CPUs. Setting one of OpenMP's
    placement variables leaves placement to OpenMP."""
    caller, caller_after, workers = json.loads(
        _threads_script(PLACEMENT, threads, placement)
    )
    assert caller_after == caller
    assert len(workers) == threads - 1
    if pinned and len(caller) > 1:
        for cpus in workers:
            assert len(cpus) == len(caller) - 1
            assert set(cpus) < set(caller)
    else:
        assert workers == [caller] * (threads - 1)


@pytest.mark.parametrize(("count", "started"), [(1, 0), (3, 2)])
def test_set_num_threads_sets_the_team(count: int, started: int) -> None:
    """The OS threads a parallel batch starts (OpenMP keeps them): the team
    less the calling thread."""
    assert int(_threads_script(TEAM_SIZE, count)) == started

"""The JIT's runtime behaviour: the compile cache is bounded in bytes, the
machine code of a function lives exactly as long as something can call it,
many kernels compiled and dropped keep memory bounded, and `import mx.jit`
loads no compiler."""

import json
import os
import subprocess
import sys
import textwrap
from collections.abc import Iterator

import numpy as np
import pytest

from mx import jit
from mx.errors import ArgumentError
from mx.jit import cache_info, compile_module, set_cache_limit

SOAK_KERNELS = int(os.environ.get("MX_JIT_SOAK_KERNELS", "600"))
"""Kernels the soak test compiles and drops (a long run: 10000)."""

M2 = "!matrix.matrix<2x2xf32>"


def _kernel(i: int) -> str:
    return (
        f"func.func @k(%a: {M2}, %b: {M2}) -> {M2} {{\n"
        f"  %p = matrix.matmul %a, %b : {M2}, {M2} -> {M2}\n"
        f"  func.return %p : {M2}\n}} // {i}\n"
    )


@pytest.fixture
def no_cache() -> Iterator[None]:
    """The cache disabled for the test, so that only the test's references
    keep code alive."""
    previous = set_cache_limit(0)
    yield
    set_cache_limit(previous)


def test_code_lives_while_a_function_does(no_cache: object) -> None:
    a = np.arange(4, dtype=np.float32).reshape(2, 2)
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
    "mx.dialects",
    "importlib.metadata",
)
"""What `import mx.jit` must not import: the compiler, xDSL, LLVM, ml_dtypes
(0.6 s alone), and the package metadata."""


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
    """Kernels compiled one after another and dropped, with a 16 MiB cache:
    memory grows until the cache is full, then stays flat but for a few KB
    per compile (LLVM's pass instrumentation, which llvmlite leaks)."""
    full = SOAK_KERNELS // 2  # the cache is full after ~250 such kernels
    env = {**os.environ, "MX_JIT_CACHE_BYTES": str(16 << 20)}
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
    assert report["cache"]["nbytes"] <= 16 << 20
    assert growth <= 60e6 + 8e3 * max(0, SOAK_KERNELS - 600), growth  # 600: 60 MB
    assert late <= 8e3 * (SOAK_KERNELS - full) + 2e6, late
    assert report["cache"]["engines"] == report["cache"]["modules"]

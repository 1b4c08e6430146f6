"""Correctness of every kernel that bench/run.py times (no timing here).

Each implementation (naive C, Clang matrix types with and without contraction, the FP8 bit
manipulation, the copy loops, and mx's kernels where the lowering builds them) runs on a small
batch and is compared with NumPy / ml_dtypes: bit for bit where the kernel promises docs/matrix-dialect.md's
rounding order (the reference repeats that order in float32 NumPy arithmetic), within a bound
where contraction (FMA) is allowed. Needs clang-16: skipped without it, except under CI (`CI`
set), where its absence fails.
"""

from __future__ import annotations

import os
import subprocess
import sys
import zlib
from pathlib import Path
from typing import Any

import ml_dtypes
import numpy as np
import pytest
from numpy.typing import NDArray

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import bench.build
from bench import cabi
from bench.build import BENCH, CLANG, Build, build
from bench.kernels import (
    FP8_FAMILIES,
    Family,
    Kernel,
    all_kernels,
    c_impls,
    mx_diag_impls,
    mx_impls,
    symbol,
)
from mx.testing.target_coverage import CHECKED_CPUS
from tests.system_tools import required_tool
from tests.tool_server import client, running

KERNELS = all_kernels()
CASES = [
    (k, impl)
    for k in KERNELS
    for impl in (*c_impls(k), *mx_impls(k), *mx_diag_impls(k))
]
BATCH = 3
S = 0.75
Arr = NDArray[Any]


@pytest.fixture(scope="session")
def built(tmp_path_factory: pytest.TempPathFactory) -> Build:
    """The kernels built, mx's each lowered by an `mx-opt` forked from one
    that imported it (tests/tool_server.py): Python's start-up was 40 % of
    the build."""
    required_tool(CLANG)
    from mx.universe import ALL_PASSES

    socket = tmp_path_factory.mktemp("bench") / "tools.sock"
    with running(socket), pytest.MonkeyPatch.context() as patch:
        patch.setattr(bench.build, "mx_opt", lambda: client(str(socket), "mx-opt"))
        return build(
            KERNELS, BENCH / "build" / "full", with_mx="mx-lower-to-llvm" in ALL_PASSES
        )


def _cm(x: Arr, n: int) -> Arr:
    """Batch of column-major n×n matrices -> array indexed [item, row, col]."""
    return x.reshape(-1, n, n).transpose(0, 2, 1)


def _ordered_matmul(a: Arr, b: Arr) -> Arr:
    """A·B summed over k in increasing order, each product and sum rounded (docs/matrix-dialect.md)."""
    acc = a[:, :, 0:1] * b[:, 0:1, :]
    for k in range(1, a.shape[2]):
        acc = acc + a[:, :, k : k + 1] * b[:, k : k + 1, :]
    return acc


def _strict(impl: str) -> bool:
    """Implementations bound to docs/matrix-dialect.md's rounding (no contraction)."""
    return impl in ("naive", "clang_off", "mx", "mx_novec")


def _check_matrix(k: Kernel, impl: str, bufs: list[Arr], out: Arr) -> None:
    n = k.n
    f = k.family
    if f is Family.LDST:
        a = bufs[0].reshape(BATCH, n, k.stride)
        got = out.reshape(BATCH, n, k.stride)
        np.testing.assert_array_equal(got[:, :, :n], a[:, :, :n])
        assert not got[:, :, n:].any(), "the padding between columns was written"
        return
    if f is Family.MATVEC:
        m = _cm(bufs[0], n)
        x = bufs[1].reshape(BATCH, n, 1)
        strict, exact = (
            _ordered_matmul(m, x),
            m.astype(np.float64) @ x.astype(np.float64),
        )
        got = out.reshape(BATCH, n, 1)
    elif f is Family.AXPY:
        a, b = bufs[0], bufs[1]
        strict = k.np_dtype(S) * a + b
        exact = S * a.astype(np.float64) + b
        got = out
    else:
        a, b = _cm(bufs[0], n), _cm(bufs[1], n)
        if f is Family.MMTT:
            a, b = a.transpose(0, 2, 1), b.transpose(0, 2, 1)
        strict = _ordered_matmul(a, b)
        exact = a.astype(np.float64) @ b.astype(np.float64)
        if f is Family.MMA:
            c = _cm(bufs[2], n)
            strict, exact = strict + c, exact + c
        got = _cm(out, n)
    if _strict(impl):
        np.testing.assert_array_equal(got, strict)
    else:
        err = np.abs(got.astype(np.float64) - exact) / (1 + np.abs(exact))
        assert err.max() <= k.tolerance


def _fp8_inputs(k: Kernel, rng: np.random.Generator) -> Arr:
    if k.family is not Family.ENC_F32_E4M3FN_SAT:
        return np.arange(256, dtype=np.uint8)  # every encoding
    special = [
        0.0,
        -0.0,
        448.0,
        449.0,
        463.99997,
        464.0,
        480.0,
        1e30,
        np.inf,
        -np.inf,
        np.nan,
        2.0**-6,
        2.0**-9,
        2.0**-10,
        3 * 2.0**-10,
        2.0**-11,
        1.0625,
        1.1875,
    ]
    sample = (
        rng.integers(0, 2**32, 1 << 16, dtype=np.uint64)
        .astype(np.uint32)
        .view(np.float32)
    )
    moderate = (
        rng.uniform(-500, 500, 1 << 14) * np.exp2(rng.integers(-12, 1, 1 << 14))
    ).astype(np.float32)
    vals = np.concatenate([np.array(special, np.float32), sample, moderate])
    return np.concatenate([vals, -vals])


def _check_fp8(k: Kernel, impl: str, src: Arr, out: Arr) -> None:
    if impl == "copy":  # the bandwidth-limit loops move the integer value unchanged
        unsigned = out.view(f"u{out.itemsize}")
        np.testing.assert_array_equal(
            unsigned, src.view(np.uint32) & 0xFF if src.dtype == np.float32 else src
        )
        return
    if k.family is Family.DEC_E4M3FN_F32:
        want = src.view(ml_dtypes.float8_e4m3fn).astype(np.float32)
        got = out.view(np.float32)
        assert np.array_equal(got, want, equal_nan=True)
        np.testing.assert_array_equal(
            np.signbit(got[~np.isnan(got)]), np.signbit(want[~np.isnan(want)])
        )
    elif k.family is Family.DEC_E5M2_F16:
        want = src.view(ml_dtypes.float8_e5m2).astype(np.float16)
        got = out.view(np.float16)
        nan = np.isnan(want)
        assert np.isnan(got[nan]).all()
        np.testing.assert_array_equal(
            got[~nan].view(np.uint16), want[~nan].view(np.uint16)
        )
    else:
        x = src.view(np.float32)
        with np.errstate(invalid="ignore"):  # NaN inputs; checked separately below
            want = np.clip(x, -448, 448).astype(ml_dtypes.float8_e4m3fn).view(np.uint8)
        nan = np.isnan(x)
        assert ((out[nan] & 0x7F) == 0x7F).all()
        np.testing.assert_array_equal(out[~nan], want[~nan])


@pytest.mark.parametrize(("k", "impl"), CASES, ids=[symbol(i, k) for k, i in CASES])
def test_kernel(built: Build, k: Kernel, impl: str) -> None:
    sym = symbol(impl, k)
    if impl.startswith("mx") and sym not in built.mx_ok:
        pytest.fail(f"mx kernel not built: {built.mx_errors.get(sym, 'unknown error')}")
    lib = cabi.load(built.lib)
    rng = np.random.default_rng(zlib.crc32(sym.encode()))
    if k.family in FP8_FAMILIES:
        src = _fp8_inputs(k, rng)
        bufs = cabi.inputs(k, src.size, rng)
        bufs[0] = src
        cabi.call(lib, impl, k, bufs, src.size)
        _check_fp8(k, impl, src, bufs[1])
    else:
        bufs = cabi.inputs(k, BATCH, rng)
        before = [b.copy() for b in bufs[:-1]]
        cabi.call(lib, impl, k, bufs, BATCH, S)
        for b0, b1 in zip(before, bufs[:-1], strict=True):
            np.testing.assert_array_equal(b0, b1)  # inputs untouched
        _check_matrix(k, impl, bufs[:-1], bufs[-1])


def test_references_can_fail() -> None:
    """The bit-exact matmul reference tells the ordered sum from a reassociated one."""
    rng = np.random.default_rng(0)
    a = rng.uniform(-1, 1, (64, 16, 16)).astype(np.float32)
    b = rng.uniform(-1, 1, (64, 16, 16)).astype(np.float32)
    assert not np.array_equal(_ordered_matmul(a, b), np.matmul(a, b))


@pytest.mark.parametrize("cpu", CHECKED_CPUS)
def test_bench_c_sources_compile_for_every_cpu(cpu: str) -> None:
    """The benchmarks' C (kernels, harness, the peak loop) builds for each x86
    CPU mx targets, not only for the developer's: the peak loop was written
    with AVX-512 intrinsics and stopped bench.gemm and bench/run.py on an AVX2
    CPU. A missing target feature shows when code is generated, so sources
    with intrinsics are compiled and the others only parsed (the Clang matrix
    kernels take 5-300 s of `-O2` per CPU; the first test here builds them
    for the host)."""
    clang = required_tool(CLANG)
    sources = [*sorted((BENCH / "kernels").glob("*.c")), BENCH / "harness.c"]
    assert any("immintrin.h" in source.read_text() for source in sources)
    for source in sources:
        if "immintrin.h" in source.read_text():
            check = ["-O2", "-c", "-o", os.devnull]
        else:
            check = ["-fsyntax-only"]
        result = subprocess.run(
            [clang, f"-march={cpu}", "-fenable-matrix", *check, str(source)],
            capture_output=True,
            text=True,
        )
        assert result.returncode == 0, (source.name, result.stderr)

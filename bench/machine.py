"""The machine a benchmark runs on: its CPU and load as reports state them,
and the environment of the NumPy peer processes (imported by bench/run.py
and the benchmark modules it runs)."""

from __future__ import annotations

import ctypes
import os
import shutil
import subprocess
import time
from functools import cache
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def numpy_env() -> dict[str, str]:
    """Single-threaded BLAS; OPENBLAS_CORETYPE/L2_SIZE (set on some machines here for old
    OpenBLAS builds, which slows a current one) are cleared together, for this process only."""
    env = {
        k: v
        for k, v in os.environ.items()
        if k not in ("OPENBLAS_CORETYPE", "OPENBLAS_L2_SIZE")
    }
    env.update(OPENBLAS_NUM_THREADS="1", OMP_NUM_THREADS="1", PYTHONPATH=str(ROOT))
    return env


def sh(cmd: list[str]) -> str:
    try:
        return subprocess.run(cmd, capture_output=True, text=True).stdout.strip()
    except OSError:
        return "?"


def lscpu_field(lscpu: str, name: str) -> str:
    return next(
        (
            x.split(":", 1)[1].strip()
            for x in lscpu.splitlines()
            if x.split(":", 1)[0] == name
        ),
        "?",
    )


def cpu_model(lscpu: str | None = None) -> str:
    """The CPU as lscpu names it: model name, family/model/stepping, logical CPUs."""
    lscpu = sh(["lscpu"]) if lscpu is None else lscpu

    def field(name: str) -> str:
        return lscpu_field(lscpu, name)

    return (
        f"{field('Model name')} (family {field('CPU family')}, model {field('Model')}, "
        f"stepping {field('Stepping')}), {os.cpu_count()} logical CPUs"
    )


def cpu_flags() -> set[str]:
    """The flags /proc/cpuinfo gives the first CPU (`avx2`, `avx512f`, ...)."""
    for line in Path("/proc/cpuinfo").read_text().splitlines():
        if line.startswith("flags"):
            return set(line.split(":", 1)[1].split())
    return set()


@cache
def lowering_for_host() -> str:
    """`mx-lower-to-llvm` with the vector options the JIT takes on this CPU
    (`host_cpu`), for LLVM IR that clang compiles with `-march=native`:
    mx-opt's defaults are an AVX-512 target's (512-bit vectors, 32
    registers), which an AVX2 CPU runs split into register pairs and
    spilled."""
    from mx.jit_machine_code import host_cpu
    from mx.lowering.matrix_to_affine.convert_matrix_to_affine import (
        DEFAULT_VECTOR_BITS,
    )
    from mx.lowering.matrix_to_affine.target_cpu import DEFAULT_CPU

    host = host_cpu()
    bits, registers = host.vector_bits, host.vector_registers
    if (bits, registers) == (DEFAULT_VECTOR_BITS, DEFAULT_CPU.vector_registers):
        return "mx-lower-to-llvm"
    return f"mx-lower-to-llvm{{vector-bits={bits} vector-registers={registers}}}"


def last_level_cache_bytes() -> int:
    """The host's L3 as the JIT blocks for it (sysfs, else mx-opt's 32 MiB): the
    cold-weight benchmarks rotate over several times as many bytes."""
    from mx.lowering.matrix_to_affine.caches import host_caches

    return host_caches().l3_bytes


def load_average() -> str:
    """/proc/loadavg's 1, 5 and 15 minute figures."""
    try:
        return " ".join(Path("/proc/loadavg").read_text().split()[:3])
    except OSError:
        return "?"


@cache
def peak_gflops() -> tuple[float, float] | None:
    """The f32 GFLOP/s of one core with fused and with separate multiply-adds
    (None without clang-16); measured once per process (bench/run.py's large
    and low-precision tables both report it)."""
    clang = shutil.which(os.environ.get("MX_BENCH_CLANG", "clang-16"))
    if clang is None:
        return None
    out = ROOT / "build" / "bench-peak"
    out.mkdir(parents=True, exist_ok=True)
    lib_path = out / "peak_fma.so"
    subprocess.run(
        [
            clang,
            "-O2",
            "-march=native",
            # clang tunes Intel server CPUs to prefer 256-bit vectors: the peak
            # kernel then runs at half the 512-bit FMA rate mx and OpenBLAS use
            "-mprefer-vector-width=512",
            "-ffp-contract=off",
            "-shared",
            "-fPIC",
            str(ROOT / "bench" / "kernels" / "peak_fma.c"),
            "-o",
            str(lib_path),
        ],
        check=True,
    )
    lib = ctypes.CDLL(str(lib_path))
    lib.peak_flops_per_step.restype = ctypes.c_int64
    flops_per_step = int(lib.peak_flops_per_step())
    rates: list[float] = []
    for name in ("peak_fma_f32", "peak_muladd_f32"):
        f = getattr(lib, name)
        f.restype, f.argtypes = ctypes.c_float, [ctypes.c_int64]
        steps = 5_000_000
        best = float("inf")
        for _ in range(5):
            start = time.thread_time()
            f(steps)
            best = min(best, time.thread_time() - start)
        rates.append(flops_per_step * steps / best / 1e9)
    return rates[0], rates[1]

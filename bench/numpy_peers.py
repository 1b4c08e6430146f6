"""Times the NumPy and ml_dtypes peers; run by bench/run.py in its own process.

usage: python -m bench.numpy_peers [--reps R] [--min-ms T] [--only SUBSTR] [--quick]
The parent sets OPENBLAS_NUM_THREADS=1 (and clears OPENBLAS_CORETYPE/OPENBLAS_L2_SIZE for this
process only); threadpoolctl also limits BLAS to one thread. Prints the harness's line format,
plus a `# blas ...` line naming the BLAS kernel in use. Matrices are column-major in memory, so
a C-order (batch, n, n) array holds their transposes and D = A·B + C is computed as
Dᵀ = Bᵀ·Aᵀ + Cᵀ on the same bytes.
"""

from __future__ import annotations

import argparse
import statistics
from collections.abc import Callable

import ml_dtypes
import numpy as np
from numpy.typing import NDArray
from threadpoolctl import (  # pyright: ignore[reportMissingImports]  (optional `bench` extra)
    threadpool_info,
    threadpool_limits,
)

from bench.kernels import FP8_FAMILIES, Family, Kernel, all_kernels
from bench.timing import time_per_op


def _setup(
    k: Kernel, rng: np.random.Generator
) -> tuple[Callable[[], object], Callable[[], float]]:
    """The timed call for `k`, and a check returning its largest relative error vs. float64."""
    b, n, dt = k.batch, k.n, k.np_dtype
    f = k.family

    def mats(count: int) -> list[NDArray[np.floating]]:
        return [rng.uniform(-1, 1, (b, n, n)).astype(dt) for _ in range(count)]

    def err(got: NDArray[np.generic], want: NDArray[np.float64]) -> float:
        return float(np.max(np.abs(got.astype(np.float64) - want) / (1 + np.abs(want))))

    if f in (Family.MMA, Family.MM, Family.MMTT):
        at, bt, ct = mats(3)
        dt_ = np.zeros_like(at)
        if f is Family.MMA:

            def run() -> None:
                np.matmul(bt, at, out=dt_)
                np.add(dt_, ct, out=dt_)

            want = lambda: bt.astype(np.float64) @ at.astype(np.float64) + ct  # noqa: E731
        elif f is Family.MM:

            def run() -> None:
                np.matmul(bt, at, out=dt_)

            want = lambda: bt.astype(np.float64) @ at.astype(np.float64)  # noqa: E731
        else:
            # (Aᵀ·Bᵀ)ᵀ = B·A, and B, A are the transposed views of the stored arrays
            def run() -> None:
                np.matmul(bt.mT, at.mT, out=dt_)

            want = lambda: bt.mT.astype(np.float64) @ at.mT.astype(np.float64)  # noqa: E731
        return run, lambda: (run(), err(dt_, want()))[1]
    if f is Family.LDST:
        a = rng.uniform(-1, 1, (b, n, k.stride)).astype(dt)
        d = np.zeros_like(a)

        def run() -> None:
            np.copyto(d[:, :, :n], a[:, :, :n])

        return run, lambda: (run(), err(d[:, :, :n], a[:, :, :n].astype(np.float64)))[1]
    if f is Family.AXPY:
        x, y = mats(2)
        d = np.zeros_like(x)
        s = dt(0.75)

        def run() -> None:
            np.multiply(x, s, out=d)
            np.add(d, y, out=d)

        return run, lambda: (run(), err(d, 0.75 * x.astype(np.float64) + y))[1]
    if f is Family.MATVEC:
        (mt,) = mats(1)
        x = rng.uniform(-1, 1, (b, 1, n)).astype(dt)
        y = np.zeros_like(x)

        def run() -> None:
            np.matmul(x, mt, out=y)  # yᵀ = xᵀ·Mᵀ

        return run, lambda: (
            run(),
            err(y, x.astype(np.float64) @ mt.astype(np.float64)),
        )[1]
    # FP8: ml_dtypes' astype (it has no saturating conversion, so clip first)
    if f is Family.ENC_F32_E4M3FN_SAT:
        src = rng.uniform(-1000, 1000, k.batch).astype(np.float32)
        tmp = np.empty_like(src)

        def enc() -> object:
            np.clip(src, -448, 448, out=tmp)
            return tmp.astype(ml_dtypes.float8_e4m3fn)

        return enc, lambda: 0.0
    bits = rng.integers(0, 256, k.batch, dtype=np.uint8)
    if f is Family.DEC_E4M3FN_F32:
        x8 = bits.view(ml_dtypes.float8_e4m3fn)
        return lambda: x8.astype(np.float32), lambda: 0.0
    x8 = bits.view(ml_dtypes.float8_e5m2)
    return lambda: x8.astype(np.float16), lambda: 0.0


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--reps", type=int, default=7)
    ap.add_argument("--min-ms", type=float, default=5.0)
    ap.add_argument("--only", default="")
    ap.add_argument("--quick", action="store_true")
    args = ap.parse_args()
    rng = np.random.default_rng(1)
    with threadpool_limits(1):
        for info in threadpool_info():
            print(
                f"# blas {info.get('internal_api')} {info.get('version')} arch={info.get('architecture')} threads={info.get('num_threads')}"
            )
        for k in all_kernels(args.quick):
            if args.only not in k.name:
                continue
            run, check = _setup(k, rng)
            e = check()
            ok = int(e <= max(k.tolerance, 1e-6))
            ts = sorted(time_per_op(run, k.per_call_ops, args.reps, args.min_ms))
            impl = "ml_dtypes" if k.family in FP8_FAMILIES else "numpy"
            print(
                f"{k.name}\t{impl}\t{statistics.median(ts):.4f}\t{ts[0]:.4f}\t{ts[-1]:.4f}\t{args.reps}\t1\t0\t{e:.3g}\t{ok}",
                flush=True,
            )


if __name__ == "__main__":
    main()

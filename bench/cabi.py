"""Calls the kernels of libbench.so from Python (ctypes), on NumPy buffers.

Used by the correctness tests and by run.py to check the JIT against the C peers.
"""

from __future__ import annotations

import ctypes
from pathlib import Path

import numpy as np
from numpy.typing import NDArray

from bench.kernels import FILL_BYTES, FILL_UNIT, FILL_WIDE, Kernel, symbol

NP_TYPES: dict[str, type[np.generic]] = {
    "float": np.float32,
    "double": np.float64,
    "uint8_t": np.uint8,
    "uint16_t": np.uint16,
}


def load(lib: Path) -> ctypes.CDLL:
    return ctypes.CDLL(str(lib))


def inputs(
    k: Kernel, batch: int, rng: np.random.Generator
) -> list[NDArray[np.generic]]:
    """Fresh buffers for `batch` items of `k`, in argument order: inputs random, outputs zero."""
    out: list[NDArray[np.generic]] = []
    for b in k.bufs():
        count, dt = b.elems * batch, NP_TYPES[b.ctype]
        if b.fill == FILL_UNIT:
            out.append(rng.uniform(-1, 1, count).astype(dt))
        elif b.fill == FILL_BYTES:
            out.append(rng.integers(0, 256, count, dtype=np.uint8))
        elif b.fill == FILL_WIDE:
            # magnitudes across and beyond e4m3fn's range, with some ±inf and NaN
            v = (
                rng.uniform(1, 2, count)
                * np.exp2(rng.integers(-14, 11, count))
                * rng.choice([-1.0, 1.0], count)
            )
            v[rng.random(count) < 0.01] = np.inf
            v[rng.random(count) < 0.01] = -np.inf
            v[rng.random(count) < 0.01] = np.nan
            out.append(v.astype(np.float32))
        else:
            out.append(np.zeros(count, dt))
    return out


def call(
    lib: ctypes.CDLL,
    impl: str,
    k: Kernel,
    bufs: list[NDArray[np.generic]],
    batch: int,
    s: float = 0.75,
) -> None:
    """Runs `impl`'s version of `k` on `bufs` (from `inputs`) in place."""
    fn = getattr(lib, symbol(impl, k))
    scalar = ctypes.c_double if k.ctype == "double" else ctypes.c_float
    fn.argtypes = [
        *([scalar] if k.has_scalar else []),
        *[ctypes.c_void_p] * len(bufs),
        ctypes.c_int64,
    ]
    fn.restype = None
    fn(*([s] if k.has_scalar else []), *[b.ctypes.data for b in bufs], batch)

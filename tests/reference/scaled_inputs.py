"""Inputs for the block-scaled conversion tests (shared by the interpreter,
folder and JIT tests): the encodings x scales grid of scaled_convert_from, and
fixed-seed random blocks with special blocks for scaled_convert_to.
MX_LONG_TESTS=1 multiplies the random blocks by 32.
"""

from __future__ import annotations

import ml_dtypes
import numpy as np

from tests.sampling import LONG

from . import exact_fp as ref

BLOCKS = 8192 if LONG else 256
"""Random blocks per (format, source type, block size) in `random_blocks`."""

E8M0_SCALES = (0x00, 0x01, 0x40, 0x7F, 0x80, 0x95, 0xFE, 0xFF)
"""2^-127 (not zero), 2^-126, 2^-63, 1, 2, 2^22, 2^127 and NaN."""

E4M3_SCALES = (0x00, 0x80, 0x01, 0x81, 0x07, 0x08, 0x38, 0xB8, 0x7E, 0xFE, 0x7F, 0xFF)
"""±0, ±smallest subnormal, the largest subnormal, the smallest normal, ±1,
±448 and both NaNs."""

SCALES = {"f8e8m0fnu": E8M0_SCALES, "f8e4m3fn": E4M3_SCALES}

DTYPES = {
    "f16": np.dtype(np.float16),
    "bf16": np.dtype(ml_dtypes.bfloat16),
    "f32": np.dtype(np.float32),
    "f64": np.dtype(np.float64),
}


def decode_grid(name: str, scale_name: str) -> tuple[np.ndarray, np.ndarray, int]:
    """(elements, scales, block): every encoding of `name` once per scale of
    `scale_name`'s set, one block per scale."""
    n = 1 << ref.SPECS[name].width
    scales = np.array(SCALES[scale_name], dtype=np.int64)
    return np.tile(np.arange(n), scales.size), scales, n


def _on_grid(name: str, rng: np.random.Generator, size: tuple[int, int]) -> np.ndarray:
    """Element-format values and midpoints between them (the ties)."""
    points = np.array([float(p) for p in ref._pieces(name)[1]])  # exact
    return rng.choice(points, size)


def random_blocks(name: str, source: str, block: int, seed: int) -> np.ndarray:
    """Random blocks of `source` values, then one block of each special kind.

    Each random block has its own magnitude 2^k (k spread over the source's
    range and beyond the [-127, 127] scale clamp) and holds values around it,
    values of the element grid (ties included) times 2^k, and zeros.
    """
    dtype = DTYPES[source]
    rng = np.random.default_rng(seed)
    finfo_max = {"f16": 15, "bf16": 127, "f32": 127, "f64": 1023}[source]
    finfo_min = {"f16": -24, "bf16": -133, "f32": -149, "f64": -1074}[source]
    k = rng.integers(finfo_min + 8, finfo_max - 4, BLOCKS)[:, None]
    spread = rng.standard_normal((BLOCKS, block)) * 2
    signs = rng.choice([-1.0, 1.0], (BLOCKS, block))
    values = signs * np.exp2(k + spread)
    kind = rng.integers(0, 4, (BLOCKS, block))
    # (the largest element values are about 2^17)
    grid = _on_grid(name, rng, (BLOCKS, block)) * np.exp2(k - 17.0)
    values = np.where(kind == 1, grid, values)
    values = np.where(kind == 2, 0.0, values)
    with np.errstate(over="ignore", under="ignore"):
        blocks = [values.astype(dtype)]
    blocks.append(_special_blocks(source, block, rng))
    return np.concatenate([b.reshape(-1) for b in blocks])


def _special_blocks(source: str, block: int, rng: np.random.Generator) -> np.ndarray:
    """A NaN block, ±inf blocks, an all-zero (±0) block, a block of the source's
    subnormals, blocks whose scale exponent clamps at -127 and at 127 (where
    the source can reach them) and one of the largest finite values."""
    dtype = DTYPES[source]
    info = ml_dtypes.finfo(dtype)
    tiny = float(info.smallest_subnormal)
    ones = rng.standard_normal(block)
    specials = [
        np.where(np.arange(block) == block // 2, np.nan, ones),
        np.where(np.arange(block) == 0, np.inf, ones),
        np.where(np.arange(block) == block - 1, -np.inf, ones),
        np.where(rng.integers(0, 2, block) == 1, -0.0, 0.0),
        tiny * rng.integers(-64, 64, block),
        float(info.max) * rng.uniform(-1, 1, block),
        ones * 2.0**-130,  # clamps at -127 (f32: subnormals)
        ones * 2.0**200,  # clamps at 127 (f64 only)
        ones * 2.0**-300,
    ]
    with np.errstate(over="ignore", under="ignore"):
        return np.concatenate(specials).astype(dtype)

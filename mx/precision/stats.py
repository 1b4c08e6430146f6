"""The numbers of one reported value: counts, errors against the f64 shadow,
SQNR (docs/precision-report.md).

A `Tally` holds sums, not ratios, so that the tallies of the elements of a
batch add up to the tally of the whole batch exactly.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

F64 = npt.NDArray[np.float64]


@dataclass
class Tally:
    """Counts and error sums of one value (or of one batch of its values)."""

    count: int = 0
    saturated: int = 0
    """Finite exact values whose magnitude exceeds the largest finite value."""
    underflow: int = 0
    """Non-zero finite exact values that became ±0."""
    nan: int = 0
    inf: int = 0
    max_abs_err: float = 0.0
    max_rel_err: float = 0.0
    signal: float = 0.0
    """Σ shadow² over the elements where value and shadow are both finite."""
    noise: float = 0.0
    """Σ (value − shadow)² over the same elements."""
    clipped_blocks: int = 0
    """Block-scaled values: blocks holding a saturated element."""

    def add(self, other: Tally) -> None:
        self.count += other.count
        self.saturated += other.saturated
        self.underflow += other.underflow
        self.nan += other.nan
        self.inf += other.inf
        self.max_abs_err = max(self.max_abs_err, other.max_abs_err)
        self.max_rel_err = max(self.max_rel_err, other.max_rel_err)
        self.signal += other.signal
        self.noise += other.noise
        self.clipped_blocks += other.clipped_blocks

    @property
    def sqnr_db(self) -> float:
        return sqnr_db(self.signal, self.noise)

    def counts(self) -> dict[str, Any]:
        return {
            "count": self.count,
            "saturated": self.saturated,
            "underflow": self.underflow,
            "nan": self.nan,
            "inf": self.inf,
            "max_abs_err": self.max_abs_err,
            "max_rel_err": self.max_rel_err,
            "sqnr_db": self.sqnr_db,
        }


def sqnr_db(signal: float, noise: float) -> float:
    """10·log10(signal / noise): inf when exact, -inf for noise on no signal."""
    if noise == 0:
        return math.inf
    if signal == 0:
        return -math.inf
    return 10 * math.log10(signal / noise)


CHUNK = 1 << 16
"""Elements measured at a time (the temporaries stay in cache)."""


def measure(
    value: F64,
    shadow: F64,
    exact: F64 | None = None,
    limit: F64 | float = math.inf,
    block: int = 1,
) -> Tally:
    """The tally of `value` against its f64 `shadow` (same shape). `exact`:
    what the rounding step received (a conversion's input, or the intended
    value of a decoded one), for `saturated` (finite, magnitude above
    `limit`: the largest finite value, or per block of `block` elements
    along the last axis that value times the block's scale) and `underflow`
    (finite, non-zero, `value` ±0); with `block` > 1 also the blocks with a
    saturated element."""
    rows = value.size // block
    v, s = value.reshape(rows, block), shadow.reshape(rows, block)
    x = None if exact is None else exact.reshape(rows, block)
    bound = np.broadcast_to(np.reshape(limit, (-1, 1)), (rows, 1))
    tally = Tally(count=value.size)
    step = max(1, CHUNK // block)
    with np.errstate(over="ignore", invalid="ignore"):
        for start in range(0, rows, step):
            _measure_chunk(tally, v[start : start + step], s[start : start + step])
            if x is not None:
                _count_chunk(
                    tally,
                    v[start : start + step],
                    x[start : start + step],
                    bound[start : start + step],
                    block > 1,
                )
    return tally


def exact(value: F64) -> Tally:
    """The tally of a value that is its own shadow (an input, a value no
    conversion produced): no error, but its signal, which the SQNR of
    several runs together counts (`measure(value, value)`, faster)."""
    tally = Tally(count=value.size)
    flat = value.reshape(-1)
    for start in range(0, flat.size, CHUNK):
        chunk = flat[start : start + CHUNK]
        finite = np.isfinite(chunk)
        if not finite.all():
            nans = int(np.isnan(chunk).sum())
            tally.nan += nans
            tally.inf += int(chunk.size - finite.sum()) - nans
            chunk = chunk[finite]
        tally.signal += float(np.einsum("i,i->", chunk, chunk))
    return tally


def _measure_chunk(tally: Tally, v: F64, s: F64) -> None:
    error = v - s
    both = np.isfinite(error)  # both finite: their difference stays below 2^1024
    if not both.all():
        nonfinite = v[~np.isfinite(v)]
        tally.nan += int(np.isnan(nonfinite).sum())
        tally.inf += int(nonfinite.size - np.isnan(nonfinite).sum())
        error = np.where(both, error, 0.0)
        s = np.where(both, s, 0.0)
    error = np.abs(error).ravel()
    magnitude = np.abs(s).ravel()
    if error.size:
        tally.max_abs_err = max(tally.max_abs_err, float(error.max()))
        relative = np.divide(
            error, magnitude, out=np.zeros_like(error), where=magnitude > 0
        )
        tally.max_rel_err = max(tally.max_rel_err, float(relative.max()))
    # einsum, not np.dot: BLAS's dot costs milliseconds per call (threads)
    tally.signal += float(np.einsum("i,i->", magnitude, magnitude))
    tally.noise += float(np.einsum("i,i->", error, error))


def _count_chunk(tally: Tally, v: F64, x: F64, bound: F64, blocks: bool) -> None:
    finite = np.isfinite(x)
    over = finite & (np.abs(x) > bound)
    tally.saturated += int(over.sum())
    tally.underflow += int((finite & (x != 0) & (v == 0)).sum())
    if blocks:
        tally.clipped_blocks += int(over.any(axis=1).sum())

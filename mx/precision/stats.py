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


def measure(
    value: F64,
    shadow: F64,
    exact: F64 | None = None,
    max_finite: F64 | float = math.inf,
) -> Tally:
    """The tally of `value` against its f64 `shadow` (same shape). `exact`:
    what the rounding step received (a conversion's input, in the element
    format's units for block-scaled ones), for `saturated` (finite, magnitude
    above `max_finite`) and `underflow` (finite, non-zero, `value` ±0)."""
    with np.errstate(over="ignore", invalid="ignore"):
        both = np.isfinite(value) & np.isfinite(shadow)
        error = np.abs(np.where(both, value - shadow, 0.0))
        magnitude = np.abs(np.where(both, shadow, 0.0))
        relative = np.divide(
            error, magnitude, out=np.zeros_like(error), where=magnitude > 0
        )
        tally = Tally(
            count=value.size,
            nan=int(np.isnan(value).sum()),
            inf=int(np.isinf(value).sum()),
            max_abs_err=float(error.max(initial=0.0)),
            max_rel_err=float(relative.max(initial=0.0)),
            signal=float(np.dot(magnitude.ravel(), magnitude.ravel())),
            noise=float(np.dot(error.ravel(), error.ravel())),
        )
        if exact is not None:
            finite = np.isfinite(exact)
            tally.saturated = int((finite & (np.abs(exact) > max_finite)).sum())
            tally.underflow = int((finite & (exact != 0) & (value == 0)).sum())
    return tally


def block_exponents(scale_bits: npt.ArrayLike) -> npt.NDArray[np.int64]:
    """The exponent e of f8e8m0fnu scale encodings (2^e; NaN scales give 0,
    their blocks being all NaN or zero)."""
    bits = np.asarray(scale_bits).astype(np.int64) & 0xFF
    return np.where(bits == 0xFF, 0, bits - 127)


def clipped_blocks(exact: F64, max_finite: float, block: int) -> int:
    """Blocks (along the last axis) in which at least one finite element of
    `exact` (in element units) exceeds `max_finite` in magnitude."""
    with np.errstate(invalid="ignore"):
        over = np.isfinite(exact) & (np.abs(exact) > max_finite)
    return int(over.reshape(*exact.shape[:-1], -1, block).any(axis=-1).sum())

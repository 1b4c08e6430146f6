"""Converting values as another conversion would have: the other scale rule
of a block-scaled conversion, the candidate formats of a recommendation.

Two implementations giving the same bits: the reference semantics
(`mx.semantics.arbfp`, for the interpreter and small arrays) and JIT-compiled
kernels (`convert_to` then `convert_from` back to f64, one loop nest, on one
row and run as a batch of rows) for large arrays, where the NumPy reference
takes seconds.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from mx.precision.stats import F64
from mx.semantics.arbfp import (
    FLOAT_TYPES,
    FORMATS,
    Rounding,
    ScaleRule,
    decode,
    encode,
    float_dtype,
    scaled_decode,
    scaled_encode,
)

COMPILED_FROM = 1 << 20
"""Arrays of at least this many elements are converted by compiled kernels
(compiling one costs about what the reference takes for a million elements)."""


@dataclass(frozen=True)
class Conversion:
    """A `convert_to` (block None) or `scaled_convert_to` to simulate."""

    format: str
    rounding: Rounding = Rounding.NEAREST_EVEN
    saturate: bool = False
    block: int | None = None
    rule: ScaleRule = ScaleRule.FLOOR

    def apply(
        self, x: npt.NDArray[np.generic], compiled: bool
    ) -> tuple[F64, F64 | None]:
        """The f64 values `x` converts to, and for block-scaled conversions
        each block's scale value (blocks along the last axis)."""
        if compiled and x.size >= COMPILED_FROM and x.ndim >= 1:
            return self._compiled(x)
        fmt = FORMATS[self.format]
        if self.block is None:
            bits = encode(fmt, x, self.rounding, self.saturate)
            return decode(fmt, bits, np.float64), None
        bits, scales = scaled_encode(fmt, x, self.block, self.rounding, self.rule)
        scale_format = FORMATS["f8e8m0fnu"]
        values = scaled_decode(fmt, scale_format, bits, scales, self.block, np.float64)
        return values, decode(scale_format, scales, np.float64)

    def _compiled(self, x: npt.NDArray[np.generic]) -> tuple[F64, F64 | None]:
        from mx.jit_modules import jit  # imported only when a kernel is needed

        # One row's kernel, run as a batch of rows: small to compile, and
        # the same bits (each row, each block converts on its own).
        cols = x.shape[-1]
        rows = x.reshape(-1, 1, cols)
        kernel = jit(self._kernel_text((1, cols), _element_type(x.dtype)), "convert")
        if self.block is None:
            return np.asarray(kernel(rows)).reshape(x.shape), None
        values, scales = kernel(rows)
        scale_values = decode(FORMATS["f8e8m0fnu"], np.asarray(scales), np.float64)
        return values.reshape(x.shape), scale_values.reshape(*x.shape[:-1], -1)

    def _kernel_text(self, shape: tuple[int, ...], element: str) -> str:
        rows, cols = shape
        fmt = FORMATS[self.format]

        def matrix(c: int, t: str) -> str:
            return f"!matrix.matrix<{rows}x{c}x{t}>"

        source, codes, values = (
            matrix(cols, element),
            matrix(cols, f"i{fmt.bits}"),
            matrix(cols, "f64"),
        )
        rounding = f" rounding {self.rounding.value}"
        if self.block is None:
            saturate = " saturate" if self.saturate else ""
            return (
                f"func.func @convert(%x: {source}) -> {values} {{\n"
                f"  %q = arbfp.convert_to {fmt.keyword} %x{rounding}{saturate} : {source} to {codes}\n"
                f"  %y = arbfp.convert_from {fmt.keyword} %q : {codes} to {values}\n"
                f"  func.return %y : {values}\n}}\n"
            )
        scales = matrix(cols // self.block, "i8")
        options = f"block {self.block}{rounding} scale_rule {self.rule.value}"
        return (
            f"func.func @convert(%x: {source}) -> ({values}, {scales}) {{\n"
            f"  %q, %s = arbfp.scaled_convert_to {fmt.keyword} %x {options} : {source} to {codes}, {scales}\n"
            f"  %y = arbfp.scaled_convert_from {fmt.keyword} %q, %s block {self.block} : {codes}, {scales} to {values}\n"
            f"  func.return %y, %s : {values}, {scales}\n}}\n"
        )


def _element_type(dtype: np.dtype[np.generic]) -> str:
    for name in FLOAT_TYPES:
        if float_dtype(name) == dtype:
            return name
    raise TypeError(f"no float type for {dtype}")

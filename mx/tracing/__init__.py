"""The tracing front end: Python functions of NumPy arrays traced into the
`matrix` and `arbfp` dialects and compiled (docs/python-frontend.md).

Not to be confused with `mx.frontend`, which reads MLIR text."""

from mx.tracing.api import dequantize_mx, fma, function, quantize_mx, transpose
from mx.tracing.function import Function
from mx.tracing.locations import TracingError
from mx.tracing.values import Traced

__all__ = [
    "Function",
    "Traced",
    "TracingError",
    "dequantize_mx",
    "fma",
    "function",
    "quantize_mx",
    "transpose",
]

"""mx: fixed-size matrices as SSA values and small floating-point formats
(FP8/FP6/FP4), on xDSL, compiled through LLVM. See docs/index.md; from Python:
`mx.jit` (docs/python-api.md) and the tracing front end `@mx.function`
(docs/python-frontend.md).

Importing `mx` (or `mx.jit`) loads no compiler: xDSL, LLVM and ml_dtypes are
imported by what needs them, when it is first used. Attributes that need more
than the standard library are computed on first access (`__getattr__`).
"""

from typing import TYPE_CHECKING

from mx.errors import MXError
from mx.runtime.threads import get_num_threads, num_threads, set_num_threads

if TYPE_CHECKING:
    from mx.precision.report import PrecisionReport as PrecisionReport
    from mx.tracing import dequantize_mx as dequantize_mx
    from mx.tracing import fma as fma
    from mx.tracing import function as function
    from mx.tracing import quantize_mx as quantize_mx
    from mx.tracing import transpose as transpose

_TRACING = ("dequantize_mx", "fma", "function", "quantize_mx", "transpose")
"""Names of `mx.tracing`."""


def __getattr__(name: str) -> object:
    if name == "__version__":
        from importlib.metadata import PackageNotFoundError, version

        try:
            return version("mx")
        except PackageNotFoundError:  # a source tree that is not installed
            return "0+unknown"
    if name == "PrecisionReport":
        from mx.precision.report import PrecisionReport

        return PrecisionReport
    if name in _TRACING:
        from mx import tracing

        return getattr(tracing, name)
    raise AttributeError(f"module 'mx' has no attribute {name!r}")


__all__ = ["MXError", "PrecisionReport", "__version__", "get_num_threads", "num_threads", "set_num_threads", *_TRACING]  # pyright: ignore[reportUnsupportedDunderAll]

"""mx: fixed-size matrices as SSA values and small floating-point formats
(FP8/FP6/FP4), on xDSL, compiled through LLVM. See docs/index.md; from Python:
`mx.jit` (docs/python-api.md) and the tracing front end `@mx.function`
(docs/python-frontend.md)."""

from importlib.metadata import PackageNotFoundError, version
from typing import TYPE_CHECKING

from mx.errors import MXError

try:
    __version__ = version("mx")
except PackageNotFoundError:  # running from a source tree that is not installed
    __version__ = "0+unknown"

if TYPE_CHECKING:
    from mx.precision.report import PrecisionReport as PrecisionReport
    from mx.tracing import dequantize_mx as dequantize_mx
    from mx.tracing import fma as fma
    from mx.tracing import function as function
    from mx.tracing import quantize_mx as quantize_mx
    from mx.tracing import transpose as transpose

_TRACING = ("dequantize_mx", "fma", "function", "quantize_mx", "transpose")
"""Names of `mx.tracing`, imported on first use: `import mx` stays cheap."""


def __getattr__(name: str) -> object:
    """`mx.PrecisionReport` and the tracing front end's names, imported on
    first use (`import mx` stays cheap)."""
    if name == "PrecisionReport":
        from mx.precision.report import PrecisionReport

        return PrecisionReport
    if name in _TRACING:
        from mx import tracing

        return getattr(tracing, name)
    raise AttributeError(f"module 'mx' has no attribute {name!r}")


__all__ = ["MXError", "PrecisionReport", "__version__", *_TRACING]  # pyright: ignore[reportUnsupportedDunderAll]

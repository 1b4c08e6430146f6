"""mx: fixed-size matrices as SSA values and small floating-point formats
(FP8/FP6/FP4), on xDSL, compiled through LLVM. See docs/index.md; from Python:
`mx.jit` (docs/python-api.md)."""

from importlib.metadata import PackageNotFoundError, version
from typing import TYPE_CHECKING

from mx.errors import MXError

if TYPE_CHECKING:
    from mx.precision.report import PrecisionReport

try:
    __version__ = version("mx")
except PackageNotFoundError:  # running from a source tree that is not installed
    __version__ = "0+unknown"

__all__ = ["MXError", "PrecisionReport", "__version__"]


def __getattr__(name: str) -> object:
    """`mx.PrecisionReport`, imported on first use (`import mx` stays cheap)."""
    if name == "PrecisionReport":
        from mx.precision.report import PrecisionReport

        return PrecisionReport
    raise AttributeError(f"module 'mx' has no attribute {name!r}")

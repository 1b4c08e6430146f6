"""mx: fixed-size matrices as SSA values and small floating-point formats
(FP8/FP6/FP4), on xDSL, compiled through LLVM. See docs/index.md; from Python:
`mx.jit` (docs/python-api.md)."""

from importlib.metadata import PackageNotFoundError, version

from mx.errors import MXError
from mx.runtime.threads import get_num_threads, num_threads, set_num_threads

try:
    __version__ = version("mx")
except PackageNotFoundError:  # running from a source tree that is not installed
    __version__ = "0+unknown"

__all__ = [
    "MXError",
    "__version__",
    "get_num_threads",
    "num_threads",
    "set_num_threads",
]

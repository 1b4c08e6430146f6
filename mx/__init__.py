"""mx: fixed-size matrices as SSA values and small floating-point formats
(FP8/FP6/FP4), on xDSL, compiled through LLVM. See docs/index.md; from Python:
`mx.jit` (docs/python-api.md).

Importing `mx` (or `mx.jit`) loads no compiler: xDSL, LLVM and ml_dtypes are
imported by what needs them, when it is first used. Attributes that need more
than the standard library are computed on first access (`__getattr__`).
"""

from mx.errors import MXError


def __getattr__(name: str) -> object:
    if name == "__version__":
        from importlib.metadata import PackageNotFoundError, version

        try:
            return version("mx")
        except PackageNotFoundError:  # a source tree that is not installed
            return "0+unknown"
    raise AttributeError(f"module 'mx' has no attribute {name!r}")


__all__ = ["MXError", "__version__"]  # pyright: ignore[reportUnsupportedDunderAll]

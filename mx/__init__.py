"""mx: fixed-size matrices as SSA values and FP8/FP6/FP4 formats on xDSL,
compiled through LLVM. From Python: `mx.jit` (docs/python-api.md)."""

from mx.errors import MXError

__all__ = ["MXError"]

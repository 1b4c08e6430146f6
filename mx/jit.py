"""JIT: MLIR text or a module -> native code for the host CPU, callable with
NumPy arrays and scalars. The user's guide is `docs/python-api.md`.

This is the API; the work is below it: `mx.jit_runtime` (compiled functions,
their call path, the compile cache), `mx.jit_modules` (compiling through the
cache), `mx.jit_compile` (the compiler). Importing it loads NumPy only; the
compiler (xDSL, mx's passes, llvmlite) is imported by the first compile, the
precision report (`JitFunction.precision_report`) by the first report.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from mx.jit_modules import compile_module, jit, lower_to_llvm_ir
from mx.jit_runtime import (
    DEFAULT_PIPELINE,
    CacheInfo,
    CompiledModule,
    JitFunction,
    cache_info,
    cache_limit,
    set_cache_limit,
    set_precision_reporter,
)

if TYPE_CHECKING:
    from mx.precision import PrecisionReport

__all__ = [
    "DEFAULT_PIPELINE",
    "CacheInfo",
    "CompiledModule",
    "JitFunction",
    "cache_info",
    "cache_limit",
    "compile_module",
    "jit",
    "lower_to_llvm_ir",
    "set_cache_limit",
]


def _precision_report(
    function: JitFunction, /, *args: object, **options: Any
) -> PrecisionReport:
    from mx.precision import jit_report  # its kernels compile when first used

    return jit_report(function, *args, **options)


set_precision_reporter(_precision_report)

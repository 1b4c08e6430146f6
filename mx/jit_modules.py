"""Compiling through the cache: `compile_module`, `jit` and
`lower_to_llvm_ir`, re-exported by the API module `mx.jit`. Importing this
loads NumPy only; the compiler (`mx.jit_compile`: xDSL, mx's passes,
llvmlite) is imported by the first compile, the cache is `mx.jit_runtime`'s.

Errors for bad input are `mx.errors.MXError`s carrying mx-opt's located
message.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from mx.jit_runtime import DEFAULT_PIPELINE, CompiledModule, cached, keep

if TYPE_CHECKING:
    from xdsl.dialects.builtin import FunctionType, ModuleOp


def compile_module(
    source: str | ModuleOp, pipeline: str = DEFAULT_PIPELINE
) -> CompiledModule:
    """Compiles MLIR text or a module with `pipeline` (an mx-opt `-p` spec),
    then with LLVM at -O3 for the host CPU, and returns its functions.

    Cached per (source text, pipeline), least recently used first out
    beyond `cache_limit()` bytes. Raises `mx.errors.CompileError`
    (an `MXError`) with mx-opt's located diagnostics when the source does not
    parse or verify, when a pass rejects it, or when the pipeline names an
    unknown pass or option.
    """
    text = source if isinstance(source, str) else str(source)
    key = (text, pipeline)
    if (hit := cached(key)) is not None:
        return hit
    from mx.jit_compile import compile_text

    return keep(key, compile_text(text, pipeline))


def jit(
    source: str | ModuleOp, name: str, pipeline: str = DEFAULT_PIPELINE
) -> Callable[..., Any]:
    """The compiled function `name` of `source` (see `compile_module` for the
    compilation and its errors, `JitFunction` for how to call it). An unknown
    `name` raises `mx.errors.UnknownFunctionError` listing the module's
    functions."""
    return compile_module(source, pipeline)[name]


def lower_to_llvm_ir(
    source: str | ModuleOp, pipeline: str = DEFAULT_PIPELINE
) -> tuple[str, ModuleOp, dict[str, FunctionType]]:
    """Runs `pipeline` on `source` (MLIR text or a module); returns the LLVM
    IR, the lowered module and the type of each `func.func` before lowering.
    Raises `mx.errors.CompileError` with mx-opt's located diagnostics."""
    from mx.jit_compile import lower_to_llvm_ir as lower

    return lower(source, pipeline)

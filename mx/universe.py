"""Registers mx's dialects and passes with xDSL (entry point `xdsl.universe`).

Each entry imports its module lazily, so loading the universe stays cheap.
Only names that stock xDSL does not already define are listed here: xDSL
raises on duplicates. `mx-opt` adds its own `-t llvm` target on top.

mx also adds ops to two of xDSL's dialects (`memref.prefetch`, which the
cache-blocked products emit, and the `llvm` ops of `mx.dialects.llvm_ext`).
A universe cannot define a dialect twice, so loading this module replaces
the factories of those two dialects in xDSL's own universe by factories of
the extended dialects: every tool that builds its context from
`Universe.get_multiverse()` (stock `xdsl-opt`, `xdsl-run`, mx's own) reads
everything mx prints. Loading it also installs mx's fixes of xDSL behaviour
(`mx.xdsl_compat`), so those tools run with them.
"""

import sys
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from xdsl.ir import Dialect
from xdsl.passes import ModulePass
from xdsl.universe import XDSL_UNIVERSE, Universe

import mx.xdsl_compat  # noqa: F401  # pyright: ignore[reportUnusedImport]

if TYPE_CHECKING:
    from xdsl.interpreter import Interpreter


def _matrix() -> Dialect:
    from mx.dialects.matrix import Matrix

    return Matrix


def _arbfp() -> Dialect:
    from mx.dialects.arbfp import Arbfp

    return Arbfp


ALL_DIALECTS: dict[str, Callable[[], Dialect]] = {
    "matrix": _matrix,
    "arbfp": _arbfp,
}


def _convert_to_llvm() -> type[ModulePass]:
    from mx.lowering.llvm.convert_to_llvm import ConvertToLLVMPass

    return ConvertToLLVMPass


# Pass name -> factory. Each pass module adds its own line here.
ALL_PASSES: dict[str, Callable[[], type[ModulePass]]] = {}


def _fold_transposes() -> type[ModulePass]:
    from mx.passes.fold_transposes import MatrixFoldTransposesPass

    return MatrixFoldTransposesPass


ALL_PASSES["matrix-fold-transposes"] = _fold_transposes


def _fuse_contractions() -> type[ModulePass]:
    from mx.passes.fuse_contractions import MatrixFuseContractionsPass

    return MatrixFuseContractionsPass


ALL_PASSES["matrix-fuse-contractions"] = _fuse_contractions


def _lowering_remarks() -> type[ModulePass]:
    from mx.passes.lowering_remarks import MatrixLoweringRemarksPass

    return MatrixLoweringRemarksPass


ALL_PASSES["matrix-lowering-remarks"] = _lowering_remarks
ALL_PASSES["convert-to-llvm"] = _convert_to_llvm


def _convert_matrix_to_affine() -> type[ModulePass]:
    from mx.lowering.matrix_to_affine.convert_matrix_to_affine import (
        ConvertMatrixToAffinePass,
    )

    return ConvertMatrixToAffinePass


ALL_PASSES["convert-matrix-to-affine"] = _convert_matrix_to_affine


def _mx_lower_to_llvm() -> type[ModulePass]:
    from mx.passes.mx_lower_to_llvm import MxLowerToLLVMPass

    return MxLowerToLLVMPass


ALL_PASSES["mx-lower-to-llvm"] = _mx_lower_to_llvm


def _convert_arbfp_to_arith() -> type[ModulePass]:
    from mx.lowering.convert_arbfp_to_arith import ConvertArbfpToArithPass

    return ConvertArbfpToArithPass


ALL_PASSES["convert-arbfp-to-arith"] = _convert_arbfp_to_arith


def _outline_parallel_loops() -> type[ModulePass]:
    from mx.passes.outline_parallel_loops import OutlineParallelLoopsPass

    return OutlineParallelLoopsPass


ALL_PASSES["outline-parallel-loops"] = _outline_parallel_loops


def _outline_contractions() -> type[ModulePass]:
    from mx.passes.outline_contractions import OutlineContractionsPass

    return OutlineContractionsPass


ALL_PASSES["outline-contractions"] = _outline_contractions


MX_UNIVERSE = Universe(all_dialects=ALL_DIALECTS, all_passes=ALL_PASSES)


def _memref_with_extensions() -> Dialect:
    from xdsl.dialects.memref import MemRef

    from mx.dialects.memref_ext import MemRefExt

    return Dialect(
        MemRef.name, [*MemRef.operations, *MemRefExt.operations], [*MemRef.attributes]
    )


def _llvm_with_extensions() -> Dialect:
    from xdsl.dialects.llvm import LLVM

    from mx.dialects.llvm_ext import LLVMExt

    return Dialect(
        LLVM.name, [*LLVM.operations, *LLVMExt.operations], [*LLVM.attributes]
    )


EXTENDED_DIALECTS: dict[str, Callable[[], Dialect]] = {
    "memref": _memref_with_extensions,
    "llvm": _llvm_with_extensions,
}
"""xDSL's dialects with the operations mx adds to them."""

XDSL_UNIVERSE.all_dialects.update(EXTENDED_DIALECTS)


def _extend_xdsl_run() -> None:
    """Stock `xdsl-run` interprets matrix and arbfp programs too.

    xDSL 0.75's universes carry no interpreter functions: `xdsl-run` registers
    a fixed list in `xDSLRunMain.register_implementations`. It loads the
    universes (importing this module) before it runs, so when it is the running
    tool its registration is extended here with mx's functions."""
    xdsl_run = sys.modules.get("xdsl.tools.xdsl_run")
    if xdsl_run is None:
        return
    tool = xdsl_run.xDSLRunMain
    xdsl_register = tool.register_implementations

    def register(self: Any, interpreter: "Interpreter") -> None:
        from mx.interpreters import register_functions

        xdsl_register(self, interpreter)
        register_functions(interpreter)

    tool.register_implementations = register


_extend_xdsl_run()

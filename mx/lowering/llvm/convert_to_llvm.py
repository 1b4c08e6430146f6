"""The `convert-to-llvm` pass: standard dialects -> the `llvm` dialect.

Stages, each visiting every op once (`rewrite_once`): `affine` loops and
conditionals -> `llvm` branches and `scf.if`, `scf` -> `cf`; then f16/bf16
legalization (exact rounding with integer arithmetic, before the op's own
lowering), `func`, `cf`, `arith`, `math`, `memref`, `vector` and affine
accesses -> `llvm`, bridging types with `builtin.unrealized_conversion_cast`,
which are reconciled at the end. Anything left that is not `llvm` is reported
as a diagnostic.
"""

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import builtin, llvm
from xdsl.passes import ModulePass
from xdsl.transforms.reconcile_unrealized_casts import ReconcileUnrealizedCastsPattern

from mx.diagnostics import OpDiagnostic
from mx.dialects.llvm_ext import LLVMExt
from mx.lowering.dispatch import OpTypeDispatchApplier, erase_dead_ops, rewrite_once
from mx.lowering.llvm.affine import AFFINE_ACCESS_PATTERNS, AFFINE_STRUCTURE_PATTERNS
from mx.lowering.llvm.arith import ARITH_PATTERNS
from mx.lowering.llvm.func import FUNC_PATTERNS
from mx.lowering.llvm.math import MATH_PATTERNS
from mx.lowering.llvm.memref import MEMREF_PATTERNS
from mx.lowering.llvm.narrow_floats import NARROW_FLOAT_PATTERNS
from mx.lowering.llvm.scf import SCF_PATTERNS
from mx.lowering.llvm.types import constant_pool
from mx.lowering.llvm.vector import VECTOR_PATTERNS

_LLVM_OPS = frozenset(op.name for op in (*llvm.LLVM.operations, *LLVMExt.operations))


# The stages' appliers, built once: each caches the patterns of an op class.
_STRUCTURE = OpTypeDispatchApplier(AFFINE_STRUCTURE_PATTERNS + SCF_PATTERNS)
# f16/bf16 legalization first: an op it rewrites is not lowered as it is, and
# the ops it inserts are visited next.
_OPS = OpTypeDispatchApplier(
    NARROW_FLOAT_PATTERNS
    + FUNC_PATTERNS
    + ARITH_PATTERNS
    + MATH_PATTERNS
    + MEMREF_PATTERNS
    + VECTOR_PATTERNS
    + AFFINE_ACCESS_PATTERNS
)
_CASTS = OpTypeDispatchApplier((ReconcileUnrealizedCastsPattern(),))


@dataclass(frozen=True)
class ConvertToLLVMPass(ModulePass):
    """Lowers affine, scf, cf, arith, math, memref, vector and func to llvm."""

    name = "convert-to-llvm"

    def apply(self, ctx: Context, op: builtin.ModuleOp) -> None:
        with constant_pool():
            # Last op first: lowering a loop moves the ops after it to a new
            # block, which must not hold the loops still to be lowered (O(n²)).
            rewrite_once(op, _STRUCTURE, reverse=True)
            rewrite_once(op, _OPS)
        rewrite_once(op, _CASTS)
        erase_dead_ops(op)
        for inner in op.walk():
            if inner is not op and inner.name not in _LLVM_OPS:
                raise OpDiagnostic(
                    inner,
                    f"convert-to-llvm: cannot lower '{inner.name}'"
                    + (
                        " (a type conversion between "
                        f"{inner.operands[0].type} and {inner.results[0].type} "
                        "is left)"
                        if isinstance(inner, builtin.UnrealizedConversionCastOp)
                        else ""
                    ),
                )

"""The compile driver from mx's dialects to LLVM IR: `mx-opt -t llvm`, the
JIT and `mx.jit.lower_to_llvm_ir` all lower through `lower_for_llvm_ir`.

Two routes lead from `mx-lower-to-llvm`'s structured steps (affine loops and
standard ops) to LLVM IR, and the pass's `route` option alone chooses:

- `direct` (the default): the LLVM IR writer of `mx.targets.direct_llvm_ir`
  translates the structured module; a module it does not cover goes on by
  the dialect route.
- `dialect`: xDSL's `convert-to-llvm` and the `llvm`-dialect printer
  (`mx.targets.llvm_ir`).

Debugging options (`remarks`, mx-opt's `--print-between-passes` and
`--time-passes`) keep the route; with `remarks`, a remark on stderr says which
route ran.
"""

import sys

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp

from mx.passes.mx_lower_to_llvm import MxLowerToLLVMPass
from mx.targets.direct_llvm_ir import DirectTranslation, NotCovered, translate_module


def lower_for_llvm_ir(
    lowering: MxLowerToLLVMPass, ctx: Context, module: ModuleOp
) -> DirectTranslation | None:
    """`lowering` applied to `module` on its way to LLVM IR: the direct
    translation if the route is `direct` and covers the module (`module`
    stays at the structured stage), else None and `module` lowered to the
    `llvm` dialect."""
    lowering.apply_structured(ctx, module)
    return translate_structured(lowering, ctx, module)


def translate_structured(
    lowering: MxLowerToLLVMPass, ctx: Context, module: ModuleOp
) -> DirectTranslation | None:
    """The rest of `lower_for_llvm_ir` once the structured steps ran."""
    if lowering.route == "direct":
        try:
            translation = translate_module(module)
        except NotCovered as err:
            _remark(lowering, f"route direct does not cover {err}: convert-to-llvm")
        else:
            _remark(lowering, "route direct: LLVM IR written directly")
            return translation
    else:
        remark_dialect_route(lowering)
    lowering.apply_conversion(ctx, module)
    return None


def remark_dialect_route(lowering: MxLowerToLLVMPass) -> None:
    """The remark of the dialect route (mx-opt's debugging options run its
    `convert-to-llvm` as a step of their own)."""
    _remark(lowering, "route dialect: convert-to-llvm")


def _remark(lowering: MxLowerToLLVMPass, message: str) -> None:
    if lowering.remarks:
        print(f"remark: mx-lower-to-llvm: {message}", file=sys.stderr)

"""The fastmath flags of matrix ops survive the lowering: every op the
lowering builds carries them as its `fastmath` property, never as a
discardable `fastmath` attribute (which xDSL 0.75's `arith.negf` and
`math.fma` constructors make, and which `convert-to-llvm` ignores).

Random programs (`mx.testing.matrix_dags`, every matrix op with random flags)
are lowered to the `llvm` dialect; no op may carry the attribute, and every
set of flags the program uses must still be on some lowered op."""

import os

import pytest
from xdsl.dialects.arith import FastMathFlagsAttr
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Attribute
from xdsl.passes import ModulePass
from xdsl.transforms.dead_code_elimination import DeadCodeElimination

from mx.frontend import mx_context
from mx.lowering.convert_arbfp_to_arith import ConvertArbfpToArithPass
from mx.lowering.llvm.convert_to_llvm import ConvertToLLVMPass
from mx.lowering.matrix_to_affine.convert_matrix_to_affine import (
    ConvertMatrixToAffinePass,
)
from mx.testing.matrix_dags import ProgramGenerator

PROGRAMS = int(os.environ.get("MX_FASTMATH_PROGRAMS", "40"))

_NONE = FastMathFlagsAttr("none")


def _flags_used(module: ModuleOp) -> set[Attribute]:
    return {
        flags
        for op in module.walk()
        if (flags := op.properties.get("fastmath")) is not None and flags != _NONE
    }


def _discardable_flags(module: ModuleOp) -> list[str]:
    return [op.name for op in module.walk() if "fastmath" in op.attributes]


def _lower(module: ModuleOp, passes: list[ModulePass]) -> ModuleOp:
    lowered = module.clone()
    ctx = mx_context()
    for lowering in passes:
        lowering.apply(ctx, lowered)
    lowered.verify()
    return lowered


@pytest.mark.parametrize("seed", range(PROGRAMS))
def test_lowering_keeps_fastmath_as_property(seed: int) -> None:
    module, _ = ProgramGenerator(seed).build()
    # The lowering computes no unused value: only the flags of used ones count.
    DeadCodeElimination().apply(mx_context(), module)
    affine = _lower(module, [ConvertMatrixToAffinePass(), ConvertArbfpToArithPass()])
    assert _discardable_flags(affine) == [], str(affine)
    # Every set of flags a matrix op had is on some op of the lowered code.
    assert _flags_used(module) <= _flags_used(affine), str(affine)
    llvm = _lower(affine, [ConvertToLLVMPass()])
    assert _discardable_flags(llvm) == [], str(llvm)

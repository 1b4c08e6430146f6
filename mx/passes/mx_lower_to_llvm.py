"""`mx-lower-to-llvm`: the whole lowering of mx's dialects to `llvm` as one pass."""

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import ModulePass
from xdsl.universe import Universe
from xdsl.utils.exceptions import PassFailedException

PIPELINE: tuple[str, ...] = (
    "matrix-fold-transposes",
    "matrix-fuse-contractions",
    # Matrix-level folds (constants, extract of insert, ...) need the matrix ops.
    "canonicalize",
    "convert-matrix-to-affine",
    "convert-arbfp-to-arith",
    # Index and scalar arithmetic left by the lowerings.
    "canonicalize",
    # Repeated constants and loads of the lowered loop bodies: removed while the
    # IR is structured (xDSL's cse skips multi-block regions), so that
    # convert-to-llvm does not lower them one by one.
    "cse",
    "convert-to-llvm",
    "cse",
)
"""The passes run, in order, looked up by name in the registry (mx's and
xDSL's), so that a pass can be added here by its name alone."""


@dataclass(frozen=True)
class MxLowerToLLVMPass(ModulePass):
    """Runs every pass of `PIPELINE` on the module."""

    name = "mx-lower-to-llvm"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        registry = Universe.get_multiverse().all_passes
        for name in PIPELINE:
            if name not in registry:
                raise PassFailedException(
                    f"mx-lower-to-llvm: pass '{name}' is not registered"
                )
            registry[name]()().apply(ctx, op)

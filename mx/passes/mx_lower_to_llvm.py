"""`mx-lower-to-llvm`: the whole lowering of mx's dialects to `llvm` as one pass."""

from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache
from typing import ClassVar

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import ModulePass
from xdsl.universe import Universe
from xdsl.utils.arg_spec import ArgSpec, ParameterListType
from xdsl.utils.exceptions import PassFailedException

from mx.lowering.matrix_to_affine.convert_matrix_to_affine import (
    DEFAULT_VECTOR_BITS,
    PANELS,
    VECTOR_BITS,
    VECTOR_REGISTERS,
    WEIGHT_STREAMS,
)
from mx.passes.options import check_option_choices
from mx.passes.outline_contractions import DEFAULT_MIN_WORK

PIPELINE: tuple[str, ...] = (
    "matrix-fold-transposes",
    "matrix-fuse-contractions",
    # Matrix-level folds (constants, extract of insert, ...) need the matrix ops.
    "canonicalize",
    # Repeated large products: one kernel, called, instead of one copy each.
    "outline-contractions",
    "convert-matrix-to-affine",
    "convert-arbfp-to-arith",
    # Index and scalar arithmetic left by the lowerings.
    "canonicalize",
    # Repeated constants and loads of the lowered loop bodies: removed while the
    # IR is structured (xDSL's cse skips multi-block regions), so that
    # convert-to-llvm does not lower them one by one.
    "cse",
    # Loops marked parallel by the lowering: functions run on threads.
    "outline-parallel-loops",
    "convert-to-llvm",
    "cse",
)
"""The passes run, in order, looked up by name in the registry (mx's and
xDSL's), so that a pass can be added here by its name alone."""

ROUTES = ("direct", "dialect")
"""The values of the `route` option."""

STRUCTURED_STEPS = PIPELINE[: PIPELINE.index("convert-to-llvm")]
"""The steps whose result `-t llvm` may translate directly
(`mx.targets.direct_llvm_ir`); the others convert it to the `llvm` dialect."""


@dataclass(frozen=True)
class MxLowerToLLVMPass(ModulePass):
    """The whole lowering of mx's dialects to llvm, step by step (`steps`)."""

    name = "mx-lower-to-llvm"

    remarks: bool = False
    """Also print, on stderr, the remarks of its steps: matrix-fold-transposes'
    transpose counts and matrix-lowering-remarks' work per function; on the
    way to LLVM IR, which route ran (`mx.compiler`)."""

    route: str = "direct"
    """How `-t llvm` and the JIT reach LLVM IR (`mx.compiler`): `direct` (the
    LLVM IR writer, where it covers the module) or `dialect` (xDSL's
    `convert-to-llvm` and the `llvm`-dialect printer). The pass itself, with
    no LLVM IR to write, always ends in the `llvm` dialect."""

    outline_min_work: int = DEFAULT_MIN_WORK
    """outline-contractions' `min-work`: repeated contractions of at least
    this many multiply-adds become calls of one shared kernel (0: never)."""

    vector_bits: int = DEFAULT_VECTOR_BITS
    """convert-matrix-to-affine's `vector-bits` (the JIT takes at most the
    host's)."""

    vector_registers: int = 0
    """convert-matrix-to-affine's `vector-registers` (0: the target's)."""

    weight_streams: int = 0
    """convert-matrix-to-affine's `weight-streams` (0: the target's)."""

    panel: str = "target"
    """convert-matrix-to-affine's `panel` (`target`: the target's)."""

    option_choices: ClassVar[dict[str, Sequence[object]]] = {
        "route": ROUTES,
        "vector_bits": VECTOR_BITS,
        "vector_registers": VECTOR_REGISTERS,
        "weight_streams": WEIGHT_STREAMS,
        "panel": PANELS,
    }

    def __post_init__(self) -> None:
        check_option_choices(self)
        if self.outline_min_work < 0:
            raise ValueError(
                f"outline-min-work must be 0 or more, got {self.outline_min_work}"
            )

    def steps(self) -> list[ArgSpec]:
        """The passes it runs, with their options: `PIPELINE`,
        outline-contractions with `min-work=outline_min_work`,
        convert-matrix-to-affine with the vector options that differ from
        its defaults; with `remarks`, matrix-fold-transposes reports its
        transpose counts and matrix-lowering-remarks reports the work of each
        function just before it is lowered (before outline-contractions
        moves products out of it)."""
        specs: list[ArgSpec] = []
        for name in PIPELINE:
            if self.remarks and name == "outline-contractions":
                specs.append(ArgSpec("matrix-lowering-remarks", {}))
            options: dict[str, ParameterListType] = {}
            if self.remarks and name == "matrix-fold-transposes":
                options = {"report": (True,)}
            elif name == "outline-contractions":
                options = {"min-work": (self.outline_min_work,)}
            elif name == "convert-matrix-to-affine":
                if self.vector_bits != DEFAULT_VECTOR_BITS:
                    options["vector-bits"] = (self.vector_bits,)
                if self.vector_registers:
                    options["vector-registers"] = (self.vector_registers,)
                if self.weight_streams:
                    options["weight-streams"] = (self.weight_streams,)
                if self.panel != "target":
                    options["panel"] = (self.panel,)
            specs.append(ArgSpec(name, options))
        return specs

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        self.apply_structured(ctx, op)
        self.apply_conversion(ctx, op)

    def apply_structured(self, ctx: Context, op: ModuleOp) -> None:
        """The steps before `convert-to-llvm`: they leave affine loops and
        standard ops, which `mx.compiler` may translate to LLVM IR directly."""
        passes = _passes(self)
        for step in passes[: _conversion_start(passes)]:
            step.apply(ctx, op)

    def apply_conversion(self, ctx: Context, op: ModuleOp) -> None:
        """`convert-to-llvm` and the steps after it."""
        passes = _passes(self)
        for step in passes[_conversion_start(passes) :]:
            step.apply(ctx, op)


def _conversion_start(passes: tuple[ModulePass, ...]) -> int:
    return next(i for i, p in enumerate(passes) if p.name == "convert-to-llvm")


@cache
def _passes(composite: MxLowerToLLVMPass) -> tuple[ModulePass, ...]:
    """The passes of `composite.steps()`, looked up and built once per
    process (the registry scans the installed packages' entry points)."""
    registry = Universe.get_multiverse().all_passes
    passes: list[ModulePass] = []
    for spec in composite.steps():
        if spec.name not in registry:
            raise PassFailedException(
                f"mx-lower-to-llvm: pass '{spec.name}' is not registered"
            )
        passes.append(registry[spec.name]().from_pass_spec(spec))
    return tuple(passes)

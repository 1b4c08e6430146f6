"""`-t mlir16`: MLIR text that MLIR 16's tools (`mlir-opt-16`,
`mlir-translate-16`) parse, so that mx's output at the affine level can be
lowered by upstream MLIR's passes (docs/tools.md shows the pipeline).

xDSL 0.75 prints some things in a syntax newer than MLIR 16's; this target
prints the module as `-t mlir` does except:

- properties (`<{condition = ...}>` of ops printed in the generic form, such
  as `affine.if`) are printed as attributes, which is what they were in MLIR
  16;

- integer overflow flags (`arith.subi %a, %b overflow<nsw>`, newer than MLIR 16) are left
  out. They only promise that no overflow happens; without them every
  operation keeps its wrapping result, so the meaning of every defined
  program is unchanged (LLVM merely loses a hint);
- `vector.extract` with constant positions is printed as MLIR 16 spells it,
  `vector.extract %v[1] : vector<4xf32>` (the result type is implied; later
  versions spell it `: f32 from vector<4xf32>`). Dynamic positions did not
  exist in MLIR 16: they are reported as an error;
- a `memref.prefetch` with discardable attributes is printed in the generic
  form (MLIR 16's custom syntax of the op takes no attribute dictionary);
- `arith.maximumf`/`arith.minimumf` are printed as MLIR 16 named them,
  `arith.maxf`/`arith.minf` (the same semantics: NaN if either operand is,
  -0 below +0). `arith.maxnumf`/`arith.minnumf` did not exist in MLIR 16:
  they are reported as an error.
"""

from dataclasses import dataclass
from typing import IO, ClassVar

from xdsl.context import Context
from xdsl.dialects import arith, vector
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Operation
from xdsl.printer import Printer
from xdsl.utils.target import Target

from mx.diagnostics import OpDiagnostic
from mx.dialects.memref_ext import PrefetchOp

_MLIR16_NAMES: dict[type[Operation], str] = {
    arith.MaximumfOp: "arith.maxf",
    arith.MinimumfOp: "arith.minf",
}
"""Ops that MLIR 16 knew under another name."""


class MLIR16Printer(Printer):
    """xDSL's printer with MLIR 16's spelling of the ops listed above."""

    def __init__(self, stream: IO[str]) -> None:
        super().__init__(stream=stream, print_properties_as_attributes=True)

    def print_op(self, op: Operation) -> None:
        if isinstance(op, vector.ExtractOp):
            self._print_extract(op)
            return
        if isinstance(op, PrefetchOp) and op.attributes:
            self.print_generic_format = True
            try:
                super().print_op(op)
            finally:
                self.print_generic_format = False
            return
        if (name := _MLIR16_NAMES.get(type(op))) is not None:
            self._print_results(op)
            self.print_string(f'"{name}"')
            self.print_op_with_default_format(op)
            return
        if isinstance(op, arith.MaxnumfOp | arith.MinnumfOp):
            raise OpDiagnostic(op, "cannot be printed for MLIR 16 (it has no such op)")
        if isinstance(op, arith.SignlessIntegerBinaryOperationWithOverflow):
            flags = op.properties.pop("overflowFlags", None)
            try:
                super().print_op(op)
            finally:
                if flags is not None:
                    op.properties["overflowFlags"] = flags
            return
        super().print_op(op)

    def _print_extract(self, op: vector.ExtractOp) -> None:
        if op.dynamic_position:
            raise OpDiagnostic(
                op,
                "a dynamic position cannot be printed for MLIR 16 (it has constant positions only)",
            )
        self._print_results(op)
        self.print_string("vector.extract ")
        self.print_operand(op.vector)
        positions = ", ".join(str(p) for p in op.static_position.get_values())
        self.print_string(f"[{positions}]")
        self.print_op_attributes(op.attributes)
        self.print_string(" : ")
        self.print_attribute(op.vector.type)


@dataclass(frozen=True)
class MLIR16Target(Target):
    """`-t mlir16`: MLIR text for MLIR 16's tools (see the module docs)."""

    name: ClassVar[str] = "mlir16"

    def emit(self, ctx: Context, module: ModuleOp, output: IO[str]) -> None:
        MLIR16Printer(stream=output).print_op(module)
        output.write("\n")

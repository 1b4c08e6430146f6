"""MemRef-dialect operations that xDSL 0.75's `memref` dialect lacks.

`memref.prefetch` carries MLIR's name, properties and syntax, so that the
printed IR reads as MLIR's (and mlir-opt lowers it):

    memref.prefetch %m[%i, %j], read, locality<3>, data : memref<64x64xf32>
"""

from xdsl.dialects.builtin import (
    BoolAttr,
    IndexType,
    IntegerAttr,
    IntegerType,
    MemRefType,
    NoneAttr,
    StridedLayoutAttr,
    i32,
)
from xdsl.ir import Attribute, Dialect, SSAValue
from xdsl.irdl import (
    IRDLOperation,
    irdl_op_definition,
    operand_def,
    prop_def,
    var_operand_def,
)
from xdsl.parser import Parser
from xdsl.printer import Printer
from xdsl.utils.exceptions import VerifyException


@irdl_op_definition
class PrefetchOp(IRDLOperation):
    """A hint that `memref[indices]` will soon be read (or written): its
    cache line is fetched, with temporal locality 0 (none) to 3 (keep it in
    every cache level), into the data or the instruction cache. It changes
    no value, so the interpreter skips it; it has no memory effect traits,
    so nothing erases it as dead."""

    name = "memref.prefetch"

    memref = operand_def(MemRefType)
    indices = var_operand_def(IndexType())
    is_write = prop_def(BoolAttr, prop_name="isWrite")
    locality_hint = prop_def(IntegerAttr[IntegerType], prop_name="localityHint")
    is_data_cache = prop_def(BoolAttr, prop_name="isDataCache")

    def __init__(
        self,
        memref: SSAValue,
        indices: list[SSAValue],
        *,
        is_write: bool = False,
        locality: int = 3,
        data: bool = True,
    ) -> None:
        super().__init__(
            operands=[memref, indices],
            properties={
                "isWrite": BoolAttr.from_bool(is_write),
                "localityHint": IntegerAttr(locality, i32),
                "isDataCache": BoolAttr.from_bool(data),
            },
        )

    @property
    def writes(self) -> bool:
        return self.is_write.value.data != 0

    @property
    def locality(self) -> int:
        return self.locality_hint.value.data

    @property
    def data(self) -> bool:
        return self.is_data_cache.value.data != 0

    def verify_(self) -> None:
        assert isinstance(self.memref.type, MemRefType)
        rank = self.memref.type.get_num_dims()
        if len(self.indices) != rank:
            raise VerifyException(
                f"expects as many indices as the memref's rank ({rank}), "
                f"got {len(self.indices)}"
            )
        if not 0 <= self.locality <= 3:
            raise VerifyException(f"locality must be 0..3, got {self.locality}")

    # Hand-written, as MLIR's own: each boolean is spelled by a pair of
    # keywords (`read`/`write`, `data`/`instr`), which the assembly format
    # could only say with a custom directive per property.
    def print(self, printer: Printer) -> None:
        printer.print_string(" ")
        printer.print_operand(self.memref)
        printer.print_string("[")
        printer.print_list(self.indices, printer.print_operand)
        kind = "write" if self.writes else "read"
        cache = "data" if self.data else "instr"
        printer.print_string(f"], {kind}, locality<{self.locality}>, {cache}")
        printer.print_op_attributes(self.attributes)
        printer.print_string(" : ")
        printer.print_attribute(self.memref.type)

    @classmethod
    def parse(cls, parser: Parser) -> "PrefetchOp":
        memref = parser.parse_unresolved_operand()
        indices = parser.parse_comma_separated_list(
            Parser.Delimiter.SQUARE, parser.parse_unresolved_operand
        )
        parser.parse_punctuation(",")
        is_write = parser.parse_keyword_in(("read", "write")) == "write"
        parser.parse_punctuation(",")
        parser.parse_keyword("locality")
        parser.parse_punctuation("<")
        locality = parser.parse_integer(allow_boolean=False, allow_negative=False)
        parser.parse_punctuation(">")
        parser.parse_punctuation(",")
        data = parser.parse_keyword_in(("data", "instr")) == "data"
        attributes = parser.parse_optional_attr_dict()
        parser.parse_punctuation(":")
        at = parser.pos
        type_ = parser.parse_type()
        operands = parser.resolve_operands(
            [memref, *indices], [type_, *(IndexType() for _ in indices)], at
        )
        op = cls(
            operands[0],
            list(operands[1:]),
            is_write=is_write,
            locality=locality,
            data=data,
        )
        op.attributes |= attributes
        return op


def is_row_major(type_: MemRefType[Attribute]) -> bool:
    """Whether `type_` is laid out contiguously in row-major order: no layout,
    or a strided layout with the row-major strides and offset 0 (mx's
    lowering and interpreter address memrefs so)."""
    layout = type_.layout
    if isinstance(layout, NoneAttr):
        return True
    if not isinstance(layout, StridedLayoutAttr) or layout.get_offset() != 0:
        return False
    strides: list[int] = []
    size = 1
    for dim in reversed(type_.get_shape()):
        strides.append(size)
        size *= dim  # the leading dimension (maybe dynamic) enters no stride
    return tuple(layout.get_strides()) == tuple(reversed(strides))


MemRefExt = Dialect("memref_ext", [PrefetchOp])

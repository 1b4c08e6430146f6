"""The matrix type `!matrix.matrix<RxCxT>` and the element types it may hold."""

from __future__ import annotations

from collections.abc import Sequence

from xdsl.dialects.builtin import (
    BFloat16Type,
    Float16Type,
    Float32Type,
    Float64Type,
    IntAttr,
    IntegerType,
    Signedness,
)
from xdsl.ir import Attribute, ParametrizedAttribute, TypeAttribute
from xdsl.irdl import irdl_attr_definition
from xdsl.parser import AttrParser
from xdsl.printer import Printer
from xdsl.utils.exceptions import VerifyException
from xdsl.utils.mlir_lexer import MLIRTokenKind

from mx.xdsl_compat.parser import at_token, parse_optional_shape_delimiter

MAX_DIM = 1048575
"""Clang's limit on the number of rows and of columns of a matrix type."""

ARITHMETIC_INT_WIDTHS = (8, 16, 32, 64)
"""Integer element widths that support arithmetic."""

CONTAINER_INT_WIDTHS = (4, 6)
"""Sub-byte integer containers: storage for FP4/FP6 encodings, no arithmetic."""

FloatElement = Float16Type | BFloat16Type | Float32Type | Float64Type


def is_float_element(t: Attribute) -> bool:
    return isinstance(t, FloatElement)


def is_arithmetic_element(t: Attribute) -> bool:
    """True for the element types on which matrix arithmetic is defined."""
    return is_float_element(t) or (
        isinstance(t, IntegerType)
        and t.signedness.data == Signedness.SIGNLESS
        and t.width.data in ARITHMETIC_INT_WIDTHS
    )


def is_valid_element(t: Attribute) -> bool:
    """True for every element type a matrix may hold (arithmetic or container)."""
    return is_arithmetic_element(t) or (
        isinstance(t, IntegerType)
        and t.signedness.data == Signedness.SIGNLESS
        and t.width.data in CONTAINER_INT_WIDTHS
    )


def dimension_error(what: str, value: int) -> str | None:
    """The diagnostic for a bad row/column count, or None if it is valid."""
    if 1 <= value <= MAX_DIM:
        return None
    return f"matrix {what} count {value} is outside [1, {MAX_DIM}]"


@irdl_attr_definition
class MatrixType(ParametrizedAttribute, TypeAttribute):
    """A fixed-size R x C matrix value of element type T: `!matrix.matrix<RxCxT>`."""

    name = "matrix.matrix"

    rows_attr: IntAttr
    cols_attr: IntAttr
    element_type: Attribute

    def __init__(self, rows: int, cols: int, element_type: Attribute):
        super().__init__(IntAttr(rows), IntAttr(cols), element_type)

    @property
    def rows(self) -> int:
        return self.rows_attr.data

    @property
    def cols(self) -> int:
        return self.cols_attr.data

    @property
    def shape(self) -> tuple[int, int]:
        return (self.rows, self.cols)

    @property
    def num_elements(self) -> int:
        return self.rows * self.cols

    def with_element_type(self, element_type: Attribute) -> MatrixType:
        return MatrixType(self.rows, self.cols, element_type)

    def transposed(self) -> MatrixType:
        return MatrixType(self.cols, self.rows, self.element_type)

    # Hand-written: `RxCxT` is MLIR's shape syntax (a dimension list run into
    # a type), which an attribute's assembly format cannot express.
    @classmethod
    def parse_parameters(cls, parser: AttrParser) -> Sequence[Attribute]:
        with parser.in_angle_brackets():
            dims_pos = parser.pos
            dims = parser.parse_dimension_list()
            if len(dims) == 1:
                # xDSL leaves the `x` after the last dimension it read.
                parse_optional_shape_delimiter(parser)
            if len(dims) < 2 and at_token(parser, MLIRTokenKind.MINUS):
                # `-1x4`, `4x-1`: a negative count ends xDSL's dimension list.
                what = ("row", "column")[len(dims)]
                start = parser.pos
                value = parser.parse_integer(allow_boolean=False)
                message = dimension_error(what, value)
                assert message is not None
                parser.raise_error(message, start, parser.pos)
            if len(dims) != 2:
                parser.raise_error(
                    "expected a matrix shape of two dimensions 'RxC' "
                    f"(got {len(dims)})",
                    dims_pos,
                    parser.pos,
                )
            for what, value in zip(("row", "column"), dims, strict=True):
                if value < 0:
                    parser.raise_error(
                        f"matrix {what} count must be static", dims_pos, parser.pos
                    )
                if (message := dimension_error(what, value)) is not None:
                    parser.raise_error(message, dims_pos, parser.pos)
            parser.parse_shape_delimiter()
            type_pos = parser.pos
            element_type = parser.parse_type()
            if not is_valid_element(element_type):
                parser.raise_error(
                    f"invalid matrix element type '{element_type}'",
                    type_pos,
                    parser.pos,
                )
        return (IntAttr(dims[0]), IntAttr(dims[1]), element_type)

    def print_parameters(self, printer: Printer) -> None:
        with printer.in_angle_brackets():
            printer.print_string(f"{self.rows}x{self.cols}x")
            printer.print_attribute(self.element_type)

    def verify(self) -> None:
        for what, value in (("row", self.rows), ("column", self.cols)):
            if (message := dimension_error(what, value)) is not None:
                raise VerifyException(message)
        if not is_valid_element(self.element_type):
            raise VerifyException(f"invalid matrix element type '{self.element_type}'")

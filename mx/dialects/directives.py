"""The custom directives (`custom<Name>(...)`) of the `matrix` dialect's
declarative assembly formats.

Type directives give a type parsed once to several values (as MLIR's
`SameOperandsAndResultType` and `TypesMatchWith` do): `custom<MatrixType>`
parses a matrix type, and `custom<SameType>` and `custom<ElementType>`, which
parse and print nothing, pass it or its element type on to the values whose
type the syntax leaves out. They keep each check in the op's verifier, with
its message, where IRDL type variables would check, and word, it themselves.

Index directives read and write MLIR's mixed lists of literals and `index`
SSA values (`mx.dialects.mixed_index`): `custom<IndexPair>` is `[%i, %j]`,
`custom<Layout>` is `[%off] stride %s` whose stride defaults to the leading
dimension of the matrix type written after it, which `custom<DefaultStride>`
fills in once that type is parsed.
"""

from collections.abc import Sequence
from typing import Protocol, cast

from xdsl.dialects.builtin import I64, DenseArrayBase, i64
from xdsl.ir import Attribute, SSAValue
from xdsl.irdl import IRDLOperation
from xdsl.irdl.declarative_assembly_format import (
    AttributeVariable,
    CustomDirective,
    OperandDirective,
    OperandsDirective,
    ParsingState,
    PrintingState,
    TypeDirective,
    VariableDirective,
    VariadicOperandVariable,
    irdl_custom_directive,
)
from xdsl.parser import Parser, UnresolvedOperand
from xdsl.printer import Printer

from mx.dialects import matrix_type
from mx.dialects.mixed_index import DYNAMIC, is_literal_index, join_mixed


def _set_type(directive: TypeDirective, state: ParsingState, t: Attribute) -> None:
    """Give `t` to the value of `type($x)`, or to every operand (`type(operands)`)."""
    inner = directive.inner
    count = len(state.operands) if isinstance(inner, OperandsDirective) else 1
    inner.set_types(state, (t,) * count)


def _parsed_type(directive: TypeDirective, state: ParsingState) -> Attribute:
    """The type already parsed for `ref(type($x))`."""
    inner = directive.inner
    assert isinstance(inner, VariableDirective)
    parsed = (
        state.operand_types
        if isinstance(inner, OperandDirective)
        else state.result_types
    )[inner.index]
    assert parsed is not None and len(parsed) == 1
    return parsed[0]


def _printed_matrix_type(
    directive: TypeDirective, op: IRDLOperation
) -> matrix_type.MatrixType:
    t = directive.get(op)[0]
    assert isinstance(t, matrix_type.MatrixType)
    return t


@irdl_custom_directive
class MatrixType(CustomDirective):
    """A matrix type, given to `matrix`; anything else is a parse error at the type."""

    matrix: TypeDirective

    def parse(self, parser: Parser, state: ParsingState) -> None:
        start = parser.pos
        t = parser.parse_type()
        if not isinstance(t, matrix_type.MatrixType):
            parser.raise_error(f"expected a matrix type, got '{t}'", start, parser.pos)
        _set_type(self.matrix, state, t)

    def print(self, printer: Printer, state: PrintingState, op: IRDLOperation) -> None:
        state.print_whitespace(printer)
        printer.print_attribute(self.matrix.get(op)[0])


@irdl_custom_directive
class SameType(CustomDirective):
    """`value` has the type parsed for `source` (a `ref`); nothing is written."""

    value: TypeDirective
    source: TypeDirective

    def parse(self, parser: Parser, state: ParsingState) -> None:
        _set_type(self.value, state, _parsed_type(self.source, state))

    def print(self, printer: Printer, state: PrintingState, op: IRDLOperation) -> None:
        pass


@irdl_custom_directive
class ElementType(CustomDirective):
    """`element` has the element type of the matrix type parsed for `matrix`
    (a `ref`); nothing is written."""

    element: TypeDirective
    matrix: TypeDirective

    def parse(self, parser: Parser, state: ParsingState) -> None:
        t = _parsed_type(self.matrix, state)
        assert isinstance(t, matrix_type.MatrixType)
        _set_type(self.element, state, t.element_type)

    def print(self, printer: Printer, state: PrintingState, op: IRDLOperation) -> None:
        pass


def _parse_mixed_index(parser: Parser) -> int | UnresolvedOperand:
    """An integer literal (static, must fit in i64) or an SSA value."""
    if (operand := parser.parse_optional_unresolved_operand()) is not None:
        return operand
    pos = parser.pos
    value = parser.parse_integer(allow_boolean=False)
    if not is_literal_index(value):
        parser.raise_error(f"integer {value} does not fit in 64 bits", pos, parser.pos)
    return value


def _set_mixed(
    dynamic: VariadicOperandVariable,
    static: AttributeVariable,
    state: ParsingState,
    values: Sequence[int | UnresolvedOperand],
) -> None:
    """Literals into the `static_*` array, SSA values into the operands."""
    dynamic.set(state, [v for v in values if isinstance(v, UnresolvedOperand)])
    static.set(
        state,
        DenseArrayBase.from_list(
            i64, [DYNAMIC if isinstance(v, UnresolvedOperand) else v for v in values]
        ),
    )


def _mixed_values(
    dynamic: VariadicOperandVariable, static: AttributeVariable, op: IRDLOperation
) -> list[int | SSAValue]:
    return join_mixed(cast(DenseArrayBase[I64], static.get(op)), dynamic.get(op))


def _print_mixed(printer: Printer, value: int | SSAValue) -> None:
    if isinstance(value, SSAValue):
        printer.print_operand(value)
    else:
        printer.print_string(str(value))


def _print_index_list(printer: Printer, values: Sequence[int | SSAValue]) -> None:
    """`[...]` right after the operand it indexes, as MLIR writes `%m[%i]`."""
    printer.print_string("[")
    printer.print_list(values, lambda v: _print_mixed(printer, v))
    printer.print_string("]")


def _ends_like_a_value(state: PrintingState) -> None:
    """What follows is spaced as after an operand."""
    state.should_emit_space = True
    state.last_was_punctuation = False


@irdl_custom_directive
class IndexPair(CustomDirective):
    """`[%i, %j]`: a row and a column index, each a literal or an SSA value."""

    dynamic: VariadicOperandVariable
    static: AttributeVariable

    def parse(self, parser: Parser, state: ParsingState) -> None:
        start = parser.pos
        indices = parser.parse_comma_separated_list(
            parser.Delimiter.SQUARE, lambda: _parse_mixed_index(parser)
        )
        if len(indices) != 2:
            parser.raise_error(
                f"expected two indices [row, column], got {len(indices)}",
                start,
                parser.pos,
            )
        _set_mixed(self.dynamic, self.static, state, indices)

    def print(self, printer: Printer, state: PrintingState, op: IRDLOperation) -> None:
        _print_index_list(printer, _mixed_values(self.dynamic, self.static, op))
        _ends_like_a_value(state)


class StridedAccess(Protocol):
    """An op class with a stride that defaults to its matrix's leading dimension."""

    @classmethod
    def default_stride(cls, t: matrix_type.MatrixType) -> int: ...


@irdl_custom_directive
class Layout(CustomDirective):
    """`[%off]` and an optional `stride %s`, left out when it is the default
    stride of the op's matrix type `matrix` (a `ref`). `static` holds [offset,
    stride]; with the stride left out, only [offset] until
    `custom<DefaultStride>` completes it."""

    dynamic: VariadicOperandVariable
    static: AttributeVariable
    matrix: TypeDirective

    def parse(self, parser: Parser, state: ParsingState) -> None:
        start = parser.pos
        offset = parser.parse_comma_separated_list(
            parser.Delimiter.SQUARE, lambda: _parse_mixed_index(parser)
        )
        if len(offset) != 1:
            parser.raise_error("expected one offset `[%off]`", start, parser.pos)
        if parser.parse_optional_keyword("stride"):
            offset.append(_parse_mixed_index(parser))
        _set_mixed(self.dynamic, self.static, state, offset)

    def print(self, printer: Printer, state: PrintingState, op: IRDLOperation) -> None:
        offset, stride = _mixed_values(self.dynamic, self.static, op)
        _print_index_list(printer, [offset])
        access = cast(type[StridedAccess], type(op))
        if stride != access.default_stride(_printed_matrix_type(self.matrix, op)):
            printer.print_string(" stride ")
            _print_mixed(printer, stride)
        _ends_like_a_value(state)


@irdl_custom_directive
class DefaultStride(CustomDirective):
    """Appends the default stride to a `custom<Layout>` written without one,
    once the matrix type `matrix` is parsed (both `ref`s); nothing is written."""

    static: AttributeVariable
    matrix: TypeDirective

    def parse(self, parser: Parser, state: ParsingState) -> None:
        layout = cast(DenseArrayBase[I64], state.properties[self.static.name])
        if len(layout.get_values()) == 2:
            return
        t = _parsed_type(self.matrix, state)
        assert isinstance(t, matrix_type.MatrixType)
        access = cast(type[StridedAccess], state.op_type)
        self.static.set(
            state,
            DenseArrayBase.from_list(
                i64, [*layout.get_values(), access.default_stride(t)]
            ),
        )

    def print(self, printer: Printer, state: PrintingState, op: IRDLOperation) -> None:
        pass

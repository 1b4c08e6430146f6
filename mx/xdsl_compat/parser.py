"""Public names for the parts of xDSL's private parser API that mx's parsers use.

xDSL 0.75 keeps the current token, rewinding, tensor literals and the lookup of
an op or dialect type by name private (`_current_token`, `_resume_from`, ...);
mx's custom syntax and its locating parser need them. They are reached here
only, so that a change of xDSL's internals is fixed in one file.
"""

from xdsl.dialects.builtin import (
    AnyFloat,
    ComplexType,
    IndexType,
    IntegerType,
    RankedStructure,
)
from xdsl.ir import Operation
from xdsl.parser import AttrParser, Parser
from xdsl.utils.lexer import Position
from xdsl.utils.mlir_lexer import MLIRToken, MLIRTokenKind

TensorLiteralElement = AttrParser._TensorLiteralElement  # pyright: ignore[reportPrivateUsage]
"""One element of a tensor literal, read before its type is known."""


def current_token(parser: AttrParser) -> MLIRToken:
    """The token `parser` is at (not consumed)."""
    return parser._current_token  # pyright: ignore[reportPrivateUsage]


def at_token(parser: AttrParser, kind: MLIRTokenKind) -> bool:
    """Whether `parser` is at a token of `kind`."""
    return current_token(parser).kind == kind


def resume_from(parser: AttrParser, pos: Position) -> None:
    """Move `parser` back (or forward) to `pos`."""
    parser._resume_from(pos)  # pyright: ignore[reportPrivateUsage]


def parse_tensor_literal(
    parser: AttrParser,
) -> tuple[list[TensorLiteralElement], list[int]]:
    """A tensor literal (`[[1, 2], [3, 4]]`, `5`): its elements and shape."""
    return parser._parse_tensor_literal()  # pyright: ignore[reportPrivateUsage]


def parse_dense_literal_type(
    parser: AttrParser,
) -> RankedStructure[IntegerType | IndexType | AnyFloat | ComplexType]:
    """The type after a `dense<...> :` (a shaped type of scalars)."""
    return parser._parse_dense_literal_type()  # pyright: ignore[reportPrivateUsage]


def parse_optional_shape_delimiter(parser: AttrParser) -> str | None:
    """An `x` between dimensions, splitting a token such as `x4`."""
    return parser._parse_optional_shape_delimiter()  # pyright: ignore[reportPrivateUsage]


class HookedParser(Parser):
    """xDSL's `Parser` that asks `unregistered_op` and `check_dialect_name`
    before it reports an unknown op or dialect type/attribute its own way."""

    def find_op(self, name: str) -> type[Operation] | None:
        """The registered op `name`, as the parser resolves it (default dialects included)."""
        return self.ctx.get_optional_op(
            name,
            dialect_stack=self._parser_state.dialect_stack,  # pyright: ignore[reportPrivateUsage]
        )

    def unregistered_op(self, name: str) -> type[Operation]:
        """Called for an op name that is not registered: xDSL's answer (an
        unregistered op where the context allows it, else an error)."""
        return super()._get_op_by_name(name)  # pyright: ignore[reportPrivateUsage]

    def check_dialect_name(self, name: str, is_type: bool) -> None:
        """Called before a dialect type (`is_type`) or attribute `name` is read."""

    def _get_op_by_name(self, name: str) -> type[Operation]:
        found = self.find_op(name)
        return found if found is not None else self.unregistered_op(name)

    def _parse_dialect_type_or_attribute_body(
        self,
        attr_name: str,
        is_type: bool,
        is_opaque: bool,
        starting_opaque_pos: Position | None,
    ):  # the return type is the overridden method's (a union it does not name)
        self.check_dialect_name(attr_name, is_type)
        return super()._parse_dialect_type_or_attribute_body(
            attr_name, is_type, is_opaque, starting_opaque_pos
        )

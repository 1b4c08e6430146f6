"""mx's front end: the context, the locating parser and verification.

Every entry path (`mx-opt`, `mx-run`, the JIT) reads IR through this module:

- `mx_context()` is the one `Context` with every dialect mx uses, including
  the LLVM operations of `mx.dialects.llvm_ext` (so `convert-to-llvm` output
  parses back);
- `LocatingParser` gives every op parsed without `loc(...)` a `file:line:col`
  location, as mlir-opt does, reads `dense<...>` literals bit-exactly (see
  `mx.dialects.dense_literal`) and reports the input errors xDSL's parser
  raises Python exceptions for (a duplicate block label, an unknown op) as
  located parse errors;
- `parse_source` turns a text into a module or a `FrontendError` holding
  located diagnostics;
- `parse_and_verify` and `verify_or_raise` verify with `mx.verifier`
  (located verifier errors, dominance).

Deeply nested input: xDSL's parser, printer and verifier recurse a few frames
per nesting level. Within `deep_recursion()` the recursion limit and the stack
are large enough for thousands of nested regions; beyond that, the parser
reports `TOO_DEEP`. mx's own walks are iterative.
"""

from __future__ import annotations

import re
import resource
import sys
from bisect import bisect_right
from collections.abc import Generator
from contextlib import contextmanager

from xdsl.context import Context
from xdsl.dialects.builtin import (
    AnyDenseElement,
    AnyFloat,
    BytesAttr,
    DenseIntOrFPElementsAttr,
    FileLineColLoc,
    FloatAttr,
    IndexType,
    IntAttr,
    IntegerAttr,
    IntegerType,
    ModuleOp,
    RankedStructure,
    StringAttr,
    UnknownLoc,
)
from xdsl.ir import Operation
from xdsl.parser.core import ForwardDeclaredValue
from xdsl.universe import Universe
from xdsl.utils.exceptions import (
    DiagnosticException,
    MultipleSpansParseError,
    ParseError,
)
from xdsl.utils.mlir_lexer import MLIRTokenKind

from mx.diagnostics import Diag, Severity, Source, op_diag
from mx.dialects.dense_literal import (
    NEGATIVE_HEX_FLOAT,
    index_range_error,
    literal_bytes,
    parse_optional_hex_string,
)
from mx.dialects.matrix import MAX_CONSTANT_ELEMENTS
from mx.suggestions import unregistered_name_hint
from mx.verifier import verify_module
from mx.xdsl_compat.parser import (
    HookedParser,
    at_token,
    current_token,
    parse_dense_literal_type,
    parse_tensor_literal,
    resume_from,
)

TOO_DEEP = "input nests too deeply (Python recursion limit reached)"


def mx_context(allow_unregistered: bool = False) -> Context:
    """A context knowing every dialect mx reads or produces (loaded on first use)."""
    ctx = Context(allow_unregistered=allow_unregistered)
    # The multiverse's `memref` and `llvm` hold mx's extensions (mx/universe.py).
    for name, factory in Universe.get_multiverse().all_dialects.items():
        ctx.register_dialect(name, factory)
    return ctx


class FrontendError(Exception):
    """Bad input: the located diagnostics that stopped reading it. Given the
    `source`, its message is the diagnostics as mx-opt prints them."""

    def __init__(self, diags: list[Diag], source: Source | None = None) -> None:
        super().__init__(diags)
        self.diags = diags
        self.source = source

    def __str__(self) -> str:
        if self.source is None:
            return "\n".join(d.message for d in self.diags)
        return "\n".join(self.source.render(d) for d in self.diags)


# -- parsing -------------------------------------------------------------------


_OP_NAME = re.compile(r'(?:[%\w#:,\s]*=\s*)?"?([A-Za-z_][\w$.]*)')
"""The name of the op whose text starts at a position: after its results."""

_NUMBER = re.compile(r"(-?)\s*((0[xX])?[0-9a-fA-F.eE+-]*)")
"""A number literal at a position: its sign, its digits (with `0x`), its `0x`."""
_INTEGER = re.compile(r"0[xX][0-9a-fA-F]+|[0-9]+")


class LocatingParser(HookedParser):
    """Gives each op parsed without `loc(...)` a file:line:col location, as mlir-opt does."""

    def __init__(
        self, ctx: Context, text: str, name: str, line_offset: int = 0
    ) -> None:
        super().__init__(ctx, text, name)
        self.file_name = StringAttr(name)
        self.line_offset = line_offset
        source = self.lexer.input
        self._line_starts = [0] + [
            m.end() for m in re.finditer(re.escape(source.newline), source.content)
        ]
        """Where each line starts: an op's line is found by bisection (xDSL's
        `Span.get_location` counts the newlines before it: quadratic)."""

    def _line_and_column(self, position: int) -> tuple[int, int]:
        line = bisect_right(self._line_starts, position)
        return line, position - self._line_starts[line - 1] + 1

    def parse_operation(self) -> Operation:
        start_line, start_col = self._line_and_column(current_token(self).span.start)
        at = self.pos
        try:
            op = super().parse_operation()
        except (ValueError, KeyError, IndexError) as err:
            # An op's own parser that assumes well-formed input (affine.for's
            # body taken as a single block) fails outside the parser's errors.
            name = _OP_NAME.match(self.lexer.input.content, at)
            what = f"'{name.group(1)}'" if name else "operation"
            self.raise_error(f"malformed {what}: {err}", at, self.pos)
        if isinstance(op.location, UnknownLoc):
            op.location = FileLineColLoc(
                self.file_name,
                IntAttr(start_line + self.line_offset),
                IntAttr(start_col),
            )
        if op.regions:
            self._check_resolved_operands(op)
        return op

    def _check_resolved_operands(self, op: Operation) -> None:
        """An op whose custom parser reads an operand before its own regions
        (`affine.for ... iter_args(%x = %y)` with `%y` defined in the body)
        keeps the forward reference that the body's definition resolved (and
        no longer lists as pending): a use of a value not defined where it is
        used."""
        pending = [
            value
            for values in self.forward_ssa_references.values()
            for value in values.values()
        ]
        for index, operand in enumerate(op.operands):
            if isinstance(operand, ForwardDeclaredValue) and not any(
                operand is value for value in pending
            ):
                raise FrontendError(
                    [
                        op_diag(
                            op,
                            f"operand #{index} uses a value that is not defined "
                            "where it is used",
                        )
                    ]
                )

    def unregistered_op(self, name: str) -> type[Operation]:
        # Report an unknown op at its name (xDSL points past it, at the operands).
        source = self.lexer.input.content
        start = source.rfind(name, 0, self.pos)
        if start > 0 and source[start - 1] == '"':
            start -= 1  # generic form: at the quoted name
        hint = unregistered_name_hint(self.ctx, name, "op")
        self.raise_error(
            f"Operation {name} is not registered{hint}", start, start + len(name)
        )

    def check_dialect_name(self, name: str, is_type: bool) -> None:
        """An unregistered dialect type or attribute is reported at its name,
        with the close registered names."""
        find = self.ctx.get_optional_type if is_type else self.ctx.get_optional_attr
        if "." in name and find(name) is None:
            kind = "type" if is_type else "attribute"
            hint = unregistered_name_hint(self.ctx, name, kind)
            start = self.lexer.input.content.rfind(name, 0, self.pos)
            self.raise_error(
                f"'{name}' is not registered{hint}",
                max(start - 1, 0),
                start + len(name),
            )

    def parse_optional_builtin_int_or_float_attr(
        self,
    ) -> IntegerAttr | FloatAttr | None:
        """A scalar literal (`42 : index`, `0x7fc00000 : f32`) with MLIR's
        checks, which xDSL's parser lacks: an `index` literal must fit in 64
        signed bits (xDSL kept 2^64 + 5, which the lowering wrapped to 5; the
        attribute now wraps, see `mx.xdsl_compat`, so the literal's own digits are
        checked), and a hexadecimal float takes no minus sign (xDSL read
        `-0x7fc00000` as the integer -2143289344 converted to float)."""
        number = _NUMBER.match(self.lexer.input.content, self.pos)
        attr = super().parse_optional_builtin_int_or_float_attr()
        if attr is None or number is None:
            return attr
        sign, digits, hex_prefix = number.groups()
        at = number.start(2), number.end(2)
        if isinstance(attr, FloatAttr) and sign and hex_prefix:
            self.raise_error(NEGATIVE_HEX_FLOAT, *at)
        if isinstance(attr, IntegerAttr) and isinstance(attr.type, IndexType):
            integer = _INTEGER.match(digits)
            assert integer is not None  # xDSL read an integer there
            value = int(integer.group(), 0 if hex_prefix else 10)
            if (error := index_range_error(-value if sign else value)) is not None:
                self.raise_error(error, *at)
        return attr

    def parse_dense_int_or_fp_elements_attr(
        self, type: RankedStructure[AnyDenseElement] | None
    ) -> DenseIntOrFPElementsAttr:
        """Builtin `dense<...>` with MLIR's element rules (hex floats are bit
        patterns, a float above its type's range is infinity, an integer out of
        range is a located error); other forms are xDSL's."""
        start = self.pos
        self.parse_punctuation("<", " in dense attribute")
        if at_token(self, MLIRTokenKind.GREATER):
            resume_from(self, start)
            return super().parse_dense_int_or_fp_elements_attr(type)
        hex_start = self.pos
        literal = (
            None
            if at_token(self, MLIRTokenKind.STRING_LIT)
            else parse_tensor_literal(self)
        )
        if literal is None:
            self.parse_str_literal()
        self.parse_punctuation(">", " in dense attribute")
        if type is None:
            self.parse_punctuation(":", " in dense attribute")
            type = parse_dense_literal_type(self)
        element_type = type.get_element_type()
        if not isinstance(element_type, AnyFloat | IntegerType | IndexType):
            resume_from(self, start)
            return super().parse_dense_int_or_fp_elements_attr(type)
        shape = list(type.get_shape())
        count = 1
        for dim in shape:
            count *= dim
        # A large splat is held as its one value, as matrix.constant holds it.
        expand_splat = count <= MAX_CONSTANT_ELEMENTS
        if literal is None:
            end = self.pos
            resume_from(self, hex_start)
            data = parse_optional_hex_string(self, element_type, count, expand_splat)
            resume_from(self, end)
            assert data is not None
        else:
            elements, literal_shape = literal
            if literal_shape and literal_shape != shape:
                self.raise_error(
                    f"Shape mismatch in dense literal. Expected {shape} shape "
                    f"from the type, but got {literal_shape} shape.",
                    start,
                )
            data = literal_bytes(self, elements, element_type)
            if not literal_shape and expand_splat:
                data *= count
        return DenseIntOrFPElementsAttr(type, BytesAttr(data))

    def undefined_value_diags(self) -> list[Diag]:
        """xDSL reports values used but never defined at the end of the input;
        mlir-opt reports each at its first use."""
        return [
            op_diag(use.operation, f"uses value %{name}, which is not defined")
            for name, values in self.forward_ssa_references.items()
            for value in values.values()
            for use in list(value.uses)[:1]
        ]

    def diag_here(self, message: str) -> Diag:
        loc = current_token(self).span.get_location()
        return Diag("error", loc.line + self.line_offset, loc.col, message)


def parse_error_diags(err: ParseError, line_offset: int = 0) -> list[Diag]:
    def at(line: int, column: int, severity: Severity, message: str) -> Diag:
        return Diag(severity, line + line_offset, column, message)

    loc = err.span.get_location()
    diags = [at(loc.line, loc.col, "error", err.msg)]
    if isinstance(err, MultipleSpansParseError):
        for span, note in err.refs:
            ref = span.get_location()
            diags.append(at(ref.line, ref.col, "note", note or err.ref_text or ""))
    return diags


def parse_source(
    ctx: Context,
    text: str,
    name: str,
    line_offset: int = 0,
    implicit_module: bool = True,
) -> ModuleOp:
    """The module `text` holds; bad input raises `FrontendError`."""
    try:
        parser = LocatingParser(ctx, text, name, line_offset)
    except ParseError as err:
        raise FrontendError(parse_error_diags(err, line_offset)) from None
    if at_token(parser, MLIRTokenKind.EOF):
        return ModuleOp([])  # as mlir-opt: empty input is an empty module
    try:
        return parser.parse_module(implicit_module)
    except ParseError as err:
        if undefined := parser.undefined_value_diags():
            raise FrontendError(undefined) from None
        raise FrontendError(parse_error_diags(err, line_offset)) from None
    except DiagnosticException as err:  # e.g. an attribute's verifier
        raise FrontendError([parser.diag_here(str(err))]) from None
    except RecursionError:
        raise FrontendError([parser.diag_here(TOO_DEEP)]) from None


# -- deep inputs and the whole front end ---------------------------------------

DEEP_STACK_BYTES = 512 << 20
DEEP_RECURSION_LIMIT = 50_000
"""Python frames allowed while reading IR: xDSL's parser, printer and verifier
recurse a few frames per nesting level; thousands of levels fit in
`DEEP_STACK_BYTES` of C stack (measured: 6000 nested regions)."""


@contextmanager
def deep_recursion() -> Generator[None]:
    """Within this block, allow `DEEP_RECURSION_LIMIT` frames, growing the main
    thread's stack limit to `DEEP_STACK_BYTES` to hold them (Linux grows the main
    stack up to the current limit on demand). Restored on exit."""
    limit = sys.getrecursionlimit()
    soft, hard = resource.getrlimit(resource.RLIMIT_STACK)
    wanted = (
        DEEP_STACK_BYTES
        if hard == resource.RLIM_INFINITY
        else min(hard, DEEP_STACK_BYTES)
    )
    grow = soft != resource.RLIM_INFINITY and soft < wanted
    if grow:
        resource.setrlimit(resource.RLIMIT_STACK, (wanted, hard))
    # Scale the frame budget to the stack available (8 MiB holds ~1000 safely).
    stack = wanted if grow or soft == resource.RLIM_INFINITY else soft
    sys.setrecursionlimit(max(limit, min(DEEP_RECURSION_LIMIT, stack // 8192)))
    try:
        yield
    finally:
        sys.setrecursionlimit(limit)
        if grow:
            resource.setrlimit(resource.RLIMIT_STACK, (soft, hard))


def parse_and_verify(
    text: str, name: str = "<string>", ctx: Context | None = None
) -> ModuleOp:
    """The verified module of `text`; bad input raises `FrontendError` with
    the located diagnostics (`name:line:col: error: ...`, source line, caret)."""
    with deep_recursion():
        try:
            module = parse_source(ctx or mx_context(), text, name)
            if (diag := verify_module(module)) is not None:
                raise FrontendError([diag])
        except FrontendError as err:
            raise FrontendError(err.diags, Source.of_text(name, text)) from None
        return module


def verify_or_raise(module: ModuleOp) -> None:
    """Raise `FrontendError` if `module` does not verify (or breaks dominance)."""
    with deep_recursion():
        if (diag := verify_module(module)) is not None:
            raise FrontendError([diag])


__all__ = [
    "TOO_DEEP",
    "FrontendError",
    "LocatingParser",
    "Source",
    "deep_recursion",
    "mx_context",
    "parse_and_verify",
    "parse_error_diags",
    "parse_source",
    "verify_or_raise",
]

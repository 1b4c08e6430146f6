"""The `matrix` dialect: fixed-size matrices as SSA values (Clang MatrixTypes, HLSL 0035)."""

from __future__ import annotations

from abc import ABC
from collections.abc import Sequence
from typing import Any, ClassVar, Self, cast

from xdsl.dialect_interfaces.constant_materialization import (
    ConstantMaterializationInterface,
)
from xdsl.dialects.arith import FastMathFlagsAttr
from xdsl.dialects.builtin import (
    DYNAMIC_INDEX,
    I64,
    AffineMapAttr,
    AnyFloat,
    BFloat16Type,
    BytesAttr,
    DenseArrayBase,
    DenseIntOrFPElementsAttr,
    Float16Type,
    Float32Type,
    Float64Type,
    IndexType,
    IntAttr,
    IntegerType,
    MemRefType,
    NoneAttr,
    Signedness,
    TensorType,
    UnitAttr,
    VectorType,
    i64,
)
from xdsl.interfaces import HasCanonicalizationPatternsInterface, HasFolderInterface
from xdsl.ir import (
    Attribute,
    Dialect,
    Operation,
    ParametrizedAttribute,
    SSAValue,
    TypeAttribute,
)
from xdsl.ir.affine import AffineMap
from xdsl.irdl import (
    AttrSizedOperandSegments,
    IRDLOperation,
    ParsePropInAttrDict,
    irdl_attr_definition,
    irdl_op_definition,
    operand_def,
    opt_operand_def,
    opt_prop_def,
    prop_def,
    result_def,
    traits_def,
    var_operand_def,
)
from xdsl.parser import AttrParser, Parser, UnresolvedOperand
from xdsl.pattern_rewriter import RewritePattern
from xdsl.printer import Printer
from xdsl.traits import ConstantLike, MemoryReadEffect, MemoryWriteEffect, Pure
from xdsl.utils.exceptions import VerifyException
from xdsl.utils.hints import isa
from xdsl.utils.lexer import Position
from xdsl.utils.mlir_lexer import MLIRTokenKind

from mx.dialects.dense_literal import (
    Element,
    element_bits,
    literal_bytes,
    parse_optional_hex_string,
    print_float_bits,
)
from mx.xdsl_compat.parser import (
    at_token,
    parse_optional_shape_delimiter,
    parse_tensor_literal,
    resume_from,
)

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


# ---------------------------------------------------------------------------
# Static/dynamic index operands
# ---------------------------------------------------------------------------

DYNAMIC = DYNAMIC_INDEX
"""Sentinel in a `static_*` array for a position given by an `index` operand."""

MixedIndex = int | SSAValue
"""An index, offset or stride: an integer literal or an `index` SSA value."""


def is_literal_index(value: int) -> bool:
    """Whether `value` can be a static index, offset or stride: an i64 other
    than `DYNAMIC` (i64's least value)."""
    return DYNAMIC < value < 2**63


def parse_mixed_index(parser: Parser) -> int | UnresolvedOperand:
    """Parse an integer literal (static, must fit in i64) or an SSA value."""
    if (operand := parser.parse_optional_unresolved_operand()) is not None:
        return operand
    pos = parser.pos
    value = parser.parse_integer(allow_boolean=False)
    if not is_literal_index(value):
        parser.raise_error(f"integer {value} does not fit in 64 bits", pos, parser.pos)
    return value


def split_mixed(
    parser: Parser, values: Sequence[int | UnresolvedOperand]
) -> tuple[DenseArrayBase[I64], list[SSAValue]]:
    """Resolve the SSA values as `index` operands; the rest become literals."""
    static = [DYNAMIC if isinstance(v, UnresolvedOperand) else v for v in values]
    dynamic: list[SSAValue] = [
        parser.resolve_operand(v, IndexType())
        for v in values
        if isinstance(v, UnresolvedOperand)
    ]
    return DenseArrayBase.from_list(i64, static), dynamic


def join_mixed(
    static: DenseArrayBase[I64], dynamic: Sequence[SSAValue]
) -> list[MixedIndex]:
    """Merge a `static_*` array and its dynamic operands back into one list."""
    operands = iter(dynamic)
    return [next(operands) if s == DYNAMIC else s for s in static.get_values()]


def build_mixed(
    values: Sequence[MixedIndex],
) -> tuple[DenseArrayBase[I64], list[SSAValue]]:
    static = [DYNAMIC if isinstance(v, SSAValue) else v for v in values]
    dynamic = [v for v in values if isinstance(v, SSAValue)]
    return DenseArrayBase.from_list(i64, static), dynamic


def print_mixed(printer: Printer, value: MixedIndex) -> None:
    if isinstance(value, SSAValue):
        printer.print_operand(value)
    else:
        printer.print_string(str(value))


def verify_mixed(
    static: DenseArrayBase[I64], dynamic: Sequence[SSAValue], count: int
) -> None:
    values = static.get_values()
    if len(values) != count:
        raise VerifyException(f"expected {count} static positions, got {len(values)}")
    if (expected := values.count(DYNAMIC)) != len(dynamic):
        raise VerifyException(
            f"expected {expected} dynamic index operands, got {len(dynamic)}"
        )


def _static_index_error(what: str, value: MixedIndex, bound: int) -> None:
    if isinstance(value, int) and not 0 <= value < bound:
        raise VerifyException(f"{what} {value} is outside [0, {bound})")


# ---------------------------------------------------------------------------
# Shared verification and syntax helpers
# ---------------------------------------------------------------------------


def _matrix_type(value: SSAValue, role: str) -> MatrixType:
    if not isinstance(value.type, MatrixType):
        raise VerifyException(f"{role} must be a matrix, got '{value.type}'")
    return value.type


def _require_arithmetic(t: MatrixType, role: str) -> None:
    if not is_arithmetic_element(t.element_type):
        raise VerifyException(
            f"{role} has element type '{t.element_type}', which is a bit container "
            "without arithmetic (convert it with arbfp first)"
        )


def _require_float(t: MatrixType, role: str, op_name: str) -> None:
    if not is_float_element(t.element_type):
        raise VerifyException(
            f"'{op_name}' requires floating-point elements, but {role} has "
            f"element type '{t.element_type}'"
        )


def _require_same_type(types: Sequence[tuple[str, Attribute]]) -> None:
    """Clang: both operands of +, -, elementwise ops must have the same matrix type."""
    (first_role, first), *rest = types
    for role, t in rest:
        if t == first:
            continue
        if isinstance(t, MatrixType) and isinstance(first, MatrixType):
            if t.shape != first.shape:
                raise VerifyException(
                    f"matrix dimension mismatch: {first_role} is "
                    f"{first.rows}x{first.cols} but {role} is {t.rows}x{t.cols}"
                )
            raise VerifyException(
                f"matrix element type mismatch: {first_role} has "
                f"'{first.element_type}' but {role} has '{t.element_type}'"
            )
        raise VerifyException(
            f"type mismatch: {first_role} is '{first}', {role} is '{t}'"
        )


def _verify_fastmath(fastmath: FastMathFlagsAttr, element_type: Attribute) -> None:
    if fastmath != FastMathFlagsAttr("none") and not is_float_element(element_type):
        raise VerifyException(
            f"fastmath flags are only allowed on floating-point matrices, "
            f"not on element type '{element_type}'"
        )


def _parse_fastmath(parser: Parser) -> FastMathFlagsAttr:
    if parser.parse_optional_keyword("fastmath") is None:
        return FastMathFlagsAttr("none")
    return FastMathFlagsAttr(FastMathFlagsAttr.parse_parameter(parser))


def _print_fastmath(printer: Printer, fastmath: FastMathFlagsAttr) -> None:
    if fastmath != FastMathFlagsAttr("none"):
        printer.print_string(" fastmath")
        fastmath.print_parameter(printer)


UNIT_PROPERTIES = ("unsigned",)
"""Unit properties written in the attribute dictionary (`{unsigned}`)."""


def _parse_attr_dict(
    parser: Parser,
) -> tuple[dict[str, Attribute], dict[str, Attribute]]:
    """Parse an optional attr-dict; split the unit properties out of it."""
    attributes = parser.parse_optional_attr_dict()
    properties = {k: attributes.pop(k) for k in UNIT_PROPERTIES if k in attributes}
    return attributes, properties


def _print_attr_dict(printer: Printer, op: IRDLOperation) -> None:
    units = {k: v for k, v in op.properties.items() if k in UNIT_PROPERTIES}
    printer.print_op_attributes({**units, **op.attributes})


class MatrixOp(
    IRDLOperation, HasFolderInterface, HasCanonicalizationPatternsInterface, ABC
):
    """Base of the matrix ops: uniform access to the optional fastmath property;
    folders and canonicalization patterns live in mx.passes.canonicalization."""

    def fold(self) -> Sequence[SSAValue | Attribute] | None:
        from mx.passes.canonicalization.matrix import fold

        return fold(self)

    @classmethod
    def get_canonicalization_patterns(cls) -> tuple[RewritePattern, ...]:
        from mx.passes.canonicalization.matrix import patterns_for

        return patterns_for(cls)

    def fastmath_flags(self) -> FastMathFlagsAttr:
        flags = self.properties.get("fastmath")
        return (
            flags if isinstance(flags, FastMathFlagsAttr) else FastMathFlagsAttr("none")
        )


# ---------------------------------------------------------------------------
# Elementwise ops whose operands and result all have one type: `... : T`
# ---------------------------------------------------------------------------


class SameTypeOp(MatrixOp, ABC):
    """`%r = matrix.<op> %a, ... [fastmath<...>] [{unsigned}] : T`."""

    ARITY: ClassVar[int]
    FLOAT_ONLY: ClassVar[bool] = False

    result = result_def(MatrixType)
    fastmath = prop_def(FastMathFlagsAttr, default_value=FastMathFlagsAttr("none"))
    traits = traits_def(Pure())

    def __init__(
        self,
        *operands: SSAValue,
        fastmath: FastMathFlagsAttr | None = None,
        properties: dict[str, Attribute] | None = None,
    ):
        props: dict[str, Attribute] = dict(properties or {})
        if fastmath is not None:
            props["fastmath"] = fastmath
        super().__init__(
            operands=list(operands), result_types=[operands[0].type], properties=props
        )

    @classmethod
    def parse(cls, parser: Parser) -> Self:
        unresolved = [parser.parse_unresolved_operand()]
        for _ in range(cls.ARITY - 1):
            parser.parse_punctuation(",")
            unresolved.append(parser.parse_unresolved_operand())
        fastmath = _parse_fastmath(parser)
        attributes, properties = _parse_attr_dict(parser)
        parser.parse_punctuation(":")
        t = parser.parse_type()
        operands = [parser.resolve_operand(u, t) for u in unresolved]
        op = cls.create(
            operands=operands,
            result_types=[t],
            properties={**properties, "fastmath": fastmath},
            attributes=attributes,
        )
        return op

    def print(self, printer: Printer) -> None:
        printer.print_string(" ")
        printer.print_list(self.operands, printer.print_operand)
        _print_fastmath(printer, self.fastmath)
        _print_attr_dict(printer, self)
        printer.print_string(" : ")
        printer.print_attribute(self.result.type)

    def verify_(self) -> None:
        roles = (
            ["lhs", "rhs"]
            if self.ARITY == 2
            else [f"operand #{i}" for i in range(self.ARITY)]
        )
        for role, operand in zip(roles, self.operands, strict=True):
            _matrix_type(operand, role)
        _require_same_type(
            [
                *zip(roles, (o.type for o in self.operands), strict=True),
                ("result", self.result.type),
            ]
        )
        t = _matrix_type(self.result, "result")
        _require_arithmetic(t, "result")
        if self.FLOAT_ONLY:
            _require_float(t, "result", self.name)
        _verify_fastmath(self.fastmath, t.element_type)


class BinaryOp(SameTypeOp, ABC):
    ARITY: ClassVar[int] = 2
    lhs = operand_def(MatrixType)
    rhs = operand_def(MatrixType)


@irdl_op_definition
class AddOp(BinaryOp):
    """Elementwise sum. Integers wrap."""

    name = "matrix.add"


@irdl_op_definition
class SubOp(BinaryOp):
    """Elementwise difference. Integers wrap."""

    name = "matrix.sub"


@irdl_op_definition
class MulOp(BinaryOp):
    """Elementwise (Hadamard) product."""

    name = "matrix.mul"


@irdl_op_definition
class DivOp(BinaryOp):
    """Elementwise quotient; integers divide signed unless `{unsigned}` is set."""

    name = "matrix.div"
    unsigned = opt_prop_def(UnitAttr)

    def verify_(self) -> None:
        super().verify_()
        if self.unsigned is not None and not isinstance(
            _matrix_type(self.result, "result").element_type, IntegerType
        ):
            raise VerifyException("'unsigned' is only allowed on integer division")


@irdl_op_definition
class NegOp(SameTypeOp):
    """Elementwise negation of a floating-point matrix."""

    name = "matrix.neg"
    ARITY: ClassVar[int] = 1
    FLOAT_ONLY: ClassVar[bool] = True
    input = operand_def(MatrixType)


@irdl_op_definition
class FmaOp(SameTypeOp):
    """Elementwise a*b+c with a single rounding (floating-point only)."""

    name = "matrix.fma"
    ARITY: ClassVar[int] = 3
    FLOAT_ONLY: ClassVar[bool] = True
    a = operand_def(MatrixType)
    b = operand_def(MatrixType)
    c = operand_def(MatrixType)


# ---------------------------------------------------------------------------
# Construction and element access
# ---------------------------------------------------------------------------


@irdl_op_definition
class SplatOp(MatrixOp):
    """Every element equal to one scalar: `%m = matrix.splat %x : T`."""

    name = "matrix.splat"
    input = operand_def()
    result = result_def(MatrixType)
    traits = traits_def(Pure())

    def __init__(self, input: SSAValue, result_type: MatrixType):
        super().__init__(operands=[input], result_types=[result_type])

    @classmethod
    def parse(cls, parser: Parser) -> Self:
        unresolved = parser.parse_unresolved_operand()
        attributes = parser.parse_optional_attr_dict()
        parser.parse_punctuation(":")
        pos = parser.pos
        t = parser.parse_type()
        if not isinstance(t, MatrixType):
            parser.raise_error(f"expected a matrix type, got '{t}'", pos, parser.pos)
        return cls.create(
            operands=[parser.resolve_operand(unresolved, t.element_type)],
            result_types=[t],
            attributes=attributes,
        )

    def print(self, printer: Printer) -> None:
        printer.print_string(" ")
        printer.print_operand(self.input)
        printer.print_op_attributes(self.attributes)
        printer.print_string(" : ")
        printer.print_attribute(self.result.type)

    def verify_(self) -> None:
        t = _matrix_type(self.result, "result")
        if self.input.type != t.element_type:
            raise VerifyException(
                f"splat operand has type '{self.input.type}' but the matrix "
                f"element type is '{t.element_type}'"
            )


def dense_matrix_value(
    t: MatrixType, row_major: Sequence[int | float]
) -> DenseIntOrFPElementsAttr:
    """The `tensor<RxCxT>` dense attribute holding a matrix constant's elements.

    A splat (one value) of more than `MAX_CONSTANT_ELEMENTS` elements is held
    as that one value, as MLIR holds splats: any size is a valid constant."""
    tensor: Any = TensorType(t.element_type, t.shape)
    if len(row_major) == 1 and t.num_elements > MAX_CONSTANT_ELEMENTS:
        one: Any = TensorType(t.element_type, [1, 1])
        data = DenseIntOrFPElementsAttr.from_list(one, row_major).data
        return DenseIntOrFPElementsAttr(tensor, data)
    return DenseIntOrFPElementsAttr.from_list(tensor, row_major)


MAX_CONSTANT_ELEMENTS = 1 << 20
"""Largest matrix.constant whose elements are stored one by one."""

MAX_FOLDED_ELEMENTS = 4096
"""Largest matrix constant a fold or pattern may create (the folders of
`matrix` and `arbfp` and the canonicalization patterns)."""


@irdl_op_definition
class ConstantOp(MatrixOp):
    """A literal matrix, written row by row: `matrix.constant dense<[[1.0, 2.0]]> : T`."""

    name = "matrix.constant"
    value = prop_def(DenseIntOrFPElementsAttr)
    result = result_def(MatrixType)
    traits = traits_def(Pure(), ConstantLike())

    def __init__(self, value: DenseIntOrFPElementsAttr, result_type: MatrixType):
        super().__init__(result_types=[result_type], properties={"value": value})

    @staticmethod
    def from_values(
        values: Sequence[int | float], result_type: MatrixType
    ) -> ConstantOp:
        """Build from row-major element values."""
        return ConstantOp(dense_matrix_value(result_type, values), result_type)

    def row_major_values(self) -> tuple[int | float, ...]:
        """Every element, row by row (a large splat: `element` is cheaper)."""
        values = self._stored_values()
        if len(values) == 1:  # a splat held as one value
            return values * _matrix_type(self.result, "result").num_elements
        return values

    def element(self, row: int, col: int) -> int | float:
        values = self._stored_values()
        if len(values) == 1:
            return values[0]
        return values[row * _matrix_type(self.result, "result").cols + col]

    def _stored_values(self) -> tuple[int | float, ...]:
        return cast(tuple[int | float, ...], tuple(self.value.get_values()))

    @classmethod
    def parse(cls, parser: Parser) -> Self:
        parser.parse_keyword("dense")
        literal_pos = parser.pos
        parser.parse_punctuation("<")
        if at_token(parser, MLIRTokenKind.STRING_LIT):
            literal: tuple[list[Element], list[int]] | Position = parser.pos
            parser.parse_str_literal()  # the raw data: read once the type is known
        else:
            literal = parse_tensor_literal(parser)
        parser.parse_punctuation(">")
        literal_end = parser.pos
        attributes = parser.parse_optional_attr_dict()
        parser.parse_punctuation(":")
        pos = parser.pos
        t = parser.parse_type()
        if not isinstance(t, MatrixType):
            parser.raise_error(f"expected a matrix type, got '{t}'", pos, parser.pos)
        element_type = cast(IntegerType | AnyFloat, t.element_type)
        if isinstance(literal, Position):
            resume = parser.pos
            resume_from(parser, literal)
            data = parse_optional_hex_string(
                parser,
                element_type,
                t.num_elements,
                # A large splat is held as its one value (see dense_matrix_value).
                expand_splat=t.num_elements <= MAX_CONSTANT_ELEMENTS,
            )
            resume_from(parser, resume)
            assert data is not None
        else:
            elements, shape = literal
            if shape and shape != [t.rows, t.cols]:
                parser.raise_error(
                    f"literal of shape {'x'.join(map(str, shape))} does not match "
                    f"the {t.rows}x{t.cols} matrix (write it row by row: "
                    "dense<[[row 0], [row 1], ...]>)",
                    literal_pos,
                    literal_end,
                )
            data = literal_bytes(parser, elements, element_type)
            # A large splat is held as its one value (see dense_matrix_value).
            if not shape and t.num_elements <= MAX_CONSTANT_ELEMENTS:
                data *= t.num_elements
        tensor: Any = TensorType(element_type, t.shape)
        value = DenseIntOrFPElementsAttr(tensor, BytesAttr(data))
        return cls.create(
            result_types=[t], properties={"value": value}, attributes=attributes
        )

    def print(self, printer: Printer) -> None:
        t = _matrix_type(self.result, "result")
        element_type = t.element_type
        # Floats by their bits, so that NaN payloads and -0.0 are kept apart.
        bits = (
            list(cast(tuple[int, ...], self._stored_values()))
            if isinstance(element_type, IntegerType)
            else list(element_bits(self.value))
        )

        def print_value(v: int) -> None:
            if isinstance(element_type, IntegerType):
                printer.print_string(str(v))
            else:
                print_float_bits(printer, v, cast(AnyFloat, element_type))

        printer.print_string(" dense<")
        if all(b == bits[0] for b in bits):
            print_value(bits[0])
        else:
            printer.print_string("[")
            for r in range(t.rows):
                if r:
                    printer.print_string(", ")
                printer.print_string("[")
                printer.print_list(bits[r * t.cols : (r + 1) * t.cols], print_value)
                printer.print_string("]")
            printer.print_string("]")
        printer.print_string(">")
        printer.print_op_attributes(self.attributes)
        printer.print_string(" : ")
        printer.print_attribute(t)

    def verify_(self) -> None:
        t = _matrix_type(self.result, "result")
        value_type = self.value.get_type()
        if (
            not isinstance(value_type, TensorType)
            or tuple(value_type.get_shape()) != t.shape
        ):
            raise VerifyException(
                f"constant value of type '{value_type}' does not have the "
                f"{t.rows}x{t.cols} shape of the result"
            )
        if value_type.element_type != t.element_type:
            raise VerifyException(
                f"constant value has element type '{value_type.element_type}' but "
                f"the result has '{t.element_type}'"
            )


class IndexedOp(MatrixOp, ABC):
    """Ops addressing one element with `[%i, %j]`, each static or dynamic."""

    static_indices = prop_def(DenseArrayBase.constr(i64))
    dynamic_indices = var_operand_def(IndexType)

    def indices(self) -> list[MixedIndex]:
        return join_mixed(self.static_indices, self.dynamic_indices)

    def _verify_indices(self, t: MatrixType) -> None:
        verify_mixed(self.static_indices, self.dynamic_indices, 2)
        row, col = self.indices()
        _static_index_error("row index", row, t.rows)
        _static_index_error("column index", col, t.cols)


def _parse_index_pair(parser: Parser) -> list[int | UnresolvedOperand]:
    pos = parser.pos
    indices = parser.parse_comma_separated_list(
        parser.Delimiter.SQUARE, lambda: parse_mixed_index(parser)
    )
    if len(indices) != 2:
        parser.raise_error(
            f"expected two indices [row, column], got {len(indices)}", pos, parser.pos
        )
    return indices


def _print_index_list(printer: Printer, values: Sequence[MixedIndex]) -> None:
    printer.print_string("[")
    printer.print_list(values, lambda v: print_mixed(printer, v))
    printer.print_string("]")


@irdl_op_definition
class ExtractOp(IndexedOp):
    """The element at row %i, column %j: `%e = matrix.extract %m[%i, %j] : T`."""

    name = "matrix.extract"
    irdl_options = (AttrSizedOperandSegments(as_property=True),)
    matrix = operand_def(MatrixType)
    result = result_def()
    traits = traits_def(Pure())

    def __init__(self, matrix: SSAValue, indices: Sequence[MixedIndex]):
        static, dynamic = build_mixed(indices)
        t = matrix.type
        assert isinstance(t, MatrixType)
        super().__init__(
            operands=[matrix, dynamic],
            result_types=[t.element_type],
            properties={"static_indices": static},
        )

    @classmethod
    def parse(cls, parser: Parser) -> Self:
        matrix = parser.parse_unresolved_operand()
        indices = _parse_index_pair(parser)
        attributes = parser.parse_optional_attr_dict()
        parser.parse_punctuation(":")
        pos = parser.pos
        t = parser.parse_type()
        if not isinstance(t, MatrixType):
            parser.raise_error(f"expected a matrix type, got '{t}'", pos, parser.pos)
        static, dynamic = split_mixed(parser, indices)
        return cls.build(
            operands=[parser.resolve_operand(matrix, t), dynamic],
            result_types=[t.element_type],
            properties={"static_indices": static},
            attributes=attributes,
        )

    def print(self, printer: Printer) -> None:
        printer.print_string(" ")
        printer.print_operand(self.matrix)
        _print_index_list(printer, self.indices())
        printer.print_op_attributes(self.attributes)
        printer.print_string(" : ")
        printer.print_attribute(self.matrix.type)

    def verify_(self) -> None:
        t = _matrix_type(self.matrix, "operand")
        self._verify_indices(t)
        if self.result.type != t.element_type:
            raise VerifyException(
                f"result type '{self.result.type}' is not the element type "
                f"'{t.element_type}' of the matrix"
            )


@irdl_op_definition
class InsertOp(IndexedOp):
    """A new matrix equal to %m except at (%i, %j): `matrix.insert %e, %m[%i, %j] : T`."""

    name = "matrix.insert"
    irdl_options = (AttrSizedOperandSegments(as_property=True),)
    element = operand_def()
    matrix = operand_def(MatrixType)
    result = result_def(MatrixType)
    traits = traits_def(Pure())

    def __init__(
        self, element: SSAValue, matrix: SSAValue, indices: Sequence[MixedIndex]
    ):
        static, dynamic = build_mixed(indices)
        super().__init__(
            operands=[element, matrix, dynamic],
            result_types=[matrix.type],
            properties={"static_indices": static},
        )

    @classmethod
    def parse(cls, parser: Parser) -> Self:
        element = parser.parse_unresolved_operand()
        parser.parse_punctuation(",")
        matrix = parser.parse_unresolved_operand()
        indices = _parse_index_pair(parser)
        attributes = parser.parse_optional_attr_dict()
        parser.parse_punctuation(":")
        pos = parser.pos
        t = parser.parse_type()
        if not isinstance(t, MatrixType):
            parser.raise_error(f"expected a matrix type, got '{t}'", pos, parser.pos)
        static, dynamic = split_mixed(parser, indices)
        return cls.build(
            operands=[
                parser.resolve_operand(element, t.element_type),
                parser.resolve_operand(matrix, t),
                dynamic,
            ],
            result_types=[t],
            properties={"static_indices": static},
            attributes=attributes,
        )

    def print(self, printer: Printer) -> None:
        printer.print_string(" ")
        printer.print_operand(self.element)
        printer.print_string(", ")
        printer.print_operand(self.matrix)
        _print_index_list(printer, self.indices())
        printer.print_op_attributes(self.attributes)
        printer.print_string(" : ")
        printer.print_attribute(self.result.type)

    def verify_(self) -> None:
        t = _matrix_type(self.matrix, "operand")
        self._verify_indices(t)
        _require_same_type([("matrix operand", t), ("result", self.result.type)])
        if self.element.type != t.element_type:
            raise VerifyException(
                f"inserted element has type '{self.element.type}' but the matrix "
                f"element type is '{t.element_type}'"
            )


# ---------------------------------------------------------------------------
# Products, transpose, cast
# ---------------------------------------------------------------------------

_FLOAT_WIDENINGS: dict[type[Attribute], tuple[type[Attribute], ...]] = {
    Float16Type: (Float32Type, Float64Type),
    BFloat16Type: (Float32Type, Float64Type),
    Float32Type: (Float64Type,),
}
"""Float element types and the wider ones holding each of their values."""


def widens_exactly(source: Attribute, target: Attribute) -> bool:
    """True if every `source` element converts exactly to `target` (docs/matrix-dialect.md
    "Mixed-precision contractions"): the same type, a wider arithmetic integer
    (sign- or zero-extended), or f16/bf16 -> f32/f64, f32 -> f64."""
    if source == target:
        return True
    if isinstance(source, IntegerType) and isinstance(target, IntegerType):
        return (
            is_arithmetic_element(source)
            and is_arithmetic_element(target)
            and source.width.data < target.width.data
        )
    return type(target) in _FLOAT_WIDENINGS.get(type(source), ())


def _verify_contraction_elements(
    op_name: str,
    operands: Sequence[tuple[str, Attribute]],
    result: Attribute,
    unsigned: bool,
) -> None:
    """Each factor's element type is the result's or widens exactly to it;
    `{unsigned}` needs an integer factor that is widened."""
    for role, t in operands:
        if not is_arithmetic_element(t):
            raise VerifyException(
                f"{role} has element type '{t}', which is a bit container without "
                f"arithmetic and does not widen to the result element type "
                f"'{result}' (convert it with arbfp first)"
            )
    if not is_arithmetic_element(result):
        raise VerifyException(
            f"result has element type '{result}', which is a bit container "
            "without arithmetic"
        )
    for role, t in operands:
        if not widens_exactly(t, result):
            raise VerifyException(
                f"matrix element type mismatch in '{op_name}': {role} has '{t}', "
                f"which does not widen exactly to the result element type '{result}'"
            )
    if not unsigned:
        return
    described = " and ".join(f"{role} '{t}'" for role, t in operands)
    if is_float_element(result):
        raise VerifyException(
            f"'unsigned' in '{op_name}' is only allowed on integer elements, "
            f"but it has {described} and result '{result}'"
        )
    if all(t == result for _, t in operands):
        raise VerifyException(
            f"'unsigned' in '{op_name}' needs an integer operand narrower than the "
            f"result, but it has {described} and result '{result}'"
        )


def _verify_inner_dimensions(
    op_name: str, lhs: MatrixType, rhs_rows: int, rhs_cols: int, rhs_role: str
) -> None:
    if lhs.cols != rhs_rows:
        raise VerifyException(
            f"inner dimensions of '{op_name}' do not agree: lhs is "
            f"{lhs.rows}x{lhs.cols} but {rhs_role} has {rhs_rows} rows"
            + ("" if rhs_cols < 0 else f" ({rhs_rows}x{rhs_cols})")
        )


def element_type_of(t: Attribute) -> Attribute:
    """The element type of a matrix or vector type (`t` itself otherwise)."""
    if isinstance(t, MatrixType):
        return t.element_type
    if isinstance(t, VectorType):
        return cast(VectorType[Attribute], t).element_type
    return t


class ContractionOp(MatrixOp, ABC):
    """matmul, matmul_add, matvec: the factors may be narrower than the result
    (mixed precision); `{unsigned}` zero-extends integer factors."""

    result = result_def()
    fastmath = prop_def(FastMathFlagsAttr, default_value=FastMathFlagsAttr("none"))
    unsigned = opt_prop_def(UnitAttr)
    traits = traits_def(Pure())
    irdl_options = (ParsePropInAttrDict(),)

    @property
    def factors(self) -> tuple[SSAValue, SSAValue]:
        """The two operands that are multiplied (A and B, or M and x)."""
        return self.operands[0], self.operands[1]

    @property
    def result_element(self) -> Attribute:
        return element_type_of(self.result.type)

    def is_mixed(self) -> bool:
        """True if a factor is narrower than the result."""
        return any(element_type_of(v.type) != self.result_element for v in self.factors)

    def _verify_elements(self, roles: tuple[str, str]) -> None:
        _verify_contraction_elements(
            self.name,
            [
                (role, element_type_of(v.type))
                for role, v in zip(roles, self.factors, strict=True)
            ],
            self.result_element,
            self.unsigned is not None,
        )
        _verify_fastmath(self.fastmath, self.result_element)


def _contraction_properties(
    fastmath: FastMathFlagsAttr | None, unsigned: bool
) -> dict[str, Attribute]:
    properties: dict[str, Attribute] = {
        "fastmath": fastmath or FastMathFlagsAttr("none")
    }
    if unsigned:
        properties["unsigned"] = UnitAttr()
    return properties


@irdl_op_definition
class MatmulOp(ContractionOp):
    """Matrix product, accumulated left to right over k (docs/matrix-dialect.md)."""

    name = "matrix.matmul"
    lhs = operand_def(MatrixType)
    rhs = operand_def(MatrixType)
    result = result_def(MatrixType)
    assembly_format = (
        "$lhs `,` $rhs (`fastmath` `` $fastmath^)? attr-dict `:` "
        "type($lhs) `,` type($rhs) `->` type($result)"
    )

    def __init__(
        self,
        lhs: SSAValue,
        rhs: SSAValue,
        fastmath: FastMathFlagsAttr | None = None,
        result_element: Attribute | None = None,
        unsigned: bool = False,
    ):
        a, b = lhs.type, rhs.type
        assert isinstance(a, MatrixType) and isinstance(b, MatrixType)
        element = result_element or a.element_type
        super().__init__(
            operands=[lhs, rhs],
            result_types=[MatrixType(a.rows, b.cols, element)],
            properties=_contraction_properties(fastmath, unsigned),
        )

    def verify_(self) -> None:
        a = _matrix_type(self.lhs, "lhs")
        b = _matrix_type(self.rhs, "rhs")
        self._verify_elements(("lhs", "rhs"))
        _verify_inner_dimensions(self.name, a, b.rows, b.cols, "rhs")
        _verify_result(
            self.result.type, MatrixType(a.rows, b.cols, self.result_element)
        )


def _verify_result(actual: Attribute, expected: Attribute) -> None:
    if actual != expected:
        raise VerifyException(f"result type '{actual}' should be '{expected}'")


@irdl_op_definition
class MatmulAddOp(ContractionOp):
    """A·B + C, rounded as add(matmul(a, b), c) (HLSL multiply-accumulate)."""

    name = "matrix.matmul_add"
    lhs = operand_def(MatrixType)
    rhs = operand_def(MatrixType)
    acc = operand_def(MatrixType)
    result = result_def(MatrixType)
    assembly_format = (
        "$lhs `,` $rhs `,` $acc (`fastmath` `` $fastmath^)? attr-dict `:` "
        "type($lhs) `,` type($rhs) `,` type($acc) `->` type($result)"
    )

    def __init__(
        self,
        lhs: SSAValue,
        rhs: SSAValue,
        acc: SSAValue,
        fastmath: FastMathFlagsAttr | None = None,
        unsigned: bool = False,
    ):
        super().__init__(
            operands=[lhs, rhs, acc],
            result_types=[acc.type],
            properties=_contraction_properties(fastmath, unsigned),
        )

    def verify_(self) -> None:
        a = _matrix_type(self.lhs, "lhs")
        b = _matrix_type(self.rhs, "rhs")
        self._verify_elements(("lhs", "rhs"))
        _verify_inner_dimensions(self.name, a, b.rows, b.cols, "rhs")
        expected = MatrixType(a.rows, b.cols, self.result_element)
        _require_same_type([("product", expected), ("accumulator", self.acc.type)])
        _verify_result(self.result.type, expected)


def _vector_type(value: SSAValue, role: str) -> VectorType[Attribute]:
    t = value.type
    if (
        not isa(t, VectorType[Attribute])
        or t.get_num_dims() != 1
        or t.get_num_scalable_dims()
    ):
        raise VerifyException(f"{role} must be a 1-D fixed-length vector, got '{t}'")
    return t


@irdl_op_definition
class MatvecOp(ContractionOp):
    """Matrix-vector product, optionally plus a bias (HLSL MatVecMul / MatVecMulAdd)."""

    name = "matrix.matvec"
    matrix = operand_def(MatrixType)
    vector = operand_def(VectorType)
    bias = opt_operand_def(VectorType)
    result = result_def(VectorType)
    assembly_format = (
        "$matrix `,` $vector (`,` $bias^)? (`fastmath` `` $fastmath^)? attr-dict `:` "
        "type($matrix) `,` type($vector) (`,` type($bias)^)? `->` type($result)"
    )

    def __init__(
        self,
        matrix: SSAValue,
        vector: SSAValue,
        bias: SSAValue | None = None,
        fastmath: FastMathFlagsAttr | None = None,
        result_element: Attribute | None = None,
        unsigned: bool = False,
    ):
        m = matrix.type
        assert isinstance(m, MatrixType)
        element = result_element or m.element_type
        super().__init__(
            operands=[matrix, vector, bias],
            result_types=[VectorType(element, [m.rows])],
            properties=_contraction_properties(fastmath, unsigned),
        )

    def verify_(self) -> None:
        m = _matrix_type(self.matrix, "matrix operand")
        x = _vector_type(self.vector, "vector operand")
        _vector_type(self.result, "result")
        self._verify_elements(("matrix operand", "vector operand"))
        _verify_inner_dimensions(self.name, m, x.get_shape()[0], -1, "vector operand")
        expected = VectorType(self.result_element, [m.rows])
        if self.bias is not None:
            _vector_type(self.bias, "bias")
            if self.bias.type != expected:
                raise VerifyException(
                    f"bias type '{self.bias.type}' should be '{expected}'"
                )
        _verify_result(self.result.type, expected)


@irdl_op_definition
class OuterProductOp(MatrixOp):
    """m[r][c] = u[r] * v[c]."""

    name = "matrix.outer_product"
    lhs = operand_def(VectorType)
    rhs = operand_def(VectorType)
    result = result_def(MatrixType)
    fastmath = prop_def(FastMathFlagsAttr, default_value=FastMathFlagsAttr("none"))
    traits = traits_def(Pure())
    assembly_format = (
        "$lhs `,` $rhs (`fastmath` `` $fastmath^)? attr-dict `:` "
        "type($lhs) `,` type($rhs) `->` type($result)"
    )

    def __init__(self, lhs: SSAValue, rhs: SSAValue):
        u, v = lhs.type, rhs.type
        assert isa(u, VectorType[Attribute]) and isa(v, VectorType[Attribute])
        super().__init__(
            operands=[lhs, rhs],
            result_types=[
                MatrixType(u.get_shape()[0], v.get_shape()[0], u.element_type)
            ],
        )

    def verify_(self) -> None:
        u = _vector_type(self.lhs, "lhs")
        v = _vector_type(self.rhs, "rhs")
        if u.element_type != v.element_type:
            raise VerifyException(
                f"vector element type mismatch: lhs has '{u.element_type}' but rhs "
                f"has '{v.element_type}'"
            )
        expected = MatrixType(u.get_shape()[0], v.get_shape()[0], u.element_type)
        _require_arithmetic(expected, "result")
        _verify_result(self.result.type, expected)
        _verify_fastmath(self.fastmath, u.element_type)


@irdl_op_definition
class TransposeOp(MatrixOp):
    """`%t = matrix.transpose %a : !matrix.matrix<RxCxT> -> !matrix.matrix<CxRxT>`."""

    name = "matrix.transpose"
    input = operand_def(MatrixType)
    result = result_def(MatrixType)
    traits = traits_def(Pure())
    assembly_format = "$input attr-dict `:` type($input) `->` type($result)"

    def __init__(self, input: SSAValue):
        t = input.type
        assert isinstance(t, MatrixType)
        super().__init__(operands=[input], result_types=[t.transposed()])

    def verify_(self) -> None:
        _verify_result(
            self.result.type, _matrix_type(self.input, "operand").transposed()
        )


@irdl_op_definition
class CastOp(MatrixOp):
    """Elementwise C conversion between matrix types of one shape."""

    name = "matrix.cast"
    input = operand_def(MatrixType)
    result = result_def(MatrixType)
    unsigned = opt_prop_def(UnitAttr)
    traits = traits_def(Pure())
    irdl_options = (ParsePropInAttrDict(),)
    assembly_format = "$input attr-dict `:` type($input) `to` type($result)"

    def __init__(
        self, input: SSAValue, result_type: MatrixType, unsigned: bool = False
    ):
        super().__init__(
            operands=[input],
            result_types=[result_type],
            properties={"unsigned": UnitAttr()} if unsigned else {},
        )

    def verify_(self) -> None:
        source = _matrix_type(self.input, "operand")
        target = _matrix_type(self.result, "result")
        if source.shape != target.shape:
            raise VerifyException(
                f"conversion between matrix types of different shape: "
                f"'{source}' and '{target}'"
            )
        _require_arithmetic(source, "operand")
        _require_arithmetic(target, "result")
        if self.unsigned is not None and not (
            isinstance(source.element_type, IntegerType)
            or isinstance(target.element_type, IntegerType)
        ):
            raise VerifyException("'unsigned' needs an integer source or result")


# ---------------------------------------------------------------------------
# Loads and stores: the only place a matrix has a layout
# ---------------------------------------------------------------------------


class MemoryAccessOp(MatrixOp, ABC):
    """Column- or row-major access `%mem[%off] stride %s` (stride defaults to the
    leading dimension). Layout facts are class-level; `static_layout` holds
    [offset, stride] with dynamic entries taken from `dynamic_layout`."""

    COLUMN_MAJOR: ClassVar[bool]

    static_layout = prop_def(DenseArrayBase.constr(i64))
    dynamic_layout = var_operand_def(IndexType)
    packed = opt_prop_def(UnitAttr)
    """Sub-byte elements packed in an `i8` bit stream (`packed_element_bits`)."""

    def accessed_type(self) -> Attribute:
        raise NotImplementedError

    def memory(self) -> SSAValue:
        raise NotImplementedError

    @property
    def is_packed(self) -> bool:
        return self.packed is not None

    def offset(self) -> MixedIndex:
        return join_mixed(self.static_layout, self.dynamic_layout)[0]

    def stride(self) -> MixedIndex:
        return join_mixed(self.static_layout, self.dynamic_layout)[1]

    @classmethod
    def default_stride(cls, t: MatrixType) -> int:
        return t.rows if cls.COLUMN_MAJOR else t.cols

    @classmethod
    def element_position(cls, r: int, c: int, stride: int) -> int:
        """Distance of element (r, c) from the offset."""
        return c * stride + r if cls.COLUMN_MAJOR else r * stride + c

    def _verify_layout(self) -> None:
        verify_mixed(self.static_layout, self.dynamic_layout, 2)
        t = _matrix_type_of(self.accessed_type())
        mem = self.memory().type
        if not isa(mem, MemRefType[Attribute]) or mem.get_num_dims() != 1:
            raise VerifyException(f"memory operand must be a 1-D memref, got '{mem}'")
        width = packed_element_bits(t.element_type)
        if self.is_packed:
            if width is None:
                raise VerifyException(
                    f"'packed' needs an i4 or i6 matrix, got element type "
                    f"'{t.element_type}'"
                )
            if mem.element_type != IntegerType(8):
                raise VerifyException(
                    f"a packed access needs a memref of i8 bytes, got element "
                    f"type '{mem.element_type}'"
                )
        elif mem.element_type != t.element_type:
            raise VerifyException(
                f"memref element type '{mem.element_type}' does not match the "
                f"matrix element type '{t.element_type}'"
            )
        if not isinstance(mem.layout, NoneAttr) and not (
            isinstance(mem.layout, AffineMapAttr)
            and mem.layout.data == AffineMap.identity(1)
        ):
            raise VerifyException(
                f"memref must have the identity layout, got '{mem.layout}'"
            )
        offset, stride = self.offset(), self.stride()
        if isinstance(offset, int) and offset < 0:
            raise VerifyException(f"offset {offset} is negative")
        if isinstance(stride, int) and stride < self.default_stride(t):
            what = "rows" if self.COLUMN_MAJOR else "columns"
            raise VerifyException(
                f"stride must be greater than or equal to the number of {what} "
                f"(stride {stride}, {self.default_stride(t)} {what})"
            )
        (size,) = mem.get_shape()
        last = self.last_position()
        if size != DYNAMIC_INDEX and last is not None:
            if self.is_packed and width is not None:
                last_byte = (width * (last + 1) - 1) // 8
                if last_byte >= size:
                    raise VerifyException(
                        f"access past the end of the memref: the last element "
                        f"(at position {last}) ends in byte {last_byte} but the "
                        f"memref has {size} bytes"
                    )
            elif last >= size:
                raise VerifyException(
                    f"access past the end of the memref: the last element is at "
                    f"index {last} but the memref has {size} elements"
                )

    def last_position(self) -> int | None:
        """Position of the last element accessed (offset included), when the
        offset and stride are static."""
        offset, stride = self.offset(), self.stride()
        if not (isinstance(offset, int) and isinstance(stride, int)):
            return None
        t = _matrix_type_of(self.accessed_type())
        return offset + self.element_position(t.rows - 1, t.cols - 1, stride)

    def static_extent(self) -> int | None:
        """Memref elements (bytes, if packed) the access needs from the start
        of the memref, when the offset and stride are static."""
        last = self.last_position()
        if last is None:
            return None
        width = packed_element_bits(_matrix_type_of(self.accessed_type()).element_type)
        if self.is_packed and width is not None:
            return (width * (last + 1) - 1) // 8 + 1
        return last + 1

    def _print_layout(self, printer: Printer, t: MatrixType) -> None:
        printer.print_operand(self.memory())
        _print_index_list(printer, [self.offset()])
        stride = self.stride()
        if stride != self.default_stride(t):
            printer.print_string(" stride ")
            print_mixed(printer, stride)
        if self.is_packed:
            printer.print_string(" packed")

    @classmethod
    def _parse_layout(
        cls, parser: Parser
    ) -> tuple[
        UnresolvedOperand,
        int | UnresolvedOperand,
        int | UnresolvedOperand | None,
        dict[str, Attribute],
    ]:
        """`%mem[%off] [stride %s] [packed]`; the last item holds the
        `packed` property if the keyword is present."""
        memory = parser.parse_unresolved_operand()
        pos = parser.pos
        offset = parser.parse_comma_separated_list(
            parser.Delimiter.SQUARE, lambda: parse_mixed_index(parser)
        )
        if len(offset) != 1:
            parser.raise_error("expected one offset `[%off]`", pos, parser.pos)
        stride = (
            parse_mixed_index(parser)
            if parser.parse_optional_keyword("stride")
            else None
        )
        packed = parser.parse_optional_keyword("packed") is not None
        return memory, offset[0], stride, {"packed": UnitAttr()} if packed else {}


def packed_element_bits(element_type: Attribute) -> int | None:
    """Bits per element of a packed access (4 or 6), None for other types."""
    if (
        isinstance(element_type, IntegerType)
        and element_type.signedness.data == Signedness.SIGNLESS
        and element_type.width.data in CONTAINER_INT_WIDTHS
    ):
        return element_type.width.data
    return None


def _layout_properties(
    static: DenseArrayBase[I64], packed: bool
) -> dict[str, Attribute]:
    properties: dict[str, Attribute] = {"static_layout": static}
    if packed:
        properties["packed"] = UnitAttr()
    return properties


def _matrix_type_of(t: Attribute) -> MatrixType:
    if not isinstance(t, MatrixType):
        raise VerifyException(f"expected a matrix type, got '{t}'")
    return t


class LoadOp(MemoryAccessOp, ABC):
    irdl_options = (AttrSizedOperandSegments(as_property=True),)
    memref = operand_def(MemRefType)
    result = result_def(MatrixType)
    traits = traits_def(MemoryReadEffect())

    def __init__(
        self,
        memref: SSAValue,
        result_type: MatrixType,
        offset: MixedIndex = 0,
        stride: MixedIndex | None = None,
        packed: bool = False,
    ):
        stride = self.default_stride(result_type) if stride is None else stride
        static, dynamic = build_mixed([offset, stride])
        super().__init__(
            operands=[memref, dynamic],
            result_types=[result_type],
            properties=_layout_properties(static, packed),
        )

    def accessed_type(self) -> Attribute:
        return self.result.type

    def memory(self) -> SSAValue:
        return self.memref

    @classmethod
    def parse(cls, parser: Parser) -> Self:
        memory, offset, stride, packed = cls._parse_layout(parser)
        attributes = parser.parse_optional_attr_dict()
        parser.parse_punctuation(":")
        mem_type = parser.parse_type()
        parser.parse_punctuation("->")
        pos = parser.pos
        t = parser.parse_type()
        if not isinstance(t, MatrixType):
            parser.raise_error(f"expected a matrix type, got '{t}'", pos, parser.pos)
        static, dynamic = split_mixed(
            parser, [offset, cls.default_stride(t) if stride is None else stride]
        )
        return cls.build(
            operands=[parser.resolve_operand(memory, mem_type), dynamic],
            result_types=[t],
            properties={"static_layout": static, **packed},
            attributes=attributes,
        )

    def print(self, printer: Printer) -> None:
        t = _matrix_type_of(self.result.type)
        printer.print_string(" ")
        self._print_layout(printer, t)
        printer.print_op_attributes(self.attributes)
        printer.print_string(" : ")
        printer.print_attribute(self.memref.type)
        printer.print_string(" -> ")
        printer.print_attribute(t)

    def verify_(self) -> None:
        self._verify_layout()


class StoreOp(MemoryAccessOp, ABC):
    irdl_options = (AttrSizedOperandSegments(as_property=True),)
    value = operand_def(MatrixType)
    memref = operand_def(MemRefType)
    traits = traits_def(MemoryWriteEffect())

    def __init__(
        self,
        value: SSAValue,
        memref: SSAValue,
        offset: MixedIndex = 0,
        stride: MixedIndex | None = None,
        packed: bool = False,
    ):
        t = value.type
        assert isinstance(t, MatrixType)
        stride = self.default_stride(t) if stride is None else stride
        static, dynamic = build_mixed([offset, stride])
        super().__init__(
            operands=[value, memref, dynamic],
            properties=_layout_properties(static, packed),
        )

    def accessed_type(self) -> Attribute:
        return self.value.type

    def memory(self) -> SSAValue:
        return self.memref

    @classmethod
    def parse(cls, parser: Parser) -> Self:
        value = parser.parse_unresolved_operand()
        parser.parse_punctuation(",")
        memory, offset, stride, packed = cls._parse_layout(parser)
        attributes = parser.parse_optional_attr_dict()
        parser.parse_punctuation(":")
        pos = parser.pos
        t = parser.parse_type()
        if not isinstance(t, MatrixType):
            parser.raise_error(f"expected a matrix type, got '{t}'", pos, parser.pos)
        parser.parse_punctuation(",")
        mem_type = parser.parse_type()
        static, dynamic = split_mixed(
            parser, [offset, cls.default_stride(t) if stride is None else stride]
        )
        return cls.build(
            operands=[
                parser.resolve_operand(value, t),
                parser.resolve_operand(memory, mem_type),
                dynamic,
            ],
            properties={"static_layout": static, **packed},
            attributes=attributes,
        )

    def print(self, printer: Printer) -> None:
        t = _matrix_type_of(self.value.type)
        printer.print_string(" ")
        printer.print_operand(self.value)
        printer.print_string(", ")
        self._print_layout(printer, t)
        printer.print_op_attributes(self.attributes)
        printer.print_string(" : ")
        printer.print_attribute(t)
        printer.print_string(", ")
        printer.print_attribute(self.memref.type)

    def verify_(self) -> None:
        self._verify_layout()


@irdl_op_definition
class ColumnMajorLoadOp(LoadOp):
    """Element (r, c) read from `%mem[%off + c*%s + r]`."""

    name = "matrix.column_major_load"
    COLUMN_MAJOR: ClassVar[bool] = True


@irdl_op_definition
class RowMajorLoadOp(LoadOp):
    """Element (r, c) read from `%mem[%off + r*%s + c]`."""

    name = "matrix.row_major_load"
    COLUMN_MAJOR: ClassVar[bool] = False


@irdl_op_definition
class ColumnMajorStoreOp(StoreOp):
    """Writes element (r, c) to `%mem[%off + c*%s + r]`; padding untouched."""

    name = "matrix.column_major_store"
    COLUMN_MAJOR: ClassVar[bool] = True


@irdl_op_definition
class RowMajorStoreOp(StoreOp):
    """Writes element (r, c) to `%mem[%off + r*%s + c]`; padding untouched."""

    name = "matrix.row_major_store"
    COLUMN_MAJOR: ClassVar[bool] = False


class MatrixConstantMaterialization(ConstantMaterializationInterface):
    """Lets folders return dense attributes that become `matrix.constant`."""

    def materialize_constant(
        self, value: Attribute, type: Attribute
    ) -> Operation | None:
        if isinstance(value, DenseIntOrFPElementsAttr) and isinstance(type, MatrixType):
            return ConstantOp(value, type)
        return None


Matrix = Dialect(
    "matrix",
    [
        SplatOp,
        ConstantOp,
        ExtractOp,
        InsertOp,
        AddOp,
        SubOp,
        MulOp,
        DivOp,
        NegOp,
        MatmulOp,
        MatmulAddOp,
        FmaOp,
        TransposeOp,
        CastOp,
        MatvecOp,
        OuterProductOp,
        ColumnMajorLoadOp,
        ColumnMajorStoreOp,
        RowMajorLoadOp,
        RowMajorStoreOp,
    ],
    [MatrixType],
    [MatrixConstantMaterialization()],
)

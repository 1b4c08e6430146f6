"""The `matrix` dialect: fixed-size matrices as SSA values (Clang MatrixTypes, HLSL 0035).

The ops, their verifiers and their syntax (`assembly_format`s, with the custom
directives of `mx.dialects.directives`). The type is in `mx.dialects.matrix_type`,
mixed literal/SSA index lists in `mx.dialects.mixed_index`; their names are
importable from here too."""

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
    SSAValue,
)
from xdsl.ir.affine import AffineMap
from xdsl.irdl import (
    AttrSizedOperandSegments,
    IRDLOperation,
    ParsePropInAttrDict,
    irdl_op_definition,
    operand_def,
    opt_operand_def,
    opt_prop_def,
    prop_def,
    result_def,
    traits_def,
    var_operand_def,
)
from xdsl.parser import Parser
from xdsl.pattern_rewriter import RewritePattern
from xdsl.printer import Printer
from xdsl.traits import ConstantLike, MemoryReadEffect, MemoryWriteEffect, Pure
from xdsl.utils.exceptions import VerifyException
from xdsl.utils.hints import isa
from xdsl.utils.lexer import Position
from xdsl.utils.mlir_lexer import MLIRTokenKind

from mx.dialects import directives
from mx.dialects.dense_literal import (
    Element,
    element_bits,
    literal_bytes,
    parse_optional_hex_string,
    print_float_bits,
)
from mx.dialects.matrix_type import (
    ARITHMETIC_INT_WIDTHS as ARITHMETIC_INT_WIDTHS,
)
from mx.dialects.matrix_type import (
    CONTAINER_INT_WIDTHS,
    MatrixType,
    is_arithmetic_element,
    is_float_element,
)
from mx.dialects.matrix_type import (
    MAX_DIM as MAX_DIM,
)
from mx.dialects.matrix_type import (
    FloatElement as FloatElement,
)
from mx.dialects.matrix_type import (
    dimension_error as dimension_error,
)
from mx.dialects.matrix_type import (
    is_valid_element as is_valid_element,
)
from mx.dialects.mixed_index import (
    DYNAMIC as DYNAMIC,
)
from mx.dialects.mixed_index import (
    MixedIndex,
    build_mixed,
    join_mixed,
    verify_mixed,
)
from mx.dialects.mixed_index import (
    is_literal_index as is_literal_index,
)
from mx.xdsl_compat.parser import (
    at_token,
    parse_tensor_literal,
    resume_from,
)

# ---------------------------------------------------------------------------
# Shared verification helpers
# ---------------------------------------------------------------------------


def _static_index_error(what: str, value: MixedIndex, bound: int) -> None:
    if isinstance(value, int) and not 0 <= value < bound:
        raise VerifyException(f"{what} {value} is outside [0, {bound})")


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


SAME_TYPE_SUFFIX = (
    "(`fastmath` `` $fastmath^)? attr-dict `:` custom<MatrixType>(type($result)) "
    "custom<SameType>(type(operands), ref(type($result)))"
)
"""The syntax after the operands of the elementwise ops: one type for all."""


class SameTypeOp(MatrixOp, ABC):
    """`%r = matrix.<op> %a, ... [fastmath<...>] [{unsigned}] : T`."""

    ARITY: ClassVar[int]
    FLOAT_ONLY: ClassVar[bool] = False

    result = result_def(MatrixType)
    fastmath = prop_def(FastMathFlagsAttr, default_value=FastMathFlagsAttr("none"))
    traits = traits_def(Pure())
    irdl_options = (ParsePropInAttrDict(),)
    custom_directives = (directives.MatrixType, directives.SameType)

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
    assembly_format = "$lhs `,` $rhs " + SAME_TYPE_SUFFIX


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
    assembly_format = "$input " + SAME_TYPE_SUFFIX


@irdl_op_definition
class FmaOp(SameTypeOp):
    """Elementwise a*b+c with a single rounding (floating-point only)."""

    name = "matrix.fma"
    ARITY: ClassVar[int] = 3
    FLOAT_ONLY: ClassVar[bool] = True
    a = operand_def(MatrixType)
    b = operand_def(MatrixType)
    c = operand_def(MatrixType)
    assembly_format = "$a `,` $b `,` $c " + SAME_TYPE_SUFFIX


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
    custom_directives = (directives.MatrixType, directives.ElementType)
    assembly_format = (
        "$input attr-dict `:` custom<MatrixType>(type($result)) "
        "custom<ElementType>(type($input), ref(type($result)))"
    )

    def __init__(self, input: SSAValue, result_type: MatrixType):
        super().__init__(operands=[input], result_types=[result_type])

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

    # Hand-written: the literal's body is read as the element type of the
    # matrix type written after it, which the assembly format cannot express.
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
    irdl_options = (AttrSizedOperandSegments(as_property=True),)
    custom_directives = (
        directives.IndexPair,
        directives.MatrixType,
        directives.SameType,
        directives.ElementType,
    )

    def indices(self) -> list[MixedIndex]:
        return join_mixed(self.static_indices, self.dynamic_indices)

    def _verify_indices(self, t: MatrixType) -> None:
        verify_mixed(self.static_indices, self.dynamic_indices, 2)
        row, col = self.indices()
        _static_index_error("row index", row, t.rows)
        _static_index_error("column index", col, t.cols)


@irdl_op_definition
class ExtractOp(IndexedOp):
    """The element at row %i, column %j: `%e = matrix.extract %m[%i, %j] : T`."""

    name = "matrix.extract"
    matrix = operand_def(MatrixType)
    result = result_def()
    traits = traits_def(Pure())
    assembly_format = (
        "$matrix custom<IndexPair>($dynamic_indices, $static_indices) attr-dict "
        "`:` custom<MatrixType>(type($matrix)) "
        "custom<ElementType>(type($result), ref(type($matrix)))"
    )

    def __init__(self, matrix: SSAValue, indices: Sequence[MixedIndex]):
        static, dynamic = build_mixed(indices)
        t = matrix.type
        assert isinstance(t, MatrixType)
        super().__init__(
            operands=[matrix, dynamic],
            result_types=[t.element_type],
            properties={"static_indices": static},
        )

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
    element = operand_def()
    matrix = operand_def(MatrixType)
    result = result_def(MatrixType)
    traits = traits_def(Pure())
    assembly_format = (
        "$element `,` $matrix custom<IndexPair>($dynamic_indices, $static_indices) "
        "attr-dict `:` custom<MatrixType>(type($result)) "
        "custom<SameType>(type($matrix), ref(type($result))) "
        "custom<ElementType>(type($element), ref(type($result)))"
    )

    def __init__(
        self, element: SSAValue, matrix: SSAValue, indices: Sequence[MixedIndex]
    ):
        static, dynamic = build_mixed(indices)
        super().__init__(
            operands=[element, matrix, dynamic],
            result_types=[matrix.type],
            properties={"static_indices": static},
        )

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
    irdl_options = (AttrSizedOperandSegments(as_property=True),)
    custom_directives = (
        directives.Layout,
        directives.MatrixType,
        directives.DefaultStride,
    )

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
    memref = operand_def(MemRefType)
    result = result_def(MatrixType)
    traits = traits_def(MemoryReadEffect())
    assembly_format = (
        "$memref custom<Layout>($dynamic_layout, $static_layout, ref(type($result))) "
        "(`packed` $packed^)? attr-dict `:` type($memref) `->` "
        "custom<MatrixType>(type($result)) "
        "custom<DefaultStride>(ref($static_layout), ref(type($result)))"
    )

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

    def verify_(self) -> None:
        self._verify_layout()


class StoreOp(MemoryAccessOp, ABC):
    value = operand_def(MatrixType)
    memref = operand_def(MemRefType)
    traits = traits_def(MemoryWriteEffect())
    assembly_format = (
        "$value `,` $memref "
        "custom<Layout>($dynamic_layout, $static_layout, ref(type($value))) "
        "(`packed` $packed^)? attr-dict `:` custom<MatrixType>(type($value)) `,` "
        "type($memref) custom<DefaultStride>(ref($static_layout), ref(type($value)))"
    )

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

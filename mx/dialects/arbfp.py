"""The `arbfp` dialect: integer-encoded small floats (FP8/FP6/FP4) <-> native floats.

See arbfp.md. `%f = arbfp.convert_from f8e4m3fn %bits : i8 to f32` and
`%b = arbfp.convert_to f8e4m3fn %x rounding toward_zero saturate : f32 to i8`.
Operands are scalars, vectors or matrices; the conversion is elementwise.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, ClassVar, cast

import numpy as np
from xdsl.dialect_interfaces.constant_materialization import (
    ConstantMaterializationInterface,
)
from xdsl.dialects import arith
from xdsl.dialects.builtin import (
    DenseIntOrFPElementsAttr,
    FloatAttr,
    IntegerAttr,
    IntegerType,
    Signedness,
    UnitAttr,
    VectorType,
)
from xdsl.dialects.utils import EnumAttribute
from xdsl.interfaces import HasCanonicalizationPatternsInterface, HasFolderInterface
from xdsl.ir import (
    Attribute,
    Dialect,
    Operation,
    SpacedOpaqueSyntaxAttribute,
    SSAValue,
)
from xdsl.irdl import (
    AnyAttr,
    IRDLOperation,
    irdl_attr_definition,
    irdl_op_definition,
    operand_def,
    opt_prop_def,
    prop_def,
    result_def,
    traits_def,
)
from xdsl.pattern_rewriter import RewritePattern
from xdsl.traits import ConstantLike, Pure
from xdsl.utils.exceptions import VerifyException
from xdsl.utils.str_enum import StrEnum

from mx.dialects.matrix import ConstantOp as MatrixConstantOp
from mx.dialects.matrix import FloatElement, MatrixType, dense_matrix_value
from mx.passes.canonicalization.matrix import MAX_FOLDED_ELEMENTS
from mx.semantics.arbfp import (
    FLOAT_DTYPES,
    FORMATS,
    FloatFormat,
    Rounding,
    decode,
    encode,
)

FormatKeyword = cast(
    type[StrEnum], StrEnum("FormatKeyword", {k.upper(): k for k in FORMATS})
)
"""The format keywords of arbfp.md, in table order (derived from `FORMATS`)."""


@irdl_attr_definition
class FormatAttr(EnumAttribute[FormatKeyword], SpacedOpaqueSyntaxAttribute):  # pyright: ignore[reportInvalidTypeArguments]
    """A small float format: `#arbfp<format f8e4m3fn>` (a bare keyword in the ops)."""

    name = "arbfp.format"

    @property
    def format(self) -> FloatFormat:
        return FORMATS[self.data.value]


@irdl_attr_definition
class RoundingAttr(EnumAttribute[Rounding], SpacedOpaqueSyntaxAttribute):
    """A convert_to rounding mode: `#arbfp<rounding toward_zero>`."""

    name = "arbfp.rounding"


def float_type_name(t: Attribute) -> str | None:
    """ "f16", "bf16", "f32" or "f64" for a supported float type, else None."""
    if not isinstance(t, FloatElement):
        return None
    name = str(t)
    return name if name in FLOAT_DTYPES else None


def _shape_and_element(t: Attribute) -> tuple[str, tuple[int, ...], Attribute]:
    """(kind, shape, element type) of a scalar, vector or matrix type."""
    if isinstance(t, MatrixType):
        return "matrix", t.shape, t.element_type
    if isinstance(t, VectorType):
        vector = cast(VectorType, t)
        return "vector", tuple(vector.get_shape()), vector.element_type
    return "scalar", (), t


class ConvertOp(
    IRDLOperation, HasFolderInterface, HasCanonicalizationPatternsInterface
):
    """Shared structure and checks of the two conversions."""

    DECODES: ClassVar[bool]
    """True for convert_from (the operand is the container), False for convert_to."""

    input = operand_def(AnyAttr())
    result = result_def(AnyAttr())
    format = prop_def(FormatAttr)

    traits = traits_def(Pure())

    @property
    def float_format(self) -> FloatFormat:
        return self.format.format

    @property
    def container_type(self) -> Attribute:
        value = self.input if self.DECODES else self.result
        return _shape_and_element(value.type)[2]

    @property
    def float_type(self) -> Attribute:
        value = self.result if self.DECODES else self.input
        return _shape_and_element(value.type)[2]

    def verify_(self) -> None:
        in_kind, in_shape, _ = _shape_and_element(self.input.type)
        out_kind, out_shape, _ = _shape_and_element(self.result.type)
        if in_kind != out_kind:
            raise VerifyException(
                f"operand is a {in_kind} but the result is a {out_kind}: "
                "both must be scalars, vectors or matrices"
            )
        if in_shape != out_shape:
            raise VerifyException(
                f"operand type '{self.input.type}' and result type "
                f"'{self.result.type}' have different shapes"
            )
        if isinstance(self.input.type, VectorType):
            in_vector = cast(VectorType, self.input.type)
            out_vector = cast(VectorType, self.result.type)
            if in_vector.scalable_dims != out_vector.scalable_dims:
                raise VerifyException(
                    f"operand type '{in_vector}' and result type "
                    f"'{out_vector}' have different scalable dimensions"
                )
        fmt = self.float_format
        container = self.container_type
        role = "source" if self.DECODES else "result"
        if (
            not isinstance(container, IntegerType)
            or container.signedness.data != Signedness.SIGNLESS
        ):
            raise VerifyException(
                f"{role} element type '{container}' must be a signless integer "
                f"(the {fmt.bits}-bit container of {fmt.keyword})"
            )
        if container.width.data != fmt.bits:
            raise VerifyException(
                f"'{container}' is not the {fmt.bits}-bit container of {fmt.keyword}"
            )
        float_role = "destination" if self.DECODES else "source"
        if float_type_name(self.float_type) is None:
            raise VerifyException(
                f"{float_role} element type '{self.float_type}' must be "
                "f16, bf16, f32 or f64"
            )

    def evaluate(self, values: np.ndarray) -> np.ndarray:
        """The op's result for operand values given as a NumPy array.

        Containers are any integer dtype (encoding in the low bits) on input; the
        results are the interpreter's arrays: the float type's dtype, or int8 for
        8-bit containers and uint8 (low bits) for i4/i6.
        """
        raise NotImplementedError

    @classmethod
    def get_canonicalization_patterns(cls) -> tuple[RewritePattern, ...]:
        from mx.passes.canonicalization.arbfp import ConvertOfSplat

        return (ConvertOfSplat(),)

    def fold(self) -> Sequence[SSAValue | Attribute] | None:
        constant = ConstantLike.get_constant_value(self.input)
        if isinstance(constant, IntegerAttr | FloatAttr):
            value = cast(IntegerAttr | FloatAttr, constant).value.data
            result = self.evaluate(np.array([value]))[0].item()
            if isinstance(self.result.type, IntegerType):
                return (IntegerAttr(result, self.result.type, truncate_bits=True),)
            return (FloatAttr(result, cast(FloatElement, self.result.type)),)
        if not isinstance(constant, DenseIntOrFPElementsAttr):
            return None
        dense = cast(DenseIntOrFPElementsAttr, constant)
        result_type = self.result.type
        if isinstance(result_type, VectorType):
            results = self.evaluate(np.array(dense.get_values()))
            vector = cast(Any, result_type)  # a vector of int or float
            return (DenseIntOrFPElementsAttr.from_list(vector, results.tolist()),)
        if (
            isinstance(result_type, MatrixType)
            and result_type.num_elements <= MAX_FOLDED_ELEMENTS
        ):
            # A matrix.constant's value, row by row; materialized as one again.
            results = self.evaluate(np.array(dense.get_values()))
            return (dense_matrix_value(result_type, results.tolist()),)
        return None


@irdl_op_definition
class ConvertFromOp(ConvertOp):
    """Decodes integer-encoded small floats into f16, bf16, f32 or f64."""

    name = "arbfp.convert_from"
    DECODES: ClassVar[bool] = True

    assembly_format = "$format $input attr-dict `:` type($input) `to` type($result)"

    def __init__(
        self,
        fmt: str | FloatFormat,
        value: SSAValue | Operation,
        result_type: Attribute,
    ):
        keyword = fmt if isinstance(fmt, str) else fmt.keyword
        super().__init__(
            operands=[value],
            result_types=[result_type],
            properties={"format": FormatAttr(FormatKeyword(keyword))},
        )

    def evaluate(self, values: np.ndarray) -> np.ndarray:
        name = float_type_name(self.float_type)
        assert name is not None
        return decode(self.float_format, values, FLOAT_DTYPES[name])


@irdl_op_definition
class ConvertToOp(ConvertOp):
    """Encodes f16, bf16, f32 or f64 values as small floats, with a rounding mode."""

    name = "arbfp.convert_to"
    DECODES: ClassVar[bool] = False

    rounding = prop_def(RoundingAttr, default_value=RoundingAttr(Rounding.NEAREST_EVEN))
    saturate = opt_prop_def(UnitAttr)

    assembly_format = (
        "$format $input (`rounding` $rounding^)? (`saturate` $saturate^)? "
        "attr-dict `:` type($input) `to` type($result)"
    )

    def __init__(
        self,
        fmt: str | FloatFormat,
        value: SSAValue | Operation,
        result_type: Attribute,
        rounding: Rounding = Rounding.NEAREST_EVEN,
        saturate: bool = False,
    ):
        keyword = fmt if isinstance(fmt, str) else fmt.keyword
        properties: dict[str, Attribute] = {
            "format": FormatAttr(FormatKeyword(keyword)),
            "rounding": RoundingAttr(rounding),
        }
        if saturate:
            properties["saturate"] = UnitAttr()
        super().__init__(
            operands=[value], result_types=[result_type], properties=properties
        )

    @property
    def rounding_mode(self) -> Rounding:
        return self.rounding.data

    @property
    def saturating(self) -> bool:
        return self.saturate is not None

    def evaluate(self, values: np.ndarray) -> np.ndarray:
        name = float_type_name(self.float_type)
        assert name is not None
        source = np.asarray(values).astype(FLOAT_DTYPES[name])
        bits = encode(self.float_format, source, self.rounding_mode, self.saturating)
        return bits.view(np.int8) if self.float_format.bits == 8 else bits


class ArbfpConstantMaterialization(ConstantMaterializationInterface):
    """Folded scalar and vector conversions become `arith.constant`s, matrix
    conversions `matrix.constant`s."""

    def materialize_constant(
        self, value: Attribute, type: Attribute
    ) -> Operation | None:
        if isinstance(type, MatrixType):
            if not isinstance(value, DenseIntOrFPElementsAttr):
                return None
            return MatrixConstantOp(cast(DenseIntOrFPElementsAttr, value), type)
        return arith.ConstantOp.build(properties={"value": value}, result_types=[type])


Arbfp = Dialect(
    "arbfp",
    [ConvertFromOp, ConvertToOp],
    [FormatAttr, RoundingAttr],
    [ArbfpConstantMaterialization()],
)

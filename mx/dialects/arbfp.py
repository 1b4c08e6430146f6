"""The `arbfp` dialect: integer-encoded small floats (FP8/FP6/FP4) <-> native floats.

See docs/arbfp-dialect.md. `%f = arbfp.convert_from f8e4m3fn %bits : i8 to f32` and
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
    I64,
    DenseIntOrFPElementsAttr,
    FloatAttr,
    IntegerAttr,
    IntegerType,
    Signedness,
    UnitAttr,
    VectorType,
    i64,
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

from mx.dialects.matrix import (
    MAX_FOLDED_ELEMENTS,
    FloatElement,
    MatrixType,
    dense_matrix_value,
)
from mx.dialects.matrix import ConstantOp as MatrixConstantOp
from mx.semantics.arbfp import (
    FLOAT_TYPES,
    FORMATS,
    SCALE_FORMATS,
    FloatFormat,
    Rounding,
    ScaleRule,
    decode,
    encode,
    float_dtype,
    scaled_decode,
    scaled_encode,
)

FormatKeyword = cast(
    type[StrEnum], StrEnum("FormatKeyword", {k.upper(): k for k in FORMATS})
)
"""The format keywords of docs/arbfp-dialect.md, in table order (derived from `FORMATS`)."""


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
    return name if name in FLOAT_TYPES else None


def verify_container(role: str, container: Attribute, fmt: FloatFormat) -> None:
    """Checks that `container` is the signless integer of exactly `fmt`'s width."""
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


def verify_float_type(role: str, t: Attribute) -> None:
    if float_type_name(t) is None:
        raise VerifyException(
            f"{role} element type '{t}' must be f16, bf16, f32 or f64"
        )


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
        role = "source" if self.DECODES else "result"
        verify_container(role, self.container_type, self.float_format)
        verify_float_type("destination" if self.DECODES else "source", self.float_type)

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
        return decode(self.float_format, values, float_dtype(name))


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
        source = np.asarray(values).astype(float_dtype(name))
        bits = encode(self.float_format, source, self.rounding_mode, self.saturating)
        return _as_container(self.float_format, bits)


@irdl_attr_definition
class ScaleRuleAttr(EnumAttribute[ScaleRule], SpacedOpaqueSyntaxAttribute):
    """How scaled_convert_to picks a block's scale: `#arbfp<scale_rule ceil>`."""

    name = "arbfp.scale_rule"


DEFAULT_SCALE_FORMAT = "f8e8m0fnu"


def _scaled_shape(t: Attribute, role: str) -> tuple[int, ...]:
    """The shape of a matrix or 1-D vector type (error otherwise)."""
    if isinstance(t, MatrixType):
        return t.shape
    if isinstance(t, VectorType):
        vector = cast(VectorType, t)
        if vector.get_num_dims() == 1 and not any(vector.get_scalable_dims()):
            return tuple(vector.get_shape())
    raise VerifyException(f"{role} type '{t}' must be a matrix or a 1-D vector")


def _blocked_length(shape: tuple[int, ...]) -> str:
    return "number of columns" if len(shape) == 2 else "vector length"


def _scales_type(elements: Attribute, block: int) -> Attribute:
    """The type of the scales of `elements` (a matrix or 1-D vector type)."""
    if isinstance(elements, MatrixType):
        return MatrixType(elements.rows, elements.cols // block, IntegerType(8))
    (length,) = cast(VectorType, elements).get_shape()
    return VectorType(IntegerType(8), [length // block])


class ScaledConvertOp(IRDLOperation, HasFolderInterface):
    """Shared structure and checks of the two block-scaled conversions, whose syntax is
    `FMT %operands block N [scale SFMT] [rounding MODE] [scale_rule R] : types`."""

    DECODES: ClassVar[bool]

    format = prop_def(FormatAttr)
    block = prop_def(IntegerAttr[I64])
    scale_format = prop_def(
        FormatAttr, default_value=FormatAttr(FormatKeyword(DEFAULT_SCALE_FORMAT))
    )

    traits = traits_def(Pure())

    @property
    def float_format(self) -> FloatFormat:
        return self.format.format

    @property
    def scale_float_format(self) -> FloatFormat:
        return self.scale_format.format

    @property
    def block_size(self) -> int:
        return self.block.value.data

    def elements_value(self) -> SSAValue:
        raise NotImplementedError

    def scales_value(self) -> SSAValue:
        raise NotImplementedError

    def floats_value(self) -> SSAValue:
        raise NotImplementedError

    @property
    def float_type(self) -> Attribute:
        return _shape_and_element(self.floats_value().type)[2]

    def verify_(self) -> None:
        fmt = self.float_format
        if not fmt.has_zero:
            raise VerifyException(
                f"{fmt.keyword} is a scale format, not the element format of a "
                "block-scaled conversion"
            )
        scale_fmt = self.scale_float_format
        if scale_fmt.keyword not in SCALE_FORMATS:
            raise VerifyException(
                f"scale format {scale_fmt.keyword} must be f8e8m0fnu or f8e4m3fn"
            )
        if not self.DECODES and scale_fmt.keyword != DEFAULT_SCALE_FORMAT:
            raise VerifyException(
                "scaled_convert_to computes f8e8m0fnu scales only, got scale "
                f"format {scale_fmt.keyword}"
            )
        elements, scales = self.elements_value().type, self.scales_value().type
        floats = self.floats_value().type
        element_role, float_role = (
            ("source", "destination") if self.DECODES else ("result", "source")
        )
        if not self.DECODES:  # the operand's errors first
            _scaled_shape(floats, float_role)
        shape = _scaled_shape(elements, f"{element_role} elements")
        _scaled_shape(scales, "scales")
        float_shape = _scaled_shape(floats, float_role)
        if (
            len({isinstance(t, MatrixType) for t in (elements, scales, floats)}) != 1
            or float_shape != shape
        ):
            raise VerifyException(
                f"elements type '{elements}' and {float_role} type '{floats}' must "
                "have the same shape, and the scales the same kind"
            )
        verify_container(element_role, _shape_and_element(elements)[2], fmt)
        verify_float_type(float_role, _shape_and_element(floats)[2])
        block = self.block_size
        if block < 1:
            raise VerifyException(f"block size must be at least 1, got {block}")
        if shape[-1] % block:
            raise VerifyException(
                f"block size {block} does not divide the {_blocked_length(shape)} "
                f"{shape[-1]}"
            )
        expected = _scales_type(elements, block)
        if _scaled_shape(scales, "scales") != _scaled_shape(expected, "scales"):
            raise VerifyException(
                f"scales type '{scales}' must be '{expected}': one scale per "
                f"block of {block} elements"
            )
        verify_container("scale", _shape_and_element(scales)[2], scale_fmt)

    # -- numerics --------------------------------------------------------------

    def _fold_operands(self) -> list[np.ndarray] | None:
        """The constant operands' values, row by row, in their shapes."""
        values: list[np.ndarray] = []
        for operand in self.operands:
            constant = ConstantLike.get_constant_value(operand)
            if not isinstance(constant, DenseIntOrFPElementsAttr):
                return None
            dense = cast(DenseIntOrFPElementsAttr, constant)
            shape = _scaled_shape(operand.type, "operand")
            if np.prod(shape) > MAX_FOLDED_ELEMENTS:
                return None
            values.append(np.array(dense.get_values()).reshape(shape))
        return values


def _constant(t: Attribute, values: np.ndarray) -> Attribute:
    """The attribute a folded block-scaled conversion's result becomes."""
    if isinstance(t, MatrixType):
        return dense_matrix_value(t, values.reshape(-1).tolist())
    vector = cast(Any, t)  # a vector of int or float
    return DenseIntOrFPElementsAttr.from_list(vector, values.tolist())


def _as_container(fmt: FloatFormat, bits: np.ndarray) -> np.ndarray:
    """Encodings as the interpreter holds containers: int8 for i8, uint8 below."""
    return bits.view(np.int8) if fmt.bits == 8 else bits


@irdl_op_definition
class ScaledConvertFromOp(ScaledConvertOp):
    """Decodes block-scaled small floats: element value x its block's scale,
    rounded once to f16, bf16, f32 or f64."""

    name = "arbfp.scaled_convert_from"
    DECODES: ClassVar[bool] = True

    input = operand_def(AnyAttr())
    scales = operand_def(AnyAttr())
    result = result_def(AnyAttr())

    assembly_format = (
        "$format $input `,` $scales `block` $block (`scale` $scale_format^)? "
        "attr-dict `:` type($input) `,` type($scales) `to` type($result)"
    )

    def __init__(
        self,
        fmt: str,
        elements: SSAValue | Operation,
        scales: SSAValue | Operation,
        block: int,
        result_type: Attribute,
        scale_format: str = DEFAULT_SCALE_FORMAT,
    ):
        super().__init__(
            operands=[elements, scales],
            result_types=[result_type],
            properties={
                "format": FormatAttr(FormatKeyword(fmt)),
                "block": IntegerAttr(block, i64),
                "scale_format": FormatAttr(FormatKeyword(scale_format)),
            },
        )

    def elements_value(self) -> SSAValue:
        return self.input

    def scales_value(self) -> SSAValue:
        return self.scales

    def floats_value(self) -> SSAValue:
        return self.result

    def evaluate(self, elements: np.ndarray, scales: np.ndarray) -> np.ndarray:
        """The op's result for its operands' values (containers of any integer
        dtype, encoding in the low bits; blocks along the last axis)."""
        name = float_type_name(self.float_type)
        assert name is not None
        return scaled_decode(
            self.float_format,
            self.scale_float_format,
            elements,
            scales,
            self.block_size,
            float_dtype(name),
        )

    def fold(self) -> Sequence[SSAValue | Attribute] | None:
        operands = self._fold_operands()
        if operands is None:
            return None
        return (_constant(self.result.type, self.evaluate(*operands)),)


@irdl_op_definition
class ScaledConvertToOp(ScaledConvertOp):
    """Quantizes f16, bf16, f32 or f64 values into block-scaled small floats:
    one f8e8m0fnu scale per block, the elements rounded and saturated."""

    name = "arbfp.scaled_convert_to"
    DECODES: ClassVar[bool] = False

    input = operand_def(AnyAttr())
    result = result_def(AnyAttr())
    scales = result_def(AnyAttr())
    rounding = prop_def(RoundingAttr, default_value=RoundingAttr(Rounding.NEAREST_EVEN))
    scale_rule = prop_def(ScaleRuleAttr, default_value=ScaleRuleAttr(ScaleRule.FLOOR))

    assembly_format = (
        "$format $input `block` $block (`scale` $scale_format^)? "
        "(`rounding` $rounding^)? (`scale_rule` $scale_rule^)? "
        "attr-dict `:` type($input) `to` type($result) `,` type($scales)"
    )

    def __init__(
        self,
        fmt: str,
        value: SSAValue | Operation,
        block: int,
        result_type: Attribute,
        rounding: Rounding = Rounding.NEAREST_EVEN,
        scale_rule: ScaleRule = ScaleRule.FLOOR,
    ):
        value = SSAValue.get(value)
        super().__init__(
            operands=[value],
            result_types=[result_type, _scales_type(result_type, block)],
            properties={
                "format": FormatAttr(FormatKeyword(fmt)),
                "block": IntegerAttr(block, i64),
                "rounding": RoundingAttr(rounding),
                "scale_rule": ScaleRuleAttr(scale_rule),
            },
        )

    @property
    def rounding_mode(self) -> Rounding:
        return self.rounding.data

    @property
    def rule(self) -> ScaleRule:
        return self.scale_rule.data

    def elements_value(self) -> SSAValue:
        return self.result

    def scales_value(self) -> SSAValue:
        return self.scales

    def floats_value(self) -> SSAValue:
        return self.input

    def evaluate(self, values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(elements, scales) for float values (blocks along the last axis)."""
        name = float_type_name(self.float_type)
        assert name is not None
        with np.errstate(invalid="ignore"):  # ml_dtypes warns on casting a bf16 NaN
            source = np.asarray(values).astype(float_dtype(name))
        bits, scales = scaled_encode(
            self.float_format, source, self.block_size, self.rounding_mode, self.rule
        )
        return _as_container(self.float_format, bits), scales.view(np.int8)

    def fold(self) -> Sequence[SSAValue | Attribute] | None:
        operands = self._fold_operands()
        if operands is None:
            return None
        bits, scales = self.evaluate(*operands)
        return (
            _constant(self.result.type, bits),
            _constant(self.scales.type, scales),
        )


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
    [ConvertFromOp, ConvertToOp, ScaledConvertFromOp, ScaledConvertToOp],
    [FormatAttr, RoundingAttr, ScaleRuleAttr],
    [ArbfpConstantMaterialization()],
)

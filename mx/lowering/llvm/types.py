"""Type conversion to the `llvm` dialect and the casts that bridge it.

Memrefs become one opaque `!llvm.ptr` to their first element (bare-pointer
convention), `index` becomes `i64`; scalars and vectors are kept. Patterns
convert operands with `to_llvm` and hand results back with `from_llvm`; the
`builtin.unrealized_conversion_cast` pairs that this leaves are reconciled at
the end of the pass.
"""

from xdsl.dialects.builtin import (
    IndexType,
    IntegerType,
    MemRefType,
    UnrealizedConversionCastOp,
    VectorType,
    i64,
)
from xdsl.dialects.llvm import LLVMPointerType
from xdsl.ir import Attribute, OpResult, SSAValue
from xdsl.pattern_rewriter import PatternRewriter
from xdsl.utils.exceptions import VerifyException


def convert_type(type_: Attribute) -> Attribute:
    """The `llvm`-dialect type that a standard-dialect type lowers to."""
    if isinstance(type_, MemRefType):
        return LLVMPointerType()
    if isinstance(type_, IndexType):
        return i64
    if isinstance(type_, VectorType) and isinstance(type_.element_type, IndexType):
        return VectorType(i64, type_.get_shape())
    return type_


def to_llvm(value: SSAValue, rewriter: PatternRewriter) -> SSAValue:
    """`value` as its converted type, inserting a cast before the matched op."""
    target = convert_type(value.type)
    if target == value.type:
        return value
    if (
        isinstance(value, OpResult)
        and isinstance(value.op, UnrealizedConversionCastOp)
        and value.op.inputs[0].type == target
    ):
        return value.op.inputs[0]
    cast = rewriter.insert(UnrealizedConversionCastOp.get([value], [target]))
    return cast.results[0]


def from_llvm(
    value: SSAValue, original: Attribute, rewriter: PatternRewriter
) -> SSAValue:
    """Casts a lowered `value` back to the `original` type its users expect."""
    if value.type == original:
        return value
    cast = rewriter.insert(UnrealizedConversionCastOp.get([value], [original]))
    return cast.results[0]


def integer_width(type_: Attribute) -> int:
    """Bit width of an integer (or index) type, or of a vector's elements."""
    if isinstance(type_, VectorType):
        type_ = type_.element_type
    type_ = convert_type(type_)
    assert isinstance(type_, IntegerType)
    return type_.width.data


def require_1d_vector(type_: VectorType, op_name: str) -> int:
    """LLVM vectors are 1-D; returns the length or raises a diagnostic."""
    if type_.get_num_dims() != 1 or type_.get_scalable_dims() != (False,):
        raise VerifyException(
            f"'{op_name}': only fixed-size 1-D vectors lower to LLVM, got {type_}"
        )
    return type_.get_shape()[0]

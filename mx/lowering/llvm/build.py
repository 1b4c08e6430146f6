"""The `llvm` ops `convert-to-llvm` builds most often, made with `Operation.create`.

Each function returns the op its xDSL constructor builds (same operands,
result types and properties), without the generic argument handling of
IRDL's `__init__`, which costs about three times as much as the op itself
and is paid for every op of the lowered module. `tests/dialects/test_op_builders.py`
compares each with its constructor.
"""

from collections.abc import Sequence
from functools import cache

from xdsl.dialects import llvm
from xdsl.dialects.builtin import (
    DenseArrayBase,
    IntegerAttr,
    IntegerType,
    VectorType,
    i1,
)
from xdsl.ir import Attribute, Block, Operation, SSAValue

from mx.compile_memos import compile_memo
from mx.lowering.build import segment_sizes

POINTER = llvm.LLVMPointerType()
"""The one type of every lowered memref: an opaque pointer."""

_NO_OVERFLOW_FLAGS = IntegerAttr(0, 32)


@cache
def icmp_predicate(flag: str) -> IntegerAttr[IntegerType]:
    """The predicate attribute of an `llvm.icmp` (`"slt"`, `"eq"`, ...)."""
    return IntegerAttr(llvm.ICmpPredicateFlag(flag).to_int(), 64)


def icmp(lhs: SSAValue, rhs: SSAValue, flag: str) -> llvm.ICmpOp:
    """`llvm.icmp "flag" %lhs, %rhs` (an `i1`, or a vector of them)."""
    type_ = lhs.type
    result = VectorType(i1, type_.shape) if isinstance(type_, VectorType) else i1
    return llvm.ICmpOp.create(
        operands=[lhs, rhs],
        result_types=[result],
        properties={"predicate": icmp_predicate(flag)},
    )


def integer_binary(
    op_class: type[llvm.ArithmeticBinOpOverflow],
    lhs: SSAValue,
    rhs: SSAValue,
    flags: llvm.OverflowAttr | None = None,
) -> llvm.ArithmeticBinOpOverflow:
    """`llvm.add`/`sub`/`mul`/`shl` of `lhs` and `rhs`, with the overflow
    `flags` (`nsw`, `nuw`) given, else none."""
    overflow = _NO_OVERFLOW_FLAGS if flags is None else IntegerAttr(flags.to_int(), 32)
    return op_class.create(
        operands=[lhs, rhs],
        result_types=[lhs.type],
        properties={"overflowFlags": overflow},
    )


def constant(value: Attribute, type_: Attribute) -> llvm.ConstantOp:
    """`llvm.mlir.constant(value) : type_`."""
    return llvm.ConstantOp.create(result_types=[type_], properties={"value": value})


def undef(type_: Attribute) -> llvm.UndefOp:
    """`llvm.mlir.undef : type_`."""
    return llvm.UndefOp.create(result_types=[type_])


def insert_element(
    vector: SSAValue, value: SSAValue, position: SSAValue
) -> llvm.InsertElementOp:
    """`llvm.insertelement %value, %vector[%position]`."""
    return llvm.InsertElementOp.create(
        operands=[vector, value, position], result_types=[vector.type]
    )


def shuffle_vector(
    v1: SSAValue, v2: SSAValue, mask: DenseArrayBase, type_: Attribute
) -> llvm.ShuffleVectorOp:
    """`llvm.shufflevector %v1, %v2 [mask] : type_`."""
    return llvm.ShuffleVectorOp.create(
        operands=[v1, v2], result_types=[type_], properties={"mask": mask}
    )


@compile_memo
def _alignment(bytes_: int) -> IntegerAttr[IntegerType]:
    return IntegerAttr(bytes_, 64)


def alloca(count: SSAValue, element: Attribute, alignment: int) -> llvm.AllocaOp:
    """`llvm.alloca %count x element` aligned to `alignment` bytes."""
    return llvm.AllocaOp.create(
        operands=[count],
        result_types=[POINTER],
        properties={"alignment": _alignment(alignment), "elem_type": element},
    )


def fastmath_op(
    op_class: type[Operation],
    operands: Sequence[SSAValue],
    result_type: Attribute,
    fastmath: llvm.FastMathAttr,
) -> Operation:
    """An `llvm` float op (arithmetic, intrinsic) of one result with the
    `fastmath` flags given."""
    return op_class.create(
        operands=operands,
        result_types=[result_type],
        properties={"fastmathFlags": fastmath},
    )


def branch(dest: Block, arguments: Sequence[SSAValue]) -> llvm.BrOp:
    """`llvm.br ^dest(arguments)`."""
    return llvm.BrOp.create(operands=arguments, successors=[dest])


def cond_branch(
    condition: SSAValue,
    then_block: Block,
    then_arguments: Sequence[SSAValue],
    else_block: Block,
    else_arguments: Sequence[SSAValue],
) -> llvm.CondBrOp:
    """`llvm.cond_br %condition, ^then_block(...), ^else_block(...)`."""
    return llvm.CondBrOp.create(
        operands=[condition, *then_arguments, *else_arguments],
        successors=[then_block, else_block],
        properties={
            "operandSegmentSizes": segment_sizes(
                1, len(then_arguments), len(else_arguments)
            )
        },
    )

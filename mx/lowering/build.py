"""The `arith`, `vector` and `affine` ops the matrix lowering builds most often,
made with `Operation.create`.

Each function returns the op its xDSL constructor builds (same operands,
result types and properties; defaults are filled in by the op's
`__post_init__` either way), without the generic argument handling of
IRDL's `__init__`, which costs about three times as much as the op itself:
a lowered 4×4 matrix op is a dozen of these. `tests/test_op_builders.py`
compares each with its constructor (and `mx.lowering.llvm.build`'s).
"""

from collections.abc import Sequence

from xdsl.dialects import affine, arith, vector
from xdsl.dialects.builtin import AffineMapAttr, IndexType, IntegerAttr, MemRefType
from xdsl.ir import Attribute, Operation, SSAValue

_INDEX = IndexType()


def index_constant(value: int) -> arith.ConstantOp:
    """`arith.constant value : index`."""
    return arith.ConstantOp.create(
        result_types=[_INDEX], properties={"value": IntegerAttr(value, _INDEX)}
    )


def binary(
    op_class: type[Operation],
    lhs: SSAValue,
    rhs: SSAValue,
    fastmath: arith.FastMathFlagsAttr | None = None,
) -> Operation:
    """An `arith` binary op of `lhs`'s type: a float op with the `fastmath`
    flags given (else none), an integer op without overflow flags."""
    return op_class.create(
        operands=[lhs, rhs],
        result_types=[lhs.type],
        properties={} if fastmath is None else {"fastmath": fastmath},
    )


def vector_load(
    base: SSAValue, indices: Sequence[SSAValue], type_: Attribute
) -> vector.LoadOp:
    """`vector.load %base[indices] : type_`."""
    return vector.LoadOp.create(operands=[base, *indices], result_types=[type_])


def vector_store(
    value: SSAValue, base: SSAValue, indices: Sequence[SSAValue]
) -> vector.StoreOp:
    """`vector.store %value, %base[indices]`."""
    return vector.StoreOp.create(operands=[value, base, *indices])


def broadcast(source: SSAValue, type_: Attribute) -> vector.BroadcastOp:
    """`vector.broadcast %source : type_`."""
    return vector.BroadcastOp.create(operands=[source], result_types=[type_])


def affine_load(
    memref: SSAValue, indices: Sequence[SSAValue], map_: AffineMapAttr
) -> affine.LoadOp:
    """`affine.load %memref[map_(indices)]`, of the memref's element type."""
    type_ = memref.type
    assert isinstance(type_, MemRefType)
    return affine.LoadOp.create(
        operands=[memref, *indices],
        result_types=[type_.element_type],
        properties={"map": map_},
    )


def affine_store(
    value: SSAValue, memref: SSAValue, indices: Sequence[SSAValue], map_: AffineMapAttr
) -> affine.StoreOp:
    """`affine.store %value, %memref[map_(indices)]`."""
    return affine.StoreOp.create(
        operands=[value, memref, *indices], properties={"map": map_}
    )

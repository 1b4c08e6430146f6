"""The ops the lowerings build most often outside the `llvm` dialect (`arith`,
`vector`, `affine`, `memref.alloca`, casts), made with `Operation.create`.

Each function returns the op its xDSL constructor builds (same operands,
result types and properties; defaults are filled in by the op's
`__post_init__` either way), without the generic argument handling of
IRDL's `__init__`, which costs about three times as much as the op itself:
a lowered 4×4 matrix op is a dozen of these. `tests/dialects/test_op_builders.py`
compares each with its constructor (and `mx.lowering.llvm.build`'s).
"""

from collections.abc import Sequence

from xdsl.dialects import affine, arith, math, memref, vector
from xdsl.dialects.builtin import (
    AffineMapAttr,
    DenseArrayBase,
    IndexType,
    IntegerAttr,
    IntegerType,
    MemRefType,
    UnrealizedConversionCastOp,
    VectorType,
    i32,
    i64,
)
from xdsl.ir import Attribute, Operation, Region, SSAValue
from xdsl.ir.affine import AffineExpr, AffineMap

from mx.compile_memos import compile_memo
from mx.lowering.bitwise import IntegerConstant

_INDEX = IndexType()


def cast(value: SSAValue, type_: Attribute) -> UnrealizedConversionCastOp:
    """`builtin.unrealized_conversion_cast %value : T to type_`."""
    return UnrealizedConversionCastOp.create(operands=[value], result_types=[type_])


@compile_memo
def segment_sizes(*sizes: int) -> DenseArrayBase[IntegerType]:
    """The `operandSegmentSizes` of an op with variadic operand groups (one
    attribute per list of sizes)."""
    return DenseArrayBase.from_list(i32, sizes)


def stack_buffer(type_: MemRefType, alignment: IntegerAttr) -> memref.AllocaOp:
    """`memref.alloca() {alignment} : type_` (static shape)."""
    return memref.AllocaOp.create(
        result_types=[type_],
        properties={"alignment": alignment, "operandSegmentSizes": segment_sizes(0, 0)},
    )


@compile_memo
def _constant_map(value: int) -> AffineMapAttr:
    return AffineMapAttr(AffineMap(0, 0, (AffineExpr.constant(value),)))


_STEP_ONE = IntegerAttr(1, _INDEX)


def affine_for(
    lower: int, upper: int, inits: Sequence[SSAValue], body: Region
) -> affine.ForOp:
    """`affine.for %i = lower to upper iter_args(inits)` over `body` (whose
    block takes the induction variable and the carried values)."""
    return affine.ForOp.create(
        operands=inits,
        result_types=[v.type for v in inits],
        properties={
            "lowerBoundMap": _constant_map(lower),
            "upperBoundMap": _constant_map(upper),
            "step": _STEP_ONE,
            "operandSegmentSizes": segment_sizes(0, 0, len(inits)),
        },
        regions=[body],
    )


@compile_memo
def index_attr(value: int) -> IntegerAttr:
    """`value : index`, built once per value (an `IntegerAttr` takes ~20 µs
    to build; the lowerings ask for the same few indices)."""
    return IntegerAttr(value, _INDEX)


def constant(value: IntegerConstant) -> arith.ConstantOp:
    """`arith.constant value`."""
    return arith.ConstantOp.create(
        result_types=[value.get_type()], properties={"value": value}
    )


def index_constant(value: int) -> arith.ConstantOp:
    """`arith.constant value : index`."""
    return constant(index_attr(value))


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


def negf(operand: SSAValue, fastmath: arith.FastMathFlagsAttr | None) -> arith.NegfOp:
    """`arith.negf` with `fastmath` as its property (xDSL 0.75's constructor
    makes it a discardable attribute, which the LLVM lowering ignores)."""
    return arith.NegfOp.create(
        operands=[operand],
        result_types=[operand.type],
        properties={} if fastmath is None else {"fastmath": fastmath},
    )


def fma(
    a: SSAValue, b: SSAValue, c: SSAValue, fastmath: arith.FastMathFlagsAttr | None
) -> math.FmaOp:
    """`math.fma` with `fastmath` as its property (see `negf`)."""
    return math.FmaOp.create(
        operands=[a, b, c],
        result_types=[a.type],
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


def shuffle(
    v1: SSAValue, v2: SSAValue, mask: Sequence[int], type_: VectorType
) -> vector.ShuffleOp:
    """`vector.shuffle %v1, %v2 [mask] : type_`."""
    return vector.ShuffleOp(
        v1, v2, DenseArrayBase.from_list(i64, list(mask)), result_type=type_
    )


def interleaving(first: int, count: int, distance: int) -> list[int]:
    """The shuffle mask (first, first + distance, first + 1, first + 1 +
    distance, ...) of `count` pairs: lanes first .. first+count-1 of one
    vector interleaved with the same lanes of the vector `distance` lanes
    after it in the shuffle's two sources."""
    return [x for j in range(first, first + count) for x in (j, j + distance)]


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

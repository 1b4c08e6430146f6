"""`vector` (1-D, fixed size) -> `llvm` vector instructions."""

from collections.abc import Sequence
from typing import cast

from xdsl.dialects import llvm, vector
from xdsl.dialects.builtin import (
    DYNAMIC_INDEX,
    AnyFloat,
    DenseArrayBase,
    FloatAttr,
    IntegerType,
    VectorType,
    i32,
    i64,
)
from xdsl.dialects.vector import CombiningKindFlag
from xdsl.ir import Attribute, Operation, SSAValue
from xdsl.pattern_rewriter import (
    PatternRewriter,
    RewritePattern,
    op_type_rewrite_pattern,
)
from xdsl.utils.exceptions import VerifyException

from mx.compile_memos import compile_memo
from mx.dialects.llvm_ext import ExtractElementOp
from mx.lowering.llvm.arith import llvm_fastmath
from mx.lowering.llvm.build import insert_element, shuffle_vector
from mx.lowering.llvm.memref import (
    element_pointer,
    load_value,
    store_size,
    store_value,
)
from mx.lowering.llvm.types import (
    convert_type,
    from_llvm,
    integer_constant,
    require_1d_vector,
    to_llvm,
    undef_value,
)


def _position(
    static: DenseArrayBase[IntegerType],
    dynamic: Sequence[SSAValue],
    op_name: str,
    rewriter: PatternRewriter,
) -> SSAValue:
    positions = tuple(static.iter_values())
    if len(positions) != 1:
        raise VerifyException(
            f"'{op_name}': only element positions in 1-D vectors lower to LLVM"
        )
    if positions[0] == DYNAMIC_INDEX:
        return to_llvm(dynamic[0], rewriter)
    return integer_constant(positions[0], i64, rewriter)


@compile_memo
def lane_mask(lanes: tuple[int, ...]) -> DenseArrayBase[IntegerType]:
    """The `llvm.shufflevector` mask picking `lanes` (one attribute per mask:
    the bench module's shuffles use a handful of masks thousands of times)."""
    return DenseArrayBase.from_list(i32, lanes)


class BroadcastLowering(RewritePattern):
    """vector.broadcast %s -> insertelement into lane 0 + zero-mask
    shufflevector (a vector of the same type is returned unchanged)."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: vector.BroadcastOp, rewriter: PatternRewriter, /):
        type_ = convert_type(op.vector.type)
        assert isinstance(type_, VectorType)
        lanes = require_1d_vector(type_, op.name)
        source = to_llvm(op.source, rewriter)
        if source.type == type_:
            rewriter.replace(op, [], [op.source])
            return
        if isinstance(source.type, VectorType):
            raise VerifyException(f"'{op.name}': only scalar sources lower to LLVM")
        empty = undef_value(type_, rewriter)
        zero = integer_constant(0, i32, rewriter)
        lane0 = rewriter.insert(insert_element(empty, source, zero)).res
        splat = rewriter.insert(
            shuffle_vector(lane0, empty, lane_mask((0,) * lanes), type_)
        ).res
        rewriter.replace(op, [], [from_llvm(splat, op.vector.type, rewriter)])


class ExtractLowering(RewritePattern):
    """vector.extract %v[pos] (1-D) -> llvm.extractelement."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: vector.ExtractOp, rewriter: PatternRewriter, /):
        source = to_llvm(op.vector, rewriter)
        assert isinstance(source.type, VectorType)
        require_1d_vector(source.type, op.name)
        position = _position(op.static_position, op.dynamic_position, op.name, rewriter)
        element = rewriter.insert(ExtractElementOp(source, position)).res
        rewriter.replace(op, [], [from_llvm(element, op.result.type, rewriter)])


class InsertLowering(RewritePattern):
    """vector.insert %s, %v[pos] (1-D) -> llvm.insertelement."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: vector.InsertOp, rewriter: PatternRewriter, /):
        dest = to_llvm(op.dest, rewriter)
        assert isinstance(dest.type, VectorType)
        require_1d_vector(dest.type, op.name)
        position = _position(op.static_position, op.dynamic_position, op.name, rewriter)
        source = to_llvm(op.source, rewriter)
        inserted = rewriter.insert(insert_element(dest, source, position)).res
        rewriter.replace(op, [], [from_llvm(inserted, op.result.type, rewriter)])


class LoadLowering(RewritePattern):
    """vector.load %m[%i] -> llvm.load <N x T> from gep %m[i] (element-aligned),
    through the memory type (`vector<8xi4>`: load <8 x i8> + trunc)."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: vector.LoadOp, rewriter: PatternRewriter, /):
        type_ = convert_type(op.result.type)
        assert isinstance(type_, VectorType)
        require_1d_vector(type_, op.name)
        pointer = element_pointer(op.base, op.indices, op, rewriter)
        alignment = store_size(type_.element_type)
        value = load_value(pointer, type_, rewriter, alignment)
        rewriter.replace(op, [], [from_llvm(value, op.result.type, rewriter)])


class StoreLowering(RewritePattern):
    """vector.store %v, %m[%i] -> llvm.store <N x T> to gep %m[i], through the
    memory type (`vector<8xi4>`: zext to <8 x i8> + store)."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: vector.StoreOp, rewriter: PatternRewriter, /):
        value = to_llvm(op.vector, rewriter)
        assert isinstance(value.type, VectorType)
        require_1d_vector(value.type, op.name)
        pointer = element_pointer(op.base, op.indices, op, rewriter)
        alignment = store_size(value.type.element_type)
        rewriter.replace(op, store_value(value, pointer, rewriter, alignment))


class FmaLowering(RewritePattern):
    """vector.fma -> llvm.intr.fma."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: vector.FMAOp, rewriter: PatternRewriter, /):
        assert isinstance(op.res.type, VectorType)
        require_1d_vector(op.res.type, op.name)
        rewriter.replace(op, llvm.FMAOp(op.lhs, op.rhs, op.acc))


class ShuffleLowering(RewritePattern):
    """vector.shuffle (1-D) -> llvm.shufflevector."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: vector.ShuffleOp, rewriter: PatternRewriter, /):
        v1, v2 = to_llvm(op.v1, rewriter), to_llvm(op.v2, rewriter)
        result_type = convert_type(op.result.type)
        assert isinstance(result_type, VectorType)
        require_1d_vector(result_type, op.name)
        mask = lane_mask(tuple(op.mask.iter_values()))
        shuffled = rewriter.insert(shuffle_vector(v1, v2, mask, result_type)).res
        rewriter.replace(op, [], [from_llvm(shuffled, op.result.type, rewriter)])


class BitcastLowering(RewritePattern):
    """vector.bitcast (1-D) -> llvm.bitcast (nothing between bf16 and i16
    vectors, which lower to one type)."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: vector.BitcastOp, rewriter: PatternRewriter, /):
        source, type_ = to_llvm(op.source, rewriter), convert_type(op.result.type)
        if source.type != type_:
            source = rewriter.insert(llvm.BitcastOp(source, type_)).result
        rewriter.replace(op, [], [from_llvm(source, op.result.type, rewriter)])


_INT_REDUCTIONS = {
    CombiningKindFlag.ADD: "llvm.vector.reduce.add",
    CombiningKindFlag.MUL: "llvm.vector.reduce.mul",
    CombiningKindFlag.AND: "llvm.vector.reduce.and",
    CombiningKindFlag.OR: "llvm.vector.reduce.or",
    CombiningKindFlag.XOR: "llvm.vector.reduce.xor",
    CombiningKindFlag.MINSI: "llvm.vector.reduce.smin",
    CombiningKindFlag.MAXSI: "llvm.vector.reduce.smax",
    CombiningKindFlag.MINUI: "llvm.vector.reduce.umin",
    CombiningKindFlag.MAXUI: "llvm.vector.reduce.umax",
}
_FLOAT_REDUCTIONS = {
    CombiningKindFlag.MAXNUMF: "llvm.vector.reduce.fmax",
    CombiningKindFlag.MINNUMF: "llvm.vector.reduce.fmin",
}


class ReductionLowering(RewritePattern):
    """vector.reduction -> llvm.vector.reduce.* (float add/mul are ordered,
    starting from the accumulator, unless the fastmath flags say otherwise);
    an accumulator of other kinds is combined afterwards."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: vector.ReductionOp, rewriter: PatternRewriter, /):
        source = to_llvm(op.vector, rewriter)
        assert isinstance(source.type, VectorType)
        require_1d_vector(source.type, op.name)
        kind = op.kind.data
        element = convert_type(op.dest.type)
        fastmath = llvm_fastmath(op.fastmath)
        new: Operation
        if kind in (CombiningKindFlag.ADD, CombiningKindFlag.MUL) and not isinstance(
            element, type(i64)
        ):
            neutral = -0.0 if kind == CombiningKindFlag.ADD else 1.0
            start = (
                op.acc
                if op.acc is not None
                else rewriter.insert(
                    llvm.ConstantOp(
                        FloatAttr(neutral, cast(AnyFloat, element)), element
                    )
                ).result
            )
            target = (
                llvm.VectorReduceFAddOp
                if kind == CombiningKindFlag.ADD
                else llvm.VectorReduceFMulOp
            )
            new = target(start, source, fastmath)
            rewriter.replace(op, new)
            return
        names = _FLOAT_REDUCTIONS if kind in _FLOAT_REDUCTIONS else _INT_REDUCTIONS
        reduced = rewriter.insert(
            llvm.CallIntrinsicOp(names[kind], [source], [element])
        ).ress
        assert reduced is not None
        if op.acc is not None:
            pair: list[Attribute] = [element]
            combined = rewriter.insert(
                llvm.CallIntrinsicOp(
                    names[kind],
                    [_pair(reduced, to_llvm(op.acc, rewriter), rewriter)],
                    pair,
                )
            ).ress
            assert combined is not None
            reduced = combined
        rewriter.replace(op, [], [from_llvm(reduced, op.dest.type, rewriter)])


def _pair(a: SSAValue, b: SSAValue, rewriter: PatternRewriter) -> SSAValue:
    type_ = VectorType(a.type, [2])
    empty = undef_value(type_, rewriter)
    zero = integer_constant(0, i32, rewriter)
    one = integer_constant(1, i32, rewriter)
    first = rewriter.insert(insert_element(empty, a, zero)).res
    return rewriter.insert(insert_element(first, b, one)).res


VECTOR_PATTERNS: tuple[RewritePattern, ...] = (
    BroadcastLowering(),
    ExtractLowering(),
    InsertLowering(),
    LoadLowering(),
    StoreLowering(),
    FmaLowering(),
    ShuffleLowering(),
    BitcastLowering(),
    ReductionLowering(),
)

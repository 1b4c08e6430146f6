"""`arith` -> `llvm`. Fastmath and overflow flags carry over to the LLVM
instructions; vector operands lower to LLVM vector instructions."""

from dataclasses import dataclass
from functools import cache
from typing import cast

from xdsl.dialects import arith, llvm
from xdsl.dialects.builtin import (
    BFloat16Type,
    DenseIntOrFPElementsAttr,
    FloatAttr,
    IndexType,
    IntegerAttr,
    IntegerType,
    VectorType,
    i1,
    i32,
)
from xdsl.ir import Attribute, Operation, SSAValue
from xdsl.pattern_rewriter import (
    PatternRewriter,
    RewritePattern,
    op_type_rewrite_pattern,
)

from mx.dialects.llvm_ext import ExtractElementOp, FPToSIOp, FPToUIOp, UIToFPOp
from mx.lowering.llvm import build
from mx.lowering.llvm.build import icmp, integer_binary
from mx.lowering.llvm.types import (
    bf16_bits,
    convert_type,
    from_llvm,
    integer_constant,
    integer_width,
    require_1d_vector,
    to_llvm,
    undef_value,
)
from mx.semantics.index import wrap_index


@cache
def llvm_fastmath(flags: arith.FastMathFlagsAttr) -> llvm.FastMathAttr:
    return llvm.FastMathAttr(flags.data)


def _replace(
    op: Operation, new_ops: list[Operation], rewriter: PatternRewriter
) -> None:
    """Replaces `op` by `new_ops`, casting the last op's results back."""
    rewriter.insert(new_ops)
    results = [
        from_llvm(new, old.type, rewriter)
        for old, new in zip(op.results, new_ops[-1].results, strict=False)
    ]
    rewriter.replace(op, [], results)


def constant(value: int, type_: Attribute, rewriter: PatternRewriter) -> SSAValue:
    """An `llvm.mlir.constant` of an integer (or integer vector splat)."""
    if isinstance(type_, VectorType):
        attr: Attribute = DenseIntOrFPElementsAttr.from_list(type_, [value])
    else:
        assert isinstance(type_, IntegerType)
        attr = IntegerAttr(value, type_)
    return rewriter.insert(build.constant(attr, type_)).result


class ConstantLowering(RewritePattern):
    """arith.constant -> llvm.mlir.constant (index values become i64; integer
    scalars are shared by the function, see `integer_constant`)."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: arith.ConstantOp, rewriter: PatternRewriter, /):
        type_ = convert_type(op.result.type)
        value = op.value
        if isinstance(value, IntegerAttr) and isinstance(type_, IntegerType):
            data = value.value.data
            if isinstance(value.type, IndexType):
                data = wrap_index(data)
            shared = integer_constant(data, type_, rewriter)
            rewriter.replace(op, [], [from_llvm(shared, op.result.type, rewriter)])
            return
        if isinstance(value, FloatAttr) and isinstance(type_, IntegerType):
            (bits,) = bf16_bits([value.value.data])  # a bf16 held as i16
            value = IntegerAttr(bits, type_)
        elif isinstance(value, DenseIntOrFPElementsAttr) and type_ != value.type:
            assert isinstance(type_, VectorType)
            values = value.get_values()
            value = DenseIntOrFPElementsAttr.from_list(
                type_,
                bf16_bits(cast(list[float], values))
                if isinstance(value.get_element_type(), BFloat16Type)
                else [int(cast(int, v)) for v in values],
            )
        assert isinstance(value, IntegerAttr | FloatAttr | DenseIntOrFPElementsAttr)
        _replace(op, [build.constant(value, type_)], rewriter)


@dataclass(frozen=True)
class IntegerBinaryLowering(RewritePattern):
    """arith integer binary op -> the LLVM instruction of the same meaning."""

    source: type[arith.SignlessIntegerBinaryOperation]
    target: type[
        llvm.ArithmeticBinOperation
        | llvm.ArithmeticBinOpOverflow
        | llvm.ArithmeticBinOpExact
        | llvm.ArithmeticBinOpDisjoint
    ]

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter, /):
        if not isinstance(op, self.source):
            return
        lhs, rhs = to_llvm(op.lhs, rewriter), to_llvm(op.rhs, rewriter)
        if isinstance(op, arith.SignlessIntegerBinaryOperationWithOverflow):
            assert issubclass(self.target, llvm.ArithmeticBinOpOverflow)
            # Both enums spell the flags `nsw`/`nuw`.
            flags = llvm.OverflowAttr(
                llvm.OverflowFlag(f.value) for f in op.overflow_flags.data
            )
            new: Operation = integer_binary(self.target, lhs, rhs, flags)
        else:
            new = self.target(lhs, rhs)
        _replace(op, [new], rewriter)


@dataclass(frozen=True)
class IntegerIntrinsicLowering(RewritePattern):
    """arith.{min,max}{s,u}i -> llvm.{s,u}{min,max} intrinsic."""

    source: type[arith.SignlessIntegerBinaryOperation]
    intrinsic: str

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter, /):
        if not isinstance(op, self.source):
            return
        lhs, rhs = to_llvm(op.lhs, rewriter), to_llvm(op.rhs, rewriter)
        _replace(
            op, [llvm.CallIntrinsicOp(self.intrinsic, [lhs, rhs], [lhs.type])], rewriter
        )


@dataclass(frozen=True)
class FloatBinaryLowering(RewritePattern):
    """arith float binary op -> LLVM instruction with the same fastmath flags."""

    source: type[arith.FloatingPointLikeBinaryOperation]
    target: type[llvm.AbstractFloatArithOp]

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter, /):
        if not isinstance(op, self.source):
            return
        new = build.fastmath_op(
            self.target, [op.lhs, op.rhs], op.lhs.type, llvm_fastmath(op.fastmath)
        )
        _replace(op, [new], rewriter)


@dataclass(frozen=True)
class FloatIntrinsicLowering(RewritePattern):
    """arith.{max,min}numf -> llvm.{max,min}num (same NaN semantics)."""

    source: type[arith.FloatingPointLikeBinaryOperation]
    target: type[llvm.VectorFMaxOp | llvm.VectorFMinOp]

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter, /):
        if not isinstance(op, self.source):
            return
        new = build.fastmath_op(
            self.target, [op.lhs, op.rhs], op.result.type, llvm_fastmath(op.fastmath)
        )
        _replace(op, [new], rewriter)


@dataclass(frozen=True)
class MinMaxFLowering(RewritePattern):
    """arith.maximumf / minimumf -> compare + select, with NaN propagation
    and -0 < +0 (LLVM 16 cannot select `llvm.maximum` on x86)."""

    source: type[arith.MaximumfOp | arith.MinimumfOp]

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter, /):
        if not isinstance(op, self.source):
            return
        is_max = self.source is arith.MaximumfOp
        lhs, rhs, type_ = op.lhs, op.rhs, op.result.type
        inserted: list[Operation] = [
            pick := _compare_floats(lhs, rhs, "ogt" if is_max else "olt"),
            chosen := arith.SelectOp(pick, lhs, rhs),
            # Equal operands may be +0 and -0: combine the sign bits.
            equal := _compare_floats(lhs, rhs, "oeq"),
        ]
        width = _float_width(type_)
        int_type = _with_element(type_, IntegerType(width))
        inserted += [
            lhs_bits := arith.BitcastOp(lhs, int_type),
            rhs_bits := arith.BitcastOp(rhs, int_type),
            signs := (arith.AndIOp if is_max else arith.OrIOp)(lhs_bits, rhs_bits),
            zero_aware := arith.BitcastOp(signs, type_),
            ordered := arith.SelectOp(equal, zero_aware, chosen),
            unordered := _compare_floats(lhs, rhs, "uno"),
            nan := arith.AddfOp(lhs, rhs),  # propagates the NaN operand
            arith.SelectOp(unordered, nan, ordered),
        ]
        rewriter.replace(op, inserted)


FCMP_PREDICATES = (
    "false", "oeq", "ogt", "oge", "olt", "ole", "one", "ord",
    "ueq", "ugt", "uge", "ult", "ule", "une", "uno", "true",
)  # fmt: skip


def _compare_floats(lhs: SSAValue, rhs: SSAValue, predicate: str) -> arith.CmpfOp:
    """`arith.cmpf` without fastmath flags, an i1 per lane of its operands
    (xDSL's constructor types the result `i1` even for vectors: a vector
    `maximumf` lowered to LLVM IR that did not verify)."""
    return arith.CmpfOp.create(
        operands=[lhs, rhs],
        result_types=[_with_element(lhs.type, i1)],
        properties={
            "predicate": IntegerAttr(FCMP_PREDICATES.index(predicate), 64),
            "fastmath": arith.FastMathFlagsAttr("none"),
        },
    )


def _float_width(type_: Attribute) -> int:
    element = type_.element_type if isinstance(type_, VectorType) else type_
    return element.bitwidth  # type: ignore[attr-defined]


def _with_element(type_: Attribute, element: Attribute) -> Attribute:
    if isinstance(type_, VectorType):
        return VectorType(element, type_.get_shape())
    return element


class NegfLowering(RewritePattern):
    """arith.negf -> llvm.fneg."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: arith.NegfOp, rewriter: PatternRewriter, /):
        _replace(op, [llvm.FNegOp(op.operand, llvm_fastmath(op.fastmath))], rewriter)


ICMP_PREDICATES = ("eq", "ne", "slt", "sle", "sgt", "sge", "ult", "ule", "ugt", "uge")


class CmpiLowering(RewritePattern):
    """arith.cmpi -> llvm.icmp."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: arith.CmpiOp, rewriter: PatternRewriter, /):
        lhs, rhs = to_llvm(op.lhs, rewriter), to_llvm(op.rhs, rewriter)
        _replace(
            op, [icmp(lhs, rhs, ICMP_PREDICATES[op.predicate.value.data])], rewriter
        )


def extract_element(
    vector: SSAValue, index: int, rewriter: PatternRewriter
) -> SSAValue:
    position = integer_constant(index, i32, rewriter)
    return rewriter.insert(ExtractElementOp(vector, position)).res


def insert_element(
    vector: SSAValue, value: SSAValue, index: int, rewriter: PatternRewriter
) -> SSAValue:
    position = integer_constant(index, i32, rewriter)
    return rewriter.insert(build.insert_element(vector, value, position)).res


class CmpfLowering(RewritePattern):
    """arith.cmpf -> llvm.fcmp (same predicate and fastmath flags).

    xDSL's `llvm.fcmp` is scalar-only, so a vector comparison is unrolled
    into one `llvm.fcmp` per lane (LLVM's SLP vectorizer re-forms it)."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: arith.CmpfOp, rewriter: PatternRewriter, /):
        predicate = IntegerAttr(op.predicate.value.data, 64)
        fastmath = llvm_fastmath(op.fastmath)

        def compare(lhs: SSAValue, rhs: SSAValue) -> SSAValue:
            cmp = llvm.FCmpOp(lhs, rhs, predicate)
            cmp.fastmathFlags = fastmath
            return rewriter.insert(cmp).res

        type_ = op.lhs.type
        if not isinstance(type_, VectorType):
            rewriter.replace(op, [], [compare(op.lhs, op.rhs)])
            return
        lanes = require_1d_vector(type_, op.name)
        result = undef_value(op.result.type, rewriter)
        for lane in range(lanes):
            bit = compare(
                extract_element(op.lhs, lane, rewriter),
                extract_element(op.rhs, lane, rewriter),
            )
            result = insert_element(result, bit, lane, rewriter)
        rewriter.replace(op, [], [result])


class SelectLowering(RewritePattern):
    """arith.select -> llvm.select; with a vector condition (which xDSL's
    `llvm.select` rejects) -> the equivalent bit-mask `(a & m) | (b & ~m)`,
    m = sext(cond), which LLVM's instcombine turns back into a select."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: arith.SelectOp, rewriter: PatternRewriter, /):
        lhs, rhs = to_llvm(op.lhs, rewriter), to_llvm(op.rhs, rewriter)
        cond = op.cond
        if not isinstance(cond.type, VectorType):
            _replace(op, [llvm.SelectOp(cond, lhs, rhs)], rewriter)
            return
        type_ = lhs.type
        assert isinstance(type_, VectorType)
        element = type_.element_type
        if isinstance(element, IntegerType):
            int_type: Attribute = type_
        else:
            int_type = VectorType(IntegerType(_float_width(type_)), type_.get_shape())
            lhs = rewriter.insert(llvm.BitcastOp(lhs, int_type)).result
            rhs = rewriter.insert(llvm.BitcastOp(rhs, int_type)).result
        mask = cond
        if int_type != cond.type:
            mask = rewriter.insert(llvm.SExtOp(cond, int_type)).res
        inverse = rewriter.insert(
            llvm.XOrOp(mask, constant(-1, int_type, rewriter))
        ).res
        picked = rewriter.insert(
            llvm.OrOp(
                rewriter.insert(llvm.AndOp(lhs, mask)).res,
                rewriter.insert(llvm.AndOp(rhs, inverse)).res,
            )
        ).res
        if int_type != type_:
            picked = rewriter.insert(llvm.BitcastOp(picked, type_)).result
        rewriter.replace(op, [], [from_llvm(picked, op.result.type, rewriter)])


@dataclass(frozen=True)
class CastLowering(RewritePattern):
    """arith cast -> the LLVM cast instruction of the same meaning."""

    source: type[Operation]
    target: type[
        llvm.GenericCastOp
        | llvm.IntegerConversionOp
        | llvm.IntegerConversionOpNNeg
        | llvm.IntegerConversionOpOverflow
    ]

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter, /):
        if not isinstance(op, self.source):
            return
        (operand,) = op.operands
        (result,) = op.results
        value, type_ = to_llvm(operand, rewriter), convert_type(result.type)
        if value.type == type_ and _has_bf16(operand.type, result.type):
            # bf16 <-> i16: both are the i16 bits (see `convert_type`).
            rewriter.replace(op, [], [from_llvm(value, result.type, rewriter)])
            return
        _replace(op, [self.target(value, type_)], rewriter)


def _has_bf16(*types: Attribute) -> bool:
    return any(
        isinstance(t.element_type if isinstance(t, VectorType) else t, BFloat16Type)
        for t in types
    )


class IndexCastLowering(RewritePattern):
    """arith.index_cast -> llvm.sext / llvm.trunc to or from i64 (or nothing)."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: arith.IndexCastOp, rewriter: PatternRewriter, /):
        value = to_llvm(op.input, rewriter)
        source, target = integer_width(op.input.type), integer_width(op.result.type)
        result_type = convert_type(op.result.type)
        if source < target:
            value = rewriter.insert(llvm.SExtOp(value, result_type)).res
        elif source > target:
            value = rewriter.insert(llvm.TruncOp(value, result_type)).res
        rewriter.replace(op, [], [from_llvm(value, op.result.type, rewriter)])


class FloorDivSILowering(RewritePattern):
    """arith.floordivsi -> q = a / b, minus one when the remainder is nonzero
    and its sign differs from b's."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: arith.FloorDivSIOp, rewriter: PatternRewriter, /):
        rewriter.replace(op, [], [_signed_div_adjusted(op, rewriter, ceil=False)])


class CeilDivSILowering(RewritePattern):
    """arith.ceildivsi -> q = a / b, plus one when the remainder is nonzero
    and has b's sign."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: arith.CeilDivSIOp, rewriter: PatternRewriter, /):
        rewriter.replace(op, [], [_signed_div_adjusted(op, rewriter, ceil=True)])


def _signed_div_adjusted(
    op: arith.FloorDivSIOp | arith.CeilDivSIOp, rewriter: PatternRewriter, ceil: bool
) -> SSAValue:
    lhs, rhs = to_llvm(op.lhs, rewriter), to_llvm(op.rhs, rewriter)
    type_ = lhs.type

    def compare(a: SSAValue, b: SSAValue, flag: str) -> SSAValue:
        return rewriter.insert(icmp(a, b, flag)).res

    zero = constant(0, type_, rewriter)
    quotient = rewriter.insert(llvm.SDivOp(lhs, rhs)).res
    remainder = rewriter.insert(llvm.SRemOp(lhs, rhs)).res
    inexact = compare(remainder, zero, "ne")
    signs_differ = compare(rewriter.insert(llvm.XOrOp(remainder, rhs)).res, zero, "slt")
    if ceil:
        signs_differ = rewriter.insert(
            llvm.XOrOp(signs_differ, constant(1, signs_differ.type, rewriter))
        ).res
    adjust = rewriter.insert(llvm.AndOp(inexact, signs_differ)).res
    # zext(i1 true) is 1; floor subtracts it, ceil adds it.
    step = _zext_flag(adjust, type_, rewriter)
    result_op = llvm.AddOp(quotient, step) if ceil else llvm.SubOp(quotient, step)
    result = rewriter.insert(result_op).res
    return from_llvm(result, op.result.type, rewriter)


class CeilDivUILowering(RewritePattern):
    """arith.ceildivui -> a / b (unsigned) plus one when a % b is nonzero."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: arith.CeilDivUIOp, rewriter: PatternRewriter, /):
        lhs, rhs = to_llvm(op.lhs, rewriter), to_llvm(op.rhs, rewriter)
        type_ = lhs.type
        quotient = rewriter.insert(llvm.UDivOp(lhs, rhs)).res
        remainder = rewriter.insert(llvm.URemOp(lhs, rhs)).res
        inexact = rewriter.insert(
            icmp(remainder, constant(0, type_, rewriter), "ne")
        ).res
        step = _zext_flag(inexact, type_, rewriter)
        result = rewriter.insert(llvm.AddOp(quotient, step)).res
        rewriter.replace(op, [], [from_llvm(result, op.result.type, rewriter)])


def _zext_flag(flag: SSAValue, type_: Attribute, rewriter: PatternRewriter) -> SSAValue:
    """An `i1` flag (or vector of them) zero-extended to `type_`: the flag
    itself for `i1` operands (LLVM has no `zext` to the same width)."""
    if flag.type == type_:
        return flag
    return rewriter.insert(llvm.ZExtOp(flag, type_)).res


ARITH_PATTERNS: tuple[RewritePattern, ...] = (
    ConstantLowering(),
    IntegerBinaryLowering(arith.AddiOp, llvm.AddOp),
    IntegerBinaryLowering(arith.SubiOp, llvm.SubOp),
    IntegerBinaryLowering(arith.MuliOp, llvm.MulOp),
    IntegerBinaryLowering(arith.DivUIOp, llvm.UDivOp),
    IntegerBinaryLowering(arith.DivSIOp, llvm.SDivOp),
    IntegerBinaryLowering(arith.RemUIOp, llvm.URemOp),
    IntegerBinaryLowering(arith.RemSIOp, llvm.SRemOp),
    IntegerBinaryLowering(arith.AndIOp, llvm.AndOp),
    IntegerBinaryLowering(arith.OrIOp, llvm.OrOp),
    IntegerBinaryLowering(arith.XOrIOp, llvm.XOrOp),
    IntegerBinaryLowering(arith.ShLIOp, llvm.ShlOp),
    IntegerBinaryLowering(arith.ShRUIOp, llvm.LShrOp),
    IntegerBinaryLowering(arith.ShRSIOp, llvm.AShrOp),
    IntegerIntrinsicLowering(arith.MinSIOp, "llvm.smin"),
    IntegerIntrinsicLowering(arith.MaxSIOp, "llvm.smax"),
    IntegerIntrinsicLowering(arith.MinUIOp, "llvm.umin"),
    IntegerIntrinsicLowering(arith.MaxUIOp, "llvm.umax"),
    FloorDivSILowering(),
    CeilDivSILowering(),
    CeilDivUILowering(),
    FloatBinaryLowering(arith.AddfOp, llvm.FAddOp),
    FloatBinaryLowering(arith.SubfOp, llvm.FSubOp),
    FloatBinaryLowering(arith.MulfOp, llvm.FMulOp),
    FloatBinaryLowering(arith.DivfOp, llvm.FDivOp),
    FloatIntrinsicLowering(arith.MaxnumfOp, llvm.VectorFMaxOp),
    FloatIntrinsicLowering(arith.MinnumfOp, llvm.VectorFMinOp),
    MinMaxFLowering(arith.MaximumfOp),
    MinMaxFLowering(arith.MinimumfOp),
    NegfLowering(),
    CmpiLowering(),
    CmpfLowering(),
    SelectLowering(),
    IndexCastLowering(),
    CastLowering(arith.BitcastOp, llvm.BitcastOp),
    CastLowering(arith.ExtFOp, llvm.FPExtOp),
    CastLowering(arith.TruncFOp, llvm.FPTruncOp),
    CastLowering(arith.ExtSIOp, llvm.SExtOp),
    CastLowering(arith.ExtUIOp, llvm.ZExtOp),
    CastLowering(arith.TruncIOp, llvm.TruncOp),
    CastLowering(arith.SIToFPOp, llvm.SIToFPOp),
    CastLowering(arith.UIToFPOp, UIToFPOp),
    CastLowering(arith.FPToSIOp, FPToSIOp),
    CastLowering(arith.FPToUIOp, FPToUIOp),
)

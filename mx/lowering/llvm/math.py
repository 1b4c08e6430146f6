"""`math` -> LLVM intrinsics (`llvm.intr.*` ops where xDSL has them,
`llvm.call_intrinsic` otherwise), keeping fastmath flags."""

from dataclasses import dataclass

from xdsl.dialects import llvm, math
from xdsl.dialects.arith import FastMathFlagsAttr
from xdsl.dialects.builtin import DenseIntOrFPElementsAttr, FloatAttr, VectorType, i1
from xdsl.ir import Operation
from xdsl.pattern_rewriter import (
    PatternRewriter,
    RewritePattern,
    op_type_rewrite_pattern,
)

from mx.lowering.llvm.arith import llvm_fastmath
from mx.lowering.llvm.build import fastmath_op
from mx.lowering.llvm.types import convert_type, from_llvm, integer_constant, to_llvm


@dataclass(frozen=True)
class IntrinsicOpLowering(RewritePattern):
    """math op -> the `llvm.intr.*` op with the same operands and flags."""

    source: type[Operation]
    target: type[Operation]

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter, /):
        if not isinstance(op, self.source):
            return
        fastmath = op.properties.get("fastmath")
        assert isinstance(fastmath, FastMathFlagsAttr)
        (result,) = op.results
        new = fastmath_op(
            self.target, list(op.operands), result.type, llvm_fastmath(fastmath)
        )
        rewriter.replace(op, new)


@dataclass(frozen=True)
class CallIntrinsicLowering(RewritePattern):
    """math op -> `llvm.call_intrinsic` of the named overloaded intrinsic
    (`index` operands and results as i64); `poison_flag` appends the `i1 false` argument of abs/ctlz/cttz (a zero
    or INT_MIN input is defined)."""

    source: type[Operation]
    intrinsic: str
    poison_flag: bool = False

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter, /):
        if not isinstance(op, self.source):
            return
        args = [to_llvm(a, rewriter) for a in op.operands]
        if self.poison_flag:
            args.append(integer_constant(0, i1, rewriter))
        new = llvm.CallIntrinsicOp(
            self.intrinsic, args, [convert_type(r.type) for r in op.results]
        )
        fastmath = op.properties.get("fastmath")
        if isinstance(fastmath, FastMathFlagsAttr):
            new.fastmathFlags = llvm_fastmath(fastmath)
        rewriter.insert(new)
        results = [
            from_llvm(value, old.type, rewriter)
            for old, value in zip(op.results, new.results, strict=True)
        ]
        rewriter.replace(op, [], results)


class RsqrtLowering(RewritePattern):
    """math.rsqrt x -> 1.0 / llvm.intr.sqrt x."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: math.RsqrtOp, rewriter: PatternRewriter, /):
        type_ = op.result.type
        fastmath = llvm_fastmath(op.fastmath)
        if isinstance(type_, VectorType):
            one = DenseIntOrFPElementsAttr.from_list(type_, [1.0])
        else:
            one = FloatAttr(1.0, type_)  # type: ignore[arg-type]
        root = llvm.FSqrtOp.create(
            operands=[op.operand],
            result_types=[type_],
            properties={"fastmathFlags": fastmath},
        )
        ones = llvm.ConstantOp(one, type_)
        rewriter.replace(op, [root, ones, llvm.FDivOp(ones, root, fastmath)])


MATH_PATTERNS: tuple[RewritePattern, ...] = (
    IntrinsicOpLowering(math.AbsFOp, llvm.FAbsOp),
    IntrinsicOpLowering(math.SqrtOp, llvm.FSqrtOp),
    IntrinsicOpLowering(math.FmaOp, llvm.FMAOp),
    IntrinsicOpLowering(math.CeilOp, llvm.FCeilOp),
    IntrinsicOpLowering(math.FloorOp, llvm.FFloorOp),
    IntrinsicOpLowering(math.ExpOp, llvm.FExpOp),
    IntrinsicOpLowering(math.LogOp, llvm.FLogOp),
    IntrinsicOpLowering(math.SinOp, llvm.FSinOp),
    IntrinsicOpLowering(math.CosOp, llvm.FCosOp),
    IntrinsicOpLowering(math.PowFOp, llvm.FPowOp),
    IntrinsicOpLowering(math.CopySignOp, llvm.FCopySignOp),
    CallIntrinsicLowering(math.TruncOp, "llvm.trunc"),
    CallIntrinsicLowering(math.RoundOp, "llvm.round"),
    CallIntrinsicLowering(math.RoundEvenOp, "llvm.roundeven"),
    CallIntrinsicLowering(math.Exp2Op, "llvm.exp2"),
    CallIntrinsicLowering(math.Log2Op, "llvm.log2"),
    CallIntrinsicLowering(math.Log10Op, "llvm.log10"),
    CallIntrinsicLowering(math.FPowIOp, "llvm.powi"),
    CallIntrinsicLowering(math.AbsIOp, "llvm.abs", poison_flag=True),
    CallIntrinsicLowering(math.CountLeadingZerosOp, "llvm.ctlz", poison_flag=True),
    CallIntrinsicLowering(math.CountTrailingZerosOp, "llvm.cttz", poison_flag=True),
    CallIntrinsicLowering(math.CtPopOp, "llvm.ctpop"),
    RsqrtLowering(),
)

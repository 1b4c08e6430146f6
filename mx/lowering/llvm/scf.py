"""`scf` -> `cf`: xDSL's `scf.for`/`scf.if` lowerings plus `scf.while`."""

from xdsl.dialects import cf, scf
from xdsl.ir import Block
from xdsl.pattern_rewriter import (
    PatternRewriter,
    RewritePattern,
    op_type_rewrite_pattern,
)
from xdsl.rewriter import BlockInsertPoint, InsertPoint
from xdsl.transforms.convert_scf_to_cf import ForLowering, IfLowering


class WhileLowering(RewritePattern):
    """scf.while -> a `before` block entered with the loop arguments, ending
    in `cf.cond_br` to the `after` block (which branches back) or to the
    continuation, whose arguments replace the loop's results."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: scf.WhileOp, rewriter: PatternRewriter, /):
        init_block = op.parent_block()
        assert init_block is not None
        rest = init_block.split_before(op)
        parent = init_block.parent_region()
        assert parent is not None
        continuation = Block(arg_types=op.result_types)
        parent.insert_block_before(continuation, rest)
        rewriter.insert(cf.BranchOp(rest), InsertPoint.at_end(continuation))

        before = op.before_region.block
        after = op.after_region.block
        condition = before.last_op
        assert isinstance(condition, scf.ConditionOp)
        yield_ = after.last_op
        assert isinstance(yield_, scf.YieldOp)
        rewriter.replace(
            condition,
            cf.ConditionalBranchOp(
                condition.condition, after, condition.args, continuation, condition.args
            ),
        )
        rewriter.replace(yield_, cf.BranchOp(before, *yield_.arguments))
        rewriter.inline_region(op.before_region, BlockInsertPoint.before(continuation))
        rewriter.inline_region(op.after_region, BlockInsertPoint.before(continuation))
        rewriter.insert(
            cf.BranchOp(before, *op.arguments), InsertPoint.at_end(init_block)
        )
        rewriter.replace(op, [], continuation.args)


SCF_PATTERNS: tuple[RewritePattern, ...] = (
    ForLowering(),
    IfLowering(),
    WhileLowering(),
)

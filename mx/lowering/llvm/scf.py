"""`scf` -> `cf`: xDSL's `scf.for`/`scf.if` lowerings plus `scf.while` and
`scf.index_switch`."""

from xdsl.dialects import arith, cf, scf
from xdsl.dialects.builtin import IndexType, IntegerAttr
from xdsl.ir import Block, Operation
from xdsl.pattern_rewriter import (
    PatternRewriter,
    RewritePattern,
    op_type_rewrite_pattern,
)
from xdsl.rewriter import BlockInsertPoint, InsertPoint
from xdsl.transforms.convert_scf_to_cf import ForLowering, IfLowering


def _split_at(op: Operation, rewriter: PatternRewriter) -> tuple[Block, Block]:
    """Splits `op`'s block before it: the block up to `op`, and a new
    continuation block (taking `op`'s results as arguments) that branches to
    the rest."""
    init_block = op.parent_block()
    assert init_block is not None
    rest = init_block.split_before(op)
    parent = init_block.parent_region()
    assert parent is not None
    continuation = Block(arg_types=op.result_types)
    parent.insert_block_before(continuation, rest)
    rewriter.insert(cf.BranchOp(rest), InsertPoint.at_end(continuation))
    return init_block, continuation


class WhileLowering(RewritePattern):
    """scf.while -> a `before` block entered with the loop arguments, ending
    in `cf.cond_br` to the `after` block (which branches back) or to the
    continuation, whose arguments replace the loop's results."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: scf.WhileOp, rewriter: PatternRewriter, /):
        init_block, continuation = _split_at(op, rewriter)

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


class IndexSwitchLowering(RewritePattern):
    """scf.index_switch %i case v0 {...} ... default {...} -> a chain of
    `arith.cmpi eq %i, vK` + `cf.cond_br` to case K's block or on to the next
    comparison (the last one on to the default's block); each region, inlined,
    branches to the continuation, whose arguments replace the results."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: scf.IndexSwitchOp, rewriter: PatternRewriter, /):
        init_block, continuation = _split_at(op, rewriter)
        parent = continuation.parent
        assert parent is not None

        entries: list[Block] = []
        for region in (*op.case_regions, op.default_region):
            yield_ = region.block.last_op
            assert isinstance(yield_, scf.YieldOp)
            rewriter.replace(yield_, cf.BranchOp(continuation, *yield_.arguments))
            entries.append(region.block)
            rewriter.inline_region(region, BlockInsertPoint.before(continuation))

        test = init_block
        values = op.cases.get_values()
        for k, value in enumerate(values):
            following = entries[-1] if k == len(values) - 1 else Block()
            if following is not entries[-1]:
                parent.insert_block_before(following, entries[0])
            case = arith.ConstantOp(IntegerAttr(value, IndexType()))
            equal = arith.CmpiOp(op.arg, case, "eq")
            branch = cf.ConditionalBranchOp(equal, entries[k], (), following, ())
            for new in (case, equal, branch):
                rewriter.insert(new, InsertPoint.at_end(test))
            test = following
        if not values:
            rewriter.insert(cf.BranchOp(entries[-1]), InsertPoint.at_end(init_block))
        rewriter.replace(op, [], continuation.args)


SCF_PATTERNS: tuple[RewritePattern, ...] = (
    ForLowering(),
    IfLowering(),
    WhileLowering(),
    IndexSwitchLowering(),
)

"""`func` and `cf` -> `llvm` (C calling convention, bare-pointer memrefs).

Arguments and results cross calls in their `memory_type`: an `i4`/`i6`
container is passed as a byte holding it in its low bits (C's `uint8_t`; the
callee ignores the high bits, results have them zero), `vector<8xi4>` as
`<8 x i8>`."""

from xdsl.dialects import cf, func, llvm
from xdsl.dialects.builtin import FunctionType, UnrealizedConversionCastOp
from xdsl.ir import Block, Region
from xdsl.pattern_rewriter import (
    PatternRewriter,
    RewritePattern,
    op_type_rewrite_pattern,
)
from xdsl.rewriter import InsertPoint
from xdsl.utils.exceptions import VerifyException

from mx.lowering.llvm.types import (
    convert_type,
    from_llvm,
    memory_type,
    narrowed,
    to_llvm,
    widened,
)


def _convert_block_arguments(region: Region, rewriter: PatternRewriter) -> None:
    """Gives every block argument its converted type; a cast at the start of
    the block hands the old type to the users not yet converted."""
    for block in region.blocks:
        for arg in tuple(block.args):
            target = convert_type(arg.type)
            if target == arg.type:
                continue
            new_arg = block.insert_arg(target, arg.index)
            cast = UnrealizedConversionCastOp.get([new_arg], [arg.type])
            rewriter.insert(cast, InsertPoint.at_start(block))
            arg.replace_all_uses_with(cast.results[0])
            block.erase_arg(arg)


def _pass_arguments_in_memory_type(body: Region, rewriter: PatternRewriter) -> None:
    """Entry-block arguments of a converted type narrower than its memory
    type (`i4`) take the memory type (`i8`), truncated for their users."""
    if not body.blocks:
        return
    entry = body.blocks[0]
    for arg in tuple(entry.args):
        wide = memory_type(arg.type)
        if wide == arg.type:
            continue
        new_arg = entry.insert_arg(wide, arg.index)
        trunc = llvm.TruncOp(new_arg, arg.type)
        rewriter.insert(trunc, InsertPoint.at_start(entry))
        arg.replace_all_uses_with(trunc.res)
        entry.erase_arg(arg)


def _function_type(function_type: FunctionType, op_name: str) -> llvm.LLVMFunctionType:
    outputs = function_type.outputs.data
    if len(outputs) > 1:
        raise VerifyException(
            f"'{op_name}': functions with several results do not lower to LLVM"
        )
    result = memory_type(outputs[0]) if outputs else llvm.LLVMVoidType()
    return llvm.LLVMFunctionType(
        [memory_type(t) for t in function_type.inputs.data], result
    )


class FuncLowering(RewritePattern):
    """func.func -> llvm.func with external linkage; memref arguments become
    `!llvm.ptr`, `index` becomes `i64`, `i4` becomes `i8` (a body-less
    function is a declaration)."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: func.FuncOp, rewriter: PatternRewriter, /):
        body = rewriter.move_region_contents_to_new_regions(op.body)
        _convert_block_arguments(body, rewriter)
        _pass_arguments_in_memory_type(body, rewriter)
        rewriter.replace(
            op,
            llvm.FuncOp(
                op.sym_name,
                _function_type(op.function_type, op.name),
                linkage=llvm.LinkageAttr("external"),
                body=body,
            ),
        )


class CallLowering(RewritePattern):
    """func.call -> llvm.call (arguments widened to, the result narrowed
    from, their memory types)."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: func.CallOp, rewriter: PatternRewriter, /):
        if len(op.res) > 1:
            raise VerifyException(
                f"'{op.name}': calls with several results do not lower"
            )
        args = [widened(to_llvm(a, rewriter), rewriter) for a in op.arguments]
        result_type = memory_type(op.res[0].type) if op.res else None
        call = rewriter.insert(llvm.CallOp(op.callee, *args, return_type=result_type))
        results = (
            [
                from_llvm(
                    narrowed(call.returned, op.res[0].type, rewriter),
                    op.res[0].type,
                    rewriter,
                )
            ]
            if call.returned
            else []
        )
        rewriter.replace(op, [], results)


class ReturnLowering(RewritePattern):
    """func.return -> llvm.return (of the value widened to its memory type)."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: func.ReturnOp, rewriter: PatternRewriter, /):
        values = [widened(to_llvm(a, rewriter), rewriter) for a in op.arguments]
        rewriter.replace(op, llvm.ReturnOp(values[0] if values else None))


class BranchLowering(RewritePattern):
    """cf.br -> llvm.br."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: cf.BranchOp, rewriter: PatternRewriter, /):
        args = [to_llvm(a, rewriter) for a in op.arguments]
        rewriter.replace(op, llvm.BrOp(op.successor, *args))


class CondBranchLowering(RewritePattern):
    """cf.cond_br -> llvm.cond_br."""

    @op_type_rewrite_pattern
    def match_and_rewrite(
        self, op: cf.ConditionalBranchOp, rewriter: PatternRewriter, /
    ):
        then_args = [to_llvm(a, rewriter) for a in op.then_arguments]
        else_args = [to_llvm(a, rewriter) for a in op.else_arguments]
        rewriter.replace(
            op,
            llvm.CondBrOp(op.cond, op.then_block, then_args, op.else_block, else_args),
        )


class AssertLowering(RewritePattern):
    """cf.assert %c -> branch to a block calling llvm.trap when %c is false."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: cf.AssertOp, rewriter: PatternRewriter, /):
        block = op.parent_block()
        assert block is not None
        region = block.parent_region()
        assert region is not None
        rest = block.split_before(op)
        failure = Block()
        region.insert_block_after(failure, rest)
        rewriter.insert(
            llvm.CallIntrinsicOp("llvm.trap", [], []), InsertPoint.at_end(failure)
        )
        rewriter.insert(llvm.UnreachableOp(), InsertPoint.at_end(failure))
        rewriter.insert(
            llvm.CondBrOp(op.arg, rest, [], failure, []), InsertPoint.at_end(block)
        )
        rewriter.erase(op)


FUNC_PATTERNS: tuple[RewritePattern, ...] = (
    FuncLowering(),
    CallLowering(),
    ReturnLowering(),
    BranchLowering(),
    CondBranchLowering(),
    AssertLowering(),
)

"""`func` and `cf` -> `llvm` (C calling convention, bare-pointer memrefs).

Arguments and results cross calls in their `boundary_type`: an `i4`/`i6`
container is passed as a byte holding it in its low bits (C's `uint8_t`; the
callee ignores the high bits, results have them zero), `vector<8xi4>` as
`<8 x i8>`, a bf16 as `bfloat` (C's `__bf16`) and a bf16 vector as the
`<N x i16>` of its bits. A function with several results returns them in one struct, as
MLIR's lowering does."""

from collections.abc import Sequence

from xdsl.dialects import cf, func, llvm
from xdsl.dialects.builtin import (
    DenseArrayBase,
    FunctionType,
    i64,
)
from xdsl.ir import Attribute, Block, Operation, Region, SSAValue
from xdsl.pattern_rewriter import (
    PatternRewriter,
    RewritePattern,
    op_type_rewrite_pattern,
)
from xdsl.rewriter import InsertPoint

from mx.diagnostics import OpDiagnostic
from mx.lowering.build import cast
from mx.lowering.llvm.build import branch, cond_branch
from mx.lowering.llvm.types import (
    boundary_type,
    convert_type,
    from_boundary,
    from_llvm,
    to_boundary,
    to_llvm,
    undef_value,
)


def convert_block_arguments(region: Region, rewriter: PatternRewriter) -> None:
    """Gives every block argument its converted type; a cast at the start of
    the block hands the old type to the users not yet converted."""
    for block in region.blocks:
        for arg in tuple(block.args):
            target = convert_type(arg.type)
            if target == arg.type:
                continue
            new_arg = block.insert_arg(target, arg.index)
            back = cast(new_arg, arg.type)
            rewriter.insert(back, InsertPoint.at_start(block))
            arg.replace_all_uses_with(back.results[0])
            block.erase_arg(arg)


def _pass_arguments_at_boundary(
    body: Region, inputs: Sequence[Attribute], rewriter: PatternRewriter
) -> None:
    """Entry-block arguments (of converted types) whose `boundary_type`
    differs (`i4` -> `i8`, `bf16` -> `bfloat`) take it, converted back for
    their users."""
    if not body.blocks:
        return
    entry = body.blocks[0]
    resume = rewriter.insertion_point
    for arg, original in zip(tuple(entry.args), inputs, strict=True):
        boundary = boundary_type(original)
        if boundary == arg.type:
            continue
        new_arg = entry.insert_arg(boundary, arg.index)
        rewriter.insertion_point = InsertPoint.at_start(entry)
        arg.replace_all_uses_with(from_boundary(new_arg, original, rewriter))
        entry.erase_arg(arg)
    rewriter.insertion_point = resume


def _result_type(outputs: Sequence[Attribute]) -> Attribute:
    """void, the one result's boundary type, or a struct of the results'."""
    if not outputs:
        return llvm.LLVMVoidType()
    if len(outputs) == 1:
        return boundary_type(outputs[0])
    return llvm.LLVMStructType.from_type_list([boundary_type(t) for t in outputs])


def llvm_function_type(
    function_type: FunctionType, at: Operation
) -> llvm.LLVMFunctionType:
    """The LLVM type of a function (or call) `at`; a type that LLVM cannot
    pass is a diagnostic at `at`."""
    inputs, outputs = function_type.inputs.data, function_type.outputs.data
    for what, types in (("argument", inputs), ("result", outputs)):
        for i, t in enumerate(types):
            if not llvm.is_compatible_type(boundary_type(t)):
                raise OpDiagnostic(
                    at, f"LLVM function {what} #{i} has incompatible type '{t}'"
                )
    return llvm.LLVMFunctionType(
        [boundary_type(t) for t in inputs], _result_type(outputs)
    )


def is_private(op: func.FuncOp) -> bool:
    """A `func.func private` with a body: its symbol stays in its module
    (LLVM `internal` linkage), so that modules defining helpers of the same
    name (outlined kernels, parallel loop bodies) link into one program."""
    visibility = op.sym_visibility
    return (
        visibility is not None and visibility.data == "private" and bool(op.body.blocks)
    )


class FuncLowering(RewritePattern):
    """func.func -> llvm.func, with internal linkage if private (`is_private`)
    and external otherwise; memref arguments become
    `!llvm.ptr`, `index` becomes `i64`, `i4` becomes `i8` (a body-less
    function is a declaration)."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: func.FuncOp, rewriter: PatternRewriter, /):
        private = is_private(op)
        body = rewriter.move_region_contents_to_new_regions(op.body)
        convert_block_arguments(body, rewriter)
        _pass_arguments_at_boundary(body, op.function_type.inputs.data, rewriter)
        rewriter.replace(
            op,
            llvm.FuncOp(
                op.sym_name,
                llvm_function_type(op.function_type, op),
                linkage=llvm.LinkageAttr("internal" if private else "external"),
                body=body,
            ),
        )


class CallLowering(RewritePattern):
    """func.call -> llvm.call (arguments and results in their boundary
    types; several results extracted from one struct)."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: func.CallOp, rewriter: PatternRewriter, /):
        args = [
            to_boundary(to_llvm(a, rewriter), a.type, rewriter) for a in op.arguments
        ]
        types = [r.type for r in op.res]
        result_type = _result_type(types) if types else None
        call = rewriter.insert(llvm.CallOp(op.callee, *args, return_type=result_type))
        returned = call.returned
        if returned is None:
            values: list[SSAValue] = []
        elif len(types) == 1:
            values = [returned]
        else:
            values = [
                rewriter.insert(
                    llvm.ExtractValueOp(
                        DenseArrayBase.from_list(i64, [i]), returned, boundary_type(t)
                    )
                ).res
                for i, t in enumerate(types)
            ]
        rewriter.replace(
            op,
            [],
            [
                from_llvm(from_boundary(v, t, rewriter), t, rewriter)
                for v, t in zip(values, types, strict=True)
            ],
        )


class ReturnLowering(RewritePattern):
    """func.return -> llvm.return (of the values in their boundary types;
    several values packed into one struct)."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: func.ReturnOp, rewriter: PatternRewriter, /):
        values = [
            to_boundary(to_llvm(a, rewriter), a.type, rewriter) for a in op.arguments
        ]
        if len(values) > 1:
            struct_type = _result_type([a.type for a in op.arguments])
            struct = undef_value(struct_type, rewriter)
            for i, value in enumerate(values):
                struct = rewriter.insert(
                    llvm.InsertValueOp(
                        DenseArrayBase.from_list(i64, [i]), struct, value
                    )
                ).res
            values = [struct]
        rewriter.replace(op, llvm.ReturnOp(values[0] if values else None))


class BranchLowering(RewritePattern):
    """cf.br -> llvm.br."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: cf.BranchOp, rewriter: PatternRewriter, /):
        args = [to_llvm(a, rewriter) for a in op.arguments]
        rewriter.replace(op, branch(op.successor, args))


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
            cond_branch(op.cond, op.then_block, then_args, op.else_block, else_args),
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
            cond_branch(op.arg, rest, [], failure, []), InsertPoint.at_end(block)
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

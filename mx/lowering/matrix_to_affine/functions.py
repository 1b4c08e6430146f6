"""`convert-matrix-to-affine`: function signatures, returns and calls (the
ABI of matrix arguments and results, see the pass's docstring and abi.py).

A returned matrix is computed straight into its out-parameter, not into a
buffer of its own copied there at the return, when nothing else can be
written there first: the function is one block (no branch can return
another value in that position), the value is a result of an op of that
block, and the boundary is column-major (a row-major out-parameter holds the
transpose). The C ABI's out-parameters alias no argument, so the op may
write its result there while it still reads its operands (a 1024^2 f32
product copied 4 MiB after computing it: 3 % of its time on one thread,
more on two, where the copy ran on one).
"""

from dataclasses import dataclass

from xdsl.dialects import func
from xdsl.dialects.builtin import DictionaryAttr, FunctionType
from xdsl.ir import OpResult, SSAValue
from xdsl.pattern_rewriter import PatternRewriter, op_type_rewrite_pattern
from xdsl.rewriter import InsertPoint

from mx.dialects.matrix import MatrixType
from mx.lowering.matrix_to_affine.abi import abi_type, matrix_of_abi_buffer
from mx.lowering.matrix_to_affine.elements import buffer_of
from mx.lowering.matrix_to_affine.state import MatrixPattern, is_matrix, matrix_type


@dataclass
class LowerFuncSignature(MatrixPattern):
    """func.func @f(%a: !matrix<RxC>) -> !matrix<PxQ> ->
    func.func @f(%a: memref<CxR>, %out: memref<QxP>) (see the module docs)."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: func.FuncOp, rewriter: PatternRewriter, /) -> None:
        inputs = op.function_type.inputs.data
        outputs = op.function_type.outputs.data
        if not any(isinstance(t, MatrixType) for t in (*inputs, *outputs)):
            return
        outs = [t for t in outputs if isinstance(t, MatrixType)]
        row_major = self.state.row_major
        op.function_type = FunctionType.from_lists(
            [abi_type(t, row_major) if isinstance(t, MatrixType) else t for t in inputs]
            + [abi_type(t, row_major) for t in outs],
            [t for t in outputs if not isinstance(t, MatrixType)],
        )
        if op.arg_attrs is not None:
            op.arg_attrs = op.arg_attrs.__class__(
                [*op.arg_attrs.data, *(DictionaryAttr({}) for _ in outs)]
            )
        if op.res_attrs is not None:
            op.res_attrs = op.res_attrs.__class__(
                [
                    a
                    for a, t in zip(op.res_attrs.data, outputs, strict=True)
                    if not isinstance(t, MatrixType)
                ]
            )
        rewriter.has_done_action = True
        block = op.body.first_block
        if block is None:
            return
        for index, t in enumerate(inputs):
            if isinstance(t, MatrixType):
                buffer = block.insert_arg(abi_type(t, row_major), index)
                old = block.args[index + 1]
                old.replace_all_uses_with(
                    matrix_of_abi_buffer(
                        buffer,
                        t,
                        row_major,
                        InsertPoint.at_start(block),
                        self.state.plan.fused,
                    )
                )
                block.erase_arg(old)
        out_params: list[SSAValue] = [
            block.insert_arg(abi_type(t, row_major), len(block.args)) for t in outs
        ]
        self.state.out_params[op] = out_params
        if not row_major:
            self.state.destinations.update(_computed_in_place(op, out_params))


def _computed_in_place(
    function: func.FuncOp, out_params: list[SSAValue]
) -> dict[SSAValue, SSAValue]:
    """The matrices `function` returns that are computed straight into their
    out-parameters (the module docs), each with its out-parameter."""
    if len(function.body.blocks) != 1:
        return {}
    block = function.body.block
    ret = block.last_op
    if not isinstance(ret, func.ReturnOp):
        return {}
    returned = [v for v in ret.arguments if is_matrix(v)]
    destinations: dict[SSAValue, SSAValue] = {}
    for value, out in zip(returned, out_params, strict=True):
        if isinstance(value, OpResult) and value.op.parent is block:
            destinations.setdefault(value, out)
    return destinations


@dataclass
class LowerReturn(MatrixPattern):
    """func.return %m, %x -> write %m into its out-parameter; func.return %x."""

    @op_type_rewrite_pattern
    def match_and_rewrite(
        self, op: func.ReturnOp, rewriter: PatternRewriter, /
    ) -> None:
        function = op.parent_op()
        if (
            not isinstance(function, func.FuncOp)
            or function not in self.state.out_params
        ):
            return
        outs = iter(self.state.out_params[function])
        for value in op.arguments:
            if is_matrix(value) and buffer_of(value) is not (out := next(outs)):
                self.state.materialize(self._abi_value(value, op), out, op)
        rewriter.replace(
            op, func.ReturnOp(*(v for v in op.arguments if not is_matrix(v)))
        )


@dataclass
class LowerCall(MatrixPattern):
    """%r = func.call @f(%m) -> func.call @f(%m_buffer, %r_buffer)."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: func.CallOp, rewriter: PatternRewriter, /) -> None:
        if not any(is_matrix(v) for v in (*op.arguments, *op.res)):
            return
        row_major = self.state.row_major
        arguments = [
            self.state.as_buffer(self._abi_value(v, op), op) if is_matrix(v) else v
            for v in op.arguments
        ]
        results = {
            i: self.state.buffer(matrix_type(r).transposed(), op)
            if row_major
            else self.state.result_buffer(r, op)
            for i, r in enumerate(op.res)
            if is_matrix(r)
        }
        call = func.CallOp(
            op.callee,
            [*arguments, *results.values()],
            [r.type for r in op.res if not is_matrix(r)],
        )
        rewriter.insert(call)
        scalars = iter(call.res)
        matrices = {
            i: matrix_of_abi_buffer(
                b,
                matrix_type(op.res[i]),
                row_major,
                InsertPoint.before(op),
                self.state.plan.fused,
            )
            for i, b in results.items()
        }
        rewriter.replace(
            op,
            [],
            [
                matrices[i] if i in matrices else next(scalars)
                for i in range(len(op.res))
            ],
        )

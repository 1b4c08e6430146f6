"""One op of a function compiled on its own, for one row of its matrices.

The conversions of `arbfp` are deterministic elementwise functions (blocks
run along the last axis), and their compiled code gives the reference
semantics' bits whatever the matrix shape. So a conversion of an R×C matrix
is computed by a kernel of that op on 1×C matrices, called as a batch of R
rows: the kernel is small (it compiles in a fraction of a second, where the
whole function at 4096×4096 takes seconds), and it is compiled once per
(op, row type, pipeline) and cached like any module.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np
from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Attribute, Block, Operation, Region

from mx.dialects import arbfp
from mx.dialects.matrix import MatrixType

if TYPE_CHECKING:
    from mx.jit_runtime import JitFunction

ROW_KERNEL_OPS = (
    arbfp.ConvertToOp,
    arbfp.ConvertFromOp,
    arbfp.ScaledConvertToOp,
    arbfp.ScaledConvertFromOp,
)
"""The ops whose values `run_by_rows` computes."""


def row_type(t: Attribute) -> Attribute:
    """One row of a matrix type; other types as they are."""
    if isinstance(t, MatrixType):
        return MatrixType(1, t.cols, t.element_type)
    return t


def row_kernel_text(op: Operation) -> str:
    """A module whose function `@kernel` applies a copy of `op` (same
    properties) to one row of its operands."""
    block = Block(arg_types=[row_type(v.type) for v in op.operands])
    copy = type(op).create(
        operands=list(block.args),
        result_types=[row_type(r.type) for r in op.results],
        properties=dict(op.properties),
        attributes=dict(op.attributes),
    )
    block.add_ops([copy, func.ReturnOp(*copy.results)])
    kernel = func.FuncOp(
        "kernel",
        ([a.type for a in block.args], [r.type for r in copy.results]),
        Region(block),
    )
    return str(ModuleOp([kernel]))


def row_kernel(op: Operation, pipeline: str) -> JitFunction:
    """The compiled `row_kernel_text(op)` (cached per text and pipeline)."""
    from mx.jit_modules import compile_module  # the JIT is imported only when used

    return compile_module(row_kernel_text(op), pipeline)["kernel"]


def run_by_rows(op: Operation, inputs: Sequence[Any], pipeline: str) -> list[Any]:
    """The results of `op` on its operands' values `inputs`, computed by its
    row kernel (a matrix operand as a batch of its rows)."""
    kernel = row_kernel(op, pipeline)
    args = [
        np.reshape(value, (v.type.rows, 1, v.type.cols))
        if isinstance(v.type, MatrixType)
        else value
        for v, value in zip(op.operands, inputs, strict=True)
    ]
    returned = kernel(*args)
    results = returned if isinstance(returned, tuple) else (returned,)
    return [
        np.reshape(value, r.type.shape) if isinstance(r.type, MatrixType) else value
        for r, value in zip(op.results, results, strict=True)
    ]

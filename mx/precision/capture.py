"""The values of a JIT-compiled run: an instrumented copy of the function
stores every value it computes (matrices, vectors, scalars) into extra
memref arguments, and is compiled with the function's own pipeline."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from xdsl.dialects import arith, func, memref, vector
from xdsl.dialects.builtin import (
    FunctionType,
    IndexType,
    IntegerAttr,
    IntegerType,
    MemRefType,
    ModuleOp,
    VectorType,
)
from xdsl.ir import Attribute, Operation, SSAValue

from mx.dialects.matrix import MatrixType, RowMajorStoreOp
from mx.frontend import parse_and_verify
from mx.precision.trace import check_straight_line, inline_calls, unsupported


def traced_function(text: str, name: str) -> tuple[ModuleOp, func.FuncOp]:
    """`@name` of `text`, prepared for the trace."""
    module = parse_and_verify(text, "<string>")
    body = next(
        op
        for op in module.ops
        if isinstance(op, func.FuncOp) and op.sym_name.data == name
    )
    return module, prepare(module, body)


def prepare(module: ModuleOp, body: func.FuncOp) -> func.FuncOp:
    """`body` with its calls inlined, checked to be straight-line."""
    inline_calls(module, body)
    check_straight_line(body)
    return body


def _buffer_type(t: Attribute) -> MemRefType[Attribute] | None:
    """The memref that holds one value of type `t` (None: not captured)."""
    if isinstance(t, MatrixType):
        return MemRefType(t.element_type, [t.rows * t.cols])
    if isinstance(t, VectorType):
        shape = t.get_shape()
        return MemRefType(t.element_type, [int(np.prod(shape))])
    if isinstance(t, IndexType) or (isinstance(t, IntegerType) and t.width.data > 1):
        return MemRefType(t, [1])
    if isinstance(t, MemRefType | IntegerType):
        return None
    return MemRefType(t, [1])


@dataclass(frozen=True)
class Capture:
    """An instrumented copy of a traced function."""

    text: str
    """The module with the instrumented function."""
    values: list[tuple[int, int, Attribute]]
    """(op position in the body, result index, type) of each captured value,
    in the order of the extra arguments."""

    def buffers(self) -> list[np.ndarray[Any, Any]]:
        from mx.jit_compile import numpy_dtype

        out: list[np.ndarray[Any, Any]] = []
        for _, _, t in self.values:
            buffer = _buffer_type(t)
            assert buffer is not None
            out.append(np.zeros(buffer.get_shape(), numpy_dtype(buffer.element_type)))
        return out

    def values_by_op(
        self, body: func.FuncOp, buffers: Sequence[np.ndarray[Any, Any]]
    ) -> dict[Operation, list[Any]]:
        """The captured values of each op of `body` (the traced function)."""
        ops = list(body.body.ops)
        values: dict[Operation, list[Any]] = {
            op: [None] * len(op.results) for op in ops
        }
        for (position, index, t), buffer in zip(self.values, buffers, strict=True):
            if isinstance(t, MatrixType):
                value: Any = buffer.reshape(t.rows, t.cols)
            elif isinstance(t, VectorType):
                value = buffer.reshape(t.get_shape())
            else:
                value = buffer[0]
            values[ops[position]][index] = value
        return values


def instrument(module: ModuleOp, body: func.FuncOp) -> Capture:
    """A copy of `module` whose copy of `body` also stores each value."""
    copy = module.clone()
    target = next(
        op
        for op in copy.ops
        if isinstance(op, func.FuncOp) and op.sym_name.data == body.sym_name.data
    )
    block = target.body.block
    returned = block.last_op
    assert isinstance(returned, func.ReturnOp)
    captured: list[tuple[int, int, Attribute]] = []
    stores: list[Operation] = []
    zero = arith.ConstantOp(IntegerAttr(0, IndexType()))
    for position, (op, original) in enumerate(
        zip(block.ops, body.body.ops, strict=True)
    ):
        if op is returned:
            break
        for index, result in enumerate(op.results):
            buffer_type = _buffer_type(result.type)
            if buffer_type is None:
                if isinstance(result.type, MemRefType):
                    raise unsupported(original, "only memref arguments are tracked")
                continue
            buffer = block.insert_arg(buffer_type, len(block.args))
            captured.append((position, index, result.type))
            stores.append(_store(result, buffer, zero))
    block.insert_op_before(zero, returned)
    for store in stores:
        block.insert_op_before(store, returned)
    inputs = [arg.type for arg in block.args]
    target.function_type = FunctionType.from_lists(
        inputs, list(target.function_type.outputs.data)
    )
    return Capture(str(copy), captured)


def _store(value: SSAValue, buffer: SSAValue, zero: Operation) -> Operation:
    if isinstance(value.type, MatrixType):
        return RowMajorStoreOp(value, buffer)
    if isinstance(value.type, VectorType):
        return vector.StoreOp(value, buffer, [zero])
    return memref.StoreOp.get(value, buffer, [zero])

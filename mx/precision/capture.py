"""The values of a JIT-compiled run: an instrumented copy of the function
stores every value it computes (matrices, vectors, scalars) into extra
memref arguments, and is compiled with the function's own pipeline."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, cast

import numpy as np
from xdsl.dialects import affine, arith, func, memref, scf, vector
from xdsl.dialects.builtin import (
    FunctionType,
    IndexType,
    IntegerAttr,
    IntegerType,
    MemRefType,
    ModuleOp,
    VectorType,
    i1,
    i8,
)
from xdsl.ir import Attribute, Operation, SSAValue
from xdsl.rewriter import InsertPoint, Rewriter

from mx.dialects.matrix import MatrixType, RowMajorStoreOp
from mx.frontend import parse_and_verify
from mx.precision.trace import check_supported, inline_calls, unsupported


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
    """`body` with its calls inlined, checked to hold only what the trace
    runs (`check_supported`)."""
    inline_calls(module, body)
    check_supported(body)
    return body


def _buffer_type(t: Attribute) -> MemRefType[Attribute] | None:
    """The memref that holds one value of type `t` (None: not captured)."""
    if isinstance(t, MatrixType):
        return MemRefType(t.element_type, [t.rows * t.cols])
    if isinstance(t, VectorType):
        shape = t.get_shape()
        return MemRefType(t.element_type, [int(np.prod(shape))])
    if isinstance(t, IntegerType) and t.width.data == 1:
        return MemRefType(i8, [1])  # an i1 (a branch's condition) as 0 or 1
    if isinstance(t, IndexType | IntegerType):
        return MemRefType(t, [1])
    if isinstance(t, MemRefType):
        return None
    return MemRefType(t, [1])


@dataclass(frozen=True)
class Captured:
    """One captured value: result `index` of the op at `position` in the
    walk of the traced function, of type `type`, stored `slots` times at
    most (once per iteration of the loops around it)."""

    position: int
    index: int
    type: Attribute
    slots: int = 1
    counter: int | None = None
    """The extra argument counting the op's runs (ops in loops and
    branches), by its position among the counters."""


@dataclass(frozen=True)
class Capture:
    """An instrumented copy of a traced function."""

    text: str
    """The module with the instrumented function."""
    values: list[Captured]
    """Each captured value, in the order of the extra arguments (then one
    counter per op in a region)."""
    counters: int = 0

    def buffers(self) -> list[np.ndarray[Any, Any]]:
        from mx.jit_signature import numpy_dtype

        out: list[np.ndarray[Any, Any]] = []
        for captured in self.values:
            buffer = _buffer_type(captured.type)
            assert buffer is not None
            size = buffer.get_shape()[0] * captured.slots
            out.append(np.zeros(size, numpy_dtype(buffer.element_type)))
        out.extend(np.zeros(1, np.int64) for _ in range(self.counters))
        return out

    def values_by_op(
        self, body: func.FuncOp, buffers: Sequence[np.ndarray[Any, Any]]
    ) -> dict[Operation, list[list[Any]]]:
        """The captured values of each op of `body` (the traced function),
        one list of results per run of the op."""
        ops = list(body.walk())
        counts = buffers[len(self.values) :]
        values: dict[Operation, list[list[Any]]] = {}
        for captured, buffer in zip(self.values, buffers, strict=False):
            op = ops[captured.position]
            runs = 1 if captured.counter is None else int(counts[captured.counter][0])
            if op not in values:
                values[op] = [[None] * len(op.results) for _ in range(runs)]
            t = captured.type
            for run, part in enumerate(np.split(buffer, captured.slots)[:runs]):
                if isinstance(t, MatrixType):
                    value: Any = part.reshape(t.rows, t.cols)
                elif isinstance(t, VectorType):
                    value = part.reshape(t.get_shape())
                else:
                    value = part[0]
                values[op][run][captured.index] = value
        return values


def instrument(module: ModuleOp, body: func.FuncOp) -> Capture:
    """A copy of `module` whose copy of `body` also stores each value: the
    values of the function's block before its return, those of ops in loops
    and branches right after the op, at the slot its run counter gives."""
    copy = module.clone()
    target = next(
        op
        for op in copy.ops
        if isinstance(op, func.FuncOp) and op.sym_name.data == body.sym_name.data
    )
    block = target.body.block
    returned = block.last_op
    assert isinstance(returned, func.ReturnOp)
    captured: list[Captured] = []
    stores: list[Operation] = []
    counted: list[tuple[Operation, list[tuple[SSAValue, SSAValue]]]] = []
    zero = arith.ConstantOp(IntegerAttr(0, IndexType()))
    for position, (op, original) in enumerate(
        zip(target.walk(), body.walk(), strict=True)
    ):
        if op is target or op is returned:
            continue
        nested = op.parent_block() is not block
        buffers: list[tuple[SSAValue, SSAValue]] = []
        for index, result in enumerate(op.results):
            buffer_type = _buffer_type(result.type)
            if buffer_type is None:
                if isinstance(result.type, MemRefType):
                    raise unsupported(original, "only memref arguments are tracked")
                continue
            slots = _slots(original) if nested else 1
            buffer = block.insert_arg(
                MemRefType(
                    buffer_type.element_type, [buffer_type.get_shape()[0] * slots]
                ),
                len(block.args),
            )
            counter = len(counted) if nested else None  # this op's, once counted
            captured.append(Captured(position, index, result.type, slots, counter))
            if nested:
                buffers.append((result, buffer))
            else:
                stores += _store(result, buffer, zero)
        if buffers:
            counted.append((op, buffers))
    for op, buffers in counted:
        counter = block.insert_arg(MemRefType(IndexType(), [1]), len(block.args))
        _store_run(op, buffers, counter)
    block.insert_op_before(zero, returned)
    for store in stores:
        block.insert_op_before(store, returned)
    inputs = [arg.type for arg in block.args]
    target.function_type = FunctionType.from_lists(
        inputs, list(target.function_type.outputs.data)
    )
    return Capture(str(copy), captured, len(counted))


def _slots(op: Operation) -> int:
    """The most runs of `op`: the product of the trip counts of the loops
    around it, which must be constants."""
    slots = 1
    parent = op.parent_op()
    while parent is not None and not isinstance(parent, func.FuncOp):
        if isinstance(parent, scf.ForOp):
            bounds = [_constant(v) for v in (parent.lb, parent.ub, parent.step)]
            if None in bounds:
                raise unsupported(
                    parent, "the compiled report needs constant loop bounds"
                )
            lower, upper, step = cast(list[int], bounds)
            slots *= len(range(lower, upper, step))
        elif isinstance(parent, affine.ForOp):
            if parent.lowerBoundOperands or parent.upperBoundOperands:
                raise unsupported(
                    parent, "the compiled report needs constant loop bounds"
                )
            lower = max(parent.lowerBoundMap.data.eval([], []))
            upper = min(parent.upperBoundMap.data.eval([], []))
            slots *= len(range(lower, upper, parent.step.value.data))
        parent = parent.parent_op()
    return max(slots, 1)


def _constant(v: SSAValue) -> int | None:
    owner = v.owner
    if isinstance(owner, arith.ConstantOp) and isinstance(owner.value, IntegerAttr):
        return owner.value.value.data
    return None


def _store_run(
    op: Operation, buffers: Sequence[tuple[SSAValue, SSAValue]], counter: SSAValue
) -> None:
    """After `op` (in a loop or branch): stores each (value, buffer) at the
    slot of this run of `op`, the count held by `counter`, and counts it."""
    zero, one = (arith.ConstantOp(IntegerAttr(i, IndexType())) for i in (0, 1))
    run = memref.LoadOp.get(counter, [zero])
    ops: list[Operation] = [zero, one, run]
    for value, buffer in buffers:
        buffer_type = _buffer_type(value.type)
        assert buffer_type is not None
        size = arith.ConstantOp(IntegerAttr(buffer_type.get_shape()[0], IndexType()))
        offset = arith.MuliOp(run, size)
        ops += [size, offset, *_store(value, buffer, offset)]
    counted = arith.AddiOp(run, one)
    ops += [counted, memref.StoreOp.get(counted, counter, [zero])]
    Rewriter.insert_op(ops, InsertPoint.after(op))


def _store(
    value: SSAValue, buffer: SSAValue, offset: SSAValue | Operation
) -> list[Operation]:
    """Stores `value` into `buffer` from element `offset` on."""
    if isinstance(value.type, MatrixType):
        return [RowMajorStoreOp(value, buffer, SSAValue.get(offset))]
    if isinstance(value.type, VectorType):
        return [vector.StoreOp(value, buffer, [offset])]
    if value.type == i1:
        widened = arith.ExtUIOp(value, i8)
        return [widened, memref.StoreOp.get(widened, buffer, [offset])]
    return [memref.StoreOp.get(value, buffer, [offset])]

"""The interpreter's size limit: values it refuses to build in memory.

Every matrix, vector and memref is held in memory by the interpreter, so a
valid but huge value (a 1048575x1048575 splat is 4 TiB of f32) cannot be
evaluated. Such a value is reported, located at the op that would build it, as
an `InterpreterLimitError` before any memory is allocated.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from math import prod

from xdsl.dialects.builtin import IntegerType, MemRefType, VectorType
from xdsl.interpreter import Interpreter, PythonValues
from xdsl.ir import Attribute, Operation

from mx.dialects.matrix import MatrixType
from mx.interpreters.matrix import computes_splat

MAX_VALUE_BYTES = 1 << 30
"""Largest matrix, vector or memref the interpreter builds (1 GiB)."""


OUT_OF_MEMORY = "interpreter limit: out of memory"


class InterpreterLimitError(Exception):
    """A value too large for the interpreter; `op` is the op building it."""

    def __init__(self, message: str, op: Operation | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.op = op


def _element_bytes(element_type: Attribute) -> int:
    if isinstance(element_type, IntegerType):
        return max(1, (element_type.width.data + 7) // 8)
    bitwidth = getattr(element_type, "bitwidth", 64)
    return max(1, int(bitwidth) // 8)


def check_allocation(shape: Sequence[int], element_type: Attribute) -> None:
    """Raise InterpreterLimitError if a value of this shape is too large."""
    size = prod(shape) * _element_bytes(element_type)
    if size > MAX_VALUE_BYTES:
        dims = "x".join(map(str, shape))
        raise InterpreterLimitError(
            f"interpreter limit: a {dims} value of '{element_type}' needs "
            f"{size} bytes, more than the interpreter's {MAX_VALUE_BYTES} bytes"
        )


@dataclass
class SizeLimit(Interpreter.Listener):
    """Checks, before an op runs, that its matrix and vector results fit the
    limit (a splat takes one element's memory whatever its size)."""

    def will_interpret_op(self, op: Operation, args: PythonValues) -> None:
        if computes_splat(op, args):
            return
        for result in op.results:
            t = result.type
            if isinstance(t, MatrixType):
                shape, element_type = t.shape, t.element_type
            elif isinstance(t, VectorType | MemRefType):
                shape = [d if d > 0 else 0 for d in t.get_shape()]
                element_type = t.get_element_type()
            else:
                continue
            try:
                check_allocation(shape, element_type)
            except InterpreterLimitError as err:
                err.op = op
                raise

"""The trampolines `outline-parallel-loops` declares, for the interpreter: a
call `_mx_parallel_for_F(n, args...)` runs F(0, n, args...), the iterations
[0, n) on one thread (threads split them without changing a result)."""

from typing import Any

from xdsl.dialects import func
from xdsl.dialects.builtin import IndexType, IntegerAttr
from xdsl.interpreter import (
    Interpreter,
    InterpreterFunctions,
    impl,
    register_impls,
)

from mx.runtime.parallel_for import PREFIX


@register_impls
class ParallelForFunctions(InterpreterFunctions):
    """`func.call`, with the trampolines of outlined parallel loops."""

    @impl(func.CallOp)
    def run_call(
        self, interpreter: Interpreter, op: func.CallOp, args: tuple[Any, ...]
    ) -> tuple[Any, ...]:
        callee = op.callee.string_value()
        if callee.startswith(PREFIX):
            count, *captured = args  # an index value: an IntegerAttr
            zero = IntegerAttr(0, IndexType())
            body = callee.removeprefix(PREFIX)
            return interpreter.call_op(body, (zero, count, *captured))
        return interpreter.call_op(op.callee, args)

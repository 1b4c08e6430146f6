"""xDSL interpreter functions for the `arbfp` dialect.

Runtime values follow `mx.interpreters.matrix`: scalars are `IntegerAttr` /
`FloatAttr` (Python/NumPy numbers are accepted as operands), vectors and
matrices are NumPy arrays of the element's dtype (i4/i6 as uint8 holding the low
bits; a block-scaled conversion's blocks run along the last axis). The numerics
are the ops' `evaluate` (`mx.semantics.arbfp`).
"""

from __future__ import annotations

from typing import Any

import numpy as np
from xdsl.dialects.builtin import VectorType
from xdsl.interpreter import (
    Interpreter,
    InterpreterFunctions,
    PythonValues,
    impl,
    register_impls,
)

from mx.dialects.arbfp import (
    ConvertFromOp,
    ConvertOp,
    ConvertToOp,
    ScaledConvertFromOp,
    ScaledConvertToOp,
)
from mx.dialects.matrix import MatrixType
from mx.interpreters.matrix import scalar_attr, scalar_value


def _run(op: ConvertOp, value: Any) -> Any:
    if isinstance(op.input.type, MatrixType | VectorType):
        return op.evaluate(np.asarray(value))
    result = op.evaluate(np.array([scalar_value(value)]))[0]
    return scalar_attr(result.item(), op.result.type)


@register_impls
class ArbfpFunctions(InterpreterFunctions):
    @impl(ConvertFromOp)
    def run_convert_from(
        self, interpreter: Interpreter, op: ConvertFromOp, args: PythonValues
    ) -> PythonValues:
        return (_run(op, args[0]),)

    @impl(ConvertToOp)
    def run_convert_to(
        self, interpreter: Interpreter, op: ConvertToOp, args: PythonValues
    ) -> PythonValues:
        return (_run(op, args[0]),)

    @impl(ScaledConvertFromOp)
    def run_scaled_convert_from(
        self, interpreter: Interpreter, op: ScaledConvertFromOp, args: PythonValues
    ) -> PythonValues:
        return (op.evaluate(np.asarray(args[0]), np.asarray(args[1])),)

    @impl(ScaledConvertToOp)
    def run_scaled_convert_to(
        self, interpreter: Interpreter, op: ScaledConvertToOp, args: PythonValues
    ) -> PythonValues:
        return op.evaluate(np.asarray(args[0]))

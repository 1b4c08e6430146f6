"""Running mx programs with xDSL's interpreter (the reference semantics).

`make_interpreter(module)` registers the interpreter functions of builtin,
func, arith (plus mx's additions), math, memref, scf, cf, affine, matrix and
arbfp. `run_function(module, name, *args)` calls one function
with Python/NumPy arguments and returns Python/NumPy results.

Values (see `mx.interpreters.matrix`): scalars are xDSL `IntegerAttr` /
`FloatAttr` inside the interpreter and Python numbers at the `run_function`
boundary; matrices are 2-D and vectors 1-D NumPy arrays; memrefs are xDSL
`ShapedArray`s inside, 1-D NumPy arrays at the boundary (stores are copied back
into the caller's array).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, cast

import numpy as np
from xdsl.dialects.builtin import (
    IndexType,
    IntegerType,
    MemRefType,
    ModuleOp,
    VectorType,
)
from xdsl.dialects.func import FuncOp
from xdsl.interpreter import Interpreter, PythonValues
from xdsl.interpreters.builtin import BuiltinFunctions
from xdsl.interpreters.cf import CfFunctions
from xdsl.interpreters.func import FuncFunctions
from xdsl.interpreters.scf import ScfFunctions
from xdsl.interpreters.shaped_array import ShapedArray
from xdsl.interpreters.utils.ptr import RawPtr, TypedPtr
from xdsl.ir import Attribute, Operation
from xdsl.utils.exceptions import InterpretationError

from mx.dialects.matrix import MatrixType
from mx.dialects.memref_ext import is_row_major
from mx.interpreters.arbfp import ArbfpFunctions
from mx.interpreters.arith import MxArithFunctions, MxMathFunctions
from mx.interpreters.limits import OUT_OF_MEMORY, InterpreterLimitError, SizeLimit
from mx.interpreters.matrix import (
    MatrixFunctions,
    memory_view,
    scalar_attr,
    scalar_value,
)
from mx.interpreters.memref import MxAffineFunctions, MxMemRefFunctions
from mx.interpreters.parallel_for import ParallelForFunctions
from mx.interpreters.vector import VectorFunctions, lane_dtype, lanewise
from mx.semantics.matrix import UndefinedBehaviorError, element_dtype

__all__ = [
    "InterpreterLimitError",
    "UndefinedBehaviorError",
    "make_interpreter",
    "register_functions",
    "run_function",
    "to_runtime",
]


_ArithFunctions = lanewise(MxArithFunctions)
_MathFunctions = lanewise(MxMathFunctions)


@dataclass
class CurrentOp(Interpreter.Listener):
    """Remembers the op being interpreted, to locate undefined behaviour.

    Ops start in program order and nested ops run inside their parent, so the
    last op started is the one whose implementation raised."""

    op: Operation | None = None

    def will_interpret_op(self, op: Operation, args: PythonValues) -> None:
        self.op = op


def make_interpreter(module: ModuleOp) -> Interpreter:
    """An interpreter for `module` with every dialect mx programs use."""
    interpreter = Interpreter(module, listeners=(CurrentOp(), SizeLimit()))
    register_functions(interpreter)
    return interpreter


def register_functions(interpreter: Interpreter) -> None:
    """Register mx's interpreter functions, replacing xDSL's where both exist
    (stock `xdsl-run` calls this too, see `mx.universe`)."""
    for functions in (
        BuiltinFunctions(),
        FuncFunctions(),
        _ArithFunctions(),
        _MathFunctions(),
        VectorFunctions(),
        MxMemRefFunctions(),
        ScfFunctions(),
        CfFunctions(),
        MxAffineFunctions(),
        MatrixFunctions(),
        ArbfpFunctions(),
        ParallelForFunctions(),
    ):
        interpreter.register_implementations(functions, override=True)


def to_runtime(value: Any, t: Attribute, interpreter: Interpreter) -> Any:
    """A Python/NumPy argument as the interpreter's value of type `t`."""
    if isinstance(t, MatrixType):
        m = np.asarray(value, dtype=element_dtype(t.element_type))
        if m.shape != t.shape:
            raise ValueError(f"expected a {t.rows}x{t.cols} matrix, got {m.shape}")
        return m
    if isinstance(t, VectorType):
        vector_type = cast(VectorType[Attribute], t)
        dtype = lane_dtype(vector_type.element_type)
        return np.asarray(value, dtype=dtype).reshape(vector_type.get_shape())
    if isinstance(t, MemRefType):
        if isinstance(value, ShapedArray):
            return value
        memref_type = cast(MemRefType[Attribute], t)
        if not is_row_major(memref_type):
            raise ValueError(
                "only row-major contiguous layouts are supported (the interpreter "
                "and the lowering address memrefs so)"
            )
        element_type = memref_type.element_type
        data = np.ascontiguousarray(value, dtype=element_dtype(element_type))
        shape = list(memref_type.get_shape())
        if any(d < 0 for d in shape):  # dynamic: the array's own shape
            shape = list(data.shape) if data.ndim == len(shape) else [data.size]
        xtype = cast(Any, element_type)
        return ShapedArray(
            TypedPtr[Any](RawPtr(bytearray(data.tobytes())), xtype=xtype), shape
        )
    if isinstance(t, IndexType):
        return scalar_attr(int(value), IntegerType(interpreter.index_bitwidth))
    return scalar_attr(value, t)


def _to_python(value: Any, t: Attribute) -> Any:
    if isinstance(value, ShapedArray):
        element_type = cast(MemRefType[Attribute], t).element_type
        return memory_view(cast(ShapedArray[Any], value), element_type).copy()
    if isinstance(value, np.ndarray):
        return cast(Any, value)
    return scalar_value(value)


def run_function(module: ModuleOp, name: str, *args: Any) -> tuple[Any, ...]:
    """Interpret `func.func @name` of `module` on the given arguments.

    Arguments: NumPy arrays (or nested lists) for matrices, vectors and
    memrefs, Python numbers for scalars. A NumPy array passed for a memref sees
    the function's stores. Results: 2-D/1-D NumPy arrays and Python numbers.
    Undefined behaviour raises `UndefinedBehaviorError`, a value too large to
    build `InterpreterLimitError`, both with `.op` set."""
    interpreter = make_interpreter(module)
    func = interpreter.get_op_for_symbol(name)
    if not isinstance(func, FuncOp):
        raise InterpretationError(f"@{name} is not a func.func")
    inputs = func.function_type.inputs.data
    if len(args) != len(inputs):
        raise ValueError(f"@{name} takes {len(inputs)} arguments, got {len(args)}")
    runtime = [to_runtime(a, t, interpreter) for a, t in zip(args, inputs, strict=True)]
    try:
        results = interpreter.call_op(func, tuple(runtime))
    except (UndefinedBehaviorError, InterpreterLimitError) as err:
        if err.op is None:
            err.op = cast(CurrentOp, interpreter.listeners[0]).op
        raise
    except MemoryError:
        where = cast(CurrentOp, interpreter.listeners[0]).op
        raise InterpreterLimitError(OUT_OF_MEMORY, where) from None
    for arg, value, t in zip(args, runtime, inputs, strict=True):
        if isinstance(t, MemRefType) and isinstance(arg, np.ndarray):
            view = memory_view(value, cast(MemRefType[Attribute], t).element_type)
            arg[...] = view.reshape(arg.shape)
    outputs = func.function_type.outputs.data
    return tuple(_to_python(r, t) for r, t in zip(results, outputs, strict=True))

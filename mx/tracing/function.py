"""`@mx.function`: trace a Python function of arrays once per argument
signature, compile the traced module with `mx.jit`, call the compiled code.

The signature of a call is, per argument, its dtype and its core shape (the
last two dimensions of an array of two or more, the whole shape of a vector
or a 0-d array) or the type of a Python number. Leading dimensions are a
batch, handled by the compiled function as for `mx.jit` functions; memory
orders are the JIT's business too. So a call whose signature was seen before
costs a tuple, a dict lookup and the JIT function's call.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, cast

import numpy as np
from xdsl.dialects import func
from xdsl.dialects.builtin import FunctionType, IntegerType, MemRefType, ModuleOp
from xdsl.ir import Region
from xdsl.printer import Printer

from mx.dialects import matrix as mt
from mx.errors import ArgumentError, CompileError
from mx.jit import DEFAULT_PIPELINE, jit
from mx.tracing.dtypes import BYTES, DType, mlir_type, small_float_format
from mx.tracing.locations import PythonLocation, caller_location
from mx.tracing.values import F64, I64, ByteParameter, Trace, Traced, ssa_type


def _signature(arg: object) -> object:
    kind = type(arg)
    if kind is np.ndarray:
        array = cast(np.ndarray[Any, Any], arg)
        return array.dtype, array.shape[-2:]
    if kind is float or kind is int:
        return kind
    if isinstance(arg, np.generic):
        return arg.dtype
    return kind


@dataclass(frozen=True)
class _Output:
    """Where a result of the Python function comes from in the compiled call."""

    packed_shape: tuple[int, int] | None
    """Packed codes: written into a new uint8 array of this shape (an output
    memref appended to the arguments); otherwise one of the results."""
    view: DType | None
    """The dtype the result array is viewed as (ml_dtypes codes), if any."""


@dataclass
class TracedModule:
    """One trace: the module, and how to call its compiled function."""

    module: ModuleOp
    name: str
    outputs: list[_Output]
    single: bool
    """The Python function returned one value (not a tuple)."""
    memory_inputs: bool
    byte_views: tuple[int, ...]
    """Arguments holding small-float codes, passed to the JIT as their bytes
    (it takes only some of ml_dtypes' types)."""


class Function:
    """A Python function traced into the `matrix`/`arbfp` dialects and
    compiled; see docs/python-frontend.md. Call it with NumPy/ml_dtypes
    arrays and numbers; `f.mlir(*args)` is the traced module's text."""

    __name__: str

    def __init__(
        self, fn: Callable[..., Any], pipeline: str = DEFAULT_PIPELINE
    ) -> None:
        self.__name__ = getattr(fn, "__name__", "function")
        self.fn = fn
        self.pipeline = pipeline
        self._calls: dict[tuple[object, ...], Callable[..., Any]] = {}
        self._traces: dict[tuple[object, ...], TracedModule] = {}
        self._repeat: Callable[..., Any] = _missed
        """The last call's compiled function, behind a check that the
        arguments have the last call's types, dtypes and shapes exactly."""
        functools.update_wrapper(self, fn)

    def __call__(self, *args: object) -> Any:
        try:
            result = self._repeat(*args)
        except (TypeError, AttributeError):  # not the arguments it checks for
            result = _MISS
        if result is not _MISS:
            return result
        key = tuple([_signature(a) for a in args])
        call = self._calls.get(key)
        if call is None:
            call = self._compile(args, key)
        self._repeat = _repeat(call, args)
        try:
            return call(*args)
        except ArgumentError as err:  # located in the traced module's text
            message = _DIAGNOSTIC.sub(r"\4", str(err).split("\n", 1)[0])
            raise ArgumentError(str(caller_location().error(message))) from None

    def mlir(self, *args: object, debuginfo: bool = False) -> str:
        """The traced module (before any pass) for arguments like `args`; with
        `debuginfo`, each op carries its Python `loc("file":line:col)`."""
        return _text(self.trace(*args).module, debuginfo)

    def trace(self, *args: object) -> TracedModule:
        """The trace for arguments like `args` (made once per signature)."""
        return self._trace(args, tuple([_signature(a) for a in args]))

    def _trace(self, args: Sequence[object], key: tuple[object, ...]) -> TracedModule:
        if (known := self._traces.get(key)) is not None:
            return known
        where = caller_location()
        trace = Trace()
        params = [_parameter(trace, i, a, where) for i, a in enumerate(args)]
        code = getattr(self.fn, "__code__", None)
        if code is not None:
            where = PythonLocation(code.co_filename, code.co_firstlineno, 1)
            for name, arg in zip(
                code.co_varnames[: code.co_argcount], trace.block.args, strict=False
            ):
                arg.name_hint = name
        returned = self.fn(*params)
        single = not isinstance(returned, tuple | list)
        results = [returned] if single else list(cast(Sequence[object], returned))
        if not results:
            raise where.error(f"{self.__name__} returns no values")
        outputs: list[_Output] = []
        values = []
        for r in results:
            if not isinstance(r, Traced) or r.trace is not trace:
                raise where.error(
                    f"{self.__name__} returns a '{type(r).__name__}'; a traced "
                    "function returns values computed from its arguments"
                )
            if r.literal is not None:
                raise where.error(
                    f"{self.__name__} returns the Python number {r.literal!r}"
                )
            if r.packed:
                rows, cols = r.shape
                bits = cast(IntegerType, mlir_type(r.dtype)).width.data
                shape = (rows, cols * bits // 8)
                memory = trace.block.insert_arg(
                    MemRefType(IntegerType(8), [shape[0] * shape[1]]),
                    len(trace.block.args),
                )
                trace.insert(mt.RowMajorStoreOp(r.value, memory, packed=True), where)
                outputs.append(_Output(shape, None))
                continue
            view = r.dtype if r.dtype != mlir_dtype_of(r) else None
            outputs.append(_Output(None, view))
            values.append(r.value)
        trace.insert(func.ReturnOp(*values), where)
        name = _symbol(self.__name__)
        function_type = FunctionType.from_lists(
            list(trace.block.arg_types), [v.type for v in values]
        )
        body = func.FuncOp(name, function_type, Region(trace.block))
        body.location = where.attribute()
        traced = TracedModule(
            ModuleOp([body]),
            name,
            outputs,
            single,
            any(isinstance(p, ByteParameter) and p.in_memory for p in params),
            tuple(
                i
                for i, a in enumerate(args)
                if isinstance(a, np.ndarray) and small_float_format(a.dtype) is not None
            ),
        )
        traced.module.verify()
        self._traces[key] = traced
        return traced

    def _compile(
        self, args: Sequence[object], key: tuple[object, ...]
    ) -> Callable[..., Any]:
        traced = self._trace(args, key)
        text = _text(traced.module, False)
        try:
            compiled = jit(text, traced.name, self.pipeline)
        except CompileError as err:
            raise CompileError(python_located(err, traced.module)) from None
        call = _caller(compiled, traced)
        self._calls[key] = call
        return call


_MISS = object()


def _missed(*args: object) -> object:
    return _MISS


def _repeat(call: Callable[..., Any], args: Sequence[object]) -> Callable[..., Any]:
    """`call`, for arguments exactly like `args` (the same types of Python
    numbers; arrays of the same dtype object and shape), else `_MISS`: a
    repeated call checks a few attributes instead of computing its signature.
    Raises AttributeError or TypeError for arguments of other kinds."""
    names = [f"a{i}" for i in range(len(args))]
    scope: dict[str, object] = {"call": call, "MISS": _MISS}
    checks: list[str] = []
    for name, arg in zip(names, args, strict=True):
        if type(arg) in (float, int):
            scope[f"t_{name}"] = type(arg)
            checks.append(f"type({name}) is t_{name}")
        elif isinstance(arg, np.ndarray | np.generic):
            scope[f"d_{name}"], scope[f"s_{name}"] = arg.dtype, arg.shape
            checks.append(f"{name}.dtype is d_{name} and {name}.shape == s_{name}")
        else:
            return _missed
    parameters = ", ".join(names)
    exec(
        f"def repeat({parameters}):\n"
        f"    if {' and '.join(checks) or 'True'}:\n"
        f"        return call({parameters})\n"
        "    return MISS\n",
        scope,
    )
    return cast(Callable[..., Any], scope["repeat"])


def mlir_dtype_of(value: Traced) -> DType:
    """The dtype the JIT returns for a result of `value`'s type."""
    from mx.jit_signature import numpy_dtype

    element = mlir_type(value.dtype)
    assert element is not None
    return numpy_dtype(element)


def _parameter(trace: Trace, index: int, arg: object, where: PythonLocation) -> Traced:
    if isinstance(arg, bool | np.bool_):
        raise where.error(f"argument #{index} is a bool: booleans are not supported")
    if isinstance(arg, float | int) and not isinstance(arg, np.generic):
        dtype = F64 if isinstance(arg, float) else I64
        value = trace.block.insert_arg(ssa_type(dtype, ()), index)
        return Traced(trace, value, dtype, (), weak=True)
    if not isinstance(arg, np.ndarray | np.generic):
        raise where.error(
            f"argument #{index} is a '{type(arg).__name__}': pass NumPy arrays, "
            "NumPy scalars or Python numbers"
        )
    array = np.asarray(arg)
    shape = cast(tuple[int, ...], array.shape[-2:])
    if mlir_type(array.dtype) is None:
        raise where.error(
            f"argument #{index} has dtype {array.dtype.name}, which mx does not support"
        )
    if 0 in shape:
        raise where.error(f"argument #{index} has an empty shape {array.shape}")
    for what, size in zip(
        ("row", "column"), shape if len(shape) == 2 else (), strict=False
    ):
        if (problem := mt.dimension_error(what, size)) is not None:
            raise where.error(f"argument #{index}: {problem}")
    value = trace.block.insert_arg(ssa_type(array.dtype, shape), index)
    if len(shape) == 2 and (array.dtype == BYTES or _is_fp8(array.dtype)):
        return ByteParameter(trace, index, array.dtype, shape)
    return Traced(trace, value, array.dtype, shape)


def _is_fp8(dtype: DType) -> bool:
    fmt = small_float_format(dtype)
    return fmt is not None and fmt.bits == 8


def _symbol(name: str) -> str:
    """A function name as an MLIR symbol (`<lambda>` -> `lambda`)."""
    cleaned = re.sub(r"\W", "", name)
    return cleaned if cleaned and not cleaned[0].isdigit() else "f" + cleaned


def _text(module: ModuleOp, debuginfo: bool) -> str:
    import io

    out = io.StringIO()
    Printer(stream=out, print_debuginfo=debuginfo).print_op(module)
    return out.getvalue() + "\n"


_DIAGNOSTIC = re.compile(r"<string>:(\d+):(\d+): (\w+): (.*)")


def python_located(err: CompileError, module: ModuleOp) -> list[str]:
    """The compiler's diagnostics, located at the Python lines of the ops
    they name instead of the traced module's text."""
    located: dict[int, PythonLocation] = {}
    text = _text(module, True)
    for number, line in enumerate(text.splitlines(), 1):
        if found := re.search(r'loc\("(.*)":(\d+):(\d+)\)\s*$', line):
            located[number] = PythonLocation(found[1], int(found[2]), int(found[3]))
    diagnostics: list[str] = []
    for diagnostic in err.diagnostics:
        first = diagnostic.split("\n", 1)[0]
        match = _DIAGNOSTIC.match(first)
        where = located.get(int(match[1])) if match else None
        if match is None or where is None:
            diagnostics.append(diagnostic)
        else:
            diagnostics.append(
                str(where.error(match[4])).replace(": error: ", f": {match[3]}: ", 1)
            )
    return diagnostics


def _caller(compiled: Callable[..., Any], traced: TracedModule) -> Callable[..., Any]:
    """The call of a compiled trace: the JIT function itself when it returns
    what the Python function did, else a wrapper allocating packed outputs
    and viewing codes as their ml_dtypes type."""
    outputs = traced.outputs
    if (
        traced.single
        and not traced.memory_inputs
        and not traced.byte_views
        and outputs[0] == _Output(None, None)
    ):
        return compiled
    packed = [o.packed_shape for o in outputs if o.packed_shape is not None]
    single_result = len(outputs) - len(packed) == 1

    def call(*args: object) -> Any:
        if packed or traced.memory_inputs:
            for a in args:
                if isinstance(a, np.ndarray) and a.ndim > 2:
                    raise ArgumentError(
                        str(
                            caller_location().error(
                                f"@{traced.name}: a function reading block-scaled "
                                "codes and scales from its arguments, or returning "
                                "packed codes, is not batched; got an argument of "
                                f"shape {a.shape}"
                            )
                        )
                    )
        if traced.byte_views:
            args = tuple(
                cast(Any, a).view(np.uint8) if i in traced.byte_views else a
                for i, a in enumerate(args)
            )
        buffers = [np.empty(shape, np.uint8) for shape in packed]
        returned = compiled(*args, *buffers)
        results = iter([returned] if single_result else returned or ())
        filled = iter(buffers)
        values: list[Any] = []
        for o in outputs:
            if o.packed_shape is not None:
                values.append(next(filled))
                continue
            r = next(results)
            values.append(r.view(o.view) if o.view is not None else r)
        return values[0] if traced.single else tuple(values)

    return call

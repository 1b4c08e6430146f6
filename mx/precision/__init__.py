"""Precision reports: what each conversion and each low-precision operation
did to the numbers of one run, against an f64 shadow execution of the same
program (docs/precision-report.md).

- `jit_report(f, *args, target_sqnr_db=None)` (`f.precision_report(...)` on a
  JIT-compiled function): the values come from compiled code (the
  function's own call and row kernels of its conversions,
  `mx.precision.kernels`, or else an instrumented copy of the function,
  `mx.precision.capture`);
- `interpreted_report(...)` (`mx-run --precision-report`): the values come
  from the reference interpreter.
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

import numpy as np
from xdsl.dialects import arith, func, memref, vector
from xdsl.dialects.builtin import FloatAttr, IntegerAttr
from xdsl.interpreter import Interpreter
from xdsl.ir import Operation

from mx.diagnostics import Source, op_diag
from mx.dialects import matrix
from mx.errors import ArgumentError
from mx.precision.capture import Capture, instrument, traced_function
from mx.precision.kernels import ROW_KERNEL_OPS, run_by_rows
from mx.precision.report import PrecisionReport
from mx.precision.trace import Trace, UnsupportedError

if TYPE_CHECKING:
    from mx.jit_runtime import JitFunction

__all__ = ["PrecisionReport", "UnsupportedError", "interpreted_report", "jit_report"]


def jit_report(
    function: JitFunction, *args: object, **options: object
) -> PrecisionReport:
    """Runs `function` once on `args` (a batch: once per element) and reports
    each value against its f64 shadow; the option `target_sqnr_db` (a
    number) adds a recommended format to each conversion from floats."""
    target_sqnr_db = _target(function.name, options)
    try:
        module, body = traced_function(function.source, function.name)
        runner = (
            _FunctionRun(function, body)
            if runs_by_rows(body)
            else _InstrumentedRun(function, body, instrument(module, body))
        )
        return _run(function, body, runner, args, target_sqnr_db)
    except UnsupportedError as err:
        source = Source.of_text("<string>", function.source)
        text = source.render(op_diag(err.op, err.message))
        raise UnsupportedError(err.op, err.message, text) from None


def _target(name: str, options: dict[str, object]) -> float | None:
    """The `target_sqnr_db` option; any other option is an ArgumentError."""
    unknown = sorted(set(options) - {"target_sqnr_db"})
    if unknown:
        raise ArgumentError(
            f"error: @{name}.precision_report: unknown option "
            f"{', '.join(unknown)} (the option is target_sqnr_db)"
        )
    target = options.get("target_sqnr_db")
    if target is None:
        return None
    # numbers.Real: Python's and NumPy's ints and floats, not bools
    if (
        isinstance(target, bool | np.bool_)
        or not isinstance(target, numbers.Real)
        or math.isnan(target)
    ):
        raise ArgumentError(
            f"error: @{name}.precision_report: target_sqnr_db must be a number "
            f"of dB, got {target!r}"
        )
    return float(target)


def runs_by_rows(body: func.FuncOp) -> bool:
    """Whether the function's own call and row kernels give every value of
    `body`: each op is a conversion (`ROW_KERNEL_OPS`), has only results
    the function returns, stores, or is a scalar `arith.constant`."""
    returned = (
        set(body.body.block.last_op.operands) if body.body.block.last_op else set()
    )
    for op in body.body.ops:
        if op.regions:  # loops and branches: their ops run many times
            return False
        if isinstance(op, (func.ReturnOp, *ROW_KERNEL_OPS, *_STORES)):
            continue
        if op.results and all(r in returned for r in op.results):
            continue
        if isinstance(op, arith.ConstantOp) and isinstance(
            op.value, IntegerAttr | FloatAttr
        ):
            continue
        return False
    return True


_STORES = (matrix.StoreOp, memref.StoreOp, vector.StoreOp)


class _Runner(Protocol):
    def __call__(
        self, args: Sequence[Any]
    ) -> tuple[Any, Callable[[Operation, Sequence[Any]], Sequence[Any]]]:
        """One call on `args`: what it returns, and the values of each op."""
        ...


@dataclass(frozen=True)
class _FunctionRun:
    """The values of a call from the function itself (what it returns) and
    from the row kernels of its conversions (`runs_by_rows`)."""

    function: JitFunction
    body: func.FuncOp

    def __call__(
        self, args: Sequence[Any]
    ) -> tuple[Any, Callable[[Operation, Sequence[Any]], Sequence[Any]]]:
        returned = self.function(*args)
        outputs = self.body.body.block.last_op
        assert outputs is not None
        results = returned if len(outputs.operands) != 1 else (returned,)
        by_value = dict(zip(outputs.operands, results or (), strict=True))
        pipeline = self.function.pipeline

        def values(op: Operation, inputs: Sequence[Any]) -> Sequence[Any]:
            if op.results and all(r in by_value for r in op.results):
                return [by_value[r] for r in op.results]
            if isinstance(op, ROW_KERNEL_OPS):
                return run_by_rows(op, inputs, pipeline)
            if isinstance(op, arith.ConstantOp):
                return [op.value]
            return []

        return returned, values


@dataclass(frozen=True)
class _InstrumentedRun:
    """The values of a call from an instrumented copy of the function
    (`mx.precision.capture`), compiled with the function's pipeline."""

    function: JitFunction
    body: func.FuncOp
    capture: Capture

    def __call__(
        self, args: Sequence[Any]
    ) -> tuple[Any, Callable[[Operation, Sequence[Any]], Sequence[Any]]]:
        from mx.jit_modules import compile_module

        text, pipeline = self.capture.text, self.function.pipeline
        compiled = compile_module(text, pipeline)[self.function.name]
        buffers = self.capture.buffers()
        returned = compiled(*args, *buffers)
        by_op = self.capture.values_by_op(self.body, buffers)
        runs = {op: iter(values) for op, values in by_op.items()}

        def values(op: Operation, _: Sequence[Any]) -> Sequence[Any]:
            if op in runs:
                return next(runs[op])
            return [None] * len(op.results)  # nothing captured (memrefs)

        return returned, values


def _run(
    function: JitFunction,
    body: func.FuncOp,
    runner: _Runner,
    args: Sequence[object],
    target_sqnr_db: float | None,
) -> PrecisionReport:
    params = function.params
    arrays, batch = function.batched_arguments(args)
    if math.prod(batch) == 0:  # nothing runs: no records, a call's empty results
        return PrecisionReport.of(function.name, [], function(*args), target_sqnr_db)
    trace = Trace(body, target_sqnr_db, compiled=True)
    results: list[Any] = []
    for index in np.ndindex(batch):
        call = [
            a if p.kind == "memref" else np.broadcast_to(a, batch + p.core)[index]
            for p, a in zip(params, arrays, strict=True)
        ]
        returned, values = runner(call)
        trace.run(call, values)
        results.append(returned)
    return PrecisionReport.of(
        function.name,
        list(trace.records.values()),
        _stack(results, batch),
        target_sqnr_db,
    )


def _stack(results: list[Any], batch: tuple[int, ...]) -> Any:
    """The results of the calls of a batch as one call's (batch-shaped)."""
    if not batch:
        return results[0]
    if isinstance(results[0], tuple):
        parts: list[Any] = [
            _stack([r[i] for r in results], batch) for i in range(len(results[0]))
        ]
        return tuple(parts)
    if results[0] is None:
        return None
    stacked = np.stack([np.asarray(r) for r in results])
    return stacked.reshape(batch + stacked.shape[1:])


def interpreted_report(
    interpreter: Interpreter,
    body: func.FuncOp,
    arguments: Sequence[Any],
    target_sqnr_db: float | None = None,
) -> PrecisionReport:
    """Runs `body` (calls inlined, `check_supported`) with the reference
    interpreter on its runtime `arguments` and reports each value."""
    trace = Trace(body, target_sqnr_db)

    def source(op: Operation, inputs: Sequence[Any]) -> Sequence[Any]:
        return interpreter.run_op(op, tuple(inputs))

    results = trace.run(arguments, source)
    return PrecisionReport.of(
        body.sym_name.data, list(trace.records.values()), tuple(results), target_sqnr_db
    )

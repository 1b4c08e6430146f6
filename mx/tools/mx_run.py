"""`mx-run FILE [--entry NAME] [--arg VALUE]...`: interpret a function of an
MLIR file and print its results (docs/tools.md).

The file is parsed and verified as `mx-opt` does (located diagnostics, exit
status 1 on bad input); the entry function (default `main`) is run by mx's
reference interpreter (`mx.interpreters`) on the `--arg` values, one per
parameter (`mx.tools.run_arguments`). Undefined behaviour
(integer division by zero, an out-of-range dynamic index, ...) is a located
`runtime error` with exit status 1; a bug in mx is an `internal error` with
exit status 2.

Each result is printed as `result #N : TYPE = VALUE`, then each memref
argument (whose contents the function may have stored into) as
`argument #N : TYPE = VALUE`; a matrix is printed row by row, one row per
line, in the order of `matrix.constant`'s literal.
"""

from __future__ import annotations

import math
import sys
from argparse import ArgumentTypeError
from collections.abc import Sequence
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
from xdsl.interpreter import Interpreter
from xdsl.ir import Attribute
from xdsl.traits import SymbolTable
from xdsl.utils.exceptions import InterpretationError

from mx.diagnostics import Diag, Source, did_you_mean, op_diag
from mx.dialects.matrix import MatrixType, is_float_element
from mx.frontend import (
    FrontendError,
    deep_recursion,
    mx_context,
    parse_source,
)
from mx.interpreters import CurrentOp, make_interpreter, to_runtime
from mx.interpreters.limits import OUT_OF_MEMORY, InterpreterLimitError
from mx.interpreters.matrix import memory_view, scalar_value
from mx.semantics.bfloat16 import is_bf16
from mx.semantics.matrix import (
    UndefinedBehaviorError,
    container_bits,
    element_dtype,
    row_major_values,
)
from mx.tools.exit_status import ArgumentParser, run_tool
from mx.tools.run_arguments import ArgumentError, argument_value
from mx.verifier import verify_module


class _Failed(Exception):
    """Bad input or undefined behaviour: print these diagnostics, exit status 1."""

    def __init__(self, diags: list[Diag]) -> None:
        super().__init__(diags)
        self.diags = diags


def _parse(source: Source) -> ModuleOp:
    try:
        return parse_source(mx_context(), source.text, source.name)
    except FrontendError as err:
        raise _Failed(err.diags) from None


def _entry(module: ModuleOp, name: str, arg_count: int) -> FuncOp:
    func = SymbolTable.lookup_symbol(module, name)
    if not isinstance(func, FuncOp):
        names = [
            op.sym_name.data
            for op in module.ops
            if isinstance(op, FuncOp) and op.body.blocks
        ]
        listed = ", ".join(f"@{n}" for n in names) or "none"
        hint = did_you_mean(f"@{name}", [f"@{n}" for n in names])
        message = (
            f"no function @{name} to run{hint} (the module's functions: {listed}; "
            "choose one with --entry NAME)"
        )
        raise _Failed([Diag("error", None, 1, message)])
    if not func.body.blocks:
        raise _Failed([op_diag(func, f"entry function @{name} has no body")])
    count = len(func.function_type.inputs.data)
    if count != arg_count:
        raise _Failed(
            [
                op_diag(
                    func,
                    f"@{name} takes {count} argument{'s' * (count != 1)}, got "
                    f"{arg_count} (give one --arg per parameter)",
                )
            ]
        )
    return func


def _arguments(
    func: FuncOp, texts: Sequence[str], interpreter: Interpreter
) -> tuple[Any, ...]:
    """The interpreter's values of the `--arg` texts, one per parameter."""
    values: list[Any] = []
    for index, (text, t) in enumerate(
        zip(texts, func.function_type.inputs.data, strict=True)
    ):
        try:
            values.append(to_runtime(argument_value(text, t), t, interpreter))
        except (ArgumentError, ValueError) as err:  # to_runtime: ValueError
            raise _Failed([op_diag(func, f"argument #{index} ({t}): {err}")]) from None
    return tuple(values)


# -- printing results ---------------------------------------------------------


def format_element(value: Any, element_type: Attribute) -> str:
    """One element: floats as the shortest decimal that reads back as the same
    value of its type (bf16 through f32, which holds it exactly), laid out as
    Python's repr; integers in decimal as the JIT returns them: i8 … i64
    signed (NumPy's int8 … int64), an integer of another width (the i4/i6
    containers) as its bits, unsigned (`-1 : i4` is 15)."""
    if isinstance(element_type, IntegerType):
        width = element_type.width.data
        if width == 1:
            return "true" if int(value) & 1 else "false"
        bits = int(value) & ((1 << width) - 1)
        if width not in (8, 16, 32, 64):
            return str(bits)
        return str(bits - ((bits >> (width - 1)) << width))
    dtype = element_dtype(element_type)
    if is_bf16(dtype):
        dtype = np.dtype(np.float32)
    with np.errstate(invalid="ignore"):  # a signalling NaN is printed as nan
        element = cast(np.floating[Any], np.asarray(value).astype(dtype)[()])
    digits = np.format_float_scientific(element)
    return repr(float(digits))


def _format_row(values: Sequence[Any], element_type: Attribute, width: int) -> str:
    return (
        "["
        + ", ".join(format_element(v, element_type).rjust(width) for v in values)
        + "]"
    )


def format_result(value: Any, t: Attribute) -> str:
    """`TYPE = VALUE`, a matrix's rows on the following lines."""
    if isinstance(t, MatrixType):
        m = cast(np.ndarray[Any, Any], value)
        bits = container_bits(t.element_type)
        elements = (
            row_major_values(m, bits) if bits is not None else list(m.reshape(-1))
        )
        texts = [format_element(v, t.element_type) for v in elements]
        width = max(len(s) for s in texts)
        rows = [
            _format_row(elements[r * t.cols : (r + 1) * t.cols], t.element_type, width)
            for r in range(t.rows)
        ]
        return f"{t} =\n" + "\n".join(f"  {row}" for row in rows)
    if isinstance(t, VectorType):
        element_type = cast(VectorType[Attribute], t).element_type
        return f"{t} = {_format_row(list(value), element_type, 0)}"
    if isinstance(t, MemRefType):
        element_type = cast(MemRefType[Attribute], t).element_type
        data = memory_view(value, element_type)
        return f"{t} = {_format_row(list(data), element_type, 0)}"
    if isinstance(t, IndexType):
        return f"{t} = {format_element(scalar_value(value), IntegerType(64))}"
    if is_float_element(t) or isinstance(t, IntegerType):
        return f"{t} = {format_element(scalar_value(value), t)}"
    return f"{t} = {value}"


# -- driver ---------------------------------------------------------------------


def run(
    source: Source,
    entry: str,
    args: Sequence[str] = (),
    report: str = "",
    target_sqnr_db: float | None = None,
) -> list[str]:
    """The printed results of running `entry` on the `--arg` texts `args`
    (`report` "table" or "json": its precision report instead, with a
    recommended format per conversion given `target_sqnr_db`); raises
    _Failed on bad input or UB."""
    module = _parse(source)
    if (diag := verify_module(module)) is not None:
        raise _Failed([diag])
    func = _entry(module, entry, len(args))
    interpreter = make_interpreter(module)
    arguments = _arguments(func, args, interpreter)
    try:
        if report:
            return [
                _precision_report(
                    module, func, interpreter, arguments, report, target_sqnr_db
                )
            ]
        results = interpreter.call_op(func, arguments)
    except UndefinedBehaviorError as err:
        where = err.op or cast(CurrentOp, interpreter.listeners[0]).op
        assert where is not None  # the listener saw the op that raised
        raise _Failed(
            [op_diag(where, f"runtime error: undefined behaviour: {err.message}")]
        ) from None
    except (InterpreterLimitError, MemoryError) as err:
        where = cast(CurrentOp, interpreter.listeners[0]).op
        if isinstance(err, InterpreterLimitError):
            where, message = err.op or where, err.message
        else:
            message = OUT_OF_MEMORY
        assert where is not None
        raise _Failed([op_diag(where, f"runtime error: {message}")]) from None
    except InterpretationError as err:
        where = cast(CurrentOp, interpreter.listeners[0]).op
        message = f"cannot interpret: {err}"
        raise _Failed(
            [op_diag(where, message) if where else Diag("error", None, 1, message)]
        ) from None
    outputs = func.function_type.outputs.data
    inputs = func.function_type.inputs.data
    return [
        *(
            f"result #{i} : {format_result(value, t)}"
            for i, (value, t) in enumerate(zip(results, outputs, strict=True))
        ),
        # Stores into memref arguments are results too.
        *(
            f"argument #{i} : {format_result(value, t)}"
            for i, (value, t) in enumerate(zip(arguments, inputs, strict=True))
            if isinstance(t, MemRefType)
        ),
    ]


def _precision_report(
    module: ModuleOp,
    func: FuncOp,
    interpreter: Interpreter,
    arguments: tuple[Any, ...],
    form: str,
    target_sqnr_db: float | None,
) -> str:
    """The precision report of one interpreted run (docs/precision-report.md)."""
    from mx.precision import UnsupportedError, interpreted_report
    from mx.precision.capture import prepare

    try:
        report = interpreted_report(
            interpreter, prepare(module, func), arguments, target_sqnr_db
        )
    except UnsupportedError as err:
        raise _Failed([op_diag(err.op, err.message)]) from None
    return report.to_json() if form == "json" else str(report)


def _read(path: str) -> Source:
    name = "<stdin>" if path == "-" else path
    try:
        if path == "-":
            text = sys.stdin.read()
        else:
            with open(path, encoding="utf-8") as f:
                text = f.read()
    except (OSError, UnicodeDecodeError) as err:
        raise _Failed([Diag("error", None, 1, f"cannot read input: {err}")]) from None
    return Source(name, text.split("\n"))


def _joined_values(argv: Sequence[str]) -> list[str]:
    """`--arg VALUE` as `--arg=VALUE`: argparse would take a value such as
    `-inf`, `-1e-3` or `-0x1` for an option."""
    joined: list[str] = []
    values = iter(argv)
    for arg in values:
        if arg == "--":  # the rest is positional
            return [*joined, arg, *values]
        value = (
            next(values, None)
            if arg in ("--arg", "--entry", "--target-sqnr-db")
            else None
        )
        joined.append(arg if value is None else f"{arg}={value}")
    return joined


def _decibels(text: str) -> float:
    """A `--target-sqnr-db` value: a number (inf allowed, not NaN)."""
    try:
        value = float(text)
    except ValueError:
        value = math.nan
    if math.isnan(value):
        raise ArgumentTypeError(f"expected a number of dB, got '{text}'")
    return value


def main(argv: Sequence[str] | None = None) -> int:
    arg_parser = ArgumentParser(
        prog="mx-run",
        description="run a function of an MLIR file with mx's reference interpreter",
    )
    arg_parser.add_argument("input_file", help="MLIR file ('-' for stdin)")
    arg_parser.add_argument(
        "--entry", default="main", help="function to run (default: main)"
    )
    arg_parser.add_argument(
        "--arg",
        action="append",
        default=[],
        metavar="VALUE",
        help="one argument of the entry function, in order: a number (3, -2.5, "
        "0x7FC00000, nan, true), a list as in a dense literal ('[[1.0, 2.0]]'), "
        "or a .npy file",
    )
    arg_parser.add_argument(
        "--precision-report",
        action="store_true",
        help="print what each conversion and low-precision op did to the values "
        "(against an f64 shadow run) instead of the results",
    )
    arg_parser.add_argument(
        "--json", action="store_true", help="with --precision-report: as JSON"
    )
    arg_parser.add_argument(
        "--target-sqnr-db",
        type=_decibels,
        metavar="DB",
        help="with --precision-report: recommend for each conversion the "
        "narrowest format whose SQNR is at least DB",
    )
    args = arg_parser.parse_args(_joined_values(sys.argv[1:] if argv is None else argv))
    for option, given in (
        ("--json", args.json),
        ("--target-sqnr-db", args.target_sqnr_db is not None),
    ):
        if given and not args.precision_report:
            arg_parser.error(f"{option} needs --precision-report")
    source = Source(args.input_file, [])

    def body() -> int:
        nonlocal source
        try:
            source = _read(args.input_file)
            report = ("json" if args.json else "table") if args.precision_report else ""
            lines = run(source, args.entry, args.arg, report, args.target_sqnr_db)
            print("\n".join(lines))
            return 0
        except _Failed as failed:
            for diag in failed.diags:
                print(source.render(diag), file=sys.stderr)
            return 1

    with deep_recursion():
        return run_tool("mx-run", body)


if __name__ == "__main__":
    sys.exit(main())

"""Scalar `arith`/`math` ops that xDSL 0.75's interpreter lacks or gets wrong.

xDSL computes `addf`/`subf`/`mulf` in f64 and `FloatAttr` rounds the result
once to the result type, which is correctly rounded for f16/bf16/f32 (f64 has
more than twice their precision plus two bits), so those are kept. Added here,
with mx's reference semantics (`mx.semantics.matrix`) on 1x1 arrays:

- `arith.constant` of a dense `vector` (a 1-D NumPy array, as the matrix
  interpreter represents vectors);
- `divf`, `negf`, `extf`, `truncf`, the int <-> float casts (C semantics: UB
  for NaN / out of range), `math.fma` (one rounding), the float `math` ops
  (in f64, rounded once; IEEE results where Python's `math` raised);
- the integer divisions `divsi`/`divui`/`remsi`/`remui`/`floordivsi` and the
  `ceildivsi`/`ceildivui` xDSL lacks, on integers of any width (`i1` and
  `index` too), with UB on zero and INT_MIN / -1 instead of xDSL's `assert`;
- `maxnumf`/`minnumf` (a NaN operand is ignored).
"""

from __future__ import annotations

import operator
from collections.abc import Callable
from typing import Any, cast

import numpy as np
import numpy.typing as npt
from xdsl.dialects import arith, math
from xdsl.dialects.builtin import (
    DenseIntOrFPElementsAttr,
    IndexType,
    IntegerAttr,
    IntegerType,
    VectorType,
)
from xdsl.interpreter import Interpreter, PythonValues, impl, register_impls
from xdsl.interpreters.arith import ArithFunctions
from xdsl.interpreters.math import MathFunctions
from xdsl.ir import Attribute, Operation

from mx.interpreters.matrix import scalar_attr, scalar_value
from mx.interpreters.vector import vector_constant
from mx.semantics import matrix as sem


def _scalar_type(interpreter: Interpreter, t: Attribute) -> Attribute:
    return IntegerType(interpreter.index_bitwidth) if isinstance(t, IndexType) else t


def _cell(interpreter: Interpreter, value: Any, t: Attribute) -> sem.Array:
    """A runtime scalar as a 1x1 array of its type's dtype."""
    dtype = sem.element_dtype(_scalar_type(interpreter, t))
    return np.array([[sem.scalar(scalar_value(value), dtype)]], dtype=dtype)


def _result(interpreter: Interpreter, op: Operation, cell: sem.Array) -> PythonValues:
    return (scalar_attr(cell[0, 0], _scalar_type(interpreter, op.results[0].type)),)


def _binary(
    interpreter: Interpreter, op: Operation, args: PythonValues
) -> tuple[sem.Array, sem.Array]:
    t = op.results[0].type
    return _cell(interpreter, args[0], t), _cell(interpreter, args[1], t)


def _convert(
    interpreter: Interpreter, op: Operation, args: PythonValues, unsigned: bool
) -> PythonValues:
    source = _cell(interpreter, args[0], op.operands[0].type)
    target = sem.element_dtype(_scalar_type(interpreter, op.results[0].type))
    return _result(interpreter, op, sem.cast(source, target, unsigned=unsigned))


# Integer ops of any width (i1 masks, index) in Python integers.


def _width(interpreter: Interpreter, t: Attribute) -> int:
    return cast(IntegerType, _scalar_type(interpreter, t)).width.data


def _unsigned(value: Any, width: int) -> int:
    return int(scalar_value(value)) & ((1 << width) - 1)


def _signed(value: Any, width: int) -> int:
    bits = _unsigned(value, width)
    return bits - ((bits >> (width - 1)) << width)


def _integer(interpreter: Interpreter, op: Operation, value: int) -> PythonValues:
    """`value` wrapped to the result's width."""
    t = _scalar_type(interpreter, op.results[0].type)
    return (IntegerAttr(value, cast(IntegerType, t), truncate_bits=True),)


def _operand_widths(interpreter: Interpreter, op: Operation) -> tuple[int, int]:
    return (
        _width(interpreter, op.operands[0].type),
        _width(interpreter, op.results[0].type),
    )


def _dividend_divisor(
    interpreter: Interpreter, op: Operation, args: PythonValues, signed: bool
) -> tuple[int, int]:
    """The operands of an integer division, signed or not; division by zero
    and INT_MIN / -1 (signed) are undefined behaviour."""
    width = _width(interpreter, op.results[0].type)
    read = _signed if signed else _unsigned
    a, b = read(args[0], width), read(args[1], width)
    if b == 0:
        raise sem.UndefinedBehaviorError("integer division by zero")
    if signed and b == -1 and a == -(1 << (width - 1)):
        raise sem.UndefinedBehaviorError(f"signed integer division overflow ({a} / -1)")
    return a, b


def _truncated(a: int, b: int) -> int:
    """a / b rounded toward zero (C's division)."""
    quotient = abs(a) // abs(b)
    return quotient if (a < 0) == (b < 0) else -quotient


def _ceiling(a: int, b: int) -> int:
    """a / b rounded toward +infinity."""
    return -(-a // b)


def _integer_division(
    op_type: type[Operation], quotient: Callable[[int, int], int], signed: bool
) -> Any:
    """The implementation of an integer division or remainder op computing
    `quotient(a, b)` on its operands read signed or not (`_dividend_divisor`),
    wrapped to the result's width."""

    @impl(op_type)
    def run(
        self: ArithFunctions,
        interpreter: Interpreter,
        op: Operation,
        args: PythonValues,
    ) -> PythonValues:
        a, b = _dividend_divisor(interpreter, op, args, signed=signed)
        return _integer(interpreter, op, quotient(a, b))

    return run


def _number_operand(args: PythonValues) -> PythonValues | None:
    """`maxnumf`/`minnumf` ignore a NaN operand: the other one (a NaN if both
    are), or None when neither is a NaN (then they are `maximumf`/`minimumf`;
    LLVM leaves the order of +0 and -0 open, this takes maximumf's)."""
    lhs, rhs = (float(scalar_value(a)) for a in args)
    if lhs != lhs:
        return (args[1],)
    if rhs != rhs:
        return (args[0],)
    return None


def _ignoring_nan(op_type: type[Operation], ordered: Callable[..., Any]) -> Any:
    """The implementation of `maxnumf`/`minnumf`: the operand that is not a
    NaN (`_number_operand`), else `ordered` (xDSL's `maximumf`/`minimumf`)."""

    @impl(op_type)
    def run(
        self: ArithFunctions,
        interpreter: Interpreter,
        op: Operation,
        args: PythonValues,
    ) -> PythonValues:
        if (number := _number_operand(args)) is not None:
            return number
        return ordered(self, interpreter, op, args).values

    return run


def _shift_amount(interpreter: Interpreter, op: Operation, args: PythonValues) -> int:
    width = _width(interpreter, op.results[0].type)
    amount = _unsigned(args[1], width)
    if amount >= width:
        raise sem.UndefinedBehaviorError(
            f"shift amount {amount} is not below the bit width {width}"
        )
    return amount


@register_impls
class MxArithFunctions(ArithFunctions):
    @impl(arith.ConstantOp)
    def run_constant(
        self, interpreter: Interpreter, op: arith.ConstantOp, args: PythonValues
    ) -> PythonValues:
        value, t = op.value, op.result.type
        if isinstance(value, DenseIntOrFPElementsAttr) and isinstance(t, VectorType):
            return (vector_constant(value, cast(VectorType[Attribute], t)),)
        # `@impl` wraps the inherited implementation: unwrap its result.
        return super().run_constant(interpreter, op, args).values

    @impl(arith.DivfOp)
    def run_divf(
        self, interpreter: Interpreter, op: arith.DivfOp, args: PythonValues
    ) -> PythonValues:
        return _result(interpreter, op, sem.div(*_binary(interpreter, op, args)))

    @impl(arith.NegfOp)
    def run_negf(
        self, interpreter: Interpreter, op: arith.NegfOp, args: PythonValues
    ) -> PythonValues:
        cell = _cell(interpreter, args[0], op.result.type)
        return _result(interpreter, op, sem.neg(cell))

    run_divsi = _integer_division(arith.DivSIOp, _truncated, signed=True)
    run_divui = _integer_division(arith.DivUIOp, operator.floordiv, signed=False)
    run_remsi = _integer_division(
        arith.RemSIOp, lambda a, b: a - b * _truncated(a, b), signed=True
    )
    run_remui = _integer_division(arith.RemUIOp, operator.mod, signed=False)
    run_floordivsi = _integer_division(
        arith.FloorDivSIOp, operator.floordiv, signed=True
    )
    run_ceildivsi = _integer_division(arith.CeilDivSIOp, _ceiling, signed=True)
    run_ceildivui = _integer_division(arith.CeilDivUIOp, _ceiling, signed=False)

    run_maxnumf = _ignoring_nan(arith.MaxnumfOp, ArithFunctions.run_maximumf)
    run_minnumf = _ignoring_nan(arith.MinnumfOp, ArithFunctions.run_minimumf)

    @impl(arith.ExtFOp)
    def run_extf(
        self, interpreter: Interpreter, op: arith.ExtFOp, args: PythonValues
    ) -> PythonValues:
        return _convert(interpreter, op, args, unsigned=False)

    @impl(arith.TruncFOp)
    def run_truncf(
        self, interpreter: Interpreter, op: arith.TruncFOp, args: PythonValues
    ) -> PythonValues:
        return _convert(interpreter, op, args, unsigned=False)

    @impl(arith.SIToFPOp)
    def run_sitofp(
        self, interpreter: Interpreter, op: arith.SIToFPOp, args: PythonValues
    ) -> PythonValues:
        return _convert(interpreter, op, args, unsigned=False)

    @impl(arith.UIToFPOp)
    def run_uitofp(
        self, interpreter: Interpreter, op: arith.UIToFPOp, args: PythonValues
    ) -> PythonValues:
        return _convert(interpreter, op, args, unsigned=True)

    @impl(arith.FPToSIOp)
    def run_fptosi(
        self, interpreter: Interpreter, op: arith.FPToSIOp, args: PythonValues
    ) -> PythonValues:
        return _convert(interpreter, op, args, unsigned=False)

    @impl(arith.FPToUIOp)
    def run_fptoui(
        self, interpreter: Interpreter, op: arith.FPToUIOp, args: PythonValues
    ) -> PythonValues:
        return _convert(interpreter, op, args, unsigned=True)

    @impl(arith.ExtSIOp)
    def run_extsi(
        self, interpreter: Interpreter, op: arith.ExtSIOp, args: PythonValues
    ) -> PythonValues:
        source, _ = _operand_widths(interpreter, op)
        return _integer(interpreter, op, _signed(args[0], source))

    @impl(arith.ExtUIOp)
    def run_extui(
        self, interpreter: Interpreter, op: arith.ExtUIOp, args: PythonValues
    ) -> PythonValues:
        source, _ = _operand_widths(interpreter, op)
        return _integer(interpreter, op, _unsigned(args[0], source))

    @impl(arith.TruncIOp)
    def run_trunci(
        self, interpreter: Interpreter, op: arith.TruncIOp, args: PythonValues
    ) -> PythonValues:
        return _integer(interpreter, op, int(scalar_value(args[0])))

    @impl(arith.ShLIOp)
    def run_shli(
        self, interpreter: Interpreter, op: arith.ShLIOp, args: PythonValues
    ) -> PythonValues:
        amount = _shift_amount(interpreter, op, args)
        return _integer(interpreter, op, int(scalar_value(args[0])) << amount)

    @impl(arith.ShRSIOp)
    def run_shrsi(
        self, interpreter: Interpreter, op: arith.ShRSIOp, args: PythonValues
    ) -> PythonValues:
        amount = _shift_amount(interpreter, op, args)
        width = _width(interpreter, op.results[0].type)
        return _integer(interpreter, op, _signed(args[0], width) >> amount)

    @impl(arith.ShRUIOp)
    def run_shrui(
        self, interpreter: Interpreter, op: arith.ShRUIOp, args: PythonValues
    ) -> PythonValues:
        amount = _shift_amount(interpreter, op, args)
        width = _width(interpreter, op.results[0].type)
        return _integer(interpreter, op, _unsigned(args[0], width) >> amount)

    @impl(arith.MaxSIOp)
    def run_maxsi(
        self, interpreter: Interpreter, op: arith.MaxSIOp, args: PythonValues
    ) -> PythonValues:
        width = _width(interpreter, op.results[0].type)
        return _integer(interpreter, op, max(_signed(a, width) for a in args))

    @impl(arith.MinSIOp)
    def run_minsi(
        self, interpreter: Interpreter, op: arith.MinSIOp, args: PythonValues
    ) -> PythonValues:
        width = _width(interpreter, op.results[0].type)
        return _integer(interpreter, op, min(_signed(a, width) for a in args))

    @impl(arith.MaxUIOp)
    def run_maxui(
        self, interpreter: Interpreter, op: arith.MaxUIOp, args: PythonValues
    ) -> PythonValues:
        width = _width(interpreter, op.results[0].type)
        return _integer(interpreter, op, max(_unsigned(a, width) for a in args))

    @impl(arith.MinUIOp)
    def run_minui(
        self, interpreter: Interpreter, op: arith.MinUIOp, args: PythonValues
    ) -> PythonValues:
        width = _width(interpreter, op.results[0].type)
        return _integer(interpreter, op, min(_unsigned(a, width) for a in args))

    @impl(arith.BitcastOp)
    def run_bitcast(
        self, interpreter: Interpreter, op: arith.BitcastOp, args: PythonValues
    ) -> PythonValues:
        source = _cell(interpreter, args[0], op.operands[0].type)
        target = sem.element_dtype(_scalar_type(interpreter, op.results[0].type))
        return _result(interpreter, op, source.view(target))


def _float_unary(
    op_type: type[Operation], function: Callable[[npt.NDArray[np.float64]], Any]
) -> Any:
    """The implementation of a float `math` op computing `function` in f64 and
    rounding once to the op's type, with IEEE results where xDSL's (Python's
    `math`) raised: exp(1000) is inf, log(0) is -inf, log(-1) and sqrt(-1)
    are NaN."""

    @impl(op_type)
    def run(
        self: MathFunctions, interpreter: Interpreter, op: Operation, args: PythonValues
    ) -> PythonValues:
        cell = _cell(interpreter, args[0], op.results[0].type)
        with np.errstate(all="ignore"):
            value = np.asarray(function(cell.astype(np.float64))).astype(cell.dtype)
        return _result(interpreter, op, value)

    return run


@register_impls
class MxMathFunctions(MathFunctions):
    run_exp = _float_unary(math.ExpOp, np.exp)
    run_exp2 = _float_unary(math.Exp2Op, np.exp2)
    run_log = _float_unary(math.LogOp, np.log)
    run_log2 = _float_unary(math.Log2Op, np.log2)
    run_log10 = _float_unary(math.Log10Op, np.log10)
    run_sqrt = _float_unary(math.SqrtOp, np.sqrt)
    run_sin = _float_unary(math.SinOp, np.sin)
    run_cos = _float_unary(math.CosOp, np.cos)
    run_tanh = _float_unary(math.TanhOp, np.tanh)
    run_absf = _float_unary(math.AbsFOp, np.abs)
    run_floor = _float_unary(math.FloorOp, np.floor)
    run_ceil = _float_unary(math.CeilOp, np.ceil)
    run_trunc = _float_unary(math.TruncOp, np.trunc)
    run_roundeven = _float_unary(math.RoundEvenOp, np.rint)
    run_round = _float_unary(
        math.RoundOp, lambda x: np.copysign(np.floor(np.abs(x) + 0.5), x)
    )

    @impl(math.FmaOp)
    def run_fma(
        self, interpreter: Interpreter, op: math.FmaOp, args: PythonValues
    ) -> PythonValues:
        t = op.result.type
        a, b, c = (_cell(interpreter, v, t) for v in args)
        return _result(interpreter, op, sem.fma(a, b, c))

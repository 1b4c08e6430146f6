"""The shadow execution: one walk of a function's body that pairs every value
with its f64 shadow (the same program with every conversion and every
rounding of f16/bf16/f32 arithmetic replaced by f64, the conversions by the
identity) and tallies the reported values (docs/precision-report.md).

The values themselves come from a `ValueSource`: the reference interpreter
(`mx-run --precision-report`) or the compiled code (`mx.precision.capture`).
The shadow is computed with vectorized NumPy in f64.

Loop bodies (`scf.for`, `affine.for`) run once per iteration, with values
and shadows carried through iter_args, and `scf.if` the region taken; a
record per op site adds up its runs. Calls are inlined
first (`inline_calls`). Shadows flow through memory for the `matrix` loads and
stores and the `memref`/`vector` ones on 1-D memrefs (a shadow per element
position of each memref argument).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from functools import cache
from typing import Any, cast

import numpy as np
from xdsl.dialects import affine, arith, func, memref, scf, vector
from xdsl.dialects import math as math_dialect
from xdsl.dialects.builtin import (
    AffineMapAttr,
    FileLineColLoc,
    FloatAttr,
    IndexType,
    IntegerAttr,
    IntegerType,
    MemRefType,
    ModuleOp,
    VectorType,
)
from xdsl.ir import Attribute, Block, Operation, SSAValue
from xdsl.rewriter import InsertPoint, Rewriter

from mx.dialects import arbfp, matrix
from mx.dialects.matrix import element_type_of
from mx.errors import MXError
from mx.precision.quantize import Conversion
from mx.precision.stats import F64, Tally, exact, measure
from mx.semantics import matrix as sem
from mx.semantics.arbfp import FORMATS, ScaleRule, decode, scaled_decode

ValueSource = Callable[[Operation, Sequence[Any]], Sequence[Any]]
"""The values of an op's results, given its operands' (runtime values)."""

NARROW_FLOATS = ("f16", "bf16")

CANDIDATES = tuple(k for k in FORMATS if k != "f8e8m0fnu")
"""The formats a recommendation chooses from (every element format)."""


class UnsupportedError(MXError):
    """The program uses something the precision report does not handle;
    `op` is where, `message` what (the text is located at `op`)."""

    def __init__(self, op: Operation, message: str, text: str | None = None):
        super().__init__(text or f"{location(op)}: error: '{op.name}' op {message}")
        self.op, self.message = op, message


def location(op: Operation) -> str:
    """`file:line:col` of `op` (or of its nearest located ancestor)."""
    located: Operation | None = op
    while located is not None:
        loc = located.location
        if isinstance(loc, FileLineColLoc):
            return f"{loc.filename.data}:{loc.line.data}:{loc.column.data}"
        located = located.parent_op()
    return "?"


def unsupported(op: Operation, message: str) -> UnsupportedError:
    return UnsupportedError(op, f"is not supported by the precision report: {message}")


def inline_calls(module: ModuleOp, body: func.FuncOp) -> None:
    """Replaces each `func.call` in `body` by the callee's body, until none is
    left (in loops and branches too; callees are functions of `module`)."""
    for _ in range(1000):
        call = next((op for op in body.walk() if isinstance(op, func.CallOp)), None)
        if call is None:
            return
        name = call.callee.string_value()
        callee = next(
            (
                o
                for o in module.ops
                if isinstance(o, func.FuncOp) and o.sym_name.data == name
            ),
            None,
        )
        if callee is None or not callee.body.blocks:
            raise unsupported(call, f"@{name} has no body to inline")
        block = callee.body.clone().block
        returned = block.last_op
        assert isinstance(returned, func.ReturnOp)
        values = list(returned.operands)
        Rewriter.inline_block(block, InsertPoint.before(call), call.arguments)
        for result, value in zip(call.results, values, strict=True):
            result.replace_all_uses_with(value)
        Rewriter.erase_op(returned)
        Rewriter.erase_op(call)
    raise unsupported(body, "calls nested too deeply to inline")


REGION_OPS = (scf.ForOp, affine.ForOp, scf.IfOp)
"""The ops with regions the trace runs (their bodies once per iteration)."""


def check_supported(body: func.FuncOp) -> None:
    """Raises UnsupportedError unless every op of `body` with regions is a
    loop or branch of `REGION_OPS` and its vectors are one-dimensional."""
    for op in body.walk():
        if op is not body and op.regions and not isinstance(op, REGION_OPS):
            raise unsupported(
                op, "only scf.for, affine.for and scf.if have regions it runs"
            )
        values = body.body.block.args if op is body else op.results
        for v in values:
            if isinstance(v.type, VectorType) and len(v.type.get_shape()) != 1:
                raise unsupported(op, f"{v.type} has more than one dimension")


@cache  # asked for every value an op produces, in every iteration of a loop
def float_name(t: Attribute) -> str | None:
    """`f16`, `bf16`, `f32` or `f64` for a float scalar, vector or matrix type."""
    return arbfp.float_type_name(element_type_of(t))


def as_array(value: Any) -> np.ndarray[Any, Any]:
    """A runtime value (interpreter attribute, NumPy number or array) as an array."""
    if isinstance(value, IntegerAttr | FloatAttr):
        return np.asarray(cast(Any, value).value.data)
    return np.asarray(value)


def as_f64(value: Any, t: Attribute) -> F64:
    """The numbers a float value of type `t` holds, in f64 (exact)."""
    array = as_array(value)
    dtype = sem.element_dtype(element_type_of(t))
    return array.astype(dtype, copy=False).astype(np.float64, copy=False)


@dataclass
class Record:
    """One reported value, accumulated over the elements of a batch."""

    op: Operation
    type: str
    tally: Tally = field(default_factory=Tally)
    inputs: list[Tally] = field(default_factory=lambda: list[Tally]())
    blocks: int | None = None
    rules: dict[str, Tally] = field(default_factory=lambda: dict[str, Tally]())
    """`scaled_convert_to`: the tally under each scale rule."""
    candidates: dict[str, Tally] = field(default_factory=lambda: dict[str, Tally]())
    """With a target SQNR: the tally of the value converted to each format."""
    made_nonfinite: set[str] = field(default_factory=lambda: set[str]())
    """The candidates that turned finite inputs into NaN or ±inf (overflow
    without `saturate`, negatives into an unsigned format)."""
    scale_rule: str | None = None
    format: str | None = None


_STRUCTURAL = (
    matrix.TransposeOp,
    matrix.ExtractOp,
    matrix.InsertOp,
    matrix.SplatOp,
    matrix.ConstantOp,
    matrix.LoadOp,
    arith.ConstantOp,
    arith.ExtFOp,
    vector.BroadcastOp,
    math_dialect.AbsFOp,
    math_dialect.CopySignOp,
)
"""Ops that never round: their results are recorded only as operands."""


def _round_half_away(x: F64) -> F64:
    whole = np.trunc(x)  # x - whole is exact: the fraction of x
    return np.where(np.abs(x - whole) >= 0.5, whole + np.sign(x), whole)


_MATH_UNARY: dict[type[Operation], Callable[[F64], F64]] = {
    math_dialect.ExpOp: np.exp,
    math_dialect.Exp2Op: np.exp2,
    math_dialect.LogOp: np.log,
    math_dialect.Log2Op: np.log2,
    math_dialect.Log10Op: np.log10,
    math_dialect.SqrtOp: np.sqrt,
    math_dialect.RsqrtOp: lambda x: 1 / np.sqrt(x),
    math_dialect.SinOp: np.sin,
    math_dialect.CosOp: np.cos,
    math_dialect.TanhOp: np.tanh,
    math_dialect.AbsFOp: np.abs,
    math_dialect.FloorOp: np.floor,
    math_dialect.CeilOp: np.ceil,
    math_dialect.TruncOp: np.trunc,
    math_dialect.RoundEvenOp: np.rint,
    math_dialect.RoundOp: _round_half_away,
}
"""The f64 shadow of each float `math` op of one operand."""

_MATH_BINARY: dict[type[Operation], Callable[[F64, F64], F64]] = {
    math_dialect.PowFOp: np.power,
    math_dialect.CopySignOp: np.copysign,
}


_ARITH_BINARY: dict[type[Operation], Callable[[F64, F64], F64]] = {
    arith.AddfOp: np.add,
    arith.SubfOp: np.subtract,
    arith.MulfOp: np.multiply,
    arith.DivfOp: np.divide,
    arith.MaximumfOp: np.maximum,
    arith.MinimumfOp: np.minimum,
    arith.MaxnumfOp: np.fmax,
    arith.MinnumfOp: np.fmin,
}

_MATRIX_BINARY: dict[type[Operation], Callable[[F64, F64], F64]] = {
    matrix.AddOp: np.add,
    matrix.SubOp: np.subtract,
    matrix.MulOp: np.multiply,
    matrix.DivOp: np.divide,
}


class Trace:
    """Walks a function once per call (batch element),
    accumulating the records of every reported value."""

    def __init__(
        self,
        body: func.FuncOp,
        target_sqnr_db: float | None = None,
        compiled: bool = False,
    ):
        self.body = body
        self.target_sqnr_db = target_sqnr_db
        self.compiled = compiled
        self.records: dict[tuple[Operation, int], Record] = {}
        check_supported(body)

    def run(self, arguments: Sequence[Any], values: ValueSource) -> list[Any]:
        """One call: the function's results (runtime values)."""
        block = self.body.body.block
        env: dict[SSAValue, Any] = dict(zip(block.args, arguments, strict=True))
        shadows: dict[SSAValue, F64 | None] = {}
        memories: dict[tuple[SSAValue, int], F64] = {}
        """The shadow of each memref (and packed element width): one f64 per
        element position, NaN where the program stored none."""
        self._env, self._shadows, self._memories = env, shadows, memories
        self._quality: dict[SSAValue, Tally] = {}
        self._values: dict[SSAValue, F64] = {}
        self._source = values
        returned = self._walk(block)
        assert isinstance(returned, func.ReturnOp)
        for i, v in enumerate(returned.operands):
            if float_name(v.type) is not None:
                record = self._record(returned, i, v.type)
                value = as_f64(env[v], v.type)
                record.tally.add(measure(value, self._shadow_or(v, value)))
        return [env[v] for v in returned.operands]

    # -- control flow ----------------------------------------------------------

    def _walk(self, block: Block) -> Operation:
        """Runs the ops of `block` (its arguments bound); returns its
        terminator, whose operands are the block's results."""
        for op in block.ops:
            if isinstance(op, func.ReturnOp | scf.YieldOp | affine.YieldOp):
                return op
            if isinstance(op, scf.ForOp | affine.ForOp):
                self._loop(op)
            elif isinstance(op, scf.IfOp):
                self._branch(op)
            else:
                inputs = [self._env[v] for v in op.operands]
                results = list(self._source(op, inputs))
                self._bind(op.results, results)
                self._shadow(op, inputs, results)
        raise unsupported(block.parent_op() or self.body, "a block without terminator")

    def _bind(
        self,
        targets: Sequence[SSAValue],
        values: Sequence[Any],
        shadows: Sequence[F64 | None] | None = None,
    ) -> None:
        """Gives `targets` new runtime `values` (and `shadows`): the values
        of a loop body change at each iteration."""
        for i, (target, value) in enumerate(zip(targets, values, strict=True)):
            self._env[target] = value
            self._values.pop(target, None)
            self._quality.pop(target, None)
            if shadows is not None:
                self._shadows[target] = shadows[i]

    def _loop(self, op: scf.ForOp | affine.ForOp) -> None:
        """Runs the body once per iteration, carrying the iter_args (values
        and shadows) from each iteration's yield to the next."""
        if isinstance(op, scf.ForOp):
            lower, upper, step = (self._index(v) for v in (op.lb, op.ub, op.step))
            inits = list(op.iter_args)
        else:
            lower = max(self._bound(op.lowerBoundMap, op.lowerBoundOperands))
            upper = min(self._bound(op.upperBoundMap, op.upperBoundOperands))
            step = op.step.value.data
            inits = list(op.inits)
        values, shadows = self._carried(inits)
        body = op.body.block
        induction = body.args[0]
        for i in range(lower, upper, step):
            # an attribute, as the interpreter's ops take indices
            index = IntegerAttr(i, cast(IndexType | IntegerType, induction.type))
            self._bind(body.args, [index, *values], [None, *shadows])
            values, shadows = self._carried(self._walk(body).operands)
        self._bind(op.results, values, shadows)

    def _carried(
        self, operands: Sequence[SSAValue]
    ) -> tuple[list[Any], list[F64 | None]]:
        """The values and shadows of `operands` (a yield's, a loop's inits)."""
        return [self._env[v] for v in operands], [
            self._shadows.get(v) for v in operands
        ]

    def _bound(self, bound: AffineMapAttr, operands: Sequence[SSAValue]) -> list[int]:
        """The values of an affine.for bound's map (dims, then symbols)."""
        values = [self._index(v) for v in operands]
        dims = bound.data.num_dims
        return list(bound.data.eval(values[:dims], values[dims:]))

    def _branch(self, op: scf.IfOp) -> None:
        """Runs the region the condition chooses."""
        taken = (
            op.true_region if bool(as_array(self._env[op.cond])) else op.false_region
        )
        if not taken.blocks:
            return
        values, shadows = self._carried(self._walk(taken.block).operands)
        self._bind(op.results, values, shadows)

    # -- shadows ---------------------------------------------------------------

    def _shadow_or(self, v: SSAValue, value: F64) -> F64:
        shadow = self._shadows.get(v)
        return value if shadow is None else shadow

    def _value(self, v: SSAValue) -> F64:
        """The value of float value `v` in f64 (converted once: a value is
        often both an op's exact input and its own shadow)."""
        if v not in self._values:
            self._values[v] = as_f64(self._env[v], v.type)
        return self._values[v]

    def _f64(self, v: SSAValue) -> F64:
        """The shadow of float value `v` (its own value when it has none)."""
        shadow = self._shadows.get(v)
        return self._value(v) if shadow is None else shadow

    def _index(self, index: matrix.MixedIndex) -> int:
        if isinstance(index, int):
            return index
        return int(as_array(self._env[index]))

    def _shadow(self, op: Operation, inputs: list[Any], results: list[Any]) -> None:
        shadows = self._shadows
        match op:
            case arbfp.ConvertToOp():
                shadows[op.result] = self._f64(op.input)
                self._convert_to(op, inputs[0], results[0])
            case arbfp.ConvertFromOp():
                self._convert_from(op, results[0])
            case arbfp.ScaledConvertToOp():
                shadows[op.result] = self._f64(op.input)
                shadows[op.scales] = None
                self._scaled_convert_to(op, inputs[0], results)
            case arbfp.ScaledConvertFromOp():
                self._scaled_convert_from(op, inputs, results[0])
            case matrix.StoreOp():
                t = cast(matrix.MatrixType, op.value.type)
                self._store(op.value, *self._positions(op, t))
            case matrix.LoadOp():
                memory, positions = self._positions(op, op.result.type)
                shadows[op.result] = self._load(op.result, memory, positions)
            case memref.StoreOp() | vector.StoreOp() if _one_dimensional(
                op.operands[1]
            ):
                self._store(op.operands[0], *self._element_positions(op))
            case memref.LoadOp() | vector.LoadOp() if _one_dimensional(op.operands[0]):
                memory, positions = self._element_positions(op)
                shadows[op.results[0]] = self._load(op.results[0], memory, positions)
            case _:
                self._compute(op, results)

    def _compute(self, op: Operation, results: list[Any]) -> None:
        floats = [r for r in op.results if float_name(r.type) is not None]
        if not floats:
            for r in op.results:
                if isinstance(r.type, MemRefType):
                    raise unsupported(op, "only memref arguments are tracked")
                self._shadows[r] = None
            return
        if isinstance(op, memref.LoadOp | vector.LoadOp):
            self._shadows[op.results[0]] = None  # a memref of 2+ dimensions: exact
            return
        operands = [v for v in op.operands if float_name(v.type) is not None]
        if isinstance(op, _STRUCTURAL) and all(
            self._shadows.get(v) is None for v in operands
        ):
            self._shadows[op.results[0]] = None
            return
        shadow = self._evaluate(op, self._f64)
        self._shadows[op.results[0]] = shadow
        name = float_name(op.results[0].type)
        if name in NARROW_FLOATS and not isinstance(op, _STRUCTURAL):
            value = as_f64(results[0], op.results[0].type)
            exact = self._evaluate(op, self._value)
            largest = float(
                np.finfo(sem.element_dtype(element_type_of(op.results[0].type))).max
            )
            record = self._record(op, 0, op.results[0].type)
            tally = measure(value, shadow, exact, largest)
            record.tally.add(tally)
            self._add_inputs(record, operands)
            self._quality[op.results[0]] = tally

    def _evaluate(self, op: Operation, f64: Callable[[SSAValue], F64]) -> F64:
        """`op`'s float result computed in f64 from its operands' f64 values."""
        with np.errstate(all="ignore"):
            match op:
                case matrix.BinaryOp() | arith.FloatingPointLikeBinaryOperation() if (
                    fn := (_MATRIX_BINARY | _ARITH_BINARY).get(type(op))
                ) is not None:
                    return fn(f64(op.operands[0]), f64(op.operands[1]))
                case matrix.NegOp() | arith.NegfOp():
                    return -f64(op.operands[0])
                case _ if (unary := _MATH_UNARY.get(type(op))) is not None:
                    return unary(f64(op.operands[0]))
                case _ if (binary := _MATH_BINARY.get(type(op))) is not None:
                    return binary(f64(op.operands[0]), f64(op.operands[1]))
                case matrix.FmaOp() | math_dialect.FmaOp() | vector.FMAOp():
                    a, b, c = (f64(v) for v in op.operands)
                    return a * b + c
                case matrix.MatmulOp():
                    return f64(op.operands[0]) @ f64(op.operands[1])
                case matrix.MatmulAddOp():
                    return f64(op.operands[0]) @ f64(op.operands[1]) + f64(
                        op.operands[2]
                    )
                case matrix.MatvecOp():
                    y = f64(op.operands[0]) @ f64(op.operands[1]).reshape(-1)
                    return y if op.bias is None else y + f64(op.bias).reshape(-1)
                case matrix.OuterProductOp():
                    return np.outer(f64(op.operands[0]), f64(op.operands[1]))
                case matrix.TransposeOp():
                    return f64(op.operands[0]).T
                case matrix.SplatOp() | vector.BroadcastOp():
                    shape = (
                        cast(Any, op.results[0].type).get_shape()
                        if isinstance(op.results[0].type, VectorType)
                        else cast(matrix.MatrixType, op.results[0].type).shape
                    )
                    return np.full(shape, f64(op.operands[0]))
                case matrix.ExtractOp():
                    row, col = (self._index(i) for i in op.indices())
                    return np.asarray(f64(op.matrix)[row, col])
                case matrix.InsertOp():
                    row, col = (self._index(i) for i in op.indices())
                    out = np.array(f64(op.matrix), dtype=np.float64)
                    out[row, col] = f64(op.operands[0])
                    return out
                case (
                    matrix.CastOp()
                    | arith.ExtFOp()
                    | arith.TruncFOp()
                    | arith.SIToFPOp()
                    | arith.UIToFPOp()
                ):
                    source = op.operands[0]
                    if float_name(source.type) is not None:
                        return f64(source)
                    integers = as_array(self._env[source]).astype(np.int64)
                    unsigned = isinstance(op, arith.UIToFPOp) or (
                        isinstance(op, matrix.CastOp) and op.unsigned is not None
                    )
                    if unsigned:  # the container's bits as an unsigned number
                        width = cast(
                            IntegerType, element_type_of(source.type)
                        ).width.data
                        return (integers % (1 << width)).astype(np.float64)
                    return integers.astype(np.float64)
                case matrix.ConstantOp() | arith.ConstantOp():
                    return as_f64(self._env[op.results[0]], op.results[0].type)
                case _:
                    raise unsupported(op, "no f64 shadow for this op")

    # -- conversions -----------------------------------------------------------

    def _convert_to(self, op: arbfp.ConvertToOp, source: Any, bits: Any) -> None:
        fmt = op.float_format
        x = self._value(op.input)
        value = decode(fmt, as_array(bits), np.float64)
        shadow = self._f64(op.input)
        record = self._record(op, 0, op.result.type)
        record.format = fmt.keyword
        tally = measure(value, shadow, x, fmt.max_finite)
        record.tally.add(tally)
        self._quality[op.result] = tally
        self._add_inputs(record, [op.input])
        conversion = Conversion(fmt.keyword, op.rounding_mode, op.saturating)
        self._recommend(record, conversion, _typed(source, op.input), shadow)

    def _convert_from(self, op: arbfp.ConvertFromOp, result: Any) -> None:
        fmt = op.float_format
        value = as_f64(result, op.result.type)

        def decoded() -> F64:
            return decode(fmt, as_array(self._env[op.input]), np.float64)

        shadow = self._container_shadow(op.input, decoded)
        self._shadows[op.result] = shadow
        record = self._record(op, 0, op.result.type)
        record.format = fmt.keyword
        reference = value if shadow is None else shadow
        tally = measure(value, reference, shadow, fmt.max_finite)
        record.tally.add(tally)
        self._quality[op.result] = tally
        self._add_inputs(record, [op.input], decoded)

    def _scaled_convert_to(
        self, op: arbfp.ScaledConvertToOp, source: Any, results: list[Any]
    ) -> None:
        fmt, block = op.float_format, op.block_size
        x = self._value(op.input)
        bits, scales = (as_array(r) for r in results)
        value = scaled_decode(
            fmt, op.scale_float_format, bits, scales, block, np.float64
        )
        shadow = self._f64(op.input)
        record = self._record(op, 0, op.result.type)
        record.format, record.scale_rule = fmt.keyword, op.rule.value
        limit = _limits(
            fmt.max_finite, decode(FORMATS["f8e8m0fnu"], scales, np.float64)
        )
        tally = measure(value, shadow, x, limit, block)
        record.tally.add(tally)
        record.blocks = (record.blocks or 0) + scales.size
        self._quality[op.result] = tally
        self._add_inputs(record, [op.input])
        typed = _typed(source, op.input)
        for rule in ScaleRule:
            if rule is op.rule:
                rule_tally = tally
            else:
                other = Conversion(
                    fmt.keyword, op.rounding_mode, block=block, rule=rule
                )
                converted, other_scales = other.apply(typed, self.compiled)
                assert other_scales is not None
                other_limit = _limits(fmt.max_finite, other_scales)
                rule_tally = measure(converted, shadow, x, other_limit, block)
            record.rules.setdefault(rule.value, Tally()).add(rule_tally)
        conversion = Conversion(
            fmt.keyword, op.rounding_mode, block=block, rule=op.rule
        )
        self._recommend(record, conversion, typed, shadow)

    def _recommend(
        self,
        record: Record,
        conversion: Conversion,
        source: np.ndarray[Any, Any],
        shadow: F64,
    ) -> None:
        """With a target SQNR: tallies `source` converted as `conversion`
        does but to each candidate format, against `shadow`."""
        if self.target_sqnr_db is None:
            return
        # Block-scaled conversions saturate: only a block holding NaN or inf,
        # the same in every format, has non-finite values.
        finite = np.isfinite(source) if conversion.block is None else None
        for name in CANDIDATES:
            converted, _ = replace(conversion, format=name).apply(source, self.compiled)
            record.candidates.setdefault(name, Tally()).add(measure(converted, shadow))
            if finite is not None and not np.isfinite(converted[finite]).all():
                record.made_nonfinite.add(name)

    def _scaled_convert_from(
        self, op: arbfp.ScaledConvertFromOp, inputs: list[Any], result: Any
    ) -> None:
        fmt, block = op.float_format, op.block_size
        value = as_f64(result, op.result.type)
        bits, scale_bits = (as_array(i) for i in inputs)

        def decoded() -> F64:
            return scaled_decode(
                fmt, op.scale_float_format, bits, scale_bits, block, np.float64
            )

        shadow = self._container_shadow(op.input, decoded)
        self._shadows[op.result] = shadow
        record = self._record(op, 0, op.result.type)
        record.format = fmt.keyword
        limit = _limits(
            fmt.max_finite, decode(op.scale_float_format, scale_bits, np.float64)
        )
        reference = value if shadow is None else shadow
        tally = measure(value, reference, shadow, limit, block)
        record.tally.add(tally)
        record.blocks = (record.blocks or 0) + scale_bits.size
        self._quality[op.result] = tally
        self._add_inputs(record, [op.input], decoded)

    def _container_shadow(self, v: SSAValue, decoded: Callable[[], F64]) -> F64 | None:
        """The shadow of the encodings `v` being decoded: what was encoded,
        where known (memory never stored by the program has no shadow there:
        the decoded value is its own)."""
        container = self._shadows.get(v)
        if container is None:
            return None
        unknown = np.isnan(container)
        return np.where(unknown, decoded(), container) if unknown.any() else container

    # -- memory ----------------------------------------------------------------

    def _memory(self, memory: SSAValue, bits: int | None) -> F64:
        """The shadow of memref `memory` (of `bits`-bit packed elements)."""
        key = (memory, bits or 0)
        if key not in self._memories:
            runtime = self._env[memory]
            # an array or the interpreter's ShapedArray (its module is not
            # imported here: it loads every interpreter of xDSL)
            size = runtime.size if hasattr(runtime, "size") else len(runtime)
            self._memories[key] = np.full(size * 8 // bits if bits else size, np.nan)
        return self._memories[key]

    def _positions(
        self, op: matrix.MemoryAccessOp, t: matrix.MatrixType
    ) -> tuple[F64, np.ndarray[Any, Any]]:
        """The shadow memory and the element positions of a matrix access."""
        bits = sem.container_bits(t.element_type) if op.is_packed else None
        memory = self._memory(op.memory(), bits)
        positions = sem.load(
            np.arange(memory.size),
            t.shape,
            self._index(op.offset()),
            self._index(op.stride()),
            column_major=op.COLUMN_MAJOR,
        )
        return memory, positions

    def _element_positions(self, op: Operation) -> tuple[F64, np.ndarray[Any, Any]]:
        """The shadow memory and positions of a `memref`/`vector` load or
        store on a one-dimensional memref (one element, or a vector's)."""
        value, memory, index = (
            (op.operands[0], op.operands[1], op.operands[2])
            if isinstance(op, memref.StoreOp | vector.StoreOp)
            else (op.results[0], op.operands[0], op.operands[1])
        )
        start = self._index(index)
        count = (
            1
            if isinstance(op, memref.LoadOp | memref.StoreOp)
            else int(np.prod(cast(VectorType[Attribute], value.type).get_shape()))
        )
        return self._memory(memory, None), np.arange(start, start + count)

    def _store(
        self, value: SSAValue, memory: F64, positions: np.ndarray[Any, Any]
    ) -> None:
        shadow = self._shadows.get(value)
        memory[positions] = (
            np.nan if shadow is None else np.reshape(shadow, positions.shape)
        )

    def _load(
        self, value: SSAValue, memory: F64, positions: np.ndarray[Any, Any]
    ) -> F64 | None:
        """The shadow of the loaded `value`: what was stored where the program
        stored a shadowed value; elsewhere a float is its own shadow, and
        encodings keep NaN (`_container_shadow` decodes them)."""
        shadow = memory[positions].reshape(np.shape(as_array(self._env[value])))
        unknown = np.isnan(shadow)
        if unknown.all():
            return None
        if float_name(value.type) is not None and unknown.any():
            return np.where(unknown, as_f64(self._env[value], value.type), shadow)
        return shadow

    # -- records ---------------------------------------------------------------

    def _record(self, op: Operation, index: int, t: Attribute) -> Record:
        key = (op, index)
        if key not in self.records:
            self.records[key] = Record(op, str(t))
        return self.records[key]

    def _add_inputs(
        self,
        record: Record,
        operands: Sequence[SSAValue],
        decoded: Callable[[], F64] | None = None,
    ) -> None:
        """Adds the quality of `operands` (their value against their shadow) to
        `record`'s inputs; `decoded` gives the value of a container operand."""
        tallies: list[Tally] = []
        for v in operands:
            quality = self._quality.get(v)
            if quality is None and self._shadows.get(v) is None:
                quality = exact(self._value(v) if decoded is None else decoded())
            elif quality is None:
                if decoded is not None:
                    value = decoded()
                    shadow = self._container_shadow(v, decoded)
                else:
                    value = self._value(v)
                    shadow = self._shadow_or(v, value)
                quality = measure(value, value if shadow is None else shadow)
            tallies.append(quality)
        if not record.inputs:
            record.inputs = [Tally() for _ in tallies]
        for total, tally in zip(record.inputs, tallies, strict=True):
            total.add(tally)


def _one_dimensional(memory: SSAValue) -> bool:
    t = memory.type
    return isinstance(t, MemRefType) and t.get_num_dims() == 1


def _typed(value: Any, v: SSAValue) -> np.ndarray[Any, Any]:
    """The runtime value of float value `v` as an array of its own dtype."""
    return as_array(value).astype(
        sem.element_dtype(element_type_of(v.type)), copy=False
    )


def _limits(max_finite: float, scales: F64) -> F64:
    """Per block, the largest magnitude that does not saturate: the element
    format's largest finite value times the block's scale (exact in f64);
    inf for NaN and zero scales (their blocks are NaN or zero whatever the
    elements)."""
    magnitude = np.abs(scales.reshape(-1))
    usable = np.isfinite(magnitude) & (magnitude > 0)
    return np.where(usable, max_finite * np.where(usable, magnitude, 1.0), math.inf)

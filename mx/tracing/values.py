"""Traced values: what a `@mx.function` sees instead of its arrays.

Each operation on a `Traced` value appends the matching `matrix`, `arbfp`,
`arith` or `vector` op to the function being traced (`Trace`), located at the
user's Python expression, after checking shapes and dtypes itself, so that a
mismatch is reported at that expression rather than by a verifier later.

Kinds follow the arrays: an (R, C) array is a `!matrix.matrix<RxCxT>`, an
(N,) array a `vector<NxT>`, a 0-d array, NumPy scalar or Python number a
scalar. Python numbers are *weak*, as in NumPy 2 (NEP 50): they take the dtype
of the array they meet; everything else must agree in dtype exactly (no
implicit promotion), except that a matrix product may widen exactly (f16 @ f32
is a mixed-precision f32 product).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from functools import partial
from typing import Any, Literal, NoReturn, TypeVar, cast

import numpy as np
from xdsl.builder import Builder
from xdsl.dialects import arith, math, vector
from xdsl.dialects.builtin import (
    DenseIntOrFPElementsAttr,
    FloatAttr,
    IntegerAttr,
    IntegerType,
    MemRefType,
    VectorType,
)
from xdsl.ir import Attribute, Block, Operation, SSAValue
from xdsl.rewriter import InsertPoint

from mx.dialects import arbfp
from mx.dialects import matrix as mt
from mx.semantics.arbfp import FORMATS, FloatFormat, Rounding, ScaleRule
from mx.tracing.dtypes import (
    BYTES,
    NATIVE,
    DType,
    format_dtype,
    has_arithmetic,
    is_float,
    mlir_type,
    small_float_format,
)
from mx.tracing.locations import PythonLocation, caller_location

Kind = Literal["matrix", "vector", "scalar"]
_Op = TypeVar("_Op", bound=Operation)

F64 = np.dtype(np.float64)
I64 = np.dtype(np.int64)


class Trace:
    """The function being traced: its entry block, where ops are appended."""

    def __init__(self) -> None:
        self.block = Block()
        self.builder = Builder(InsertPoint.at_end(self.block))

    def insert(self, op: _Op, where: PythonLocation) -> _Op:
        op.location = where.attribute()
        self.builder.insert(op)
        return op

    def insert_first(self, op: _Op, where: PythonLocation) -> _Op:
        op.location = where.attribute()
        Builder(InsertPoint.at_start(self.block)).insert(op)
        return op


def _kind(shape: tuple[int, ...]) -> Kind:
    return ("scalar", "vector", "matrix")[len(shape)]


def ssa_type(dtype: DType, shape: tuple[int, ...]) -> Attribute:
    """The MLIR type of a value of `dtype` and `shape` (0, 1 or 2 dims)."""
    element = mlir_type(dtype)
    assert element is not None
    match shape:
        case ():
            return element
        case (n,):
            return VectorType(element, [n])
        case _:
            return mt.MatrixType(shape[0], shape[1], element)


class Traced:
    """A value of the traced function: a matrix, vector or scalar of a NumPy
    dtype. Supports `@ + - * /`, unary `-`, `.T`, `.astype`, constant
    indexing (`a[1, 2]`), and the functions of `mx` (`mx.fma`,
    `mx.transpose`, `mx.quantize_mx`, `mx.dequantize_mx`); anything else
    raises `mx.MXError` naming the operation at its Python line."""

    __slots__ = ("_value", "dtype", "literal", "packed", "shape", "trace", "weak")
    __array_priority__ = 1000
    _value: SSAValue | None

    def __init__(
        self,
        trace: Trace,
        value: SSAValue | None,
        dtype: DType,
        shape: tuple[int, ...],
        weak: bool = False,
        packed: bool = False,
        literal: float | None = None,
    ) -> None:
        self.trace = trace
        self._value = value
        self.dtype = dtype
        self.shape = shape
        self.weak = weak
        """A Python number: takes the dtype of the value it meets (NEP 50)."""
        self.packed = packed
        """FP4/FP6 codes the function returns packed, two (or 4/3) per byte."""
        self.literal = literal
        """A Python number written in the function: a constant of the dtype it meets."""

    @property
    def value(self) -> SSAValue:
        assert self._value is not None
        return self._value

    @property
    def kind(self) -> Kind:
        return _kind(self.shape)

    @property
    def ndim(self) -> int:
        return len(self.shape)

    def __repr__(self) -> str:
        return f"Traced({self.kind}, shape={self.shape}, dtype={self.dtype.name})"

    # Python operators --------------------------------------------------------

    def __add__(self, other: object) -> Traced:
        return elementwise("+", self, other)

    def __radd__(self, other: object) -> Traced:
        return elementwise("+", other, self)

    def __sub__(self, other: object) -> Traced:
        return elementwise("-", self, other)

    def __rsub__(self, other: object) -> Traced:
        return elementwise("-", other, self)

    def __mul__(self, other: object) -> Traced:
        return elementwise("*", self, other)

    def __rmul__(self, other: object) -> Traced:
        return elementwise("*", other, self)

    def __truediv__(self, other: object) -> Traced:
        return elementwise("/", self, other)

    def __rtruediv__(self, other: object) -> Traced:
        return elementwise("/", other, self)

    def __matmul__(self, other: object) -> Traced:
        return matmul(self, other)

    def __rmatmul__(self, other: object) -> Traced:
        return matmul(other, self)

    def __neg__(self) -> Traced:
        return negate(self)

    def __pos__(self) -> Traced:
        return self

    @property
    def T(self) -> Traced:
        return transpose(self)

    def astype(
        self,
        dtype: object,
        *,
        rounding: str | None = None,
        saturate: bool = False,
    ) -> Traced:
        """Converts to `dtype`: between native types as C does (a
        `matrix.cast` for matrices), to and from the ml_dtypes small floats
        through `arbfp` (`rounding`, `saturate` as in `arbfp.convert_to`)."""
        return astype(self, dtype, rounding=rounding, saturate=saturate)

    def __getitem__(self, index: object) -> Traced:
        return element(self, index)

    # NumPy's protocols: ufuncs and functions on traced values ----------------

    def __array_ufunc__(
        self, ufunc: np.ufunc, method: str, *inputs: object, **kwargs: object
    ) -> Traced:
        handler = _UFUNCS.get(ufunc.__name__)
        if method != "__call__" or kwargs or handler is None:
            unsupported(
                f"numpy.{ufunc.__name__}"
                + ("" if method == "__call__" else f".{method}")
            )
        return handler(*inputs)

    def __array_function__(
        self,
        function: Any,
        types: object,
        args: Sequence[object],
        kwargs: dict[str, object],
    ) -> Traced:
        if function is np.transpose and len(args) == 1 and not kwargs:
            return transpose(args[0])
        unsupported(f"numpy.{function.__name__}")

    def __array__(self, *args: object, **kwargs: object) -> NoReturn:
        unsupported("conversion to a NumPy array (a traced value has no data)")

    def __bool__(self) -> NoReturn:
        unsupported(
            "truth value (Python control flow on traced values: "
            "branch on shapes and dtypes, not on data)"
        )

    def __float__(self) -> NoReturn:
        unsupported("float() (a traced value has no data)")

    def __int__(self) -> NoReturn:
        unsupported("int() (a traced value has no data)")

    def __index__(self) -> NoReturn:
        unsupported("use as an index (a traced value has no data)")

    def __len__(self) -> NoReturn:
        unsupported("len() (use .shape)")

    def __iter__(self) -> NoReturn:
        unsupported("iteration (index with constants: a[1, 2])")

    def __getattr__(self, name: str) -> NoReturn:
        unsupported(f"'.{name}'")

    __hash__ = object.__hash__


def _unsupported_operator(symbol: str) -> Callable[..., NoReturn]:
    def method(*_: object) -> NoReturn:
        unsupported(f"'{symbol}'")

    return method


for _name, _symbol in {
    "pow": "**",
    "mod": "%",
    "floordiv": "//",
    "divmod": "divmod",
    "and": "&",
    "or": "|",
    "xor": "^",
    "lshift": "<<",
    "rshift": ">>",
}.items():
    setattr(Traced, f"__{_name}__", _unsupported_operator(_symbol))
    setattr(Traced, f"__r{_name}__", _unsupported_operator(_symbol))
for _name, _symbol in {
    "lt": "<",
    "le": "<=",
    "gt": ">",
    "ge": ">=",
    "eq": "==",
    "ne": "!=",
    "invert": "~",
    "abs": "abs()",
}.items():
    setattr(Traced, f"__{_name}__", _unsupported_operator(_symbol))


def unsupported(what: str) -> NoReturn:
    raise caller_location().error(f"{what} is not supported on traced values")


def fail(message: str) -> NoReturn:
    raise caller_location().error(message)


# Operands ---------------------------------------------------------------------


def _traces(*values: object) -> Trace:
    traces = {id(v.trace): v.trace for v in values if isinstance(v, Traced)}
    if len(traces) > 1:
        fail("values of two different traced functions are mixed")
    (trace,) = traces.values()
    return trace


def _constant(trace: Trace, value: object, where: PythonLocation) -> Traced:
    """A constant operand: a Python number (weak), a NumPy scalar or array."""
    if isinstance(value, (bool, np.bool_)):
        fail("booleans are not supported (no i1 values); use 0 and 1")
    if isinstance(value, float | int) and not isinstance(value, np.generic):
        dtype = F64 if isinstance(value, float) else I64
        return Traced(trace, None, dtype, (), weak=True, literal=value)
    if isinstance(value, np.generic | np.ndarray):
        array = np.asarray(value)
        if not has_arithmetic(array.dtype):
            fail(f"constant of dtype {array.dtype.name} is not supported")
        if array.ndim > 2 or 0 in array.shape:
            fail(
                f"constant of shape {array.shape} is not supported (0, 1 or 2 dimensions)"
            )
        return _materialized_constant(trace, array, where)
    fail(f"operand of type '{type(value).__name__}' is not supported")


def _scalar_attr(value: float, dtype: DType) -> Attribute:
    element = NATIVE[dtype]
    if isinstance(element, IntegerType):
        return IntegerAttr(int(value), element)
    return FloatAttr(float(value), cast(Any, element))


def _materialized_constant(
    trace: Trace, array: np.ndarray[Any, Any], where: PythonLocation
) -> Traced:
    dtype = array.dtype
    shape = cast(tuple[int, ...], array.shape)
    t = ssa_type(dtype, shape)
    values: list[Any] = array.ravel().tolist()
    if len(shape) == 2:
        assert isinstance(t, mt.MatrixType)
        op: Operation = mt.ConstantOp.from_values(values, t)
    elif len(shape) == 1:
        op = arith.ConstantOp(DenseIntOrFPElementsAttr.from_list(cast(Any, t), values))
    else:
        op = arith.ConstantOp(cast(Any, _scalar_attr(values[0], dtype)), t)
    return Traced(trace, trace.insert(op, where).results[0], dtype, shape)


def _literal_as(literal: Traced, dtype: DType, where: PythonLocation) -> Traced:
    """A Python number literal as a scalar of `dtype` (NumPy's conversion)."""
    value = literal.literal
    assert value is not None
    if isinstance(value, float) and not is_float(dtype):
        fail(
            f"the Python float {value!r} meets {dtype.name} values "
            "(NumPy would give float64); convert with .astype first"
        )
    if not is_float(dtype):
        info = np.iinfo(dtype)
        if not info.min <= value <= info.max:
            fail(f"the Python integer {value} is out of bounds for {dtype.name}")
    return _materialized_constant(literal.trace, np.asarray(value, dtype=dtype), where)


def _weak_as(value: Traced, dtype: DType, where: PythonLocation) -> Traced:
    """A weak scalar (a Python number, literal or argument) as `dtype`."""
    if value.literal is not None:
        return _literal_as(value, dtype, where)
    if value.dtype == dtype:
        return Traced(value.trace, value.value, dtype, ())
    target = NATIVE[dtype]
    if value.dtype == F64:
        if not is_float(dtype):
            fail(
                f"a Python float meets {dtype.name} values (NumPy would give "
                "float64); convert with .astype first"
            )
        op: Operation = arith.TruncFOp(value.value, cast(Any, target))
    elif is_float(dtype):
        op = arith.SIToFPOp(value.value, cast(Any, target))
    else:
        op = arith.TruncIOp(value.value, cast(Any, target))
    return Traced(value.trace, value.trace.insert(op, where).results[0], dtype, ())


def _operand(trace: Trace, value: object, where: PythonLocation) -> Traced:
    if isinstance(value, Traced):
        return value
    return _constant(trace, value, where)


def _unify(
    symbol: str, operands: Sequence[Traced], where: PythonLocation
) -> list[Traced]:
    """The operands with one dtype: weak scalars take the others' dtype."""
    strong = [v for v in operands if not v.weak]
    if not strong:
        dtype = F64 if any(v.dtype == F64 for v in operands) else I64
        if dtype == F64:
            return [v if v.dtype == F64 else _weak_to_f64(v, where) for v in operands]
        return [_weak_as(v, I64, where) for v in operands]
    dtypes = {v.dtype for v in strong}
    if len(dtypes) > 1:
        names = " and ".join(v.dtype.name for v in strong)
        fail(
            f"dtype mismatch in '{symbol}': {names} "
            "(mx does not promote implicitly: convert one with .astype)"
        )
    (dtype,) = dtypes
    if not has_arithmetic(dtype):
        fail(
            f"'{symbol}' on {dtype.name} values: they have no arithmetic "
            "(decode them first, e.g. .astype(numpy.float32))"
        )
    return [_weak_as(v, dtype, where) if v.weak else v for v in operands]


def _weak_to_f64(value: Traced, where: PythonLocation) -> Traced:
    if value.literal is not None:
        return _literal_as(value, F64, where)
    op = arith.SIToFPOp(value.value, cast(Any, NATIVE[F64]))
    return Traced(
        value.trace, value.trace.insert(op, where).results[0], F64, (), weak=True
    )


def _same_shape(
    symbol: str, operands: Sequence[Traced], where: PythonLocation
) -> list[Traced]:
    """Scalars splat (broadcast) to the shape of the others, which must agree."""
    shapes = {v.shape for v in operands if v.shape}
    if len(shapes) > 1:
        described = " and ".join(str(v.shape) for v in operands)
        fail(f"shape mismatch in '{symbol}': {described}")
    if not shapes:
        return list(operands)
    (shape,) = shapes
    return [v if v.shape else _broadcast(v, shape, where) for v in operands]


def _broadcast(scalar: Traced, shape: tuple[int, ...], where: PythonLocation) -> Traced:
    t = ssa_type(scalar.dtype, shape)
    op: Operation = (
        mt.SplatOp(scalar.value, cast(mt.MatrixType, t))
        if len(shape) == 2
        else vector.BroadcastOp(scalar.value, cast(VectorType, t))
    )
    return Traced(
        scalar.trace, scalar.trace.insert(op, where).results[0], scalar.dtype, shape
    )


def _prepare(symbol: str, *values: object) -> tuple[PythonLocation, list[Traced]]:
    where = caller_location()
    trace = _traces(*values)
    operands = [_operand(trace, v, where) for v in values]
    operands = _unify(symbol, operands, where)
    return where, _same_shape(symbol, operands, where)


def _result(operands: Sequence[Traced], op: Operation, where: PythonLocation) -> Traced:
    first = operands[0]
    weak = all(v.weak for v in operands)
    return Traced(
        first.trace,
        first.trace.insert(op, where).results[0],
        first.dtype,
        first.shape,
        weak,
    )


# Elementwise arithmetic ----------------------------------------------------------

_MATRIX_OPS: dict[str, type[mt.BinaryOp]] = {
    "+": mt.AddOp,
    "-": mt.SubOp,
    "*": mt.MulOp,
    "/": mt.DivOp,
}
_FLOAT_OPS: dict[str, Callable[[SSAValue, SSAValue], Operation]] = {
    "+": arith.AddfOp,
    "-": arith.SubfOp,
    "*": arith.MulfOp,
    "/": arith.DivfOp,
}
_INTEGER_OPS: dict[str, Callable[[SSAValue, SSAValue], Operation]] = {
    "+": arith.AddiOp,
    "-": arith.SubiOp,
    "*": arith.MuliOp,
}


def elementwise(symbol: str, lhs: object, rhs: object) -> Traced:
    """`lhs symbol rhs` elementwise: `matrix.add/sub/mul/div` on matrices,
    `arith` ops on vectors and scalars; scalars broadcast."""
    where, (a, b) = _prepare(symbol, lhs, rhs)
    if symbol == "/" and not is_float(a.dtype):
        fail(
            f"'/' on {a.dtype.name} values: NumPy's true division gives float64; "
            "convert with .astype first"
        )
    if a.kind == "matrix":
        op: Operation = _MATRIX_OPS[symbol](a.value, b.value)
    else:
        table = _FLOAT_OPS if is_float(a.dtype) else _INTEGER_OPS
        op = table[symbol](a.value, b.value)
    return _result((a, b), op, where)


def negate(value: Traced) -> Traced:
    """Unary minus: `matrix.neg` / `arith.negf` on floats, `0 - x` on integers."""
    where, (a,) = _prepare("-", value)
    if not is_float(a.dtype):
        return elementwise("-", 0, a)
    op: Operation = mt.NegOp(a.value) if a.kind == "matrix" else arith.NegfOp(a.value)
    return _result((a,), op, where)


def fma(a: object, b: object, c: object) -> Traced:
    """`a * b + c` elementwise with one rounding (`matrix.fma`, `math.fma`)."""
    where, operands = _prepare("mx.fma", a, b, c)
    x, y, z = operands
    if not is_float(x.dtype):
        fail(f"mx.fma needs floating-point values, got {x.dtype.name}")
    op: Operation = (
        mt.FmaOp(x.value, y.value, z.value)
        if x.kind == "matrix"
        else math.FmaOp(x.value, y.value, z.value)
    )
    return _result(operands, op, where)


# Products, transposes, elements ----------------------------------------------------


def matmul(lhs: object, rhs: object) -> Traced:
    """`lhs @ rhs`: `matrix.matmul` (matrix @ matrix), `matrix.matvec`
    (matrix @ vector, and vector @ matrix as the transpose's matvec); the
    factors may be narrower than the result where NumPy would promote
    exactly (mixed precision)."""
    where = caller_location()
    trace = _traces(lhs, rhs)
    a, b = (_operand(trace, v, where) for v in (lhs, rhs))
    if a.kind == "scalar" or b.kind == "scalar":
        fail("'@' needs matrices or vectors, not scalars (use '*')")
    if a.kind == "vector" and b.kind == "vector":
        unsupported("'@' of two vectors (a dot product)")
    for v in (a, b):
        if not has_arithmetic(v.dtype):
            fail(
                f"'@' on {v.dtype.name} values: they have no arithmetic "
                "(decode them first, e.g. .astype(numpy.float32))"
            )
    result_dtype = np.result_type(a.dtype, b.dtype)
    element = NATIVE.get(result_dtype)
    if element is None or not all(
        mt.widens_exactly(NATIVE[v.dtype], element) for v in (a, b)
    ):
        fail(
            f"dtype mismatch in '@': {a.dtype.name} and {b.dtype.name} "
            "(a product may only widen its factors exactly: convert one with .astype)"
        )
    inner = b.shape[0]
    if a.shape[-1] != inner:
        fail(f"inner dimensions of '@' do not agree: {a.shape} @ {b.shape}")
    if a.kind == "vector":  # x @ M == M.T @ x
        a, b = transpose(b), a
    if b.kind == "vector":
        op: Operation = mt.MatvecOp(a.value, b.value, result_element=element)
        shape: tuple[int, ...] = (a.shape[0],)
    else:
        op = mt.MatmulOp(a.value, b.value, result_element=element)
        shape = (a.shape[0], b.shape[1])
    return Traced(trace, trace.insert(op, where).results[0], result_dtype, shape)


def transpose(value: object) -> Traced:
    """`mx.transpose(a)`, `a.T`: `matrix.transpose`; vectors and scalars are
    their own transposes, as in NumPy."""
    if not isinstance(value, Traced):
        fail(f"mx.transpose of a '{type(value).__name__}' inside a traced function")
    if value.kind != "matrix":
        return value
    where = caller_location()
    op = mt.TransposeOp(value.value)
    rows, cols = value.shape
    return Traced(
        value.trace, value.trace.insert(op, where).results[0], value.dtype, (cols, rows)
    )


def element(value: Traced, index: object) -> Traced:
    """`a[i, j]`, `v[i]` with constant integers (negative ones count from the
    end): `matrix.extract`, `vector.extract`."""
    indices = index if isinstance(index, tuple) else (index,)
    indices = cast(tuple[object, ...], indices)
    if len(indices) != value.ndim or not all(
        isinstance(i, int | np.integer) and not isinstance(i, bool) for i in indices
    ):
        unsupported(
            f"indexing a {value.kind} with {index!r} "
            f"(only {value.ndim} constant integer indices are)"
        )
    positions: list[int] = []
    for i, size in zip(cast(tuple[int, ...], indices), value.shape, strict=True):
        if not -size <= i < size:
            fail(f"index {i} is out of bounds for a dimension of size {size}")
        positions.append(int(i) % size)
    where = caller_location()
    element_type = mlir_type(value.dtype)
    assert element_type is not None
    op: Operation = (
        mt.ExtractOp(value.value, positions)
        if value.kind == "matrix"
        else vector.ExtractOp(value.value, positions, element_type)
    )
    return Traced(
        value.trace, value.trace.insert(op, where).results[0], value.dtype, ()
    )


# Conversions -------------------------------------------------------------------------


def _dtype(dtype: object, what: str) -> DType:
    try:
        return np.dtype(cast(Any, dtype))
    except TypeError:
        fail(f"{what}: {dtype!r} is not a dtype")


def _rounding(rounding: str | None) -> Rounding:
    try:
        return Rounding(rounding or Rounding.NEAREST_EVEN)
    except ValueError:
        fail(
            f"unknown rounding mode {rounding!r} "
            f"(one of {', '.join(r.value for r in Rounding)})"
        )


def astype(
    value: Traced, dtype: object, *, rounding: str | None = None, saturate: bool = False
) -> Traced:
    where = caller_location()
    target = _dtype(dtype, ".astype")
    trace = value.trace
    if mlir_type(target) is None or target == BYTES:
        fail(f".astype({target.name}) is not supported")
    target_format = small_float_format(target)
    if (rounding is not None or saturate) and target_format is None:
        fail(
            f".astype({target.name}): rounding= and saturate= apply to conversions "
            "into the small float formats (float8/6/4) only"
        )
    if value.weak:
        value = _weak_as(value, F64 if value.dtype == F64 else I64, where)
    source_format = small_float_format(value.dtype)
    if value.dtype == BYTES:
        fail(
            ".astype of raw bytes (uint8): use mx.dequantize_mx, or pass ml_dtypes arrays"
        )
    if source_format is not None:
        if target == value.dtype:
            return value
        if target_format is None and not is_float(target):
            fail(
                f".astype({target.name}) of {value.dtype.name}: decode to a float type first"
            )
        decoded_dtype = target if target_format is None else np.dtype(np.float32)
        op = arbfp.ConvertFromOp(
            source_format.keyword, value.value, ssa_type(decoded_dtype, value.shape)
        )
        value = Traced(
            trace, trace.insert(op, where).results[0], decoded_dtype, value.shape
        )
        if target_format is None:
            return value
    if target_format is not None:
        if not is_float(value.dtype):
            fail(
                f".astype({target.name}) of {value.dtype.name}: convert to a float type first"
            )
        op = arbfp.ConvertToOp(
            target_format.keyword,
            value.value,
            ssa_type(target, value.shape),
            rounding=_rounding(rounding),
            saturate=saturate,
        )
        return Traced(trace, trace.insert(op, where).results[0], target, value.shape)
    if target == value.dtype:
        return value
    return _native_cast(value, target, where)


def _native_cast(value: Traced, target: DType, where: PythonLocation) -> Traced:
    result_type = ssa_type(target, value.shape)
    if value.kind == "vector" and not (is_float(value.dtype) and is_float(target)):
        # xDSL's arith casts between integers and floats take scalars only
        unsupported(f".astype({target.name}) of a vector of {value.dtype.name}")
    if value.kind == "matrix":
        op: Operation = mt.CastOp(value.value, cast(mt.MatrixType, result_type))
    else:
        source_bits = value.dtype.itemsize
        if is_float(value.dtype) and is_float(target):
            widen = mt.widens_exactly(NATIVE[value.dtype], NATIVE[target])
            op = (arith.ExtFOp if widen else arith.TruncFOp)(
                value.value, cast(Any, result_type)
            )
        elif is_float(target):
            op = arith.SIToFPOp(value.value, cast(Any, result_type))
        elif is_float(value.dtype):
            op = arith.FPToSIOp(value.value, cast(Any, result_type))
        elif target.itemsize > source_bits:
            op = arith.ExtSIOp(value.value, cast(Any, result_type))
        else:
            op = arith.TruncIOp(value.value, cast(Any, result_type))
    return Traced(
        value.trace, value.trace.insert(op, where).results[0], target, value.shape
    )


# Block-scaled formats ------------------------------------------------------------


def element_format(fmt: object) -> FloatFormat:
    """The element format named by a keyword ("f4e2m1fn") or an ml_dtypes dtype."""
    found = FORMATS.get(fmt) if isinstance(fmt, str) else None
    if found is None and not isinstance(fmt, str):
        try:
            found = small_float_format(np.dtype(cast(Any, fmt)))
        except TypeError:
            found = None
    if found is None or found.keyword == "f8e8m0fnu":
        names = ", ".join(k for k in FORMATS if k != "f8e8m0fnu")
        fail(f"unknown element format {fmt!r} (one of {names})")
    return found


def _check_block(block: object, columns: int, what: str) -> None:
    if not isinstance(block, int) or block < 1:
        fail(f"{what}: block must be a positive integer, got {block!r}")
    if columns % block:
        fail(f"{what}: block {block} does not divide the {columns} columns")


def quantize_mx(
    x: Traced,
    fmt: object,
    *,
    block: int,
    rounding: str | None = None,
    scale_rule: str = "floor",
    packed: bool | None = None,
) -> tuple[Traced, Traced]:
    """`arbfp.scaled_convert_to`: the codes and the f8e8m0fnu scales."""
    where = caller_location()
    element_fmt = element_format(fmt)
    if x.kind != "matrix" or not is_float(x.dtype):
        fail(
            f"mx.quantize_mx needs a matrix of float16, bfloat16, float32 or "
            f"float64, got a {x.kind} of {x.dtype.name}"
        )
    _check_block(block, x.shape[1], "mx.quantize_mx")
    try:
        rule = ScaleRule(scale_rule)
    except ValueError:
        fail(f"unknown scale_rule {scale_rule!r} (floor or ceil)")
    if packed and element_fmt.bits == 8:
        fail(f"packed=True: {element_fmt.keyword} codes take whole bytes")
    rows, cols = x.shape
    is_packed = element_fmt.bits < 8 if packed is None else packed
    if is_packed and cols * element_fmt.bits % 8:
        fail(
            f"mx.quantize_mx: a row of {cols} packed {element_fmt.bits}-bit codes does "
            "not fill whole bytes (pass packed=False)"
        )
    op = arbfp.ScaledConvertToOp(
        element_fmt.keyword,
        x.value,
        block,
        mt.MatrixType(rows, cols, IntegerType(element_fmt.bits)),
        rounding=_rounding(rounding),
        scale_rule=rule,
    )
    x.trace.insert(op, where)
    codes_dtype = format_dtype(element_fmt.keyword) or BYTES
    codes = Traced(x.trace, op.results[0], codes_dtype, x.shape, packed=is_packed)
    scales_dtype = format_dtype("f8e8m0fnu")
    assert scales_dtype is not None
    scales = Traced(x.trace, op.results[1], scales_dtype, (rows, cols // block))
    return codes, scales


def dequantize_mx(
    codes: Traced,
    scales: object,
    fmt: object,
    *,
    block: int,
    dtype: object = np.float32,
    scale: str = "f8e8m0fnu",
) -> Traced:
    """`arbfp.scaled_convert_from`: codes x their block's scale, rounded once
    to `dtype`. Codes and scales passed as arguments are read from memory
    (`ByteParameter`); packed uint8 codes (FP4/FP6) with a packed load."""
    where = caller_location()
    element_fmt = element_format(fmt)
    target = _dtype(dtype, "mx.dequantize_mx")
    if not is_float(target):
        fail(f"mx.dequantize_mx: dtype must be a float type, got {target.name}")
    if scale not in ("f8e8m0fnu", "f8e4m3fn"):
        fail(f"mx.dequantize_mx: scale must be f8e8m0fnu or f8e4m3fn, got {scale!r}")
    if not isinstance(scales, Traced):
        fail(
            "mx.dequantize_mx: the scales must be an argument of the traced function or traced values"
        )
    if codes.kind != "matrix" or scales.kind != "matrix":
        fail("mx.dequantize_mx needs matrices of codes and scales")
    if (
        isinstance(codes, ByteParameter)
        and codes.dtype == BYTES
        and element_fmt.bits < 8
    ):
        elements = codes.loaded(where, element_fmt.bits)
    elif codes.dtype == BYTES or small_float_format(codes.dtype) == element_fmt:
        elements = (
            codes.loaded(where) if isinstance(codes, ByteParameter) else codes.value
        )
    else:
        fail(
            f"mx.dequantize_mx: codes of dtype {codes.dtype.name} are not "
            f"{element_fmt.keyword} codes (ml_dtypes' type or uint8 bytes)"
        )
    rows, cols = cast(mt.MatrixType, elements.type).shape
    _check_block(block, cols, "mx.dequantize_mx")
    scale_dtype = format_dtype(scale)
    if scales.dtype not in (BYTES, scale_dtype):
        fail(
            f"mx.dequantize_mx: scales of dtype {scales.dtype.name}, expected {scale} codes or uint8"
        )
    if scales.shape != (rows, cols // block):
        fail(
            f"mx.dequantize_mx: scales of shape {scales.shape}, expected "
            f"{(rows, cols // block)} for {rows}x{cols} codes in blocks of {block}"
        )
    op = arbfp.ScaledConvertFromOp(
        element_fmt.keyword,
        elements,
        scales.loaded(where) if isinstance(scales, ByteParameter) else scales.value,
        block,
        ssa_type(target, (rows, cols)),
        scale_format=scale,
    )
    trace = codes.trace
    return Traced(trace, trace.insert(op, where).results[0], target, (rows, cols))


class ByteParameter(Traced):
    """A matrix argument of one-byte codes (uint8 bytes, FP8 codes) that
    `mx.dequantize_mx` reads first: the parameter becomes a `memref` of the
    array's bytes, read by a `matrix.row_major_load` (`packed` for FP4/FP6
    codes), the form the lowering's decoded products read in place. Used
    first in any other way, it stays an `i8` matrix parameter."""

    __slots__ = ("in_memory", "index", "packed_bits")

    def __init__(
        self, trace: Trace, index: int, dtype: DType, shape: tuple[int, ...]
    ) -> None:
        super().__init__(trace, None, dtype, shape)
        self.index = index
        self.in_memory = False
        """The parameter is a memref (C-ordered bytes, no batch)."""
        self.packed_bits: int | None = None

    @property
    def value(self) -> SSAValue:
        if self.packed_bits is not None:
            fail("an argument read as packed codes is used as a matrix of bytes too")
        if self._value is None:
            self._value = self.trace.block.args[self.index]
        return self._value

    def loaded(self, where: PythonLocation, packed_bits: int | None = None) -> SSAValue:
        """The matrix of codes (`packed_bits` wide codes, packed in the bytes;
        else one per byte), read from memory if the argument is unused yet."""
        if packed_bits is None and self.packed_bits is None and self._value is not None:
            return self._value  # already a matrix parameter
        if self._value is not None and packed_bits != self.packed_bits:
            fail("an argument is read both as packed codes and as a matrix of bytes")
        rows, byte_cols = self.shape
        bits = packed_bits or 8
        if (byte_cols * 8) % bits:
            fail(
                f"{byte_cols} bytes per row do not hold a whole number of {bits}-bit codes"
            )
        if self._value is None:
            self.in_memory = True
            self.packed_bits = packed_bits
            block = self.trace.block
            old = block.args[self.index]
            memory = block.insert_arg(
                MemRefType(IntegerType(8), [rows * byte_cols]), self.index
            )
            memory.name_hint = old.name_hint
            block.erase_arg(old)
            codes = mt.MatrixType(rows, byte_cols * 8 // bits, IntegerType(bits))
            load = mt.RowMajorLoadOp(memory, codes, packed=packed_bits is not None)
            self._value = self.trace.insert_first(load, where).results[0]
        return self._value


def _positive(value: Traced) -> Traced:
    return value


_UFUNCS: dict[str, Callable[..., Traced]] = {
    "add": partial(elementwise, "+"),
    "subtract": partial(elementwise, "-"),
    "multiply": partial(elementwise, "*"),
    "divide": partial(elementwise, "/"),
    "negative": negate,
    "positive": _positive,
    "matmul": matmul,
}
"""NumPy ufuncs that are operators of traced values (`numpy.add(a, b)`, and
`array + traced`, which NumPy turns into `numpy.add`)."""

"""Vectors in the interpreter: the `vector` ops, and `arith`/`math` ops on vectors.

A vector value is a NumPy array of the vector's shape (1-D for `vector<8xf32>`)
and of `lane_dtype` of its element type (`bool` for `i1`). Elementwise `arith`
and `math` ops on vectors run their scalar implementation once per lane, on a
scalar copy of the op, so a vector op computes exactly what the same scalar ops
compute (rounding, wrapping, undefined behaviour). The exceptions are the ops
where NumPy computes exactly that on the whole vector (`WHOLE_VECTOR_OPS`: the
wrapping integer add, subtract and multiply, the bitwise logic ops and the
shifts by less than the width on 8- to 64-bit integer lanes, and bitcasts; none
rounds): a decode kernel's lowered code is a third such ops, and running them
lane by lane was most of the time to interpret it.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from functools import lru_cache
from math import copysign, prod
from typing import Any, cast

import numpy as np
from xdsl.dialects import arith, llvm, math, vector
from xdsl.dialects.builtin import (
    DenseIntOrFPElementsAttr,
    IndexType,
    IntegerType,
    VectorType,
)
from xdsl.interpreter import (
    Interpreter,
    InterpreterFunctions,
    OpImpl,
    PythonValues,
    impl,
    impl_attr,
    register_impls,
)
from xdsl.interpreters.shaped_array import ShapedArray
from xdsl.ir import Attribute, Block, Operation, SSAValue
from xdsl.utils.exceptions import InterpretationError

from mx.interpreters.matrix import scalar_attr, scalar_value
from mx.interpreters.memref import check_indices
from mx.semantics import matrix as sem
from mx.xdsl_compat.interpreter import implementations


def lane_dtype(element_type: Attribute) -> np.dtype[Any]:
    """The NumPy dtype of one lane of a vector of `element_type`."""
    if isinstance(element_type, IntegerType) and element_type.width.data == 1:
        return np.dtype(np.bool_)
    if isinstance(element_type, IndexType):
        return np.dtype(np.int64)
    return sem.element_dtype(element_type)


def _vector_type(value: SSAValue) -> VectorType[Attribute]:
    return cast(VectorType[Attribute], value.type)


def _array(value: Any, t: VectorType[Attribute]) -> sem.Array:
    return np.asarray(value, dtype=lane_dtype(t.element_type)).reshape(t.get_shape())


def _lane(value: Any, element_type: Attribute) -> Any:
    """One lane of a vector as the interpreter's scalar value."""
    if isinstance(element_type, IndexType):
        element_type = IntegerType(64)
    if isinstance(element_type, IntegerType):
        return _shared_lane(int(value), 0.0, element_type)
    number = float(value)
    return _shared_lane(number, copysign(1.0, number), element_type)


@lru_cache(maxsize=1 << 16)
def _shared_lane(value: int | float, sign: float, element_type: Attribute) -> Any:
    """`scalar_attr` of a lane, one attribute for equal lanes: building and
    verifying attributes was half the time of interpreting lowered code
    (attributes are immutable, so sharing one is safe). `sign` keeps 0.0
    and -0.0 apart (they are equal keys); a NaN never equals a key, so each
    NaN lane gets its own attribute."""
    return scalar_attr(value, element_type)


def _from_lanes(lanes: Sequence[Any], t: VectorType[Attribute]) -> sem.Array:
    dtype = lane_dtype(t.element_type)
    values = [scalar_value(v) for v in lanes]
    if dtype == np.bool_:
        return np.array([int(v) & 1 for v in values], dtype=dtype).reshape(
            t.get_shape()
        )
    if (bits := sem.container_bits(t.element_type)) is not None:  # i4/i6: low bits
        values = [int(v) & ((1 << bits) - 1) for v in values]
    return np.array([sem.scalar(v, dtype) for v in values], dtype=dtype).reshape(
        t.get_shape()
    )


def vector_constant(value: DenseIntOrFPElementsAttr, t: VectorType[Attribute]) -> Any:
    """The value of an `arith.constant` of vector type."""
    values = cast(list[int | float], list(value.get_values()))
    if len(values) == 1:
        values = values * prod(t.get_shape())
    return _from_lanes([_lane(v, t.element_type) for v in values], t)


# -- elementwise arith/math ops on vectors ------------------------------------

ELEMENTWISE_OPS: tuple[type[Operation], ...] = (
    arith.AddfOp, arith.SubfOp, arith.MulfOp, arith.DivfOp, arith.NegfOp,
    arith.AddiOp, arith.SubiOp, arith.MuliOp, arith.DivSIOp, arith.DivUIOp,
    arith.RemSIOp, arith.RemUIOp, arith.FloorDivSIOp, arith.CeilDivSIOp,
    arith.CeilDivUIOp, arith.AndIOp, arith.OrIOp, arith.XOrIOp,
    arith.ShLIOp, arith.ShRSIOp, arith.ShRUIOp,
    arith.MaxSIOp, arith.MinSIOp, arith.MaxUIOp, arith.MinUIOp,
    arith.MaximumfOp, arith.MinimumfOp, arith.MaxnumfOp, arith.MinnumfOp,
    arith.CmpiOp, arith.CmpfOp, arith.SelectOp,
    arith.ExtFOp, arith.TruncFOp, arith.ExtSIOp, arith.ExtUIOp, arith.TruncIOp,
    arith.SIToFPOp, arith.UIToFPOp, arith.FPToSIOp, arith.FPToUIOp,
    arith.BitcastOp, arith.IndexCastOp,
    math.FmaOp, math.AbsFOp, math.AbsIOp, math.SqrtOp, math.ExpOp, math.LogOp,
    math.RoundEvenOp, math.Exp2Op, math.Log2Op, math.Log10Op, math.SinOp,
    math.CosOp, math.TanhOp, math.FloorOp, math.CeilOp, math.TruncOp, math.RoundOp,
)  # fmt: skip
"""Ops computed lane by lane when their operands or results are vectors."""


def _scalar_twin(op: Operation) -> Operation:
    """A detached copy of `op` with the element types of its vector types."""

    def scalar(t: Attribute) -> Attribute:
        return t.element_type if isinstance(t, VectorType) else t

    block = Block(arg_types=[scalar(o.type) for o in op.operands])
    return type(op).create(
        operands=list(block.args),
        result_types=[scalar(r.type) for r in op.results],
        properties=dict(op.properties),
        attributes=dict(op.attributes),
    )


ScalarImpl = OpImpl[InterpreterFunctions, Operation]

_INTEGER_UFUNCS: dict[type[Operation], np.ufunc] = {
    # (NumPy's integer vectors wrap, as the scalar ops do)
    arith.AddiOp: np.add, arith.SubiOp: np.subtract, arith.MuliOp: np.multiply,
    arith.AndIOp: np.bitwise_and, arith.OrIOp: np.bitwise_or,
    arith.XOrIOp: np.bitwise_xor,
}  # fmt: skip
WHOLE_VECTOR_OPS: tuple[type[Operation], ...] = (
    *_INTEGER_UFUNCS,
    arith.ShLIOp,
    arith.ShRSIOp,
    arith.ShRUIOp,
    arith.BitcastOp,
)
"""Ops on vectors that NumPy computes on the whole vector."""


def _whole_lanes(t: Attribute) -> bool:
    """A vector of 8- to 64-bit integers or floats (no i1, i4 or i6)."""
    if not isinstance(t, VectorType):
        return False
    element = cast(VectorType[Attribute], t).element_type
    if isinstance(element, IntegerType):
        return element.width.data in (8, 16, 32, 64)
    return sem.is_float_dtype(lane_dtype(element))


def whole_vector(op: Operation, args: PythonValues) -> PythonValues | None:
    """`op`'s results computed on whole vectors, or None where its lanes must
    run one by one: not an op of WHOLE_VECTOR_OPS on vectors of `_whole_lanes`,
    or a shift by the width or more (undefined, which the scalar
    implementation reports). A bitcast views the bits as the result's lanes,
    as the scalar one does; the others take integer lanes."""
    if not isinstance(op, WHOLE_VECTOR_OPS):
        return None
    t = op.results[0].type
    if not all(_whole_lanes(v.type) for v in (*op.operands, *op.results)):
        return None
    vt = cast(VectorType[Attribute], t)
    if isinstance(op, arith.BitcastOp):
        source = _array(args[0], _vector_type(op.operands[0]))
        return (source.view(lane_dtype(vt.element_type)),)
    element = vt.element_type
    if not isinstance(element, IntegerType) or any(o.type != t for o in op.operands):
        return None
    a, b = (_array(x, vt) for x in args)
    if (ufunc := _INTEGER_UFUNCS.get(type(op))) is not None:
        return (ufunc(a, b),)
    unsigned = np.dtype(f"uint{element.width.data}")
    amounts = b.view(unsigned)
    if (amounts >= element.width.data).any():
        return None
    if isinstance(op, arith.ShRSIOp):
        return (a >> amounts.astype(a.dtype),)
    bits = a.view(unsigned)
    shifted = bits << amounts if isinstance(op, arith.ShLIOp) else bits >> amounts
    return (shifted.view(a.dtype),)


def run_lanes(
    functions: InterpreterFunctions,
    scalar_impl: ScalarImpl,
    interpreter: Interpreter,
    op: Operation,
    args: PythonValues,
) -> PythonValues:
    """Run `op` with `scalar_impl` once per lane if it has vector types."""
    if not any(isinstance(v.type, VectorType) for v in (*op.operands, *op.results)):
        return scalar_impl(functions, interpreter, op, args).values
    twins: dict[Operation, Operation] = interpreter.get_data(
        type(functions), "scalar_twins", dict
    )
    twin = twins.get(op)
    if twin is None:
        twin = twins[op] = _scalar_twin(op)
    vectors = [
        _array(a, _vector_type(o)) if isinstance(o.type, VectorType) else None
        for a, o in zip(args, op.operands, strict=True)
    ]
    t = next(
        _vector_type(v)
        for v in (*op.results, *op.operands)
        if isinstance(v.type, VectorType)
    )
    lanes: list[PythonValues] = []
    for index in np.ndindex(*t.get_shape()):
        lane_args = tuple(
            _lane(v[index], _vector_type(o).element_type) if v is not None else a
            for v, a, o in zip(vectors, args, op.operands, strict=True)
        )
        lanes.append(scalar_impl(functions, interpreter, twin, lane_args).values)
    return tuple(
        _from_lanes([lane[k] for lane in lanes], _vector_type(r))
        for k, r in enumerate(op.results)
    )


def lanewise(base: type[InterpreterFunctions]) -> type[InterpreterFunctions]:
    """`base` whose implementations of ELEMENTWISE_OPS also run on vectors."""
    scalar_impls = dict(implementations(base))

    def lanewise_impl(op_type: type[Operation]) -> Any:
        scalar_impl = scalar_impls[op_type]

        @impl(op_type)
        def run(
            self: InterpreterFunctions,
            interpreter: Interpreter,
            op: Operation,
            args: PythonValues,
        ) -> PythonValues:
            if (results := whole_vector(op, args)) is not None:
                return results
            return run_lanes(self, scalar_impl, interpreter, op, args)

        return run

    namespace = {
        f"run_{t.__name__}": lanewise_impl(t)
        for t in ELEMENTWISE_OPS
        if t in scalar_impls
    }
    return register_impls(type(f"Lanewise{base.__name__}", (base,), namespace))


# -- the vector dialect ---------------------------------------------------------


def _check_position(position: tuple[int, ...], t: VectorType[Attribute]) -> None:
    """Undefined behaviour unless `position` is inside the vector type `t`."""
    for dim, (p, size) in enumerate(zip(position, t.get_shape(), strict=False)):
        if not 0 <= p < size:
            raise sem.UndefinedBehaviorError(
                f"vector position {p} is outside [0, {size}) in dimension {dim}"
            )


def _positions(
    op: vector.ExtractOp | vector.InsertOp, args: PythonValues
) -> tuple[int, ...]:
    dynamic = iter(args[-len(op.dynamic_position) :] if op.dynamic_position else ())
    return tuple(
        p if isinstance(p, int) else cast(int, scalar_value(next(dynamic)))
        for p in op.get_mixed_position()
    )


def _memory_indices(
    memory: ShapedArray[Any], indices: Sequence[Any], lanes: int
) -> list[int]:
    """Positions in `memory` of a vector access of `lanes` elements at `indices`
    (along the last dimension; every element must be inside the memref)."""
    start = [cast(int, scalar_value(i)) for i in indices]
    check_indices(memory, start)
    last = [*start[:-1], start[-1] + lanes - 1]
    check_indices(memory, last)
    first = memory.offset(start)
    return list(range(first, first + lanes))


_REDUCTIONS: dict[str, Callable[[sem.Array, sem.Array], sem.Array]] = {
    "add": sem.add,
    "mul": sem.mul,
    "and": np.bitwise_and,
    "or": np.bitwise_or,
    "xor": np.bitwise_xor,
    "minsi": np.minimum,
    "maxsi": np.maximum,
}
"""`vector.reduction` kinds, combining the lanes in order (a sum rounds each step)."""


@register_impls
class VectorFunctions(InterpreterFunctions):
    """The `vector` ops mx's lowerings emit, on NumPy arrays."""

    @impl_attr(VectorType)
    def vector_attr_value(
        self, interpreter: Interpreter, attr: Attribute, t: VectorType[Attribute]
    ) -> sem.Array:
        """A `dense<...>` literal as a vector value (xdsl-run's `--args`)."""
        if not isinstance(attr, DenseIntOrFPElementsAttr):
            raise InterpretationError(f"expected a dense literal for {t}, got {attr}")
        return vector_constant(attr, t)

    @impl(vector.BroadcastOp)
    def run_broadcast(
        self, interpreter: Interpreter, op: vector.BroadcastOp, args: PythonValues
    ) -> PythonValues:
        t = _vector_type(op.vector)
        source = args[0]
        if not isinstance(op.source.type, VectorType):
            source = _from_lanes([source], VectorType(t.element_type, [1]))[0]
        dtype = lane_dtype(t.element_type)
        return (np.broadcast_to(np.asarray(source, dtype=dtype), t.get_shape()).copy(),)

    @impl(vector.ExtractOp)
    def run_extract(
        self, interpreter: Interpreter, op: vector.ExtractOp, args: PythonValues
    ) -> PythonValues:
        t = _vector_type(op.vector)
        position = _positions(op, args)
        _check_position(position, t)
        value = _array(args[0], t)[position]
        if isinstance(op.result.type, VectorType):
            return (np.asarray(value).copy(),)
        return (_lane(value, t.element_type),)

    @impl(vector.InsertOp)
    def run_insert(
        self, interpreter: Interpreter, op: vector.InsertOp, args: PythonValues
    ) -> PythonValues:
        t = _vector_type(op.dest)
        position = _positions(op, args)
        _check_position(position, t)
        result = _array(args[1], t).copy()
        source = args[0]
        if not isinstance(op.source.type, VectorType):
            source = _from_lanes([source], VectorType(t.element_type, [1]))[0]
        result[position] = source
        return (result,)

    @impl(vector.ShuffleOp)
    def run_shuffle(
        self, interpreter: Interpreter, op: vector.ShuffleOp, args: PythonValues
    ) -> PythonValues:
        both = np.concatenate(
            [_array(args[0], _vector_type(op.v1)), _array(args[1], _vector_type(op.v2))]
        )
        mask = cast(Sequence[int], op.mask.get_values())
        return (both[list(mask)].copy(),)

    @impl(vector.FMAOp)
    def run_fma(
        self, interpreter: Interpreter, op: vector.FMAOp, args: PythonValues
    ) -> PythonValues:
        t = _vector_type(op.res)
        a, b, c = (_array(v, t) for v in args)
        return (sem.fma(a, b, c),)

    @impl(vector.BitcastOp)
    def run_bitcast(
        self, interpreter: Interpreter, op: vector.BitcastOp, args: PythonValues
    ) -> PythonValues:
        source, result = _vector_type(op.source), _vector_type(op.result)
        bits = _array(args[0], source).view(lane_dtype(result.element_type))
        return (bits.reshape(result.get_shape()).copy(),)

    @impl(vector.ReductionOp)
    def run_reduction(
        self, interpreter: Interpreter, op: vector.ReductionOp, args: PythonValues
    ) -> PythonValues:
        t = _vector_type(op.vector)
        lanes = _array(args[0], t).reshape(-1, 1)
        kind = op.kind.data
        if kind not in _REDUCTIONS:
            raise InterpretationError(f"vector.reduction <{kind}> is not supported")
        acc = lanes[0:1]
        with np.errstate(all="ignore"):
            for lane in lanes[1:]:
                acc = _REDUCTIONS[kind](acc, lane.reshape(1, 1))
        return (_lane(acc[0, 0], t.element_type),)

    @impl(vector.LoadOp)
    def run_load(
        self, interpreter: Interpreter, op: vector.LoadOp, args: PythonValues
    ) -> PythonValues:
        t = _vector_type(op.result)
        memory = cast(ShapedArray[Any], args[0])
        positions = _memory_indices(memory, args[1:], prod(t.get_shape()))
        data = memory.data_ptr
        return (_from_lanes([_lane(data[p], t.element_type) for p in positions], t),)

    @impl(vector.StoreOp)
    def run_store(
        self, interpreter: Interpreter, op: vector.StoreOp, args: PythonValues
    ) -> PythonValues:
        t = _vector_type(op.vector)
        memory = cast(ShapedArray[Any], args[1])
        values = _array(args[0], t).reshape(-1)
        positions = _memory_indices(memory, args[2:], values.size)
        bits = sem.container_bits(t.element_type)
        pointer = memory.data_ptr
        for p, v in zip(positions, values, strict=True):
            value = int(v) & ((1 << bits) - 1) if bits is not None else v.item()
            pointer[p] = value
        return ()

    @impl(llvm.SExtOp)
    def run_llvm_sext(
        self, interpreter: Interpreter, op: llvm.SExtOp, args: PythonValues
    ) -> PythonValues:
        return (_extend_integer_lanes(op, args[0], signed=True),)

    @impl(llvm.ZExtOp)
    def run_llvm_zext(
        self, interpreter: Interpreter, op: llvm.ZExtOp, args: PythonValues
    ) -> PythonValues:
        return (_extend_integer_lanes(op, args[0], signed=False),)

    @impl(llvm.TruncOp)
    def run_llvm_trunc(
        self, interpreter: Interpreter, op: llvm.TruncOp, args: PythonValues
    ) -> PythonValues:
        return (_truncate_integer_lanes(op, args[0]),)


def _truncate_integer_lanes(op: Operation, value: Any) -> sem.Array:
    """`llvm.trunc` of an integer vector (what the FP8 weight-times-vector
    kernel narrows its words with): the low bits of each lane."""
    source, target = op.operands[0].type, op.results[0].type
    if not isinstance(source, VectorType) or not isinstance(target, VectorType):
        raise InterpretationError(f"{op.name} is only interpreted on vectors")
    width = cast(IntegerType, target.element_type).width.data
    dtype = lane_dtype(target.element_type)
    signed = np.issubdtype(dtype, np.signedinteger)

    def truncate(lane: int) -> int:
        bits = lane & ((1 << width) - 1)
        return bits - (1 << width) if signed and bits >> (width - 1) else bits

    lanes = _array(value, cast(VectorType[Attribute], source)).reshape(-1)
    return np.array([truncate(int(v)) for v in lanes], dtype=dtype).reshape(
        target.get_shape()
    )


def _extend_integer_lanes(op: Operation, value: Any, signed: bool) -> sem.Array:
    """`llvm.sext`/`llvm.zext` of an integer vector (what the lowering of a
    mixed-precision contraction widens its factors with)."""
    source, target = op.operands[0].type, op.results[0].type
    if not isinstance(source, VectorType) or not isinstance(target, VectorType):
        raise InterpretationError(f"{op.name} is only interpreted on vectors")
    width = cast(IntegerType, source.element_type).width.data
    mask = (1 << width) - 1

    def extend(lane: int) -> int:
        bits = lane & mask
        return bits - (1 << width) if signed and bits >> (width - 1) else bits

    lanes = _array(value, cast(VectorType[Attribute], source)).reshape(-1)
    return np.array(
        [extend(int(v)) for v in lanes], dtype=lane_dtype(target.element_type)
    ).reshape(target.get_shape())

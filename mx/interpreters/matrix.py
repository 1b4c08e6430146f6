"""xDSL interpreter functions for the `matrix` dialect (reference semantics).

Runtime values, consistent with xDSL 0.75's own interpreters:

- scalars are `IntegerAttr` / `FloatAttr` (as xDSL's arith, memref and scf
  interpreters produce and consume them; `index` values are `IntegerAttr`s of
  the interpreter's index width). Scalar operands given as Python or NumPy
  numbers are accepted too;
- a matrix is a 2-D NumPy array of its element dtype (`mx.semantics.matrix`);
  a splat (of `matrix.splat`, a splat `matrix.constant` held as one value, and
  what elementwise ops, casts, transposes and products compute from splats
  only) is a read-only broadcast of its one element, so that a splat of any
  size is interpreted in constant memory;
- a vector is a 1-D NumPy array;
- a `memref<?xT>` is xDSL's `ShapedArray`; loads and stores go through a NumPy
  view of its bytes.

The numerics live in `mx.semantics.matrix`; undefined behaviour raises its
`UndefinedBehaviorError`.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, cast

import numpy as np
from xdsl.dialects.builtin import (
    DenseIntOrFPElementsAttr,
    FloatAttr,
    IntegerAttr,
    IntegerType,
    MemRefType,
    VectorType,
)
from xdsl.interpreter import (
    Interpreter,
    InterpreterFunctions,
    PythonValues,
    impl,
    impl_attr,
    register_impls,
)
from xdsl.interpreters.shaped_array import ShapedArray
from xdsl.ir import Attribute, Operation, SSAValue
from xdsl.utils.exceptions import InterpretationError
from xdsl.utils.hints import isa

from mx.dialects import matrix
from mx.dialects.dense_literal import is_splat_literal
from mx.semantics import matrix as sem

Array = sem.Array


def scalar_value(value: Any) -> int | float:
    """The number held by a runtime scalar (an xDSL attribute or a number)."""
    if isinstance(value, IntegerAttr | FloatAttr):
        return value.value.data
    if isinstance(value, np.generic):
        return cast(int | float, value.item())
    return cast(int | float, value)


def scalar_attr(value: Any, element_type: Attribute) -> IntegerAttr | FloatAttr:
    """A NumPy/Python number of `element_type` as the interpreter's scalar value."""
    if isinstance(element_type, IntegerType):
        return IntegerAttr(int(value), element_type, truncate_bits=True)
    return FloatAttr(float(value), cast(Any, element_type))


def memory_view(memory: ShapedArray[Any], element_type: Attribute) -> Array:
    """A writable 1-D NumPy view of a memref's storage (i4/i6: one byte each)."""
    ptr = memory.data_ptr
    return np.frombuffer(
        ptr.raw.memory,
        dtype=sem.element_dtype(element_type),
        count=memory.size,
        offset=ptr.raw.offset,
    )


def is_splat(value: Any) -> bool:
    """True for a matrix held as a broadcast of its one element."""
    return isinstance(value, np.ndarray) and value.ndim == 2 and value.strides == (0, 0)


def splat_matrix(element: Array, shape: tuple[int, int]) -> Array:
    """`element` (one element, any shape) broadcast to `shape`, read-only."""
    return np.broadcast_to(element.reshape(1, 1), shape)


def _corner(m: Array) -> Array:
    """A copy of a splat's one element, as a 1x1 matrix."""
    return np.array(m[:1, :1])


SPLAT_PRESERVING = (
    matrix.AddOp,
    matrix.SubOp,
    matrix.MulOp,
    matrix.DivOp,
    matrix.NegOp,
    matrix.FmaOp,
    matrix.CastOp,
    matrix.TransposeOp,
    matrix.MatmulOp,
    matrix.MatmulAddOp,
)
"""The ops whose result is a splat when their operands all are."""


def computes_splat(op: Operation, args: PythonValues) -> bool:
    """True if `op` run on `args` gives a splat (`is_splat`): no memory per
    element, whatever the size of its result."""
    if isinstance(op, matrix.SplatOp):
        return True
    if isinstance(op, matrix.ConstantOp):
        return is_splat_literal(op.value)
    return isinstance(op, SPLAT_PRESERVING) and all(is_splat(a) for a in args)


def _elementwise(compute: Callable[..., Array], *matrices: Array) -> Array:
    """`compute` on `matrices`; on splats only, on their one element (a splat)."""
    if all(is_splat(m) for m in matrices):
        return splat_matrix(compute(*map(_corner, matrices)), matrices[0].shape)
    return compute(*matrices)


def _type(value: SSAValue) -> matrix.MatrixType:
    return cast(matrix.MatrixType, value.type)


def _memref_element(op: matrix.MemoryAccessOp) -> Attribute:
    t = op.memory().type
    assert isa(t, MemRefType[Attribute])
    return t.element_type


def _resolve(op: Operation, args: PythonValues, value: matrix.MixedIndex) -> int:
    """A static literal, or the runtime value of a dynamic `index` operand."""
    if isinstance(value, int):
        return value
    return int(scalar_value(args[list(op.operands).index(value)]))


def _vector(value: Any, element_type: Attribute) -> Array:
    return np.asarray(value, dtype=sem.element_dtype(element_type)).reshape(-1)


def _widened_factors(op: matrix.ContractionOp, args: PythonValues) -> list[Array]:
    """A contraction's two factors (matvec's vector as a 1-D array), each
    widened exactly to the result element type."""
    dtype = sem.element_dtype(op.result_element)
    return [
        sem.widen(
            _vector(arg, matrix.element_type_of(value.type))
            if isinstance(value.type, VectorType)
            else arg,
            dtype,
            unsigned=op.unsigned is not None,
        )
        for arg, value in zip(args, op.factors, strict=False)
    ]


def _product_of_splats(
    op: matrix.MatmulOp | matrix.MatmulAddOp, args: PythonValues
) -> Array:
    """A product of splats: each element is the same sum of K terms, computed
    once from a 1xK row and a Kx1 column (and the accumulator's element)."""
    a, b, *acc = args
    t = _type(op.result)
    corner = (np.array(a[:1, :]), np.array(b[:, :1]), *map(_corner, acc))
    lhs, rhs = _widened_factors(op, corner)
    if isinstance(op, matrix.MatmulOp):
        return splat_matrix(sem.matmul(lhs, rhs), t.shape)
    return splat_matrix(sem.matmul_add(lhs, rhs, corner[2]), t.shape)


@register_impls
class MatrixFunctions(InterpreterFunctions):
    """Every `matrix` op, computed by `mx.semantics.matrix`."""

    @impl_attr(matrix.MatrixType)
    def matrix_attr_value(
        self, interpreter: Interpreter, attr: Attribute, t: matrix.MatrixType
    ) -> Array:
        """A `dense<...>` literal as a matrix value (xdsl-run's `--args`)."""
        if not isinstance(attr, DenseIntOrFPElementsAttr):
            raise InterpretationError(f"expected a dense literal for {t}, got {attr}")
        values = cast(list[int | float], list(attr.get_values()))
        dtype = sem.element_dtype(t.element_type)
        bits = sem.container_bits(t.element_type)
        if len(values) == 1:
            return splat_matrix(sem.constant(values, (1, 1), dtype, bits), t.shape)
        if len(values) != t.num_elements:
            raise InterpretationError(f"{attr} does not have the shape of {t}")
        return sem.constant(values, t.shape, dtype, bits)

    @impl(matrix.SplatOp)
    def run_splat(
        self, interpreter: Interpreter, op: matrix.SplatOp, args: PythonValues
    ) -> PythonValues:
        t = _type(op.result)
        m = sem.splat(scalar_value(args[0]), (1, 1), sem.element_dtype(t.element_type))
        if (bits := sem.container_bits(t.element_type)) is not None:
            m &= (1 << bits) - 1
        return (splat_matrix(m, t.shape),)

    @impl(matrix.ConstantOp)
    def run_constant(
        self, interpreter: Interpreter, op: matrix.ConstantOp, args: PythonValues
    ) -> PythonValues:
        t = _type(op.result)
        dtype = sem.element_dtype(t.element_type)
        bits = sem.container_bits(t.element_type)
        if is_splat_literal(op.value):
            one = sem.constant([op.element(0, 0)], (1, 1), dtype, bits)
            return (splat_matrix(one, t.shape),)
        return (sem.constant(op.row_major_values(), t.shape, dtype, bits),)

    @impl(matrix.ExtractOp)
    def run_extract(
        self, interpreter: Interpreter, op: matrix.ExtractOp, args: PythonValues
    ) -> PythonValues:
        row, col = (_resolve(op, args, i) for i in op.indices())
        value = sem.extract(args[0], row, col)
        return (scalar_attr(value, _type(op.matrix).element_type),)

    @impl(matrix.InsertOp)
    def run_insert(
        self, interpreter: Interpreter, op: matrix.InsertOp, args: PythonValues
    ) -> PythonValues:
        row, col = (_resolve(op, args, i) for i in op.indices())
        value = scalar_value(args[0])
        if (bits := sem.container_bits(_type(op.matrix).element_type)) is not None:
            value = int(value) & ((1 << bits) - 1)
        return (sem.insert(args[1], value, row, col),)

    @impl(matrix.AddOp)
    def run_add(
        self, interpreter: Interpreter, op: matrix.AddOp, args: PythonValues
    ) -> PythonValues:
        return (_elementwise(sem.add, *args),)

    @impl(matrix.SubOp)
    def run_sub(
        self, interpreter: Interpreter, op: matrix.SubOp, args: PythonValues
    ) -> PythonValues:
        return (_elementwise(sem.sub, *args),)

    @impl(matrix.MulOp)
    def run_mul(
        self, interpreter: Interpreter, op: matrix.MulOp, args: PythonValues
    ) -> PythonValues:
        return (_elementwise(sem.mul, *args),)

    @impl(matrix.DivOp)
    def run_div(
        self, interpreter: Interpreter, op: matrix.DivOp, args: PythonValues
    ) -> PythonValues:
        def div(a: Array, b: Array) -> Array:
            return sem.div(a, b, unsigned=op.unsigned is not None)

        return (_elementwise(div, *args),)

    @impl(matrix.NegOp)
    def run_neg(
        self, interpreter: Interpreter, op: matrix.NegOp, args: PythonValues
    ) -> PythonValues:
        return (_elementwise(sem.neg, *args),)

    @impl(matrix.FmaOp)
    def run_fma(
        self, interpreter: Interpreter, op: matrix.FmaOp, args: PythonValues
    ) -> PythonValues:
        return (_elementwise(sem.fma, *args),)

    @impl(matrix.MatmulOp)
    def run_matmul(
        self, interpreter: Interpreter, op: matrix.MatmulOp, args: PythonValues
    ) -> PythonValues:
        if computes_splat(op, args):
            return (_product_of_splats(op, args),)
        return (sem.matmul(*_widened_factors(op, args)),)

    @impl(matrix.MatmulAddOp)
    def run_matmul_add(
        self, interpreter: Interpreter, op: matrix.MatmulAddOp, args: PythonValues
    ) -> PythonValues:
        if computes_splat(op, args):
            return (_product_of_splats(op, args),)
        a, b = _widened_factors(op, args)
        return (sem.matmul_add(a, b, args[2]),)

    @impl(matrix.MatvecOp)
    def run_matvec(
        self, interpreter: Interpreter, op: matrix.MatvecOp, args: PythonValues
    ) -> PythonValues:
        m, x = _widened_factors(op, args)
        b = _vector(args[2], op.result_element) if op.bias is not None else None
        return (sem.matvec(m, x, b),)

    @impl(matrix.OuterProductOp)
    def run_outer_product(
        self, interpreter: Interpreter, op: matrix.OuterProductOp, args: PythonValues
    ) -> PythonValues:
        element_type = cast(VectorType[Attribute], op.lhs.type).element_type
        u, v = (_vector(a, element_type) for a in args)
        return (sem.outer_product(u, v),)

    @impl(matrix.TransposeOp)
    def run_transpose(
        self, interpreter: Interpreter, op: matrix.TransposeOp, args: PythonValues
    ) -> PythonValues:
        (m,) = args
        if is_splat(m):
            return (splat_matrix(_corner(m), (m.shape[1], m.shape[0])),)
        return (sem.transpose(m),)

    @impl(matrix.CastOp)
    def run_cast(
        self, interpreter: Interpreter, op: matrix.CastOp, args: PythonValues
    ) -> PythonValues:
        target = sem.element_dtype(_type(op.result).element_type)

        def cast_to_target(m: Array) -> Array:
            return sem.cast(m, target, unsigned=op.unsigned is not None)

        return (_elementwise(cast_to_target, *args),)

    def _layout(self, op: matrix.MemoryAccessOp, args: PythonValues) -> tuple[int, int]:
        return _resolve(op, args, op.offset()), _resolve(op, args, op.stride())

    def _load(self, op: matrix.LoadOp, args: PythonValues) -> PythonValues:
        t = _type(op.result)
        offset, stride = self._layout(op, args)
        memory = memory_view(args[0], _memref_element(op))
        return (
            sem.load(
                memory,
                t.shape,
                offset,
                stride,
                column_major=op.COLUMN_MAJOR,
                bits=sem.container_bits(t.element_type),
                packed=op.is_packed,
            ),
        )

    def _store(self, op: matrix.StoreOp, args: PythonValues) -> PythonValues:
        t = _type(op.value)
        offset, stride = self._layout(op, args)
        sem.store(
            args[0],
            memory_view(args[1], _memref_element(op)),
            offset,
            stride,
            column_major=op.COLUMN_MAJOR,
            bits=sem.container_bits(t.element_type),
            packed=op.is_packed,
        )
        return ()

    @impl(matrix.ColumnMajorLoadOp)
    def run_column_major_load(
        self,
        interpreter: Interpreter,
        op: matrix.ColumnMajorLoadOp,
        args: PythonValues,
    ) -> PythonValues:
        return self._load(op, args)

    @impl(matrix.RowMajorLoadOp)
    def run_row_major_load(
        self, interpreter: Interpreter, op: matrix.RowMajorLoadOp, args: PythonValues
    ) -> PythonValues:
        return self._load(op, args)

    @impl(matrix.ColumnMajorStoreOp)
    def run_column_major_store(
        self,
        interpreter: Interpreter,
        op: matrix.ColumnMajorStoreOp,
        args: PythonValues,
    ) -> PythonValues:
        return self._store(op, args)

    @impl(matrix.RowMajorStoreOp)
    def run_row_major_store(
        self, interpreter: Interpreter, op: matrix.RowMajorStoreOp, args: PythonValues
    ) -> PythonValues:
        return self._store(op, args)

"""`memref` and `affine` ops with mx's rules.

`affine.for` with any bounds and iteration arguments, `affine.if`,
`affine.apply` and `affine.min` with symbols (xDSL's interpreter has only
constant-bound loops without arguments). xDSL's interpreter also computes a flat position from the indices without checking
them: an index past a dimension reads a neighbouring element, one past the
buffer fails inside `struct`. Here every index is checked (out of range is
undefined behaviour), `memref.alloca` is supported, and `i4`/`i6` containers
follow their memory rule: one byte each, loads ignore the high bits, stores
write them as zero.
"""

from __future__ import annotations

from collections.abc import Sequence
from math import prod
from typing import Any, cast

from xdsl.dialects import affine, memref
from xdsl.dialects.builtin import AffineMapAttr, MemRefType
from xdsl.interpreter import Interpreter, PythonValues, impl, register_impls
from xdsl.interpreters.affine import AffineFunctions
from xdsl.interpreters.builtin import scalar_attr, xtype_for_el_type
from xdsl.interpreters.memref import MemRefFunctions
from xdsl.interpreters.shaped_array import ShapedArray
from xdsl.interpreters.utils.ptr import TypedPtr
from xdsl.ir import Attribute
from xdsl.ir.affine import AffineConstraintKind, AffineSet

from mx.dialects.memref_ext import PrefetchOp
from mx.semantics.matrix import UndefinedBehaviorError, container_bits


def check_indices(memory: ShapedArray[Any], indices: Sequence[int]) -> None:
    """Raise UndefinedBehaviorError unless every index is inside its dimension."""
    for dim, (index, size) in enumerate(zip(indices, memory.shape, strict=True)):
        if not 0 <= index < size:
            raise UndefinedBehaviorError(
                f"memref index {index} is outside [0, {size}) in dimension {dim}"
            )


def load(
    interpreter: Interpreter,
    memory: ShapedArray[Any],
    indices: Sequence[int],
    element_type: Attribute,
) -> Any:
    check_indices(memory, indices)
    return scalar_attr(memory.load(indices), element_type, interpreter.index_bitwidth)


def store(
    memory: ShapedArray[Any],
    indices: Sequence[int],
    value: Any,
    element_type: Attribute,
) -> None:
    check_indices(memory, indices)
    data = value.value.data
    if (bits := container_bits(element_type)) is not None:
        data &= (1 << bits) - 1
    memory.store(indices, data)


def _allocate(interpreter: Interpreter, t: MemRefType[Attribute]) -> ShapedArray[Any]:
    shape = list(t.get_shape())
    element_type = t.get_element_type()
    xtype = xtype_for_el_type(element_type, interpreter.index_bitwidth)
    return ShapedArray(TypedPtr[Any].zeros(prod(shape), xtype=xtype), shape)


def _indices(values: Sequence[Any]) -> tuple[int, ...]:
    return tuple(cast(int, v.value.data) for v in values)


@register_impls
class MxMemRefFunctions(MemRefFunctions):
    @impl(memref.AllocOp)
    def run_alloc(
        self, interpreter: Interpreter, op: memref.AllocOp, args: PythonValues
    ) -> PythonValues:
        return (_allocate(interpreter, op.memref.type),)

    @impl(memref.AllocaOp)
    def run_alloca(
        self, interpreter: Interpreter, op: memref.AllocaOp, args: PythonValues
    ) -> PythonValues:
        return (_allocate(interpreter, op.memref.type),)

    @impl(memref.LoadOp)
    def run_load(
        self, interpreter: Interpreter, op: memref.LoadOp, args: PythonValues
    ) -> PythonValues:
        memory, *indices = args
        return (load(interpreter, memory, _indices(indices), op.res.type),)

    @impl(memref.StoreOp)
    def run_store(
        self, interpreter: Interpreter, op: memref.StoreOp, args: PythonValues
    ) -> PythonValues:
        value, memory, *indices = args
        store(memory, _indices(indices), value, op.value.type)
        return ()

    @impl(PrefetchOp)
    def run_prefetch(
        self, interpreter: Interpreter, op: PrefetchOp, args: PythonValues
    ) -> PythonValues:
        """A cache hint: nothing to compute (even out of bounds, as the
        hardware's prefetch of any address)."""
        return ()

    @impl(memref.ExtractAlignedPointerAsIndexOp)
    def run_extract_aligned_pointer(
        self,
        interpreter: Interpreter,
        op: memref.ExtractAlignedPointerAsIndexOp,
        args: PythonValues,
    ) -> PythonValues:
        """The interpreter's memory has no addresses: every memref starts at
        0, aligned to anything (the lowering reads addresses only to choose
        where a loop starts, never what it computes)."""
        return (scalar_attr(0, op.aligned_pointer.type, interpreter.index_bitwidth),)


def _affine_indices(map_: AffineMapAttr, operands: Sequence[Any]) -> list[int]:
    """The results of an affine map applied to its dimension and symbol operands."""
    values = [cast(int, v.value.data) for v in operands]
    dims = map_.data.num_dims
    return list(map_.data.eval(values[:dims], values[dims:]))


def _holds(condition: AffineSet, values: Sequence[int]) -> bool:
    dims, symbols = values[: condition.num_dims], values[condition.num_dims :]
    for constraint in condition.constraints:
        v = constraint.lhs.eval(dims, symbols) - constraint.rhs.eval(dims, symbols)
        match constraint.kind:
            case AffineConstraintKind.ge if v < 0:
                return False
            case AffineConstraintKind.le if v > 0:
                return False
            case AffineConstraintKind.eq if v != 0:
                return False
            case _:
                pass
    return True


@register_impls
class MxAffineFunctions(AffineFunctions):
    @impl(affine.LoadOp)
    def run_load(
        self, interpreter: Interpreter, op: affine.LoadOp, args: PythonValues
    ) -> PythonValues:
        memory, *operands = args
        assert op.map is not None
        indices = _affine_indices(op.map, operands)
        return (load(interpreter, memory, indices, op.results[0].type),)

    @impl(affine.StoreOp)
    def run_store(
        self, interpreter: Interpreter, op: affine.StoreOp, args: PythonValues
    ) -> PythonValues:
        value, memory, *operands = args
        assert op.map is not None
        store(memory, _affine_indices(op.map, operands), value, op.value.type)
        return ()

    @impl(affine.ForOp)
    def run_for(
        self, interpreter: Interpreter, op: affine.ForOp, args: PythonValues
    ) -> PythonValues:
        """Bounds are the max of the lower and the min of the upper map's results;
        the iteration arguments are carried from one iteration to the next."""
        lower_count, upper_count = (
            len(op.lowerBoundOperands),
            len(op.upperBoundOperands),
        )
        lower = max(_affine_indices(op.lowerBoundMap, args[:lower_count]))
        upper_operands = args[lower_count : lower_count + upper_count]
        upper = min(_affine_indices(op.upperBoundMap, upper_operands))
        carried = tuple(args[lower_count + upper_count :])
        index_type = op.body.block.args[0].type
        for i in range(lower, upper, op.step.value.data):
            induction = scalar_attr(i, index_type, interpreter.index_bitwidth)
            carried = interpreter.run_ssacfg_region(
                op.body, (induction, *carried), "affine.for"
            )
        return carried

    @impl(affine.ApplyOp)
    def run_apply(
        self, interpreter: Interpreter, op: affine.ApplyOp, args: PythonValues
    ) -> PythonValues:
        (value,) = _affine_indices(op.map, args)
        return (scalar_attr(value, op.result.type, interpreter.index_bitwidth),)

    @impl(affine.MinOp)
    def run_min(
        self, interpreter: Interpreter, op: affine.MinOp, args: PythonValues
    ) -> PythonValues:
        value = min(_affine_indices(op.map, args))
        return (scalar_attr(value, op.result.type, interpreter.index_bitwidth),)

    @impl(affine.IfOp)
    def run_if(
        self, interpreter: Interpreter, op: affine.IfOp, args: PythonValues
    ) -> PythonValues:
        values = [cast(int, v.value.data) for v in args]
        region = op.then_region if _holds(op.condition.data, values) else op.else_region
        if not region.blocks:
            return ()
        return interpreter.run_ssacfg_region(region, (), "affine.if")

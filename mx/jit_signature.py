"""A compiled function's signature as Python sees it: the NumPy dtype of
each of mx's types (`numpy_dtype`), and for each parameter and result
(`Param`, `Result`) its kind, the arrays and scalars it accepts, how an
argument is checked and normalized for the general call path, and what the
native entries check (`Operand`). Argument errors are located at the
function's definition (`Where`). Used by `mx.jit_compile`.
"""

import ctypes
from dataclasses import dataclass
from functools import cache, cached_property
from typing import Any, Literal, cast

import ml_dtypes
import numpy as np
from xdsl.dialects.builtin import (
    BFloat16Type,
    Float16Type,
    Float32Type,
    Float64Type,
    IndexType,
    IntegerType,
    MemRefType,
    VectorType,
)
from xdsl.ir import Attribute

from mx.diagnostics import Diag, Source
from mx.dialects.matrix import MatrixType
from mx.errors import ArgumentError, CompileError
from mx.jit_object_layout import ALIGNED, C_CONTIGUOUS, SCALAR_VALUE, WRITEABLE
from mx.jit_runtime import core_order
from mx.jit_wrappers import Kind, Operand

_STANDARD_WIDTHS = (8, 16, 32, 64)


def numpy_dtype(type_: Attribute) -> np.dtype[Any]:
    """The NumPy dtype holding one element of `type_` (index is int64, an
    integer of another width than 8/16/32/64 bits the next wider one)."""
    match type_:
        case Float16Type():
            return np.dtype(np.float16)
        case BFloat16Type():
            return np.dtype(ml_dtypes.bfloat16)
        case Float32Type():
            return np.dtype(np.float32)
        case Float64Type():
            return np.dtype(np.float64)
        case IndexType():
            return np.dtype(np.int64)
        case IntegerType():
            width = type_.width.data
            if width == 1:
                return np.dtype(np.bool_)
            for bits in _STANDARD_WIDTHS:
                if width <= bits:
                    return np.dtype(f"int{bits}")
        case _:
            pass
    raise CompileError([f"error: no NumPy type for {type_}"])


def _accepted_dtypes(element: Attribute) -> tuple[np.dtype[Any], ...]:
    """The dtypes an array may have for elements of type `element`: its own,
    and for i8/i6/i4 containers `uint8` and the ml_dtypes floats of the
    container's width (FP8/FP6/FP4 data is stored in such containers; an
    FP8 array is refused for an i6 container, whose loads would drop bits)."""
    own = numpy_dtype(element)
    if isinstance(element, IntegerType) and 1 < element.width.data <= 8:
        narrow = _NARROW_FLOAT_DTYPES.get(element.width.data, ())
        return (own, np.dtype(np.uint8), *narrow)
    return (own,)


_NARROW_FLOAT_DTYPES: dict[int, tuple[np.dtype[Any], ...]] = {
    8: tuple(
        np.dtype(t)
        for t in (
            ml_dtypes.float8_e4m3fn,
            ml_dtypes.float8_e5m2,
            ml_dtypes.float8_e4m3fnuz,
            ml_dtypes.float8_e5m2fnuz,
            ml_dtypes.float8_e4m3b11fnuz,
            ml_dtypes.float8_e8m0fnu,
        )
    ),
    6: (np.dtype(ml_dtypes.float6_e2m3fn), np.dtype(ml_dtypes.float6_e3m2fn)),
    4: (np.dtype(ml_dtypes.float4_e2m1fn),),
}
"""ml_dtypes' floats by bit width: the arrays an i8/i6/i4 container takes."""


@dataclass(frozen=True)
class Where:
    """Where a function is defined, to locate the errors of its calls."""

    source: Source
    diag: Diag

    def error(self, message: str) -> ArgumentError:
        d = self.diag
        return ArgumentError(
            self.source.render(Diag("error", d.line, d.column, message))
        )


@dataclass(frozen=True)
class Param:
    """One parameter of the source function, as the caller sees it."""

    label: str
    """`argument #i (%name) of @f`, for error messages."""
    type_: Attribute
    written: bool
    """A memref the function may write (a read-only array is refused)."""
    extent: int
    """Elements a memref's array must have: its static shape's, or as many as
    the accesses the function always makes (static offsets) reach."""
    where: Where

    @cached_property
    def kind(self) -> Kind:
        return kind_of(self.type_)

    @cached_property
    def core(self) -> tuple[int, ...]:
        """The shape of one value (a batch adds leading dimensions)."""
        return core_shape(self.type_)

    @cached_property
    def accepted(self) -> frozenset[np.dtype[Any]]:
        """The dtypes an array argument may have."""
        type_ = self.type_
        element = (
            type_.element_type
            if isinstance(type_, MatrixType | MemRefType | VectorType)
            else type_
        )
        return frozenset(_accepted_dtypes(element))

    def normalize(self, value: object) -> np.ndarray[Any, Any]:
        """The argument as an array of one value or a batch of values (a
        memref: the whole array); raises ArgumentError if it cannot be."""
        type_ = self.type_
        if isinstance(type_, MatrixType | MemRefType):
            return self._array(value, type_)
        if isinstance(type_, VectorType):
            dtype = numpy_dtype(type_.element_type)
            if isinstance(value, np.ndarray):
                array = cast(np.ndarray[Any, Any], value)
            else:
                array = np.asarray(value, dtype)
            shape = tuple(type_.get_shape())
            if array.dtype not in self.accepted or array.shape[-1:] != shape:
                raise self.where.error(
                    f"{self.label}: expected a {shape} array of {dtype} for {type_}, "
                    f"got {array.dtype} {array.shape}"
                )
            return array.view(dtype)
        dtype = numpy_dtype(type_)
        if isinstance(value, np.ndarray):  # a batch of scalars
            array = cast(np.ndarray[Any, Any], value)
            if array.dtype != dtype:
                raise self.where.error(
                    f"{self.label}: expected {dtype} values for {type_}, "
                    f"got dtype {array.dtype}"
                )
            return array
        return np.asarray(self._scalar(value), dtype)

    def _array(
        self, value: object, type_: MatrixType | MemRefType
    ) -> np.ndarray[Any, Any]:
        if not isinstance(value, np.ndarray):
            raise self._wrong_array(type_, f"got {type(value).__name__}")
        array = cast(np.ndarray[Any, Any], value)
        if array.dtype not in self.accepted:
            raise self._wrong_array(type_, f"got dtype {array.dtype}")
        if not array.flags.aligned:
            raise self.where.error(
                f"{self.label}: the array's data is not aligned for {array.dtype}"
            )
        if isinstance(type_, MatrixType):
            if array.shape[-2:] != self.core:
                raise self.where.error(
                    f"{self.label}: expected shape {type_.shape} (or a batch "
                    f"(..., {type_.rows}, {type_.cols})) for {type_}, got {array.shape}"
                )
            if core_order(array) is None:
                raise self.where.error(
                    f"{self.label}: each {type_.rows}x{type_.cols} matrix must be "
                    "C- or F-contiguous (np.ascontiguousarray makes a copy that is)"
                )
            return array
        if not array.flags.c_contiguous:
            raise self.where.error(
                f"{self.label}: the array for {type_} must be C-contiguous"
            )
        if array.size < self.extent:
            raise self.where.error(
                f"{self.label}: {type_} needs {self.extent} elements, "
                f"the array has {array.size}"
                if type_.has_static_shape()
                else f"{self.label}: the function's accesses reach element "
                f"{self.extent - 1} of {type_}, the array has {array.size} elements"
            )
        if self.written and not array.flags.writeable:
            raise self.where.error(
                f"{self.label}: the function may write {type_}, and the "
                "array is read-only"
            )
        return array

    def _wrong_array(self, type_: MatrixType | MemRefType, got: str) -> ArgumentError:
        what = (
            f"a {type_.rows}x{type_.cols} array"
            if isinstance(type_, MatrixType)
            else "an array"
        )
        *others, last = (str(d) for d in _accepted_dtypes(type_.element_type))
        names = f"{', '.join(others)} or {last}" if others else last
        return self.where.error(
            f"{self.label}: expected {what} of {names} for {type_}, {got}"
        )

    def _scalar(self, value: object) -> object:
        type_ = self.type_
        dtype = numpy_dtype(type_)
        if isinstance(value, np.generic):
            if value.dtype != dtype:
                raise self.where.error(
                    f"{self.label}: expected {dtype} for {type_}, got {value.dtype}"
                )
            return value
        if isinstance(type_, IntegerType | IndexType):
            if isinstance(value, bool):
                value = int(value)
            if not isinstance(value, int):
                raise self.where.error(
                    f"{self.label}: expected an integer for {type_}, "
                    f"got {type(value).__name__}"
                )
            width = 64 if isinstance(type_, IndexType) else type_.width.data
            # A sub-byte container is passed as a byte whose high bits the
            # function ignores (the memory rule), so any byte value is valid.
            stored = max(width, 8)
            if not -(1 << (stored - 1)) <= value < (1 << stored):
                raise self.where.error(f"{self.label}: {value} does not fit in {type_}")
            number = value & ((1 << width) - 1)
            if width > 1 and number >> (width - 1):
                number -= 1 << width  # the signed container's bits
            return number
        if not isinstance(value, int | float):
            raise self.where.error(
                f"{self.label}: expected a number for {type_}, "
                f"got {type(value).__name__}"
            )
        return value

    def operand(self, lowered: Attribute, layout_bit: int = -1) -> Operand:
        """How the native entries check and load this parameter, whose type
        in the lowered function is `lowered` (`layout_bit`: see `Operand`)."""
        type_ = self.type_
        kind = self.kind
        if kind in ("matrix", "memref"):
            assert isinstance(type_, MatrixType | MemRefType)
            flags = C_CONTIGUOUS | ALIGNED | (WRITEABLE if self.written else 0)
            return Operand(
                kind,
                None,
                descrs=_descrs(type_.element_type),
                dims=self.core,
                min_size=self.extent,
                flags=flags,
                layout_bit=layout_bit,
                itemsize=numpy_dtype(type_.element_type).itemsize,
            )
        if kind == "vector":
            assert isinstance(type_, VectorType)
            return Operand(
                kind,
                lowered,
                descrs=_descrs(type_.element_type),
                dims=self.core,
                flags=C_CONTIGUOUS,
                itemsize=numpy_dtype(type_.element_type).itemsize,
            )
        dtype = numpy_dtype(type_)
        from_python: Literal["float", "int", "bool", ""] = ""
        int_range = (0, 0)
        if isinstance(type_, Float32Type | Float64Type):
            from_python = "float"
        elif isinstance(type_, IndexType) or (
            isinstance(type_, IntegerType) and type_.width.data > 1
        ):
            width = 64 if isinstance(type_, IndexType) else type_.width.data
            from_python = "int"
            stored = max(width, 8)  # sub-byte containers: any signed byte
            int_range = (-(1 << (stored - 1)), 1 << (stored - 1))
        elif isinstance(type_, IntegerType):
            from_python = "bool"
        return Operand(
            kind,
            lowered,
            scalar_types=_scalar_types(dtype),
            from_python=from_python,
            int_range=int_range,
        )


@dataclass(frozen=True)
class Result:
    """One result of the source function, as the caller receives it."""

    type_: Attribute

    @cached_property
    def kind(self) -> Kind:
        return kind_of(self.type_)

    @cached_property
    def core(self) -> tuple[int, ...]:
        """The shape of one value (a batch adds leading dimensions)."""
        return core_shape(self.type_)

    @cached_property
    def dtype(self) -> np.dtype[Any]:
        """The dtype of its array (a matrix's or vector's elements)."""
        return value_dtype(self.type_)

    def operand(self, lowered: Attribute | None, layout_bit: int = -1) -> Operand:
        """How the fast entry checks an `out=` array for this result and the
        entries store it (`lowered`: its LLVM type, None for a matrix)."""
        return Operand(
            self.kind,
            lowered,
            descrs=(id(self.dtype),),
            dims=self.core,
            flags=C_CONTIGUOUS | ALIGNED | WRITEABLE,
            layout_bit=layout_bit,
            itemsize=self.dtype.itemsize,
        )


def kind_of(type_: Attribute) -> Kind:
    if isinstance(type_, MatrixType):
        return "matrix"
    if isinstance(type_, MemRefType):
        return "memref"
    if isinstance(type_, VectorType):
        return "vector"
    return "scalar"


def core_shape(type_: Attribute) -> tuple[int, ...]:
    if isinstance(type_, MatrixType):
        return type_.shape
    if isinstance(type_, VectorType):
        return tuple(type_.get_shape())
    return ()


def value_dtype(type_: Attribute) -> np.dtype[Any]:
    """The dtype of a result's array (a matrix's or vector's elements)."""
    if isinstance(type_, MatrixType | VectorType):
        return numpy_dtype(type_.element_type)
    return numpy_dtype(type_)


def _descrs(element: Attribute) -> tuple[int, ...]:
    return tuple(id(d) for d in _accepted_dtypes(element))


@cache
def _scalar_types(dtype: np.dtype[Any]) -> tuple[int, ...]:
    """The NumPy scalar type of `dtype` if the fast entry can read its value
    at the fixed offset (checked on a sample), else nothing."""
    sample = dtype.type(1)
    stored = ctypes.string_at(id(sample) + SCALAR_VALUE, dtype.itemsize)
    return (id(dtype.type),) if stored == sample.tobytes() else ()

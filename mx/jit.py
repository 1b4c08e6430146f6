"""JIT: MLIR text or a module -> native code for the host CPU, callable with
NumPy arrays and scalars. The user's guide is `docs/python-api.md`.

Each function gets two native entries (`mx/jit_wrappers.py`): a CPython
builtin that checks the usual arguments (C-ordered arrays of the right dtype
and shape, numbers) and calls the function in one step, and a batch loop.
Calls try the first; anything else (a batch, Fortran order, `out=`, a
conversion, an error) goes through `JitFunction._call`, which checks and
explains, then runs the batch loop.

Matrix layouts without copies: the source's matrix parameters and results
are made to cross the boundary as their transposes where the caller's array
order differs from the ABI's column-major layout (`_transpose_boundary`, before
the pipeline, so that `matrix-fold-transposes` folds the transposes into the
computation); each combination of C/F orders is compiled once, when first
called.

Errors for bad input are `mx.errors.MXError`s carrying mx-opt's located
message. Compiled modules are cached per (text, pipeline), least recently used
first out beyond `cache_limit()` modules.
"""

import ctypes
import itertools
import threading
from collections import OrderedDict
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import cache, cached_property
from typing import Any, Literal, TypeVar, cast

import llvmlite.binding as binding
import ml_dtypes
import numpy as np
from xdsl.context import Context
from xdsl.dialects import affine, func, llvm, memref, vector
from xdsl.dialects.builtin import (
    BFloat16Type,
    Float16Type,
    Float32Type,
    Float64Type,
    FunctionType,
    IndexType,
    IntegerType,
    MemRefType,
    ModuleOp,
    StringAttr,
    SymbolRefAttr,
    VectorType,
)
from xdsl.ir import Attribute, BlockArgument
from xdsl.passes import ModulePass
from xdsl.rewriter import InsertPoint, Rewriter
from xdsl.universe import Universe
from xdsl.utils.arg_spec import parse_pipeline
from xdsl.utils.exceptions import ArgSpecParseError, DiagnosticException

from mx.diagnostics import Diag, OpDiagnostic, Source, op_diag
from mx.dialects.matrix import LoadOp as MatrixLoadOp
from mx.dialects.matrix import MatrixType, MemoryAccessOp, TransposeOp
from mx.errors import ArgumentError, CompileError, UnknownFunctionError
from mx.frontend import FrontendError, mx_context, parse_and_verify
from mx.jit_wrappers import (
    ALIGNED,
    C_CONTIGUOUS,
    SCALAR_VALUE,
    WRITEABLE,
    Kind,
    Operand,
    batch_entry,
    check_layouts,
    fast_entry,
)
from mx.lowering.llvm.func import llvm_function_type
from mx.lowering.llvm.memref import constant_value
from mx.lowering.matrix_to_affine.convert_matrix_to_affine import (
    ConvertMatrixToAffinePass,
)
from mx.lowering.matrix_to_affine.kernel_remarks import recording
from mx.passes.mx_lower_to_llvm import MxLowerToLLVMPass
from mx.targets.llvm_ir import (
    LLVMIRWriter,
    host_target,
    llvm_symbol,
    module_to_llvm_ir,
    type_str,
)
from mx.tools.mx_opt import UsageError, _from_spec
from mx.tools.pipeline import PipelineError, did_you_mean, spec_positions
from mx.tools.xdsl_fixes import xdsl_fixes

_T = TypeVar("_T")

DEFAULT_PIPELINE = "mx-lower-to-llvm"

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
class _Where:
    """Where a function is defined, to locate the errors of its calls."""

    source: Source
    diag: Diag

    def error(self, message: str) -> ArgumentError:
        d = self.diag
        return ArgumentError(
            self.source.render(Diag("error", d.line, d.column, message))
        )


Order = Literal["C", "F"]


def _core_order(array: np.ndarray[Any, Any]) -> Order | None:
    """The memory order of the last two dimensions (one matrix), if contiguous."""
    if array.size == 0:
        return "C"  # nothing is read or written
    rows, cols = array.shape[-2:]
    row_stride, col_stride = array.strides[-2:]
    size = array.itemsize
    if (cols == 1 or col_stride == size) and (rows == 1 or row_stride == cols * size):
        return "C"
    if (rows == 1 or row_stride == size) and (cols == 1 or col_stride == rows * size):
        return "F"
    return None


@dataclass(frozen=True)
class _Param:
    """One parameter of the source function, as the caller sees it."""

    label: str
    """`argument #i (%name) of @f`, for error messages."""
    type_: Attribute
    written: bool
    """A memref the function may write (a read-only array is refused)."""
    extent: int
    """Elements a memref's array must have: its static shape's, or as many as
    the accesses the function always makes (static offsets) reach."""
    where: _Where

    @cached_property
    def kind(self) -> Kind:
        return _kind(self.type_)

    @cached_property
    def core(self) -> tuple[int, ...]:
        """The shape of one value (a batch adds leading dimensions)."""
        return _core(self.type_)

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
            if _core_order(array) is None:
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
            )
        if kind == "vector":
            assert isinstance(type_, VectorType)
            return Operand(
                kind,
                lowered,
                descrs=_descrs(type_.element_type),
                dims=self.core,
                flags=C_CONTIGUOUS,
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


def _kind(type_: Attribute) -> Kind:
    if isinstance(type_, MatrixType):
        return "matrix"
    if isinstance(type_, MemRefType):
        return "memref"
    if isinstance(type_, VectorType):
        return "vector"
    return "scalar"


def _core(type_: Attribute) -> tuple[int, ...]:
    if isinstance(type_, MatrixType):
        return type_.shape
    if isinstance(type_, VectorType):
        return tuple(type_.get_shape())
    return ()


def _value_dtype(type_: Attribute) -> np.dtype[Any]:
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


@dataclass(frozen=True, eq=False)
class NativeCode:
    """A module's machine code: freed when the last function using it goes."""

    engine: binding.ExecutionEngine
    module: binding.ModuleRef
    method_defs: list[Any]
    """The `PyMethodDef`s of the fast entries (they must outlive them)."""


@dataclass(frozen=True)
class _Entry:
    """One compiled entry of a function, for one choice of matrix layouts."""

    fast: Callable[..., int] | None
    """The fast entry (default layouts only), a builtin function."""
    batch: Callable[..., int]
    """The batch loop, a builtin function (see `mx.jit_wrappers`)."""
    kernel: int
    """The address of the compiled function itself."""
    layouts: "ctypes.Array[ctypes.c_void_p] | None"
    """The fast entry's table of functions by order of the matrix arguments."""
    code: NativeCode


_ALL_CODE: list[NativeCode] = []

_MAX_LAYOUT_BITS = 8
"""Functions with at most this many matrix parameters get fast calls in every
combination of C and F orders (a table of 2^n functions)."""


class _MethodDef(ctypes.Structure):
    _fields_ = [
        ("ml_name", ctypes.c_char_p),
        ("ml_meth", ctypes.c_void_p),
        ("ml_flags", ctypes.c_int),
        ("ml_doc", ctypes.c_char_p),
    ]


_METH_FASTCALL = 0x80


def _builtin(name: str, address: int, defs: list[Any]) -> Callable[..., int]:
    """A Python builtin function calling the METH_FASTCALL entry at `address`."""
    new = ctypes.pythonapi.PyCFunction_NewEx
    new.restype = ctypes.py_object
    new.argtypes = [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p]
    definition = _MethodDef(name.encode(), address, _METH_FASTCALL, None)
    defs.append(definition)
    return new(ctypes.addressof(definition), None, None)


Layouts = tuple[Order, ...]
"""The memory order of each matrix parameter, then of each matrix result."""


class JitFunction:
    """A compiled function. Call it with one argument per parameter of the
    source function; it returns None, the one result, or a tuple of the
    results in the function's order.

    - A `!matrix.matrix<RxCxT>` parameter takes an (R, C) array of T's dtype,
      C- or F-ordered: it is read in place, never copied nor written. A matrix
      result comes back as a new C-ordered (R, C) array.
    - Batches (NumPy gufunc semantics): a matrix parameter also takes an
      (..., R, C) array, a scalar parameter an array of values, a vector
      parameter an (..., N) array; the leading dimensions broadcast as in
      `np.matmul`, the function runs once per element of the broadcast batch
      shape (in native code) and each result gets the batch's leading
      dimensions. Memref arguments are passed unchanged to every call.
    - `out=`: an array (one result) or a tuple of arrays (one per result)
      receiving the results in place, of the exact result dtype and
      (batch..., R, C) shape; matrices may be C- or F-ordered. Returned.
    - A memref parameter takes a C-contiguous array of its element dtype
      with at least as many elements as a static shape has; a memref the
      function may write must be a writable array.
    - A vector parameter takes an (N,) array; a scalar parameter a Python or
      NumPy number (NumPy scalars must have the parameter's exact dtype).
    - i8/i6/i4 containers also accept uint8 and ml_dtypes' float arrays of
      their width (FP8/FP6/FP4 data), one element per byte.
    - A dynamically sized memref's array must reach every element the
      function accesses at a static position in its entry block.

    Bad arguments raise `mx.errors.ArgumentError` (an `MXError`, also a
    `TypeError` and a `ValueError`) located at the function's definition.
    Calls from several threads at once are safe.
    """

    def __init__(
        self,
        name: str,
        params: Sequence[_Param],
        results: Sequence[Attribute],
        entry: _Entry,
        compile_variant: Callable[[Layouts], _Entry],
        remarks: Sequence[str] = (),
    ):
        self.name = name
        self.remarks = tuple(remarks)
        """The kernel each contraction of the function got (C-ordered
        matrices), as `mx-lower-to-llvm{remarks}` reports it: located
        `remark: '<op>' op kernel: ...` lines."""
        self.params = tuple(params)
        self.results = tuple(results)
        self.native_code = entry.code
        """The compiled module's code, alive while this function is."""
        self._matrix_params = [
            i for i, p in enumerate(params) if isinstance(p.type_, MatrixType)
        ]
        self._result_cores = [_core(t) for t in self.results]
        self._result_dtypes = [_value_dtype(t) for t in self.results]
        self._variants: dict[Layouts, _Entry] = {self._default_layouts(): entry}
        self._layouts_table = entry.layouts
        self._compile_variant = compile_variant
        self._lock = threading.Lock()

    def _default_layouts(self) -> Layouts:
        count = len(self._matrix_params) + sum(
            isinstance(t, MatrixType) for t in self.results
        )
        return ("C",) * count

    def __call__(self, *args: object, out: object = None) -> Any:
        return self._call(args, out)

    def _variant(self, layouts: Layouts) -> _Entry:
        entry = self._variants.get(layouts)
        if entry is not None:
            return entry
        with self._lock:
            entry = self._variants.get(layouts)
            if entry is None:
                entry = self._compile_variant(layouts)
                self._variants[layouts] = entry
                self._enable_fast_calls(layouts, entry)
            return entry

    def _enable_fast_calls(self, layouts: Layouts, entry: _Entry) -> None:
        """Let the fast entry call `entry` for these orders of the matrix
        arguments (it allocates C-ordered results only)."""
        table = self._layouts_table
        count = len(self._matrix_params)
        if table is None or any(o != "C" for o in layouts[count:]):
            return
        table[sum(1 << b for b, o in enumerate(layouts[:count]) if o == "F")] = (
            entry.kernel
        )

    def _call(self, args: Sequence[object], out: object) -> Any:
        """The general path: checks everything, handles batches, Fortran
        order and out=."""
        where = self.params[0].where if self.params else None
        if len(args) != len(self.params):
            message = (
                f"@{self.name} takes {len(self.params)} arguments, got {len(args)}"
            )
            raise where.error(message) if where else ArgumentError(message)
        arrays = [p.normalize(a) for p, a in zip(self.params, args, strict=True)]
        batched = [
            (p, a)
            for p, a in zip(self.params, arrays, strict=True)
            if p.kind != "memref"
        ]
        batch = _broadcast([a.shape[: a.ndim - len(p.core)] for p, a in batched])
        if batch is None:
            shapes = ", ".join(str(a.shape) for _, a in batched)
            message = f"@{self.name}: the batch shapes of the arguments {shapes} do not broadcast"
            raise where.error(message) if where else ArgumentError(message)
        outs = self._outputs(out, batch, arrays, where)
        layouts: Layouts = tuple(
            cast(Order, _core_order(a))
            for a in [arrays[i] for i in self._matrix_params]
            + [
                o
                for o, t in zip(outs, self.results, strict=True)
                if isinstance(t, MatrixType)
            ]
        )
        entry = self._variant(layouts)
        strides = [
            (0,) * len(batch)
            if p.kind == "memref"
            else _batch_strides(a, a.ndim - len(p.core), len(batch))
            for p, a in zip(self.params, arrays, strict=True)
        ] + [o.strides[: len(batch)] for o in outs]
        _run_batch(entry.batch, [*arrays, *outs], batch, strides)
        if out is not None:
            return out
        values = [o if o.ndim else o[()] for o in outs]
        if not values:
            return None
        return values[0] if len(values) == 1 else tuple(values)

    def _outputs(
        self,
        out: object,
        batch: tuple[int, ...],
        arrays: Sequence[np.ndarray[Any, Any]],
        where: _Where | None,
    ) -> list[np.ndarray[Any, Any]]:
        shapes = [batch + core for core in self._result_cores]
        dtypes = self._result_dtypes
        if out is None:
            return [np.empty(s, d) for s, d in zip(shapes, dtypes, strict=True)]

        def error(message: str) -> ArgumentError:
            text = f"@{self.name}: out= {message}"
            return where.error(text) if where else ArgumentError(text)

        given = out if isinstance(out, tuple) else (out,)
        if len(given) != len(self.results):
            raise error(f"needs {len(self.results)} arrays, got {len(given)}")
        outs: list[np.ndarray[Any, Any]] = []
        for j, (o, shape, dtype, t) in enumerate(
            zip(given, shapes, dtypes, self.results, strict=True)
        ):
            if not isinstance(o, np.ndarray):
                raise error(f"result #{j}: expected an array, got {type(o).__name__}")
            array = cast(np.ndarray[Any, Any], o)
            if array.dtype != dtype or array.shape != shape:
                raise error(
                    f"result #{j}: expected a {shape} array of {dtype}, "
                    f"got {array.shape} {array.dtype}"
                )
            if not array.flags.writeable:
                raise error(f"result #{j}: the array is read-only")
            contiguous = (
                _core_order(array) is not None
                if isinstance(t, MatrixType)
                else array.ndim == len(batch) or array.strides[-1] == array.itemsize
            )
            if not contiguous or not array.flags.aligned:
                raise error(f"result #{j}: each value must be contiguous and aligned")
            if any(np.may_share_memory(array, a) for a in (*arrays, *outs)):
                raise error(f"result #{j}: the array overlaps an argument or result")
            outs.append(array)
        return outs


def _broadcast(shapes: Sequence[tuple[int, ...]]) -> tuple[int, ...] | None:
    """The broadcast of batch shapes as in `np.broadcast_shapes` (None if they
    do not broadcast), without its cost of microseconds per call."""
    ndim = max((len(s) for s in shapes), default=0)
    out = [1] * ndim
    for shape in shapes:
        for i, n in enumerate(shape, ndim - len(shape)):
            if n == 1 or n == out[i]:
                continue
            if out[i] != 1:
                return None
            out[i] = n
    return tuple(out)


def _batch_strides(
    array: np.ndarray[Any, Any], batch_ndim: int, ndim: int
) -> tuple[int, ...]:
    """The byte strides of `array`'s `batch_ndim` leading dimensions once
    broadcast to `ndim` batch dimensions: 0 where it repeats."""
    own = tuple(
        0 if n == 1 else stride
        for n, stride in zip(
            array.shape[:batch_ndim], array.strides[:batch_ndim], strict=True
        )
    )
    return (0,) * (ndim - batch_ndim) + own


def _run_batch(
    batch_entry: Callable[..., int],
    operands: list[np.ndarray[Any, Any]],
    shape: tuple[int, ...],
    strides: list[tuple[int, ...]],
) -> None:
    """Call `batch_entry` for every index of `shape`: one native loop over
    the merged batch dimensions (dimensions merge where every operand's
    strides allow), a Python loop over the rest."""
    dims = list(shape)
    steps = [list(s) for s in strides]
    d = len(dims) - 1
    while d > 0:
        if all(s[d - 1] == s[d] * dims[d] for s in steps):
            dims[d - 1] *= dims[d]
            del dims[d]
            for s in steps:
                s[d - 1] = s[d]
                del s[d]
        d -= 1
    if any(n == 0 for n in dims):
        return
    inner = [dims[-1] if dims else 1, *(s[-1] if s else 0 for s in steps)]
    if len(dims) <= 1:  # the common case, without the outer loop's cost
        batch_entry(*operands, np.array(inner + [0] * len(steps), np.int64))
        return
    for index in itertools.product(*map(range, dims[:-1])):
        offsets = [
            sum(i * stride for i, stride in zip(index, s, strict=False)) for s in steps
        ]
        batch_entry(*operands, np.array([*inner, *offsets], np.int64))


def _fast_call(function: JitFunction, fast: Callable[..., int]) -> Callable[..., Any]:
    """A `__call__` for `function` that tries the fast entry first: with no
    `out=`, results preallocated in C order, one native call checking every
    argument; anything else (or a failed check) takes the general path."""
    shapes = [
        _core(t) if not isinstance(t, MatrixType | VectorType) or _core(t) else (1,)
        for t in function.results
    ]
    shapes = [s if s else (1,) for s in shapes]
    dtypes = [_value_dtype(t) for t in function.results]
    names = [f"r{j}" for j in range(len(function.results))]
    allocations = "".join(
        f"        {n} = empty({s!r}, d{j})\n"
        for j, (n, s) in enumerate(zip(names, shapes, strict=True))
    )
    values = [
        n if isinstance(t, MatrixType | VectorType) else f"{n}[0]"
        for n, t in zip(names, function.results, strict=True)
    ]
    returned = (
        "None"
        if not values
        else values[0]
        if len(values) == 1
        else "(" + ", ".join(values) + ",)"
    )
    source = (
        "def __call__(self, *args, out=None):\n"
        "    if out is None:\n"
        f"{allocations}"
        f"        if not fast(*args{''.join(', ' + n for n in names)}):\n"
        f"            return {returned}\n"
        "    return self._call(args, out)\n"
    )
    scope: dict[str, Any] = {
        "empty": np.empty,
        "fast": fast,
        **{f"d{j}": d for j, d in enumerate(dtypes)},
    }
    exec(source, scope)  # a call specialized to this signature: no loops
    return scope["__call__"]


class CompiledModule:
    """The functions of a JIT-compiled module, by name (`m.f` or `m["f"]`)."""

    def __init__(self, llvm_ir: str, functions: dict[str, JitFunction]):
        self.llvm_ir = llvm_ir
        self.functions = functions

    def __getitem__(self, name: str) -> JitFunction:
        function = self.functions.get(name)
        if function is None:
            raise self._unknown(name)
        return function

    def __getattr__(self, name: str) -> JitFunction:
        if name.startswith("__"):
            raise AttributeError(name)
        return self[name]

    def _unknown(self, name: str) -> UnknownFunctionError:
        names = sorted(self.functions)
        listed = ", ".join(f"@{n}" for n in names) if names else "none"
        hint = did_you_mean(name, names)
        return UnknownFunctionError(
            f"error: no function @{name} in the module{hint} (its functions: {listed})"
        )


def _transpose_boundary(
    op: func.FuncOp, transposed_args: Sequence[bool], transposed_results: Sequence[bool]
) -> None:
    """Make the flagged matrix parameters and results of `op` cross the
    boundary as their transposes: a parameter R×C becomes C×R whose transpose
    the body uses, a result R×C is returned transposed. (A column-major C×R
    buffer is the row-major R×C one.) `matrix-fold-transposes` then removes
    what it can."""
    block = op.body.first_block
    assert block is not None
    inputs = list(op.function_type.inputs.data)
    outputs = list(op.function_type.outputs.data)
    for i, flag in enumerate(transposed_args):
        t = inputs[i]
        if not flag or not isinstance(t, MatrixType):
            continue
        old = block.args[i]
        new = block.insert_arg(t.transposed(), i)
        transpose = TransposeOp(new)
        Rewriter.insert_op(transpose, InsertPoint.at_start(block))
        old.replace_all_uses_with(transpose.result)
        block.erase_arg(old)
        inputs[i] = t.transposed()
    returns = [
        r for r in op.walk() if isinstance(r, func.ReturnOp) and r.parent_op() is op
    ]
    for ret in returns:
        values = list(ret.arguments)
        for j, flag in enumerate(transposed_results):
            if flag:
                transpose = TransposeOp(values[j])
                Rewriter.insert_op(transpose, InsertPoint.before(ret))
                values[j] = transpose.result
        ret.operands = values
    for j, flag in enumerate(transposed_results):
        t = outputs[j]
        if flag and isinstance(t, MatrixType):
            outputs[j] = t.transposed()
    op.function_type = FunctionType.from_lists(inputs, outputs)


def _abi_row_major(passes: Sequence[ModulePass]) -> bool:
    return any(
        isinstance(p, ConvertMatrixToAffinePass) and p.layout == "row-major"
        for p in passes
    )


@cache
def _host() -> tuple[str, str, str]:
    triple, _ = host_target()
    return (
        triple,
        binding.get_host_cpu_name(),
        binding.get_host_cpu_features().flatten(),
    )


def _target_machine() -> binding.TargetMachine:
    """A new target machine for the host CPU (an execution engine owns and
    frees the one it is created with). With a generic CPU, half conversions
    would become libcalls that MCJIT cannot resolve."""
    triple, cpu, features = _host()
    return binding.Target.from_triple(triple).create_target_machine(
        cpu=cpu, features=features, opt=3, codemodel="jitdefault"
    )


def _passes(pipeline: str) -> list[ModulePass]:
    """The passes of a `-p`-style pipeline; unknown passes and options are
    CompileErrors located in the pipeline text, naming the close matches."""
    available = Universe.get_multiverse().all_passes
    try:
        specs = list(parse_pipeline(pipeline))
    except ArgSpecParseError as err:
        raise CompileError([f"<pipeline>: error: {err}"]) from None
    passes: list[ModulePass] = []
    for spec, at in zip(specs, spec_positions(pipeline, specs), strict=True):
        factory = available.get(spec.name)
        if factory is None:
            hint = did_you_mean(spec.name, list(available))
            error = PipelineError(
                f"unknown pass '{spec.name}'{hint or ' (see mx-opt --list-passes)'}",
                at + 1,
            )
            raise CompileError([error.render(pipeline)])
        try:
            passes.append(_from_spec("pass", factory(), spec, pipeline, at))
        except UsageError as err:
            raise CompileError([err.rendered or f"<pipeline>: error: {err}"]) from None
    return passes


def _located_parse(text: str, name: str) -> tuple[ModuleOp, Source]:
    """The verified module of `text`; bad input is a CompileError with
    mx-opt's located diagnostics."""
    source = Source.of_text(name, text)
    try:
        # Passes assume verified input; invalid IR must not become invalid LLVM IR.
        return parse_and_verify(text, name), source
    except FrontendError as err:
        raise CompileError([source.render(d) for d in err.diags]) from None


def lower_to_llvm_ir(
    source: str | ModuleOp, pipeline: str = DEFAULT_PIPELINE
) -> tuple[str, ModuleOp, dict[str, FunctionType]]:
    """Runs `pipeline` on `source` (MLIR text or a module); returns the LLVM
    IR, the lowered module and the type of each `func.func` before lowering.
    Raises `mx.errors.CompileError` with mx-opt's located diagnostics."""
    text = source if isinstance(source, str) else str(source)
    module, src = _located_parse(text, "<string>")
    signatures = {
        op.sym_name.data: op.function_type
        for op in module.walk()
        if isinstance(op, func.FuncOp)
    }
    ir, _ = _lower_and_translate(module, src, pipeline)
    return ir, module, signatures


def _lower_and_translate(
    module: ModuleOp, source: Source, pipeline: str
) -> tuple[str, dict[str, llvm.LLVMFunctionType]]:
    """Runs `pipeline` on `module`; returns the LLVM IR and the LLVM type of
    each function defined. `mx-lower-to-llvm` stops before `convert-to-llvm`
    where `mx.targets.direct_llvm_ir` translates what is left (the same
    instructions, written directly); `module` is then left at that stage."""
    passes = _passes(pipeline)
    lowering = passes[0] if len(passes) == 1 else None
    if isinstance(lowering, MxLowerToLLVMPass) and not lowering.remarks:
        translation = _apply(
            lowering, lowering.apply_for_llvm_ir, mx_context(), module, source
        )
        if translation is not None:
            writer = LLVMIRWriter()
            writer.add_functions(translation.functions, translation.declarations)
            types = {
                op.sym_name.data: llvm_function_type(op.function_type, op)
                for op in module.ops
                if isinstance(op, func.FuncOp)
            }
            return writer.text(), types
    else:
        _run_passes(module, source, passes)
    types = {
        op.sym_name.data: op.function_type
        for op in module.ops
        if isinstance(op, llvm.FuncOp)
    }
    return _translate(module, source), types


def _run_passes(module: ModuleOp, source: Source, passes: list[ModulePass]) -> None:
    ctx = mx_context()
    for p in passes:
        _apply(p, p.apply, ctx, module, source)


def _apply(
    p: ModulePass,
    apply: Callable[[Context, ModuleOp], _T],
    ctx: Context,
    module: ModuleOp,
    source: Source,
) -> _T:
    """`apply(ctx, module)` (pass `p`, or a form of it); its diagnostics are
    a CompileError."""
    try:
        with xdsl_fixes():
            return apply(ctx, module)
    except OpDiagnostic as err:
        raise CompileError([source.render(op_diag(err.op, err.message))]) from None
    except DiagnosticException as err:
        raise CompileError([f"{source.name}: error: pass '{p.name}': {err}"]) from None


def _translate(module: ModuleOp, source: Source) -> str:
    """The LLVM IR of a lowered module; what cannot be translated (e.g. a
    pipeline that stops before `convert-to-llvm`) is a CompileError."""
    try:
        return module_to_llvm_ir(module)
    except DiagnosticException as err:
        raise CompileError([f"{source.name}: error: {err}"]) from None


_READS: tuple[type, ...] = (
    memref.LoadOp,
    affine.LoadOp,
    vector.LoadOp,
    MatrixLoadOp,
    memref.DimOp,
)
"""Ops that only read the memref they are given."""


def _may_write(arg: BlockArgument) -> bool:
    return any(not isinstance(use.operation, _READS) for use in arg.uses)


def _extent(arg: BlockArgument) -> int:
    """Elements the array for memref `arg` must have: a static shape's
    count, or, for a dynamic one, the end of the furthest access at a static
    position in the entry block (always executed: an array too short for it
    is refused instead of read or written out of bounds). Accesses at
    dynamic positions are the caller's responsibility."""
    type_ = arg.type
    assert isinstance(type_, MemRefType)
    if type_.has_static_shape():
        return type_.element_count()
    extent = 0
    if type_.get_num_dims() != 1:
        return extent
    for use in arg.uses:
        op = use.operation
        if op.parent_block() is not arg.block:
            continue
        end: int | None = None
        if isinstance(op, MemoryAccessOp) and op.memory() is arg:
            end = op.static_extent()
        elif isinstance(op, memref.LoadOp | memref.StoreOp) and op.memref is arg:
            index = constant_value(op.indices[0])
            end = None if index is None else index + 1
        if end is not None:
            extent = max(extent, end)
    return extent


def _params(op: func.FuncOp, source: Source) -> list[_Param]:
    name = op.sym_name.data
    where = _Where(source, op_diag(op, ""))
    block = op.body.first_block
    assert block is not None
    return [
        _Param(
            f"argument #{i}{_arg_name(block.args[i])} of @{name}",
            t,
            isinstance(t, MemRefType) and _may_write(block.args[i]),
            _extent(block.args[i]) if isinstance(t, MemRefType) else 0,
            where,
        )
        for i, t in enumerate(op.function_type.inputs.data)
    ]


@dataclass
class _Compiled:
    llvm_ir: str
    entries: dict[str, _Entry]
    params: dict[str, list[_Param]]
    results: dict[str, list[Attribute]]
    remarks: dict[str, tuple[str, ...]]


def _compile(
    text: str, pipeline: str, requests: dict[str, Layouts] | None = None
) -> _Compiled:
    """Compiles `text`, with an entry per requested function and matrix
    layouts (default: every function, all matrices C-ordered, with fast
    entries)."""
    module, source = _located_parse(text, "<string>")
    passes = _passes(pipeline)
    row_major_abi = _abi_row_major(passes)
    definitions = {
        op.sym_name.data: op
        for op in module.ops
        if isinstance(op, func.FuncOp) and op.body.blocks
    }
    params = {name: _params(op, source) for name, op in definitions.items()}
    results = {
        name: list(op.function_type.outputs.data) for name, op in definitions.items()
    }
    with_fast = requests is None and check_layouts()
    if requests is None:
        requests = {
            name: cast(
                Layouts,
                ("C",)
                * sum(
                    isinstance(t, MatrixType)
                    for t in (*op.function_type.inputs, *results[name])
                ),
            )
            for name, op in definitions.items()
        }
    _rename_definitions(module, definitions)
    called = {
        op.callee.string_value() for op in module.walk() if isinstance(op, func.CallOp)
    }
    entry_names: dict[str, str] = {}
    tables: dict[str, ctypes.Array[ctypes.c_void_p]] = {}
    for name, layouts in requests.items():
        op = definitions[name]
        orders = iter(layouts)
        flags = [
            isinstance(t, MatrixType) and (next(orders) == "C") != row_major_abi
            for t in (*op.function_type.inputs, *op.function_type.outputs)
        ]
        entry_names[name] = op.sym_name.data
        if not any(flags):
            continue
        if op.sym_name.data in called:  # others call it as it is: an entry copy
            op = op.clone()
            op.sym_name = StringAttr(f"_mx_entry_{name}")
            op.sym_visibility = None
            module.body.block.add_op(op)
            entry_names[name] = op.sym_name.data
        inputs = len(op.function_type.inputs)
        _transpose_boundary(op, flags[:inputs], flags[inputs:])
    with recording() as kernels:
        ir, lowered = _lower_and_translate(module, source, pipeline)
    remarks = {
        name: tuple(str(k) for k in kernels if k.function == entry_name)
        for name, entry_name in entry_names.items()
    }
    wrappers: list[str] = []
    for name, entry_name in entry_names.items():
        function_type = lowered[entry_name]
        signature = (
            type_str(function_type.output),
            [type_str(t) for t in function_type.inputs],
        )
        lowered_results = (
            list(function_type.output.types)
            if isinstance(function_type.output, llvm.LLVMStructType)
            else [function_type.output]
        )
        matrices = [i for i, p in enumerate(params[name]) if p.kind == "matrix"]
        if with_fast and 0 < len(matrices) <= _MAX_LAYOUT_BITS:
            tables[name] = (ctypes.c_void_p * (1 << len(matrices)))()
        bits = {i: b for b, i in enumerate(matrices)} if name in tables else {}
        operands = [
            p.operand(t, bits.get(i, -1))
            for i, (p, t) in enumerate(
                zip(params[name], function_type.inputs, strict=False)
            )
        ]
        scalars = iter(lowered_results)
        outs = [
            Operand(_kind(t), None if isinstance(t, MatrixType) else next(scalars))
            for t in results[name]
        ]
        callee = llvm_symbol(entry_name)
        wrappers.append(
            batch_entry(
                llvm_symbol(f"_mx_batch_{name}"), callee, signature, operands, outs
            )
        )
        if with_fast:
            table = tables.get(name)
            wrappers.append(
                fast_entry(
                    llvm_symbol(f"_mx_fast_{name}"),
                    callee,
                    signature,
                    operands,
                    outs,
                    ctypes.addressof(table) if table is not None else 0,
                )
            )
    full_ir = ir + "\n" + "\n\n".join(wrappers) + "\n"
    llvm_module = binding.parse_assembly(full_ir)
    llvm_module.verify()
    machine = _target_machine()
    tuning = binding.create_pipeline_tuning_options(speed_level=3)
    builder = binding.create_pass_builder(machine, tuning)
    builder.getModulePassManager().run(llvm_module, builder)
    engine = binding.create_mcjit_compiler(llvm_module, machine)
    engine.finalize_object()
    code = NativeCode(engine, llvm_module, [])
    # Disposing an MCJIT engine crashed intermittently under pytest-xdist;
    # until that is understood, machine code is kept for the process.
    _ALL_CODE.append(code)
    entries: dict[str, _Entry] = {}
    for name in entry_names:
        batch = _builtin(
            name, engine.get_function_address(f"_mx_batch_{name}"), code.method_defs
        )
        fast = (
            _builtin(
                name, engine.get_function_address(f"_mx_fast_{name}"), code.method_defs
            )
            if with_fast
            else None
        )
        kernel = engine.get_function_address(entry_names[name])
        entries[name] = _Entry(fast, batch, kernel, tables.get(name), code)
    return _Compiled(full_ir, entries, params, results, remarks)


DEFINITION_PREFIX = "_mx_fn_"
"""The JIT's symbol for a function `@f` defined in the module: `_mx_fn_f`."""


def _rename_definitions(module: ModuleOp, definitions: dict[str, func.FuncOp]) -> None:
    """Gives the functions the module defines symbols of their own (`@exp` ->
    `@_mx_fn_exp`), calls included. LLVM lowers math intrinsics to calls of
    the C library (`llvm.exp` -> `exp`): a kernel named `exp` that used
    `math.exp` called itself instead (a segfault). Declarations keep their
    names: they are the C functions the module calls."""
    renamed = {name: DEFINITION_PREFIX + name for name in definitions}
    for op in module.walk():
        if isinstance(op, func.CallOp) and op.callee.string_value() in renamed:
            op.callee = SymbolRefAttr(renamed[op.callee.string_value()])
    for name, op in definitions.items():
        op.sym_name = StringAttr(renamed[name])


def _module(text: str, pipeline: str) -> CompiledModule:
    compiled = _compile(text, pipeline)
    functions: dict[str, JitFunction] = {}
    for name, entry in compiled.entries.items():

        def variant(layouts: Layouts, name: str = name) -> _Entry:
            return _compile(text, pipeline, {name: layouts}).entries[name]

        function = JitFunction(
            name,
            compiled.params[name],
            compiled.results[name],
            entry,
            variant,
            compiled.remarks[name],
        )
        if entry.fast is not None:
            function.__class__ = type(
                "JitFunction",
                (JitFunction,),
                {
                    "__call__": _fast_call(function, entry.fast),
                    "__doc__": JitFunction.__doc__,
                },
            )
        functions[name] = function
    return CompiledModule(compiled.llvm_ir, functions)


def _arg_name(arg: BlockArgument) -> str:
    return f" (%{arg.name_hint})" if arg.name_hint else ""


_CACHE_LOCK = threading.Lock()
_cache: OrderedDict[tuple[str, str], CompiledModule] = OrderedDict()
_cache_limit = 64


def cache_limit(limit: int | None = None) -> int:
    """The number of compiled modules kept alive by the cache (least recently
    used dropped first; a module stays usable while something refers to it
    or its functions). With `limit`, sets it (0 disables caching) and returns
    the previous one."""
    global _cache_limit
    previous = _cache_limit
    if limit is not None:
        if limit < 0:
            raise ArgumentError(f"error: the cache limit must be >= 0, got {limit}")
        with _CACHE_LOCK:
            _cache_limit = limit
            while len(_cache) > limit:
                _cache.popitem(last=False)
    return previous


def compile_module(
    source: str | ModuleOp, pipeline: str = DEFAULT_PIPELINE
) -> CompiledModule:
    """Compiles MLIR text or a module with `pipeline` (an mx-opt `-p` spec),
    then with LLVM at -O3 for the host CPU, and returns its functions.

    Cached per (source text, pipeline) for the process, least recently used
    first out beyond `cache_limit()` modules. Raises `mx.errors.CompileError`
    (an `MXError`) with mx-opt's located diagnostics when the source does not
    parse or verify, when a pass rejects it, or when the pipeline names an
    unknown pass or option.
    """
    text = source if isinstance(source, str) else str(source)
    key = (text, pipeline)
    with _CACHE_LOCK:
        if (hit := _cache.get(key)) is not None:
            _cache.move_to_end(key)
            return hit
    compiled = _module(text, pipeline)
    with _CACHE_LOCK:
        if _cache_limit > 0:
            compiled = _cache.setdefault(key, compiled)
            _cache.move_to_end(key)
            while len(_cache) > _cache_limit:
                _cache.popitem(last=False)
    return compiled


def jit(
    source: str | ModuleOp, name: str, pipeline: str = DEFAULT_PIPELINE
) -> Callable[..., Any]:
    """The compiled function `name` of `source` (see `compile_module` for the
    compilation and its errors, `JitFunction` for how to call it). An unknown
    `name` raises `mx.errors.UnknownFunctionError` listing the module's
    functions."""
    return compile_module(source, pipeline)[name]

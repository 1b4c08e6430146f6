"""The JIT's compiler: MLIR text -> a `CompiledModule` of `JitFunction`s
(`compile_text`), imported by `mx.jit_modules` on the first compile.

It parses and verifies the text, makes matrix parameters and results cross
the boundary as their transposes where the caller's array order differs from
the ABI's column-major layout (`_transpose_boundary`, before the pipeline, so
that `matrix-fold-transposes` folds the transposes into the computation),
runs the pipeline, adds the native entries of `mx/jit_wrappers.py` (a fast
entry and a batch loop per function) and compiles the module with LLVM at -O3
for the host CPU (`mx.jit_machine_code`).
"""

import ctypes
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import cache, cached_property, lru_cache, partial
from typing import Any, Literal, TypeVar, cast

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
from xdsl.utils.exceptions import DiagnosticException

from mx.compile_memos import forgetting_compile_memos
from mx.compiler import lower_for_llvm_ir
from mx.diagnostics import Diag, OpDiagnostic, Source, op_diag
from mx.dialects.matrix import LoadOp as MatrixLoadOp
from mx.dialects.matrix import MatrixType, MemoryAccessOp, TransposeOp
from mx.errors import ArgumentError, CompileError
from mx.frontend import FrontendError, mx_context, parse_and_verify
from mx.jit_machine_code import NativeCode, builtin_function, machine_code
from mx.jit_object_layout import (
    ALIGNED,
    C_CONTIGUOUS,
    SCALAR_VALUE,
    WRITEABLE,
    check_layouts,
    numpy_api,
)
from mx.jit_runtime import (
    DEFAULT_PIPELINE,
    CompiledModule,
    Layouts,
    core_order,
    make_function,
)
from mx.jit_wrappers import Kind, Operand, batch_entry, fast_entry
from mx.lowering.llvm.func import llvm_function_type
from mx.lowering.llvm.memref import constant_value
from mx.lowering.matrix_to_affine.caches import for_target, host_caches
from mx.lowering.matrix_to_affine.convert_matrix_to_affine import (
    ConvertMatrixToAffinePass,
)
from mx.lowering.matrix_to_affine.kernel_remarks import recording
from mx.passes.mx_lower_to_llvm import MxLowerToLLVMPass
from mx.runtime.parallel_for import missing_declarations
from mx.runtime.threads import load_runtime, parallel_min_count
from mx.targets.llvm_ir import (
    LLVMIRWriter,
    llvm_symbol,
    module_to_llvm_ir,
    type_str,
)
from mx.tools.pipeline import PipelineError, build_passes

_T = TypeVar("_T")

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
        return _kind(self.type_)

    @cached_property
    def core(self) -> tuple[int, ...]:
        """The shape of one value (a batch adds leading dimensions)."""
        return _core(self.type_)

    @cached_property
    def dtype(self) -> np.dtype[Any]:
        """The dtype of its array (a matrix's or vector's elements)."""
        return _value_dtype(self.type_)

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


def _source_symbol(symbol: str) -> str:
    """The source function an LLVM symbol of the JIT's module comes from."""
    symbol = symbol.strip('"')
    for prefix in (DEFINITION_PREFIX, "_mx_entry_", "_mx_batch_", "_mx_fast_"):
        if symbol.startswith(prefix):
            return symbol.removeprefix(prefix)
    return symbol


@dataclass(frozen=True)
class Entry:
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


_MAX_LAYOUT_BITS = 8
"""Functions with at most this many matrix parameters and results get fast
calls in every combination of C and F orders (a table of 2^n functions)."""


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


@lru_cache(maxsize=64)
def _passes(pipeline: str) -> tuple[ModulePass, ...]:
    """The passes of a `-p`-style pipeline; any error in it (syntax, unknown
    passes and options) is a CompileError located in the pipeline text.
    (Cached: finding the registered passes reads every installed package's
    entry points.)"""
    try:
        built = build_passes(pipeline, Universe.get_multiverse().all_passes)
    except PipelineError as err:
        raise CompileError([err.render(pipeline)]) from None
    return tuple(made for _, made in built)


def _located_parse(text: str, name: str, ctx: Context) -> tuple[ModuleOp, Source]:
    """The verified module of `text`; bad input is a CompileError with
    mx-opt's located diagnostics."""
    source = Source.of_text(name, text)
    try:
        # Passes assume verified input; invalid IR must not become invalid LLVM IR.
        return parse_and_verify(text, name, ctx), source
    except FrontendError as err:
        raise CompileError([source.render(d) for d in err.diags]) from None


@forgetting_compile_memos()
def lower_to_llvm_ir(
    source: str | ModuleOp, pipeline: str = DEFAULT_PIPELINE
) -> tuple[str, ModuleOp, dict[str, FunctionType]]:
    """Runs `pipeline` on `source` (MLIR text or a module); returns the LLVM
    IR, the lowered module and the type of each `func.func` before lowering.
    Raises `mx.errors.CompileError` with mx-opt's located diagnostics."""
    text = source if isinstance(source, str) else str(source)
    ctx = mx_context()
    module, src = _located_parse(text, "<string>", ctx)
    signatures = {
        op.sym_name.data: op.function_type
        for op in module.walk()
        if isinstance(op, func.FuncOp)
    }
    ir, _ = _lower_and_translate(module, src, pipeline, ctx)
    return ir, module, signatures


def _lower_and_translate(
    module: ModuleOp, source: Source, pipeline: str, ctx: Context
) -> tuple[str, dict[str, llvm.LLVMFunctionType]]:
    """Runs `pipeline` on `module`; returns the LLVM IR and the LLVM type of
    each function defined. `mx-lower-to-llvm` takes its route to LLVM IR
    (`mx.compiler`); on the direct one `module` is left before
    `convert-to-llvm`. Cache-blocked products are blocked for the host's
    caches."""
    with for_target(host_caches()):
        return _lower_for_host(module, source, pipeline, ctx)


def _lower_for_host(
    module: ModuleOp, source: Source, pipeline: str, ctx: Context
) -> tuple[str, dict[str, llvm.LLVMFunctionType]]:
    passes = _passes(pipeline)
    lowering = passes[0] if len(passes) == 1 else None
    if isinstance(lowering, MxLowerToLLVMPass):
        translation = _apply(
            lowering, partial(lower_for_llvm_ir, lowering), ctx, module, source
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
        for p in passes:
            _apply(p, p.apply, ctx, module, source)
    types = {
        op.sym_name.data: op.function_type
        for op in module.ops
        if isinstance(op, llvm.FuncOp)
    }
    return _translate(module, source), types


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


def _params(op: func.FuncOp, source: Source) -> list[Param]:
    name = op.sym_name.data
    where = Where(source, op_diag(op, ""))
    block = op.body.first_block
    assert block is not None
    return [
        Param(
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
    entries: dict[str, Entry]
    params: dict[str, list[Param]]
    results: dict[str, list[Attribute]]
    remarks: dict[str, tuple[str, ...]]


@forgetting_compile_memos()  # the module is dropped when compiled
def _compile(
    text: str, pipeline: str, requests: dict[str, Layouts] | None = None
) -> _Compiled:
    """Compiles `text`, with an entry per requested function and matrix
    layouts (default: every function, all matrices C-ordered, with fast
    entries)."""
    ctx = mx_context()
    module, source = _located_parse(text, "<string>", ctx)
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
    with_fast = requests is None and check_layouts() and numpy_api() is not None
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
        ir, lowered = _lower_and_translate(module, source, pipeline, ctx)
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
        # Layout bits: the matrix parameters', then the matrix results'.
        kinds = [p.kind for p in params[name]] + [_kind(t) for t in results[name]]
        matrices = [i for i, kind in enumerate(kinds) if kind == "matrix"]
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
            Result(t).operand(
                None if isinstance(t, MatrixType) else next(scalars),
                bits.get(len(params[name]) + j, -1),
            )
            for j, t in enumerate(results[name])
        ]
        callee = llvm_symbol(entry_name)
        batch_name = llvm_symbol(f"_mx_batch_{name}")
        min_count = parallel_min_count(_bytes_per_call(params[name], results[name]))
        wrappers.append(
            batch_entry(batch_name, callee, signature, operands, outs, min_count)
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
                    (batch_name, min_count),
                )
            )
    full_ir = ir + "\n" + "\n\n".join(wrappers) + "\n"
    full_ir += "".join(line + "\n" for line in missing_declarations(full_ir))
    load_runtime()
    symbols = [
        *entry_names.values(),
        *(f"_mx_batch_{name}" for name in entry_names),
        *(f"_mx_fast_{name}" for name in entry_names if with_fast),
    ]
    code = machine_code(full_ir, symbols, _source_symbol)
    address = code.addresses
    entries: dict[str, Entry] = {}
    for name in entry_names:
        batch = builtin_function(name, address[f"_mx_batch_{name}"])
        fast = builtin_function(name, address[f"_mx_fast_{name}"]) if with_fast else None
        kernel = address[entry_names[name]]
        entries[name] = Entry(fast, batch, kernel, tables.get(name), code)
    return _Compiled(full_ir, entries, params, results, remarks)


def _bytes_per_call(params: Sequence[Param], results: Sequence[Attribute]) -> int:
    """Bytes of the values one call of a batch reads and writes (memrefs are
    the same for every call)."""
    values = [(p.core, p.type_) for p in params if p.kind != "memref"]
    values += [(_core(t), t) for t in results]
    return sum(math.prod(core) * _value_dtype(t).itemsize for core, t in values)


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


def compile_text(text: str, pipeline: str) -> CompiledModule:
    """The functions of `text` compiled with `pipeline` (see
    `mx.jit.compile_module`)."""
    compiled = _compile(text, pipeline)
    functions = {
        name: make_function(
            name,
            compiled.params[name],
            [Result(t) for t in compiled.results[name]],
            entry,
            _variant_compiler(text, pipeline, name),
        )
        for name, entry in compiled.entries.items()
    }
    for name, function in functions.items():
        function.source, function.pipeline = text, pipeline
        function.remarks = compiled.remarks[name]
    return CompiledModule(compiled.llvm_ir, functions, len(text))


def _variant_compiler(
    text: str, pipeline: str, name: str
) -> Callable[[Layouts], Entry]:
    """Compiles function `name` of `text` for other orders of its matrices."""

    def variant(layouts: Layouts) -> Entry:
        return _compile(text, pipeline, {name: layouts}).entries[name]

    return variant


def _arg_name(arg: BlockArgument) -> str:
    return f" (%{arg.name_hint})" if arg.name_hint else ""

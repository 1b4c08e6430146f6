"""JIT: MLIR text or a module -> native code for the host CPU, callable with
NumPy arrays and scalars.

Each function gets a packed wrapper `void _mx_packed_<f>(ptr args, ptr ret)`
(MLIR ExecutionEngine style) so that every type — f16, bf16, vectors, i1 —
crosses the boundary through memory, independently of the C ABI's register
rules. Compiled modules are cached per (text, pipeline) for the process.
"""

import ctypes
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import cache, cached_property
from typing import Any, cast

import llvmlite.binding as binding
import ml_dtypes
import numpy as np
from xdsl.dialects import func, llvm
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
    VectorType,
)
from xdsl.ir import Attribute
from xdsl.passes import PassPipeline
from xdsl.universe import Universe

from mx.dialects.matrix import MatrixType
from mx.frontend import deep_recursion, mx_context, parse_and_verify, verify_or_raise
from mx.targets.llvm_ir import host_target, llvm_symbol, module_to_llvm_ir, type_str
from mx.tools.xdsl_fixes import xdsl_fixes

DEFAULT_PIPELINE = "mx-lower-to-llvm"


def numpy_dtype(type_: Attribute) -> np.dtype[Any]:
    """The NumPy dtype holding one element of `type_` (index is int64)."""
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
            for bits, dtype in (
                (8, np.int8),
                (16, np.int16),
                (32, np.int32),
                (64, np.int64),
            ):
                if width <= bits:
                    return np.dtype(dtype)
        case _:
            pass
    raise TypeError(f"no NumPy type for {type_}")


@dataclass(frozen=True)
class _Param:
    name: str
    type_: Attribute

    @cached_property
    def _fast_check(self) -> tuple[str, np.dtype[Any] | None, object]:
        """(kind, dtype, shape or minimum size) for the per-call fast path: the
        common, valid arguments skip the xDSL type inspection of `storage`."""
        type_ = self.type_
        if isinstance(type_, MatrixType):
            return "matrix", numpy_dtype(type_.element_type), type_.shape
        if isinstance(type_, MemRefType):
            size = type_.element_count() if type_.has_static_shape() else 0
            return "memref", numpy_dtype(type_.element_type), size
        if isinstance(type_, VectorType):
            return "vector", None, None
        return "scalar", numpy_dtype(type_), None

    def storage(self, value: object) -> tuple[np.ndarray[Any, Any], object]:
        """A buffer holding the argument's value as the wrapper loads it, and
        what must stay alive while the call runs."""
        kind, dtype, extent = self._fast_check
        if type(value) is np.ndarray and value.dtype == dtype:
            if kind == "matrix" and value.shape == extent:
                column_major = np.ascontiguousarray(value.T)
                return _pointer_to(column_major), column_major
            if (
                kind == "memref"
                and value.flags.c_contiguous
                and value.size >= cast(int, extent)
            ):
                return _pointer_to(value), value
        elif (
            kind == "scalar" and isinstance(value, np.generic) and value.dtype == dtype
        ):
            return np.array([value], dtype=dtype), None
        return self._checked_storage(value)

    def _checked_storage(self, value: object) -> tuple[np.ndarray[Any, Any], object]:
        """`storage` for any argument: checks it, and says what is wrong."""
        type_ = self.type_
        if isinstance(type_, MatrixType):
            # The lowered callee reads a column-major buffer (convert-matrix-to-affine).
            column_major = np.ascontiguousarray(self._check_matrix(value, type_).T)
            return _pointer_to(column_major), column_major
        if isinstance(type_, MemRefType):
            array = self._check_array(value, type_)
            return _pointer_to(array), array
        if isinstance(type_, VectorType):
            _check_vector_elements(type_, f"argument {self.name}")
            dtype = numpy_dtype(type_.element_type)
            array = np.asarray(value)
            if array.dtype != dtype or array.shape != tuple(type_.get_shape()):
                raise TypeError(
                    f"argument {self.name}: expected a {type_.get_shape()} array of "
                    f"{dtype}, got {array.dtype} {array.shape}"
                )
            return np.ascontiguousarray(array), None
        return np.array([self._scalar(value)], dtype=self._fast_check[1]), None

    def _check_matrix(self, value: object, type_: MatrixType) -> np.ndarray[Any, Any]:
        dtype = numpy_dtype(type_.element_type)
        if not isinstance(value, np.ndarray) or value.dtype != dtype:
            got = value.dtype if isinstance(value, np.ndarray) else type(value).__name__
            raise TypeError(
                f"argument {self.name}: expected a {type_.rows}x{type_.cols} array "
                f"of {dtype} for {type_}, got {got}"
            )
        if value.shape != type_.shape:
            raise ValueError(
                f"argument {self.name}: expected shape {type_.shape} for {type_}, "
                f"got {value.shape}"
            )
        return value

    def _check_array(self, value: object, type_: MemRefType) -> np.ndarray[Any, Any]:
        if not isinstance(value, np.ndarray):
            raise TypeError(f"argument {self.name}: expected a NumPy array for {type_}")
        dtype = numpy_dtype(type_.element_type)
        if value.dtype != dtype:
            raise TypeError(
                f"argument {self.name}: expected dtype {dtype}, got {value.dtype}"
            )
        if not value.flags.c_contiguous:
            raise ValueError(f"argument {self.name}: the array must be C-contiguous")
        if type_.has_static_shape() and value.size < type_.element_count():
            raise ValueError(
                f"argument {self.name}: {type_} needs {type_.element_count()} "
                f"elements, the array has {value.size}"
            )
        return value

    def _scalar(self, value: object) -> object:
        type_ = self.type_
        dtype = self._fast_check[1]
        if isinstance(value, np.generic):
            if value.dtype != dtype:
                raise TypeError(
                    f"argument {self.name}: expected {dtype}, got {value.dtype}"
                )
            return value
        if isinstance(type_, IntegerType | IndexType):
            if isinstance(value, bool | np.bool_):
                value = int(value)
            if not isinstance(value, int | np.integer):
                raise TypeError(
                    f"argument {self.name}: expected an integer for {type_}"
                )
            width = 64 if isinstance(type_, IndexType) else type_.width.data
            number = int(value)
            if not -(1 << (width - 1)) <= number < (1 << width):
                raise ValueError(
                    f"argument {self.name}: {number} does not fit in {type_}"
                )
            number &= (1 << width) - 1
            if width > 1 and number >> (width - 1):
                number -= 1 << width  # the signed container's bits
            return number
        if not isinstance(value, int | float | np.integer | np.floating):
            raise TypeError(f"argument {self.name}: expected a number for {type_}")
        return value


def _check_vector_elements(type_: VectorType, what: str) -> None:
    """LLVM packs vectors of sub-byte integers (`<8 x i4>` is 4 bytes), unlike the
    byte-per-element arrays the JIT passes: such vectors must go through a memref."""
    element = type_.element_type
    if isinstance(element, IntegerType) and element.width.data not in (
        1,
        8,
        16,
        32,
        64,
    ):
        raise TypeError(
            f"{what}: {type_} cannot cross the JIT boundary (LLVM packs its "
            "elements); pass the values through a memref instead"
        )


def _pointer_to(array: np.ndarray[Any, Any]) -> np.ndarray[Any, Any]:
    return np.array([array.ctypes.data], dtype=np.uintp)


class JitFunction:
    """A compiled function; call it with NumPy arrays (memrefs, and 2-D arrays
    for matrices) and scalars. Matrix results come back as 2-D arrays, in the
    function's result order together with its scalar result."""

    def __init__(
        self,
        name: str,
        params: Sequence[_Param],
        result: Attribute | None,
        address: int,
        keepalive: object,
        original_results: Sequence[Attribute] = (),
    ):
        self.name = name
        self.params = tuple(params)
        self.result = result
        # Matrix results are out-parameters appended to the lowered arguments,
        # column-major: (C, R) arrays.
        self.matrix_results = [t for t in original_results if isinstance(t, MatrixType)]
        self._out_buffers = [
            ((t.cols, t.rows), numpy_dtype(t.element_type)) for t in self.matrix_results
        ]
        self.original_results = tuple(original_results)
        self._call = ctypes.CFUNCTYPE(None, ctypes.c_void_p, ctypes.c_void_p)(address)
        self._keepalive = keepalive

    def __call__(self, *args: object) -> Any:
        if len(args) != len(self.params):
            raise TypeError(
                f"{self.name}() takes {len(self.params)} arguments, got {len(args)}"
            )
        slots = [p.storage(a) for p, a in zip(self.params, args, strict=True)]
        outs = [np.zeros(shape, dtype) for shape, dtype in self._out_buffers]
        pointers = [slot.ctypes.data for slot, _ in slots]
        out_slots = [_pointer_to(out) for out in outs]
        pointers += [slot.ctypes.data for slot in out_slots]
        packed = (ctypes.c_void_p * max(1, len(pointers)))(*pointers)
        value = self._invoke(packed)
        if not self.matrix_results:
            return value
        matrices = iter(out.T for out in outs)  # column-major buffers -> (R, C)
        results = [
            next(matrices) if isinstance(t, MatrixType) else value
            for t in self.original_results
        ]
        return results[0] if len(results) == 1 else tuple(results)

    def _invoke(self, packed: ctypes.Array[ctypes.c_void_p]) -> Any:
        result = None
        if self.result is not None:
            if isinstance(self.result, VectorType):
                _check_vector_elements(self.result, f"the result of {self.name}")
                result = np.zeros(
                    self.result.get_shape(), numpy_dtype(self.result.element_type)
                )
            else:
                result = np.zeros(1, numpy_dtype(self.result))
            # Room for LLVM storing a vector rounded up to a power of two.
            result = np.concatenate([result, np.zeros_like(result)])
        self._call(packed, result.ctypes.data if result is not None else None)
        if result is None:
            return None
        if isinstance(self.result, VectorType):
            return result[: self.result.get_shape()[0]].copy()
        return result[0]


class CompiledModule:
    """The functions of a JIT-compiled module, by name (`m.f` or `m["f"]`)."""

    def __init__(self, llvm_ir: str, functions: dict[str, JitFunction]):
        self.llvm_ir = llvm_ir
        self.functions = functions

    def __getitem__(self, name: str) -> JitFunction:
        return self.functions[name]

    def __getattr__(self, name: str) -> JitFunction:
        try:
            return self.functions[name]
        except KeyError:
            raise AttributeError(name) from None


def _packed_wrapper(op: llvm.FuncOp) -> str:
    name = op.sym_name.data
    params = list(op.function_type.inputs)
    result = op.function_type.output
    wrapper = llvm_symbol(f"_mx_packed_{name}")
    lines = [f"define void {wrapper}(ptr %args, ptr %ret) {{"]
    args: list[str] = []
    for i, param in enumerate(params):
        t = type_str(param)
        lines += [
            f"  %slot{i} = getelementptr ptr, ptr %args, i64 {i}",
            f"  %addr{i} = load ptr, ptr %slot{i}",
            f"  %arg{i} = load {t}, ptr %addr{i}, align 1",
        ]
        args.append(f"{t} %arg{i}")
    call = f"call {type_str(result)} {llvm_symbol(name)}({', '.join(args)})"
    if isinstance(result, llvm.LLVMVoidType):
        lines.append(f"  {call}")
    else:
        lines += [
            f"  %result = {call}",
            f"  store {type_str(result)} %result, ptr %ret, align 1",
        ]
    return "\n".join([*lines, "  ret void", "}"])


@cache
def _target_machine() -> binding.TargetMachine:
    triple, _ = host_target()
    # The host CPU and features: with a generic CPU, half conversions become
    # libcalls that MCJIT cannot resolve.
    return binding.Target.from_triple(triple).create_target_machine(
        cpu=binding.get_host_cpu_name(),
        features=binding.get_host_cpu_features().flatten(),
        opt=3,
        codemodel="jitdefault",
    )


def lower_to_llvm_ir(
    source: str | ModuleOp, pipeline: str = DEFAULT_PIPELINE
) -> tuple[str, ModuleOp, dict[str, FunctionType]]:
    """Runs `pipeline` on `source`; returns the LLVM IR, the lowered module
    and the type of each `func.func` before lowering."""
    ctx = mx_context()
    # Passes assume verified input; invalid IR must not become invalid LLVM IR.
    if isinstance(source, ModuleOp):
        module = source.clone()
        verify_or_raise(module)
    else:
        module = parse_and_verify(source, ctx=ctx)
    signatures = {
        op.sym_name.data: op.function_type
        for op in module.walk()
        if isinstance(op, func.FuncOp)
    }
    with xdsl_fixes(), deep_recursion():
        PassPipeline.parse_spec(Universe.get_multiverse().all_passes, pipeline).apply(
            ctx, module
        )
        return module_to_llvm_ir(module), module, signatures


@cache
def _compile_text(text: str, pipeline: str) -> CompiledModule:
    ir, module, signatures = lower_to_llvm_ir(text, pipeline)
    definitions = [
        op for op in module.ops if isinstance(op, llvm.FuncOp) and op.body.blocks
    ]
    full_ir = ir + "\n" + "\n\n".join(_packed_wrapper(op) for op in definitions) + "\n"
    llvm_module = binding.parse_assembly(full_ir)
    llvm_module.verify()
    machine = _target_machine()
    tuning = binding.create_pipeline_tuning_options(speed_level=3)
    builder = binding.create_pass_builder(machine, tuning)
    builder.getModulePassManager().run(llvm_module, builder)
    engine = binding.create_mcjit_compiler(llvm_module, machine)
    engine.finalize_object()
    functions: dict[str, JitFunction] = {}
    for op in definitions:
        name = op.sym_name.data
        lowered = list(op.function_type.inputs)
        signature = signatures.get(name)
        original = list(signature.inputs) if signature else lowered
        params = [
            _Param(f"#{i} of {name}", orig if _compatible(orig, low) else low)
            for i, (orig, low) in enumerate(zip(original, lowered, strict=False))
        ]
        result = op.function_type.output
        functions[name] = JitFunction(
            name,
            params,
            None if isinstance(result, llvm.LLVMVoidType) else result,
            engine.get_function_address(f"_mx_packed_{name}"),
            (engine, llvm_module),
            list(signature.outputs) if signature else (),
        )
    return CompiledModule(full_ir, functions)


def _compatible(original: Attribute, lowered: Attribute) -> bool:
    return (
        isinstance(original, MemRefType | IndexType | MatrixType) or original == lowered
    )


def compile_module(
    source: str | ModuleOp, pipeline: str = DEFAULT_PIPELINE
) -> CompiledModule:
    """Compiles MLIR text or a module at -O3 for the host CPU (cached)."""
    text = source if isinstance(source, str) else str(source)
    return _compile_text(text, pipeline)


def jit(
    source: str | ModuleOp, name: str, pipeline: str = DEFAULT_PIPELINE
) -> Callable[..., Any]:
    """The compiled function `name` of `source`."""
    return compile_module(source, pipeline)[name]

"""The JIT's compiler: MLIR text -> a `CompiledModule` of `JitFunction`s
(`compile_text`), imported by `mx.jit_modules` on the first compile.

It parses and verifies the text, describes each function's parameters and
results (`mx.jit_signature`), makes matrix parameters and results cross
the boundary as their transposes where the caller's array order differs from
the ABI's column-major layout (`_transpose_boundary`, before the pipeline, so
that `matrix-fold-transposes` folds the transposes into the computation),
runs the pipeline, adds the native entries of `mx/jit_wrappers.py` (a fast
entry and a batch loop per function) and compiles the module with LLVM at -O3
for the host CPU (`mx.jit_machine_code`).
"""

import ctypes
import math
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache, partial
from typing import TypeVar, cast

from xdsl.context import Context
from xdsl.dialects import affine, func, llvm, memref, vector
from xdsl.dialects.builtin import (
    FunctionType,
    MemRefType,
    ModuleOp,
    StringAttr,
    SymbolRefAttr,
)
from xdsl.ir import Attribute, BlockArgument
from xdsl.passes import ModulePass
from xdsl.rewriter import InsertPoint, Rewriter
from xdsl.universe import Universe
from xdsl.utils.exceptions import DiagnosticException

from mx.compile_memos import forgetting_compile_memos
from mx.compiler import lower_for_llvm_ir
from mx.diagnostics import OpDiagnostic, Source, op_diag
from mx.dialects.matrix import LoadOp as MatrixLoadOp
from mx.dialects.matrix import MatrixType, MemoryAccessOp, TransposeOp
from mx.errors import CompileError
from mx.frontend import FrontendError, mx_context, parse_and_verify
from mx.jit_machine_code import (
    SPEED_LEVELS,
    NativeCode,
    builtin_function,
    host_cpu,
    machine_code,
)
from mx.jit_object_layout import check_layouts, numpy_api
from mx.jit_runtime import DEFAULT_PIPELINE, CompiledModule, Layouts, make_function
from mx.jit_signature import Param, Result, Where, core_shape, kind_of, value_dtype
from mx.jit_wrappers import batch_entry, fast_entry
from mx.lowering.llvm.func import llvm_function_type
from mx.lowering.llvm.memref import constant_value
from mx.lowering.matrix_to_affine.convert_matrix_to_affine import (
    ConvertMatrixToAffinePass,
)
from mx.lowering.matrix_to_affine.kernel_remarks import recording
from mx.lowering.matrix_to_affine.target_cpu import for_target_cpu
from mx.passes.mx_lower_to_llvm import MxLowerToLLVMPass
from mx.runtime.parallel_for import missing_declarations
from mx.runtime.threads import load_runtime, parallel_min_count
from mx.targets.compile_guard import functions as split_functions
from mx.targets.compile_guard import reachable_code
from mx.targets.llvm_ir import LLVMIRWriter, llvm_symbol, module_to_llvm_ir, type_str
from mx.tools.pipeline import PipelineError, build_passes

_T = TypeVar("_T")


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

BATCH_INLINE_LINES = 300
"""The batch loop lets LLVM inline a function of at most this many lines of
LLVM IR (with the functions it calls) and no vector of more than
`BATCH_INLINE_LANES` lanes. A small kernel's call costs about as much as
its work (a 4x4 `a@b+c`, 94 lines: 6.5 ns a call inlined, 7.4 not, Zen 1);
a large one's does not, and each inlined copy is compiled again. Inlined
into the loop, a function holding `vector<4096xf32>` values took LLVM's code
generation 10 s instead of 1 (a 4-layer 4096 x 4096 f16 decode, 121 lines
with `reassoc`, 1408 without)."""

BATCH_INLINE_LANES = 64
"""The most lanes of a vector in a function the batch loop lets LLVM inline
(`BATCH_INLINE_LINES`)."""


def _inlined_in_batches(definitions: Mapping[str, str], symbol: str) -> bool:
    """Whether the batch loop lets LLVM inline `symbol` of a module with
    these function `definitions` (`BATCH_INLINE_LINES`)."""
    code = "\n".join(reachable_code(definitions, symbol))
    lanes = [int(n) for n in re.findall(r"<(\d+) x ", code)]
    return (
        code.count("\n") < BATCH_INLINE_LINES
        and max(lanes, default=0) <= BATCH_INLINE_LANES
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
    caches, f4e2m1fn look-ups made with its shuffles, vectors at most as
    wide as its registers (whatever `vector-bits` says: a wider vector is a
    pair of registers, and the same kernel under another spelling of the
    pipeline would sum in another order)."""
    with for_target_cpu(host_cpu()):
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
            isinstance(t, MatrixType)
            and (next(orders) == "C") != row_major_abi
            and t.rows > 1
            and t.cols > 1  # (one row or column: both orders are the same bytes)
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
    # (split once: each entry's look at it is then linear in what it calls)
    definitions = {f.name: f.definition for f in split_functions(ir)[1]}
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
        kinds = [p.kind for p in params[name]] + [kind_of(t) for t in results[name]]
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
        inline = _inlined_in_batches(definitions, callee.lstrip("@"))
        wrappers.append(
            batch_entry(
                batch_name, callee, signature, operands, outs, min_count, inline
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
    if code.speed < SPEED_LEVELS[0]:
        note = (
            f"remark: compiled at -O{code.speed}, not -O{SPEED_LEVELS[0]}: LLVM "
            f"aborted or left the module invalid at -O{SPEED_LEVELS[0]} (an LLVM "
            "bug; the code is correct, perhaps slower)"
        )
        remarks = {name: (*lines, note) for name, lines in remarks.items()}
    address = code.addresses
    entries: dict[str, Entry] = {}
    for name in entry_names:
        batch = builtin_function(name, address[f"_mx_batch_{name}"])
        fast = (
            builtin_function(name, address[f"_mx_fast_{name}"]) if with_fast else None
        )
        kernel = address[entry_names[name]]
        entries[name] = Entry(fast, batch, kernel, tables.get(name), code)
    return _Compiled(full_ir, entries, params, results, remarks)


def _bytes_per_call(params: Sequence[Param], results: Sequence[Attribute]) -> int:
    """Bytes of the values one call of a batch reads and writes (memrefs are
    the same for every call)."""
    values = [(p.core, p.type_) for p in params if p.kind != "memref"]
    values += [(core_shape(t), t) for t in results]
    return sum(math.prod(core) * value_dtype(t).itemsize for core, t in values)


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

"""Upstream MLIR continues from mx's affine-level output, bit for bit.

For the examples and a sample of the lit inputs, each chunk goes through
`mx-lower-to-llvm`'s steps up to `convert-arbfp-to-arith` (the module is then
matrix- and arbfp-free: memrefs, affine, scf, arith, math, vector). That
module, printed with `-t mlir16`, is lowered by upstream MLIR 16
(`mlir-opt-16`'s own passes, `mlir-translate-16 --mlir-to-llvmir`); the same
module is also lowered by the rest of mx's own pipeline (`-t llvm`). Both are
compiled by clang-16 into shared objects, every function is called on the
same random arguments, and every buffer and result must be equal bit for bit.

Every function is called through a wrapper added at the affine level that
takes each parameter and result in a memref (scalars as memref<1xT>, 1-D
vectors as memref<NxT>), so that nothing is passed by value through ctypes.
Upstream's calls take memref descriptors (allocated and aligned pointer,
offset, sizes, strides), mx's the bare pointer of its C ABI: the test passes
each the same buffer.

Known gaps of MLIR 16 (docs/tools.md), whose chunks are left out here:
`convert-scf-to-cf` does not lower `scf.index_switch` (later versions do); bf16
arithmetic and `arith.truncf` to bf16 become LLVM's bfloat operations, which
round through `__truncsfbf2`, a call that Debian 12's libgcc lacks (or, on
CPUs with AVX512-BF16, an instruction that flushes subnormals), where mx
rounds with integer arithmetic; vectors of i1
and sub-byte integers are stored bit-packed by upstream, one element per
byte by mx (the wrappers do not store them).

Needs mlir-opt-16, mlir-translate-16 (Debian: mlir-16-tools) and clang-16;
skipped without them, failed under CI. All the lit inputs (not the CI
sample): MX_UPSTREAM_ALL=1 (docs/long-runs.md).
"""

import ctypes
import os
import subprocess
from io import StringIO
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from xdsl.dialects import arith, func, memref, scf, vector
from xdsl.dialects.builtin import (
    AnyFloat,
    BFloat16Type,
    FunctionType,
    IndexType,
    IntegerAttr,
    IntegerType,
    MemRefType,
    ModuleOp,
    StringAttr,
    SymbolRefAttr,
    VectorType,
)
from xdsl.ir import Attribute, Block, Operation, Region, SSAValue
from xdsl.universe import Universe
from xdsl.utils.exceptions import DiagnosticException

from mx.frontend import FrontendError, mx_context, parse_and_verify
from mx.jit_signature import numpy_dtype
from mx.passes.mx_lower_to_llvm import PIPELINE
from mx.targets.llvm_ir import module_to_llvm_ir
from mx.targets.mlir16 import MLIR16Printer
from mx.tools.mx_opt import split_input
from tests.system_tools import required_tool

ROOT = Path(__file__).resolve().parents[2]
LIT = ROOT / "tests" / "filecheck"
AFFINE_LEVEL = PIPELINE[: PIPELINE.index("convert-arbfp-to-arith") + 1]
MX_REST = PIPELINE[len(AFFINE_LEVEL) :]
UPSTREAM = (
    "--lower-affine",
    "--convert-scf-to-cf",
    "--convert-vector-to-llvm",
    "--convert-math-to-llvm",
    "--expand-strided-metadata",
    "--convert-memref-to-llvm",
    "--convert-arith-to-llvm",
    "--convert-index-to-llvm",
    "--convert-func-to-llvm",
    "--convert-cf-to-llvm",
    "--reconcile-unrealized-casts",
)
SAMPLE = [
    *sorted((ROOT / "examples").glob("*.mlir")),
    *(
        LIT / "lowering" / "convert-matrix-to-affine" / f"{name}.mlir"
        for name in (
            "blocked-matvec",
            "elementwise",
            "matmul",
            "memory",
            "mixed-precision",
            "vectors",
        )
    ),
    *(
        LIT / "lowering" / "convert-arbfp-to-arith" / f"{name}.mlir"
        for name in ("scalars", "matrices")
    ),
]
ALL = sorted(
    p
    for folder in ("dialects", "passes", "lowering")
    for p in (LIT / folder).rglob("*.mlir")
    if "Output" not in p.parts and "invalid" not in p.name
)
"""The lit inputs of the dialects, passes and lowerings (the driver's and the
interpreter's test error reporting and undefined behaviour)."""
FILES = (
    [*SAMPLE, *(p for p in ALL if p not in SAMPLE)]
    if os.environ.get("MX_UPSTREAM_ALL")
    else SAMPLE
)
COMPILE_ONLY = {
    "huge_splat": "stores a 1048575x1048575 splat: it needs 4 TiB of memory",
}
"""Lit functions that are only compiled, never run, by their tests."""
DYNAMIC_SIZE = 1 << 16
"""Elements of each dynamic dimension of an argument buffer."""
INDEX_ARGUMENT = 1


def _affine_chunks(path: Path) -> list[ModuleOp]:
    """The chunks of `path` that mx lowers to the affine level (invalid
    inputs and matrices too large to materialize are the lit tests' own
    error cases), with their functions renamed apart (`c<k>_<name>`)."""
    ctx = mx_context()
    passes = Universe.get_multiverse().all_passes
    modules: list[ModuleOp] = []
    for k, (text, _) in enumerate(split_input(path.read_text())):
        try:
            module = parse_and_verify(text, str(path))
            for name in AFFINE_LEVEL:
                passes[name]()().apply(ctx, module)
        except (FrontendError, DiagnosticException):
            continue
        if any(
            isinstance(op, memref.GlobalOp)
            or (isinstance(op, func.FuncOp) and not op.body.blocks)
            for op in module.walk()
        ):
            continue  # symbols this test does not rename
        for op in module.walk():
            if isinstance(op, func.FuncOp):
                op.sym_name = StringAttr(f"c{k}_{op.sym_name.data}")
            elif isinstance(op, func.CallOp):
                op.callee = SymbolRefAttr(f"c{k}_{op.callee.string_value()}")
        modules.append(module)
    return modules


def _in_a_gap(op: Operation) -> bool:
    """An op of the known gaps (see the module docs), or a function with an
    n-D vector parameter or result, which mx's C ABI does not have."""
    bf16_rounding = (
        op.dialect_name() in ("arith", "math")
        and not isinstance(op, arith.ConstantOp | arith.BitcastOp | arith.SelectOp)
        and any(
            isinstance(getattr(r.type, "element_type", r.type), BFloat16Type)
            for r in op.results
        )
    )
    n_d_vector = isinstance(op, func.FuncOp) and any(
        isinstance(t, VectorType) and t.get_num_dims() > 1
        for t in (*op.function_type.inputs, *op.function_type.outputs)
    )
    return bf16_rounding or n_d_vector or isinstance(op, scf.IndexSwitchOp)


def _drop_gaps(module: ModuleOp) -> None:
    """Erases the functions with ops of the known gaps, and their callers."""
    functions = [op for op in module.ops if isinstance(op, func.FuncOp)]
    dropped = {f.sym_name.data for f in functions if any(map(_in_a_gap, f.walk()))}
    while True:
        callers = {
            f.sym_name.data
            for f in functions
            if f.sym_name.data not in dropped
            and any(
                isinstance(op, func.CallOp) and op.callee.string_value() in dropped
                for op in f.walk()
            )
        }
        if not callers:
            break
        dropped |= callers
    for f in functions:
        if f.sym_name.data in dropped:
            f.detach()
            f.erase()


def _merge(modules: list[ModuleOp]) -> ModuleOp:
    merged = ModuleOp([])
    for module in modules:
        for op in list(module.ops):
            op.detach()
            merged.body.block.add_op(op)
    return merged


def _shared_object(ll: str, so: Path) -> ctypes.CDLL:
    ll_path = so.with_suffix(".ll")
    ll_path.write_text(ll)
    subprocess.run(
        [
            required_tool("clang-16"),
            "-O2",
            "-shared",
            "-fPIC",
            str(ll_path),
            "-o",
            str(so),
        ],
        check=True,
        capture_output=True,
    )
    return ctypes.CDLL(str(so))


def _upstream_llvm_ir(affine: ModuleOp) -> str:
    text = StringIO()
    MLIR16Printer(stream=text).print_op(affine)
    lowered = subprocess.run(
        [required_tool("mlir-opt-16"), *UPSTREAM],
        input=text.getvalue(),
        capture_output=True,
        text=True,
    )
    assert lowered.returncode == 0, lowered.stderr[-3000:]
    translated = subprocess.run(
        [required_tool("mlir-translate-16"), "--mlir-to-llvmir"],
        input=lowered.stdout,
        capture_output=True,
        text=True,
    )
    assert translated.returncode == 0, translated.stderr[-3000:]
    return translated.stdout


def _boxed(t: Attribute) -> MemRefType | None:
    """The memref a wrapper takes `t` in: memrefs as they are, scalars as
    memref<1xT>, 1-D vectors as memref<NxT>; None for anything else. Vectors
    of i1 or of sub-byte integers are left out: LLVM (so upstream MLIR) stores
    them bit-packed, mx one element per byte (docs/c-abi.md)."""
    if isinstance(t, MemRefType):
        return t if t.get_shape() else None
    if isinstance(t, VectorType):
        element = t.element_type
        packed = isinstance(element, IntegerType) and element.width.data % 8 != 0
        one_d = t.get_num_dims() == 1
        return MemRefType(element, t.get_shape()) if one_d and not packed else None
    if isinstance(t, IntegerType | IndexType | AnyFloat):
        return MemRefType(t, [1])
    return None


def _wrap(op: func.FuncOp) -> tuple[str, list[MemRefType]] | None:
    """Adds `w_<name>` beside `op`: its parameters and results in memrefs,
    loaded and stored around a call, so that every function is called the
    same way through ctypes (no vectors or small floats by value)."""
    types = [*op.function_type.inputs.data, *op.function_type.outputs.data]
    boxes = [_boxed(t) for t in types]
    if any(b is None for b in boxes):
        return None
    memrefs = [b for b in boxes if b is not None]
    block = Block(arg_types=memrefs)
    zero = arith.ConstantOp(IntegerAttr(0, IndexType()))
    block.add_op(zero)
    count = len(op.function_type.inputs)
    values: list[SSAValue] = []
    for arg, t in zip(block.args[:count], types, strict=False):
        if isinstance(t, MemRefType):
            values.append(arg)
            continue
        load = (
            vector.LoadOp(arg, [zero], t)
            if isinstance(t, VectorType)
            else memref.LoadOp.get(arg, [zero])
        )
        block.add_op(load)
        values.append(load.results[0])
    call = func.CallOp(op.sym_name.data, values, list(op.function_type.outputs))
    block.add_op(call)
    for value, box in zip(call.results, block.args[count:], strict=True):
        store = (
            vector.StoreOp(value, box, [zero])
            if isinstance(value.type, VectorType)
            else memref.StoreOp.get(value, box, [zero])
        )
        block.add_op(store)
    block.add_op(func.ReturnOp())
    name = f"w_{op.sym_name.data}"
    wrapper = func.FuncOp(name, FunctionType.from_lists(memrefs, []), Region(block))
    parent = op.parent_block()
    assert parent is not None
    parent.insert_op_after(wrapper, op)
    return name, memrefs


def _buffers(memrefs: list[MemRefType], seed: int) -> list[np.ndarray[Any, Any]]:
    """One array per memref: random finite floats, integers in range (a
    sub-byte integer zero-extended in its byte), index values that are valid
    positions."""
    rng = np.random.default_rng(seed)
    out: list[np.ndarray[Any, Any]] = []
    for t in memrefs:
        shape = [DYNAMIC_SIZE if d < 0 else d for d in t.get_shape()]
        element = t.element_type
        dtype = numpy_dtype(element)
        if isinstance(element, IndexType):
            out.append(np.full(shape, INDEX_ARGUMENT, dtype))
        elif isinstance(element, IntegerType):
            width = element.width.data
            low, high = (
                (0, 1 << width)
                if width % 8
                else (-(1 << (width - 1)), 1 << (width - 1))
            )
            out.append(rng.integers(low, high, shape).astype(dtype))
        else:
            out.append(rng.standard_normal(shape).astype(dtype))
    return out


def _run(
    lib: ctypes.CDLL, name: str, memrefs: list[MemRefType], descriptors: bool, seed: int
) -> list[bytes]:
    """Calls `name` on fresh buffers; their bytes afterwards."""
    buffers = _buffers(memrefs, seed)
    args: list[Any] = []
    for array in buffers:
        pointer = ctypes.c_void_p(array.ctypes.data)
        args.append(pointer)
        if descriptors:  # allocated and aligned pointer, offset, sizes, strides
            args += [pointer, ctypes.c_int64(0)]
            args += [ctypes.c_int64(n) for n in array.shape]
            args += [ctypes.c_int64(s // array.itemsize) for s in array.strides]
    function = getattr(lib, name)
    function.restype = None
    function.argtypes = [type(a) for a in args]
    function(*args)
    return [b.tobytes() for b in buffers]


@pytest.mark.parametrize("path", FILES, ids=lambda p: str(p.relative_to(ROOT)))
def test_upstream_mlir16_lowering_matches_mx(path: Path, tmp_path: Path) -> None:
    chunks = _affine_chunks(path)
    if not chunks and path not in SAMPLE:
        pytest.skip("no chunk lowers (the file tests the lowering's refusals)")
    assert chunks, f"no chunk of {path} lowers to the affine level"
    affine = _merge(chunks)
    _drop_gaps(affine)
    functions = [op for op in affine.ops if isinstance(op, func.FuncOp)]
    wrappers = [
        w
        for w in map(_wrap, functions)
        if w is not None and w[0].split("_", 2)[2] not in COMPILE_ONLY
    ]
    assert wrappers, f"no function of {path} has a signature the test can call"
    upstream = _shared_object(_upstream_llvm_ir(affine), tmp_path / "upstream.so")
    ctx = mx_context()
    passes = Universe.get_multiverse().all_passes
    for name in MX_REST:
        passes[name]()().apply(ctx, affine)
    mx = _shared_object(module_to_llvm_ir(affine), tmp_path / "mx.so")
    for seed, (name, memrefs) in enumerate(wrappers):
        want = _run(mx, name, memrefs, descriptors=False, seed=seed)
        got = _run(upstream, name, memrefs, descriptors=True, seed=seed)
        for i, (g, w) in enumerate(zip(got, want, strict=True)):
            assert g == w, f"@{name[2:]}: buffer #{i} differs"

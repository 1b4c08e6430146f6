"""`memref` -> `llvm` with bare pointers.

A memref is a pointer to its first element; an N-D memref with the identity
layout is linearized row-major (only its leading dimension may be dynamic,
since the other sizes are needed as strides). Addresses are computed with
`getelementptr`, never through integers. Elements are laid out as
`memory_type` says (one byte per `i4`/`i6` container): every load and store
of the lowering goes through `load_value`/`store_value`.
"""

from collections.abc import Sequence
from typing import cast

from xdsl.dialects import arith, llvm, memref
from xdsl.dialects.builtin import (
    DYNAMIC_INDEX,
    AnyFloat,
    BFloat16Type,
    DenseArrayBase,
    DenseIntOrFPElementsAttr,
    IntegerAttr,
    IntegerType,
    MemRefType,
    ModuleOp,
    TensorType,
    UnitAttr,
    UnrealizedConversionCastOp,
    VectorType,
    i1,
    i16,
    i32,
    i64,
)
from xdsl.ir import Attribute, Operation, OpResult, SSAValue
from xdsl.pattern_rewriter import (
    PatternRewriter,
    RewritePattern,
    op_type_rewrite_pattern,
)
from xdsl.rewriter import InsertPoint
from xdsl.utils.exceptions import VerifyException

from mx.compile_memos import compile_memo
from mx.diagnostics import OpDiagnostic
from mx.dialects.memref_ext import PrefetchOp, is_row_major
from mx.lowering.llvm import build
from mx.lowering.llvm.build import POINTER
from mx.lowering.llvm.types import (
    bf16_bits,
    convert_type,
    from_llvm,
    integer_constant,
    memory_type,
    narrowed,
    to_llvm,
    widened,
)
from mx.semantics.index import wrap_index


def _memref_type(value: SSAValue, op: Operation) -> MemRefType:
    """`value`'s memref type, if it lowers to a bare pointer (else an error
    located at `op`, which accesses it)."""
    type_ = value.type
    assert isinstance(type_, MemRefType)
    if not is_row_major(type_):
        raise OpDiagnostic(
            op, f"only identity-layout memrefs lower to bare pointers, got {type_}"
        )
    if DYNAMIC_INDEX in type_.get_shape()[1:]:
        raise OpDiagnostic(
            op,
            "only the leading dimension of a memref may be dynamic with bare "
            f"pointers, got {type_}",
        )
    return type_


def store_size(type_: Attribute) -> int:
    """Bytes between consecutive elements of `type_` in memory (LLVM's
    alloc size of its `memory_type` on x86-64 and AArch64)."""
    type_ = memory_type(type_)
    if isinstance(type_, VectorType):
        lanes = 1
        for size in type_.get_shape():
            lanes *= size
        bits = lanes * _bits(type_.element_type)
    else:
        bits = _bits(type_)
    size = 1
    while size * 8 < bits:
        size *= 2
    return size


def _bits(type_: Attribute) -> int:
    type_ = convert_type(type_)
    if isinstance(type_, IntegerType):
        return type_.width.data
    if isinstance(type_, AnyFloat):
        return type_.bitwidth
    raise VerifyException(f"no memory layout for element type {type_}")


def _i64(value: int, rewriter: PatternRewriter) -> SSAValue:
    return integer_constant(value, i64, rewriter)


def constant_value(value: SSAValue) -> int | None:
    """The integer a constant `value` holds (also through a conversion cast),
    or None."""
    if not isinstance(value, OpResult):
        return None
    owner = value.op
    if isinstance(owner, UnrealizedConversionCastOp):
        return constant_value(owner.inputs[0])
    if isinstance(owner, llvm.ConstantOp | arith.ConstantOp):
        constant = owner.value
        if isinstance(constant, IntegerAttr):
            return constant.value.data
    return None


def element_pointer(
    base: SSAValue,
    indices: Sequence[SSAValue | int],
    op: Operation,
    rewriter: PatternRewriter,
) -> SSAValue:
    """`getelementptr` to `base[indices]` (`index` or `i64` values, or
    constants), row-major: one GEP over the array type of the memref's trailing
    dimensions (`getelementptr [4 x float], ptr %m, i64 %i, i64 %j` for
    `memref<?x4xf32>`), constant indices in the op itself; all-constant
    indices fold to one element offset (0: the base pointer). One op instead of
    the multiply-add chain of a linear index: less to build and translate."""
    type_ = _memref_type(base, op)
    pointer = to_llvm(base, rewriter)
    if not indices:  # a 0-D memref
        return pointer
    shape = type_.get_shape()
    element = memory_type(type_.element_type)
    values = [
        index if isinstance(index, int) else constant_value(index) for index in indices
    ]
    if all(value is not None for value in values):
        offset = 0
        for value, size in zip(values, shape, strict=True):
            offset = wrap_index(offset * size + cast(int, value))
        if not offset:
            return pointer
        return _gep(pointer, element, [offset], rewriter)
    mixed: list[SSAValue | int] = [
        to_llvm(cast(SSAValue, index), rewriter) if value is None else value
        for index, value in zip(indices, values, strict=True)
    ]
    return _gep(pointer, _array_type(tuple(shape[1:]), element), mixed, rewriter)


def _gep(
    pointer: SSAValue,
    source: Attribute,
    indices: Sequence[SSAValue | int],
    rewriter: PatternRewriter,
) -> SSAValue:
    """`getelementptr inbounds source, pointer, indices`; an integer index is
    a constant of the op (an `i64` constant beyond i32's range)."""
    raw: list[int] = []
    operands = [pointer]
    for index in indices:
        if isinstance(index, int) and _RAW_MIN < index <= _RAW_MAX:
            raw.append(index)
            continue
        raw.append(llvm.GEP_USE_SSA_VAL)
        operands.append(_i64(index, rewriter) if isinstance(index, int) else index)
    # `GEPOp.from_mixed_indices` builds the same op, 4x slower (its attributes).
    gep = llvm.GEPOp.create(
        operands=operands,
        result_types=[POINTER],
        properties={
            "rawConstantIndices": _raw_indices(tuple(raw)),
            "elem_type": source,
            "noWrapFlags": _NO_WRAP_FLAGS,
            "inbounds": _INBOUNDS,
        },
    )
    return rewriter.insert(gep).result


@compile_memo
def _raw_indices(raw: tuple[int, ...]) -> DenseArrayBase:
    return DenseArrayBase.from_list(i32, raw)


@compile_memo
def _array_type(dims: tuple[int, ...], element: Attribute) -> Attribute:
    """`element` nested in arrays of `dims` (outermost first)."""
    for size in reversed(dims):
        element = llvm.LLVMArrayType(size, element)
    return element


_RAW_MIN, _RAW_MAX = llvm.GEP_USE_SSA_VAL, 2**31 - 1
"""The constant indices a GEP holds itself (i32; its least value marks an
SSA index)."""
_NO_WRAP_FLAGS = IntegerAttr(0, 32)
_INBOUNDS = UnitAttr()
_NOT_ATOMIC = IntegerAttr(0, i64)


@compile_memo
def _alignment(bytes_: int) -> IntegerAttr[IntegerType]:
    return IntegerAttr(bytes_, i64)


def _element_count(
    type_: MemRefType, dynamic_sizes: Sequence[SSAValue], rewriter: PatternRewriter
) -> SSAValue:
    static = 1
    for size in type_.get_shape():
        if size != DYNAMIC_INDEX:
            static *= size
    count = _i64(static, rewriter)
    for size in dynamic_sizes:
        count = rewriter.insert(llvm.MulOp(count, to_llvm(size, rewriter))).res
    return count


EXTERNAL_FUNCTIONS: dict[str, llvm.LLVMFunctionType] = {
    "malloc": llvm.LLVMFunctionType([i64], llvm.LLVMPointerType()),
    "aligned_alloc": llvm.LLVMFunctionType([i64, i64], llvm.LLVMPointerType()),
    "free": llvm.LLVMFunctionType([llvm.LLVMPointerType()], llvm.LLVMVoidType()),
}
"""The C library functions the lowering calls (and declares where used)."""


def _declare(module_child: Operation, name: str) -> None:
    """Declares the external function `name` in the enclosing module once."""
    module = module_child.get_toplevel_object()
    assert isinstance(module, ModuleOp)
    for op in module.ops:
        if isinstance(op, llvm.FuncOp) and op.sym_name.data == name:
            return
    declaration = llvm.FuncOp(
        name, EXTERNAL_FUNCTIONS[name], linkage=llvm.LinkageAttr("external")
    )
    module.body.block.insert_op_before(declaration, module.body.block.first_op) if (
        module.body.block.first_op is not None
    ) else module.body.block.add_op(declaration)


def load_value(
    pointer: SSAValue,
    type_: Attribute,
    rewriter: PatternRewriter,
    alignment: int | None = None,
) -> SSAValue:
    """Loads a value of `type_` (scalar or vector) from `pointer`: its
    `memory_type`, truncated to `type_` (the bytes' high bits are ignored)."""
    properties: dict[str, Attribute] = {"ordering": _NOT_ATOMIC}
    if alignment is not None:
        properties["alignment"] = _alignment(alignment)
    load = llvm.LoadOp.create(
        operands=[pointer], result_types=[memory_type(type_)], properties=properties
    )
    rewriter.insert(load)
    return narrowed(load.dereferenced_value, type_, rewriter)


def store_value(
    value: SSAValue,
    pointer: SSAValue,
    rewriter: PatternRewriter,
    alignment: int | None = None,
) -> llvm.StoreOp:
    """The `llvm.store` of `value` (already converted) to `pointer` as its
    `memory_type`, zero-extended (the bytes' high bits are written as zero);
    inserts the extension."""
    properties: dict[str, Attribute] = {"ordering": _NOT_ATOMIC}
    if alignment is not None:
        properties["alignment"] = _alignment(alignment)
    return llvm.StoreOp.create(
        operands=[widened(value, rewriter), pointer], properties=properties
    )


class LoadLowering(RewritePattern):
    """memref.load %m[%i, %j] -> llvm.load (gep %m[i*cols + j]), through the
    element's memory type (`i4` -> load i8 + trunc)."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: memref.LoadOp, rewriter: PatternRewriter, /):
        pointer = element_pointer(op.memref, op.indices, op, rewriter)
        value = load_value(pointer, op.res.type, rewriter)
        rewriter.replace(op, [], [from_llvm(value, op.res.type, rewriter)])


class StoreLowering(RewritePattern):
    """memref.store %v, %m[%i, %j] -> llvm.store %v, (gep %m[i*cols + j]),
    through the element's memory type (`i4` -> zext to i8 + store i8)."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: memref.StoreOp, rewriter: PatternRewriter, /):
        pointer = element_pointer(op.memref, op.indices, op, rewriter)
        value = to_llvm(op.value, rewriter)
        rewriter.replace(op, store_value(value, pointer, rewriter))


class PrefetchLowering(RewritePattern):
    """memref.prefetch %m[%i, %j], read, locality<3>, data ->
    llvm.prefetch(gep %m[i*cols + j], 0, 3, 1)."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: PrefetchOp, rewriter: PatternRewriter, /):
        pointer = element_pointer(op.memref, op.indices, op, rewriter)
        hints = [int(op.writes), op.locality, int(op.data)]
        constants = [integer_constant(hint, i32, rewriter) for hint in hints]
        rewriter.replace(
            op, llvm.CallIntrinsicOp("llvm.prefetch", [pointer, *constants], [])
        )


class ExtractAlignedPointerLowering(RewritePattern):
    """memref.extract_aligned_pointer_as_index %m -> llvm.ptrtoint %m (a
    memref is its aligned pointer)."""

    @op_type_rewrite_pattern
    def match_and_rewrite(
        self, op: memref.ExtractAlignedPointerAsIndexOp, rewriter: PatternRewriter, /
    ):
        pointer = to_llvm(op.source, rewriter)
        address = rewriter.insert(llvm.PtrToIntOp(pointer, i64)).results[0]
        rewriter.replace(op, [], [from_llvm(address, op.results[0].type, rewriter)])


class AllocaLowering(RewritePattern):
    """memref.alloca -> llvm.alloca of the element count."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: memref.AllocaOp, rewriter: PatternRewriter, /):
        type_ = _memref_type(op.memref, op)
        count = _element_count(type_, op.dynamic_sizes, rewriter)
        alignment = op.alignment.value.data if op.alignment is not None else 16
        alloca = build.alloca(count, memory_type(type_.element_type), alignment)
        rewriter.replace(op, [alloca], [_cast_back(alloca.res, op, rewriter)])


def _cast_back(pointer: SSAValue, op: Operation, rewriter: PatternRewriter) -> SSAValue:
    return from_llvm(pointer, op.results[0].type, rewriter)


class AllocLowering(RewritePattern):
    """memref.alloc -> llvm.call @malloc(count * element size); with an
    alignment beyond malloc's 16 bytes, @aligned_alloc(alignment, that size
    rounded up to a multiple of the alignment)."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: memref.AllocOp, rewriter: PatternRewriter, /):
        type_ = _memref_type(op.memref, op)
        count = _element_count(type_, op.dynamic_sizes, rewriter)
        size = _i64(store_size(type_.element_type), rewriter)
        bytes_ = rewriter.insert(llvm.MulOp(count, size)).res
        alignment = op.alignment.value.data if op.alignment is not None else 0
        if alignment > 16:
            padded = rewriter.insert(
                llvm.AddOp(bytes_, _i64(alignment - 1, rewriter))
            ).res
            rounded = rewriter.insert(
                llvm.AndOp(padded, _i64(-alignment, rewriter))
            ).res
            _declare(op, "aligned_alloc")
            call = rewriter.insert(
                llvm.CallOp(
                    "aligned_alloc",
                    _i64(alignment, rewriter),
                    rounded,
                    return_type=llvm.LLVMPointerType(),
                )
            )
        else:
            _declare(op, "malloc")
            call = rewriter.insert(
                llvm.CallOp("malloc", bytes_, return_type=llvm.LLVMPointerType())
            )
        assert call.returned is not None
        rewriter.replace(op, [], [_cast_back(call.returned, op, rewriter)])


class DeallocLowering(RewritePattern):
    """memref.dealloc -> llvm.call @free."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: memref.DeallocOp, rewriter: PatternRewriter, /):
        _declare(op, "free")
        rewriter.replace(op, llvm.CallOp("free", to_llvm(op.memref, rewriter)))


class CopyLowering(RewritePattern):
    """memref.copy of a static shape -> llvm.memcpy intrinsic."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: memref.CopyOp, rewriter: PatternRewriter, /):
        type_ = _memref_type(op.source, op)
        if not type_.has_static_shape():
            raise OpDiagnostic(
                op,
                "copying a dynamic memref needs its size, which a bare pointer "
                "does not carry",
            )
        size = _i64(type_.element_count() * store_size(type_.element_type), rewriter)
        volatile = integer_constant(0, i1, rewriter)
        args = [
            to_llvm(op.destination, rewriter),
            to_llvm(op.source, rewriter),
            size,
            volatile,
        ]
        rewriter.replace(op, llvm.CallIntrinsicOp("llvm.memcpy", args, []))


class CastLowering(RewritePattern):
    """memref.cast (static <-> dynamic sizes): the pointer is unchanged."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: memref.CastOp, rewriter: PatternRewriter, /):
        _memref_type(op.dest, op)
        pointer = to_llvm(op.source, rewriter)
        rewriter.replace(op, [], [_cast_back(pointer, op, rewriter)])


class GlobalLowering(RewritePattern):
    """memref.global -> llvm.mlir.global of the flattened element array, of
    the elements' memory type (`i4` values as zero-extended bytes)."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: memref.GlobalOp, rewriter: PatternRewriter, /):
        type_ = op.type
        element = memory_type(type_.element_type)
        array = llvm.LLVMArrayType(type_.element_count(), element)
        initial = op.initial_value
        value: Attribute | None = None
        if isinstance(initial, DenseIntOrFPElementsAttr):
            value = initial
            stored = initial.get_element_type()
            if isinstance(stored, BFloat16Type):  # held as i16
                value = DenseIntOrFPElementsAttr.from_list(
                    TensorType(i16, initial.get_shape()),
                    bf16_bits(cast(list[float], initial.get_values())),
                )
            elif element != stored:
                assert isinstance(stored, IntegerType)
                assert isinstance(element, IntegerType)
                mask = (1 << stored.width.data) - 1
                value = DenseIntOrFPElementsAttr.from_list(
                    TensorType(element, initial.get_shape()),
                    [cast(int, v) & mask for v in initial.get_values()],
                )
        linkage = "private" if op.sym_visibility.data == "private" else "external"
        rewriter.replace(
            op,
            llvm.GlobalOp(
                array,
                op.sym_name,
                linkage,
                constant=op.constant is not None,
                value=value,
                alignment=op.alignment.value.data if op.alignment is not None else None,
            ),
        )


class GetGlobalLowering(RewritePattern):
    """memref.get_global @g -> llvm.mlir.addressof @g."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: memref.GetGlobalOp, rewriter: PatternRewriter, /):
        address = rewriter.insert(
            llvm.AddressOfOp(op.name_, llvm.LLVMPointerType())
        ).result
        rewriter.replace(op, [], [_cast_back(address, op, rewriter)])


MEMREF_PATTERNS: tuple[RewritePattern, ...] = (
    LoadLowering(),
    StoreLowering(),
    PrefetchLowering(),
    ExtractAlignedPointerLowering(),
    AllocaLowering(),
    AllocLowering(),
    DeallocLowering(),
    CopyLowering(),
    CastLowering(),
    GlobalLowering(),
    GetGlobalLowering(),
)


__all__ = [
    "EXTERNAL_FUNCTIONS",
    "MEMREF_PATTERNS",
    "InsertPoint",
    "constant_value",
    "element_pointer",
    "load_value",
    "store_size",
    "store_value",
]

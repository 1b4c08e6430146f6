"""Type conversion to the `llvm` dialect and the casts that bridge it.

Memrefs become one opaque `!llvm.ptr` to their first element (bare-pointer
convention), `index` becomes `i64`, `bf16` becomes `i16` (its bits; see
`convert_type`); other scalars and vectors are kept. In memory an
integer whose width is not a whole number of bytes (the `i4`/`i6` containers,
`i1`) takes whole bytes, as C's `uint8_t` does: `memory_type` says which.
Function arguments and results cross calls in their memory type too, so
that the C signature of `(i4) -> i6` is `uint8_t f(uint8_t)`. Patterns
convert operands with `to_llvm` and hand results back with `from_llvm`; the
`builtin.unrealized_conversion_cast` pairs that this leaves are reconciled at
the end of the pass.
"""

from array import array
from collections.abc import Callable, Generator, Sequence
from contextlib import contextmanager

from xdsl.dialects import func, llvm
from xdsl.dialects.builtin import (
    BFloat16Type,
    IndexType,
    IntegerAttr,
    IntegerType,
    MemRefType,
    UnrealizedConversionCastOp,
    VectorType,
    i16,
    i64,
)
from xdsl.ir import Attribute, Block, Operation, OpResult, SSAValue
from xdsl.pattern_rewriter import PatternRewriter
from xdsl.rewriter import InsertPoint
from xdsl.utils.exceptions import VerifyException

from mx.lowering.build import cast
from mx.lowering.llvm.build import POINTER, constant, undef


def convert_type(type_: Attribute) -> Attribute:
    """The `llvm`-dialect type that a standard-dialect type lowers to.

    A `bf16` value is held as the `i16` of its bits, in registers and in
    memory, so LLVM never sees a bf16 vector: its X86 back end legalizes
    those per CPU, and aborted on some (a bf16 splat on AVX512-BF16 CPUs
    without AVX512-FP16, `<16 x bfloat>` arguments without AVX in LLVM 16).
    bf16 arithmetic reaches LLVM as f32 (`narrow_floats`), so only loads,
    stores, lane moves and selects see these `i16`s. Only a scalar bf16
    function argument or result stays `bfloat` (`boundary_type`)."""
    if isinstance(type_, MemRefType):
        return POINTER
    if isinstance(type_, IndexType):
        return i64
    if isinstance(type_, BFloat16Type):
        return i16
    if isinstance(type_, VectorType) and isinstance(
        type_.element_type, IndexType | BFloat16Type
    ):
        return VectorType(convert_type(type_.element_type), type_.get_shape())
    return type_


def memory_type(type_: Attribute) -> Attribute:
    """The type one element of `type_` (scalar or vector) is loaded and stored
    as: integers of a width that is not a multiple of 8 are widened to the
    next of i8/i16/i32/i64 (`vector<8xi4>` is 8 bytes, not 4 as LLVM packs
    `<8 x i4>`). Loads truncate (the high bits are ignored), stores
    zero-extend (the high bits are written as zero)."""
    type_ = convert_type(type_)
    if isinstance(type_, VectorType):
        element = memory_type(type_.element_type)
        if element == type_.element_type:
            return type_
        return VectorType(element, type_.get_shape())
    if isinstance(type_, IntegerType) and type_.width.data % 8:
        width = 8
        while width < type_.width.data:
            width *= 2
        return IntegerType(width)
    return type_


def bf16_bits(values: Sequence[float]) -> list[int]:
    """The bits of bf16 `values`, as the `i16`s that hold them (signed)."""
    packed = BFloat16Type().pack(values)
    return [b - (1 << 16) if b >> 15 else b for b in array("H", packed)]


def boundary_type(type_: Attribute) -> Attribute:
    """The type a value of `type_` crosses a call in: its `memory_type`, but
    a scalar `bf16` stays `bfloat` (C's `__bf16`, passed in a vector
    register as an `i16` would not be)."""
    if isinstance(type_, BFloat16Type):
        return type_
    return memory_type(type_)


def to_boundary(
    value: SSAValue, type_: Attribute, rewriter: PatternRewriter
) -> SSAValue:
    """A converted `value` of original type `type_` as its `boundary_type`."""
    if isinstance(type_, BFloat16Type):
        return rewriter.insert(llvm.BitcastOp(value, type_)).result
    return widened(value, rewriter)


def from_boundary(
    value: SSAValue, type_: Attribute, rewriter: PatternRewriter
) -> SSAValue:
    """A value of `boundary_type(type_)` as the converted `type_`."""
    if isinstance(type_, BFloat16Type):
        return rewriter.insert(llvm.BitcastOp(value, i16)).result
    return narrowed(value, type_, rewriter)


def widened(value: SSAValue, rewriter: PatternRewriter) -> SSAValue:
    """A converted `value` zero-extended to its `memory_type` (unchanged when
    that is its type)."""
    wide = memory_type(value.type)
    if wide == value.type:
        return value
    return rewriter.insert(llvm.ZExtOp(value, wide)).res


def narrowed(value: SSAValue, type_: Attribute, rewriter: PatternRewriter) -> SSAValue:
    """A value of `memory_type(type_)` truncated to the converted `type_` (the
    high bits are ignored)."""
    type_ = convert_type(type_)
    if value.type == type_:
        return value
    return rewriter.insert(llvm.TruncOp(value, type_)).res


def to_llvm(value: SSAValue, rewriter: PatternRewriter) -> SSAValue:
    """`value` as its converted type, inserting a cast before the matched op."""
    target = convert_type(value.type)
    if target == value.type:
        return value
    if (
        isinstance(value, OpResult)
        and isinstance(value.op, UnrealizedConversionCastOp)
        and value.op.inputs[0].type == target
    ):
        return value.op.inputs[0]
    return rewriter.insert(cast(value, target)).results[0]


def from_llvm(
    value: SSAValue, original: Attribute, rewriter: PatternRewriter
) -> SSAValue:
    """Casts a lowered `value` back to the `original` type its users expect."""
    if value.type == original:
        return value
    return rewriter.insert(cast(value, original)).results[0]


def integer_width(type_: Attribute) -> int:
    """Bit width of an integer (or index) type, or of a vector's elements."""
    if isinstance(type_, VectorType):
        type_ = type_.element_type
    type_ = convert_type(type_)
    assert isinstance(type_, IntegerType)
    return type_.width.data


def require_1d_vector(type_: VectorType, op_name: str) -> int:
    """LLVM vectors are 1-D; returns the length or raises a diagnostic."""
    if type_.get_num_dims() != 1 or type_.get_scalable_dims() != (False,):
        raise VerifyException(
            f"'{op_name}': only fixed-size 1-D vectors lower to LLVM, got {type_}"
        )
    return type_.get_shape()[0]


_pools: list[dict[tuple[Block, int | None, Attribute], Operation]] = []


@contextmanager
def constant_pool() -> Generator[None]:
    """While active, `integer_constant` and `undef_value` share each value of
    a function: one `llvm.mlir.constant` (or `llvm.mlir.undef`) at the start
    of its entry block instead of one per use (a quarter of the ops
    `convert-to-llvm` built)."""
    _pools.append({})
    try:
        yield
    finally:
        _pools.pop()


def _entry_block(op: Operation | None) -> Block | None:
    while op is not None and not isinstance(op, func.FuncOp | llvm.FuncOp):
        op = op.parent_op()
    if op is None or not op.regions[0].blocks:
        return None
    return op.regions[0].blocks.first


def _shared(
    value: int | None,
    type_: Attribute,
    make: Callable[[], Operation],
    rewriter: PatternRewriter,
) -> SSAValue:
    """The result of `make()`, the op of `value` (None: undef) and `type_`:
    one per function at the start of its entry block while a
    `constant_pool` is active, else inserted where the rewriter is."""
    entry = _entry_block(rewriter.insertion_point.block.parent_op()) if _pools else None
    if entry is None:
        return rewriter.insert(make()).results[0]
    key = (entry, value, type_)
    shared = _pools[-1].get(key)
    if shared is None or shared.parent is not entry:  # new, or erased as dead
        shared = make()
        rewriter.insert(shared, InsertPoint.at_start(entry))
        _pools[-1][key] = shared
    return shared.results[0]


def integer_constant(
    value: int, type_: IntegerType, rewriter: PatternRewriter
) -> SSAValue:
    """An `llvm.mlir.constant` of `type_`, shared within the function of the
    op being rewritten when a `constant_pool` is active."""
    return _shared(
        value, type_, lambda: constant(IntegerAttr(value, type_), type_), rewriter
    )


def undef_value(type_: Attribute, rewriter: PatternRewriter) -> SSAValue:
    """An `llvm.mlir.undef` of `type_` (a vector to insert lanes into, say),
    shared like `integer_constant`'s constants: each use of it in LLVM IR is
    the literal `undef`."""
    return _shared(None, type_, lambda: undef(type_), rewriter)

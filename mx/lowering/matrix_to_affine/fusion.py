"""Which matrix ops are fused into their consumer instead of getting a buffer.

A fused op emits no code of its own: each consumer computes the op's element
(r, c) where it needs it, from the op's operands. Fused are
- views: `splat`, a splat-valued `constant`, elementwise ops computing a
  splat from splats only (a matrix of any size, recomputed as one scalar
  wherever it is read), and a `transpose` of a value that has a buffer (or is
  itself a view) — read with swapped indices, any number of times;
- loads and scaled_convert_from read by a matmul/matmul_add as a factor (read
  where the product needs them: it writes only its own buffer), so a product
  of block-scaled, packed weights decodes them in registers; and so are
  dequantizations of such factors (`is_decode`: decoded in registers each
  time the product reads them, rather than a buffer of the wider type);
- elementwise ops (add, sub, mul, div, neg, fma, cast, arbfp conversions
  including scaled_convert_from, outer_product, transpose) and loads whose only use reads each element once at
  the same point of the same block (another elementwise op, extract, insert's
  matrix, matvec's matrix, matmul_add's accumulator, a store, a func.return).
So a chain of elementwise ops becomes one loop nest with no intermediate buffer.

A load is fused only if nothing between it and the op that finally emits the
chain may write memory, and, when that op is a store, the store cannot clobber
elements the chain still has to read: it writes the same memref with the same
layout, offset and stride at the same (r, c) (no transpose in between), or the
two memrefs are distinct allocations.
"""

from dataclasses import dataclass, field

from xdsl.dialects import arith, func, memref, vector
from xdsl.ir import Block, BlockArgument, Operation, SSAValue, Use
from xdsl.traits import MemoryEffectKind, get_effects

from mx.dialects import arbfp
from mx.dialects.dense_literal import is_splat_literal
from mx.dialects.matrix import (
    AddOp,
    CastOp,
    ConstantOp,
    DivOp,
    ExtractOp,
    FmaOp,
    InsertOp,
    LoadOp,
    MatmulAddOp,
    MatmulOp,
    MatrixType,
    MatvecOp,
    MixedIndex,
    MulOp,
    NegOp,
    OuterProductOp,
    SplatOp,
    StoreOp,
    SubOp,
    TransposeOp,
    element_type_of,
    widens_exactly,
)
from mx.lowering.walk import walk

ELEMENTWISE = (
    AddOp,
    SubOp,
    MulOp,
    DivOp,
    NegOp,
    FmaOp,
    CastOp,
    TransposeOp,
    arbfp.ConvertFromOp,
    arbfp.ConvertToOp,
    arith.SelectOp,
)
"""Ops whose result element (r, c) reads each operand once (at (r, c) or (c, r))
(`arith.select` when it selects matrices)."""

BLOCK_SCALED = (arbfp.ScaledConvertFromOp,)
"""Ops elementwise in their first operand only (their scales operand, read
at (r, c // N) by N elements, gets a buffer: the copy streams a load's
scales into cache in order, and reading them in place instead made the
row-major MXFP4 decode of cold 2048x4096 weights 12-20 % slower, the
column-major one no faster; bench/results/spellings.md, session 28)."""


def is_splat_constant(op: ConstantOp) -> bool:
    """True if every element has the same bits (0.0 and -0.0 differ)."""
    return is_splat_literal(op.value)


def reads_elementwise(use: Use) -> bool:
    """True if `use.operation` reads each element of the operand at most once,
    all at the user's own program point."""
    user = use.operation
    if isinstance(user, (*ELEMENTWISE, ExtractOp, StoreOp, func.ReturnOp)):
        return True
    if isinstance(user, (InsertOp, *BLOCK_SCALED)):
        return use.index == (1 if isinstance(user, InsertOp) else 0)
    if isinstance(user, MatmulAddOp):
        return use.index == 2
    return isinstance(user, MatvecOp) and use.index == 0


def reads_in_place(use: Use) -> bool:
    """True if `use.operation` reads its operand's elements, any number of
    times, without writing memory before the last read: a product's factors
    (the product is computed into a fresh buffer)."""
    return isinstance(use.operation, MatmulOp | MatmulAddOp) and use.index < 2


def is_widening(op: Operation) -> bool:
    """True for a `cast` that converts every element exactly (a widening)."""
    return isinstance(op, CastOp) and widens_exactly(
        element_type_of(op.input.type), element_type_of(op.result.type)
    )


def _is_splat(op: Operation | Block) -> bool:
    return isinstance(op, SplatOp) or (
        isinstance(op, ConstantOp) and is_splat_constant(op)
    )


def is_decode(op: Operation) -> bool:
    """True for the steps of a dequantization, cheap to recompute from the
    narrower data: an `arbfp.convert_from`, an exact widening `cast`, a
    multiply by a splat (the scale)."""
    if isinstance(op, arbfp.ConvertFromOp) or is_widening(op):
        return True
    return isinstance(op, MulOp) and any(_is_splat(x.owner) for x in op.operands)


def decodes_packed(value: SSAValue, fused: set[Operation]) -> bool:
    """True if computing the elements of `value` reads packed memory (a
    fused chain containing a packed load)."""
    pending = [value]
    while pending:
        op = pending.pop().owner
        if isinstance(op, Operation) and op in fused:
            if isinstance(op, LoadOp) and op.is_packed:
                return True
            pending += [x for x in op.operands if isinstance(x.type, MatrixType)]
    return False


def _is_elementwise_producer(op: Operation) -> bool:
    return (
        isinstance(op, (*ELEMENTWISE, *BLOCK_SCALED, OuterProductOp, LoadOp))
        and len(op.results) == 1
        and isinstance(op.results[0].type, MatrixType)
    )


def _has_buffer_or_is_view(value: SSAValue) -> bool:
    """True if `value` certainly gets a buffer or is a view (read any number
    of times at no cost)."""
    while isinstance(transpose := value.owner, TransposeOp):
        value = transpose.input
    if isinstance(value, BlockArgument):
        return True
    op = value.owner
    assert isinstance(op, Operation)
    if isinstance(op, SplatOp | ConstantOp):
        return True
    return not _is_elementwise_producer(op) or value.has_more_than_one_use()


def may_write_memory(op: Operation) -> bool:
    if isinstance(op, vector.LoadOp):  # declares no effects in xDSL, only reads
        return False
    effects = get_effects(op)
    return effects is None or any(
        e.kind in (MemoryEffectKind.WRITE, MemoryEffectKind.FREE) for e in effects
    )


def _same_index(a: MixedIndex, b: MixedIndex) -> bool:
    return a is b if isinstance(a, SSAValue) or isinstance(b, SSAValue) else a == b


def _is_allocation(value: SSAValue) -> bool:
    return isinstance(value.owner, memref.AllocOp | memref.AllocaOp)


def store_cannot_clobber(load: LoadOp, store: StoreOp, transposed: bool) -> bool:
    """True if writing `store` element by element never overwrites an element
    of `load` that a later element of the same loop nest still reads."""
    if load.memref is store.memref:
        return (
            not transposed
            and load.COLUMN_MAJOR == store.COLUMN_MAJOR
            and load.is_packed == store.is_packed
            and load.result.type == store.value.type
            and _same_index(load.offset(), store.offset())
            and _same_index(load.stride(), store.stride())
        )
    return _is_allocation(load.memref) and _is_allocation(store.memref)


@dataclass
class FusionPlan:
    """The set of fused ops of a module (computed before any rewrite)."""

    fused: set[Operation] = field(default_factory=set[Operation])
    splats: set[Operation] = field(default_factory=set[Operation])
    """The ops whose matrix result is a splat: `splat`, splat constants, and
    elementwise ops of splats."""

    def analyze(self, top: Operation) -> None:
        for op in walk(top):
            if _is_splat(op) or (
                isinstance(op, ELEMENTWISE)
                and _is_elementwise_producer(op)
                and all(
                    x.owner in self.splats
                    for x in op.operands
                    if isinstance(x.type, MatrixType)
                )
            ):
                self.splats.add(op)
        for op in walk(top):
            for region in op.regions:
                for block in region.blocks:
                    self._analyze_block(block)

    def _analyze_block(self, block: Block) -> None:
        # Users come later in the block: decide them first.
        for op in reversed(list(block.ops)):
            if self._decide(op):
                self.fused.add(op)

    def _decide(self, op: Operation) -> bool:
        if isinstance(op, SplatOp):
            return True
        if isinstance(op, ConstantOp):
            return is_splat_constant(op)
        if not _is_elementwise_producer(op):
            return False
        if op in self.splats:
            return True
        if isinstance(op, TransposeOp) and _has_buffer_or_is_view(op.input):
            return True
        uses = list(op.results[0].uses)
        if len(uses) != 1:
            return False
        (use,) = uses
        if use.operation.parent is not op.parent:
            return False
        if isinstance(op, LoadOp) and reads_in_place(use):
            return self._load_is_safe(op)
        if (is_decode(op) or isinstance(op, BLOCK_SCALED)) and reads_in_place(use):
            return True  # decoded where the product reads it
        if not reads_elementwise(use):
            return False
        if isinstance(op, LoadOp):
            return self._load_is_safe(op)
        return True

    def _load_is_safe(self, load: LoadOp) -> bool:
        transposed = False
        root: Operation = load
        while root is load or root in self.fused:
            transposed |= isinstance(root, TransposeOp)
            (use,) = root.results[0].uses
            root = use.operation
        between = load.next_op
        while between is not None and between is not root:
            if between not in self.fused and may_write_memory(between):
                return False
            between = between.next_op
        if isinstance(root, StoreOp):
            return store_cannot_clobber(load, root, transposed)
        return True

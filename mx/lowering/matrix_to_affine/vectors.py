"""Vector code for lowered matrices: blocks of contiguous elements.

A block is `width` consecutive elements of one column (rows r..r+width-1 of
column c: "along rows") or of one row ("along columns"). Buffers and
column-major loads are contiguous along rows, row-major loads along columns, a
splat in both directions; a transpose swaps the direction. A fused elementwise
op computes its block from its operands' blocks with the same `arith`/`math`
op on vectors, so every lane is rounded exactly as the scalar element would be;
an `arbfp.convert_from` or an exact widening `cast` decodes its source's block
in registers (dequantized data reaches a product or a chain without a buffer
of the wider type).

Every arithmetic element type is vectorized (f16, bf16, f32, f64, i8..i64):
their vectors are stored densely and `convert-to-llvm` lowers their arithmetic
lane by lane as on scalars (f16 natively or through f32, each op rounded to
f16; bf16 promoted to f32 and rounded back with integer arithmetic, see
`mx.lowering.llvm.narrow_floats`), so a vector lane rounds exactly as the
scalar element. The `i4`/`i6` containers keep the scalar loop nests.
"""

from collections.abc import Callable
from typing import overload

from xdsl.dialects import arith, llvm
from xdsl.dialects.builtin import (
    IntegerType,
    VectorType,
    i32,
)
from xdsl.ir import Attribute, BlockArgument, Operation, SSAValue

from mx.compile_memos import compile_memo
from mx.dialects import arbfp
from mx.dialects.arbfp import ScaledConvertFromOp
from mx.dialects.matrix import (
    AddOp,
    CastOp,
    ConstantOp,
    DivOp,
    FmaOp,
    LoadOp,
    MatrixType,
    MulOp,
    NegOp,
    SplatOp,
    StoreOp,
    SubOp,
    TransposeOp,
    element_type_of,
    is_arithmetic_element,
)
from mx.dialects.memref_ext import PrefetchOp
from mx.lowering import build
from mx.lowering.convert_arbfp_to_arith import emit_scaled_convert_from
from mx.lowering.matrix_to_affine.block_scaled import block_index
from mx.lowering.matrix_to_affine.buffers import element_bytes
from mx.lowering.matrix_to_affine.elements import (
    Emitter,
    Index,
    buffer_of,
    conversion,
    element_operands,
    elementwise_scalar,
    widen,
)
from mx.lowering.matrix_to_affine.fusion import is_splat_constant, is_widening
from mx.lowering.matrix_to_affine.packed import (
    read_packed_block,
    read_packed_nibbles,
    vector_block_access,
    write_packed_block,
)
from mx.passes.outline_parallel_loops import mark_parallel

Segment = tuple[int, int, int]
"""(start, width, count): `count` consecutive blocks of `width` from `start`."""

BlockBody = Callable[[Emitter, Index, SSAValue, int], None]
"""Emits the work on the block at (minor index, major index, width)."""


def vectorizable(t: Attribute) -> bool:
    """True for element types handled in vectors."""
    return is_arithmetic_element(t)


def lanes(t: Attribute, vector_bits: int) -> int:
    """Elements of type `t` in one machine vector of `vector_bits`."""
    return max(1, vector_bits // (8 * element_bytes(t)))


def segments(size: int, width: int) -> list[Segment]:
    """Blocks covering [0, size): full blocks of `width`, then one block per
    power of two of the remainder (so no lane is ever read or written past
    the end)."""
    full, rest = divmod(size, width)
    out: list[Segment] = [(0, width, full)] if full else []
    start = full * width
    while rest:
        while width > rest:
            width //= 2
        out.append((start, width, 1))
        start += width
        rest -= width
    return out


@overload
def block_start(e: Emitter, start: int, width: int, block: SSAValue) -> SSAValue: ...


@overload
def block_start(e: Emitter, start: int, width: int, block: int) -> int: ...


def block_start(e: Emitter, start: int, width: int, block: Index) -> Index:
    """`start + block * width` as an index."""
    if isinstance(block, int):
        return start + block * width
    scaled = e.emit(build.binary(arith.MuliOp, block, e.index(width)))
    if start == 0:
        return scaled
    return e.emit(build.binary(arith.AddiOp, scaled, e.index(start)))


def offset(e: Emitter, base: Index, by: int) -> Index:
    """`base + by` as an index."""
    if isinstance(base, int):
        return base + by
    return base if by == 0 else e.emit(build.binary(arith.AddiOp, base, e.index(by)))


def for_each_segment(
    e: Emitter,
    size: int,
    width: int,
    body: Callable[[Emitter, Index, int], None],
    parallel: bool = False,
) -> None:
    """Calls `body(e, start, width)` for every block of `segments(size, width)`;
    a run of several blocks becomes one affine.for (marked parallel with
    `parallel`: the blocks are independent)."""
    for start, w, count in segments(size, width):

        def one(f: Emitter, b: Index, start: int = start, w: int = w) -> None:
            body(f, block_start(f, start, w, b), w)

        for_each_index(e, count, one, parallel)


def for_each_index(
    e: Emitter,
    count: int,
    body: Callable[[Emitter, Index], None],
    parallel: bool = False,
):
    """Calls `body(e, i)` for every `i < count`: in one affine.for, or with the
    literal 0 when `count` is 1 (a loop of one trip would be carried, as
    blocks, branches and induction arithmetic, through every later pass).
    With `parallel`, the loop is marked parallel (`outline-parallel-loops`)."""
    if count == 1:
        body(e, 0)
        return

    def one(f: Emitter, i: SSAValue, _: object) -> list[SSAValue]:
        if parallel:
            assert isinstance(i, BlockArgument)
            mark_parallel(i.block)
        body(f, i)
        return []

    e.loop(0, count, [], one)


def for_each_block(
    e: Emitter, t: MatrixType, along_rows: bool, width: int, body: BlockBody
) -> None:
    """Loops over the columns (rows if not `along_rows`); inside, over the
    blocks of at most `width` elements along the other dimension."""
    major, minor = (t.cols, t.rows) if along_rows else (t.rows, t.cols)

    def line(f: Emitter, m: SSAValue, _: object) -> list[SSAValue]:
        for_each_segment(f, minor, width, lambda g, i, w: body(g, i, m, w))
        return []

    e.loop(0, major, [], line)


@compile_memo
def _vector_of(t: Attribute, width: int) -> VectorType:
    """`vector<width x t>`, built once (xDSL verifies every type it builds)."""
    return VectorType(t, [width])


def _readable_op(op: Operation, t: MatrixType, along_rows: bool) -> bool:
    """True if the fused `op` computes its blocks in that direction from
    its operands' blocks (which must be readable too), or reads them itself."""
    if isinstance(op, SplatOp | TransposeOp | arith.SelectOp):
        return True
    if isinstance(op, ConstantOp):
        return is_splat_constant(op)
    if isinstance(op, LoadOp):
        return along_rows is op.COLUMN_MAJOR and (
            not op.is_packed or vector_block_access(op)
        )
    if isinstance(op, arbfp.ConvertFromOp) or is_widening(op):
        return True
    if isinstance(op, ScaledConvertFromOp):
        # Along columns a block could straddle two scale blocks.
        return along_rows
    if isinstance(t.element_type, IntegerType):
        return isinstance(op, AddOp | SubOp | MulOp)
    return isinstance(op, AddOp | SubOp | MulOp | DivOp | NegOp | FmaOp)


BlockKey = tuple[SSAValue, Index, Index, bool]
"""(value, row, column, along rows): one block of a lowered matrix."""


def _block_operands(
    op: Operation, r: Index, c: Index, along_rows: bool
) -> list[BlockKey]:
    """The blocks of its matrix operands the block of the fused `op`
    starting at (r, c) is computed from (for scaled_convert_from, which
    reads its operands itself in `_scaled_block`, only which values)."""
    if isinstance(op, TransposeOp):
        return [(op.input, c, r, not along_rows)]
    if isinstance(op, ScaledConvertFromOp):
        return [(op.input, r, c, along_rows), (op.scales, r, c, along_rows)]
    return [(x, i, j, along_rows) for x, i, j in element_operands(op, r, c)]


def readable(
    value: SSAValue, fused: set[Operation], along_rows: bool, as_bits: bool = False
) -> bool:
    """True if blocks of the lowered matrix `value` along that direction can
    be read as vectors; `as_bits`: an i4/i6 `value` is only moved, not
    converted (a copy into packed memory)."""
    pending = [(value, along_rows, as_bits)]
    while pending:
        value, rows, as_bits = pending.pop()
        if buffer_of(value) is not None:
            # An i4/i6 buffer read by a conversion stays scalar, but for the
            # encodings of a scaled_convert_from (`as_bits`), which widens the
            # loaded vector to 32-bit lanes before any arithmetic.
            vector_bytes = as_bits or vectorizable(element_type_of(value.type))
            if not rows or not vector_bytes:
                return False
            continue
        op = value.owner
        if not isinstance(op, Operation) or op not in fused:
            return False
        t = op.results[0].type
        assert isinstance(t, MatrixType)
        in_vectors = vectorizable(t.element_type) or (
            isinstance(op, LoadOp) and vector_block_access(op)
        )
        if not in_vectors or not _readable_op(op, t, rows):
            return False
        scaled = isinstance(op, ScaledConvertFromOp)
        pending += [(x, d, scaled) for x, _, _, d in _block_operands(op, 0, 0, rows)]
    return True


def read_block(
    e: Emitter, value: SSAValue, r: Index, c: Index, width: int, along_rows: bool
) -> SSAValue:
    """The block of `value` starting at element (r, c) (`readable` holds),
    operands first (with an explicit stack, as `Emitter.element`)."""
    computed: list[SSAValue] = []
    stack: list[tuple[BlockKey, bool]] = [((value, r, c, along_rows), False)]
    while stack:
        (v, i, j, rows), ready = stack.pop()
        t = v.type
        assert isinstance(t, MatrixType)
        vt = _vector_of(t.element_type, width)
        if (buffer := buffer_of(v)) is not None:
            computed.append(
                e.emit(build.vector_load(buffer, [e.index(j), e.index(i)], vt))
            )
            continue
        op = v.owner
        assert isinstance(op, Operation)
        if isinstance(op, ScaledConvertFromOp):
            computed.append(_scaled_block(e, op, i, j, width))
            continue
        needs = _block_operands(op, i, j, rows)
        if not ready:
            stack.append(((v, i, j, rows), True))
            stack += [(n, False) for n in reversed(needs)]
            continue
        first = len(computed) - len(needs)
        operands = computed[first:]
        del computed[first:]
        if isinstance(op, SplatOp | ConstantOp):
            block = e.emit(build.broadcast(e.compute_element(op, i, j), vt))
        elif isinstance(op, TransposeOp):
            block = operands[0]
        elif isinstance(op, arith.SelectOp):
            block = e.emit(arith.SelectOp(op.cond, *operands))
        elif isinstance(op, LoadOp) and op.is_packed:
            block = read_packed_block(e, op, i, j, width)
        elif isinstance(op, LoadOp):
            position = e.index(e.position(op, i, j))
            block = e.emit(build.vector_load(op.memref, [position], vt))
        elif isinstance(op, CastOp):
            block = widen(e, operands[0], t.element_type, op.unsigned is not None)
        elif isinstance(op, arbfp.ConvertFromOp):
            block = e.emit(conversion(op, operands[0], vt))
        else:
            assert isinstance(op, AddOp | SubOp | MulOp | DivOp | NegOp | FmaOp)
            block = e.emit(elementwise_scalar(op, operands, t.element_type))
        computed.append(block)
    (result,) = computed
    return result


def prefetch_block(
    e: Emitter, value: SSAValue, r: Index, c: Index, locality: int = 3
) -> None:
    """A prefetch of element (r, c) of `value`'s memory into L1 (`locality`
    3) or L2 (2), when `value` is read from memory: its buffer, or the
    user's memory of a fused (unpacked) load, seen through a fused
    `matrix.cast`; nothing for a value computed from others."""
    cast_op = value.owner
    if isinstance(cast_op, CastOp) and cast_op in e.fused:
        value = cast_op.input
    if (buffer := buffer_of(value)) is not None:
        at = [e.index(c), e.index(r)]
        e.builder.insert(PrefetchOp(buffer, at, locality=locality))
        return
    op = value.owner
    if isinstance(op, LoadOp) and op in e.fused and not op.is_packed:
        at = [e.index(e.position(op, r, c))]
        e.builder.insert(PrefetchOp(op.memref, at, locality=locality))


def _scaled_block(
    e: Emitter, op: ScaledConvertFromOp, r: Index, c: Index, width: int
) -> SSAValue:
    """The block along rows of a fused scaled_convert_from at (r, c): its
    elements and the scales of column c // N, zero-extended to 32-bit lanes
    (whole-vector extensions; packed i4 nibbles are widened as bytes,
    before they are split), decoded by convert-arbfp-to-arith's arithmetic."""
    lanes = VectorType(i32, [width])
    load = op.input.owner
    if isinstance(load, LoadOp) and load in e.fused and load.is_packed:
        bits = read_packed_nibbles(e, load, r, c, width, i32)
    else:
        bits = read_block(e, op.input, r, c, width, True)
        bits = e.emit(llvm.ZExtOp(bits, lanes))
    column = block_index(e, c, op.block_size)
    scales = read_block(e, op.scales, r, column, width, True)
    scales = e.emit(llvm.ZExtOp(scales, lanes))
    t = op.result.type
    assert isinstance(t, MatrixType)
    ops, block = emit_scaled_convert_from(
        op.float_format,
        op.scale_float_format,
        bits,
        scales,
        _vector_of(t.element_type, width),
    )
    for scaled in ops:
        e.builder.insert(scaled)
    return block


def write_block(
    e: Emitter, block: SSAValue, target: SSAValue | StoreOp, r: Index, c: Index
) -> None:
    """Store `block` at element (r, c) of a buffer (along rows) or of the
    memory a matrix store writes (along its contiguous dimension)."""
    if isinstance(target, StoreOp) and target.is_packed:
        write_packed_block(e, block, target, r, c)
    elif isinstance(target, StoreOp):
        position = e.index(e.position(target, r, c))
        e.builder.insert(build.vector_store(block, target.memref, [position]))
    else:
        e.builder.insert(build.vector_store(block, target, [e.index(c), e.index(r)]))


def copy_blocks(
    e: Emitter, value: SSAValue, target: SSAValue | StoreOp, vector_bits: int
) -> bool:
    """Writes every element of `value` into `target` (a buffer or a matrix
    store) with vector loads and stores, if possible; False if not (nothing
    is emitted then)."""
    t = value.type
    assert isinstance(t, MatrixType)
    along_rows = not isinstance(target, StoreOp) or target.COLUMN_MAJOR
    if vector_bits == 0 or not _copied_in_vectors(value, target):
        return False
    into_packed = isinstance(target, StoreOp) and target.is_packed
    if not readable(value, e.fused, along_rows, into_packed):
        tile = _tile(t, lanes(t.element_type, vector_bits))
        if tile < 2 or not readable(value, e.fused, not along_rows):
            return False
        _copy_transposed(e, value, target, along_rows, tile)
        return True

    def body(f: Emitter, i: Index, m: SSAValue, w: int) -> None:
        r, c = (i, m) if along_rows else (m, i)
        write_block(f, read_block(f, value, r, c, w, along_rows), target, r, c)

    for_each_block(e, t, along_rows, lanes(t.element_type, vector_bits), body)
    return True


def _copied_in_vectors(value: SSAValue, target: SSAValue | StoreOp) -> bool:
    """True for arithmetic elements, and for i4 read from or written to
    packed memory in whole bytes (other containers stay scalar)."""
    t = value.type
    assert isinstance(t, MatrixType)
    if vectorizable(t.element_type):
        return True
    if isinstance(target, StoreOp) and target.is_packed:
        return vector_block_access(target)
    load = value.owner
    return isinstance(load, LoadOp) and load.is_packed and vector_block_access(load)


def _tile(t: MatrixType, lanes: int) -> int:
    """The side of the square tiles a transposing copy works on: the largest
    power of two within `lanes` dividing both dimensions."""
    tile = 1
    while 2 * tile <= lanes and t.rows % (2 * tile) == 0 and t.cols % (2 * tile) == 0:
        tile *= 2
    return tile


def lanes_of(e: Emitter, v: SSAValue, first: int, count: int) -> SSAValue:
    """Lanes first .. first+count-1 of the vector `v` (`v` if that is all)."""
    t = v.type
    assert isinstance(t, VectorType)
    if t.get_shape()[0] == count:
        return v
    part = VectorType(t.element_type, [count])
    return e.emit(build.shuffle(v, v, range(first, first + count), part))


def transpose_tile(e: Emitter, lines: list[SSAValue]) -> list[SSAValue]:
    """The columns of the square tile whose rows are `lines`: log2(n) rounds
    of interleaving line i with line i + n/2 (a perfect shuffle)."""
    n = len(lines)
    half = n // 2
    vt = lines[0].type
    assert isinstance(vt, VectorType)
    low, high = build.interleaving(0, half, n), build.interleaving(half, half, n)
    for _ in range(n.bit_length() - 1):
        interleaved: list[SSAValue] = []
        for i in range(half):
            a, b = lines[i], lines[i + half]
            for mask in (low, high):
                interleaved.append(e.emit(build.shuffle(a, b, mask, vt)))
        lines = interleaved
    return lines


def _copy_transposed(
    e: Emitter,
    value: SSAValue,
    target: SSAValue | StoreOp,
    along_rows: bool,
    tile: int,
) -> None:
    """Copy `value`, contiguous only across the direction `target` is, in
    square tiles: read `tile` blocks one way, transpose them in registers,
    write them the other way."""
    t = value.type
    assert isinstance(t, MatrixType)

    def tiles(f: Emitter, rb: Index) -> None:
        def one(g: Emitter, cb: Index) -> None:
            r0 = block_start(g, 0, tile, rb)
            c0 = block_start(g, 0, tile, cb)
            # Line i of the tile is read across, line j of its transpose
            # written along the target's direction.
            across = [
                (offset(g, r0, i), c0) if along_rows else (r0, offset(g, c0, i))
                for i in range(tile)
            ]
            along = [
                (r0, offset(g, c0, j)) if along_rows else (offset(g, r0, j), c0)
                for j in range(tile)
            ]
            lines = [
                read_block(g, value, r, c, tile, not along_rows) for r, c in across
            ]
            for (r, c), line in zip(along, transpose_tile(g, lines), strict=True):
                write_block(g, line, target, r, c)

        for_each_index(f, t.cols // tile, one)

    for_each_index(e, t.rows // tile, tiles)

"""Vector code for lowered matrices: blocks of contiguous elements.

A block is `width` consecutive elements of one column (rows r..r+width-1 of
column c: "along rows") or of one row ("along columns"). Buffers and
column-major loads are contiguous along rows, row-major loads along columns, a
splat in both directions; a transpose swaps the direction. A fused elementwise
op computes its block from its operands' blocks with the same `arith`/`math`
op on vectors, so every lane is rounded exactly as the scalar element would be.

Every arithmetic element type is vectorized (f16, bf16, f32, f64, i8..i64):
their vectors are stored densely and `convert-to-llvm` lowers their arithmetic
lane by lane as on scalars (f16 natively or through f32, each op rounded to
f16; bf16 promoted to f32 and rounded back with integer arithmetic, see
`mx.lowering.llvm.narrow_floats`), so a vector lane rounds exactly as the
scalar element. The `i4`/`i6` containers keep the scalar loop nests.
"""

from collections.abc import Callable

from xdsl.dialects import arith, vector
from xdsl.dialects.builtin import (
    DenseArrayBase,
    IntegerType,
    VectorType,
    i64,
)
from xdsl.ir import Attribute, Operation, SSAValue

from mx.dialects.matrix import (
    AddOp,
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
    is_arithmetic_element,
)
from mx.lowering.matrix_to_affine.buffers import element_bytes
from mx.lowering.matrix_to_affine.elements import (
    Emitter,
    Index,
    buffer_of,
    elementwise_scalar,
)
from mx.lowering.matrix_to_affine.fusion import is_splat_constant

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


def block_start(e: Emitter, start: int, width: int, block: SSAValue) -> SSAValue:
    """`start + block * width` as an index."""
    scaled = e.emit(arith.MuliOp(block, e.index(width)))
    return scaled if start == 0 else e.emit(arith.AddiOp(scaled, e.index(start)))


def offset(e: Emitter, base: Index, by: int) -> Index:
    """`base + by` as an index."""
    if isinstance(base, int):
        return base + by
    return base if by == 0 else e.emit(arith.AddiOp(base, e.index(by)))


def for_each_segment(
    e: Emitter,
    size: int,
    width: int,
    body: Callable[[Emitter, Index, int], None],
) -> None:
    """Calls `body(e, start, width)` for every block of `segments(size, width)`;
    a run of several blocks becomes one affine.for."""
    for start, w, count in segments(size, width):
        if count == 1:
            body(e, start, w)
            continue

        def one(
            f: Emitter, b: SSAValue, _: object, start: int = start, w: int = w
        ) -> list[SSAValue]:
            body(f, block_start(f, start, w, b), w)
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


def _vector_of(t: Attribute, width: int) -> VectorType:
    return VectorType(t, [width])


def readable(value: SSAValue, fused: set[Operation], along_rows: bool) -> bool:
    """True if blocks of the lowered matrix `value` along that direction can
    be read as vectors."""
    if buffer_of(value) is not None:
        return along_rows
    op = value.owner
    if not isinstance(op, Operation) or op not in fused:
        return False
    t = op.results[0].type
    assert isinstance(t, MatrixType)
    if not vectorizable(t.element_type):
        return False
    if isinstance(op, SplatOp):
        return True
    if isinstance(op, ConstantOp):
        return is_splat_constant(op)
    if isinstance(op, TransposeOp):
        return readable(op.input, fused, not along_rows)
    if isinstance(op, LoadOp):
        return along_rows is op.COLUMN_MAJOR
    if isinstance(t.element_type, IntegerType):
        ops: tuple[type[Operation], ...] = (AddOp, SubOp, MulOp)
    else:
        ops = (AddOp, SubOp, MulOp, DivOp, NegOp, FmaOp)
    return isinstance(op, ops) and all(
        readable(x, fused, along_rows) for x in op.operands
    )


def read_block(
    e: Emitter, value: SSAValue, r: Index, c: Index, width: int, along_rows: bool
) -> SSAValue:
    """The block of `value` starting at element (r, c) (`readable` holds)."""
    t = value.type
    assert isinstance(t, MatrixType)
    vt = _vector_of(t.element_type, width)
    if (buffer := buffer_of(value)) is not None:
        return e.emit(vector.LoadOp(buffer, [e.index(c), e.index(r)], vt))
    op = value.owner
    assert isinstance(op, Operation)
    if isinstance(op, SplatOp | ConstantOp):
        return e.emit(vector.BroadcastOp(e.compute_element(op, r, c), vt))
    if isinstance(op, TransposeOp):
        return read_block(e, op.input, c, r, width, not along_rows)
    if isinstance(op, LoadOp):
        position = e.index(e.position(op, r, c))
        return e.emit(vector.LoadOp(op.memref, [position], vt))
    operands = [read_block(e, x, r, c, width, along_rows) for x in op.operands]
    assert isinstance(op, AddOp | SubOp | MulOp | DivOp | NegOp | FmaOp)
    return e.emit(elementwise_scalar(op, operands, t.element_type))


def write_block(
    e: Emitter, block: SSAValue, target: SSAValue | StoreOp, r: Index, c: Index
) -> None:
    """Store `block` at element (r, c) of a buffer (along rows) or of the
    memory a matrix store writes (along its contiguous dimension)."""
    if isinstance(target, StoreOp):
        position = e.index(e.position(target, r, c))
        e.builder.insert(vector.StoreOp(block, target.memref, [position]))
    else:
        e.builder.insert(vector.StoreOp(block, target, [e.index(c), e.index(r)]))


def copy_blocks(
    e: Emitter, value: SSAValue, target: SSAValue | StoreOp, vector_bits: int
) -> bool:
    """Writes every element of `value` into `target` (a buffer or a matrix
    store) with vector loads and stores, if possible; False if not (nothing
    is emitted then)."""
    t = value.type
    assert isinstance(t, MatrixType)
    along_rows = not isinstance(target, StoreOp) or target.COLUMN_MAJOR
    if vector_bits == 0 or not vectorizable(t.element_type):
        return False
    if not readable(value, e.fused, along_rows):
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


def _tile(t: MatrixType, lanes: int) -> int:
    """The side of the square tiles a transposing copy works on: the largest
    power of two within `lanes` dividing both dimensions."""
    tile = 1
    while 2 * tile <= lanes and t.rows % (2 * tile) == 0 and t.cols % (2 * tile) == 0:
        tile *= 2
    return tile


def _transpose(e: Emitter, lines: list[SSAValue]) -> list[SSAValue]:
    """The columns of the square tile whose rows are `lines`: log2(n) rounds
    of interleaving line i with line i + n/2 (a perfect shuffle)."""
    n = len(lines)
    half = n // 2
    vt = lines[0].type
    assert isinstance(vt, VectorType)
    low = [x for j in range(half) for x in (j, n + j)]
    high = [x for j in range(half, n) for x in (j, n + j)]
    for _ in range(n.bit_length() - 1):
        interleaved: list[SSAValue] = []
        for i in range(half):
            a, b = lines[i], lines[i + half]
            for mask in (low, high):
                shuffle = vector.ShuffleOp(
                    a, b, DenseArrayBase.from_list(i64, mask), result_type=vt
                )
                interleaved.append(e.emit(shuffle))
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

    def tiles(f: Emitter, rb: SSAValue, _: object) -> list[SSAValue]:
        def one(g: Emitter, cb: SSAValue, _: object) -> list[SSAValue]:
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
            for (r, c), line in zip(along, _transpose(g, lines), strict=True):
                write_block(g, line, target, r, c)
            return []

        f.loop(0, t.cols // tile, [], one)
        return []

    e.loop(0, t.rows // tile, [], tiles)

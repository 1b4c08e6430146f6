"""Packed `i4`/`i6` loads and stores (`matrix.*_load/store ... packed`).

The memref holds bytes read as one little-endian bit stream; element n of the
access takes stream bits [w·n, w·n + w), w = 4 or 6, least significant first.
An element starts in byte ⌊w·n / 8⌋ at bit `s = w·n mod 8`; an i6 element with
s ≥ 4 runs on into the next byte (s + 6 > 8; s is even), an i4 element never
does. The code is branch-free scalar `arith` on i32 words:

- load: `(byte[b] | byte[b + (s >> 2)] << 8) >> s & mask` — for an element
  inside one byte the second read is byte b again, so no byte outside the
  element's own is ever read;
- store: a read-modify-write of the element's bits in the second byte (the
  same byte again, left as it was, for an element inside one byte), then in
  the first; every other bit keeps its value.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from xdsl.dialects import affine, arith, llvm, memref, scf, vector
from xdsl.dialects.builtin import (
    IntegerAttr,
    IntegerType,
    VectorType,
    i32,
)
from xdsl.ir import Block, SSAValue
from xdsl.ir.affine import AffineConstantExpr

from mx.dialects.matrix import (
    LoadOp,
    MatrixType,
    MixedIndex,
    StoreOp,
    packed_element_bits,
)
from mx.lowering import build
from mx.lowering.bitwise import BitwiseEmitter

if TYPE_CHECKING:
    from mx.lowering.matrix_to_affine.elements import Emitter, Index

I8 = IntegerType(8)


def _width(op: LoadOp | StoreOp) -> int:
    t = op.accessed_type()
    assert isinstance(t, MatrixType)
    width = packed_element_bits(t.element_type)
    assert width is not None
    return width


def _i32(e: Emitter, value: int) -> SSAValue:
    return e.emit(arith.ConstantOp(IntegerAttr(value, i32)))


def _locate(
    e: Emitter, op: LoadOp | StoreOp, r: Index, c: Index, width: int
) -> tuple[SSAValue, SSAValue, SSAValue]:
    """(first byte, last byte, bit offset in the first byte as an i32) of
    element (r, c) of a packed access."""
    bit = e.emit(arith.MuliOp(e.index(e.position(op, r, c)), e.index(width)))
    first = e.emit(arith.ShRUIOp(bit, e.index(3)))
    shift = e.emit(arith.AndIOp(bit, e.index(7)))
    last = first
    if width > 4:
        last = e.emit(arith.AddiOp(first, e.emit(arith.ShRUIOp(shift, e.index(2)))))
    return first, last, e.emit(arith.IndexCastOp(shift, i32))


def _read_byte(e: Emitter, memory: SSAValue, at: SSAValue) -> SSAValue:
    return e.emit(arith.ExtUIOp(e.emit(memref.LoadOp.get(memory, [at])), i32))


def _write_byte(e: Emitter, word: SSAValue, memory: SSAValue, at: SSAValue) -> None:
    e.builder.insert(memref.StoreOp.get(e.emit(arith.TruncIOp(word, I8)), memory, [at]))


def _replace_bits(
    e: Emitter, old: SSAValue, mask: SSAValue, bits: SSAValue
) -> SSAValue:
    """`old & ~mask | bits` (`bits` lies inside `mask`)."""
    kept = e.emit(arith.AndIOp(old, e.emit(arith.XOrIOp(mask, _i32(e, -1)))))
    return e.emit(arith.OrIOp(kept, bits))


def load_packed(e: Emitter, op: LoadOp, r: Index, c: Index) -> SSAValue:
    """Element (r, c) of a packed load."""
    width = _width(op)
    first, last, shift = _locate(e, op, r, c, width)
    word = _read_byte(e, op.memref, first)
    if width > 4:
        high = e.emit(arith.ShLIOp(_read_byte(e, op.memref, last), _i32(e, 8)))
        word = e.emit(arith.OrIOp(word, high))
    value = e.emit(arith.ShRUIOp(word, shift))
    value = e.emit(arith.AndIOp(value, _i32(e, (1 << width) - 1)))
    return e.emit(arith.TruncIOp(value, IntegerType(width)))


def store_packed(e: Emitter, value: SSAValue, op: StoreOp, r: Index, c: Index):
    """Write element (r, c) of a packed store: only its bits change."""
    width = _width(op)
    first, last, shift = _locate(e, op, r, c, width)
    bits = e.emit(arith.ExtUIOp(value, i32))
    all_ones = _i32(e, (1 << width) - 1)
    if width > 4:
        # Bits 8 - s and up of the element go to the low bits of `last` (none
        # when it is the first byte again: s <= 2 there, the shifts give 0).
        down = e.emit(arith.SubiOp(_i32(e, 8), shift))
        mask = e.emit(arith.ShRUIOp(all_ones, down))
        high = e.emit(arith.ShRUIOp(bits, down))
        old = _read_byte(e, op.memref, last)
        _write_byte(e, _replace_bits(e, old, mask, high), op.memref, last)
    mask = e.emit(arith.ShLIOp(all_ones, shift))
    low = e.emit(arith.ShLIOp(bits, shift))
    old = _read_byte(e, op.memref, first)
    _write_byte(e, _replace_bits(e, old, mask, low), op.memref, first)


# -- vector blocks (i4) ------------------------------------------------------
#
# A block of w consecutive elements along the access's contiguous dimension
# starts at an even position when the offset and stride are even (block
# starts are even, see `vectors.segments`), so it is bytes [n/2, n/2 + w/2):
# the low nibbles are the even elements, the high nibbles the odd ones. A
# block of one element is the low nibble of its byte. The offset and stride
# may be index values: `parity` proves them even where it can (a multiple
# of an even number, a loop over even values); the matvec kernel checks the
# others at run time (`even_layout`).

_PARITY_DEPTH = 16
"""How many ops deep `parity` looks through an index expression."""


def parity(index: MixedIndex, depth: int = _PARITY_DEPTH) -> int | None:
    """0 or 1 if `index` is known to be even or odd, else None: literals,
    constants, sums, differences and products of such, left shifts by a
    constant, index casts, and the induction variables of `scf.for` and
    `affine.for` loops whose start and step are known (an even step keeps
    the start's parity)."""
    if isinstance(index, int):
        return index % 2
    if depth == 0:
        return None
    depth -= 1
    owner = index.owner
    if isinstance(owner, Block):
        loop = owner.parent_op()
        if isinstance(loop, scf.ForOp) and index is owner.args[0]:
            step = parity(loop.step, depth)
            return parity(loop.lb, depth) if step == 0 else None
        if isinstance(loop, affine.ForOp) and index is owner.args[0]:
            (start,) = loop.lowerBoundMap.data.results
            if loop.step.value.data % 2 != 0 or not isinstance(
                start, AffineConstantExpr
            ):
                return None
            return start.value % 2
        return None
    match owner:
        case arith.ConstantOp(value=IntegerAttr() as value):
            return value.value.data % 2
        case arith.IndexCastOp() | arith.ExtUIOp() | arith.ExtSIOp():
            return parity(owner.operands[0], depth)
        case arith.AddiOp() | arith.SubiOp():
            a, b = (parity(x, depth) for x in owner.operands)
            return None if a is None or b is None else a ^ b
        case arith.MuliOp():
            a, b = (parity(x, depth) for x in owner.operands)
            if a == 0 or b == 0:
                return 0
            return None if a is None or b is None else 1
        case arith.ShLIOp():
            shift = owner.operands[1].owner
            if isinstance(shift, arith.ConstantOp) and isinstance(
                shift.value, IntegerAttr
            ):
                amount = shift.value.value.data
                return parity(owner.operands[0], depth) if amount == 0 else 0
            return None
        case _:
            return None


def _layout_parities(op: LoadOp | StoreOp) -> tuple[int | None, int | None]:
    return parity(op.offset()), parity(op.stride())


def vector_block_access(op: LoadOp | StoreOp) -> bool:
    """True if `op` reads/writes i4 blocks as whole bytes: packed, i4, with an
    offset and stride known to be even."""
    return op.is_packed and _width(op) == 4 and _layout_parities(op) == (0, 0)


def versioned_block_access(op: LoadOp | StoreOp) -> bool:
    """True if `op` is a packed i4 access whose offset and stride may be
    even, not known to be: index values a kernel checks at run time
    (`even_layout`) before reading whole bytes."""
    parities = _layout_parities(op)
    return op.is_packed and _width(op) == 4 and None in parities and 1 not in parities


def even_layout(e: Emitter, op: LoadOp | StoreOp) -> SSAValue:
    """An i1: true if `op`'s offset and stride are both even at run time."""
    both = e.emit(arith.OrIOp(e.index(op.offset()), e.index(op.stride())))
    low = e.emit(arith.AndIOp(both, e.index(1)))
    return e.emit(arith.CmpiOp(low, e.index(0), "eq"))


def _byte_position(e: Emitter, op: LoadOp | StoreOp, r: Index, c: Index) -> SSAValue:
    return e.emit(arith.ShRUIOp(e.index(e.position(op, r, c)), e.index(1)))


def read_packed_nibbles(
    e: Emitter, op: LoadOp, r: Index, c: Index, width: int, lane: IntegerType
) -> SSAValue:
    """The block of a packed load at (r, c) (`vector_block_access` holds) as a
    `vector<width x lane>` of the elements' bits, zero-extended."""
    at = _byte_position(e, op, r, c)
    count = max(1, width // 2)
    data = e.emit(vector.LoadOp(op.memref, [at], VectorType(I8, [count])))
    if lane != I8:
        data = e.emit(llvm.ZExtOp(data, VectorType(lane, [count])))
    b = BitwiseEmitter(data.type, e.constant)
    nibbles = e.insert_collected(b, b.and_(data, 15))
    if width > 1:
        high = e.insert_collected(b, b.shr(data, 4))
        lanes = VectorType(lane, [width])
        # (lo 0, hi 0, lo 1, hi 1, ...)
        pairs = build.interleaving(0, width // 2, width // 2)
        nibbles = e.emit(build.shuffle(nibbles, high, pairs, lanes))
    return nibbles


def read_packed_block(
    e: Emitter, op: LoadOp, r: Index, c: Index, width: int
) -> SSAValue:
    """The `vector<width x i4>` block of a packed load at (r, c)
    (`vector_block_access` holds)."""
    nibbles = read_packed_nibbles(e, op, r, c, width, I8)
    # (one vector truncation: arith's lane-by-lane one scalarizes <N x i4>)
    return e.emit(llvm.TruncOp(nibbles, VectorType(IntegerType(4), [width])))


def write_packed_block(
    e: Emitter, block: SSAValue, op: StoreOp, r: Index, c: Index
) -> None:
    """Store the `vector<w x i4>` `block` of a packed store at (r, c)
    (`vector_block_access` holds): whole bytes, except a one-element block,
    whose byte keeps its high nibble."""
    t = block.type
    assert isinstance(t, VectorType)
    (width,) = t.get_shape()
    at = _byte_position(e, op, r, c)
    # (one vector extension: arith's lane-by-lane one scalarizes <N x i4>)
    wide = e.emit(llvm.ZExtOp(block, VectorType(I8, [width])))
    if width == 1:
        old = e.emit(vector.LoadOp(op.memref, [at], VectorType(I8, [1])))
        b = BitwiseEmitter(old.type, e.constant)
        data = b.or_(b.and_(old, 0xF0), wide)
    else:
        half = VectorType(I8, [width // 2])
        even, odd = (
            e.emit(build.shuffle(wide, wide, range(k, width, 2), half)) for k in (0, 1)
        )
        b = BitwiseEmitter(half, e.constant)
        data = b.or_(even, b.shl(odd, 4))
    e.builder.insert(vector.StoreOp(e.insert_collected(b, data), op.memref, [at]))

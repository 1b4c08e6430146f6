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

from xdsl.dialects import arith, memref
from xdsl.dialects.builtin import IntegerAttr, IntegerType, i32
from xdsl.ir import SSAValue

from mx.dialects.matrix import LoadOp, MatrixType, StoreOp, packed_element_bits
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

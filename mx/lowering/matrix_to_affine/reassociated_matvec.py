"""Weight-times-vector with FP4/FP8 weights decoded in registers and summed
along K: `matrix.matvec` with `reassoc` (LLVM's meaning: `fast` includes it)
whose matrix is a fused dequantization (`match_dequantization`) of row-major
codes — C-ordered W[r, k], the layout a user's weights have.

The strict kernel (decoded_matvec.py) must sum each y(r) in k order, so it
puts rows in vector lanes and transposes row-major codes in registers. Under
`reassoc` any order is allowed, and this kernel sums as a hand-written C loop
does: each row has a vector of partial sums over K. `ROWS` rows at a time
(`_rows_at_once`) share every load of x:

- A chunk of 2·w columns of a row (w lanes: the machine's f32 vector, or
  fewer where a block is narrower) is read as w bytes (two f4e2m1fn codes a
  byte) or 2·w bytes (FP8) and decoded by `decoded_matvec._Kernel` into two
  w-lane vectors: packed f4e2m1fn gives the low nibbles (the chunk's even
  columns) and the high nibbles (its odd columns), so x is copied once per
  matvec with each chunk's even elements first, then its odd ones.
- Packed f4e2m1fn codes are read first in groups of 8·w columns (w: the
  machine's f32 lanes): `_nibble_vectors` decodes the group into 8 vectors
  with fewer instructions a weight than chunks take, by AVX-512's f32
  permute of shifted 32-bit lanes or x86 byte shuffles where the target has
  them (`target_cpu.py`), else by the f32 table; x is copied in the order
  of their lanes (`_group_order`). Block scales within a
  group are applied to the sums of the vectors whose lanes share blocks by a
  vector of the blocks' scales (`_group_scales`, `_by_blocks`); with byte
  shuffles the codes' words are reordered first so that each vector holds
  one block's columns where that takes only 64-bit pieces
  (`_block_pure_words`). The columns
  after the last whole group go by chunks.
- Each decoded vector times x's lanes is added to the row's partial sums
  (one FMA with `contract`, else a multiply and an add). The codes ahead
  in each row are prefetched (`PREFETCH_BYTES` in groups,
  `CHUNK_PREFETCH_BYTES` in the loop of chunks), those of the next group of
  rows into L2 (`_prefetch_codes`), and the block scales
  `SCALE_PREFETCH_BLOCKS` ahead.
- Block-scaled weights: the chunks of a block are summed first, and that
  partial sum is multiplied by the block's scale once per block: s·Σ w·x for
  Σ (s·w)·x, a reassociation (the products w·x are those of the strict
  order; only where the scale makes s·w underflow or overflow does the
  result differ by more than the reordering of the sum). Each row's scale
  of a block is looked up in a table of the scale format's 256 values (a
  constant global of the module: `tables.py`): on a Zen 3, MXFP8 e4m3
  4096 x 4096 from DRAM went from 125 to 118 ps a weight against decoding
  the group's codes in a vector and broadcasting each lane.
- The columns after the last whole chunk (K mod 2·w, or a last partial
  block) are added element by element in k order after the lanes have been
  summed by halves (a fixed tree); then the bias.

The order depends only on the shapes: the result is the same for every
thread count (threads take whole groups of rows).

Row-major float weights (f16/bf16 cast to f32, or f32/f64) under `reassoc`
are summed the same way (`float_matvec_along_k`), without the decoding.
"""

from collections.abc import Callable, Sequence
from dataclasses import replace
from typing import cast

import numpy as np
from xdsl.dialects import arith, llvm, vector
from xdsl.dialects.arith import FastMathFlagsAttr
from xdsl.dialects.builtin import (
    BFloat16Type,
    DenseIntOrFPElementsAttr,
    Float16Type,
    Float32Type,
    Float64Type,
    VectorType,
    f16,
    f32,
    i8,
    i16,
    i32,
)
from xdsl.dialects.utils import FastMathFlag
from xdsl.ir import Attribute, Operation, SSAValue

from mx.dialects.matrix import MatrixType, MatvecOp, MulOp
from mx.lowering import build
from mx.lowering.bitwise import BitwiseEmitter
from mx.lowering.matrix_to_affine.block_scaled import block_index
from mx.lowering.matrix_to_affine.blocked import _identity, _step
from mx.lowering.matrix_to_affine.decoded_matvec import (
    Codes,
    Weights,
    _f16_power,
    _for_groups,
    _fp4_table,
    _halves,
    _Kernel,
    match_dequantization,
    permutes_low_bits,
    versioned,
)
from mx.lowering.matrix_to_affine.elements import Emitter, Index, add, multiply
from mx.lowering.matrix_to_affine.state import matrix_type
from mx.lowering.matrix_to_affine.tables import look_up, value_table
from mx.lowering.matrix_to_affine.target_cpu import target_cpu
from mx.lowering.matrix_to_affine.vectors import (
    block_start,
    lanes_of,
    offset,
    prefetch_block,
    read_block,
    readable,
)
from mx.semantics.arbfp import FloatFormat

ROWS = 4
"""Rows summed at once: each load of x serves this many rows (but see
`_rows_at_once`)."""

STEP_COLUMNS = 64
"""Columns of each row per loop iteration when there are no block scales
(with them: one block per iteration): 2 chunks of 16-lane vectors, more of
narrower ones (FP8 e4m3fn on a Zen 1 with 8 lanes: 234 ps a weight with 2
chunks an iteration, 222 with 4)."""

PREFETCH_BYTES = 512
"""How far ahead in each row packed FP4 codes are prefetched (in groups).
With weights streamed from DRAM, the hardware prefetchers alone left the
MXFP4 kernel at 74 ps a weight on Zen 4, 62 with 512 bytes ahead (60-66 for
256 to 2048)."""

CHUNK_PREFETCH_BYTES = 256
"""How far ahead in each row the codes read by chunks are prefetched (once a
loop step). On an Intel Xeon with AVX-512 (4096-row weights, cold, 4
layers) MXFP8 e4m3 went from 108 to 100 ps a weight (512 bytes: 101; 1024:
119) and FP8 e4m3fn at K = 4064 from 94-98 to 85 (512: 88); FP8 at K = 4096
was at the read bandwidth already (77 either way). On Zen 4, 512 bytes ahead
had cost FP8 2 % (72.6 -> 74.3 ps)."""

SCALE_PREFETCH_BLOCKS = 16
"""How many blocks ahead a row group's block scales are prefetched. The
kernel reads them from their column-major buffer (`fusion.BLOCK_SCALED`), a
line (64 rows' scales of a block) per block, R bytes apart: each in another
page, where no hardware prefetcher follows, and for R a multiple of 4096
every line in the same L1 set. 16 blocks ahead: MXFP8 e5m2 4096 x 4096 from
101-102 to 92-96 ps a weight (the AVX-512 C kernel, row-major scales:
96-98); 4 and 8 blocks ahead gained 1 %, 32 blocks 5 %."""

NIBBLES = 8
"""Packed f4e2m1fn codes in a 32-bit lane."""


def _prefetch_codes(
    e: Emitter, codes: Codes, r: Index, i: int, group: int, k: Index, ahead: int
) -> None:
    """Prefetches of row r + i's codes `ahead` columns from k, into L1, and
    of row r + i + `group`'s at k, into L2: the next group of rows' codes
    arrive a whole group's time before they are read. Each row is a stream
    of a few KB (an MXFP4 row of 4096 is 2 KB), too short for the hardware
    prefetchers to learn before it ends. On an Intel Xeon with AVX-512
    (4096 x 4096 from DRAM, 4 layers, one thread) the second prefetch took
    MXFP4 from 76-81 to 53-58 ps a weight, FP8 e4m3fn 80 -> 71, FP8 e5m2 82
    -> 73, MXFP8 e4m3 101 -> 93 (into L1 instead: MXFP4 60). Past the last
    row it is a prefetch of memory the kernel does not read, which never
    faults."""
    codes.prefetch(e, offset(e, r, i), offset(e, k, ahead))
    codes.prefetch(e, offset(e, r, i + group), k, locality=2)


def _rows_at_once(grouped: bool) -> int:
    """`ROWS`, but one row where the kernel takes packed f4e2m1fn in groups
    on a target of 16 vector registers: a group's 8 vectors of x, the
    look-up's table and masks and the rows' sums outnumber them. With 4
    rows LLVM spilled about a vector per multiply-add, and on a Zen 1
    MXFP4 4096 x 4096 (cold, one thread) took 269 ps a weight (2 rows: 265)
    against 227 with one. FP8 chunks keep 4 (208 ps against 263 with one)."""
    if grouped and target_cpu().vector_registers < 32:
        return 1
    return ROWS


def match_reassociated(
    op: MatvecOp, fused: set[Operation], lanes: int
) -> Weights | str | None:
    """The dequantization of `op`'s matrix if this module's kernel computes
    the matvec (`lanes` f32 per machine vector); why not if `op` allows
    reassociation and its matrix is a dequantization of row-major codes
    read in place; else None (the strict kernels decide)."""
    if FastMathFlag.REASSOC not in op.fastmath.data:
        return None
    weights = match_dequantization(op, fused, lanes)
    if not isinstance(weights, Weights) or weights.codes.column_major:
        return None
    if _width(weights, lanes) is None:
        assert weights.scaled is not None
        return (
            f"blocks of {weights.scaled.block_size} elements are not a multiple "
            "of 8 columns"
        )
    return weights


def _width(weights: Weights, lanes: int) -> int | None:
    """Lanes of a decoded vector: `lanes`, halved until a chunk (two
    vectors) divides a block; None below 4."""
    width = lanes
    if weights.scaled is not None:
        while width >= 4 and weights.scaled.block_size % (2 * width):
            width //= 2
    return width if width >= 4 else None


def _group_columns(weights: Weights, lanes: int) -> int | None:
    """Columns of a group (`_nibble_vectors`: a 32-bit lane's codes in
    each of `lanes` lanes) if the weights are packed f4e2m1fn codes with no
    block scales, or with blocks of a multiple of 8 columns that divide a
    group or are whole groups; else None (chunks of 2 vectors only)."""
    if not weights.codes.packed:
        return None
    columns = NIBBLES * lanes
    if weights.scaled is None:
        return columns
    block = weights.scaled.block_size
    if block % NIBBLES or (columns % block and block % columns):
        return None
    return columns


SEGMENT = 16
"""Bytes an x86 byte interleave (`vpunpcklbw`) works within."""

BYTE_SHUFFLE_INTRINSICS = {
    16: "llvm.x86.ssse3.pshuf.b.128",
    32: "llvm.x86.avx2.pshuf.b",
}
"""x86's byte shuffle (`pshufb`) of each width (`target_cpu.py`); AVX-512
targets permute f32s instead (`decoded_matvec.permutes_low_bits`)."""


def _bf16_bytes(fmt: FloatFormat) -> list[list[int]]:
    """The low and the high bytes of the bf16s of the 16 f4e2m1fn values
    (exact: 2 significant bits at most), as signed bytes."""
    bits = np.array(_fp4_table(fmt, None), np.float32).view(np.uint32)
    assert not np.any(bits & 0xFFFF)
    return [
        [int(b) for b in ((bits >> shift) & 0xFF).astype(np.uint8).view(np.int8)]
        for shift in (16, 24)
    ]


def _bf16_tables(e: Emitter, fmt: FloatFormat, width: int) -> list[SSAValue]:
    """`_bf16_bytes` in every 16 bytes of a byte shuffle's `width`."""
    table = VectorType(i8, [width])
    return [
        e.emit(
            arith.ConstantOp(
                DenseIntOrFPElementsAttr.from_list(table, values * (width // 16))
            )
        )
        for values in _bf16_bytes(fmt)
    ]


def _shuffle_width(lanes: int) -> int:
    """Bytes of the byte shuffles that look up a group's 4·lanes codes (0:
    none, f32 permutes look them up)."""
    if permutes_low_bits(lanes):
        return 0
    return min(4 * lanes, target_cpu().byte_shuffle)


def _interleaved(count: int) -> list[list[int]]:
    """The bytes of a vector of `count` bytes that an x86 byte interleave
    (`vpunpcklbw`, `vpunpckhbw`) takes, in order: the first or the second
    half of every `SEGMENT`."""
    half = SEGMENT // 2
    return [
        [
            s * SEGMENT + h * half + j
            for s in range(count // SEGMENT)
            for j in range(half)
        ]
        for h in (0, 1)
    ]


def _bf16_halves(lanes: int) -> list[list[int]]:
    """The bf16s of a vector of 2·`lanes` (two to each 32-bit lane) that
    `_shuffled_nibble_vectors` makes the f32s of each of its two vectors, in
    order: the low and the high halves of the lanes."""
    return [list(range(h, 2 * lanes, 2)) for h in (0, 1)]


def _nibble_vectors(
    e: Emitter, kernel: _Kernel, tables: list[SSAValue], r: Index, k: Index
) -> list[SSAValue]:
    """The decoded weights of row r at the 8·w columns from k (w: the
    kernel's lanes), read as 4·w bytes of packed codes whose nibbles are
    split byte-wise; the columns of vector v's lanes are `_group_order`'s.
    With byte shuffle `tables` (`_bf16_tables`): `_shuffled_nibble_vectors`;
    where the target `permutes_low_bits`: nibble p of each 32-bit lane,
    shifted down, indexes the f32 table (7 shifts and 8 permutes, against
    16 shuffles and interleaves by the byte tables, most on one port of an
    Intel core: on an Intel Xeon with AVX-512, MXFP4 4096 x 4096 with the
    weights in L3 went from 52-53 to 43 ps a weight); else each byte
    position is spread to the low byte of a 32-bit lane (a byte shuffle,
    one instruction on x86) for the f32 table look-up. Vector p's lane j is
    then column k + 8·j + p (byte p/2 of lane j, its low nibble for even
    p)."""
    lanes = kernel.lanes
    count = 4 * lanes
    data = kernel.weights.codes.read(e, r, k, count)
    scaled = kernel.weights.scaled
    order = _block_pure_words(lanes, 0 if scaled is None else scaled.block_size)
    if order is not None:
        words_type = VectorType(i32, [lanes])
        words = e.emit(vector.BitcastOp(data, words_type))
        reordered = e.emit(build.shuffle(words, words, order, words_type))
        data = e.emit(vector.BitcastOp(reordered, data.type))
    if permutes_low_bits(lanes):
        words = e.emit(vector.BitcastOp(data, VectorType(i32, [lanes])))
        values = [kernel.nibble(e, words, 4 * p) for p in range(NIBBLES)]
        return kernel.scaled(e, values, None)
    b = BitwiseEmitter(data.type, e.constant)
    nibbles = [b.and_(data, 15), b.shr(data, 4)]
    e.insert_collected(b, data)
    if tables:
        values = _shuffled_nibble_vectors(e, kernel, tables, nibbles)
        return kernel.scaled(e, values, None)
    bytes_type = VectorType(i8, [count])
    zero = e.emit(vector.BroadcastOp(e.scalar_constant(0, i8), bytes_type))
    values: list[SSAValue] = []
    for byte in range(4):
        mask = [
            4 * j + byte if q == 0 else count for j in range(lanes) for q in range(4)
        ]
        for codes in nibbles:
            spread = e.emit(build.shuffle(codes, zero, mask, bytes_type))
            words = e.emit(vector.BitcastOp(spread, VectorType(i32, [lanes])))
            values.append(kernel.look_up(e, words))
    return kernel.scaled(e, values, None)


def _shuffled_nibble_vectors(
    e: Emitter, kernel: _Kernel, tables: list[SSAValue], nibbles: list[SSAValue]
) -> list[SSAValue]:
    """The low and the high nibbles of a group's bytes looked up by byte
    shuffles in `tables`, the low and the high bytes of their values'
    bf16s; the two interleaved into bf16s (within every 16 bytes, as x86's
    `vpunpck[lh]bw`), two to a 32-bit lane, whose f32s are the lane shifted
    left by 16 bits and the lane with its low 16 bits cleared (no conversion
    instruction); times a constant factor (the f32 table of the chunks
    holds it). Until session 37 zero words were interleaved in
    (`vpunpck[lh]wd`): 8 more shuffles a group of 64 codes, where the
    shifts and masks take 4 shifts and 4 blends with zero (LLVM's choice
    for the masks), which are not shuffles on a Zen 3; MXFP4 4096 x 4096
    from DRAM on a Zen 3, same-process A/Bs: 110 -> 107, 103 -> 100
    (weights in L3), 114 -> 106 ps a weight."""
    lanes = kernel.lanes
    count = 4 * lanes
    width = cast(VectorType, tables[0].type).get_shape()[0]
    bytes_type, pairs_type = VectorType(i8, [count]), VectorType(i32, [lanes])
    b = BitwiseEmitter(pairs_type, e.constant)
    values: list[SSAValue] = []
    for codes in nibbles:
        pieces = [lanes_of(e, codes, first, width) for first in range(0, count, width)]
        low, high = (
            _concatenated(
                e,
                [
                    e.emit(
                        llvm.CallIntrinsicOp(
                            BYTE_SHUFFLE_INTRINSICS[width],
                            [table, piece],
                            [VectorType(i8, [width])],
                        )
                    )
                    for piece in pieces
                ],
            )
            for table in tables
        )
        for placed in _interleaved(count):
            mask = [x for byte in placed for x in (byte, count + byte)]
            paired = e.emit(build.shuffle(low, high, mask, bytes_type))
            pairs = e.emit(vector.BitcastOp(paired, pairs_type))
            for bits in (b.shl(pairs, 16), b.and_(pairs, 0xFFFF0000)):
                values.append(
                    e.emit(
                        vector.BitcastOp(
                            e.insert_collected(b, bits), VectorType(f32, [lanes])
                        )
                    )
                )
    factor = kernel.weights.factor
    if isinstance(factor, float):
        vt = VectorType(f32, [lanes])
        attr = DenseIntOrFPElementsAttr.from_list(vt, [float(np.float32(factor))])
        constant = e.emit(arith.ConstantOp(attr))
        values = [e.emit(arith.MulfOp(v, constant)) for v in values]
    return values


def _by_blocks(
    lanes: int, columns: int, block: int
) -> dict[tuple[int, ...], list[int]]:
    """The vectors of `_nibble_vectors` (of a group of `columns`) by the
    blocks of `block` columns their lanes are in (relative to the group's
    first)."""
    order = _group_order(lanes, block)
    vectors: dict[tuple[int, ...], list[int]] = {}
    for v in range(NIBBLES):
        lanes_columns = order[v * lanes : (v + 1) * lanes]
        blocks = tuple(c // block if block < columns else 0 for c in lanes_columns)
        vectors.setdefault(blocks, []).append(v)
    return vectors


def _group_scales(
    e: Emitter,
    kernel: _Kernel,
    table: SSAValue | None,
    r: Index,
    k: Index,
    rows: int,
    columns: int,
) -> SSAValue:
    """The block scales of the `rows` rows from r for the group of
    `columns` columns from k: lane b·rows + i is row r + i's scale of the
    group's block b. With one row (`_rows_at_once`: AVX2) each is looked up
    in `table` (`_scale_of`): decoding a group's two codes at once took as many
    instructions as its 64 weights' look-ups, and on a Zen 3 (MXFP4 4096 x
    4096 from DRAM, one thread) the kernel went from 140 to 118 ps a weight
    (with the scales a constant instead: 95). With more rows the codes are
    read a block at a time and decoded at once, a vector's worth."""
    assert kernel.weights.scaled is not None
    block = kernel.weights.scaled.block_size
    blocks = range(max(columns // block, 1))
    if rows == 1:
        assert table is not None
        values = [
            _scale_of(e, kernel, table, r, offset(e, k, b * block)) for b in blocks
        ]
        result = e.emit(vector.BroadcastOp(values[0], VectorType(f32, [len(values)])))
        for b, value in enumerate(values[1:], 1):
            result = e.emit(vector.InsertOp(value, result, [b]))
        return result
    codes = [kernel.scale_codes(e, r, offset(e, k, b * block), rows) for b in blocks]
    return kernel.scale_values(e, _concatenated(e, codes))


def _scale_of(
    e: Emitter, kernel: _Kernel, table: SSAValue, r: Index, k: Index
) -> SSAValue:
    """Row r's block scale at column k: its code (a byte) looked up in
    `table`, the scale format's values (`tables.value_table`): two loads,
    against the decoding's compares and selects."""
    code = e.emit(vector.ExtractOp(kernel.scale_codes(e, r, k, 1), [0], i8))
    return look_up(e, table, code)


def _concatenated(e: Emitter, vectors: list[SSAValue]) -> SSAValue:
    """`vectors` (2^n of one type) one after the other in one vector."""
    while len(vectors) > 1:
        t = cast(VectorType, vectors[0].type)
        n = t.get_shape()[0]
        vectors = [
            e.emit(
                build.shuffle(
                    vectors[h],
                    vectors[h + 1],
                    range(2 * n),
                    VectorType(t.element_type, [2 * n]),
                )
            )
            for h in range(0, len(vectors), 2)
        ]
    return vectors[0]


def _narrowed(
    e: Emitter, v: SSAValue, width: int, flags: FastMathFlagsAttr
) -> SSAValue:
    """`v`'s lanes added by halves (low plus high) down to `width` lanes."""
    t = cast(VectorType, v.type)
    n = t.get_shape()[0]
    while n > width:
        n //= 2
        low, high = (lanes_of(e, v, h * n, n) for h in (0, 1))
        v = e.emit(add(low, high, _unfused(flags)))
    return v


def reassociated_matvec(
    e: Emitter,
    op: MatvecOp,
    weights: Weights,
    lanes: int,
    allocate: Callable[[MatrixType], SSAValue],
    otherwise: Callable[[Emitter], SSAValue],
    parallel: bool = False,
) -> SSAValue:
    """y = W·x (+ bias) for `match_reassociated`'s W (see the module docs).
    Packed codes whose offset or stride may be odd (`Weights.versioned`) are
    read as whole bytes only if both are even at run time, else by
    `otherwise` (element by element), as `decoded_matvec` does."""
    return versioned(
        e,
        op,
        weights,
        lambda f, threads: _reassociated_matvec(
            f, op, weights, lanes, allocate, threads
        ),
        otherwise,
        parallel,
    )


def _without(flags: FastMathFlagsAttr, dropped: FastMathFlag) -> FastMathFlagsAttr:
    """`flags` but `dropped`. Without `reassoc`: the kernel's order is the
    one it documents, not one LLVM picks. Without `contract` (the kernels'
    separate multiplies and adds): the kernel fuses where it means to
    (`_step`'s `math.fma`); LLVM, allowed to, fused a multiply into an add
    in one copy of a loop and not in another (AVX2: rows of one thread's
    range differed by an ulp from the same rows in another's)."""
    return FastMathFlagsAttr([f for f in flags.data if f is not dropped])


def _unfused(flags: FastMathFlagsAttr) -> FastMathFlagsAttr:
    return _without(flags, FastMathFlag.ALLOW_CONTRACT)


def _sum_lanes(e: Emitter, v: SSAValue, flags: FastMathFlagsAttr) -> SSAValue:
    """The sum of `v`'s lanes: the low half plus the high half, until one
    lane is left."""
    element = cast(VectorType, v.type).element_type
    return e.emit(vector.ExtractOp(_narrowed(e, v, 1, flags), [0], element))


def _store_sums(
    e: Emitter,
    totals: Sequence[SSAValue],
    r: Index,
    y: SSAValue,
    bias: SSAValue | None,
    flags: FastMathFlagsAttr,
) -> None:
    """y[r..] = the group's sums (plus the bias)."""
    group_type = VectorType(totals[0].type, [len(totals)])
    result = e.emit(vector.BroadcastOp(totals[0], group_type))
    for i, total in enumerate(totals[1:], 1):
        result = e.emit(vector.InsertOp(total, result, [i]))
    at = [e.index(0), e.index(r)]
    if bias is not None:
        bias_values = e.emit(vector.LoadOp(bias, at, group_type))
        result = e.emit(add(result, bias_values, _unfused(flags)))
    e.builder.insert(vector.StoreOp(result, y, at))


def _buffers(
    e: Emitter,
    op: MatvecOp,
    t: Attribute,
    allocate: Callable[[MatrixType], SSAValue],
) -> tuple[SSAValue, SSAValue, SSAValue | None]:
    """Buffers of `t` for x (stored), y and the bias (stored, if any)."""
    m = matrix_type(op.matrix)
    zero = e.index(0)
    x = allocate(MatrixType(m.cols, 1, t))
    e.builder.insert(vector.StoreOp(op.vector, x, [zero, zero]))
    y = allocate(MatrixType(m.rows, 1, t))
    if op.bias is None:
        return x, y, None
    bias = allocate(MatrixType(m.rows, 1, t))
    e.builder.insert(vector.StoreOp(op.bias, bias, [zero, zero]))
    return x, y, bias


def _columns_in_order(
    e: Emitter,
    op: MatvecOp,
    x: SSAValue,
    r: Index,
    totals: Sequence[SSAValue],
    start: int,
    flags: FastMathFlagsAttr,
    widen: Callable[[Emitter, SSAValue], SSAValue] = lambda _, v: v,
) -> list[SSAValue]:
    """`totals` (the sums of the rows from r) plus the columns from `start`
    on, one by one in k order."""
    cols = matrix_type(op.matrix).cols
    if start >= cols:
        return list(totals)

    def column(h: Emitter, k: SSAValue, carried: Sequence[SSAValue]) -> list[SSAValue]:
        xk = h.load_buffer(x, k, 0)
        return [
            _step(h, flags, widen(h, h.element(op.matrix, offset(h, r, i), k)), xk, s)
            for i, s in enumerate(carried)
        ]

    return list(e.loop(start, cols, totals, column))


def _x_lanes(
    e: Emitter,
    x: SSAValue,
    regions: Sequence[tuple[int, int, list[int]]],
    scale: SSAValue | None,
    allocate: Callable[[MatrixType], SSAValue],
) -> SSAValue:
    """x times `scale` (a scalar, if any) in the order the decoded vectors
    take it: each region (first column, end, order) in pieces of
    len(order) columns, lane i of a piece taking its column order[i]."""
    arranged = allocate(MatrixType(regions[-1][1], 1, f32))
    for first, end, order in regions:
        if end > first:
            _arrange(e, x, arranged, first, end, order, scale)
    return arranged


def _arrange(
    e: Emitter,
    x: SSAValue,
    arranged: SSAValue,
    first: int,
    end: int,
    order: list[int],
    scale: SSAValue | None,
) -> None:
    """One region of `_x_lanes`."""
    piece = VectorType(f32, [len(order)])
    factor = None if scale is None else e.emit(vector.BroadcastOp(scale, piece))
    arrange = order != sorted(order)

    def each(f: Emitter, c: SSAValue, _: object) -> list[SSAValue]:
        at = [f.index(0), f.index(block_start(f, first, len(order), c))]
        data = f.emit(vector.LoadOp(x, at, piece))
        if factor is not None:
            data = f.emit(multiply(data, factor, FastMathFlagsAttr("none")))
        if arrange:
            data = f.emit(build.shuffle(data, data, order, piece))
        f.builder.insert(vector.StoreOp(data, arranged, at))
        return []

    e.loop(0, (end - first) // len(order), [], each)


def _chunk_order(width: int, packed: bool) -> list[int]:
    """The columns of a chunk of 2·`width` in the order of its decoded
    vectors: packed codes' even columns, then the odd ones."""
    if packed:
        return [*range(0, 2 * width, 2), *range(1, 2 * width, 2)]
    return list(range(2 * width))


def _group_order(lanes: int, block: int) -> list[int]:
    """The columns of a group in the order of `_nibble_vectors`'s vectors
    (their codes' blocks of `block` columns: `_block_pure_words`)."""
    if not _shuffle_width(lanes):
        return [NIBBLES * j + p for p in range(NIBBLES) for j in range(lanes)]
    count = 4 * lanes
    # (vector: nibble, then the byte interleave, then the bf16s' halves;
    # `_bf16_halves` numbers bf16s within the interleaved bytes' vector)
    placed = [
        byte_half[bf16]
        for byte_half in _interleaved(count)
        for bf16_half in _bf16_halves(lanes)
        for bf16 in bf16_half
    ]
    order = _block_pure_words(lanes, block) or list(range(lanes))
    read = [4 * order[byte // 4] + byte % 4 for byte in placed]
    return [2 * byte + nibble for nibble in (0, 1) for byte in read]


def _block_pure_words(lanes: int, block: int) -> list[int] | None:
    """The 32-bit words of a group's codes (4·lanes bytes, read as
    `lanes` words) in the order that gives each vector of
    `_shuffled_nibble_vectors` the columns of one block of `block`
    columns: word i of the reordered codes is word order[i]. The byte
    interleave gives vectors 2p and 2p + 1 (of a nibble's 4) the codes of
    words 2p and 2p + 1 of every 16-byte segment (the low and the high
    bf16s of each 32-bit lane), 2·segments words; the order makes those
    one block's by moving whole 64-bit pieces (one `vpermq`). Then each
    block's sum is times its scale broadcast (a load), not times a vector
    of the group's scales spread to the blocks' lanes (two shuffles):
    MXFP4 on a Zen 3 from DRAM, 1-4 % faster (docs/low-precision.md). None if the byte shuffles are not
    used, the group is one block, or a block is not a whole number of
    those words."""
    count = 4 * lanes
    segments, per_segment = count // SEGMENT, SEGMENT // 4
    words = block // 8  # (two codes a byte, four bytes a word)
    if not (block and _shuffle_width(lanes)) or words >= lanes:
        return None
    if words % (2 * segments):
        return None
    return [
        2 * (v // 2 * segments + s) + v % 2
        for s in range(segments)
        for v in range(per_segment)
    ]


def _folds_factor(op: MatvecOp, weights: Weights) -> bool:
    """True if x is to be multiplied by the weights' per-tensor scale (none,
    or its `matrix.mul` allows reassociation too) rather than each decoded
    weight."""
    mul = op.matrix.owner
    return weights.factor is None or (
        isinstance(mul, MulOp) and FastMathFlag.REASSOC in mul.fastmath.data
    )


def _x_scale(e: Emitter, weights: Weights) -> SSAValue | None:
    """What x is multiplied by once, for `_folds_factor`'s weights (None:
    nothing): f8e4m3fn's 2^8 (its codes are decoded as f16, whose bias is 8
    above), times the per-tensor scale."""
    power = 1.0 if weights.fp4 else _f16_power(weights.format)
    factor = weights.factor
    if isinstance(factor, SSAValue):
        if power == 1.0:
            return factor
        return e.emit(
            multiply(factor, e.scalar_constant(power, f32), FastMathFlagsAttr("none"))
        )
    if factor is not None:
        power = float(np.float32(power) * np.float32(factor))
    if power == 1.0:
        return None
    return e.scalar_constant(power, f32)


def _fp8_decoded(
    e: Emitter, kernel: _Kernel, r: Index, k: Index, folded: bool
) -> list[SSAValue]:
    """The 2·w FP8 codes of row r from column k as f16 values (bits placed
    as `decoded_matvec._Kernel.decode` places them), in two f32 vectors of
    `kernel`'s w lanes; unless `folded` (`_x_scale`), times 2^8 for
    f8e4m3fn and the per-tensor scale as that kernel multiplies them. NaN
    codes give NaNs (f16 NaNs: their payloads are not `convert_from`'s), but
    under `nnan`."""
    weights, width = kernel.weights, kernel.lanes
    count = 2 * width
    data = weights.codes.read(e, r, k, count)
    wide = e.emit(llvm.SExtOp(data, VectorType(i16, [count])))
    b = BitwiseEmitter(wide.type, e.constant)
    if weights.format.keyword == "f8e5m2":
        bits = e.insert_collected(b, b.shl(wide, 8))
    else:
        placed = b.and_(b.shl(wide, 7), 0xBFFF)
        if FastMathFlag.NO_NANS in kernel.flags.data:
            # no NaN weights: the NaN codes may decode to anything (1.875·2^8)
            bits = e.insert_collected(b, placed)
        else:
            # exponent and mantissa 0x3F80 (a NaN code) carry into 0x4000:
            # f16's exponent all ones, a NaN
            nan = b.and_(b.addi(b.and_(placed, 0x3F80), 0x80), 0x4000)
            bits = e.insert_collected(b, b.or_(placed, nan))
    halves = e.emit(arith.BitcastOp(bits, VectorType(f16, [count])))
    values = [
        e.emit(arith.ExtFOp(h, VectorType(f32, [width])))
        for h in _halves(e, halves, width)
    ]
    if folded:
        return values
    return kernel.scaled(e, [kernel.powered(e, v) for v in values], None)


def _reassociated_matvec(
    e: Emitter,
    op: MatvecOp,
    weights: Weights,
    lanes: int,
    allocate: Callable[[MatrixType], SSAValue],
    parallel: bool,
) -> SSAValue:
    m = op.matrix.type
    assert isinstance(m, MatrixType)
    rows, cols = m.rows, m.cols
    width = _width(weights, lanes)
    assert width is not None
    flags = _without(op.fastmath, FastMathFlag.REASSOC)
    folded = _folds_factor(op, weights)
    kernel = _Kernel(replace(weights, factor=None) if folded else weights, width, flags)
    kernel.prepare(e)
    chunk, scaled = 2 * width, weights.scaled
    block_size = 0 if scaled is None else scaled.block_size
    columns = _group_columns(weights, lanes)
    grouped = cols // columns * columns if columns else 0
    step = max(chunk, STEP_COLUMNS) if scaled is None else block_size
    steps = (cols - grouped) // step
    # the chunks after the loops (no block scales: a block is one step)
    chunks = steps * step // chunk + (0 if scaled else (cols - grouped) % step // chunk)
    vectorized = grouped + chunks * chunk
    group = min(_rows_at_once(grouped > 0), rows)
    vt = VectorType(f32, [width])
    zero = e.index(0)
    x, y, bias = _buffers(e, op, f32, allocate)
    x_scale = _x_scale(e, weights) if folded else None
    regions = [(grouped, vectorized, _chunk_order(width, weights.codes.packed))]
    if columns and grouped:
        regions.insert(0, (0, grouped, _group_order(lanes, block_size)))
    x_lanes = (
        _x_lanes(e, x, regions, x_scale, allocate)
        if (weights.codes.packed or x_scale is not None) and vectorized
        else x
    )
    codes = weights.codes
    ahead = PREFETCH_BYTES * 8 // codes.bits
    chunk_ahead = CHUNK_PREFETCH_BYTES * 8 // codes.bits
    wt = VectorType(f32, [lanes])
    minus_zero = e.emit(vector.BroadcastOp(_identity(e, f32), vt))
    wide_zero = e.emit(vector.BroadcastOp(_identity(e, f32), wt))
    # (the groups' kernel: the chunks' if their vectors are as wide)
    wide = kernel if width == lanes else _Kernel(kernel.weights, lanes, flags)
    if grouped and wide is not kernel:
        wide.prepare(e)
    shuffled = _shuffle_width(lanes) if grouped else 0
    tables = _bf16_tables(e, weights.format, shuffled) if shuffled else []
    # (one table of the scales' values for the kernel, if it looks them up)
    scale_table = (
        value_table(e, scaled.scale_float_format, op)
        if scaled is not None and (steps or (grouped and group == 1))
        else None
    )

    # (the group's vectors by the blocks of their lanes, once for every row)
    vectors_by_blocks = (
        _by_blocks(lanes, columns, block_size)
        if columns and grouped and scaled is not None
        else {}
    )

    def group_products(
        g: Emitter, r: Index, k: Index, accs: list[SSAValue]
    ) -> list[SSAValue]:
        """The accumulators plus the products of the group of columns from
        k of each row of the group at r: the 8 vectors of
        `_nibble_vectors` times x's; with block scales, the products of
        vectors whose lanes are in the same blocks are summed first, then
        times the blocks' scales of their lanes."""
        assert columns is not None
        for i in range(group):
            _prefetch_codes(g, codes, r, i, group, k, ahead)
        xs = [
            g.emit(
                vector.LoadOp(
                    x_lanes, [g.index(0), g.index(offset(g, k, p * lanes))], wt
                )
            )
            for p in range(NIBBLES)
        ]
        scales = (
            None
            if scaled is None
            else _group_scales(g, wide, scale_table, r, k, group, columns)
        )
        added: list[SSAValue] = []
        for i, acc in enumerate(accs):
            values = _nibble_vectors(g, wide, tables, offset(g, r, i), k)
            if scales is None:
                for value, xv in zip(values, xs, strict=True):
                    acc = _step(g, flags, value, xv, acc)
                added.append(acc)
                continue
            for blocks, vectors in vectors_by_blocks.items():
                part = g.emit(
                    multiply(values[vectors[0]], xs[vectors[0]], _unfused(flags))
                )
                for v in vectors[1:]:
                    part = _step(g, flags, values[v], xs[v], part)
                mask = [b * group + i for b in blocks]
                row_scales = g.emit(build.shuffle(scales, scales, mask, wt))
                acc = _step(g, flags, part, row_scales, acc)
            added.append(acc)
        return added

    def products(
        g: Emitter, r: Index, k: Index, sums: list[SSAValue | None]
    ) -> list[SSAValue | None]:
        """`sums` (None: none yet) plus the products of the chunk at column
        k of each row of the group at r."""
        xs = [
            g.emit(vector.LoadOp(x_lanes, [g.index(0), g.index(offset(g, k, h))], vt))
            for h in (0, width)
        ]
        added: list[SSAValue | None] = []
        for i, total in enumerate(sums):
            row = offset(g, r, i)
            values = (
                kernel.decode(g, row, k, None)
                if weights.fp4
                else _fp8_decoded(g, kernel, row, k, folded)
            )
            for value, xv in zip(values, xs, strict=True):
                total = (
                    g.emit(multiply(value, xv, _unfused(flags)))
                    if total is None
                    else _step(g, flags, value, xv, total)
                )
            added.append(total)
        return added

    def block(g: Emitter, r: Index, k: Index, accs: list[SSAValue]) -> list[SSAValue]:
        """The accumulators plus the step of columns from k."""
        for i in range(group):
            _prefetch_codes(g, codes, r, i, group, k, chunk_ahead)
        if scaled is None:
            sums: list[SSAValue | None] = list(accs)
            for c in range(step // chunk):
                sums = products(g, r, offset(g, k, c * chunk), sums)
            return [cast(SSAValue, s) for s in sums]
        parts: list[SSAValue | None] = [None] * group
        for c in range(step // chunk):
            parts = products(g, r, offset(g, k, c * chunk), parts)
        assert scale_table is not None
        row_scales = [
            _scale_of(g, kernel, scale_table, offset(g, r, i), k) for i in range(group)
        ]
        assert weights.scales is not None
        scales_at = offset(g, block_index(g, k, block_size), SCALE_PREFETCH_BLOCKS)
        prefetch_block(g, weights.scales, r, scales_at)
        return [
            _step(
                g,
                flags,
                cast(SSAValue, part),
                g.emit(vector.BroadcastOp(s, vt)),
                acc,
            )
            for s, part, acc in zip(row_scales, parts, accs, strict=True)
        ]

    def rows_of(g: Emitter, r: Index, _: Index) -> None:
        """The group of rows at r: every group of columns, every step of
        the columns after them, the lanes summed, the columns left one by
        one, the bias."""

        def each_group(
            h: Emitter, i: SSAValue, carried: Sequence[SSAValue]
        ) -> list[SSAValue]:
            assert columns is not None
            return group_products(h, r, block_start(h, 0, columns, i), list(carried))

        def each(
            h: Emitter, i: SSAValue, carried: Sequence[SSAValue]
        ) -> list[SSAValue]:
            return block(h, r, block_start(h, grouped, step, i), list(carried))

        accs = [minus_zero] * group
        if grouped:
            assert columns is not None
            group_sums = g.loop(0, grouped // columns, [wide_zero] * group, each_group)
            accs = [_narrowed(g, acc, width, flags) for acc in group_sums]
        if steps:
            accs = list(g.loop(0, steps, accs, each))
        for c in range(steps * step // chunk, chunks):
            sums: list[SSAValue | None] = list(accs)
            k = grouped + c * chunk
            accs = [cast(SSAValue, s) for s in products(g, r, k, sums)]
        totals = [_sum_lanes(g, acc, flags) for acc in accs]
        totals = _columns_in_order(g, op, x, r, totals, vectorized, flags)
        _store_sums(g, totals, r, y, bias, flags)

    _for_groups(e, rows, group, rows_of, parallel)
    return e.emit(vector.LoadOp(y, [zero, zero], op.result.type))


def sums_along_k(op: MatvecOp, fused: set[Operation]) -> bool:
    """True if `op` allows reassociation and its matrix is of floats read
    along its rows (row-major memory, possibly widened: f16/bf16 weights
    cast to f32), with x, y and the sums f32 or f64: `float_matvec_along_k`
    computes it."""
    result = op.result_element
    vector_type = op.vector.type
    return (
        FastMathFlag.REASSOC in op.fastmath.data
        and isinstance(result, Float32Type | Float64Type)
        and isinstance(vector_type, VectorType)
        and vector_type.element_type == result
        and isinstance(
            matrix_type(op.matrix).element_type,
            BFloat16Type | Float16Type | Float32Type | type(result),
        )
        and readable(op.matrix, fused, False)
        and not readable(op.matrix, fused, True)
    )


def float_matvec_along_k(
    e: Emitter,
    op: MatvecOp,
    lanes: int,
    allocate: Callable[[MatrixType], SSAValue],
    widen: Callable[[Emitter, SSAValue], SSAValue],
    parallel: bool = False,
) -> SSAValue:
    """y = W·x (+ bias) for `sums_along_k`'s row-major float W, summed as a
    hand-written kernel sums it: the target's `weight_streams` rows at a time
    (the decoded FP4/FP8 kernels are compute-bound and take `ROWS`); each row
    has two vectors of partial sums (even and odd steps of `lanes` columns),
    added and then summed by halves; the columns after the last whole
    vector one by one in k order; then the bias. The order depends only on
    the shapes (threads take whole groups of rows). Each step prefetches
    into L2 the row a group below at its column, as `_prefetch_codes` does:
    one line of 64 bytes, as many as an f16/bf16 step reads, half an f32
    step's (f32/f64 weights not measured). On an Intel Xeon with AVX-512,
    from DRAM, 4 layers, one thread: f16 4096 x 4064 154 -> 139 ps a
    weight, bf16 149 -> 135; at 4096 x 4096 143 -> 135 and 138 -> 132; into
    L1 instead, about 2 % slower than L2."""
    m = matrix_type(op.matrix)
    rows, cols = m.rows, m.cols
    t = op.result_element
    vt = VectorType(t, [lanes])
    flags = _without(op.fastmath, FastMathFlag.REASSOC)
    zero = e.index(0)
    x, y, bias = _buffers(e, op, t, allocate)
    group = min(target_cpu().weight_streams, rows)
    step = 2 * lanes
    steps, rest = divmod(cols, step)
    vectorized = steps * step + (lanes if rest >= lanes else 0)
    minus_zero = e.emit(vector.BroadcastOp(_identity(e, t), vt))

    def products(
        g: Emitter, r: Index, k: Index, sums: list[SSAValue], x_at: int
    ) -> list[SSAValue]:
        """`sums` plus the products of `lanes` columns from k of each row
        of the group at r (the sums of row i at 2·i + x_at... : one vector
        a row)."""
        xk = g.emit(vector.LoadOp(x, [g.index(0), g.index(k)], vt))
        added = list(sums)
        for i in range(group):
            w = widen(g, read_block(g, op.matrix, offset(g, r, i), k, lanes, False))
            added[2 * i + x_at] = _step(g, flags, w, xk, sums[2 * i + x_at])
        return added

    def rows_of(g: Emitter, r: Index, _: Index) -> None:
        def each(
            h: Emitter, s: SSAValue, carried: Sequence[SSAValue]
        ) -> list[SSAValue]:
            k = block_start(h, 0, step, s)
            for i in range(group):  # (the next group's rows: `_prefetch_codes`)
                prefetch_block(h, op.matrix, offset(h, r, group + i), k, locality=2)
            sums = products(h, r, k, list(carried), 0)
            return products(h, r, offset(h, k, lanes), sums, 1)

        accs = [minus_zero] * (2 * group)
        if steps:
            accs = list(g.loop(0, steps, accs, each))
        if rest >= lanes:
            accs = products(g, r, steps * step, accs, 0)
        totals = [
            _sum_lanes(
                g, g.emit(add(accs[2 * i], accs[2 * i + 1], _unfused(flags))), flags
            )
            for i in range(group)
        ]
        totals = _columns_in_order(g, op, x, r, totals, vectorized, flags, widen)
        _store_sums(g, totals, r, y, bias, flags)

    _for_groups(e, rows, group, rows_of, parallel)
    return e.emit(vector.LoadOp(y, [zero, zero], op.result.type))

"""Weight-times-vector with FP4/FP8 weights decoded in registers.

`matrix.matvec` whose matrix is a fused dequantization of a load,

    scaled_convert_from f4e2m1fn|f8e4m3fn|f8e5m2 (load), S        (MXFP4, MXFP8, NVFP4)
    convert_from f4e2m1fn|f8e4m3fn|f8e5m2 (load) [times a splat]  (a per-tensor scale)

with f32 elements, vector and result, is computed by one loop nest that reads
the weights' bytes once. Each y(r) is still summed in k order from -0, then
plus the bias: the lanes of a vector are rows (docs/matrix-dialect.md's
order, with or without `contract`).

Rows go in groups of 2 vectors; when they do not divide the rows, a last
group takes the last rows (overlapping the group before, whose rows it
computes again to the same values) and keeps its sums past the others'.

- Column-major W: passes over `COLUMNS`
  columns; for each group of 2 vectors of rows the sums (a buffer of y that
  stays in L1) are loaded, every column of the pass adds its decoded weights
  times its x(k), and they are stored back. Each column's codes of the group
  are prefetched into L2 a pass ahead: a pass reads its 16 columns as 16
  streams R bytes apart, more than the hardware prefetchers follow.
  2048 x 4096 weights from DRAM, one thread, on an Intel Xeon with
  AVX512-FP16 (`bench.spellings`, ps a weight, before and after): FP4
  codes one a byte 122 -> 82, packed 77-82 -> 62-68, MXFP8 e4m3 134-167 ->
  114-122, FP8 e4m3fn 128-160 -> 103-107, e5m2 112-143 -> 91-96. Slower,
  with the weights in L3: into L1, two passes ahead, the rows a fixed
  distance down each column, each line once (groups taking turns). Every
  other column depends on where the codes start in a page (FP4 codes one a
  byte, columns of 2 KiB: 68-69 ps a weight at page offsets 0-48, 103-117
  at 1-3 KiB; every column 79-88 at all of them), so every column.
- Row-major W (columns a multiple of a 32-bit word's elements): each row's
  chunk of bytes is read as words of 8 (f4e2m1fn) or 4 (FP8) elements;
  two tiles of `lanes` rows are transposed in registers (lane = row) and
  their sums carried in registers over the chunks, so that each row is read
  sequentially; a last, narrower chunk reads only its own words. Packed
  FP4 codes of the rows one group below are prefetched into L2 a step
  ahead (`prefetch_next_rows` in `_row_passes`).

Decoding, branch-free on whole vectors:
- f4e2m1fn: the 16 values (times a constant per-tensor scale, rounded as the
  multiply would) are a table indexed by the code (a `vector.extract` at the
  code in every lane, which LLVM turns into one variable permute: `vpermps`
  on AVX-512; where the target takes AVX-512's intrinsics the kernels call
  the permute themselves and mask no code, as it reads 4 bits:
  `permutes_low_bits`). Where the target's permutes pick from fewer than
  16 lanes (`target_cpu.py`: AVX2) and for vectors of fewer than 16 lanes, the table
  holds the 8 magnitudes, indexed by the code's low 3 bits, and the code's
  bit 3 becomes the sign bit (the values are symmetric: a constant factor
  multiplies +v and -v to results of one magnitude). In column-major W the
  16 bytes of 32 rows give their even rows (low nibbles) and odd rows (high
  nibbles) as two vectors: the sums keep that order, undone once at the end.
- f8e4m3fn: sign, exponent and mantissa are placed in an f16 (`(sext(b) << 7)
  & 0xBFFF`), converted by the hardware (F16C: no microcode assist for
  subnormal f16, unlike an f32 multiply by a subnormal) and multiplied by
  2^8; the NaN codes become f16's quiet NaN before the conversion, the value
  convert-arbfp-to-arith gives them.
- f8e5m2: the byte is the high byte of the f16 of the same value (the same
  exponent bias), converted by the hardware; NaN codes as for f8e4m3fn.
A block scale (one vector per group and pass) multiplies the decoded value,
rounding the exact product once as scaled_convert_from does.
"""

from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from functools import partial
from math import gcd
from typing import TypeVar, cast

import numpy as np
from xdsl.dialects import arith, llvm, vector
from xdsl.dialects.arith import FastMathFlagsAttr
from xdsl.dialects.builtin import (
    DenseIntOrFPElementsAttr,
    Float32Type,
    FloatAttr,
    IndexType,
    MemRefType,
    VectorType,
    f16,
    f32,
    i8,
    i16,
    i32,
)
from xdsl.ir import BlockArgument, Operation, SSAValue

from mx.dialects import arbfp
from mx.dialects.matrix import (
    ConstantOp,
    LoadOp,
    MatrixType,
    MatvecOp,
    MulOp,
    SplatOp,
    TransposeOp,
    element_type_of,
)
from mx.dialects.memref_ext import PrefetchOp
from mx.lowering import build
from mx.lowering.bitwise import BitwiseEmitter
from mx.lowering.convert_arbfp_to_arith import emit_convert_from
from mx.lowering.matrix_to_affine.block_scaled import block_index
from mx.lowering.matrix_to_affine.blocked import (
    CACHE_LINE,
    PARALLEL_BLOCKS,
    RowMajorMemory,
    _ceil,
    _d,
    _for,
    _identity,
    _if,
    _Keep,
    _min,
    _step,
    line_start,
    steps_in_lines,
)
from mx.lowering.matrix_to_affine.elements import Emitter, Index, add, buffer_of
from mx.lowering.matrix_to_affine.fusion import is_splat_constant
from mx.lowering.matrix_to_affine.kernel_remarks import FUSED_BLOCK_SCALED, FUSED_DECODE
from mx.lowering.matrix_to_affine.packed import (
    even_layout,
    vector_block_access,
    versioned_block_access,
)
from mx.lowering.matrix_to_affine.target_cpu import target_cpu
from mx.lowering.matrix_to_affine.vectors import (
    block_start,
    lanes_of,
    offset,
    read_block,
)
from mx.passes.outline_parallel_loops import mark_parallel, mark_parallel_block
from mx.semantics.arbfp import FloatFormat

COLUMNS = 16
"""Columns of W one pass over y consumes (at most: a divisor of the block)."""

FORMATS_DECODED = ("f4e2m1fn", "f8e4m3fn", "f8e5m2")

F8_NAN_HALF = 0x7E00
"""f16's quiet NaN, whose f32 extension is the NaN convert_from gives."""

F16_BIAS = 15


def _f16_power(fmt: FloatFormat) -> float:
    """What the f16 an FP8 code is placed in is worth times its value:
    2^8 for f8e4m3fn (its exponent bias is 8 below f16's), 1 for f8e5m2."""
    return 2.0 ** (F16_BIAS - fmt.bias)


@dataclass(frozen=True)
class Codes:
    """Where the weights' codes are read: the user's memory of a fused matrix
    load, or the buffer of a matrix value (a function argument) read in
    place, column-major (`buf[k, r]`) or through a fused transpose
    (row-major: `buf[r, k]`, a C-ordered argument)."""

    memref: SSAValue
    column_major: bool
    load: LoadOp | None
    """The load, if the codes are one's."""

    @property
    def packed(self) -> bool:
        """True for two FP4 codes a byte (else one code a byte)."""
        return self.load is not None and self.load.is_packed

    @property
    def bits(self) -> int:
        """Bits of memory one code takes."""
        return 4 if self.packed else 8

    def read(self, e: Emitter, r: Index, k: Index, count: int) -> SSAValue:
        """`count` bytes from the one holding code (r, k) on, along the
        contiguous dimension, as a `vector<count x i8>`."""
        at = self._at(e, r, k)
        memory = self.memref.type
        assert isinstance(memory, MemRefType)
        element = memory.element_type
        data = e.emit(vector.LoadOp(self.memref, at, VectorType(element, [count])))
        if element != i8:  # (i4 codes one a byte: zero-extended bytes)
            data = e.emit(llvm.ZExtOp(data, VectorType(i8, [count])))
        return data

    def prefetch(self, e: Emitter, r: Index, k: Index, locality: int = 3) -> None:
        """A prefetch of the byte holding code (r, k), into L1 (`locality`
        3) or L2 (2)."""
        at = self._at(e, r, k)
        e.builder.insert(PrefetchOp(self.memref, at, locality=locality))

    def _at(self, e: Emitter, r: Index, k: Index) -> list[SSAValue]:
        """The indices of the byte holding code (r, k)."""
        if self.load is None:
            at = [k, r] if self.column_major else [r, k]
            return [e.index(i) for i in at]
        at = e.index(e.position(self.load, r, k))
        return [e.emit(arith.ShRUIOp(at, e.index(1)))] if self.packed else [at]


def match_codes(value: SSAValue, fused: set[Operation]) -> Codes | None:
    """Where the codes `value` are read from, if they are read in place: a
    fused load, a buffer, or a fused transpose of a buffer."""
    column_major = True
    transpose = value.owner
    if isinstance(transpose, TransposeOp) and transpose in fused:
        value, column_major = transpose.input, False
    if (buffer := buffer_of(value)) is not None:
        return Codes(buffer, column_major, None)
    load = value.owner
    if column_major and isinstance(load, LoadOp) and load in fused:
        return Codes(load.memref, load.COLUMN_MAJOR, load)
    return None


@dataclass(frozen=True)
class Weights:
    """The dequantization feeding a matvec."""

    codes: Codes
    format: FloatFormat
    scaled: arbfp.ScaledConvertFromOp | None
    """The block-scaled conversion, if it is one."""
    factor: float | SSAValue | None
    """A per-tensor scale the decoded values are multiplied by: a constant
    (folded into the decoding) or a value."""
    scales: SSAValue | None = None
    """The block scales as the kernel reads them (in column vectors): the
    conversion's, or a column-major copy of them (`with_scales`)."""

    @property
    def fp4(self) -> bool:
        """True for f4e2m1fn codes (decoded by a table)."""
        return self.format.bits == 4

    @property
    def versioned(self) -> bool:
        """True if the packed weights' offset or stride is an index value
        not known to be even: checked at run time (`decoded_matvec`)."""
        load = self.codes.load
        return self.codes.packed and load is not None and not vector_block_access(load)


def _splat_value(value: SSAValue) -> float | SSAValue | None:
    """The scalar of a splat matrix: a float if it is a constant that folds
    into the decoding (`_foldable`), else a value (None for a constant
    matrix that does not fold)."""
    op = value.owner
    if isinstance(op, ConstantOp) and is_splat_constant(op):
        constant = float(op.element(0, 0))
    elif isinstance(op, SplatOp):
        scalar = op.input.owner
        if isinstance(scalar, arith.ConstantOp) and isinstance(scalar.value, FloatAttr):
            constant = float(scalar.value.value.data)
        else:
            return op.input
    else:
        return None
    if _foldable(constant):
        return constant
    return op.input if isinstance(op, SplatOp) else None


def fused_kernel(matrix: SSAValue) -> str:
    """The fused kernel's name for a matvec of the dequantized `matrix`."""
    owner = matrix.owner
    scaled = isinstance(owner, arbfp.ScaledConvertFromOp) or (
        isinstance(owner, MulOp)
        and any(isinstance(x.owner, arbfp.ScaledConvertFromOp) for x in owner.operands)
    )
    return FUSED_BLOCK_SCALED if scaled else FUSED_DECODE


def match_weights(
    op: MatvecOp, fused: set[Operation], lanes: int
) -> Weights | str | None:
    """The dequantization of `op`'s matrix if the kernel of this module
    computes the matvec (`lanes` f32 per machine vector); else why not if
    the matrix is a fused dequantization (a conversion from FP codes,
    possibly times a splat), None if it is not one."""
    weights = _dequantization(op, fused, lanes)
    if not isinstance(weights, Weights):
        return weights
    m = op.matrix.type
    assert isinstance(m, MatrixType)
    codes = weights.codes
    if m.rows < 2 * lanes:
        return f"fewer than {2 * lanes} rows"
    if codes.packed and codes.column_major and m.rows % 2:
        return "an odd number of packed column-major rows"
    if not codes.column_major and (
        why := _row_major_misfit(m, codes.bits, weights.scaled, lanes)
    ):
        return why
    return _readable_packed(weights)


def match_dequantization(
    op: MatvecOp, fused: set[Operation], lanes: int
) -> Weights | str | None:
    """`match_weights` but for the layout (the rows and columns the kernel
    of this module needs): the dequantization of `op`'s matrix if one of
    codes read in place, else why not (None: no dequantization)."""
    weights = _dequantization(op, fused, lanes)
    return _readable_packed(weights) if isinstance(weights, Weights) else weights


def _readable_packed(weights: Weights) -> Weights | str:
    """`weights`, or why their packed codes cannot be read as bytes."""
    load = weights.codes.load
    if (
        weights.codes.packed
        and load is not None
        and not (vector_block_access(load) or versioned_block_access(load))
    ):
        return "the packed offset or stride is odd"
    return weights


def _dequantization(
    op: MatvecOp, fused: set[Operation], lanes: int
) -> Weights | str | None:
    """`match_dequantization` but for the packed codes' layout."""
    value, factor = op.matrix, None
    owner = value.owner
    if isinstance(owner, MulOp) and owner in fused:
        for i, j in ((0, 1), (1, 0)):
            splat = owner.operands[j]
            if splat.owner in fused and (s := _splat_value(splat)) is not None:
                value, factor = owner.operands[i], s
                break
        else:
            return None
    convert = value.owner
    if (
        not isinstance(convert, arbfp.ConvertFromOp | arbfp.ScaledConvertFromOp)
        or convert not in fused
    ):
        return None
    if (
        op.unsigned is not None
        or not isinstance(op.result_element, Float32Type)
        or element_type_of(op.vector.type) != f32
    ):
        return "the vector and the result are not f32"
    if lanes < 4:
        return "vector-bits=0" if lanes == 0 else "vectors of fewer than 4 f32 lanes"
    if not isinstance(element_type_of(value.type), Float32Type):
        return "the weights are not decoded to f32"
    fmt = convert.float_format
    if fmt.keyword not in FORMATS_DECODED:
        return f"{fmt.keyword} elements have no fused kernel"
    scaled = convert if isinstance(convert, arbfp.ScaledConvertFromOp) else None
    if scaled is not None and factor is not None:
        return "a per-tensor scale times block scales"
    codes = match_codes(convert.input, fused)
    if codes is None:
        return "the codes are computed, not read from a matrix load or argument"
    return Weights(
        codes, fmt, scaled, factor, None if scaled is None else scaled.scales
    )


def _row_major_misfit(
    m: MatrixType,
    bits: int,
    scaled: arbfp.ScaledConvertFromOp | None,
    lanes: int,
) -> str | None:
    """Why the row-major kernel does not take W of `bits`-bit codes (None:
    it does): rows of whole words (the last chunk of columns may be
    narrower), block scales constant on each word."""
    chunk, per_word = _chunk(lanes, bits), _per_word(bits)
    if m.cols % per_word != 0:
        return f"row-major rows not whole 32-bit words of {per_word} elements"
    if scaled is None:
        return None
    block = scaled.block_size
    if block % per_word == 0 and (chunk % block == 0 or block % chunk == 0):
        return None
    return f"row-major blocks of {block} elements do not fit 32-bit words"


def _foldable(factor: float) -> bool:
    """True if a constant factor folds into the decoding: into the
    f4e2m1fn table (rounded as the multiply would) and into f8e4m3fn's 2^8
    (exactly: a finite product)."""
    with np.errstate(over="ignore"):
        return bool(np.isfinite(np.float32(factor) * np.float32(256)))


# -- decoding -----------------------------------------------------------------


def _value_of(fmt: FloatFormat, code: int) -> float:
    """The value of a (NaN-free) encoding, from its fields."""
    sign = -1.0 if code >> (fmt.bits - 1) & 1 else 1.0
    exponent = code >> fmt.mantissa_bits & ((1 << fmt.exponent_bits) - 1)
    mantissa = code & ((1 << fmt.mantissa_bits) - 1)
    if exponent == 0:
        return sign * mantissa * 2.0 ** (1 - fmt.bias - fmt.mantissa_bits)
    significand = 1 + mantissa / (1 << fmt.mantissa_bits)
    return sign * significand * 2.0 ** (exponent - fmt.bias)


def _fp4_table(fmt: FloatFormat, factor: float | None) -> list[float]:
    """The 16 decoded values, each times `factor` rounded once to f32 (as
    the multiply of the decoded value would)."""
    values = np.array([_value_of(fmt, c) for c in range(16)], np.float32)
    if factor is not None:
        values = values * np.float32(factor)
    return [float(v) for v in values]


def _look_up(e: Emitter, table: SSAValue, codes: SSAValue, lanes: int) -> SSAValue:
    """The f4e2m1fn values of `codes` (i32 lanes below 16) from `table`: all
    16 values, or the 8 magnitudes (`_magnitudes_only`)."""
    if cast(VectorType, table.type).get_shape() == (16,):
        return _lanes_of(e, table, codes, lanes)
    b = BitwiseEmitter(codes.type, e.constant)
    sign = e.insert_collected(b, b.and_(b.shl(codes, 28), -(1 << 31)))
    if permutes_magnitudes(lanes):
        vt = VectorType(f32, [lanes])
        call = llvm.CallIntrinsicOp(MAGNITUDE_PERMUTE_INTRINSIC, [table, codes], [vt])
        magnitude = e.emit(call)
    else:
        magnitude = _lanes_of(e, table, e.insert_collected(b, b.and_(codes, 7)), lanes)
    bits = b.bitcast(magnitude, i32)
    return e.insert_collected(b, b.bitcast(b.xor(bits, sign), f32))


def _magnitudes_only(lanes: int) -> bool:
    """True where a 16-entry table is no single permute of the target."""
    return lanes < 16 or target_cpu().f32_lanes < 16


WORD_PERMUTE_INTRINSIC = "llvm.x86.avx512.permvar.sf.512"
"""AVX-512's f32 permute (`vpermps`), which reads only the low 4 bits of
each 32-bit index."""


def permutes_low_bits(lanes: int) -> bool:
    """True if f4e2m1fn codes are looked up by `WORD_PERMUTE_INTRINSIC`:
    the target takes x86 intrinsics of 64 bytes (`TargetCpu.byte_shuffle`)
    and a vector is its 16 f32 lanes. A code shifted into the low bits of
    its lane is then the index as it is, with no mask."""
    cpu = target_cpu()
    return lanes == cpu.f32_lanes == 16 and cpu.byte_shuffle == 64


MAGNITUDE_PERMUTE_INTRINSIC = "llvm.x86.avx2.permps"
"""AVX2's f32 permute (`vpermps` of 8 lanes), which reads only the low 3
bits of each 32-bit index."""


def permutes_magnitudes(lanes: int) -> bool:
    """True if the 8 f4e2m1fn magnitudes are looked up by
    `MAGNITUDE_PERMUTE_INTRINSIC`: the target takes x86 intrinsics of 32
    bytes or more (`TargetCpu.byte_shuffle`) and a vector has 8 f32 lanes.
    A code in the low bits of its lane is then its index as it is, with no
    mask, and bits above the code's 4 leave its sign (bit 3 shifted to bit
    31) alone. Written lane by lane (an extract of the code and of the
    table's value, an insert), a row-major MXFP4 kernel of 32 x 256 weights
    was 4.8 MB of LLVM IR that took 21 s to lower for an AVX2 CPU, against
    1.4 MB and 4.5 s for AVX-512's permute."""
    return lanes == 8 and target_cpu().byte_shuffle >= 32


def _lanes_of(e: Emitter, table: SSAValue, codes: SSAValue, lanes: int) -> SSAValue:
    """table[codes[i]] in every lane i."""
    result: SSAValue | None = None
    for lane in range(lanes):
        code = e.emit(vector.ExtractOp(codes, [lane], i32))
        at = e.emit(arith.IndexCastOp(code, IndexType()))
        value = e.emit(vector.ExtractOp(table, [at], f32))
        if result is None:
            result = e.emit(vector.BroadcastOp(value, VectorType(f32, [lanes])))
        else:
            result = e.emit(vector.InsertOp(value, result, [lane]))
    assert result is not None
    return result


def _f16_of(b: BitwiseEmitter, fmt: FloatFormat, placed: SSAValue) -> SSAValue:
    """The f16s of FP8 codes placed in 16-bit lanes as f16 bits: f8e5m2's
    byte in the high byte; f8e4m3fn's sign in bit 15, its exponent and
    mantissa in bits 13 to 7 (worth 2^-8 of the code's value: `power`).
    NaN codes become f16's quiet NaN."""
    if fmt.keyword == "f8e5m2":
        nan = b.less(0x7C00, b.and_(placed, 0x7F00))
    else:
        nan = b.equal(b.and_(placed, 0x3F80), 0x3F80)
    return b.bitcast(b.select(nan, F8_NAN_HALF, placed), f16)


def _halves(e: Emitter, v: SSAValue, lanes: int) -> list[SSAValue]:
    """The first and the second `lanes` lanes of `v`."""
    return [lanes_of(e, v, k * lanes, lanes) for k in (0, 1)]


@dataclass
class _Kernel:
    weights: Weights
    lanes: int
    flags: FastMathFlagsAttr
    table: SSAValue | None = None
    """The f4e2m1fn values (times a constant factor)."""
    factor: SSAValue | None = None
    """A vector of the factor multiplying every decoded value."""

    @property
    def group(self) -> int:
        return 2 * self.lanes

    def prepare(self, e: Emitter) -> None:
        """Constants hoisted out of the loops."""
        w, vt = self.weights, VectorType(f32, [self.lanes])
        constant = w.factor if isinstance(w.factor, float) else None
        if w.fp4:
            values = _fp4_table(w.format, constant)
            if _magnitudes_only(self.lanes):
                values = values[:8]
            table = VectorType(f32, [len(values)])
            attr = DenseIntOrFPElementsAttr.from_list(table, values)
            self.table = e.emit(arith.ConstantOp(attr))
            power = None
        else:
            power = _f16_power(w.format) * (1.0 if constant is None else constant)
            if power == 1.0:  # (f8e5m2 with no constant factor)
                power = None
        if isinstance(w.factor, SSAValue):
            self.factor = e.emit(vector.BroadcastOp(w.factor, vt))
        if power is not None:
            attr = DenseIntOrFPElementsAttr.from_list(vt, [float(np.float32(power))])
            self.power = e.emit(arith.ConstantOp(attr))

    power: SSAValue | None = None
    """What the f16 of an FP8 code is multiplied by: 2^8 for f8e4m3fn (its
    exponent bias is 8 below f16's), times a constant factor; None for 1."""

    def folded(self, e: Emitter) -> tuple[SSAValue, "_Kernel"] | None:
        """For a factor known only at run time, s, times f8e4m3fn's `power`
        (2^8): whether s·2^8 is finite, and the kernel that multiplies the
        f16s' f32s by s·2^8 once instead of by 2^8 and then by s; None
        where there is no such pair. Where s·2^8 is finite it is exact, so
        d·(s·2^8) and (d·2^8)·s are the same real number, rounded once: the
        same bits (NaN s fails the check). On an AMD Zen 3, FP8 e4m3fn
        2048 x 4096 from DRAM, strict, one thread (same-process A/Bs): 301
        -> 273 ps a weight at K = 4096, 254 -> 248 at K = 4064, 290 -> 260
        with the weights in L3."""
        factor = self.weights.factor
        if not isinstance(factor, SSAValue) or self.power is None:
            return None
        power = e.scalar_constant(_f16_power(self.weights.format), f32)
        product = e.emit(arith.MulfOp(factor, power))
        finite = [
            e.emit(arith.CmpfOp(product, e.scalar_constant(bound, f32), predicate))
            for bound, predicate in ((float("inf"), "olt"), (float("-inf"), "ogt"))
        ]
        both = e.emit(arith.AndIOp(finite[0], finite[1]))
        vt = VectorType(f32, [self.lanes])
        spread = e.emit(vector.BroadcastOp(product, vt))
        return both, replace(self, factor=spread, power=None)

    def scale_vector(self, e: Emitter, r: Index, k: Index, width: int) -> SSAValue:
        """The block scales of rows r .. r+width-1 at column `k`."""
        return self.scale_values(e, self.scale_codes(e, r, k, width))

    def scale_codes(self, e: Emitter, r: Index, k: Index, width: int) -> SSAValue:
        """The codes of `scale_vector` (a vector of `width` i8)."""
        op, scales = self.weights.scaled, self.weights.scales
        assert op is not None and scales is not None
        column = block_index(e, k, op.block_size)
        return read_block(e, scales, r, column, width, True)

    def scale_values(self, e: Emitter, codes: SSAValue) -> SSAValue:
        """The block scales of a vector of their i8 codes."""
        op = self.weights.scaled
        assert op is not None
        width = cast(VectorType, codes.type).get_shape()[0]
        codes = e.emit(llvm.ZExtOp(codes, VectorType(i32, [width])))
        ops, scale = emit_convert_from(
            op.scale_float_format, codes, VectorType(f32, [width]), e.constant
        )
        for x in ops:
            e.builder.insert(x)
        return scale

    def scales(self, e: Emitter, r: Index, k: Index) -> list[SSAValue] | None:
        """The block scales of the group of rows at `r`, column `k`, in the
        order of the decoded vectors."""
        if self.weights.scaled is None:
            return None
        lanes = self.lanes
        scale = self.scale_vector(e, r, k, self.group)
        if self.weights.codes.packed:  # (even rows, odd rows: `decode`)
            vt = VectorType(f32, [lanes])
            return [
                e.emit(build.shuffle(scale, scale, range(parity, 2 * lanes, 2), vt))
                for parity in (0, 1)
            ]
        return _halves(e, scale, lanes)

    def decode(
        self, e: Emitter, r: Index, k: Index, scales: Sequence[SSAValue] | None
    ) -> list[SSAValue]:
        """The decoded weights of the group of rows at `r`, column `k`."""
        w, lanes = self.weights, self.lanes
        if w.codes.packed:
            data = w.codes.read(e, r, k, lanes)
            data = e.emit(llvm.ZExtOp(data, VectorType(i32, [lanes])))
            values = [self.nibble(e, data, 0), self.nibble(e, data, 4, top=True)]
        elif w.fp4:  # (one code a byte, below 16)
            data = w.codes.read(e, r, k, 2 * lanes)
            data = e.emit(llvm.ZExtOp(data, VectorType(i32, [2 * lanes])))
            values = [self.look_up(e, c) for c in _halves(e, data, lanes)]
        else:
            data = w.codes.read(e, r, k, 2 * lanes)
            wide = e.emit(llvm.SExtOp(data, VectorType(i16, [2 * lanes])))
            b = BitwiseEmitter(wide.type, e.constant)
            if w.format.keyword == "f8e5m2":
                placed = b.shl(wide, 8)
            else:  # sign-extended, shifted left by 7, bit 14 cleared
                placed = b.and_(b.shl(wide, 7), 0xBFFF)
            halfs = e.insert_collected(b, _f16_of(b, w.format, placed))
            values = [
                self.powered(e, e.emit(arith.ExtFOp(h, VectorType(f32, [lanes]))))
                for h in _halves(e, halfs, lanes)
            ]
        return self.scaled(e, values, scales)

    def word_elements(self, e: Emitter, words: SSAValue) -> list[SSAValue]:
        """The decoded elements 0, 1, ... of every 32-bit lane of `words`
        (before the scales). FP8 codes are placed as f16 bits (as `decode`
        places them) two lanes at a time: each 32-bit lane is two 16-bit
        lanes, codes 0 and 2 in their low bytes, 1 and 3 in their high ones;
        one permute then takes code 0 of every lane to the first half and
        code 2 to the second (their f16 extended to f32 half by half). Code
        by code, each in the low half of its 32-bit lane, the f16s were
        narrowed to 16 bits first (`vpmovdw`, 2 uops on AVX-512) and the
        placing and NaN test ran on 16 lanes, not 32: a step's loop had 993
        vector instructions, now 713 (row-major FP8 e4m3fn times a scale
        argument, 2048 x 4096 from DRAM, one thread, Intel Xeon with
        AVX512-FP16: 154 -> 134 ps a weight with rows 4128 bytes apart, 162
        -> 142 with rows 4096 bytes apart)."""
        if self.weights.fp4:
            bits = self.weights.codes.bits
            return [self.nibble(e, words, bits * n) for n in range(_per_word(bits))]
        lanes = self.lanes
        pairs = e.emit(vector.BitcastOp(words, VectorType(i16, [2 * lanes])))
        b = BitwiseEmitter(pairs.type, e.constant)
        fmt = self.weights.format
        if fmt.keyword == "f8e5m2":
            placed = [b.shl(pairs, 8), b.and_(pairs, 0xFF00)]
        else:
            low = b.binary(arith.ShRSIOp, b.shl(pairs, 8), 1)
            high = b.binary(arith.ShRSIOp, pairs, 1)
            placed = [b.and_(v, 0xBF80) for v in (low, high)]
        halfs = [_f16_of(b, fmt, p) for p in placed]
        e.insert_collected(b, halfs[0])
        apart = [*range(0, 2 * lanes, 2), *range(1, 2 * lanes, 2)]
        elements: list[list[SSAValue]] = []
        for h in halfs:
            spread = e.emit(build.shuffle(h, h, apart, VectorType(f16, [2 * lanes])))
            elements.append(
                [
                    self.powered(e, e.emit(arith.ExtFOp(v, VectorType(f32, [lanes]))))
                    for v in _halves(e, spread, lanes)
                ]
            )
        (code_0, code_2), (code_1, code_3) = elements
        return [code_0, code_1, code_2, code_3]

    def powered(self, e: Emitter, value: SSAValue) -> SSAValue:
        """An FP8 code's f16, extended to f32, times `power`."""
        if self.power is None:
            return value
        return e.emit(arith.MulfOp(value, self.power))

    def look_up(self, e: Emitter, codes: SSAValue) -> SSAValue:
        """The f4e2m1fn values of `codes` (i32 lanes below 16)."""
        assert self.table is not None
        return _look_up(e, self.table, codes, self.lanes)

    def nibble(
        self, e: Emitter, words: SSAValue, shift: int, top: bool = False
    ) -> SSAValue:
        """The f4e2m1fn values of the codes at bits `shift` to `shift` + 3
        of each i32 lane of `words` (`top`: no bit above them is set):
        shifted down, masked unless the target `permutes_low_bits` or `top`,
        looked up."""
        permute = permutes_low_bits(self.lanes)
        b = BitwiseEmitter(words.type, e.constant)
        codes = b.shr(words, shift) if shift else words
        if not (top or permute or permutes_magnitudes(self.lanes)):
            codes = b.and_(codes, 15)
        codes = e.insert_collected(b, codes)
        if not permute:
            return self.look_up(e, codes)
        assert self.table is not None
        vt = VectorType(f32, [self.lanes])
        return e.emit(
            llvm.CallIntrinsicOp(WORD_PERMUTE_INTRINSIC, [self.table, codes], [vt])
        )

    def scaled(
        self, e: Emitter, values: list[SSAValue], scales: Sequence[SSAValue] | None
    ) -> list[SSAValue]:
        """`values` times the per-tensor factor, then the block scales."""
        if self.factor is not None:
            values = [e.emit(arith.MulfOp(v, self.factor)) for v in values]
        if scales is not None:
            values = [
                e.emit(arith.MulfOp(v, s)) for v, s in zip(values, scales, strict=True)
            ]
        return values


def decoded_matvec(
    e: Emitter,
    op: MatvecOp,
    weights: Weights,
    lanes: int,
    allocate: Callable[[MatrixType], SSAValue],
    otherwise: Callable[[Emitter], SSAValue],
    parallel: bool = False,
) -> SSAValue:
    """y = W·x (+ bias) for `match_weights`' W (see the module docs). Packed
    weights whose offset or stride may be odd (`Weights.versioned`) are read
    as whole bytes only if both are even at run time, else by `otherwise`
    (element by element). With `parallel`, blocks of its groups of rows run
    on threads (not inside the run-time version check: the outlined loops
    stay at the function's top level)."""
    return versioned(
        e,
        op,
        weights,
        lambda f, threads: _decoded_matvec(f, op, weights, lanes, allocate, threads),
        otherwise,
        parallel,
    )


def versioned(
    e: Emitter,
    op: MatvecOp,
    weights: Weights,
    kernel: Callable[[Emitter, bool], SSAValue],
    otherwise: Callable[[Emitter], SSAValue],
    parallel: bool,
) -> SSAValue:
    """`kernel(e, parallel)`, or for packed weights whose offset or stride
    may be odd (`Weights.versioned`) `kernel` without threads if both are
    even at run time, else `otherwise`."""
    if not weights.versioned:
        return kernel(e, parallel)
    (y,) = _if(
        e,
        even_layout(e, cast(LoadOp, weights.codes.load)),
        [op.result.type],
        lambda f: [kernel(f, False)],
        lambda f: [otherwise(f)],
    )
    return y


def _decoded_matvec(
    e: Emitter,
    op: MatvecOp,
    weights: Weights,
    lanes: int,
    allocate: Callable[[MatrixType], SSAValue],
    parallel: bool,
) -> SSAValue:
    m = op.matrix.type
    assert isinstance(m, MatrixType)
    rows, cols, flags = m.rows, m.cols, op.fastmath
    kernel = _Kernel(weights, lanes, flags)
    kernel.prepare(e)
    group, vt = kernel.group, VectorType(f32, [lanes])
    x = allocate(MatrixType(cols, 1, f32))
    padded = -(-rows // group) * group  # (a last, overlapping group's sums)
    sums = allocate(MatrixType(padded, 1, f32))
    y = allocate(MatrixType(rows, 1, f32))
    zero = e.index(0)
    e.builder.insert(vector.StoreOp(op.vector, x, [zero, zero]))
    minus_zero = e.emit(vector.BroadcastOp(_identity(e, f32), vt))

    def fill(f: Emitter, i: SSAValue, _: object) -> list[SSAValue]:
        at = [f.index(0), block_start(f, 0, lanes, i)]
        f.builder.insert(vector.StoreOp(minus_zero, sums, at))
        return []

    e.loop(0, padded // lanes, [], fill)
    if weights.codes.column_major:
        _column_passes(e, kernel, m, x, sums, parallel)
    else:
        _row_passes(e, kernel, m, x, sums, parallel)
    bias = None
    if op.bias is not None:
        bias = allocate(MatrixType(rows, 1, f32))
        e.builder.insert(vector.StoreOp(op.bias, bias, [zero, zero]))

    def finish(f: Emitter, r: Index, at_row: Index) -> None:
        """Rows r.. of a group (sums at `at_row`) in their order, plus the
        bias."""
        at = [[f.index(0), f.index(offset(f, at_row, h * lanes))] for h in (0, 1)]
        rows_at = [[f.index(0), f.index(offset(f, r, h * lanes))] for h in (0, 1)]
        parts = [f.emit(vector.LoadOp(sums, a, vt)) for a in at]
        if weights.codes.packed and weights.codes.column_major:  # (even, odd) -> rows
            parts = [
                f.emit(
                    build.shuffle(
                        parts[0],
                        parts[1],
                        build.interleaving(h * lanes // 2, lanes // 2, lanes),
                        vt,
                    )
                )
                for h in (0, 1)
            ]
        for a, part in zip(rows_at, parts, strict=True):
            if bias is not None:
                part = f.emit(add(part, f.emit(vector.LoadOp(bias, a, vt)), flags))
            f.builder.insert(vector.StoreOp(part, y, a))

    _for_groups(e, rows, group, finish)
    return e.emit(vector.LoadOp(y, [zero, zero], op.result.type))


def _for_groups(
    e: Emitter,
    rows: int,
    group: int,
    body: Callable[[Emitter, Index, Index], None],
    parallel: bool = False,
) -> None:
    """`body(e, r, at_row)` for every group of `group` rows r.. (their sums
    at row `at_row`): the whole groups (with `parallel`, on threads: each
    group writes its own sums), then, if `group` does not divide `rows`, the
    last `group` rows (overlapping the group before: its rows are computed
    twice, to the same values) with their sums past the others'."""
    full, last = divmod(rows, group)
    if full:

        def groups(f: Emitter, i: SSAValue, _: object) -> list[SSAValue]:
            if parallel:
                assert isinstance(i, BlockArgument)
                mark_parallel(i.block)
            r = block_start(f, 0, group, i)
            body(f, r, r)
            return []

        e.loop(0, full, [], groups)
    if last:
        body(e, rows - group, full * group)


def _for_chunks(
    e: Emitter, cols: int, chunk: int, body: Callable[[Emitter, Index, int], None]
) -> None:
    """`body(e, k0, count)` for every chunk of `chunk` columns (then the
    last, narrower one)."""
    full, last = divmod(cols, chunk)
    if full:

        def chunks(f: Emitter, p: SSAValue, _: object) -> list[SSAValue]:
            body(f, block_start(f, 0, chunk, p), chunk)
            return []

        e.loop(0, full, [], chunks)
    if last:
        body(e, full * chunk, last)


_Rows = tuple[int, int] | tuple[SSAValue, int, int, int]
"""The groups of rows a pass runs over: all, or one block (`blocked._for`)."""


def _column_passes(
    e: Emitter,
    kernel: _Kernel,
    m: MatrixType,
    x: SSAValue,
    sums: SSAValue,
    parallel: bool,
) -> None:
    """Adds every column to the sums: column-major W, a pass per `COLUMNS`
    columns over groups of rows, each column one contiguous read. With
    `parallel`, the groups of rows are split in `PARALLEL_BLOCKS` blocks at
    least, and each thread runs every pass over the rows of its blocks."""
    lanes, group, flags = kernel.lanes, kernel.group, kernel.flags
    vt = VectorType(f32, [lanes])
    columns = COLUMNS
    if kernel.weights.scaled is not None:
        columns = gcd(columns, kernel.weights.scaled.block_size)

    def x_of(f: Emitter, k0: Index, count: int) -> list[SSAValue]:
        """x[k0 .. k0+count-1], each broadcast."""
        return [
            f.emit(vector.BroadcastOp(f.load_buffer(x, offset(f, k0, j), 0), vt))
            for j in range(count)
        ]

    def rows_of(
        g: Emitter,
        k0: Index,
        count: int,
        r: Index,
        at_row: Index,
        xs: list[SSAValue] | None = None,
    ) -> None:
        """Columns k0 .. k0+count-1 added to the sums of the group of rows r..
        (its sums at row `at_row`); `xs`: their x, broadcast before the loop
        over the rows, else here."""
        at = [[g.index(0), g.index(offset(g, at_row, h * lanes))] for h in (0, 1)]
        accs = [g.emit(vector.LoadOp(sums, a, vt)) for a in at]
        scales = kernel.scales(g, r, k0)
        # The next pass's columns (the last pass's again, for the last):
        # one bound check, constant offsets from it.
        ahead = None
        if not isinstance(k0, int) and m.cols > columns:
            ahead = _min(g, _d(0) + columns, m.cols - columns, [k0])
        for j in range(count):
            k = offset(g, k0, j)
            if ahead is not None:
                kernel.weights.codes.prefetch(g, r, offset(g, ahead, j), locality=2)
            values = kernel.decode(g, r, k, scales)
            xk = x_of(g, k, 1)[0] if xs is None else xs[j]
            accs = [
                _step(g, flags, v, xk, a) for v, a in zip(values, accs, strict=True)
            ]
        for a, acc in zip(at, accs, strict=True):
            g.builder.insert(vector.StoreOp(acc, sums, a))

    full, last = divmod(m.rows, group)
    if not parallel or full < 2:

        def one_pass(f: Emitter, k0: Index, count: int) -> None:
            _for_groups(
                f, m.rows, group, lambda g, r, at_row: rows_of(g, k0, count, r, at_row)
            )

        _for_chunks(e, m.cols, columns, one_pass)
        return
    per_block = _ceil(full, PARALLEL_BLOCKS)

    def row_block(f: Emitter, rb: SSAValue, _: object) -> list[SSAValue]:
        assert isinstance(rb, BlockArgument)
        mark_parallel(rb.block)

        def block_pass(h: Emitter, k0: Index, count: int) -> None:
            # x's broadcasts before the loop over the rows: in the outlined
            # function its buffer is an argument that the stores to the sums
            # may alias for LLVM, which then reloads it for every group
            # (1.35x slower a weight on one thread).
            xs = x_of(h, k0, count)

            def each(g: Emitter, i: SSAValue, _: object) -> list[SSAValue]:
                # On threads, each pass runs over all the blocks of the thread
                # (`outline-parallel-loops`): one sweep of the columns' codes,
                # not one per block (1.15x slower a weight on one thread).
                assert isinstance(i, BlockArgument)
                mark_parallel_block(i.block)
                r = block_start(g, 0, group, i)
                rows_of(g, k0, count, r, r, xs)
                return []

            _for(h, (rb, per_block, per_block, full), [], each)

        _for_chunks(f, m.cols, columns, block_pass)
        return []

    e.loop(0, _ceil(full, per_block), [], row_block)
    if last:  # the last group, overlapping the one before (see `_for_groups`)
        _for_chunks(
            e,
            m.cols,
            columns,
            lambda h, k0, count: rows_of(h, k0, count, m.rows - group, full * group),
        )


def _per_word(bits: int) -> int:
    """Codes of `bits` bits in a 32-bit word: 8 packed f4e2m1fn, else 4."""
    return 32 // bits


def _lines_in_an_l1_set(rows: int, pitch: int) -> int:
    """The most lines at one column of `rows` rows `pitch` bytes apart that
    fall in one set of the target's L1."""
    caches = target_cpu().caches
    span = max(CACHE_LINE, caches.l1_bytes // caches.l1_ways)
    sets = span // gcd(pitch, span)
    return -(-rows // sets)


def _per_line(per_word: int) -> int:
    """Columns a cache line of a row holds: its 32-bit words of `per_word`
    codes."""
    return CACHE_LINE // 4 * per_word


def _chunk(lanes: int, bits: int) -> int:
    """Columns one row-major pass reads: 2·lanes bytes (lanes/2 words) of
    every row."""
    return lanes // 2 * _per_word(bits)


def _transpose_halves(e: Emitter, lines: list[SSAValue]) -> list[SSAValue]:
    """Line i of `lines` (n of them, 2n lanes) holds words of row i in its
    first half and of row n + i in its second: the result's line j holds
    word j of rows 0 .. 2n-1 (two n x n transposes side by side: log2(n)
    rounds of interleaving line i with line i + n/2 in each half)."""
    n = len(lines)
    vt = lines[0].type
    assert isinstance(vt, VectorType)
    lanes = 2 * n

    def mask(first: int) -> list[int]:
        return [
            *build.interleaving(first, n // 2, lanes),
            *build.interleaving(n + first, n // 2, lanes),
        ]

    low, high = mask(0), mask(n // 2)
    for _ in range(n.bit_length() - 1):
        interleaved: list[SSAValue] = []
        for i in range(n // 2):
            a, b = lines[i], lines[i + n // 2]
            for pick in (low, high):
                interleaved.append(e.emit(build.shuffle(a, b, pick, vt)))
        lines = interleaved
    return lines


_T = TypeVar("_T")


def _shifted(f: Callable[[Emitter, int], _T], by: int, e: Emitter, i: int) -> _T:
    """f(e, i + by)."""
    return f(e, i + by)


_WordScales = Callable[[Emitter, int], list[SSAValue]]
"""The block scales of word j of a step, one vector per tile of rows."""


def _line_scales(
    e: Emitter,
    kernel: _Kernel,
    starts: list[Index],
    k0: Index,
    per_word: int,
    on_block: bool = False,
) -> _WordScales:
    """The block scales of word j of a cache line of each row from column
    k0 (a multiple of `per_word`, so no word spans two blocks): of the block
    holding column k0 + per_word·j. With k0 an index value (a line's start),
    word j is in the block holding column k0 + c or in the next one, c =
    (per_word·j // B)·B (B the block): the next one iff (k0 mod B) +
    (per_word·j mod B) >= B (one select); the next block holds column
    k0 + min(c + B, last column of the line)."""
    scaled = kernel.weights.scaled
    assert scaled is not None
    block, last = scaled.block_size, _per_line(per_word) - 1
    of_column: dict[int, list[SSAValue]] = {}

    def at(h: Emitter, column: int) -> list[SSAValue]:
        """The scales of the block holding column k0 + column."""
        if column not in of_column:
            k = offset(h, k0, column)
            of_column[column] = [
                kernel.scale_vector(h, s, k, kernel.lanes) for s in starts
            ]
        return of_column[column]

    if isinstance(k0, int):
        return lambda h, j: at(h, max(0, (k0 + per_word * j) // block * block - k0))
    if on_block:  # (k0 a multiple of the block, checked at run time)
        return lambda h, j: at(h, per_word * j // block * block)
    into = e.emit(arith.RemUIOp(k0, e.index(block)))

    def word(h: Emitter, j: int) -> list[SSAValue]:
        column = per_word * j // block * block
        this = at(h, column)
        past = per_word * j % block
        if past == 0:  # (a word at a block's start: (k0 mod B) < B)
            return this
        following = at(h, min(column + block, last))
        crosses = h.emit(arith.CmpiOp(into, h.index(block - past), "uge"))
        return [
            h.emit(arith.SelectOp(crosses, n, t))
            for n, t in zip(following, this, strict=True)
        ]

    return word


def _row_passes(
    e: Emitter,
    kernel: _Kernel,
    m: MatrixType,
    x: SSAValue,
    sums: SSAValue,
    parallel: bool,
) -> None:
    """Adds every column to the sums: row-major W, a pass per `_chunk`
    columns over groups of two tiles of `lanes` rows. A tile's rows are read
    as 32-bit words and transposed in registers (its line j: word j of each
    row); element k0 + P·j + n of the rows (P elements a word) is then
    element n of line j's words."""
    lanes, flags, codes = kernel.lanes, kernel.flags, kernel.weights.codes
    vt, words, per_word = VectorType(f32, [lanes]), lanes // 2, _per_word(codes.bits)
    chunk = _chunk(lanes, codes.bits)
    scaled = kernel.weights.scaled
    half = VectorType(i32, [words])
    memory = RowMajorMemory(codes.memref, codes.load)
    pitch = (memory.pitch or m.cols) * codes.bits // 8
    """Bytes from a row to the next (a stride known only at run time is taken
    to be the row's length)."""
    ways = target_cpu().caches.l1_ways
    line = _per_line(per_word)
    in_lines = (
        (memory.pitch is None or pitch % CACHE_LINE == 0)
        and m.cols >= line
        and _lines_in_an_l1_set(lanes, pitch) > ways
    )
    """Rows read by chunks from column 0 come back to a row's line for each
    of its chunks; where one tile's lines of a step overflow the L1 set they
    share (rows a multiple of 4 KiB apart, more rows in a tile than the L1
    has ways), a line read in two steps came from L2 twice, and rows that
    start at the same place in a line are read by whole cache lines of each
    row in a step instead, from the first column at a line's start (on an
    Intel Xeon with AVX512-FP16, 16 lanes and a 12-way L1, 2048 x 4096
    MXFP4 from DRAM, one thread: 96-99 against 107-110 ps a weight in
    chunks). Where one tile's lines fit, chunks are faster: on an AMD Zen 3
    (8 lanes, an 8-way L1), 2048 rows from DRAM, one thread, ps a weight
    (same-process A/Bs, 7 interleaved rounds), lines against chunks at
    K = 4096: FP8 e4m3fn 287-304 against 264-304, MXFP8 e4m3 316-335
    against 266-306, MXFP4 (packed rows 2 KiB apart) 196-232 against
    162-182; MXFP4 at K = 2048 207-274 against 181-188; FP8 e4m3fn at
    K = 11008 276 against 246 (rows in different sets: two tiles)."""
    one_by_one = (
        scaled is None and not codes.packed
        if in_lines
        else _lines_in_an_l1_set(2 * lanes, pitch) >= ways
    )
    """The group's two tiles are taken one after the other (`lanes` rows
    streamed at once instead of 2 x `lanes`) by chunks where two tiles'
    lines fill the L1 set they share, so that the lines a chunk step leaves
    for the next stay in L1: on the Zen 3 above, chunks one tile at a time
    against two, FP8 e4m3fn at K = 4096 (rows 4 KiB apart) 264-298 against
    312-343, MXFP8 e4m3 298-306 against 359, MXFP4 at K = 4096 (two tiles'
    lines fill the 8 ways) 162-182 against 206-221. Read by lines, FP8
    codes without block scales take their tiles one after the other: on
    the Xeon above FP8 e4m3fn 133-134 -> 127-128 and e5m2 124-125 -> 115-117
    ps a weight, but MXFP8 e4m3 154 -> 177 (near the bound of one tile's
    sums, a chain of dependent adds of 16 weights each)."""

    def row_words(g: Emitter, row: Index, k0: Index, count: int) -> SSAValue:
        """`count` words of `row` from column k0, as the first lanes of a
        `half` vector (the others repeat word 0 and are never used)."""
        data = codes.read(g, row, k0, 4 * count)
        if count == words:
            return g.emit(vector.BitcastOp(data, half))
        loaded = g.emit(vector.BitcastOp(data, VectorType(i32, [count])))
        padding = list(range(count)) + [0] * (words - count)
        return g.emit(build.shuffle(loaded, loaded, padding, half))

    def tile(g: Emitter, r: Index, k0: Index, count: int) -> list[SSAValue]:
        lines: list[SSAValue] = []
        for i in range(words):
            first = row_words(g, offset(g, r, i), k0, count)
            second = row_words(g, offset(g, r, words + i), k0, count)
            both = range(lanes)
            lines.append(
                g.emit(build.shuffle(first, second, both, VectorType(i32, [lanes])))
            )
        return _transpose_halves(g, lines)

    def add_chunk(
        g: Emitter,
        decode: _Kernel,
        starts: list[Index],
        k0: Index,
        accs: list[SSAValue],
        count: int,
        keep: _Keep | None = None,
        word_scales: _WordScales | None = None,
    ) -> list[SSAValue]:
        """The sums of the two tiles at `starts` plus the `count` words of
        columns from k0 (with `keep`, only column k0 + i where `keep(i)`
        holds). The block scales of word j are `word_scales(j)` (default:
        those of a k0 that starts a block)."""
        tiles = [tile(g, s, k0, count) for s in starts]
        scales: dict[int, list[SSAValue]] = {}
        for j in range(count):
            first = per_word * j
            block_scales: list[SSAValue] | None = None
            if word_scales is not None:
                block_scales = word_scales(g, j)
            elif scaled is not None:
                block = first // scaled.block_size
                if block not in scales:
                    k = offset(g, k0, first)
                    scales[block] = [
                        decode.scale_vector(g, s, k, lanes) for s in starts
                    ]
                block_scales = scales[block]
            elements = [decode.word_elements(g, lines[j]) for lines in tiles]
            for n in range(per_word):
                k = offset(g, k0, first + n)
                xk = g.emit(vector.BroadcastOp(g.load_buffer(x, k, 0), vt))
                for t in range(len(tiles)):
                    values = decode.scaled(
                        g,
                        [elements[t][n]],
                        None if block_scales is None else [block_scales[t]],
                    )
                    added = _step(g, flags, values[0], xk, accs[t])
                    accs[t] = (
                        added
                        if keep is None
                        else g.emit(arith.SelectOp(keep(g, first + n), added, accs[t]))
                    )
        return accs

    def prefetch_next_rows(g: Emitter, starts: list[Index], k0: Index) -> None:
        """For packed FP4 codes, a prefetch into L2 of each row one group
        below at column k0: the rows of a group are 2 x `lanes` streams
        read at once, more than the hardware prefetchers follow. Row-major
        MXFP4, 2048 x 4096 from DRAM, one thread, Intel Xeon with
        AVX512-FP16, ps a weight (same-process A/B): 104-111 -> 90-97 in
        lines, 88 -> 73 in chunks (K = 4064; a prefetch a chunk, two a line).
        FP8 codes, twice the bytes a weight, got slower (MXFP8 e4m3 168-172
        -> 188-190), as in session 29's A/B of FP8 e4m3fn (180 -> 207). Past
        the last row it is a prefetch of memory the kernel does not read,
        which never faults."""
        if not codes.packed:
            return
        for s in starts:
            for i in range(lanes):
                codes.prefetch(g, offset(g, s, i + 2 * lanes), k0, locality=2)

    def add_lines(
        g: Emitter,
        decode: _Kernel,
        starts: list[Index],
        k0: Index,
        accs: list[SSAValue],
        keep: _Keep | None = None,
        on_block: bool = False,
    ) -> list[SSAValue]:
        """`add_chunk` of the two chunks of a cache line of each row from
        k0, one after the other in the same step (a line read in two steps
        came from L2 twice: `in_lines`); k0 is a multiple of a word's
        elements, and with `on_block` of the block, else of neither
        (`_line_scales`). Each chunk is read as
        its own bytes of each row, as `add_chunk` reads them: reading the
        whole line of a row at once took a two-source permute per pair of
        rows to pick a chunk (2048 x 4096 from DRAM, one thread, Intel Xeon
        with AVX512-FP16, ps a weight: MXFP8 e4m3 169-181 -> 162-171, e5m2
        155-161 -> 151-158, FP8 e4m3fn 152-159 -> 144-156)."""
        prefetch_next_rows(g, starts, k0)
        line_scales = (
            None
            if scaled is None
            else _line_scales(g, decode, starts, k0, per_word, on_block)
        )
        for c in range(CACHE_LINE // (4 * words)):
            k = offset(g, k0, c * chunk)
            masked = None if keep is None else partial(_shifted, keep, c * chunk)
            chunk_scales = (
                None
                if line_scales is None
                else partial(_shifted, line_scales, c * words)
            )
            accs = add_chunk(g, decode, starts, k, accs, words, masked, chunk_scales)
        return accs

    folded = kernel.folded(e)

    def rows_of(g: Emitter, r: Index, at_row: Index) -> None:
        """The group's two tiles at once, or one after the other
        (`one_by_one`); with a run-time factor that folds into the decoding
        (`_Kernel.folded`), by the folded kernel where it is finite."""
        tiles = [
            (offset(g, r, h * lanes), offset(g, at_row, h * lanes)) for h in (0, 1)
        ]

        def each(h: Emitter, decode: _Kernel) -> list[SSAValue]:
            for part in [tiles[:1], tiles[1:]] if one_by_one else [tiles]:
                tiles_of(h, decode, [s for s, _ in part], [a for _, a in part])
            return []

        if folded is None:
            each(g, kernel)
            return
        finite, decode = folded
        _if(g, finite, [], partial(each, decode=decode), partial(each, decode=kernel))

    def tiles_of(
        g: Emitter, decode: _Kernel, starts: list[Index], sums_at: list[Index]
    ) -> None:
        """Tiles of rows at `starts`, every chunk of columns in turn (each
        row a sequential read), their sums (at rows `sums_at`) carried in
        registers."""
        at = [[g.index(0), g.index(a)] for a in sums_at]
        accs = [g.emit(vector.LoadOp(sums, a, vt)) for a in at]

        def chunks(
            h: Emitter, p: SSAValue, carried: Sequence[SSAValue]
        ) -> list[SSAValue]:
            k0 = block_start(h, 0, chunk, p)
            prefetch_next_rows(h, starts, k0)
            return add_chunk(h, decode, starts, k0, list(carried), words)

        if in_lines:
            first = line_start(g, starts[0], memory=memory, bits=codes.bits)
            if scaled is not None:  # (no word across two blocks)
                within = g.emit(arith.RemUIOp(first, g.index(per_word)))
                first = g.emit(arith.SubiOp(first, within))

            def lines(
                h: Emitter,
                k0: Index,
                carried: Sequence[SSAValue],
                keep: _Keep | None,
                on_block: bool = False,
            ) -> list[SSAValue]:
                return add_lines(
                    h,
                    decode,
                    starts,
                    k0,
                    list(carried),
                    keep,
                    on_block and keep is None,
                )

            def stepped(h: Emitter, on_block: bool) -> list[SSAValue]:
                body = partial(lines, on_block=on_block)
                return list(steps_in_lines(h, first, m.cols, line, accs, body))

            block = 0 if scaled is None else scaled.block_size
            if scaled is None or (line % block and block % line):
                # (a block longer than a line and not a multiple of it: a
                # step after one on a block's start starts inside a block)
                accs = stepped(g, False)
            else:
                # Rows whose line starts on a block's start (16-byte aligned
                # packed FP4 rows, 32-byte aligned MXFP8 ones) take the scales
                # of each word's own block, no select: every step then starts
                # on a block's start, or inside the block that holds it all.
                into = g.emit(arith.RemUIOp(first, g.index(block)))
                on_block = g.emit(arith.CmpiOp(into, g.index(0), "eq"))
                types = [a.type for a in accs]
                accs = list(
                    _if(
                        g,
                        on_block,
                        types,
                        lambda h: stepped(h, True),
                        lambda h: stepped(h, False),
                    )
                )
        else:
            full, last = divmod(m.cols, chunk)
            accs = list(g.loop(0, full, accs, chunks)) if full else accs
            if last:
                accs = add_chunk(
                    g, decode, starts, full * chunk, accs, last // per_word
                )
        for a, acc in zip(at, accs, strict=True):
            g.builder.insert(vector.StoreOp(acc, sums, a))

    _for_groups(e, m.rows, 2 * lanes, rows_of, parallel)

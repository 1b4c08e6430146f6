"""Block-scaled conversions (`arbfp.scaled_convert_from` / `scaled_convert_to`)
inside `convert-matrix-to-affine`.

scaled_convert_from is elementwise in its elements operand: element (r, c)
is computed where it is needed (fused like the plain converts, so a
contraction or store reading it decodes in registers) from element (r, c)
and scale (r, c // N); its scales operand gets a buffer (each scale is read
N times). scaled_convert_to writes two buffers in one loop nest over rows and
blocks: a first pass over the block's N elements carries the running
maximum of their magnitudes, which gives the block's scale code; a second
pass converts them. The scalar arithmetic is `convert-arbfp-to-arith`'s.
"""

from collections.abc import Sequence

from xdsl.dialects import arith
from xdsl.dialects.builtin import (
    DenseIntOrFPElementsAttr,
    IndexType,
    IntegerAttr,
    IntegerType,
    VectorType,
)
from xdsl.ir import Operation, SSAValue

from mx.dialects.arbfp import ScaledConvertFromOp, ScaledConvertToOp
from mx.dialects.matrix import MatrixType
from mx.lowering.convert_arbfp_to_arith import (
    emit_block_scale,
    emit_magnitude_bits,
    emit_scaled_convert_from,
    emit_scaled_elements,
)
from mx.lowering.matrix_to_affine.elements import Emitter, Index


def _insert(e: Emitter, ops: Sequence[Operation], value: SSAValue) -> SSAValue:
    for op in ops:
        e.builder.insert(op)
    return value


def _scaled_index(e: Emitter, i: Index, factor: int, by: Index = 0) -> Index:
    """`i * factor + by` as an index."""
    if isinstance(i, int) and isinstance(by, int):
        return i * factor + by
    scaled = e.emit(arith.MuliOp(e.index(i), e.index(factor)))
    return scaled if by == 0 else e.emit(arith.AddiOp(scaled, e.index(by)))


def block_index(e: Emitter, c: Index, block: int) -> Index:
    """`c // block`, the column of the scale of column `c`."""
    if isinstance(c, int):
        return c // block
    if block == 1:
        return c
    divisor = e.emit(arith.ConstantOp(IntegerAttr(block, IndexType())))
    return e.emit(arith.DivUIOp(c, divisor))


def scaled_element(e: Emitter, op: ScaledConvertFromOp, r: Index, c: Index) -> SSAValue:
    """Element (r, c) of a scaled_convert_from of matrices."""
    t = op.result.type
    assert isinstance(t, MatrixType)
    bits = e.element(op.input, r, c)
    scale = e.element(op.scales, r, block_index(e, c, op.block_size))
    ops, value = emit_scaled_convert_from(
        op.float_format, op.scale_float_format, bits, scale, t.element_type
    )
    return _insert(e, ops, value)


def quantize_into(
    e: Emitter,
    op: ScaledConvertToOp,
    elements: SSAValue,
    scales: SSAValue,
    lanes: int = 0,
) -> None:
    """Writes scaled_convert_to of matrices into the two buffers: `lanes`
    rows side by side (vectors along the columns) if the input can be read so
    and `lanes` is not 0, else one element at a time."""
    # (imported here: vectors.py reads scaled_convert_from blocks with this
    # module's `block_index`)
    from mx.lowering.matrix_to_affine.vectors import (
        for_each_segment,
        read_block,
        readable,
        write_block,
    )

    t = op.input.type
    assert isinstance(t, MatrixType)
    block = op.block_size
    width_bits = 64 if str(t.element_type) == "f64" else 32

    def quantize(f: Emitter, r: Index, width: int) -> None:
        """Rows r.. of the input: `width` rows side by side as vectors, or
        (0) row r alone, element by element."""

        def read(h: Emitter, c: Index) -> SSAValue:
            if width:
                return read_block(h, op.input, r, c, width, True)
            return h.element(op.input, r, c)

        def write(h: Emitter, value: SSAValue, buffer: SSAValue, c: Index) -> None:
            if width:
                write_block(h, value, buffer, r, c)
            else:
                h.store_buffer(value, buffer, r, c)

        zero_type = IntegerType(width_bits)
        zero = (
            DenseIntOrFPElementsAttr.from_list(VectorType(zero_type, [width]), [0])
            if width
            else IntegerAttr(0, zero_type)
        )

        def one_block(g: Emitter, j: SSAValue, _: Sequence[SSAValue]) -> list[SSAValue]:
            def magnitude(
                h: Emitter, k: SSAValue, carried: Sequence[SSAValue]
            ) -> list[SSAValue]:
                ops, bits = emit_magnitude_bits(read(h, _scaled_index(h, j, block, k)))
                largest = _insert(h, ops, bits)
                return [h.emit(arith.MaxSIOp(carried[0], largest))]

            (amax,) = g.loop(0, block, [g.emit(arith.ConstantOp(zero))], magnitude)
            ops, code = emit_block_scale(op.float_format, amax, op.rule)
            code = _insert(g, ops, code)
            write(g, code, scales, j)

            def convert(
                h: Emitter, k: SSAValue, _: Sequence[SSAValue]
            ) -> list[SSAValue]:
                c = _scaled_index(h, j, block, k)
                ops, bits = emit_scaled_elements(
                    op.float_format, read(h, c), code, op.rounding_mode
                )
                write(h, _insert(h, ops, bits), elements, c)
                return []

            g.loop(0, block, [], convert)
            return []

        f.loop(0, t.cols // block, [], one_block)

    if lanes and readable(op.input, e.fused, True):
        for_each_segment(e, t.rows, lanes, quantize)
        return

    def row(f: Emitter, r: SSAValue, _: Sequence[SSAValue]) -> list[SSAValue]:
        quantize(f, r, 0)
        return []

    e.loop(0, t.rows, [], row)

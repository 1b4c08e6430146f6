"""`arbfp.scaled_convert_to` of matrices inside `convert-matrix-to-affine`:
two buffers written in one loop nest over rows and blocks. A first pass over
the block's N elements carries the running maximum of their magnitudes,
which gives the block's scale code; a second pass converts them. The scalar
arithmetic is `convert-arbfp-to-arith`'s."""

from collections.abc import Sequence

from xdsl.dialects import arith
from xdsl.dialects.builtin import (
    DenseIntOrFPElementsAttr,
    IntegerAttr,
    IntegerType,
    VectorType,
)
from xdsl.ir import SSAValue

from mx.dialects.arbfp import ScaledConvertToOp
from mx.dialects.matrix import MatrixType
from mx.lowering.convert_arbfp_to_arith import (
    emit_block_scale,
    emit_magnitude_bits,
    emit_scaled_elements,
)
from mx.lowering.matrix_to_affine.block_scaled import insert_ops, scaled_index
from mx.lowering.matrix_to_affine.elements import Emitter, Index
from mx.lowering.matrix_to_affine.vectors import (
    for_each_segment,
    read_block,
    readable,
    write_block,
)


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
                ops, bits = emit_magnitude_bits(read(h, scaled_index(h, j, block, k)))
                largest = insert_ops(h, ops, bits)
                return [h.emit(arith.MaxSIOp(carried[0], largest))]

            (amax,) = g.loop(0, block, [g.emit(arith.ConstantOp(zero))], magnitude)
            ops, code = emit_block_scale(op.float_format, amax, op.rule)
            code = insert_ops(g, ops, code)
            write(g, code, scales, j)

            def convert(
                h: Emitter, k: SSAValue, _: Sequence[SSAValue]
            ) -> list[SSAValue]:
                c = scaled_index(h, j, block, k)
                ops, bits = emit_scaled_elements(
                    op.float_format, read(h, c), code, op.rounding_mode
                )
                write(h, insert_ops(h, ops, bits), elements, c)
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

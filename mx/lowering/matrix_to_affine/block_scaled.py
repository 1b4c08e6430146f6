"""Block-scaled conversions (`arbfp.scaled_convert_from` / `scaled_convert_to`)
inside `convert-matrix-to-affine`.

scaled_convert_from is elementwise in its elements operand: element (r, c)
is computed where it is needed (fused like the plain converts, so a
contraction or store reading it decodes in registers) from element (r, c)
and scale (r, c // N); its scales operand gets a buffer (each scale is read
N times). scaled_convert_to: `quantize.py`. The scalar arithmetic is
`convert-arbfp-to-arith`'s.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from xdsl.dialects import arith
from xdsl.dialects.builtin import IndexType, IntegerAttr
from xdsl.ir import Operation, SSAValue

from mx.dialects.arbfp import ScaledConvertFromOp
from mx.dialects.matrix import MatrixType
from mx.lowering.convert_arbfp_to_arith import emit_scaled_convert_from

if TYPE_CHECKING:
    from mx.lowering.matrix_to_affine.elements import Emitter, Index


def insert_ops(e: Emitter, ops: Sequence[Operation], value: SSAValue) -> SSAValue:
    for op in ops:
        e.builder.insert(op)
    return value


def scaled_index(e: Emitter, i: Index, factor: int, by: Index = 0) -> Index:
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
    return insert_ops(e, ops, value)

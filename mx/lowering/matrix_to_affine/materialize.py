"""`convert-matrix-to-affine`: values computed into their own buffer
(elementwise ops and loads that are not fused, scaled conversions, constants)."""

from dataclasses import dataclass

from xdsl.ir import Operation
from xdsl.pattern_rewriter import PatternRewriter, op_type_rewrite_pattern

from mx.dialects.arbfp import ScaledConvertToOp
from mx.dialects.matrix import ConstantOp, LoadOp, OuterProductOp
from mx.lowering.matrix_to_affine.elements import as_matrix
from mx.lowering.matrix_to_affine.fusion import BLOCK_SCALED, ELEMENTWISE
from mx.lowering.matrix_to_affine.quantize import quantize_into
from mx.lowering.matrix_to_affine.state import MatrixPattern, is_matrix, matrix_type


@dataclass
class MaterializeElementwise(MatrixPattern):
    """%r = <elementwise op or load> (not fused) ->
    %buf = memref.alloca; affine.for %c { affine.for %r { buf[c, r] = element } }."""

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter, /) -> None:
        if not isinstance(op, (*ELEMENTWISE, *BLOCK_SCALED, OuterProductOp, LoadOp)):
            return
        if op in self.state.plan.fused or not is_matrix(op.results[0]):
            return
        t = matrix_type(op.results[0])
        buffer = self.state.result_buffer(op.results[0], op)
        # Computed as if fused into a copy of its value into the buffer.
        self.state.plan.fused.add(op)
        self.state.materialize(op.results[0], buffer, op)
        self.state.plan.fused.remove(op)
        rewriter.replace(op, as_matrix(buffer, t))


@dataclass
class LowerScaledConvertTo(MatrixPattern):
    """%q, %s = arbfp.scaled_convert_to %x -> two buffers written by one loop
    nest over rows and blocks (`block_scaled.py`)."""

    @op_type_rewrite_pattern
    def match_and_rewrite(
        self, op: ScaledConvertToOp, rewriter: PatternRewriter, /
    ) -> None:
        if not is_matrix(op.input):
            return
        elements = self.state.result_buffer(op.result, op)
        scales = self.state.result_buffer(op.scales, op)
        lanes = self.state.lanes(matrix_type(op.input))
        quantize_into(self.state.emitter(op), op, elements, scales, lanes)
        casts = [
            as_matrix(elements, matrix_type(op.result)),
            as_matrix(scales, matrix_type(op.scales)),
        ]
        rewriter.replace(op, casts, [c.results[0] for c in casts])


@dataclass
class MaterializeConstant(MatrixPattern):
    """%m = matrix.constant dense<...> (not a splat) -> a buffer with one
    affine.store per element."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: ConstantOp, rewriter: PatternRewriter, /) -> None:
        if op in self.state.plan.fused:
            return
        t = matrix_type(op.result)
        buffer = self.state.result_buffer(op.result, op)
        e = self.state.emitter(op)
        values = op.row_major_values()
        for r in range(t.rows):
            for c in range(t.cols):
                value = e.scalar_constant(values[r * t.cols + c], t.element_type)
                e.store_buffer(value, buffer, r, c)
        rewriter.replace(op, as_matrix(buffer, t))

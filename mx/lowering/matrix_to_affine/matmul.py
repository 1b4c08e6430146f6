"""`convert-matrix-to-affine`: matrix.matmul and matrix.matmul_add."""

from dataclasses import dataclass

from xdsl.dialects.builtin import BFloat16Type, Float16Type
from xdsl.ir import Attribute, Operation, SSAValue
from xdsl.pattern_rewriter import PatternRewriter

from mx.dialects.matrix import MatmulAddOp, MatmulOp
from mx.lowering.matrix_to_affine.blocked import Gemm, blocked_gemm
from mx.lowering.matrix_to_affine.elements import (
    Emitter,
    Index,
    as_matrix,
    narrow,
    widen,
)
from mx.lowering.matrix_to_affine.kernel_remarks import (
    CACHE_BLOCKED,
    ELEMENT_BY_ELEMENT,
    HALF_SUMS,
    SCALAR,
    UNREADABLE_PACKED,
    VECTORIZED,
)
from mx.lowering.matrix_to_affine.products import (
    Product,
    accumulation_type,
    blocked_product,
    dot,
)
from mx.lowering.matrix_to_affine.state import MatrixPattern, matrix_type
from mx.lowering.matrix_to_affine.vectors import (
    for_each_block,
    read_block,
    readable,
    write_block,
)


@dataclass
class LowerMatmul(MatrixPattern):
    """%c = matrix.matmul %a, %b (or matmul_add %a, %b, %acc) -> the
    register-blocked vector product into a buffer (%a and %acc read as
    column vectors, copied first if they cannot be); without vectors, a loop
    nest over (c, r) around an affine.for over k carrying the sum
    (products.py). Factors are widened where they are read, to the result
    type or to the `accumulation_type` the sum is kept in, but for the B of
    an f16/bf16 product summed in f32, widened once into a temporary."""

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter, /) -> None:
        if not isinstance(op, MatmulOp | MatmulAddOp):
            return
        t = matrix_type(op.result)
        depth = matrix_type(op.lhs).cols
        acc = op.acc if isinstance(op, MatmulAddOp) else None
        buffer = self.state.result_buffer(op.result, op)
        unsigned = op.unsigned is not None
        compute = accumulation_type(t.element_type, op.fastmath)

        def factor(e: Emitter, x: SSAValue) -> SSAValue:
            return widen(e, x, compute, unsigned)

        lanes = self.state.lanes(t.with_element_type(compute))
        if lanes and self.state.decoded_in_place(op.lhs):
            lanes = 0
            self.state.choose(op, ELEMENT_BY_ELEMENT, VECTORIZED, UNREADABLE_PACKED)
        elif not lanes:
            self.state.choose(op, SCALAR, VECTORIZED, self.state.no_vectors(compute))
        if lanes:
            lhs = self.state.readable_along_rows(op.lhs, op)
            acc = None if acc is None else self.state.readable_along_rows(acc, op)
            # The packed kernel sums in the result type, where f16/bf16 sums
            # would be emulated: those keep the register-blocked kernel.
            large = self.state.blocking.applies(t.rows, t.cols, depth, t.element_type)
            half_sums = isinstance(t.element_type, Float16Type | BFloat16Type)
            if large and not half_sums:
                gemm = Gemm(
                    t.rows,
                    t.cols,
                    depth,
                    lhs,
                    op.rhs,
                    acc,
                    buffer,
                    t.element_type,
                    op.fastmath,
                    lanes,
                    factor,
                    readable(op.rhs, self.state.plan.fused, True),
                    readable(op.rhs, self.state.plan.fused, False),
                )
                self.state.choose(op, CACHE_BLOCKED)
                blocked_gemm(
                    self.state.emitter(op),
                    gemm,
                    self.state.blocking,
                    lambda m: self.state.temporary(m, op),
                    lambda: self.state.count_temporary(op),
                )
                rewriter.replace(op, as_matrix(buffer, t))
                return
            if large:
                self.state.choose(op, VECTORIZED, CACHE_BLOCKED, HALF_SUMS)
            else:
                self.state.choose(op, VECTORIZED)

            def rhs(e: Emitter, k: Index, c: Index) -> SSAValue:
                return factor(e, e.element(op.rhs, k, c))

            if compute != t.element_type and not op.is_mixed():
                wide = self._widened(op.rhs, compute, lanes, op)

                def rhs(e: Emitter, k: Index, c: Index) -> SSAValue:
                    return e.load_buffer(wide, k, c)

            product = Product(
                t.rows,
                t.cols,
                depth,
                lambda e, r, k, w: factor(e, read_block(e, lhs, r, k, w, True)),
                rhs,
                None
                if acc is None
                else lambda e, r, c, w, a=acc: factor(
                    e, read_block(e, a, r, c, w, True)
                ),
                lambda e, v, r, c: write_block(
                    e, narrow(e, v, t.element_type), buffer, r, c
                ),
                compute,
                op.fastmath,
                lanes,
                self.state.blocking.parallel(t.rows * t.cols * depth),
            )
            blocked_product(self.state.emitter(op), product)
            rewriter.replace(op, as_matrix(buffer, t))
            return

        def body(e: Emitter, r: SSAValue, c: SSAValue) -> None:
            total = dot(
                e,
                lambda f, k: factor(f, f.element(op.lhs, r, k)),
                lambda f, k: factor(f, f.element(op.rhs, k, c)),
                depth,
                op.fastmath,
                None if acc is None else lambda f, a=acc: factor(f, f.element(a, r, c)),
            )
            e.store_buffer(narrow(e, total, t.element_type), buffer, r, c)

        self.state.emitter(op).for_each_element(t, body)
        rewriter.replace(op, as_matrix(buffer, t))

    def _widened(
        self, value: SSAValue, compute: Attribute, lanes: int, at: Operation
    ) -> SSAValue:
        """A temporary holding `value` (the B of an f16/bf16 product summed in
        f32) widened to `compute` by vector conversions: the product then
        broadcasts each element from memory (on AVX-512, a memory operand of
        its FMA) instead of converting it once per row block. Mixed-precision
        products keep widening in registers (no matrix of the wider type)."""
        t = matrix_type(value)
        source = self.state.readable_along_rows(value, at)
        wide = self.state.temporary(t.with_element_type(compute), at)

        def block(f: Emitter, r: Index, c: SSAValue, width: int) -> None:
            narrow_block = read_block(f, source, r, c, width, True)
            write_block(f, widen(f, narrow_block, compute, False), wide, r, c)

        for_each_block(self.state.emitter(at), t, True, lanes, block)
        return wide

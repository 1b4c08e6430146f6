"""`convert-matrix-to-affine`: matrix.matvec."""

from collections.abc import Sequence
from dataclasses import dataclass, replace
from functools import partial

from xdsl.dialects import vector
from xdsl.dialects.builtin import VectorType
from xdsl.ir import Attribute, Operation, SSAValue
from xdsl.pattern_rewriter import PatternRewriter, op_type_rewrite_pattern

from mx.dialects.matrix import (
    LoadOp,
    MatrixType,
    MatvecOp,
    TransposeOp,
    element_type_of,
)
from mx.lowering.matrix_to_affine.blocked import (
    Gemv,
    RowMajorMemory,
    blocked_matvec,
    line_start,
)
from mx.lowering.matrix_to_affine.buffers import element_bytes
from mx.lowering.matrix_to_affine.decoded_matvec import (
    Weights,
    decoded_matvec,
    fused_kernel,
    match_weights,
)
from mx.lowering.matrix_to_affine.elements import (
    Emitter,
    Index,
    buffer_of,
    narrow,
    widen,
)
from mx.lowering.matrix_to_affine.kernel_remarks import (
    CACHE_BLOCKED,
    ELEMENT_BY_ELEMENT,
    FUSED_REASSOCIATED,
    REASSOCIATED_VECTOR,
    SCALAR,
    UNREADABLE_PACKED,
    VECTORIZED,
    VERSIONED,
)
from mx.lowering.matrix_to_affine.products import (
    Product,
    accumulation_type,
    blocked_product,
    dot,
)
from mx.lowering.matrix_to_affine.reassociated_matvec import (
    float_matvec_along_k,
    match_reassociated,
    reassociated_matvec,
    sums_along_k,
)
from mx.lowering.matrix_to_affine.state import MatrixPattern, matrix_type
from mx.lowering.matrix_to_affine.target_cpu import target_cpu
from mx.lowering.matrix_to_affine.vectors import read_block, readable, write_block


def _read_memory(
    matrix: SSAValue, fused: set[Operation]
) -> tuple[int, RowMajorMemory | None]:
    """Bytes per element of the narrowest memory the lowered `matrix` is
    read from (the fused ops' matrix operands, down to buffers and loads),
    and that memory if `matrix` reads it row-major (`RowMajorMemory`)."""
    pending: list[tuple[SSAValue, bool]] = [(matrix, False)]
    narrowest: tuple[int, RowMajorMemory | None] = (8, None)
    while pending:
        value, transposed = pending.pop()
        op = value.owner
        buffer = buffer_of(value)
        if (
            buffer is None
            and isinstance(op, Operation)
            and op in fused
            and not isinstance(op, LoadOp)
        ):
            flips = isinstance(op, TransposeOp)
            pending += [
                (x, transposed != flips)
                for x in op.operands
                if isinstance(x.type, MatrixType)
            ]
            continue
        size = element_bytes(element_type_of(value.type))
        if size > narrowest[0]:
            continue
        memory = None
        if buffer is not None and transposed:
            memory = RowMajorMemory(buffer, None)
        elif (
            isinstance(op, LoadOp)
            and not transposed
            and not op.COLUMN_MAJOR
            and not op.is_packed
        ):
            memory = RowMajorMemory(op.memref, op)
        narrowest = (size, memory)
    return narrowest


@dataclass
class LowerMatvec(MatrixPattern):
    """%y = matrix.matvec %m, %x[, %b] -> the blocked product of %m by %x
    as a one-column matrix (%x, %b and %y in one-column buffers); without
    vectors, affine.for %r iter_args(%v) { dot product over k; vector.insert
    into %v }. Factors are widened where they are read (as for matmul)."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: MatvecOp, rewriter: PatternRewriter, /) -> None:
        m = matrix_type(op.matrix)
        result = op.result_element
        compute = accumulation_type(result, op.fastmath)
        vector_type = op.result.type
        assert isinstance(vector_type, VectorType)
        e = self.state.emitter(op)
        lanes = self.state.lanes(MatrixType(m.rows, 1, compute))
        otherwise = partial(self._by_elements, op, m, compute)
        parallel = self.state.blocking.parallel(m.rows * m.cols)
        # The reassociated kernels keep a row group's sums and x's vectors in
        # registers: at most the target's own vectors (AVX2's 8 f32 under
        # 512-bit vectors spilled, MXFP8 e4m3 1.16x slower on a Zen 1). The
        # JIT's lanes are the host's already (`target_cpu.py`); this caps
        # mx-opt's `vector-bits` of 1024 and 2048 at AVX-512's 16.
        along_k_lanes = min(lanes, target_cpu().f32_lanes)
        reassociated = match_reassociated(op, self.state.plan.fused, along_k_lanes)
        along_k = isinstance(reassociated, Weights)
        weights = (
            reassociated
            if isinstance(reassociated, Weights)
            else match_weights(op, self.state.plan.fused, lanes)
        )
        if isinstance(weights, Weights):
            weights = self._with_scales(weights, op)
            note = VERSIONED if weights.versioned else None
            if along_k:
                self.state.choose(op, FUSED_REASSOCIATED, note=note)
            else:  # (and why not the reassociated kernel, if it is one)
                self.state.choose(
                    op,
                    fused_kernel(op.matrix),
                    reassociated and FUSED_REASSOCIATED,
                    reassociated,
                    note,
                )
            y = (reassociated_matvec if along_k else decoded_matvec)(
                e,
                op,
                weights,
                along_k_lanes if along_k else lanes,
                lambda t: self.state.temporary(t, op),
                otherwise,
                parallel,
            )
            rewriter.replace(op, [], [y])
            return
        # (a dequantization the fused kernel does not take: why not)
        fastest = None if weights is None else fused_kernel(op.matrix)
        if self.state.decoded_in_place(op.matrix) and not readable(
            op.matrix, self.state.plan.fused, False
        ):
            self.state.choose(
                op,
                ELEMENT_BY_ELEMENT,
                fastest or VECTORIZED,
                weights or UNREADABLE_PACKED,
            )
            rewriter.replace(op, [], [self._by_elements(op, m, compute)])
            return
        if lanes:
            if self.state.blocking.applies(m.rows, 1, m.cols, result) or self._by_tiles(
                op.matrix, lanes
            ):
                if weights is None and sums_along_k(op, self.state.plan.fused):
                    self.state.choose(op, REASSOCIATED_VECTOR)
                    unsigned = op.unsigned is not None
                    y = float_matvec_along_k(
                        e,
                        op,
                        along_k_lanes,
                        lambda t: self.state.temporary(t, op),
                        lambda f, x: widen(f, x, result, unsigned),
                        parallel,
                    )
                    rewriter.replace(op, [], [y])
                    return
                self.state.choose(op, CACHE_BLOCKED, fastest, weights)
                rewriter.replace(op, [], [self._cache_blocked(op, m, lanes)])
                return
            self.state.choose(op, VECTORIZED, fastest, weights)
            rewriter.replace(op, [], [self._blocked(op, m, compute, lanes)])
            return
        self.state.choose(
            op, SCALAR, fastest or VECTORIZED, weights or self.state.no_vectors(compute)
        )
        zero = e.scalar_constant(0, result)
        init = e.emit(vector.BroadcastOp(zero, vector_type))
        bias = op.bias
        unsigned = op.unsigned is not None

        def row(f: Emitter, r: SSAValue, carried: Sequence[SSAValue]) -> list[SSAValue]:
            def element_of(g: Emitter, v: SSAValue, i: Index) -> SSAValue:
                x = g.emit(vector.ExtractOp(v, [i], element_type_of(v.type)))
                return widen(g, x, compute, unsigned)

            total = dot(
                f,
                lambda g, k: widen(g, g.element(op.matrix, r, k), compute, unsigned),
                lambda g, k: element_of(g, op.vector, k),
                m.cols,
                op.fastmath,
                None if bias is None else lambda g, b=bias: element_of(g, b, r),
            )
            rounded = narrow(f, total, result)
            return [f.emit(vector.InsertOp(rounded, carried[0], [r]))]

        (result_vector,) = e.loop(0, m.rows, [init], row)
        rewriter.replace(op, [], [result_vector])

    def _with_scales(self, weights: Weights, op: MatvecOp) -> Weights:
        """`weights` with block scales the fused kernels can read in column
        vectors (a transposed view: a column-major copy)."""
        if weights.scales is None:
            return weights
        scales = self.state.readable_along_rows(weights.scales, op)
        return replace(weights, scales=scales)

    def _by_tiles(self, matrix: SSAValue, lanes: int) -> bool:
        """True if `matrix` is contiguous only along its rows (a row-major
        load, possibly decoded) and has a full tile of rows: read in tiles
        transposed in registers rather than copied into a buffer (of the
        wider type, for dequantized data)."""
        fused = self.state.plan.fused
        return (
            matrix_type(matrix).rows >= lanes
            and not readable(matrix, fused, True)
            and readable(matrix, fused, False)
        )

    def _by_elements(
        self,
        op: MatvecOp,
        m: MatrixType,
        compute: Attribute,
        e: Emitter | None = None,
    ) -> SSAValue:
        """One dot product per row, reading the matrix element by element
        (decoded in registers), %x and %y in one-column buffers; emitted
        with `e` (default: before `op`)."""
        e = e or self.state.emitter(op)
        result = op.result_element
        unsigned = op.unsigned is not None
        x = self.state.buffer(
            MatrixType(m.cols, 1, element_type_of(op.vector.type)), op
        )
        y = self.state.buffer(MatrixType(m.rows, 1, result), op)
        zero = e.index(0)
        e.builder.insert(vector.StoreOp(op.vector, x, [zero, zero]))
        if op.bias is not None:
            e.builder.insert(vector.StoreOp(op.bias, y, [zero, zero]))

        def row(f: Emitter, r: SSAValue, _: Sequence[SSAValue]) -> list[SSAValue]:
            total = dot(
                f,
                lambda g, k: widen(g, g.element(op.matrix, r, k), compute, unsigned),
                lambda g, k: widen(g, g.load_buffer(x, k, 0), compute, unsigned),
                m.cols,
                op.fastmath,
                None
                if op.bias is None
                else lambda g: widen(g, g.load_buffer(y, r, 0), compute, unsigned),
            )
            f.store_buffer(narrow(f, total, result), y, r, 0)
            return []

        e.loop(0, m.rows, [], row)
        return e.emit(vector.LoadOp(y, [zero, zero], op.result.type))

    def _cache_blocked(self, op: MatvecOp, m: MatrixType, lanes: int) -> SSAValue:
        fused = self.state.plan.fused
        along_rows = readable(op.matrix, fused, True) or not readable(
            op.matrix, fused, False
        )
        matrix = (
            self.state.readable_along_rows(op.matrix, op) if along_rows else op.matrix
        )
        result = op.result_element
        unsigned = op.unsigned is not None
        size, memory = _read_memory(matrix, fused)
        gemv = Gemv(
            m.rows,
            m.cols,
            matrix,
            op.vector,
            op.bias,
            result,
            op.fastmath,
            lanes,
            lambda f, x: widen(f, x, result, unsigned),
            size,
            None
            if along_rows or memory is None
            else partial(line_start, memory=memory, bits=8 * size),
        )
        return blocked_matvec(
            self.state.emitter(op),
            gemv,
            along_rows,
            self.state.blocking,
            lambda t: self.state.temporary(t, op),
        )

    def _blocked(
        self, op: MatvecOp, m: MatrixType, compute: Attribute, lanes: int
    ) -> SSAValue:
        e = self.state.emitter(op)
        result = op.result_element
        unsigned = op.unsigned is not None
        column = MatrixType(m.cols, 1, element_type_of(op.vector.type))
        x = self.state.temporary(column, op)
        y = self.state.buffer(MatrixType(m.rows, 1, result), op)
        zero = e.index(0)
        e.builder.insert(vector.StoreOp(op.vector, x, [zero, zero]))
        if op.bias is not None:
            e.builder.insert(vector.StoreOp(op.bias, y, [zero, zero]))
        matrix = self.state.readable_along_rows(op.matrix, op)
        product = Product(
            m.rows,
            1,
            m.cols,
            lambda f, r, k, w: widen(
                f, read_block(f, matrix, r, k, w, True), compute, unsigned
            ),
            lambda f, k, _: widen(f, f.load_buffer(x, k, 0), compute, unsigned),
            None
            if op.bias is None
            else lambda f, r, _, w: widen(
                f,
                f.emit(
                    vector.LoadOp(y, [f.index(0), f.index(r)], VectorType(result, [w]))
                ),
                compute,
                unsigned,
            ),
            lambda f, v, r, c: write_block(f, narrow(f, v, result), y, r, c),
            compute,
            op.fastmath,
            lanes,
        )
        blocked_product(e, product)
        return e.emit(vector.LoadOp(y, [zero, zero], op.result.type))

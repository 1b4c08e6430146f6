"""`convert-matrix-to-affine`: element access and stores (matrix.extract,
matrix.insert, matrix.store)."""

from dataclasses import dataclass

from xdsl.ir import Operation
from xdsl.pattern_rewriter import PatternRewriter, op_type_rewrite_pattern

from mx.dialects.matrix import ExtractOp, InsertOp, StoreOp
from mx.lowering.matrix_to_affine.elements import as_matrix, buffer_of
from mx.lowering.matrix_to_affine.state import MatrixPattern, matrix_type


@dataclass
class LowerExtract(MatrixPattern):
    """%e = matrix.extract %m[%i, %j] -> element (i, j) of %m (a load from its
    buffer, or the fused chain computed for that one element)."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: ExtractOp, rewriter: PatternRewriter, /) -> None:
        r, c = op.indices()
        value = self.state.emitter(op).element(op.matrix, r, c)
        rewriter.replace(op, [], [value])


@dataclass
class LowerInsert(MatrixPattern):
    """%n = matrix.insert %e, %m[%i, %j] -> store %e into %m's buffer if %m is
    used only here (same block, own buffer), else into a copy of %m."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: InsertOp, rewriter: PatternRewriter, /) -> None:
        t = matrix_type(op.result)
        source = op.matrix
        buffer = buffer_of(source)
        e = self.state.emitter(op)
        in_place = (
            buffer is not None
            and buffer in self.state.owned
            and source.has_one_use()
            and source.owner.parent_block() is op.parent_block()  # pyright: ignore
        )
        if not in_place or buffer is None:
            buffer = self.state.temporary(t, op)
            self.state.materialize(source, buffer, op)
        r, c = op.indices()
        e.store_buffer(op.element, buffer, r, c)
        rewriter.replace(op, as_matrix(buffer, t))


@dataclass
class LowerStore(MatrixPattern):
    """matrix.<layout>_store %m, %mem[%off] stride %s -> a loop nest writing
    element (r, c) of %m to %mem[%off + c*%s + r] (or r*%s + c): only the
    addressed elements."""

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter, /) -> None:
        if not isinstance(op, StoreOp):
            return
        self.state.materialize(op.value, op, op)
        rewriter.erase(op)

"""Canonicalization patterns of the `arbfp` conversions (their folds are
`ConvertOp.fold`, for scalar, vector and bounded matrix constants)."""

from __future__ import annotations

from typing import cast

from xdsl.ir import Operation
from xdsl.pattern_rewriter import PatternRewriter, RewritePattern

from mx.dialects.arbfp import ConvertOp
from mx.dialects.matrix import MatrixType, SplatOp


class ConvertOfSplat(RewritePattern):
    """convert(matrix.splat %x) -> matrix.splat(convert %x): one scalar
    conversion (folded when %x is constant) whatever the matrix's size."""

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter, /) -> None:
        if not isinstance(op, ConvertOp):
            return
        splat = op.input.owner
        if not isinstance(splat, SplatOp):
            return
        result_type = cast(MatrixType, op.result.type)
        scalar = type(op).create(
            operands=[splat.input],
            result_types=[result_type.element_type],
            properties=dict(op.properties),
            attributes=dict(op.attributes),
        )
        new = SplatOp(scalar.results[0], result_type)
        rewriter.replace(op, [scalar, new], [new.result])

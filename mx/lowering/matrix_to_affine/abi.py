"""The matrix layout at function boundaries (`convert-matrix-to-affine`'s
`layout` option).

Column-major (the default, Clang's): a `!matrix.matrix<RxCxT>` argument or
result is the `memref<CxRxT>` buffer of its value. Row-major (NumPy's and C
arrays'): it is the `memref<RxCxT>` buffer, which is the column-major buffer
of the C×R transpose. So a row-major boundary needs no new lowering: an
argument is the transpose of the matrix its buffer holds (a fused
`matrix.transpose`, read with swapped indices), and a result is written by
materializing the transpose of the returned value into its out-parameter.
"""

from xdsl.dialects.builtin import MemRefType
from xdsl.ir import Operation, SSAValue
from xdsl.rewriter import InsertPoint, Rewriter

from mx.dialects.matrix import MatrixType, TransposeOp
from mx.lowering.matrix_to_affine.buffers import buffer_type
from mx.lowering.matrix_to_affine.elements import as_matrix

LAYOUTS = ("column-major", "row-major")


def abi_type(t: MatrixType, row_major: bool) -> MemRefType:
    """The memref standing for a matrix of type `t` at a function boundary."""
    return buffer_type(t.transposed() if row_major else t)


def matrix_of_abi_buffer(
    buffer: SSAValue,
    t: MatrixType,
    row_major: bool,
    at: InsertPoint,
    fused: set[Operation],
) -> SSAValue:
    """The matrix of type `t` that the boundary buffer `buffer` holds, built
    at `at` (a view: nothing is copied)."""
    if not row_major:
        cast = as_matrix(buffer, t)
        Rewriter.insert_op(cast, at)
        return cast.results[0]
    cast = as_matrix(buffer, t.transposed())
    transpose = TransposeOp(cast.results[0])
    Rewriter.insert_op([cast, transpose], at)
    fused.add(transpose)
    return transpose.result


def abi_value(
    value: SSAValue, row_major: bool, at: Operation, fused: set[Operation]
) -> SSAValue:
    """The matrix whose column-major buffer is the boundary layout of
    `value` (a fused view built before `at`)."""
    if not row_major:
        return value
    transpose = TransposeOp(value)
    Rewriter.insert_op(transpose, InsertPoint.before(at))
    fused.add(transpose)
    return transpose.result

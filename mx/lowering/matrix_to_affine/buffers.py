"""Where a matrix value lives once lowered: its buffer type and allocation.

Buffer layout: a `!matrix.matrix<RxCxT>` is stored column-major as a
`memref<CxRxT>`; element (r, c) is `buf[c, r]`. This is Clang's layout (a C
caller passes a column-major `T*`), each column is contiguous (vectorization
and register-blocked matmul work along the rows of a column, as LLVM's
LowerMatrixIntrinsics does), and after `convert-to-llvm` the buffer is one bare
`ptr` to element (0, 0).

Allocation: every buffer is allocated once at the entry of the enclosing
function (so a buffer of a value defined inside a loop is reused by each
iteration instead of growing the stack). Buffers of at most
`STACK_LIMIT_BYTES` are `memref.alloca`s; larger ones are `memref.alloc`s,
freed by `memref.dealloc` before every `func.return`; a buffer of more than
`HEAP_LIMIT_BYTES` is rejected with a diagnostic.
"""

from dataclasses import dataclass, field

from xdsl.dialects import func, memref
from xdsl.dialects.builtin import (
    BFloat16Type,
    Float16Type,
    Float32Type,
    Float64Type,
    IntegerType,
    MemRefType,
)
from xdsl.ir import Attribute, Operation, SSAValue
from xdsl.rewriter import InsertPoint, Rewriter

from mx.diagnostics import OpDiagnostic
from mx.dialects.matrix import MatrixType

STACK_LIMIT_BYTES = 64 * 1024
"""Largest buffer placed on the stack (`memref.alloca`)."""

HEAP_LIMIT_BYTES = 1 << 32
"""Largest buffer placed on the heap; larger matrices are rejected."""


def buffer_type(t: MatrixType) -> MemRefType:
    """`memref<CxRxT>`: the column-major buffer of a matrix type."""
    return MemRefType(t.element_type, [t.cols, t.rows])


def element_bytes(t: Attribute) -> int:
    """Bytes one element occupies in memory (sub-byte integers take a byte)."""
    if isinstance(t, Float16Type | BFloat16Type):
        return 2
    if isinstance(t, Float32Type):
        return 4
    if isinstance(t, Float64Type):
        return 8
    assert isinstance(t, IntegerType)
    return max(1, (t.width.data + 7) // 8)


def buffer_bytes(t: MatrixType) -> int:
    return t.num_elements * element_bytes(t.element_type)


@dataclass
class Allocator:
    """Allocates buffers at function entry and frees heap buffers at returns."""

    heap: dict[func.FuncOp, list[SSAValue]] = field(
        default_factory=dict[func.FuncOp, list[SSAValue]]
    )

    def allocate(self, t: MatrixType, at: Operation) -> SSAValue:
        """A fresh buffer for a value of type `t`, needed by the op `at`."""
        size = buffer_bytes(t)
        if size > HEAP_LIMIT_BYTES:
            raise OpDiagnostic(
                at,
                f"matrix of {t.rows}x{t.cols} elements ({size} bytes) is too large "
                f"to be materialized (the limit is {HEAP_LIMIT_BYTES} bytes)",
            )
        function = enclosing_function(at)
        on_heap = size > STACK_LIMIT_BYTES
        op: Operation = (
            memref.AllocOp.get(
                t.element_type, alignment=64, shape=buffer_type(t).get_shape()
            )
            if on_heap
            else memref.AllocaOp.get(
                t.element_type, alignment=64, shape=buffer_type(t).get_shape()
            )
        )
        if function is None or function.body.first_block is None:
            Rewriter.insert_op(op, InsertPoint.before(at))
        else:
            Rewriter.insert_op(op, InsertPoint.at_start(function.body.first_block))
            if on_heap:
                self.heap.setdefault(function, []).append(op.results[0])
        return op.results[0]

    def free_before_returns(self) -> None:
        """Insert a `memref.dealloc` of each heap buffer before each return."""
        for function, buffers in self.heap.items():
            for block in function.body.blocks:
                last = block.last_op
                if isinstance(last, func.ReturnOp):
                    for buffer in buffers:
                        Rewriter.insert_op(
                            memref.DeallocOp.get(buffer), InsertPoint.before(last)
                        )


def enclosing_function(op: Operation) -> func.FuncOp | None:
    parent = op.parent_op()
    while parent is not None and not isinstance(parent, func.FuncOp):
        parent = parent.parent_op()
    return parent

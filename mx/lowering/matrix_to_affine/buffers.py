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

Once the function is lowered, `Allocator.finish` shares buffers: two buffers
of the same type whose lifetimes do not overlap (`lifetimes.py`) become one.
Then, if the stack buffers left take more than the function's stack budget,
the largest move to the heap until the rest fits.
"""

import heapq
from dataclasses import dataclass, field

from xdsl.dialects import func, memref
from xdsl.dialects.builtin import (
    BFloat16Type,
    Float16Type,
    Float32Type,
    Float64Type,
    IntegerAttr,
    IntegerType,
    MemRefType,
)
from xdsl.ir import Attribute, Block, Operation, SSAValue
from xdsl.rewriter import InsertPoint, Rewriter

from mx.compile_memos import compile_memo
from mx.diagnostics import OpDiagnostic
from mx.dialects.matrix import MatrixType
from mx.lowering import build
from mx.lowering.matrix_to_affine.lifetimes import Interval, Numbering

STACK_LIMIT_BYTES = 64 * 1024
"""Largest buffer placed on the stack (`memref.alloca`)."""

HEAP_LIMIT_BYTES = 1 << 32
"""Largest buffer placed on the heap; larger matrices are rejected."""


@compile_memo
def buffer_type(t: MatrixType) -> MemRefType:
    """`memref<CxRxT>`: the column-major buffer of a matrix type (built once:
    xDSL verifies every type it builds)."""
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
    return memref_bytes(buffer_type(t))


DEFAULT_STACK_BYTES = 256 * 1024
"""Default stack budget of one function's buffers (`stack-bytes`)."""


def memref_bytes(t: MemRefType) -> int:
    size = element_bytes(t.element_type)
    for extent in t.get_shape():
        size *= extent
    return size


@dataclass
class Allocator:
    """Allocates buffers at function entry; once the function is lowered,
    shares them and frees the heap buffers at returns (`finish`)."""

    allocations: dict[func.FuncOp, list[tuple[Operation, Block]]] = field(
        default_factory=dict[func.FuncOp, list[tuple[Operation, Block]]]
    )
    """Per function, each allocation and its anchor (`lifetimes.py`)."""
    functions: dict[Block, func.FuncOp | None] = field(
        default_factory=dict[Block, func.FuncOp | None]
    )
    """The function enclosing each block seen (so that the nesting depth is
    walked once per block, not once per op)."""

    def enclosing_function(self, op: Operation) -> func.FuncOp | None:
        visited: list[Block] = []
        block = op.parent_block()
        function: func.FuncOp | None = None
        while block is not None:
            if block in self.functions:
                function = self.functions[block]
                break
            visited.append(block)
            parent = block.parent_op()
            if parent is None or isinstance(parent, func.FuncOp):
                function = parent
                break
            block = parent.parent_block()
        for seen in visited:
            self.functions[seen] = function
        return function

    def allocate(self, t: MatrixType, at: Operation) -> SSAValue:
        """A fresh buffer for a value of type `t`, requested by the op `at`."""
        size = buffer_bytes(t)
        if size > HEAP_LIMIT_BYTES:
            raise OpDiagnostic(
                at,
                f"matrix of {t.rows}x{t.cols} elements ({size} bytes) is too large "
                f"to be materialized (the limit is {HEAP_LIMIT_BYTES} bytes)",
            )
        function = self.enclosing_function(at)
        op = _allocation(buffer_type(t), on_heap=size > STACK_LIMIT_BYTES)
        anchor = at.parent_block()
        if function is None or function.body.first_block is None or anchor is None:
            Rewriter.insert_op(op, InsertPoint.before(at))
        else:
            Rewriter.insert_op(op, InsertPoint.at_start(function.body.first_block))
            self.allocations.setdefault(function, []).append((op, anchor))
        return op.results[0]

    def finish(self, stack_bytes: int) -> None:
        """In each function: share buffers, keep at most `stack_bytes` of
        them on the stack, and free the heap ones before every return."""
        for function, allocations in self.allocations.items():
            kept = _share(function, allocations)
            heap = [op for op in kept if isinstance(op, memref.AllocOp)]
            heap += _cap_stack(
                [op for op in kept if isinstance(op, memref.AllocaOp)], stack_bytes
            )
            for block in function.body.blocks:
                if isinstance(last := block.last_op, func.ReturnOp):
                    for op in heap:
                        Rewriter.insert_op(
                            memref.DeallocOp.get(op.results[0]),
                            InsertPoint.before(last),
                        )


def heap_buffer(t: MatrixType) -> Operation:
    """A heap allocation of a buffer for `t`, outside the allocator (the
    caller frees it)."""
    return _allocation(buffer_type(t), on_heap=True)


def _allocation(t: MemRefType, on_heap: bool) -> Operation:
    if on_heap:
        return memref.AllocOp([], [], t, _ALIGNMENT)
    return build.stack_buffer(t, _ALIGNMENT)


_ALIGNMENT = IntegerAttr(64, 64)
"""Of every buffer: a cache line, the widest vector's alignment."""


def _share(
    function: func.FuncOp, allocations: list[tuple[Operation, Block]]
) -> list[Operation]:
    """Make buffers of the same type whose lifetimes do not meet one buffer
    (a linear scan per type, in order of their starts); erase unused ones.
    Returns the allocations kept."""
    numbering = Numbering(function)
    by_type: dict[Attribute, list[tuple[Interval, Operation]]] = {}
    for op, anchor in allocations:
        buffer = op.results[0]
        lifetime = numbering.lifetime(buffer, anchor)
        if lifetime is None:
            Rewriter.erase_op(op)
        else:
            by_type.setdefault(buffer.type, []).append((lifetime, op))
    kept: list[Operation] = []
    for same in by_type.values():
        same.sort(key=lambda entry: entry[0][0])
        # (end of the last lifetime held, tie-breaker, holding allocation)
        busy: list[tuple[int, int, Operation]] = []
        for count, ((begin, end), op) in enumerate(same):
            if busy and busy[0][0] < begin:
                _, _, host = heapq.heappop(busy)
                op.results[0].replace_all_uses_with(host.results[0])
                Rewriter.erase_op(op)
            else:
                host = op
                kept.append(op)
            heapq.heappush(busy, (end, count, host))
    return kept


def _cap_stack(stack: list[Operation], stack_bytes: int) -> list[Operation]:
    """Move the largest stack buffers to the heap until the others take at
    most `stack_bytes`; returns the moved ones' new allocations."""
    total = sum(memref_bytes(_memref_type(op)) for op in stack)
    moved: list[Operation] = []
    for op in sorted(
        stack, key=lambda op: memref_bytes(_memref_type(op)), reverse=True
    ):
        if total <= stack_bytes:
            break
        total -= memref_bytes(_memref_type(op))
        heap = _allocation(_memref_type(op), on_heap=True)
        Rewriter.replace_op(op, heap)
        moved.append(heap)
    return moved


def _memref_type(op: Operation) -> MemRefType:
    t = op.results[0].type
    assert isinstance(t, MemRefType)
    return t

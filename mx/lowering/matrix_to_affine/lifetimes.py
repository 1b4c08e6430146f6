"""When a buffer of a lowered function holds a value: its lifetime.

A lifetime is an interval of the function's ops numbered in pre-order (an
op's regions are numbered between the op and its next sibling, so an op
*spans* its own number up to the last number inside it).

Every buffer is requested by an op (the matrix op whose value it holds, or
the op carrying a matrix across an edge) and that op's block is the buffer's
*anchor*. Each use is lifted to its ancestor in the anchor block: a buffer
written before a loop and read inside it lives through the whole loop, and
the packing buffers of a cache-blocked product live through the product's
whole loop nest. Within the anchor block the ops run in order and the
requesting op's code writes the buffer before any use reads it, so two
buffers whose intervals do not meet never hold live values at once, even
when the anchor block is a loop body. A use in another block of the
anchor's region (a branch, maybe along a back edge) makes the buffer live
through that whole region; a use anywhere else, through the whole function.
"""

from dataclasses import dataclass, field

from xdsl.ir import Block, Operation, Region, SSAValue

Interval = tuple[int, int]


@dataclass
class Numbering:
    """The pre-order numbers of the ops nested in `top`."""

    top: Operation
    start: dict[Operation, int] = field(default_factory=dict[Operation, int])
    end: dict[Operation, int] = field(default_factory=dict[Operation, int])
    """The last number inside each op (its own if it has no regions)."""

    def __post_init__(self) -> None:
        count = 0
        stack: list[tuple[Operation, bool]] = [(self.top, False)]
        while stack:
            op, closed = stack.pop()
            if closed:
                self.end[op] = count - 1
                continue
            self.start[op] = count
            count += 1
            stack.append((op, True))
            stack += [
                (inner, False)
                for region in reversed(op.regions)
                for block in reversed(region.blocks)
                for inner in reversed(list(block.ops))
            ]

    def span(self, op: Operation) -> Interval:
        return self.start[op], self.end[op]

    def region_span(self, region: Region) -> Interval:
        ops = [op for block in region.blocks for op in block.ops]
        return self.start[ops[0]], self.end[ops[-1]]

    def lifetime(self, buffer: SSAValue, anchor: Block) -> Interval | None:
        """The interval in which `buffer` may hold a live value (None if
        nothing uses it)."""
        lifted: list[Interval] = []
        for use in buffer.uses:
            op = use.operation
            while op.parent_block() is not anchor:
                parent = op.parent_op()
                block = op.parent_block()
                if block is not None and block.parent is anchor.parent:
                    assert anchor.parent is not None
                    lifted.append(self.region_span(anchor.parent))
                    break
                if parent is None or parent is self.top:
                    lifted.append(self.span(self.top))
                    break
                op = parent
            else:
                lifted.append(self.span(op))
        if not lifted:
            return None
        return min(s for s, _ in lifted), max(e for _, e in lifted)

"""A walk over nested ops whose cost does not depend on the nesting depth.

xDSL's `Operation.walk` is a recursive generator: each op is handed up
through one generator frame per enclosing region, so walking n ops nested d
deep costs O(n·d), quadratic for deeply nested `scf.if`s. `walk` keeps an
explicit stack instead.
"""

from collections.abc import Iterator

from xdsl.ir import Operation


def walk(top: Operation, last_first: bool = False) -> Iterator[Operation]:
    """`top` and the ops nested in it, each before the ops of its regions
    (the order of `Operation.walk`; with `last_first`, the last op of a
    block, block and region first). Ops may be erased or replaced behind
    the walk, not ahead of it."""
    stack = [top]
    while stack:
        op = stack.pop()
        yield op
        inner = [
            i for region in op.regions for block in region.blocks for i in block.ops
        ]
        stack += inner if last_first else reversed(inner)

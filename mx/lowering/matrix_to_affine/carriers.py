"""Matrices carried along control-flow edges: iter_args, region results,
block arguments of branches.

A matrix that crosses an edge lives in one buffer per carried position, a
*slot*: the edge's source copies its value into the slot's buffer (a parallel
copy), the block argument or op result on the other side reads the buffer.
`region_slots` says, per region-holding op, which operand initializes a slot,
which block arguments read it, which terminator operands write it and which
result holds it at the end (what MLIR's RegionBranchOpInterface describes);
`block_slots` does the same for the arguments of a block entered by `cf`
branches. Ops are then rebuilt without their matrix operands and results by
`rebuild`, which works for any IRDL op (segment sizes are recomputed).
"""

from collections.abc import Sequence
from dataclasses import dataclass, field

from xdsl.dialects import affine, cf, scf
from xdsl.dialects.builtin import DenseArrayBase, i32
from xdsl.ir import Block, BlockArgument, Operation, Region, SSAValue
from xdsl.rewriter import Rewriter

from mx.dialects.matrix import MatrixType


@dataclass
class Slot:
    """One carried matrix position of an op or a block."""

    type: MatrixType
    init: int | None = None
    """Index of the operand copied into the slot before the op runs."""
    args: list[BlockArgument] = field(default_factory=list[BlockArgument])
    """Block arguments that read the slot."""
    writes: list[tuple[Operation, int]] = field(
        default_factory=list[tuple[Operation, int]]
    )
    """(terminator, operand index) of every value written into the slot."""
    result: int | None = None
    """Index of the op result that holds the slot after the op."""


def _is_matrix(value: SSAValue) -> bool:
    return isinstance(value.type, MatrixType)


def _matrix(value: SSAValue) -> MatrixType:
    assert isinstance(value.type, MatrixType)
    return value.type


def _terminator(region: Region) -> Operation:
    last = region.block.last_op
    assert last is not None
    return last


def _loop_slots(op: Operation, first_init: int, count: int) -> list[Slot]:
    """Loops whose body takes (induction variable, *iter_args) and whose
    terminator yields the next iter_args, which are also the results."""
    body = op.regions[0].block
    yield_ = _terminator(op.regions[0])
    return [
        Slot(
            _matrix(op.results[i]),
            init=first_init + i,
            args=[body.args[1 + i]],
            writes=[(yield_, i)],
            result=i,
        )
        for i in range(count)
        if _is_matrix(op.results[i])
    ]


def _result_slots(op: Operation) -> list[Slot]:
    """Ops that run one of their regions once; each region's terminator
    yields the results."""
    terminators = [_terminator(r) for r in op.regions if r.blocks]
    return [
        Slot(_matrix(r), writes=[(t, i) for t in terminators], result=i)
        for i, r in enumerate(op.results)
        if _is_matrix(r)
    ]


def _while_slots(op: scf.WhileOp) -> list[Slot]:
    """Slots of the before-region's arguments (initialized by the operands,
    written by the after-region's yield) and of scf.condition's forwarded
    values (the after-region's arguments and the results)."""
    before, after = op.before_region.block, op.after_region.block
    condition, yield_ = _terminator(op.before_region), _terminator(op.after_region)
    slots = [
        Slot(_matrix(v), init=i, args=[before.args[i]], writes=[(yield_, i)])
        for i, v in enumerate(op.arguments)
        if _is_matrix(v)
    ]
    slots += [
        Slot(_matrix(r), args=[after.args[i]], writes=[(condition, 1 + i)], result=i)
        for i, r in enumerate(op.results)
        if _is_matrix(r)
    ]
    return slots


def region_slots(op: Operation) -> list[Slot] | None:
    """The matrix slots of an op with regions; None if its control flow is
    not known here."""
    match op:
        case scf.ForOp():
            return _loop_slots(op, 3, len(op.results))
        case affine.ForOp():
            first = len(op.lowerBoundOperands) + len(op.upperBoundOperands)
            return _loop_slots(op, first, len(op.results))
        case scf.IfOp() | scf.IndexSwitchOp() | affine.IfOp():
            return _result_slots(op)
        case scf.WhileOp():
            return _while_slots(op)
        case _:
            return None


def successor_operands(op: Operation) -> list[list[int]] | None:
    """Per successor of a branch, the indices of the operands it passes to
    the successor's arguments; None for a terminator not known here."""
    match op:
        case cf.BranchOp():
            return [list(range(len(op.operands)))]
        case cf.ConditionalBranchOp():
            then = len(op.then_arguments)
            return [
                list(range(1, 1 + then)),
                list(range(1 + then, len(op.operands))),
            ]
        case _:
            return None


def block_slots(block: Block) -> list[Slot]:
    """The slots of the matrix arguments of a block entered by branches."""
    edges: list[tuple[Operation, list[int]]] = []
    region = block.parent
    assert region is not None
    for other in region.blocks:
        branch = other.last_op
        if branch is None or block not in branch.successors:
            continue
        operands = successor_operands(branch)
        assert operands is not None, "checked by `legality`"
        edges += [
            (branch, operands[i])
            for i, successor in enumerate(branch.successors)
            if successor is block
        ]
    return [
        Slot(
            _matrix(arg),
            args=[arg],
            writes=[(branch, indices[arg.index]) for branch, indices in edges],
        )
        for arg in block.args
        if _is_matrix(arg)
    ]


def rebuild(
    op: Operation,
    drop_operands: Sequence[int],
    drop_results: Sequence[int] = (),
    successors: Sequence[Block] | None = None,
) -> Operation:
    """A copy of `op` without the given operands and results, owning `op`'s
    regions (moved) and branching to `successors` (default: `op`'s)."""
    dropped = set(drop_operands)
    properties = dict(op.properties)
    if isinstance(sizes := properties.get("operandSegmentSizes"), DenseArrayBase):
        start, kept_sizes = 0, list[int]()
        for size in sizes.get_values():
            segment = range(start, start + int(size))
            kept_sizes.append(sum(1 for i in segment if i not in dropped))
            start += int(size)
        properties["operandSegmentSizes"] = DenseArrayBase.from_list(i32, kept_sizes)
    return type(op).create(
        operands=[v for i, v in enumerate(op.operands) if i not in dropped],
        result_types=[
            r.type for i, r in enumerate(op.results) if i not in set(drop_results)
        ],
        properties=properties,
        attributes=dict(op.attributes),
        location=op.location,
        successors=list(op.successors if successors is None else successors),
        regions=[Rewriter.move_region_contents_to_new_regions(r) for r in op.regions],
    )

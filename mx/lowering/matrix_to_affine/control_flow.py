"""`convert-matrix-to-affine`: matrices carried by control flow (scf.for,
scf.while, scf.if results, block arguments; carriers.py)."""

from collections.abc import Sequence
from dataclasses import dataclass

from xdsl.dialects import cf
from xdsl.ir import Block, Operation, SSAValue
from xdsl.pattern_rewriter import PatternRewriter

from mx.lowering.matrix_to_affine.carriers import (
    Slot,
    rebuild,
    region_slots,
    successor_operands,
)
from mx.lowering.matrix_to_affine.elements import as_matrix
from mx.lowering.matrix_to_affine.state import (
    LoweringState,
    MatrixPattern,
    matrix_type,
    replace_block_arg,
)


def carry(state: LoweringState, slots: Sequence[Slot], op: Operation) -> list[SSAValue]:
    """One buffer per slot (allocated for `op`): initialized before `op`,
    read by the slot's block arguments (erased), written by its terminators
    when they are lowered."""
    buffers: list[SSAValue] = []
    for slot in slots:
        buffer = state.buffer(slot.type, op, owned=False)
        if slot.init is not None:
            state.materialize(op.operands[slot.init], buffer, op)
        for arg in slot.args:
            replace_block_arg(arg.block, arg.index, buffer)
        for terminator, index in slot.writes:
            state.writes.setdefault(terminator, {})[index] = buffer
        buffers.append(buffer)
    return buffers


@dataclass
class LowerCarryingOp(MatrixPattern):
    """%r = scf.for/affine.for/scf.while/scf.if/scf.index_switch/affine.if
    carrying matrices -> the same op without them: one buffer per carried
    matrix, filled with its initial value before the op, read by the block
    arguments and the results, written by the terminators."""

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter, /) -> None:
        slots = region_slots(op) if op.regions else None
        if not slots:
            return
        buffers = carry(self.state, slots, op)
        new = rebuild(
            op,
            [s.init for s in slots if s.init is not None],
            [s.result for s in slots if s.result is not None],
        )
        by_result = {
            s.result: b
            for s, b in zip(slots, buffers, strict=True)
            if s.result is not None
        }
        others = iter(new.results)
        casts: list[Operation] = []
        values: list[SSAValue] = []
        for i, result in enumerate(op.results):
            if i in by_result:
                casts.append(as_matrix(by_result[i], matrix_type(result)))
                values.append(casts[-1].results[0])
            else:
                values.append(next(others))
        rewriter.replace(op, [new, *casts], values)


@dataclass
class LowerCarriedTerminator(MatrixPattern):
    """scf.yield/affine.yield/scf.condition/cf.br/cf.cond_br with matrix
    operands -> copy them into their slots' buffers (a parallel copy) and
    drop them. A branch with several successors copies on the edge: in a
    new block, branching on to the successor, so that the edges not taken
    write nothing."""

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter, /) -> None:
        targets = self.state.writes.pop(op, None)
        if targets is None:
            return
        edges = successor_operands(op) if op.successors else None
        if edges is None or len(edges) == 1:
            self._copy(op, targets, op)
            rewriter.replace(op, rebuild(op, list(targets)))
            return
        successors = list(op.successors)
        dropped: list[int] = []
        for i, indices in enumerate(edges):
            if not any(k in targets for k in indices):
                continue
            parent = op.parent_block()
            assert parent is not None and parent.parent is not None
            edge = Block()
            parent.parent.insert_block_after(edge, parent)
            branch = cf.BranchOp(
                successors[i], *(op.operands[k] for k in indices if k not in targets)
            )
            edge.add_op(branch)
            self._copy(op, {k: targets[k] for k in indices if k in targets}, branch)
            successors[i] = edge
            dropped += indices
        rewriter.replace(op, rebuild(op, dropped, successors=successors))

    def _copy(self, op: Operation, targets: dict[int, SSAValue], at: Operation) -> None:
        indices = sorted(targets)
        self.state.copy_to_targets(
            [op.operands[k] for k in indices], [targets[k] for k in indices], at
        )

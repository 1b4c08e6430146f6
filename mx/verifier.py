"""Verification with located errors: `verify_module` runs the verifiers and
checks dominance (which xDSL's verifier does not), returning the located
error.

Locating verifier errors: xDSL's `VerifyException` does not say which op
failed. When the module fails to verify, the ops are re-verified
innermost-first; the first op whose own `verify()` fails is the culprit (its
children have already passed), and the error is reported at its location, or
at its nearest located ancestor if a pass created it.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import cast

from xdsl.dialects.builtin import ModuleOp, StringAttr
from xdsl.ir import Block, BlockArgument, Operation, OpResult, Region, SSAValue
from xdsl.traits import NoTerminator, SymbolOpInterface
from xdsl.utils.exceptions import VerifyException

from mx.diagnostics import Diag, op_diag

_REDEFINITION = re.compile(r'Redefinition of symbol "(.*)"')


def verify_module(module: ModuleOp) -> Diag | None:
    """None if `module` verifies and every use is dominated by its definition,
    else the located error."""
    try:
        module.verify()
    except Exception as first_error:
        if not _is_verifier_error(first_error):
            raise
        # Innermost first: the first op failing its own verify() is the culprit.
        for op in module.walk(region_first=True):
            try:
                op.verify(verify_nested_ops=False)
            except Exception as err:
                if not _is_verifier_error(err):
                    raise
                return _verifier_diag(op, str(err))
        return Diag("error", None, 1, str(first_error))
    return dominance_diag(module)


def _is_verifier_error(err: Exception) -> bool:
    """A verifier's refusal: a VerifyException, or the bare Exception a few of
    xDSL's verifiers raise (memref.load/store with the wrong number of
    indices, scf.while's block argument types)."""
    return isinstance(err, VerifyException) or type(err) is Exception


def _verifier_diag(op: Operation, message: str) -> Diag:
    if (m := _REDEFINITION.fullmatch(message)) is not None:
        # The symbol table is fine; its second definition of the name is not.
        seen = False
        for region in op.regions:
            for block in region.blocks:
                for child in block.ops:
                    symbol = child.get_trait(SymbolOpInterface)
                    if symbol and symbol.get_sym_attr_name(child) == StringAttr(m[1]):
                        if seen:
                            return op_diag(child, f"redefinition of symbol '{m[1]}'")
                        seen = True
    return op_diag(op, message)


@dataclass
class _Dominance:
    """Block dominance in one region (Cooper, Harvey and Kennedy's iterative
    algorithm), with dominator-tree intervals for constant-time queries.
    Blocks unreachable from the entry are dominated by every block, as in MLIR."""

    entry_in: dict[Block, int] = field(default_factory=dict[Block, int])
    exit_in: dict[Block, int] = field(default_factory=dict[Block, int])

    @staticmethod
    def of(region: Region) -> _Dominance:
        def successors(block: Block) -> tuple[Block, ...]:
            last = block.last_op
            return tuple(last.successors) if last is not None else ()

        entry = region.first_block
        assert entry is not None
        postorder: list[Block] = []
        visited = {entry}
        stack: list[tuple[Block, Iterator[Block]]] = [(entry, iter(successors(entry)))]
        while stack:
            block, pending = stack[-1]
            following = next((s for s in pending if s not in visited), None)
            if following is None:
                stack.pop()
                postorder.append(block)
            else:
                visited.add(following)
                stack.append((following, iter(successors(following))))
        order = postorder[::-1]
        number = {b: i for i, b in enumerate(order)}
        predecessors: dict[Block, list[Block]] = {b: [] for b in order}
        for b in order:
            for s in successors(b):
                predecessors[s].append(b)
        idom: dict[Block, Block] = {entry: entry}

        def intersect(a: Block, b: Block) -> Block:
            while a is not b:
                while number[a] > number[b]:
                    a = idom[a]
                while number[b] > number[a]:
                    b = idom[b]
            return a

        changed = True
        while changed:
            changed = False
            for b in order[1:]:
                new: Block | None = None
                for p in predecessors[b]:
                    if p in idom:
                        new = p if new is None else intersect(p, new)
                assert new is not None
                if idom.get(b) is not new:
                    idom[b] = new
                    changed = True
        children: dict[Block, list[Block]] = {b: [] for b in order}
        for b in order[1:]:
            children[idom[b]].append(b)
        result = _Dominance()
        clock = 0
        tree_stack: list[tuple[Block, Iterator[Block]]] = [
            (entry, iter(children[entry]))
        ]
        result.entry_in[entry] = clock
        while tree_stack:
            block, pending = tree_stack[-1]
            child = next(pending, None)
            clock += 1
            if child is None:
                tree_stack.pop()
                result.exit_in[block] = clock
            else:
                result.entry_in[child] = clock
                tree_stack.append((child, iter(children[child])))
        return result

    def dominates(self, a: Block, b: Block) -> bool:
        if b not in self.entry_in:
            return True  # unreachable
        if a not in self.entry_in:
            return False
        return (
            self.entry_in[a] <= self.entry_in[b] and self.exit_in[b] <= self.exit_in[a]
        )


@dataclass
class _DominanceChecker:
    regions: dict[Region, _Dominance] = field(default_factory=dict[Region, _Dominance])
    positions: dict[Block, dict[Operation, int]] = field(
        default_factory=dict[Block, dict[Operation, int]]
    )

    def position(self, op: Operation, block: Block) -> int:
        known = self.positions.get(block)
        if known is None:
            known = self.positions[block] = {o: i for i, o in enumerate(block.ops)}
        return known[op]

    def dominates(self, value: SSAValue, user: Operation) -> bool:
        """Whether `value`'s definition dominates its use by `user` (MLIR's rule)."""
        if isinstance(value, OpResult):
            definer: Operation | None = value.op
            block = value.op.parent
        else:
            definer = None
            block = cast(BlockArgument, value).block
        if block is None or (region := block.parent) is None:
            return True  # a detached definition: nothing to check
        if isinstance(region.parent, ModuleOp):
            return True  # a graph region: no dominance
        ancestor: Operation | None = user
        while ancestor is not None and (
            ancestor.parent is None or ancestor.parent.parent is not region
        ):
            ancestor = ancestor.parent_op()
        if ancestor is None or ancestor is definer:
            return False  # used outside its region, or inside its own op
        use_block = cast(Block, ancestor.parent)
        if use_block is block:
            return definer is None or self.position(definer, block) < self.position(
                ancestor, block
            )
        dominance = self.regions.get(region)
        if dominance is None:
            dominance = self.regions[region] = _Dominance.of(region)
        return dominance.dominates(block, use_block)


def dominance_diag(module: ModuleOp) -> Diag | None:
    """The first use of a value its definition does not dominate, or the first
    empty block of a region of several blocks (xDSL checks single blocks only)."""
    checker = _DominanceChecker()
    # The values defined so far in each block, in walk order (its arguments,
    # then its ops' results): a use of one of them is dominated, the common
    # case, answered without locating the definition.
    defined: dict[Block | None, set[SSAValue]] = {}
    for op in module.walk():
        for region in op.regions:
            if (
                region.first_block is not region.last_block
                and not op.has_trait(NoTerminator)
                and any(block.first_op is None for block in region.blocks)
            ):
                return op_diag(op, "empty block: expect at least a terminator")
        block = op.parent
        before = defined.get(block)
        if before is None:
            before = defined[block] = set(block.args) if block is not None else set()
        for index, operand in enumerate(op.operands):
            if operand not in before and not checker.dominates(operand, op):
                return op_diag(op, f"operand #{index} does not dominate this use")
        before.update(op.results)
    return None

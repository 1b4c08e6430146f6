"""A pattern applier that tries on each op only the patterns written for its class.

xDSL's `GreedyRewritePatternApplier` calls every pattern on every op until one
rewrites it; with the ~100 patterns of `convert-to-llvm` nearly all calls are
type tests that fail (1.4 M pattern calls for 100 k ops on a 500-op matrix
chain). `OpTypeDispatchApplier` does the same rewrites in the same order, but
looks the candidate patterns up by the op's class; `rewrite_once` applies it
to each op once, where xDSL's walker iterates to a fixpoint.
"""

import inspect
from collections.abc import Sequence
from types import UnionType

from xdsl.dialects.builtin import UnknownLoc
from xdsl.ir import Operation
from xdsl.pattern_rewriter import PatternRewriter, RewritePattern
from xdsl.rewriter import InsertPoint, Rewriter
from xdsl.transforms.dead_code_elimination import is_trivially_dead

from mx.lowering.walk import walk

OpClasses = type[Operation] | UnionType
"""What `issubclass(op_class, ...)` accepts: one op class or a union of them."""


def matched_op_classes(pattern: RewritePattern) -> OpClasses | None:
    """The op classes `pattern` can rewrite, or None if it does not say.

    Known from the op annotation of an `@op_type_rewrite_pattern` method, which
    xDSL's decorator keeps in its wrapper's closure, or from a `source` field
    holding an op class or a union of them (the table-driven patterns of
    `mx.lowering.llvm`).
    """
    source = getattr(pattern, "source", None)
    if isinstance(source, UnionType) or (
        isinstance(source, type) and issubclass(source, Operation)
    ):
        return source
    method = type(pattern).match_and_rewrite
    if method.__closure__ is None:
        return None
    expected = inspect.getclosurevars(method).nonlocals.get("expected_type")
    if isinstance(expected, UnionType) or (
        isinstance(expected, type) and issubclass(expected, Operation)
    ):
        return expected
    return None


class OpTypeDispatchApplier(RewritePattern):
    """Erases a trivially dead op, or applies the first of `patterns` that
    rewrites it, as `GreedyRewritePatternApplier` does (without folding);
    patterns that name their op classes are only tried on those. An op no
    pattern rewrites is left as it is, dead or not (`erase_dead_ops` sweeps
    the dead ones at the end): most ops a conversion visits are the ones its
    rewrites just inserted, and asking each for its effects costs more than
    the rewrite."""

    def __init__(self, patterns: Sequence[RewritePattern]) -> None:
        self._patterns = [(p, matched_op_classes(p)) for p in patterns]
        self._by_class: dict[type[Operation], tuple[RewritePattern, ...]] = {}

    def patterns_for(self, op_class: type[Operation]) -> tuple[RewritePattern, ...]:
        """The patterns that may rewrite an op of `op_class`, in their order."""
        found = self._by_class.get(op_class)
        if found is None:
            found = self._by_class[op_class] = tuple(
                p
                for p, classes in self._patterns
                if classes is None or issubclass(op_class, classes)
            )
        return found

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter, /) -> None:
        patterns = self.patterns_for(type(op))
        if not patterns:
            return
        if is_trivially_dead(op):
            rewriter.erase(op)
            return
        for pattern in patterns:
            pattern.match_and_rewrite(op, rewriter)
            if rewriter.has_done_action:
                return


def rewrite_once(
    root: Operation, applier: OpTypeDispatchApplier, *, reverse: bool = False
) -> None:
    """Applies `applier` once to each op nested in `root`, each op before the
    ops of its regions, first op first (with `reverse`: last op first), and
    to each op a rewrite inserts, right after that rewrite, in insertion order.
    Inserted ops without a location take the rewritten op's.

    xDSL's greedy `PatternRewriteWalker` (same orders) also re-visits the
    users of every replaced value and every modified op, then walks the whole
    IR again until nothing changes: twice the visits for a conversion, whose
    rewrites each turn an op into ops that need no further rewrite or that
    were just inserted. Ops erased or moved out of `root` before their turn
    are skipped.
    """
    # An op of a class no pattern rewrites is not queued: its visit would do
    # nothing (most ops a conversion visits are the ones it inserted).
    ops = [
        op for op in walk(root, last_first=reverse) if applier.patterns_for(type(op))
    ]
    if ops and ops[0] is root:
        del ops[0]
    ops.reverse()
    inserted: list[Operation] = []
    rewriter: PatternRewriter | None = None
    while ops:
        op = ops.pop()
        if not _inside(op, root):
            continue
        if rewriter is None:
            rewriter = PatternRewriter(op)
            rewriter.operation_insertion_handler.append(inserted.append)
        rewriter.has_done_action = False
        rewriter.current_operation = op
        rewriter.insertion_point = InsertPoint.before(op)
        rewriter.name_hint = None
        try:
            applier.match_and_rewrite(op, rewriter)
        except Exception as err:
            op.emit_error(f"Error while applying pattern: {err}", underlying_error=err)
        if inserted:
            # As in MLIR, the ops a rewrite creates take the rewritten op's
            # location: a later diagnostic about them points at the source.
            for new in inserted:
                if isinstance(new.location, UnknownLoc):
                    new.location = op.location
            ops += (o for o in reversed(inserted) if applier.patterns_for(type(o)))
            inserted.clear()


def _inside(op: Operation, root: Operation) -> bool:
    """Whether `op` is still nested in `root` (not erased or detached)."""
    parent = op.parent_op()
    while parent is not None:
        if parent is root:
            return True
        parent = parent.parent_op()
    return False


def erase_dead_ops(root: Operation) -> None:
    """Erases the ops nested in `root` whose results are all unused and that
    have no other effect, uses before definitions, so that a chain of dead
    ops goes in one sweep."""
    for op in reversed(list(walk(root))[1:]):
        if op.results and is_trivially_dead(op):
            Rewriter.erase_op(op)

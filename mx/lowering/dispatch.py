"""A pattern applier that tries on each op only the patterns written for its class.

xDSL's `GreedyRewritePatternApplier` calls every pattern on every op until one
rewrites it; with the ~100 patterns of `convert-to-llvm` nearly all calls are
type tests that fail (1.4 M pattern calls for 100 k ops on a 500-op matrix
chain). `OpTypeDispatchApplier` does the same rewrites in the same order, but
looks the candidate patterns up by the op's class.
"""

import inspect
from collections.abc import Sequence
from types import UnionType

from xdsl.ir import Operation
from xdsl.pattern_rewriter import PatternRewriter, RewritePattern
from xdsl.transforms.dead_code_elimination import is_trivially_dead

OpClasses = type[Operation] | UnionType
"""What `issubclass(op_class, ...)` accepts: one op class or a union of them."""


def matched_op_classes(pattern: RewritePattern) -> OpClasses | None:
    """The op classes `pattern` can rewrite, or None if it does not say.

    Known from the op annotation of an `@op_type_rewrite_pattern` method, which
    xDSL's decorator keeps in its wrapper's closure, or from a `source` field
    holding an op class (the table-driven patterns of `mx.lowering.llvm`).
    """
    source = getattr(pattern, "source", None)
    if isinstance(source, type) and issubclass(source, Operation):
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
    patterns that name their op classes are only tried on those."""

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
        if is_trivially_dead(op):
            rewriter.erase(op)
            return
        for pattern in self.patterns_for(type(op)):
            pattern.match_and_rewrite(op, rewriter)
            if rewriter.has_done_action:
                return

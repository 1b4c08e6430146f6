"""Workarounds for xDSL 0.75 bugs that mx must not inherit.

`xdsl_fixes()` applies them for the duration of a `with` block and then
restores xDSL's own code; every entry path that reads or transforms IR
(`mx-opt`, `mx-run`, the JIT, `mx.frontend.parse_and_verify`) runs inside it.
Nested uses are cheap: only the outermost one patches and restores.
"""

import re
import threading
from collections.abc import Generator, Iterable
from contextlib import contextmanager

from xdsl.ir import Attribute, Block, Operation, Region, RegionBlocks
from xdsl.irdl import OpDef
from xdsl.utils.exceptions import ParseError
from xdsl.utils.lexer import Span
from xdsl.utils.mlir_lexer import MLIRLexer, MLIRTokenKind

# xDSL lexes string literals with `"(?:[^"...]+|escape)*"`: the nested `+`/`*`
# backtracks exponentially when the closing quote is missing, so an unterminated
# string followed by a long line hangs the parser (found by mx's fuzzer). With
# one character per repetition every input position has a single way to match,
# and the regex accepts exactly the same strings in linear time.
_STRING_LITERAL = re.compile(r'"(?:[^"\\\n\v\f]|\\(?:["nt\\]|[0-9A-Fa-f]{2}))*"')

# `Operation.verify` asks `len(region.blocks)` for every block's last op, and
# `RegionBlocks.__len__` walks the region's block list: verifying a region of B
# blocks takes O(B²) time (~1 s for the 1500 blocks of 500 lowered matrix adds).
# Verification does not change the IR, so while the outermost `verify` runs,
# each region's block count is computed once and remembered.
#
# `OpDef.verify` checks an op against its IRDL definition in ~50 µs, and a
# lowered module repeats a few signatures (an `i64` `llvm.add`, a `<4 x float>`
# load) tens of thousands of times. Apart from the traits' checks, which look at
# the op's surroundings, that check depends only on the op's class, operand and
# result types, successor count and (immutable) properties and attributes: while
# the outermost `verify` runs, a signature that verified is not checked again.
# Ops with regions are always checked in full, and so is a signature that fails,
# with xDSL's own message.
_xdsl_verify = Operation.verify
_xdsl_block_count = RegionBlocks.__len__
_xdsl_op_def_verify = OpDef.verify
_block_counts: dict[int, tuple[Region, int]] | None = None
"""Region and block count by `id(region)` (the region is kept so that its id is
not reused), during the outermost `Operation.verify` only."""
_verified_signatures: set[tuple[object, ...]] | None = None
"""The signatures (`_signature`) of the region-less ops that verified, during
the outermost `Operation.verify` only."""


def _verify(self: Operation, verify_nested_ops: bool = True) -> None:
    global _block_counts, _verified_signatures
    if _block_counts is not None:
        return _xdsl_verify(self, verify_nested_ops)
    _block_counts, _verified_signatures = {}, set()
    try:
        _xdsl_verify(self, verify_nested_ops)
    finally:
        _block_counts = _verified_signatures = None


def _block_count(self: RegionBlocks) -> int:
    if _block_counts is None:
        return _xdsl_block_count(self)
    region = self._region  # pyright: ignore[reportPrivateUsage]
    known = _block_counts.get(id(region))
    if known is None:
        known = _block_counts[id(region)] = (region, _xdsl_block_count(self))
    return known[1]


def _signature(op: Operation) -> tuple[object, ...]:
    return (
        type(op),
        tuple(op.operand_types),
        tuple(op.result_types),
        len(op.successors),
        tuple(op.properties.items()),
        tuple(op.attributes.items()),
    )


def _op_def_verify(self: OpDef, op: Operation) -> None:
    if _verified_signatures is None or op.regions:
        return _xdsl_op_def_verify(self, op)
    signature = _signature(op)
    try:
        known = signature in _verified_signatures
    except TypeError:  # an unhashable attribute
        return _xdsl_op_def_verify(self, op)
    if not known:
        _xdsl_op_def_verify(self, op)
        _verified_signatures.add(signature)
        return
    for trait in self.traits:
        trait.verify(op)


# `Block.split_before` finds its block's index in the region and inserts the new
# block at index + 1, walking the region's block list twice: lowering each of B
# loops to a CFG (scf-to-cf splits a block per loop) took O(B²) time. Linking
# the new block in after the split one gives the same result in time linear in
# the moved ops.
def _split_before(
    self: Block, b_first: Operation, *, arg_types: Iterable[Attribute] = ()
) -> Block:
    if b_first.parent is not self:
        raise ValueError("Cannot split block on operation outside of the block.")
    region = self.parent
    if region is None:
        raise ValueError("Cannot split block with no parent.")
    moved: list[Operation] = []
    op: Operation | None = b_first
    while op is not None:
        moved.append(op)
        op = op.next_op
    for op in moved:
        self.detach_op(op)
    block = Block(moved, arg_types=arg_types)
    region.insert_block_after(block, self)
    return block


# Python refuses to convert an integer literal of more than 4300 digits
# (`ValueError: Exceeds the limit ...`), which xDSL lets escape from its lexer.
# Such a literal is bad input: a parse error at the literal.
MAX_INTEGER_DIGITS = 4000
_xdsl_int_value = MLIRTokenKind.get_int_value


def _int_value(self: MLIRTokenKind, span: Span) -> int:
    if self == MLIRTokenKind.INTEGER_LIT and len(span.text) > MAX_INTEGER_DIGITS:
        raise ParseError(
            span, f"integer literal of {len(span.text)} digits is too large"
        )
    return _xdsl_int_value(self, span)


_PATCHES: tuple[tuple[object, str, object], ...] = (
    (MLIRLexer, "_unescaped_characters_regex", _STRING_LITERAL),
    (Operation, "verify", _verify),
    (RegionBlocks, "__len__", _block_count),
    (OpDef, "verify", _op_def_verify),
    (Block, "split_before", _split_before),
    (MLIRTokenKind, "get_int_value", _int_value),
)

_lock = threading.Lock()
_depth = 0
_originals: list[object] = []


@contextmanager
def xdsl_fixes() -> Generator[None]:
    """Patch the xDSL classes within this `with` block (re-entrant)."""
    global _depth
    with _lock:
        if _depth == 0:
            _originals[:] = [owner.__dict__[name] for owner, name, _ in _PATCHES]  # pyright: ignore
            for owner, name, fix in _PATCHES:
                setattr(owner, name, fix)
        _depth += 1
    try:
        yield
    finally:
        with _lock:
            _depth -= 1
            if _depth == 0:
                for (owner, name, _), original in zip(
                    _PATCHES, _originals, strict=True
                ):
                    setattr(owner, name, original)

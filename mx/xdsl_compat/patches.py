"""The workarounds of xDSL 0.75 behaviour, installed into xDSL's classes.

`install()` replaces each xDSL function listed in `PATCHES` by its fix, once
per process; `mx.xdsl_compat` calls it when it is imported, which mx's dialect
registration (`mx.universe`, `mx.dialects`) does: stock `xdsl-opt` and any
pipeline that loads mx's dialects run with the fixes. `stock_xdsl()` puts
xDSL's own code back for the span of a `with` (tests show each fix matters).
"""

import re
import threading
from collections import deque
from collections.abc import Callable, Generator, Iterable, Iterator, Sequence, Set
from contextlib import contextmanager
from contextvars import ContextVar
from typing import cast

from xdsl import traits
from xdsl.dialects.builtin import (
    BFloat16Type,
    Float16Type,
    Float32Type,
    IndexType,
    IntAttr,
    IntegerAttr,
    IntegerType,
    StructPackableType,
)
from xdsl.ir import Attribute, Block, Operation, Region, RegionBlocks, SSAValue
from xdsl.irdl import OpDef, VerificationContext
from xdsl.irdl.declarative_assembly_format import (
    OperandVariable,
    ParsingState,
    ResultVariable,
    TypeDirective,
)
from xdsl.parser import Parser
from xdsl.pattern_rewriter import PatternRewriterListener
from xdsl.traits import (
    EffectInstance,
    IsTerminator,
    MemoryAllocEffect,
    MemoryEffect,
    MemoryEffectKind,
    MemoryFreeEffect,
    MemoryReadEffect,
    MemoryWriteEffect,
    NoMemoryEffect,
    OpTrait,
    RecursiveMemoryEffect,
    SameOperandsAndResultType,
    SymbolOpInterface,
)
from xdsl.transforms import canonicalize, dead_code_elimination
from xdsl.transforms import common_subexpression_elimination as cse
from xdsl.utils.exceptions import ParseError, VerifyException
from xdsl.utils.lexer import Span
from xdsl.utils.mlir_lexer import MLIRLexer, MLIRTokenKind

from mx.compile_memos import forget_with_compiles
from mx.semantics.index import wrap_index
from mx.semantics.nan_bits import FRACTION_BITS, nan_bits, nan_to_double

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
# result types, successor count and (immutable) properties and attributes: a
# signature that verified is not checked again (mx-opt's `-t llvm` verifies
# each function apart: the same signatures in every one). Ops with regions are always checked in full, and so is a signature
# that fails, with xDSL's own message. Of the traits, only those that look at
# types alone (`SIGNATURE_TRAITS`) are skipped for a known signature.
_xdsl_verify = Operation.verify
_xdsl_block_count = RegionBlocks.__len__
_xdsl_op_def_verify = OpDef.verify
_block_counts: dict[int, tuple[Region, int]] | None = None
"""Region and block count by `id(region)` (the region is kept so that its id is
not reused), during the outermost `Operation.verify` only."""
_verified_signatures: set[tuple[object, ...]] = set()
"""The signatures (`_signature`) of the region-less ops that verified."""
_verified_identities: dict[tuple[object, ...], tuple[object, ...]] = {}
"""The same, by `_identity`: a known one needs no signature to be built and
hashed. Each maps to its signature, which keeps its attributes alive."""
MAX_VERIFIED_IDENTITIES = 1 << 12
"""Beyond this many, the remembered identities are forgotten: ops holding
attributes of their own (a constant's value) each have one, and keep those
attributes alive (18 k identities, ~6 MB, for the 10 k-op bench module); the
shared ones that pay are back after their next verification."""
MAX_VERIFIED_SIGNATURES = 1 << 16
"""Beyond this many, the remembered signatures are forgotten (a bound on the
memory they keep alive in a long-lived process)."""
# A remembered signature keeps its attributes alive, and ops with attributes of
# their own (a constant's value, a symbol name) have signatures of their own: a
# process compiling kernel after kernel kept ~3 KB of each kernel's attributes
# until the bound was reached (65536 signatures, ~60 MB): the JIT forgets them
# at the end of each compile (`mx.compile_memos`).
SIGNATURE_TRAITS: tuple[type[OpTrait], ...] = (SameOperandsAndResultType,)
"""Traits whose check depends on the op's signature alone."""


def _verify(self: Operation, verify_nested_ops: bool = True) -> None:
    global _block_counts
    if _block_counts is not None:
        return _xdsl_verify(self, verify_nested_ops)
    _block_counts = {}
    try:
        _xdsl_verify(self, verify_nested_ops)
    finally:
        _block_counts = None


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


def _identity(op: Operation) -> tuple[object, ...]:
    """The signature with each attribute replaced by its `id`: equal for ops
    built with the same attribute objects (a lowering's cached types), and
    hashed without hashing the attributes (~20 nested hashes per op)."""
    return (
        type(op),
        len(op.successors),
        *[id(t) for t in op.operand_types],
        None,
        *[id(t) for t in op.result_types],
        None,
        *[(name, id(value)) for name, value in op.properties.items()],
        None,
        *[(name, id(value)) for name, value in op.attributes.items()],
    )


def _op_def_verify(self: OpDef, op: Operation) -> None:
    if op.regions:
        return _xdsl_op_def_verify(self, op)
    identity = _identity(op)
    if identity not in _verified_identities:
        signature = _signature(op)
        try:
            known = signature in _verified_signatures
        except TypeError:  # an unhashable attribute
            return _xdsl_op_def_verify(self, op)
        if len(_verified_identities) >= MAX_VERIFIED_IDENTITIES:
            _verified_identities.clear()
        if not known:
            _xdsl_op_def_verify(self, op)
            if len(_verified_signatures) >= MAX_VERIFIED_SIGNATURES:
                _verified_signatures.clear()
            _verified_signatures.add(signature)
            # The signature keeps the attributes alive: their ids are not reused.
            _verified_identities[identity] = signature
            return
        _verified_identities[identity] = signature
    for trait in self.traits:
        if not isinstance(trait, SIGNATURE_TRAITS):
            trait.verify(op)


def _forget_verified_signatures() -> None:
    _verified_identities.clear()
    _verified_signatures.clear()


forget_with_compiles(_forget_verified_signatures)


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


# `Operation.get_trait`/`get_traits_of_type` test each of the op class's traits
# with `isinstance` against an ABC (~1 µs each), and the greedy rewriter, dead
# code elimination and verification ask them several times for every op they
# visit (~300 k times to lower 2 000 matrix ops). An op class's traits only
# change through `OpTraits.add_trait`, which replaces its trait set: the
# answers are remembered per class and question while that set is the same.
_xdsl_get_trait = cast(
    "classmethod[Operation, ..., OpTrait | None]", Operation.__dict__["get_trait"]
)
_xdsl_get_traits_of_type = cast(
    "classmethod[Operation, ..., list[OpTrait]]",
    Operation.__dict__["get_traits_of_type"],
)
_trait_answers: dict[tuple[object, ...], tuple[frozenset[OpTrait], object]] = {}


def _remembered(
    kind: str, cls: type[Operation], trait: object, answer: Callable[[], object]
) -> object:
    current = cls.traits.traits
    key = (kind, cls, trait)
    try:
        known = _trait_answers.get(key)
    except TypeError:  # an unhashable trait
        return answer()
    if known is None or known[0] is not current:
        known = _trait_answers[key] = (current, answer())
    return known[1]


def _get_trait(cls: type[Operation], trait: object) -> OpTrait | None:
    return cast(
        OpTrait | None,
        _remembered("get", cls, trait, lambda: _xdsl_get_trait.__func__(cls, trait)),
    )


def _get_traits_of_type(cls: type[Operation], trait_type: object) -> list[OpTrait]:
    found = _remembered(
        "all",
        cls,
        trait_type,
        lambda: tuple(_xdsl_get_traits_of_type.__func__(cls, trait_type)),
    )
    return list(cast(tuple[OpTrait, ...], found))


# `would_be_trivially_dead` (dead code elimination, the greedy rewriter, and
# `canonicalize`'s `region_dce` for every op of every sweep) asks an op for
# its traits and memory effects each time. For an op class whose effect traits
# all return a fixed set (`Pure`, `MemoryReadEffect`, ...: not
# `RecursiveMemoryEffect` or a trait computing effects from the op), the answer
# depends on the class alone: it is remembered per class while the class's
# trait set is the same.
_xdsl_would_be_trivially_dead = dead_code_elimination.would_be_trivially_dead


def _effects_function(trait_class: type[OpTrait]) -> object:
    """The function behind a memory-effect trait class's `get_effects`."""
    return getattr(getattr(trait_class, "get_effects", None), "__func__", None)


_FIXED_EFFECTS = frozenset(
    _effects_function(trait)
    for trait in (
        NoMemoryEffect,
        MemoryReadEffect,
        MemoryWriteEffect,
        MemoryAllocEffect,
        MemoryFreeEffect,
    )
)
_dead_if_unused: dict[type[Operation], tuple[frozenset[OpTrait], bool]] = {}


def _would_be_trivially_dead(op: Operation) -> bool:
    cls = type(op)
    current = cls.traits.traits
    known = _dead_if_unused.get(cls)
    if known is not None and known[0] is current:
        return known[1]
    if (
        _known_effects.get() is None  # (else xDSL's answer is remembered)
        and any(type(t) is RecursiveMemoryEffect for t in current)
        and not (op.has_trait(IsTerminator) or op.has_trait(SymbolOpInterface))
    ):
        return _only_reads_and_own_allocations(op)
    answer = _xdsl_would_be_trivially_dead(op)
    if all(
        _effects_function(type(trait)) in _FIXED_EFFECTS
        for trait in cls.get_traits_of_type(MemoryEffect)
    ):
        _dead_if_unused[cls] = (current, answer)
    return answer


# For an op holding others (`RecursiveMemoryEffect`: scf.for, affine.for,
# scf.if), xDSL's answer collects the effects of every op nested in it. The
# greedy rewriter asks it of each result-less op on every visit, between
# rewrites that may change it, so a nest d deep was walked d times a sweep:
# quadratic in the depth (`canonicalize` of 500 nested loops that store: 12 s).
# The same answer stops at the first op that does more than read or allocate
# within `root`, an op's own ops before those nested deeper (a loop's body
# usually stores at its own level).
def _only_reads_and_own_allocations(root: Operation) -> bool:
    """xDSL's `result_only_effects(root)`, stopping at the first op with an
    effect other than a read or an allocation of a value defined in `root`."""
    pending = deque([root])
    while pending:
        op = pending.popleft()
        effect_traits = op.get_traits_of_type(MemoryEffect)
        if not effect_traits:
            return False  # unknown effects
        for trait in effect_traits:
            if type(trait) is RecursiveMemoryEffect:
                pending.extend(o for r in op.regions for b in r.blocks for o in b.ops)
                continue
            effects = trait.get_effects(op)
            if effects is None:
                return False
            for effect in effects:
                if effect.kind is MemoryEffectKind.READ:
                    continue
                value = effect.value
                if (
                    effect.kind is MemoryEffectKind.ALLOC
                    and isinstance(value, SSAValue)
                    and root.is_ancestor(cast(Operation, value.owner))
                ):
                    continue
                return False
    return True


# xDSL's `cse` and `dce` (also run after each sweep of `canonicalize`) ask
# every op for its memory effects; an op with `RecursiveMemoryEffect`
# (scf.if, scf.for, affine.for, ...) computes them from every op nested in it,
# so each op of a nest d deep was visited d times: `cse` of 1000 nested
# `scf.if` took 15 s and `dce` 32 s, growing with the square of the depth
# (found by mx's fuzzer). Neither changes an op's effects before its
# erasures at the end, so within one run each op's effects are computed once.
_xdsl_get_effects = traits.get_effects
_xdsl_cse_simplify = cse.CSEDriver.simplify
_xdsl_region_dce = dead_code_elimination.region_dce
_known_effects: ContextVar[dict[Operation, Set[EffectInstance] | None] | None] = (
    ContextVar("_known_effects", default=None)
)


def _get_effects(op: Operation) -> Set[EffectInstance] | None:
    known = _known_effects.get()
    if known is None:
        return _xdsl_get_effects(op)
    if op not in known:
        known[op] = _xdsl_get_effects(op)
    return known[op]


@contextmanager
def _effects_remembered() -> Generator[None]:
    token = _known_effects.set({})
    try:
        yield
    finally:
        _known_effects.reset(token)


def _cse_simplify(self: cse.CSEDriver, thing: Operation | Block | Region) -> None:
    with _effects_remembered():
        _xdsl_cse_simplify(self, thing)


def _region_dce(
    region: Region, listener: PatternRewriterListener | None = None
) -> bool:
    with _effects_remembered():
        return _xdsl_region_dce(region, listener)


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


# xDSL converts f16, bf16 and f32 values to and from Python floats (doubles)
# with the hardware's conversions, which quiet a signalling NaN: the f32
# literal 0x7fa00001 was read, printed and compiled as 0x7fe00001, where MLIR
# keeps every bit. The conversions below move NaNs exactly (`mx.semantics.
# nan_bits`) and leave every other value to xDSL.
_xdsl_bf16_encode = BFloat16Type._encode  # pyright: ignore[reportPrivateUsage]
_xdsl_bf16_decode = BFloat16Type._decode  # pyright: ignore[reportPrivateUsage]


def _exact_values(
    type_: StructPackableType[float], values: Iterable[float], buffer: memoryview
) -> Iterator[float]:
    size = type_.compile_time_size
    bits = FRACTION_BITS[type_.name]
    for index, value in enumerate(values):
        if value != value:
            raw = buffer[index * size : (index + 1) * size]
            value = nan_to_double(int.from_bytes(raw, "little"), bits, size * 8)
        yield value


def _unpack(
    self: StructPackableType[float], buffer: bytes, num: int, /
) -> tuple[float, ...]:
    values = StructPackableType.unpack(self, buffer, num)
    if all(v == v for v in values):
        return values
    return tuple(_exact_values(self, values, memoryview(buffer)))


def _iter_unpack(self: StructPackableType[float], buffer: bytes, /) -> Iterator[float]:
    return _exact_values(
        self, StructPackableType.iter_unpack(self, buffer), memoryview(buffer)
    )


def _nan_bytes(type_: StructPackableType[float], value: float) -> bytes:
    size = type_.compile_time_size
    return nan_bits(value, FRACTION_BITS[type_.name], size * 8).to_bytes(size, "little")


def _pack(self: StructPackableType[float], values: Sequence[float]) -> bytes:
    if all(v == v for v in values):
        return StructPackableType.pack(self, values)
    return b"".join(
        StructPackableType.pack(self, (v,)) if v == v else _nan_bytes(self, v)
        for v in values
    )


def _pack_into(
    self: StructPackableType[float], buffer: bytearray, offset: int, value: float
) -> None:
    StructPackableType.pack_into(self, buffer, offset, value)
    if value != value:
        size = self.compile_time_size
        memoryview(buffer)[offset : offset + size] = _nan_bytes(self, value)


def _bf16_encode(value: float) -> bytes:
    if value != value:
        return nan_bits(value, FRACTION_BITS["bf16"], 16).to_bytes(2, "little")
    return _xdsl_bf16_encode(value)


def _bf16_decode(raw: bytes) -> float:
    value = _xdsl_bf16_decode(raw)
    if value != value:
        return nan_to_double(int.from_bytes(raw, "little"), FRACTION_BITS["bf16"], 16)
    return value


_EXACT_NAN_CONVERSIONS: tuple[tuple[object, str, object], ...] = (
    *(
        (float_type, name, fix)
        for float_type in (Float16Type, Float32Type)
        for name, fix in (
            ("unpack", _unpack),
            ("iter_unpack", _iter_unpack),
            ("pack", _pack),
            ("pack_into", _pack_into),
        )
    ),
    (BFloat16Type, "_encode", staticmethod(_bf16_encode)),
    (BFloat16Type, "_decode", staticmethod(_bf16_decode)),
)


# xDSL's `IntegerAttr` bounds the value of an integer type but not of `index`:
# its folds computed index arithmetic unbounded (2^62 + 2^62 gave the constant
# 2^63, which re-parses as an error and compares as positive), where MLIR
# computes it in 64 bits. An `index` value wraps to 64 bits (two's complement)
# here, as xDSL wraps an `i64` result; literals are checked before, by the
# front end.
_xdsl_integer_attr_init = IntegerAttr.__init__


def _integer_attr_init(
    self: IntegerAttr,
    value: int | IntAttr,
    value_type: int | IntegerType | IndexType,
    *,
    truncate_bits: bool = False,
) -> None:
    if isinstance(value_type, IndexType):
        value = wrap_index(value if isinstance(value, int) else value.data)
    _xdsl_integer_attr_init(self, value, value_type, truncate_bits=truncate_bits)  # pyright: ignore[reportArgumentType]


# xDSL's parser forgets where a block that was referenced before its label
# was defined (its span stays None): a second definition of that label then
# fails with a KeyError from `forward_block_references.pop` instead of a
# parse error (docs/xdsl-upstream.md).
_xdsl_parse_block = Parser._parse_block  # pyright: ignore[reportPrivateUsage]


def _parse_block(self: Parser) -> Block:
    token = self._current_token  # pyright: ignore[reportPrivateUsage]
    if token.kind == MLIRTokenKind.CARET_IDENT:
        name = token.text[1:]
        known = self.blocks.get(name)
        if (
            known is not None
            and known[1] is None
            and name not in self.forward_block_references
        ):
            raise ParseError(token.span, f"re-declaration of block '{name}'")
    return _xdsl_parse_block(self)


# A type written in a declarative assembly format (`type($x)`) is checked
# against its value's IRDL constraint only once the whole op is read
# (`FormatProgram.resolve_constraint_variables`), which raises a bare
# `VerifyException`: stock xdsl-opt prints a traceback, and mx's parser can
# only place the error after the op (`memref.load %m[%i] : f32`). The type is
# checked where it is written, with xDSL's message, against its constraint
# alone (no type variable bound yet): it rejects only types that the check
# after the op rejects too.
_xdsl_parse_type_directive = TypeDirective.parse


def _parse_type_directive(
    self: TypeDirective, parser: Parser, state: ParsingState
) -> None:
    start = parser.pos
    _xdsl_parse_type_directive(self, parser, state)
    inner = self.inner
    op_def = state.op_type.get_irdl_definition()
    if isinstance(inner, OperandVariable):
        types, constraint = state.operand_types, op_def.operands[inner.index][1].constr
    elif isinstance(inner, ResultVariable):
        types, constraint = state.result_types, op_def.results[inner.index][1].constr
    else:
        return
    parsed = types[inner.index]
    if parsed is None:
        return
    try:
        constraint.verify(parsed, VerificationContext())
    except VerifyException as e:
        message = str(e)
    else:
        return
    parser.raise_error(message, start, parser.pos)


PATCHES: tuple[tuple[object, str, object], ...] = (
    (MLIRLexer, "_unescaped_characters_regex", _STRING_LITERAL),
    (Operation, "verify", _verify),
    (RegionBlocks, "__len__", _block_count),
    (OpDef, "verify", _op_def_verify),
    (Block, "split_before", _split_before),
    (MLIRTokenKind, "get_int_value", _int_value),
    (Operation, "get_trait", classmethod(_get_trait)),
    (Operation, "get_traits_of_type", classmethod(_get_traits_of_type)),
    (dead_code_elimination, "would_be_trivially_dead", _would_be_trivially_dead),
    (traits, "get_effects", _get_effects),
    (cse, "get_effects", _get_effects),
    (dead_code_elimination, "get_effects", _get_effects),
    (cse.CSEDriver, "simplify", _cse_simplify),
    (dead_code_elimination, "region_dce", _region_dce),
    (canonicalize, "region_dce", _region_dce),
    *_EXACT_NAN_CONVERSIONS,
    (IntegerAttr, "__init__", _integer_attr_init),
    (Parser, "_parse_block", _parse_block),
    (TypeDirective, "parse", _parse_type_directive),
)
"""(owner, name, fix): each fix replaces `owner.name`."""

_INHERITED = object()
"""Stands for a patched name the class did not define itself (it inherits
xDSL's method): restoring deletes the patch."""
_XDSL_ORIGINALS = [owner.__dict__.get(name, _INHERITED) for owner, name, _ in PATCHES]  # pyright: ignore
"""xDSL's own `owner.name` for each of `PATCHES`, taken before any is installed."""
_lock = threading.Lock()
_installed = False


def _set(fixed: bool) -> None:
    global _installed
    for (owner, name, fix), original in zip(PATCHES, _XDSL_ORIGINALS, strict=True):
        if fixed:
            setattr(owner, name, fix)
        elif original is _INHERITED:
            delattr(owner, name)
        else:
            setattr(owner, name, original)
    _installed = fixed
    _verified_signatures.clear()
    _verified_identities.clear()
    _trait_answers.clear()
    _dead_if_unused.clear()


def install() -> None:
    """Install the fixes into xDSL's classes (once; later calls do nothing)."""
    with _lock:
        if not _installed:
            _set(True)


@contextmanager
def stock_xdsl() -> Generator[None]:
    """xDSL's own code, without the fixes, within this `with` block (for tests
    that show what each fix changes); the fixes are back afterwards."""
    with _lock:
        was_installed = _installed
        _set(False)
    try:
        yield
    finally:
        with _lock:
            _set(was_installed)

"""Folders and canonicalization patterns of the `matrix` ops.

`matrix.MatrixOp` forwards xDSL's `HasFolderInterface.fold` to `fold` and
`HasCanonicalizationPatternsInterface.get_canonicalization_patterns` to
`patterns_for`, so xDSL's own `canonicalize` pass runs everything here.

Folding never changes a result: the structural rewrites only move existing
values; constant folding of arithmetic computes with the reference semantics
(`mx.semantics.matrix`, the interpreter's functions). No rewrite creates a
constant of more than `MAX_FOLDED_ELEMENTS` elements but a splat held as its
one value, so a huge splat stays a `matrix.splat` or a splat `matrix.constant`
whatever the ops computing it: arithmetic, transposes and extracts of splats
fold on the one element.
"""

from __future__ import annotations

from collections.abc import Sequence

from xdsl.dialects import arith
from xdsl.dialects.builtin import (
    AnyFloat,
    FloatAttr,
    IndexType,
    IntegerAttr,
    IntegerType,
    UnitAttr,
)
from xdsl.ir import Attribute, Operation, SSAValue
from xdsl.pattern_rewriter import (
    PatternRewriter,
    RewritePattern,
    op_type_rewrite_pattern,
)
from xdsl.utils.exceptions import VerifyException

from mx.dialects.dense_literal import is_splat_literal
from mx.dialects.matrix import (
    MAX_FOLDED_ELEMENTS,
    AddOp,
    BFloat16Type,
    CastOp,
    ConstantOp,
    ContractionOp,
    DivOp,
    ExtractOp,
    Float16Type,
    Float32Type,
    Float64Type,
    FmaOp,
    IndexedOp,
    InsertOp,
    LoadOp,
    MatmulAddOp,
    MatmulOp,
    MatrixOp,
    MatrixType,
    MatvecOp,
    MemoryAccessOp,
    MixedIndex,
    MulOp,
    NegOp,
    SplatOp,
    StoreOp,
    SubOp,
    TransposeOp,
    dense_matrix_value,
    element_type_of,
    is_literal_index,
    widens_exactly,
)
from mx.semantics import matrix as sem

# ---------------------------------------------------------------------------
# Small queries shared with the transpose and fusion passes
# ---------------------------------------------------------------------------


def same_index(a: MixedIndex, b: MixedIndex) -> bool:
    """Provably the same position: equal literals or the same SSA value."""
    if isinstance(a, SSAValue) or isinstance(b, SSAValue):
        return a is b
    return a == b


def transposed_constant(op: ConstantOp) -> ConstantOp | None:
    """The transposed literal, or None when it would be too large to build."""
    t = op.result.type
    assert isinstance(t, MatrixType)
    if t.num_elements > MAX_FOLDED_ELEMENTS:
        return None
    values = op.row_major_values()
    flipped = [values[r * t.cols + c] for c in range(t.cols) for r in range(t.rows)]
    return ConstantOp.from_values(flipped, t.transposed())


def scalar_constant(value: SSAValue) -> int | float | None:
    """The value of an `arith.constant` scalar (integer or float), else None."""
    owner = value.owner
    if isinstance(owner, arith.ConstantOp):
        attr = owner.value
        if isinstance(attr, IntegerAttr | FloatAttr):
            return attr.value.data
    return None


def splat_scalar(value: SSAValue) -> int | float | None:
    """The element of a splat known at compile time (`matrix.splat` of an
    `arith.constant`, or a `matrix.constant` held as one value), else None."""
    owner = value.owner
    if isinstance(owner, SplatOp):
        return scalar_constant(owner.input)
    if isinstance(owner, ConstantOp) and is_splat_literal(owner.value):
        return owner.element(0, 0)
    return None


def matrix_constant_values(value: SSAValue) -> tuple[int | float, ...] | None:
    """Row-major elements of a `matrix.constant`, or of a small splat of a constant."""
    owner = value.owner
    if isinstance(owner, ConstantOp):
        if len(owner.value) > 1:
            return owner.row_major_values()
        x = owner.element(0, 0)  # a large splat, held as one value
    elif isinstance(owner, SplatOp):
        x = scalar_constant(owner.input)
    else:
        return None
    t = owner.result.type
    assert isinstance(t, MatrixType)
    if x is None or t.num_elements > MAX_FOLDED_ELEMENTS:
        return None
    return (x,) * t.num_elements


# ---------------------------------------------------------------------------
# Folders
# ---------------------------------------------------------------------------


def fold(op: MatrixOp) -> Sequence[SSAValue | Attribute] | None:
    """Fold `op` to existing values or to a constant attribute (xDSL fold contract)."""
    match op:
        case ConstantOp():
            return (op.value,)
        case TransposeOp():
            return _fold_transpose(op)
        case ExtractOp():
            return _fold_extract(op)
        case InsertOp():
            return _fold_insert(op)
        case CastOp() if op.input.type == op.result.type:
            # Same element type: a no-op whatever the signedness attribute says.
            return (op.input,)
        case NegOp() if isinstance(inner := op.input.owner, NegOp):
            # Negation is exact, so -(-x) is x bit for bit.
            return (inner.input,)
        case _:
            return _constant_fold(op)


def _operand_array(value: SSAValue) -> sem.Array | None:
    """A constant matrix operand as a reference-semantics array."""
    if (values := matrix_constant_values(value)) is None:
        return None
    t = _matrix(value.type)
    return sem.constant(values, t.shape, sem.element_dtype(t.element_type))


def _evaluate(op: Operation, args: Sequence[sem.Array]) -> sem.Array | None:
    """`op` on constant operands, with the interpreter's numerics."""
    match op:
        case AddOp():
            return sem.add(*args)
        case SubOp():
            return sem.sub(*args)
        case MulOp():
            return sem.mul(*args)
        case DivOp():
            return sem.div(*args, unsigned=op.unsigned is not None)
        case NegOp():
            return sem.neg(*args)
        case FmaOp():
            return sem.fma(*args)
        case MatmulOp() | MatmulAddOp():
            dtype = sem.element_dtype(op.result_element)
            unsigned = op.unsigned is not None
            a, b = (sem.widen(x, dtype, unsigned=unsigned) for x in args[:2])
            if isinstance(op, MatmulOp):
                return sem.matmul(a, b)
            return sem.matmul_add(a, b, args[2])
        case CastOp():
            target = _matrix(op.result.type).element_type
            return sem.cast(
                args[0], sem.element_dtype(target), unsigned=op.unsigned is not None
            )
        case _:
            return None


FOLDABLE = (AddOp, SubOp, MulOp, DivOp, NegOp, FmaOp, MatmulOp, MatmulAddOp, CastOp)
"""Pure arithmetic ops whose operands are all matrices."""


def _all_splats(op: Operation) -> bool:
    return all(splat_scalar(v) is not None for v in op.operands)


def _constant_fold(op: MatrixOp) -> Sequence[SSAValue | Attribute] | None:
    """Arithmetic on constant operands → a (small) constant. Undefined
    behaviour (e.g. integer division by zero) is left for run time. Operands
    that are all splats are left to `ArithmeticOfSplats`, which keeps a splat."""
    if not isinstance(op, FOLDABLE) or _all_splats(op):
        return None
    t = _matrix(op.results[0].type)
    if t.num_elements > MAX_FOLDED_ELEMENTS:
        return None
    args = [_operand_array(v) for v in op.operands]
    if any(a is None for a in args):
        return None
    try:
        result = _evaluate(op, [a for a in args if a is not None])
    except sem.UndefinedBehaviorError:
        return None
    if result is None:
        return None
    return (dense_matrix_value(t, sem.row_major_values(result)),)


def _fold_transpose(op: TransposeOp) -> Sequence[SSAValue | Attribute] | None:
    """`(Aᵀ)ᵀ → A`; a 1x1 transpose is the identity; `constantᵀ` is a constant."""
    t = op.input.type
    assert isinstance(t, MatrixType)
    if t.rows == 1 and t.cols == 1:
        return (op.input,)
    inner = op.input.owner
    if isinstance(inner, TransposeOp):
        return (inner.input,)
    if isinstance(inner, ConstantOp) and (c := transposed_constant(inner)):
        return (c.value,)
    return None


def _fold_extract(op: ExtractOp) -> Sequence[SSAValue | Attribute] | None:
    """`extract(splat x) → x`; `extract(insert(e, m, p), p) → e`."""
    inner = op.matrix.owner
    if isinstance(inner, SplatOp):
        return (inner.input,)
    if isinstance(inner, InsertOp) and all(
        same_index(a, b) for a, b in zip(op.indices(), inner.indices(), strict=True)
    ):
        return (inner.element,)
    return None


def _fold_insert(op: InsertOp) -> Sequence[SSAValue | Attribute] | None:
    """`insert(extract(m, p), m, p) → m`."""
    e = op.element.owner
    if (
        isinstance(e, ExtractOp)
        and e.matrix is op.matrix
        and all(
            same_index(a, b) for a, b in zip(op.indices(), e.indices(), strict=True)
        )
    ):
        return (op.matrix,)
    return None


# ---------------------------------------------------------------------------
# Patterns
# ---------------------------------------------------------------------------


class TransposeOfSplat(RewritePattern):
    """`transpose(splat x) → splat x` and `transpose(constant splat) →
    constant splat` (of the transposed type)."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: TransposeOp, rewriter: PatternRewriter) -> None:
        t = _matrix(op.result.type)
        splat = op.input.owner
        if isinstance(splat, SplatOp):
            rewriter.replace(op, SplatOp(splat.input, t))
        elif isinstance(splat, ConstantOp) and is_splat_literal(splat.value):
            rewriter.replace(op, _splat_constant_op(splat.element(0, 0), t))


class ArithmeticOfSplats(RewritePattern):
    """`op(splat c1, splat c2, ...) → splat c` with `c` computed by the reference
    semantics: elementwise ops on 1x1 operands; products on a 1xK row and a
    Kx1 column (each element of a product of splats is the same K-term sum).
    Works for any shape, since nothing but the scalar is materialized. Of
    `matrix.constant` splats only, the result is a `matrix.constant` splat."""

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter, /) -> None:
        if not isinstance(op, FOLDABLE) or not _all_splats(op):
            return
        shapes = [(1, 1)] * len(op.operands)
        if isinstance(op, MatmulOp | MatmulAddOp):
            k = _matrix(op.operands[0].type).cols
            shapes[:2] = [(1, k), (k, 1)]
        args: list[sem.Array] = []
        for v, shape in zip(op.operands, shapes, strict=True):
            x = splat_scalar(v)
            assert x is not None
            element_type = _matrix(v.type).element_type
            args.append(sem.splat(x, shape, sem.element_dtype(element_type)))
        try:
            result = _evaluate(op, args)
        except sem.UndefinedBehaviorError:
            return
        assert result is not None
        t = _matrix(op.results[0].type)
        (value,) = sem.row_major_values(result)
        if all(isinstance(v.owner, ConstantOp) for v in op.operands):
            rewriter.replace(op, _splat_constant_op(value, t))
            return
        scalar = _scalar_constant_op(value, t.element_type)
        rewriter.replace(op, [scalar, SplatOp(scalar.result, t)])


class ExtractOfTranspose(RewritePattern):
    """`extract(transpose A, [i, j]) → extract(A, [j, i])`."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: ExtractOp, rewriter: PatternRewriter) -> None:
        if isinstance(t := op.matrix.owner, TransposeOp):
            i, j = op.indices()
            rewriter.replace(op, ExtractOp(t.input, [j, i]))


class ExtractOfInsertElsewhere(RewritePattern):
    """`extract(insert(e, m, [i', j']), [i, j]) → extract(m, [i, j])` when the
    static positions differ."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: ExtractOp, rewriter: PatternRewriter) -> None:
        inner = op.matrix.owner
        if not isinstance(inner, InsertOp):
            return
        if any(
            isinstance(a, int) and isinstance(b, int) and a != b
            for a, b in zip(op.indices(), inner.indices(), strict=True)
        ):
            rewriter.replace(op, ExtractOp(inner.matrix, op.indices()))


class ExtractOfConstant(RewritePattern):
    """`extract(constant, [i, j])` with static indices, or of a constant splat
    at any indices → `arith.constant`."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: ExtractOp, rewriter: PatternRewriter) -> None:
        inner = op.matrix.owner
        i, j = op.indices()
        if not isinstance(inner, ConstantOp):
            return
        if is_splat_literal(inner.value):
            i, j = 0, 0
        elif not (isinstance(i, int) and isinstance(j, int)):
            return
        t = _matrix(inner.result.type)
        value = inner.element(i, j)
        rewriter.replace(op, _scalar_constant_op(value, t.element_type))


class InsertOverwritten(RewritePattern):
    """`insert(e, insert(e', m, p), p) → insert(e, m, p)`: the inner write is dead."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: InsertOp, rewriter: PatternRewriter) -> None:
        inner = op.matrix.owner
        if isinstance(inner, InsertOp) and all(
            same_index(a, b) for a, b in zip(op.indices(), inner.indices(), strict=True)
        ):
            rewriter.replace(op, InsertOp(op.element, inner.matrix, op.indices()))


class InsertIntoConstant(RewritePattern):
    """`insert(c, constant-or-splat-of-constant, [i, j])` with a constant scalar
    and static indices → `matrix.constant` (small matrices only). Applied along
    a chain this turns a run of inserts into one constant."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: InsertOp, rewriter: PatternRewriter) -> None:
        i, j = op.indices()
        if not (isinstance(i, int) and isinstance(j, int)):
            return
        if (e := scalar_constant(op.element)) is None:
            return
        if (values := matrix_constant_values(op.matrix)) is None:
            return
        t = _matrix(op.result.type)
        new = list(values)
        new[i * t.cols + j] = e
        rewriter.replace(op, ConstantOp.from_values(new, t))


_FLOAT_PRECISION: dict[type[Attribute], int] = {
    Float16Type: 11,
    BFloat16Type: 8,
    Float32Type: 24,
    Float64Type: 53,
}
"""Significand bits (with the implicit bit) of each float element type."""


def _exactly_representable(
    source: Attribute, target: Attribute, unsigned: bool
) -> bool:
    """Does every value of `source` (read as signed/unsigned) convert exactly to `target`?"""
    if isinstance(source, IntegerType) and type(target) in _FLOAT_PRECISION:
        magnitude_bits = source.width.data - (0 if unsigned else 1)
        return magnitude_bits <= _FLOAT_PRECISION[type(target)]
    return widens_exactly(source, target)


class CastOfCast(RewritePattern):
    """`cast(cast(x : A → B) : B → C) → cast(x : A → C)` when A → B keeps every
    value exactly (float widening, integer widening, small integer → float) and
    B → C then sees the value A → C would see. For an integer widening the outer
    cast must read B with the inner signedness unless it only truncates; an
    integer → float → integer chain is left alone (the outer conversion may be
    out of range, undefined behaviour that the direct cast does not have)."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: CastOp, rewriter: PatternRewriter) -> None:
        inner = op.input.owner
        if not isinstance(inner, CastOp):
            return
        a = _matrix(inner.input.type).element_type
        b = _matrix(inner.result.type).element_type
        c = _matrix(op.result.type).element_type
        inner_unsigned = inner.unsigned is not None
        outer_unsigned = op.unsigned is not None
        if not _exactly_representable(a, b, inner_unsigned):
            return
        if isinstance(a, IntegerType):
            if isinstance(b, IntegerType):
                truncates = isinstance(c, IntegerType) and c.width.data <= b.width.data
                if inner_unsigned != outer_unsigned and not truncates:
                    return
            elif isinstance(c, IntegerType):
                return
            unsigned = inner_unsigned
        else:
            unsigned = outer_unsigned
        rewriter.replace(
            op, CastOp(inner.input, _matrix(op.result.type), unsigned=unsigned)
        )


def _widening(value: SSAValue) -> tuple[SSAValue, bool | None] | None:
    """(source, unsigned) if `value` is an exact widening `matrix.cast` of
    `source`; `unsigned` is None for floats, else whether the integer is
    zero-extended."""
    owner = value.owner
    if isinstance(owner, CastOp):
        source, target = (
            element_type_of(owner.input.type),
            element_type_of(owner.result.type),
        )
        if source == target or not widens_exactly(source, target):
            return None
        integer = isinstance(source, IntegerType)
        return owner.input, (owner.unsigned is not None) if integer else None
    return None


class ContractionOfWidenings(RewritePattern):
    """`matmul(cast(a), cast(b)) → matmul(a, b)` with narrower factors (and
    the same for one cast, for matmul_add and for matvec's matrix): a factor of the result type that is an exact
    widening cast becomes the cast's source. Integer widenings must all agree
    in signedness (with each other and with an integer factor the op already
    widens); the op takes `{unsigned}` from them. Mixed signedness or an
    inexact cast stays as it is."""

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter, /) -> None:
        if not isinstance(op, ContractionOp):
            return
        result = op.result_element
        widened = {
            i: w
            for i, v in enumerate(op.factors)
            if element_type_of(v.type) == result and (w := _widening(v)) is not None
        }
        if not widened:
            return
        signs = {unsigned for _, unsigned in widened.values() if unsigned is not None}
        if any(
            element_type_of(v.type) != result and isinstance(result, IntegerType)
            for v in op.factors
        ):
            signs.add(op.unsigned is not None)
        if len(signs) > 1:
            return
        operands = list(op.operands)
        for i, (source, _) in widened.items():
            operands[i] = source
        properties = dict(op.properties)
        properties.pop("unsigned", None)
        if True in signs:
            properties["unsigned"] = UnitAttr()
        rewriter.replace(
            op,
            type(op).create(
                operands=operands,
                result_types=[op.result.type],
                properties=properties,
                attributes=dict(op.attributes),
            ),
        )


class ConstantIndexToLiteral(RewritePattern):
    """An `index` operand defined by `arith.constant` becomes a literal, in
    indices, offsets and strides, only where the literal passes the verifier
    (a dynamic out-of-range index is undefined behaviour; a literal one is an
    error, so it stays dynamic)."""

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter, /) -> None:
        if isinstance(op, IndexedOp):
            mixed = op.indices()
        elif isinstance(op, MemoryAccessOp):
            mixed = [op.offset(), op.stride()]
        else:
            return
        folded = [_literal(v) for v in mixed]
        if folded == mixed:
            return
        match op:
            case ExtractOp():
                new: Operation = ExtractOp(op.matrix, folded)
            case InsertOp():
                new = InsertOp(op.element, op.matrix, folded)
            case LoadOp():
                new = type(op)(
                    op.memref, _matrix(op.result.type), *folded[:2], packed=op.is_packed
                )
            case StoreOp():
                new = type(op)(op.value, op.memref, *folded[:2], packed=op.is_packed)
            case _:
                return
        new.attributes.update(op.attributes)
        try:
            new.verify()
        except VerifyException:
            new.erase()  # it was never inserted: drop its uses of the operands
            return
        rewriter.replace(op, new)


def _literal(value: MixedIndex) -> MixedIndex:
    """The literal an `index` constant stands for, if it can be written as one."""
    if isinstance(value, SSAValue) and isinstance(value.type, IndexType):
        c = scalar_constant(value)
        if isinstance(c, int) and is_literal_index(c):
            return c
    return value


def _matrix(t: Attribute) -> MatrixType:
    assert isinstance(t, MatrixType)
    return t


def _splat_constant_op(value: int | float, t: MatrixType) -> ConstantOp:
    return ConstantOp(dense_matrix_value(t, [value]), t)


def _scalar_constant_op(
    value: int | float, element_type: Attribute
) -> arith.ConstantOp:
    if isinstance(element_type, IntegerType):
        return arith.ConstantOp(IntegerAttr(int(value), element_type))
    assert isinstance(element_type, AnyFloat)
    return arith.ConstantOp(FloatAttr(float(value), element_type))


_PATTERNS: dict[type[Operation], tuple[RewritePattern, ...]] = {
    **{t: (ArithmeticOfSplats(),) for t in FOLDABLE if t is not CastOp},
    TransposeOp: (TransposeOfSplat(),),
    ExtractOp: (
        ExtractOfTranspose(),
        ExtractOfInsertElsewhere(),
        ExtractOfConstant(),
        ConstantIndexToLiteral(),
    ),
    InsertOp: (InsertOverwritten(), InsertIntoConstant(), ConstantIndexToLiteral()),
    CastOp: (CastOfCast(), ArithmeticOfSplats()),
    MatmulOp: (ArithmeticOfSplats(), ContractionOfWidenings()),
    MatmulAddOp: (ArithmeticOfSplats(), ContractionOfWidenings()),
    MatvecOp: (ContractionOfWidenings(),),
}


def patterns_for(op_type: type[Operation]) -> tuple[RewritePattern, ...]:
    """The canonicalization patterns rooted at ops of `op_type`."""
    if issubclass(op_type, LoadOp | StoreOp):
        return (ConstantIndexToLiteral(),)
    return _PATTERNS.get(op_type, ())

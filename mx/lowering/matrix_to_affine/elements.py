"""Emission of element (r, c) of a lowered matrix value, and the loop nests.

A lowered matrix value is either
- `builtin.unrealized_conversion_cast %buf : memref<CxRxT> to !matrix...`: it
  has a buffer (layout in `buffers.py`), element (r, c) is `buf[c, r]`;
- the result of a fused op (`fusion.py`), still in the IR: its element is
  computed from the op's operands, recursively, where it is needed.
Indices are integer literals or `index` values; accesses use `affine.load`/
`affine.store` when every index is a literal or an `affine.for` induction
variable, `memref.load`/`memref.store` with `arith` address arithmetic otherwise.
"""

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import cast

from xdsl.builder import Builder
from xdsl.dialects import affine, arith, llvm, memref, vector
from xdsl.dialects.builtin import (
    AffineMapAttr,
    FloatAttr,
    IndexType,
    IntegerAttr,
    IntegerType,
    MemRefType,
    UnrealizedConversionCastOp,
    VectorType,
    f32,
)
from xdsl.ir import Attribute, Block, BlockArgument, Operation, Region, SSAValue
from xdsl.ir.affine import AffineExpr, AffineMap
from xdsl.rewriter import InsertPoint

from mx.dialects import arbfp
from mx.dialects.matrix import (
    AddOp,
    CastOp,
    ConstantOp,
    DivOp,
    FloatElement,
    FmaOp,
    LoadOp,
    MatrixType,
    MixedIndex,
    MulOp,
    NegOp,
    OuterProductOp,
    SplatOp,
    StoreOp,
    SubOp,
    TransposeOp,
    element_type_of,
    is_float_element,
)
from mx.lowering import build
from mx.lowering.bitwise import BitwiseEmitter, IntegerConstant
from mx.lowering.matrix_to_affine.block_scaled import scaled_element
from mx.lowering.matrix_to_affine.packed import load_packed, store_packed

Index = int | SSAValue


def buffer_of(value: SSAValue) -> SSAValue | None:
    """The buffer holding `value`, if it has one."""
    op = value.owner
    if isinstance(op, UnrealizedConversionCastOp) and isinstance(
        op.inputs[0].type, MemRefType
    ):
        return op.inputs[0]
    return None


def as_matrix(buffer: SSAValue, t: MatrixType) -> UnrealizedConversionCastOp:
    """The cast that stands for the matrix value held in `buffer`."""
    return build.cast(buffer, t)


def _is_affine_index(value: Index) -> bool:
    return isinstance(value, int) or (
        isinstance(value, BlockArgument)
        and isinstance(value.block.parent_op(), affine.ForOp)
    )


def _affine_access(
    indices: Sequence[Index], linear: Sequence[tuple[int, int]] | None = None
) -> tuple[AffineMapAttr, list[SSAValue]]:
    """The map and operands addressing `indices` (one result per index), or,
    with `linear`, the one result `sum(coefficient * index) + constant` where
    `linear` lists (coefficient, constant) per index."""
    operands: list[SSAValue] = []
    exprs: list[AffineExpr] = []
    for i in indices:
        if isinstance(i, int):
            exprs.append(AffineExpr.constant(i))
        else:
            exprs.append(AffineExpr.dimension(len(operands)))
            operands.append(i)
    if linear is not None:
        total = AffineExpr.constant(sum(k for _, k in linear))
        for expr, (coefficient, _) in zip(exprs, linear, strict=True):
            total = total + expr * coefficient
        exprs = [total]
    return AffineMapAttr(AffineMap(len(operands), 0, tuple(exprs))), operands


@dataclass
class FunctionConstants:
    """One integer `arith.constant` per value for a whole function, at the start of
    its entry block (where MLIR's folder materializes constants): the loop
    nests of a lowering use the same few indices in every body, and the
    decode kernels the same masks and shifts in every step (built in place,
    a kernel's constants were a fifth of its ops until CSE)."""

    entry: Block
    known: dict[IntegerConstant, SSAValue] = field(
        default_factory=dict[IntegerConstant, SSAValue]
    )
    last: Operation | None = None
    """The constant inserted last: the next goes after it."""

    def get(self, value: int) -> SSAValue:
        """The `index` constant `value`."""
        return self.of(build.index_attr(value))

    def of(self, value: IntegerConstant) -> SSAValue:
        """The integer constant `value`."""
        found = self.known.get(value)
        if found is not None and cast(Operation, found.owner).parent is self.entry:
            return found
        op = build.constant(value)
        if self.last is not None and self.last.parent is self.entry:
            self.entry.insert_op_after(op, self.last)
        elif self.entry.first_op is not None:
            self.entry.insert_op_before(op, self.entry.first_op)
        else:
            self.entry.add_op(op)
        self.last = op
        self.known[value] = op.result
        return op.result


@dataclass
class Emitter:
    """Builds ops at one insertion point."""

    builder: Builder
    fused: set[Operation]
    constants: FunctionConstants | None = None
    """The constants of the function the ops go into (None: each constant
    is built where it is used)."""

    @staticmethod
    def before(
        op: Operation, fused: set[Operation], constants: FunctionConstants | None = None
    ) -> "Emitter":
        return Emitter(Builder(InsertPoint.before(op)), fused, constants)

    def at_end(self, block: Block) -> "Emitter":
        return Emitter(Builder(InsertPoint.at_end(block)), self.fused, self.constants)

    def emit(self, op: Operation) -> SSAValue:
        """Insert `op`; its (first) result."""
        self.builder.insert(op)
        return op.results[0]

    def insert_collected(self, collected: BitwiseEmitter, value: SSAValue) -> SSAValue:
        """Insert the ops `collected` has built so far, in order; `value`."""
        for op in collected.ops:
            self.builder.insert(op)
        collected.ops.clear()
        return value

    def index(self, value: Index) -> SSAValue:
        if isinstance(value, SSAValue):
            return value
        if self.constants is not None:
            return self.constants.get(value)
        return self.emit(build.index_constant(value))

    def constant(self, value: IntegerConstant) -> SSAValue:
        """An integer `arith.constant` of `value`: the function's, if it has
        one place for its constants."""
        if self.constants is not None:
            return self.constants.of(value)
        return self.emit(build.constant(value))

    # -- buffers -------------------------------------------------------------

    def load_buffer(self, buffer: SSAValue, r: Index, c: Index) -> SSAValue:
        if _is_affine_index(r) and _is_affine_index(c):
            access, operands = _affine_access([c, r])
            return self.emit(build.affine_load(buffer, operands, access))
        return self.emit(memref.LoadOp.get(buffer, [self.index(c), self.index(r)]))

    def store_buffer(self, value: SSAValue, buffer: SSAValue, r: Index, c: Index):
        if _is_affine_index(r) and _is_affine_index(c):
            access, operands = _affine_access([c, r])
            self.builder.insert(build.affine_store(value, buffer, operands, access))
        else:
            self.builder.insert(
                memref.StoreOp.get(value, buffer, [self.index(c), self.index(r)])
            )

    # -- user memory (matrix loads and stores) ---------------------------------

    def position(self, op: LoadOp | StoreOp, r: Index, c: Index) -> Index:
        """`off + c*stride + r` (column-major) or `off + r*stride + c`."""
        offset, stride = op.offset(), op.stride()
        major, minor = (c, r) if op.COLUMN_MAJOR else (r, c)
        scaled = self._mul(major, stride)
        return self._add(self._add(offset, scaled), minor)

    def _mul(self, a: MixedIndex, b: MixedIndex) -> Index:
        if isinstance(a, int) and isinstance(b, int):
            return a * b
        return self.emit(build.binary(arith.MuliOp, self.index(a), self.index(b)))

    def _add(self, a: MixedIndex, b: MixedIndex) -> Index:
        if isinstance(a, int) and isinstance(b, int):
            return a + b
        if a == 0:
            return b
        if b == 0:
            return a
        return self.emit(build.binary(arith.AddiOp, self.index(a), self.index(b)))

    def _memory_access(
        self, op: LoadOp | StoreOp, r: Index, c: Index
    ) -> tuple[AffineMapAttr, list[SSAValue]] | SSAValue:
        offset, stride = op.offset(), op.stride()
        if (
            isinstance(offset, int)
            and isinstance(stride, int)
            and _is_affine_index(r)
            and _is_affine_index(c)
        ):
            major, minor = (c, r) if op.COLUMN_MAJOR else (r, c)
            return _affine_access([major, minor], [(stride, offset), (1, 0)])
        return self.index(self.position(op, r, c))

    def load_memory(self, op: LoadOp, r: Index, c: Index) -> SSAValue:
        if op.is_packed:
            return load_packed(self, op, r, c)
        access = self._memory_access(op, r, c)
        if isinstance(access, SSAValue):
            return self.emit(memref.LoadOp.get(op.memref, [access]))
        return self.emit(build.affine_load(op.memref, access[1], access[0]))

    def store_memory(self, value: SSAValue, op: StoreOp, r: Index, c: Index):
        if op.is_packed:
            store_packed(self, value, op, r, c)
            return
        access = self._memory_access(op, r, c)
        if isinstance(access, SSAValue):
            self.builder.insert(memref.StoreOp.get(value, op.memref, [access]))
        else:
            self.builder.insert(
                build.affine_store(value, op.memref, access[1], access[0])
            )

    # -- elements --------------------------------------------------------------

    def element(self, value: SSAValue, r: Index, c: Index) -> SSAValue:
        """Element (r, c) of the lowered matrix `value`: a load from its
        buffer, or the fused ops computing it, operands first (with an
        explicit stack: a fused chain may be thousands of ops long)."""
        computed: list[SSAValue] = []
        stack: list[tuple[SSAValue, Index, Index, bool]] = [(value, r, c, False)]
        while stack:
            v, i, j, ready = stack.pop()
            if (buffer := buffer_of(v)) is not None:
                computed.append(self.load_buffer(buffer, i, j))
                continue
            op = v.owner
            assert isinstance(op, Operation) and op in self.fused, (
                f"matrix value of '{getattr(op, 'name', op)}' was not lowered"
            )
            needs = element_operands(op, i, j)
            if ready:
                first = len(computed) - len(needs)
                operands = computed[first:]
                del computed[first:]
                computed.append(self.compute_element(op, i, j, operands))
            else:
                stack.append((v, i, j, True))
                stack += [(*n, False) for n in reversed(needs)]
        (result,) = computed
        return result

    def compute_element(
        self, op: Operation, r: Index, c: Index, operands: Sequence[SSAValue] = ()
    ) -> SSAValue:
        """Element (r, c) of the fused `op`, given the elements its
        `element_operands` name."""
        if isinstance(op, SplatOp):
            return op.input
        if isinstance(op, ConstantOp):
            t = op.result.type
            assert isinstance(t, MatrixType)
            return self.scalar_constant(op.element(0, 0), t.element_type)
        if isinstance(op, TransposeOp):
            return operands[0]
        if isinstance(op, arith.SelectOp):
            return self.emit(arith.SelectOp(op.cond, *operands))
        if isinstance(op, LoadOp):
            return self.load_memory(op, r, c)
        if isinstance(op, arbfp.ScaledConvertFromOp):
            return scaled_element(self, op, r, c)
        if isinstance(op, OuterProductOp):
            u = self.emit(vector.ExtractOp(op.lhs, [r], _scalar_type(op)))
            v = self.emit(vector.ExtractOp(op.rhs, [c], _scalar_type(op)))
            return self.emit(multiply(u, v, op.fastmath_flags()))
        t = op.results[0].type
        assert isinstance(t, MatrixType)
        if isinstance(op, CastOp):
            source = op.input.type
            assert isinstance(source, MatrixType)
            return self.convert(
                operands[0],
                source.element_type,
                t.element_type,
                unsigned=op.unsigned is not None,
            )
        if isinstance(op, arbfp.ConvertFromOp | arbfp.ConvertToOp):
            return self.emit(conversion(op, operands[0], t.element_type))
        assert isinstance(op, AddOp | SubOp | MulOp | DivOp | NegOp | FmaOp)
        return self.emit(elementwise_scalar(op, operands, t.element_type))

    def scalar_constant(self, value: int | float, t: Attribute) -> SSAValue:
        if isinstance(t, IntegerType):
            return self.emit(arith.ConstantOp(IntegerAttr(int(value), t)))
        assert isinstance(t, FloatElement)
        return self.emit(arith.ConstantOp(FloatAttr(float(value), t)))

    def convert(
        self, x: SSAValue, source: Attribute, target: Attribute, unsigned: bool
    ) -> SSAValue:
        """C conversion of the scalar `x` from `source` to `target`."""
        if source == target:
            return x
        if is_float_element(source) and is_float_element(target):
            s, t = source.bitwidth, target.bitwidth  # pyright: ignore
            if s == t:  # f16 <-> bf16: exactly to f32, then one rounding
                return self.emit(
                    arith.TruncFOp(self.emit(arith.ExtFOp(x, f32)), target)
                )
            if s < t:
                return self.emit(arith.ExtFOp(x, target))
            return self.emit(arith.TruncFOp(x, target))
        if isinstance(source, IntegerType) and isinstance(target, IntegerType):
            if source.width.data > target.width.data:
                return self.emit(arith.TruncIOp(x, target))
            widen = arith.ExtUIOp if unsigned else arith.ExtSIOp
            return self.emit(widen(x, target))
        if isinstance(source, IntegerType):
            to_float = arith.UIToFPOp if unsigned else arith.SIToFPOp
            return self.emit(to_float(x, target))  # pyright: ignore[reportArgumentType]
        assert isinstance(target, IntegerType)
        to_int = arith.FPToUIOp if unsigned else arith.FPToSIOp
        return self.emit(to_int(x, target))

    def materialize_into(self, value: SSAValue, buffer: SSAValue) -> None:
        """Write every element of `value` into `buffer`."""
        t = value.type
        assert isinstance(t, MatrixType)

        def body(e: Emitter, r: SSAValue, c: SSAValue) -> None:
            e.store_buffer(e.element(value, r, c), buffer, r, c)

        self.for_each_element(t, body)

    # -- loops -----------------------------------------------------------------

    def loop(
        self,
        lower: int,
        upper: int,
        inits: Sequence[SSAValue],
        body: Callable[["Emitter", SSAValue, Sequence[SSAValue]], Sequence[SSAValue]],
    ) -> Sequence[SSAValue]:
        """`affine.for %i = lower to upper iter_args(inits)`; `body` returns the
        values to yield."""
        block = Block(arg_types=[IndexType(), *(v.type for v in inits)])
        op = build.affine_for(lower, upper, inits, Region(block))
        # The body is built inside the loop so that the induction variable is
        # recognized as an affine index.
        yielded = body(self.at_end(block), block.args[0], block.args[1:])
        block.add_op(affine.YieldOp.get(*yielded))
        self.builder.insert(op)
        return op.results

    def for_each_element(
        self, t: MatrixType, body: Callable[["Emitter", SSAValue, SSAValue], None]
    ) -> None:
        """Loops over columns, then rows (the contiguous dimension innermost)."""

        def column(e: Emitter, c: SSAValue, _: Sequence[SSAValue]) -> list[SSAValue]:
            def row(f: Emitter, r: SSAValue, _: Sequence[SSAValue]) -> list[SSAValue]:
                body(f, r, c)
                return []

            e.loop(0, t.rows, [], row)
            return []

        self.loop(0, t.cols, [], column)


def element_operands(
    op: Operation, r: Index, c: Index
) -> list[tuple[SSAValue, Index, Index]]:
    """The elements of its matrix operands that element (r, c) of the fused
    `op` is computed from."""
    if isinstance(
        op, SplatOp | ConstantOp | LoadOp | OuterProductOp | arbfp.ScaledConvertFromOp
    ):
        return []  # (scaled_convert_from reads its scale at (r, c // N) itself)
    if isinstance(op, TransposeOp):
        return [(op.input, c, r)]
    return [(x, r, c) for x in op.operands if isinstance(x.type, MatrixType)]


def conversion(
    op: arbfp.ConvertFromOp | arbfp.ConvertToOp, source: SSAValue, result: Attribute
) -> Operation:
    """The arbfp conversion `op` (same format and options) of a scalar or
    vector `source` to `result`."""
    return type(op).create(
        operands=[source],
        result_types=[result],
        properties=dict(op.properties),
        attributes=dict(op.attributes),
    )


def _scalar_type(op: OuterProductOp) -> Attribute:
    t = op.result.type
    assert isinstance(t, MatrixType)
    return t.element_type


def _flags_or_none(flags: arith.FastMathFlagsAttr) -> arith.FastMathFlagsAttr | None:
    """None for no flags, so that printed ops do not spell out `<none>`."""
    return None if flags == arith.FastMathFlagsAttr("none") else flags


def _is_integer(value: SSAValue) -> bool:
    """True for an integer or a vector of integers."""
    t = value.type
    if isinstance(t, VectorType):
        t = cast(VectorType[Attribute], t).element_type
    return isinstance(t, IntegerType)


def multiply(a: SSAValue, b: SSAValue, flags: arith.FastMathFlagsAttr) -> Operation:
    if _is_integer(a):
        return build.binary(arith.MuliOp, a, b)
    return build.binary(arith.MulfOp, a, b, _flags_or_none(flags))


def add(a: SSAValue, b: SSAValue, flags: arith.FastMathFlagsAttr) -> Operation:
    if _is_integer(a):
        return build.binary(arith.AddiOp, a, b)
    return build.binary(arith.AddfOp, a, b, _flags_or_none(flags))


def widen(e: Emitter, x: SSAValue, target: Attribute, unsigned: bool) -> SSAValue:
    """The scalar or vector `x` widened exactly to element type `target`
    (a factor of a mixed-precision contraction): `arith.extf`, or a sign/zero
    extension (`llvm.sext`/`llvm.zext` on vectors, which xDSL's `arith`
    extensions do not take)."""
    t = x.type
    source = element_type_of(t)
    if source == target:
        return x
    wide = VectorType(target, t.get_shape()) if isinstance(t, VectorType) else target
    if not isinstance(source, IntegerType):
        return e.emit(arith.ExtFOp(x, wide))
    if isinstance(t, VectorType):
        return e.emit((llvm.ZExtOp if unsigned else llvm.SExtOp)(x, wide))
    assert isinstance(target, IntegerType)
    return e.emit((arith.ExtUIOp if unsigned else arith.ExtSIOp)(x, target))


def narrow(e: Emitter, x: SSAValue, target: Attribute) -> SSAValue:
    """The float scalar or vector `x` rounded to element type `target`."""
    t = x.type
    if element_type_of(t) == target:
        return x
    narrow_type = (
        VectorType(target, t.get_shape()) if isinstance(t, VectorType) else target
    )
    return e.emit(arith.TruncFOp(x, narrow_type))


def elementwise_scalar(
    op: AddOp | SubOp | MulOp | DivOp | NegOp | FmaOp,
    operands: Sequence[SSAValue],
    element_type: Attribute,
) -> Operation:
    """The scalar op computing one element of an elementwise matrix op.

    f16/bf16 stay in their type: `convert-to-llvm` rounds each op to it.
    """
    flags = _flags_or_none(op.fastmath)
    if isinstance(op, NegOp):
        return build.negf(operands[0], flags)
    if isinstance(op, FmaOp):
        a, b, c = operands
        return build.fma(a, b, c, flags)
    a, b = operands
    if isinstance(element_type, IntegerType):
        if isinstance(op, DivOp):
            return build.binary(arith.DivUIOp if op.unsigned else arith.DivSIOp, a, b)
        integer = {AddOp: arith.AddiOp, SubOp: arith.SubiOp, MulOp: arith.MuliOp}
        return build.binary(integer[type(op)], a, b)
    floating = {
        AddOp: arith.AddfOp,
        SubOp: arith.SubfOp,
        MulOp: arith.MulfOp,
        DivOp: arith.DivfOp,
    }
    return build.binary(floating[type(op)], a, b, flags)

"""Dot products in docs/matrix-dialect.md's rounding order (matmul, matmul_add, matvec).

`acc = a(0)*b(0); for k in 1..K-1: acc = acc + a(k)*b(k)`, then `acc + c` for
an accumulator operand. Without `contract` every product and sum is a separate
`arith.mulf`/`arith.addf` carrying the op's flags (so no `contract` flag); with
`contract` each `acc + a(k)*b(k)` is one `math.fma`; with `reassoc` an
accumulator operand starts the sum instead of ending it. f16/bf16 products
with `contract` sum in f32 (`accumulation_type`): every product of two f16
or bf16 values is exact in f32, each step rounds to f32, and the result is
rounded once to f16/bf16.

`dot` emits one element's sum (the scalar loop nests); `blocked_product` the
register-blocked vector kernel, whose lanes are rows of a column of the result,
so the same sums are computed side by side in the same order.
"""

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from xdsl.dialects.arith import FastMathFlagsAttr
from xdsl.dialects.builtin import (
    BFloat16Type,
    Float16Type,
    IntegerType,
    VectorType,
    f32,
)
from xdsl.dialects.utils import FastMathFlag
from xdsl.ir import Attribute, SSAValue

from mx.lowering import build
from mx.lowering.matrix_to_affine.elements import Emitter, Index, add, multiply
from mx.lowering.matrix_to_affine.target_cpu import target_cpu
from mx.lowering.matrix_to_affine.vectors import for_each_segment, offset

Factor = Callable[[Emitter, Index], SSAValue]
"""Emits one factor of product k."""


def _has(flags: FastMathFlagsAttr, flag: FastMathFlag) -> bool:
    return flag in flags.data


def accumulation_type(element: Attribute, flags: FastMathFlagsAttr) -> Attribute:
    """The type a product of `element` results sums in: f32 for f16/bf16
    under `contract` (the op's products and partial sums may stay unrounded
    until its result, so they are kept in f32 FMAs and rounded once), else
    `element` itself."""
    if isinstance(element, Float16Type | BFloat16Type) and _has(
        flags, FastMathFlag.ALLOW_CONTRACT
    ):
        return f32
    return element


def _fma_flags(flags: FastMathFlagsAttr) -> FastMathFlagsAttr | None:
    return None if flags == FastMathFlagsAttr("none") else flags


def dot(
    e: Emitter,
    lhs: Factor,
    rhs: Factor,
    length: int,
    flags: FastMathFlagsAttr,
    accumulator: Callable[[Emitter], SSAValue] | None = None,
) -> SSAValue:
    """sum over k < length of lhs(k)*rhs(k) (+ accumulator), rounded as docs/matrix-dialect.md."""
    integer = False

    def term(f: Emitter, a: SSAValue, b: SSAValue, acc: SSAValue) -> SSAValue:
        if not integer and _has(flags, FastMathFlag.ALLOW_CONTRACT):
            return f.emit(build.fma(a, b, acc, _fma_flags(flags)))
        return f.emit(add(acc, f.emit(multiply(a, b, flags)), flags))

    def loop(start: int, init: SSAValue) -> SSAValue:
        if start == length:
            return init

        def body(f: Emitter, k: SSAValue, acc: Sequence[SSAValue]) -> list[SSAValue]:
            return [term(f, lhs(f, k), rhs(f, k), acc[0])]

        return e.loop(start, length, [init], body)[0]

    a0, b0 = lhs(e, 0), rhs(e, 0)
    integer = isinstance(a0.type, IntegerType)
    if accumulator is not None and _has(flags, FastMathFlag.REASSOC):
        return loop(1, term(e, a0, b0, accumulator(e)))
    acc = loop(1, e.emit(multiply(a0, b0, flags)))
    if accumulator is None:
        return acc
    return e.emit(add(acc, accumulator(e), flags))


BlockReader = Callable[[Emitter, Index, Index, int], SSAValue]
"""Emits the vector of `width` elements starting at (row, column)."""


def accumulator_registers() -> int:
    """Machine vectors of accumulators one register block keeps live: 3/4 of
    the target's vector registers (24 of AVX-512's 32, 12 of AVX2's 16),
    leaving room for the column of A and the broadcasts of B. 24 on an AVX2
    host spilled: on a Zen 1, f32 32 x 32 `matmul_add` took 5.4 against
    4.1 us, f64 13.8 against 9.5 us."""
    return target_cpu().vector_registers * 3 // 4


@dataclass(frozen=True)
class Product:
    """D = A·B (+ Acc) of an R x K by a K x C matrix, as the blocked kernel
    reads and writes it."""

    rows: int
    cols: int
    depth: int
    lhs: BlockReader
    """Rows r..r+w-1 of column k of A."""
    rhs: Callable[[Emitter, Index, Index], SSAValue]
    """Element (k, c) of B."""
    accumulator: BlockReader | None
    store: Callable[[Emitter, SSAValue, Index, Index], None]
    """Writes the block of D starting at (r, c)."""
    element_type: Attribute
    flags: FastMathFlagsAttr
    lanes: int
    """Elements of one machine vector."""
    parallel: bool = False
    """The blocks of rows run on threads (`outline-parallel-loops`)."""


def _column_block(cols: int, limit: int) -> int:
    """Columns per register block: the largest divisor of `cols` within
    `limit` unless that is under half of it (then `limit`, with a tail)."""
    limit = max(1, min(cols, limit))
    divisor = max(d for d in range(1, limit + 1) if cols % d == 0)
    return divisor if 2 * divisor >= limit else limit


def blocked_product(e: Emitter, p: Product) -> None:
    """D = A·B (+ Acc), register-blocked: for each block of rows (one vector
    of a column of A) and each block of columns,
    the accumulators of all their elements are vectors carried through one
    loop over k, so each element is still summed in docs/matrix-dialect.md's order (k = 0,
    1, .., K-1, then + Acc) while the lanes compute rows side by side."""
    contract = _has(p.flags, FastMathFlag.ALLOW_CONTRACT)
    reassoc = _has(p.flags, FastMathFlag.REASSOC)
    accumulators = accumulator_registers()

    def term(f: Emitter, a: SSAValue, b: SSAValue, acc: SSAValue) -> SSAValue:
        if contract and not isinstance(p.element_type, IntegerType):
            return f.emit(build.fma(a, b, acc, _fma_flags(p.flags)))
        return f.emit(add(acc, f.emit(multiply(a, b, p.flags)), p.flags))

    def register_block(f: Emitter, r: Index, c0: Index, width: int, n: int) -> None:
        vt = VectorType(p.element_type, [width])
        columns = [offset(f, c0, j) for j in range(n)]

        def broadcasts(g: Emitter, k: Index) -> list[SSAValue]:
            return [g.emit(build.broadcast(p.rhs(g, k, c), vt)) for c in columns]

        a0 = p.lhs(f, r, 0, width)
        if p.accumulator is not None and reassoc:
            accs = [
                term(f, a0, b, p.accumulator(f, r, c, width))
                for b, c in zip(broadcasts(f, 0), columns, strict=True)
            ]
        else:
            accs = [f.emit(multiply(a0, b, p.flags)) for b in broadcasts(f, 0)]

        def step(
            g: Emitter, k: SSAValue, carried: Sequence[SSAValue]
        ) -> list[SSAValue]:
            a = p.lhs(g, r, k, width)
            return [
                term(g, a, b, acc)
                for b, acc in zip(broadcasts(g, k), carried, strict=True)
            ]

        if p.depth > 1:
            accs = list(f.loop(1, p.depth, accs, step))
        for acc, c in zip(accs, columns, strict=True):
            if p.accumulator is not None and not reassoc:
                acc = f.emit(add(acc, p.accumulator(f, r, c, width), p.flags))
            p.store(f, acc, r, c)

    def rows(f: Emitter, r: Index, width: int) -> None:
        registers = -(-width // p.lanes)
        n = _column_block(p.cols, accumulators // registers)
        for_each_segment(
            f, p.cols, n, lambda g, c0, m: register_block(g, r, c0, width, m)
        )

    # One machine vector of a column per block, so that each broadcast of B
    # feeds one multiply (LLVM folds it into the multiply's memory operand:
    # on AVX-512 a separate broadcast competes with the arithmetic); more for
    # few columns, since each accumulator is a chain of dependent adds (a
    # matvec needs several).
    vectors = 1
    while (
        vectors < 8
        and 2 * vectors * _column_block(p.cols, accumulators) <= accumulators
    ):
        vectors *= 2
    for_each_segment(e, p.rows, vectors * p.lanes, rows, p.parallel)

"""Dot products in matrix.md's rounding order (matmul, matmul_add, matvec).

`acc = a(0)*b(0); for k in 1..K-1: acc = acc + a(k)*b(k)`, then `acc + c` for
an accumulator operand. Without `contract` every product and sum is a separate
`arith.mulf`/`arith.addf` carrying the op's flags (so no `contract` flag); with
`contract` each `acc + a(k)*b(k)` is one `math.fma`; with `reassoc` an
accumulator operand starts the sum instead of ending it.
"""

from collections.abc import Callable, Sequence

from xdsl.dialects import math
from xdsl.dialects.arith import FastMathFlagsAttr
from xdsl.dialects.builtin import IntegerType
from xdsl.dialects.utils import FastMathFlag
from xdsl.ir import SSAValue

from mx.lowering.matrix_to_affine.elements import Emitter, Index, add, multiply

Factor = Callable[[Emitter, Index], SSAValue]
"""Emits one factor of product k."""


def _has(flags: FastMathFlagsAttr, flag: FastMathFlag) -> bool:
    return flag in flags.data


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
    """sum over k < length of lhs(k)*rhs(k) (+ accumulator), rounded as matrix.md."""
    integer = False

    def term(f: Emitter, a: SSAValue, b: SSAValue, acc: SSAValue) -> SSAValue:
        if not integer and _has(flags, FastMathFlag.ALLOW_CONTRACT):
            return f.emit(math.FmaOp(a, b, acc, _fma_flags(flags)))
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

"""Branch-free `arith` building blocks that work on scalars and vectors alike.

Conditions are *masks*: an integer of the operands' own width, all ones for
true and zero for false, computed with subtractions and arithmetic shifts
rather than `arith.cmpi` (whose result xDSL 0.75 types as a scalar `i1`, so a
vector comparison cannot be built). Choosing between two values is then
`b ^ ((a ^ b) & mask)`. LLVM recognizes `ashr (sub nsw a, b), w-1` as
`sext (icmp slt a, b)`, so the scalar code still becomes compares and selects
(or conditional moves) and the vector code vector compares and blends.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable
from typing import Any, TypeAlias, cast

from xdsl.dialects import arith, llvm, vector
from xdsl.dialects.builtin import (
    DenseIntOrFPElementsAttr,
    IntegerAttr,
    IntegerType,
    VectorType,
)
from xdsl.ir import Attribute, Operation, SSAValue

from mx.compile_memos import compile_memo

IntegerConstant: TypeAlias = IntegerAttr | DenseIntOrFPElementsAttr
"""The value of an integer `arith.constant`, a scalar or a dense vector (of
integers: float attributes would take 0.0 and -0.0 for one key where
constants are shared)."""

_NSW = arith.IntegerOverflowAttr([arith.IntegerOverflowFlag.NSW])


def integer_width(value: SSAValue) -> int:
    """Width of the integer (or integer vector) `value`."""
    type_ = value.type
    element = type_.element_type if isinstance(type_, VectorType) else type_
    assert isinstance(element, IntegerType)
    return element.width.data


@compile_memo
def _splat(value: int, width: int, shape: tuple[int, ...]) -> IntegerConstant:
    """The dense integer `value` of `shape` (built once: a dense attribute
    takes ~0.1 ms to build, and a decode kernel asks for thousands)."""
    vector = VectorType(IntegerType(width), shape)
    return DenseIntOrFPElementsAttr.from_list(vector, [value])


class BitwiseEmitter:
    """Collects arith ops built on values of one shape (a scalar, or a vector
    of the shape of `like`), in order; `ops` is what to insert. With
    `constant`, constants are taken from it (a function's constants, built
    once at its entry) instead of being built among `ops`."""

    def __init__(
        self,
        like: Attribute,
        constant: Callable[[IntegerConstant], SSAValue] | None = None,
    ):
        self.shape = like.get_shape() if isinstance(like, VectorType) else None
        self.ops: list[Operation] = []
        self._constant = constant
        self._constants: dict[tuple[int, int], SSAValue] = {}

    def type(self, element: Attribute) -> Any:
        """`element`, or a vector of it in this emitter's shape."""
        return element if self.shape is None else VectorType(element, self.shape)

    def add(self, op: Operation) -> SSAValue:
        self.ops.append(op)
        return op.results[0]

    def const(self, value: int, width: int) -> SSAValue:
        """An integer constant (splatted for vectors); `value` may be negative.
        Each constant is built once: `ops` is straight-line code, so the first
        one dominates every later use."""
        value = (value + (1 << (width - 1))) % (1 << width) - (1 << (width - 1))
        if (value, width) in self._constants:
            return self._constants[value, width]
        if self.shape is None:
            attr: IntegerConstant = IntegerAttr(value, IntegerType(width))
        else:
            attr = _splat(value, width, tuple(self.shape))
        if self._constant is None:
            result = self.add(arith.ConstantOp(attr))
        else:
            result = self._constant(attr)
        self._constants[value, width] = result
        return result

    def bitcast(self, value: SSAValue, element: Attribute) -> SSAValue:
        return self.add(arith.BitcastOp(value, self.type(element)))

    def ext_unsigned(self, value: SSAValue, width: int) -> SSAValue:
        """Zero extension to `width` bits (`value` itself if it has them)."""
        if integer_width(value) == width:
            return value
        return self._cast(arith.ExtUIOp, value, width)

    def resize_unsigned(self, value: SSAValue, width: int) -> SSAValue:
        """`value` zero-extended or truncated to `width` bits (for a value
        whose set bits fit in `width`, e.g. an encoding in a wider lane)."""
        if integer_width(value) > width:
            return self.trunc(value, width)
        return self.ext_unsigned(value, width)

    def trunc(self, value: SSAValue, width: int) -> SSAValue:
        """Truncation to the low `width` bits."""
        return self._cast(arith.TruncIOp, value, width)

    def _cast(
        self, cls: type[arith.ExtUIOp | arith.TruncIOp], value: SSAValue, width: int
    ) -> SSAValue:
        element = IntegerType(width)
        if self.shape is None:
            return self.add(cls(value, element))
        if len(self.shape) == 1:
            # xDSL 0.75's extui/trunci take scalars only: LLVM's own cast,
            # one instruction for the vector. (Lane by lane, LLVM 22's SLP
            # vectorizer aborted on a 1-lane chain beside a 2-lane one.)
            llvm_cast = llvm.ZExtOp if cls is arith.ExtUIOp else llvm.TruncOp
            return self.add(llvm_cast(value, self.type(element)))
        # n-D vectors (which only the interpreter runs): lane by lane.
        result = self.const(0, width)
        source = cast(VectorType, value.type).element_type
        for position in itertools.product(*(range(n) for n in self.shape)):
            lane = self.add(vector.ExtractOp(value, list(position), source))
            wide = self.add(cls(lane, element))
            result = self.add(vector.InsertOp(wide, result, list(position)))
        return result

    def _operand(self, x: SSAValue | int, like: SSAValue) -> SSAValue:
        return self.const(x, integer_width(like)) if isinstance(x, int) else x

    def binary(
        self,
        cls: type[arith.SignlessIntegerBinaryOperation],
        a: SSAValue,
        b: SSAValue | int,
    ) -> SSAValue:
        """`cls(a, b)`; an int `b` becomes a constant of `a`'s type."""
        return self.add(cls(a, self._operand(b, a)))

    def and_(self, a: SSAValue, b: SSAValue | int) -> SSAValue:
        return self.binary(arith.AndIOp, a, b)

    def or_(self, a: SSAValue, b: SSAValue | int) -> SSAValue:
        return self.binary(arith.OrIOp, a, b)

    def xor(self, a: SSAValue, b: SSAValue | int) -> SSAValue:
        return self.binary(arith.XOrIOp, a, b)

    def shl(self, a: SSAValue, b: SSAValue | int) -> SSAValue:
        return self.binary(arith.ShLIOp, a, b)

    def shr(self, a: SSAValue, b: SSAValue | int) -> SSAValue:
        """Logical (unsigned) shift right."""
        return self.binary(arith.ShRUIOp, a, b)

    def addi(self, a: SSAValue, b: SSAValue | int) -> SSAValue:
        return self.binary(arith.AddiOp, a, b)

    def subi(self, a: SSAValue | int, b: SSAValue | int) -> SSAValue:
        if isinstance(a, int):
            a = self._operand(a, cast(SSAValue, b))
        return self.binary(arith.SubiOp, a, b)

    def max(self, a: SSAValue, b: SSAValue | int) -> SSAValue:
        """Signed maximum."""
        return self.binary(arith.MaxSIOp, a, b)

    def min(self, a: SSAValue, b: SSAValue | int) -> SSAValue:
        """Signed minimum."""
        return self.binary(arith.MinSIOp, a, b)

    # Masks.

    def sign_mask(self, x: SSAValue) -> SSAValue:
        """All ones where `x` is negative (as a signed integer)."""
        return self.binary(arith.ShRSIOp, x, integer_width(x) - 1)

    def less(self, a: SSAValue | int, b: SSAValue | int) -> SSAValue:
        """Mask of `a < b` (signed), for operands whose difference `a - b`
        cannot overflow (e.g. both non-negative): the subtraction carries
        `nsw`, which lets LLVM turn the mask back into a compare."""
        if isinstance(a, int):
            a = self._operand(a, cast(SSAValue, b))
        difference = self.add(arith.SubiOp(a, self._operand(b, a), overflow=_NSW))
        return self.sign_mask(difference)

    def nonzero(self, x: SSAValue) -> SSAValue:
        """Mask of `x != 0`: `x | -x` has its sign bit set exactly then."""
        return self.sign_mask(self.or_(x, self.subi(0, x)))

    def is_zero(self, x: SSAValue) -> SSAValue:
        return self.not_(self.nonzero(x))

    def equal(self, a: SSAValue, b: SSAValue | int) -> SSAValue:
        return self.is_zero(self.xor(a, b))

    def not_(self, mask: SSAValue) -> SSAValue:
        return self.xor(mask, -1)

    def select(self, mask: SSAValue, a: SSAValue | int, b: SSAValue | int) -> SSAValue:
        """`a` where `mask` is all ones, `b` where it is zero."""
        a, b = self._operand(a, mask), self._operand(b, mask)
        return self.xor(b, self.and_(self.xor(a, b), mask))

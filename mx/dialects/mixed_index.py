"""Indices, offsets and strides that are each an integer literal or an `index`
SSA value (`matrix.extract %m[%i, 0]`, `%mem[16] stride %s`), held as MLIR
holds them: a `static_*` i64 array with `DYNAMIC` where an operand stands, and
the list of those operands."""

from collections.abc import Sequence

from xdsl.dialects.builtin import DYNAMIC_INDEX, I64, DenseArrayBase, i64
from xdsl.ir import SSAValue
from xdsl.utils.exceptions import VerifyException

DYNAMIC = DYNAMIC_INDEX
"""Sentinel in a `static_*` array for a position given by an `index` operand."""

MixedIndex = int | SSAValue
"""An index, offset or stride: an integer literal or an `index` SSA value."""


def is_literal_index(value: int) -> bool:
    """Whether `value` can be a static index, offset or stride: an i64 other
    than `DYNAMIC` (i64's least value)."""
    return DYNAMIC < value < 2**63


def join_mixed(
    static: DenseArrayBase[I64], dynamic: Sequence[SSAValue]
) -> list[MixedIndex]:
    """Merge a `static_*` array and its dynamic operands back into one list."""
    operands = iter(dynamic)
    return [next(operands) if s == DYNAMIC else s for s in static.get_values()]


def build_mixed(
    values: Sequence[MixedIndex],
) -> tuple[DenseArrayBase[I64], list[SSAValue]]:
    """The `static_*` array and the dynamic operands of `values`."""
    static = [DYNAMIC if isinstance(v, SSAValue) else v for v in values]
    dynamic = [v for v in values if isinstance(v, SSAValue)]
    return DenseArrayBase.from_list(i64, static), dynamic


def verify_mixed(
    static: DenseArrayBase[I64], dynamic: Sequence[SSAValue], count: int
) -> None:
    values = static.get_values()
    if len(values) != count:
        raise VerifyException(f"expected {count} static positions, got {len(values)}")
    if (expected := values.count(DYNAMIC)) != len(dynamic):
        raise VerifyException(
            f"expected {expected} dynamic index operands, got {len(dynamic)}"
        )

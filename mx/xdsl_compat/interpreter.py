"""Public names for the parts of xDSL's private interpreter API mx uses."""

from collections.abc import Iterable

from xdsl.interpreter import InterpreterFunctions, OpImpl
from xdsl.ir import Operation


def implementations(
    functions: type[InterpreterFunctions],
) -> Iterable[tuple[type[Operation], OpImpl[InterpreterFunctions, Operation]]]:
    """The op implementations that `functions` (a `@register_impls` class) registers."""
    return functions._impls()  # pyright: ignore[reportPrivateUsage]

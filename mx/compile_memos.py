"""Memos of the compiler that hold attributes of the IR it compiles, forgotten
when a compile that drops its IR ends.

A memo that remembers something per attribute (a matrix type's buffer type,
a type's LLVM IR spelling, an op signature that verified) keeps that
attribute alive, and kernels of new shapes and constants bring new
attributes: a process compiling kernel after kernel (the JIT) kept each
kernel's attributes (~3 KB a kernel). Such memos are registered here
(`compile_memo`, `forget_with_compiles`), and the JIT forgets them all at the
end of each compile (`forgetting_compile_memos`): within a compile they pay,
across compiles they only grow. Outside such a compile (mx-opt, one module
per process) they last as long as the process.
"""

from collections.abc import Callable, Generator
from contextlib import contextmanager
from functools import cache
from typing import ParamSpec, TypeVar, cast

_P = ParamSpec("_P")
_T = TypeVar("_T")

_forgetters: list[Callable[[], object]] = []
"""What forgets each registered memo."""


def forget_with_compiles(forget: Callable[[], object]) -> None:
    """`forget()` is called at the end of each compile that drops its IR."""
    _forgetters.append(forget)


def compile_memo(function: Callable[_P, _T]) -> Callable[_P, _T]:
    """`functools.cache(function)`, forgotten at the end of each compile that
    drops its IR."""
    memo = cache(function)
    forget_with_compiles(memo.cache_clear)
    return cast(Callable[_P, _T], memo)


@contextmanager
def forgetting_compile_memos() -> Generator[None]:
    """Within this `with` block (or the function it decorates) the memos
    remember as usual; at its end, all of them forget, and the attributes
    they kept can go with the IR."""
    try:
        yield
    finally:
        for forget in _forgetters:
            forget()

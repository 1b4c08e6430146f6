"""The functions `mx` exports for traced code: `mx.function`, `mx.fma`,
`mx.transpose`, `mx.quantize_mx`, `mx.dequantize_mx`.

Called on traced values (inside an `@mx.function`), they append ops to the
trace. Called on NumPy arrays, they run at once: the call is traced as a
function of those arrays, compiled once per signature and run (so
`mx.quantize_mx(w, "f4e2m1fn", block=32)` quantizes a weight matrix with the
same code a traced function would use)."""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from typing import Any, overload

import numpy as np

from mx.jit import DEFAULT_PIPELINE
from mx.tracing import values
from mx.tracing.function import Function
from mx.tracing.values import Traced

_EAGER: dict[tuple[object, ...], Function] = {}


def _eager(
    operation: Callable[..., Any], args: tuple[object, ...], **options: Any
) -> Any:
    """`operation(*args, **options)` on arrays: traced, compiled (cached per
    operation and options) and run."""
    key = (operation, *sorted(options.items(), key=lambda kv: kv[0]))
    try:
        compiled = _EAGER.get(key)
    except TypeError:  # an unhashable option: compile without caching
        compiled = None
    if compiled is None:
        compiled = Function(lambda *traced: operation(*traced, **options))
        compiled.__name__ = operation.__name__
        with contextlib.suppress(TypeError):
            _EAGER[key] = compiled
    return compiled(*args)


@overload
def function(
    fn: Callable[..., Any], *, pipeline: str = DEFAULT_PIPELINE
) -> Function: ...
@overload
def function(
    fn: None = None, *, pipeline: str = DEFAULT_PIPELINE
) -> Callable[[Callable[..., Any]], Function]: ...
def function(
    fn: Callable[..., Any] | None = None, *, pipeline: str = DEFAULT_PIPELINE
) -> Function | Callable[[Callable[..., Any]], Function]:
    """Decorator: `fn` traced per argument signature and compiled with
    `pipeline` (an mx-opt `-p` spec). `@mx.function`, `mx.function(fn)` and
    `@mx.function(pipeline=...)` all work."""
    if fn is None:
        return lambda f: Function(f, pipeline)
    return Function(fn, pipeline)


def fma(a: object, b: object, c: object) -> Any:
    """`a * b + c` elementwise, rounded once (IEEE fusedMultiplyAdd)."""
    if any(isinstance(v, Traced) for v in (a, b, c)):
        return values.fma(a, b, c)
    return _eager(values.fma, (a, b, c))


def transpose(a: object) -> Any:
    """The transpose of a matrix (`a.T`); vectors and scalars are their own."""
    if isinstance(a, Traced):
        return values.transpose(a)
    return np.transpose(np.asarray(a))


def quantize_mx(
    x: object,
    fmt: object,
    *,
    block: int,
    rounding: str | None = None,
    scale_rule: str = "floor",
    packed: bool | None = None,
) -> tuple[Any, Any]:
    """Block-scaled quantization (OCP MX): the codes of `fmt` and one
    `f8e8m0fnu` scale per `block` elements along each row. See
    docs/python-frontend.md for the options and what comes back."""
    options: dict[str, Any] = {
        "block": block,
        "rounding": rounding,
        "scale_rule": scale_rule,
        "packed": packed,
    }
    if isinstance(x, Traced):
        return values.quantize_mx(x, fmt, **options)
    return _eager(values.quantize_mx, (x,), fmt=fmt, **options)


def dequantize_mx(
    q: object,
    s: object,
    fmt: object,
    *,
    block: int,
    dtype: object = np.float32,
    scale: str = "f8e8m0fnu",
) -> Any:
    """Block-scaled decoding: each code times its block's scale, rounded once
    to `dtype`. `q` is ml_dtypes codes or, for FP4/FP6, packed uint8 bytes."""
    options: dict[str, Any] = {"block": block, "dtype": dtype, "scale": scale}
    if isinstance(q, Traced):
        return values.dequantize_mx(q, s, fmt, **options)
    return _eager(values.dequantize_mx, (q, s), fmt=fmt, **options)

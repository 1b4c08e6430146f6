"""`mx-run --arg VALUE`: a command-line value as an argument of a given type.

A value is a `.npy` file (read with NumPy), or a literal: a number (`3`,
`-2.5`, `0x7FC00000`, `nan`, `inf`, `true`), or a list written as in a
`dense<...>` literal (`[[1.0, 2.0], [3.0, 4.0]]`, also wrapped in `dense<...>`).
A single number given for a matrix, vector or memref fills it.

Literal floats are rounded to the type once, as MLIR reads float literals;
a hexadecimal literal is the type's bit pattern (and takes no minus sign, as
in MLIR). Values read from `.npy` files must convert exactly (data is never
rounded silently; complex values are refused, never cut to their real part).
A `.npy` of raw bytes (`V2`, `V1`: what NumPy writes for ml_dtypes' bfloat16
and float8/6/4 arrays) holds bit patterns of the element type, of its size.
Integers must fit the type's signed or unsigned range.
"""

from __future__ import annotations

import re
from math import prod
from typing import Any, cast

import numpy as np
from xdsl.dialects.builtin import (
    IndexType,
    IntegerType,
    MemRefType,
    VectorType,
)
from xdsl.ir import Attribute

from mx.dialects.dense_literal import NEGATIVE_HEX_FLOAT
from mx.dialects.matrix import MatrixType, is_float_element
from mx.interpreters.vector import lane_dtype
from mx.semantics import matrix as sem
from mx.semantics.bfloat16 import is_bf16


class ArgumentError(Exception):
    """A `--arg` value that does not fit its parameter (the message says why)."""


_TOKEN = re.compile(r"\s*(\[|\]|,|[^\s\[\],]+)")
_SPECIAL_FLOATS = {"nan": np.nan, "inf": np.inf, "+inf": np.inf, "-inf": -np.inf}

Nested = str | list["Nested"]


def _tokens(text: str) -> list[str]:
    tokens: list[str] = []
    position = 0
    text = text.rstrip()
    while position < len(text):
        match = _TOKEN.match(text, position)
        if match is None:
            raise ArgumentError(f"cannot read '{text}'")
        tokens.append(match.group(1))
        position = match.end()
    return tokens


def parse_literal(text: str) -> Nested:
    """`[[1, 2], [3, 4]]` (or `dense<...>` around it, or one number) as nested
    lists of number tokens."""
    text = text.strip()
    if text.startswith("dense<") and text.endswith(">"):
        text = text[len("dense<") : -1]
    tokens = _tokens(text)
    position = 0

    def value() -> Nested:
        nonlocal position
        if position >= len(tokens):
            raise ArgumentError(f"'{text}' ends too early")
        token = tokens[position]
        position += 1
        if token != "[":
            if token in ("]", ","):
                raise ArgumentError(f"unexpected '{token}' in '{text}'")
            return token
        items: list[Nested] = []
        if position < len(tokens) and tokens[position] == "]":
            position += 1
            return items
        while True:
            items.append(value())
            if position >= len(tokens):
                raise ArgumentError(f"missing ']' in '{text}'")
            separator = tokens[position]
            position += 1
            if separator == "]":
                return items
            if separator != ",":
                raise ArgumentError(f"expected ',' or ']' in '{text}'")

    result = value()
    if position != len(tokens):
        raise ArgumentError(f"unexpected '{tokens[position]}' in '{text}'")
    return result


def _integer_range(t: Attribute) -> tuple[int, int]:
    """(smallest, largest + 1) accepted for an integer type: signed or unsigned."""
    width = 64 if isinstance(t, IndexType) else cast(IntegerType, t).width.data
    return -(1 << (width - 1)), 1 << width


def _element(token: str, element_type: Attribute) -> Any:
    """One literal element as a NumPy scalar of the element's dtype."""
    dtype = lane_dtype(element_type)
    lowered = token.lower()
    if is_float_element(element_type):
        if lowered.lstrip("+-").startswith("0x") and lowered[0] in "+-":
            raise ArgumentError(f"{token}: {NEGATIVE_HEX_FLOAT}")
        if lowered.startswith("0x"):
            bits = int(lowered, 16)
            if bits >> (8 * dtype.itemsize):
                raise ArgumentError(f"{token} has more bits than '{element_type}'")
            unsigned = np.dtype(f"uint{8 * dtype.itemsize}")
            return np.array(bits, dtype=unsigned).view(dtype)[()]
        try:
            value = _SPECIAL_FLOATS.get(lowered)
            if value is None:
                value = float(token)
        except ValueError:
            raise ArgumentError(f"'{token}' is not a number") from None
        return sem.round_f64(np.array(value, dtype=np.float64), dtype)[()]
    if lowered in ("true", "false"):
        if not (isinstance(element_type, IntegerType) and element_type.width.data == 1):
            raise ArgumentError(f"'{token}' is only a value of i1")
        integer = int(lowered == "true")
    else:
        try:
            integer = int(token, 0)
        except ValueError:
            raise ArgumentError(f"'{token}' is not an integer") from None
    low, high = _integer_range(element_type)
    if not low <= integer < high:
        raise ArgumentError(f"{token} does not fit in {element_type}")
    if dtype == np.bool_:
        return np.bool_(integer & 1)
    return sem.scalar(integer, dtype)


def _from_literal(literal: Nested, element_type: Attribute) -> Any:
    if isinstance(literal, str):
        return _element(literal, element_type)
    return [_from_literal(item, element_type) for item in literal]


def _exact_array(
    array: np.ndarray[Any, Any], element_type: Attribute, name: str
) -> Any:
    """A `.npy` array as the element type's dtype, refusing any change of value."""
    dtype = lane_dtype(element_type)
    if array.dtype.kind == "V":
        return _bit_patterns(array, element_type, name)
    if array.dtype.kind == "c":
        raise ArgumentError(
            f"{name} holds {array.dtype} values, '{element_type}' takes real numbers "
            "(the imaginary parts would be lost)"
        )
    if is_float_element(element_type):
        if not (np.issubdtype(array.dtype, np.number) or is_bf16(array.dtype)):
            raise ArgumentError(f"{name} holds {array.dtype}, not numbers")
        with np.errstate(all="ignore"):
            converted = array.astype(dtype)
            back = converted.astype(np.float64)
            original = array.astype(np.float64)
        same = (back == original) | (np.isnan(back) & np.isnan(original))
        if not np.all(same):
            raise ArgumentError(
                f"{name} holds {array.dtype} values that '{element_type}' cannot "
                "represent exactly (convert the array first)"
            )
        return converted
    if not (np.issubdtype(array.dtype, np.integer) or array.dtype == np.bool_):
        raise ArgumentError(f"{name} holds {array.dtype}, not integers")
    low, high = _integer_range(element_type)
    values = array.astype(object)
    if array.size and not (low <= values.min() and values.max() < high):
        raise ArgumentError(f"{name} holds values that do not fit in {element_type}")
    if dtype == np.bool_:
        return (array.astype(np.int64) & 1).astype(np.bool_)
    return np.array(
        [sem.scalar(int(v), dtype) for v in values.reshape(-1)], dtype=dtype
    ).reshape(array.shape)


def _bit_patterns(
    array: np.ndarray[Any, Any], element_type: Attribute, name: str
) -> Any:
    """Raw bytes (`V<n>`: ml_dtypes' bfloat16, float8, ... saved by NumPy) as
    bit patterns of `element_type`, which must take `n` bytes; the high bits
    of a narrower integer container (i4, i6) must be zero."""
    dtype = lane_dtype(element_type)
    size = dtype.itemsize
    if array.dtype.itemsize != size:
        raise ArgumentError(
            f"{name} holds raw {array.dtype.itemsize}-byte values ({array.dtype}), "
            f"expected {size}-byte bit patterns of '{element_type}'"
        )
    bits = np.frombuffer(array.tobytes(), dtype=f"<u{size}").reshape(array.shape)
    width = (
        element_type.width.data if isinstance(element_type, IntegerType) else 8 * size
    )
    if width < 8 * size and np.any(bits >> width):
        raise ArgumentError(
            f"{name} holds values with bits above the {width} of '{element_type}'"
        )
    if dtype == np.bool_:
        return bits.astype(np.bool_)
    return bits.view(dtype)


def _shaped(value: Any, shape: tuple[int, ...], what: str, source: str) -> Any:
    array = np.asarray(value)
    if array.ndim == 0:
        return np.full(shape, array[()], dtype=array.dtype)
    if array.shape != shape:
        raise ArgumentError(
            f"{source} has shape {array.shape}, expected {shape} ({what})"
        )
    return array


def _element_type(t: Attribute) -> Attribute:
    if isinstance(t, MatrixType):
        return t.element_type
    if isinstance(t, VectorType | MemRefType):
        return cast(VectorType[Attribute], t).get_element_type()
    if is_float_element(t) or isinstance(t, IntegerType | IndexType):
        return t
    raise ArgumentError(f"parameters of type '{t}' cannot be given on the command line")


def _fit(value: Any, t: Attribute, source: str) -> Any:
    """An array (or one number) of the element dtype, shaped for `t`."""
    array = np.asarray(value)
    if isinstance(t, MatrixType):
        return _shaped(array, t.shape, f"a {t.rows}x{t.cols} matrix", source)
    if isinstance(t, VectorType):
        return _shaped(array, tuple(t.get_shape()), f"a {t}", source)
    if isinstance(t, MemRefType):
        shape = tuple(cast(MemRefType[Attribute], t).get_shape())
        if any(d < 0 for d in shape):  # dynamic: the data's own size
            return np.ascontiguousarray(array).reshape(-1)
        if array.ndim == 0:
            return np.full(shape, array[()], dtype=array.dtype)
        if array.size != prod(shape):
            raise ArgumentError(
                f"{source} has {array.size} elements, expected {prod(shape)} ({t})"
            )
        return array.reshape(shape)
    if array.ndim != 0:
        raise ArgumentError(f"{source} has shape {array.shape}, expected a scalar")
    return array[()].item()


def argument_value(text: str, t: Attribute) -> Any:
    """The value of `--arg text` for a parameter of type `t`, ready for
    `mx.interpreters.to_runtime`."""
    element_type = _element_type(t)
    if text.endswith(".npy"):
        try:
            array = np.load(text, allow_pickle=False)
        except (OSError, ValueError) as err:
            raise ArgumentError(f"cannot read {text}: {err}") from None
        return _fit(_exact_array(array, element_type, text), t, text)
    values = _from_literal(parse_literal(text), element_type)
    try:
        array = np.array(values, dtype=lane_dtype(element_type))
    except ValueError:
        raise ArgumentError(f"the lists of '{text}' differ in length") from None
    return _fit(array, t, f"'{text}'")

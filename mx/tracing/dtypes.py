"""NumPy / ml_dtypes dtypes of traced values and their MLIR types.

A traced value has a NumPy dtype, as the array it stands for: the native
types (`float16`, `bfloat16`, `float32`, `float64`, `int8` ... `int64`) are
element types of the `matrix` dialect; the ml_dtypes small floats (`float8_*`,
`float6_*`, `float4_e2m1fn`) are the integer containers of an `arbfp` format
(`i8`, `i6`, `i4`); `uint8` holds raw bytes (packed FP4/FP6 codes, scale
codes).
"""

from __future__ import annotations

from functools import cache
from typing import Any

import ml_dtypes
import numpy as np
from xdsl.dialects.builtin import (
    BFloat16Type,
    Float16Type,
    Float32Type,
    Float64Type,
    IntegerType,
)
from xdsl.ir import Attribute

from mx.semantics.arbfp import FORMATS, FloatFormat

DType = np.dtype[Any]

NATIVE: dict[DType, Attribute] = {
    np.dtype(np.float16): Float16Type(),
    np.dtype(ml_dtypes.bfloat16): BFloat16Type(),
    np.dtype(np.float32): Float32Type(),
    np.dtype(np.float64): Float64Type(),
    **{np.dtype(f"int{w}"): IntegerType(w) for w in (8, 16, 32, 64)},
}
"""Dtypes with arithmetic: the element types of the matrix dialect."""

BYTES = np.dtype(np.uint8)
"""Raw bytes: packed FP4/FP6 codes, or one code per byte."""

FLOAT_TYPES = frozenset(d for d, t in NATIVE.items() if not isinstance(t, IntegerType))
"""The destinations of `arbfp` decoding and the sources of its encoding."""


@cache
def small_float_format(dtype: DType) -> FloatFormat | None:
    """The arbfp format of an ml_dtypes small float (`float8_e4m3fn` ->
    f8e4m3fn), or None for any other dtype."""
    if not dtype.name.startswith("float"):
        return None
    return FORMATS.get("f" + dtype.name.removeprefix("float").replace("_", ""))


def format_dtype(keyword: str) -> DType | None:
    """The ml_dtypes dtype of an arbfp format (f8e4m3fn -> float8_e4m3fn), if
    ml_dtypes has it."""
    name = "float" + keyword[1] + "_" + keyword[2:]
    found = getattr(ml_dtypes, name, None)
    return np.dtype(found) if found is not None else None


def mlir_type(dtype: DType) -> Attribute | None:
    """The element type holding one value of `dtype`: the native type, or the
    container of a small float format (i8/i6/i4), i8 for raw bytes."""
    if (native := NATIVE.get(dtype)) is not None:
        return native
    if dtype == BYTES:
        return IntegerType(8)
    fmt = small_float_format(dtype)
    return IntegerType(fmt.bits) if fmt is not None else None


def is_float(dtype: DType) -> bool:
    return dtype in FLOAT_TYPES


def has_arithmetic(dtype: DType) -> bool:
    return dtype in NATIVE

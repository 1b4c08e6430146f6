"""Where CPython and NumPy keep the fields the JIT's native entries
(`mx.jit_wrappers`) read and write: object offsets of 64-bit CPython and of
NumPy's array struct (`PyArrayObject_fields`, stable across NumPy 1.x and
2.x), array flags, and the entries of NumPy's C API table the fast entry
calls. Both are confirmed at run time (`check_layouts`, `numpy_api`): the
JIT gives a function a fast entry only where they hold.
"""

import ctypes
import importlib
from dataclasses import dataclass
from functools import cache
from typing import Any

import numpy as np

# PyObject and PyArrayObject_fields offsets (64-bit CPython, NumPy 1.x/2.x).
OB_TYPE = 8
ARRAY_DATA = 16
ARRAY_ND = 24
ARRAY_DIMS = 32
ARRAY_DESCR = 56
ARRAY_FLAGS = 64
TUPLE_SIZE = 16
TUPLE_ITEMS = 24
SCALAR_VALUE = 16
"""`PyFloatObject.ob_fval`, and the value of a NumPy or ml_dtypes scalar."""

C_CONTIGUOUS = 0x1
F_CONTIGUOUS = 0x2
ALIGNED = 0x100
WRITEABLE = 0x400


def check_layouts() -> bool:
    """True if the offsets above are those of this Python and NumPy."""
    if ctypes.sizeof(ctypes.c_void_p) != 8:
        return False
    a = np.zeros((3, 5), np.float32)
    pair = (None, a)

    def at(offset: int, t: type[Any]) -> Any:
        return t.from_address(id(a) + offset).value

    dims = at(ARRAY_DIMS, ctypes.c_void_p)
    return (
        at(OB_TYPE, ctypes.c_void_p) == id(np.ndarray)
        and at(ARRAY_DATA, ctypes.c_void_p) == a.ctypes.data
        and at(ARRAY_ND, ctypes.c_int) == 2
        and ctypes.c_int64.from_address(dims + 8).value == 5
        and at(ARRAY_DESCR, ctypes.c_void_p) == id(a.dtype)
        and at(ARRAY_FLAGS, ctypes.c_int) & C_CONTIGUOUS == C_CONTIGUOUS
        and ctypes.c_double.from_address(id(1.25) + SCALAR_VALUE).value == 1.25
        and ctypes.c_int64.from_address(id(pair) + TUPLE_SIZE).value == 2
        and ctypes.c_void_p.from_address(id(pair) + TUPLE_ITEMS + 8).value == id(a)
        and ctypes.string_at(id(np.float32(1.5)) + SCALAR_VALUE, 4)
        == np.float32(1.5).tobytes()
    )


@dataclass(frozen=True)
class NumPyAPI:
    """Entries of NumPy's C API table, which the fast entry calls to allocate
    its results (slots stable across NumPy 1.x and 2.x)."""

    array_type: int
    """`PyArray_Type` (slot 2)."""
    new_from_descr: int
    """`PyArray_NewFromDescr` (slot 94): a new array; steals the dtype."""
    scalar: int
    """`PyArray_Scalar` (slot 60): a NumPy scalar copied from memory."""


@cache
def numpy_api() -> NumPyAPI | None:
    """NumPy's C API entries, if this NumPy's table is the expected one
    (checked by allocating an array through it); else None."""
    try:
        multiarray = importlib.import_module("numpy._core._multiarray_umath")
    except ImportError:  # NumPy 1.x
        multiarray = importlib.import_module("numpy.core._multiarray_umath")
    capsule = getattr(multiarray, "_ARRAY_API", None)
    if capsule is None:
        return None
    pointer = ctypes.pythonapi.PyCapsule_GetPointer
    pointer.restype = ctypes.c_void_p
    pointer.argtypes = [ctypes.py_object, ctypes.c_char_p]
    table = (ctypes.c_void_p * 95).from_address(pointer(capsule, None) or 0)
    api = NumPyAPI(table[2] or 0, table[94] or 0, table[60] or 0)
    if api.array_type != id(np.ndarray):
        return None
    new = ctypes.PYFUNCTYPE(
        ctypes.py_object,
        *(ctypes.c_void_p,) * 2,
        ctypes.c_int,
        *(ctypes.c_void_p,) * 3,
        ctypes.c_int,
        ctypes.c_void_p,
    )(api.new_from_descr)
    dtype = np.dtype(np.float32)
    ctypes.pythonapi.Py_IncRef(ctypes.py_object(dtype))  # stolen by the call
    dims = (ctypes.c_int64 * 2)(3, 5)
    made = new(
        id(np.ndarray), id(dtype), 2, ctypes.addressof(dims), None, None, 0, None
    )
    if not (isinstance(made, np.ndarray) and made.shape == (3, 5)):
        return None
    return api

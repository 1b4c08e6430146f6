"""Arrays placed at a chosen distance from a cache line's start, for the
kernels whose path depends on where a row begins in a line."""

from typing import Any

import numpy as np
import numpy.typing as npt

Array = npt.NDArray[Any]


def at_byte(a: Array, by: int) -> Array:
    """`a` copied, C-ordered, to `by` bytes past a 64-byte boundary."""
    raw = np.zeros(a.nbytes + 128, np.uint8)
    start = (-raw.ctypes.data) % 64 + by
    view = raw[start : start + a.nbytes].view(a.dtype).reshape(a.shape)
    view[:] = a
    return view

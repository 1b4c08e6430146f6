"""ml_dtypes' bfloat16, loaded the first time a bf16 value needs it.

Importing ml_dtypes costs ~0.6 s of CPU (NumPy registers its casts and ufunc
loops one by one, each after a linear search), more than the rest of
`mx-opt`'s start-up, and most runs never see a bf16 value.
"""

import sys
from functools import cache
from typing import Any

import numpy as np
import numpy.typing as npt


@cache
def bf16_dtype() -> np.dtype[Any]:
    import ml_dtypes

    return np.dtype(ml_dtypes.bfloat16)


def is_bf16(dtype: npt.DTypeLike) -> bool:
    """Whether `dtype` is bfloat16, without loading ml_dtypes: no array or
    dtype of bfloat16 exists before ml_dtypes is loaded."""
    return "ml_dtypes" in sys.modules and np.dtype(dtype) == bf16_dtype()

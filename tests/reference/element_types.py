"""NumPy dtypes of mx's element types, for tests that pass matrices in and out."""

from __future__ import annotations

from typing import Any

import ml_dtypes
import numpy as np

BF16 = np.dtype(ml_dtypes.bfloat16)
ELEMENT_DTYPES: dict[str, np.dtype[Any]] = {
    "f16": np.dtype(np.float16),
    "bf16": BF16,
    "f32": np.dtype(np.float32),
    "f64": np.dtype(np.float64),
    "i8": np.dtype(np.int8),
    "i16": np.dtype(np.int16),
    "i32": np.dtype(np.int32),
    "i64": np.dtype(np.int64),
}

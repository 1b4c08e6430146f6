"""Prints the module `@mx.function` traces for `a @ b.T + c` on 4x4 float32
matrices (tests/filecheck/python/trace-gemm.mlir)."""

from typing import Any

import numpy as np

import mx


@mx.function
def gemm(a: Any, b: Any, c: Any) -> Any:
    return a @ b.T + c


m = np.zeros((4, 4), np.float32)
print(gemm.mlir(m, m, m))

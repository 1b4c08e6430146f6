"""llama.cpp's ggml as an optional peer of bench/decode.py (not run by CI).

ggml comes from `ggml-python` built from source for the host CPU, in a venv of its own:

    python3 -m venv .ggmlvenv
    CMAKE_ARGS="-DGGML_NATIVE=ON" .ggmlvenv/bin/pip install --no-binary ggml-python ggml-python
    MX_BENCH_GGML=.ggmlvenv/lib/python3.11/site-packages python -m bench.decode

(`MX_BENCH_GGML` is put on `sys.path`: ggml-python is ctypes over its own libggml and needs
only NumPy.) Each format's weights are requantized by ggml (`ggml_quantize_chunk`) to its
nearest type: MXFP4 → MXFP4, the 8-bit formats → Q8_0 (an f16 scale per 32 int8), f16 →
F16, bf16 → BF16; one graph of 4 `ggml_mul_mat` per weight set, computed on one thread.
ggml's quantized dot products first quantize x to 8-bit integers (Q8_0 / Q8_K), so its
results are checked only to 2% of Σ|w·x|.
"""

from __future__ import annotations

import ctypes
import os
import sys
import weakref
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import numpy as np

if TYPE_CHECKING:
    from bench.decode import Case, WeightSet

Array = np.ndarray[Any, Any]


def import_ggml() -> Any | None:
    """The `ggml` module if `MX_BENCH_GGML` (or the environment) provides it."""
    if path := os.environ.get("MX_BENCH_GGML"):
        sys.path.append(path)
    try:
        import ggml  # pyright: ignore[reportMissingImports]
    except ImportError:
        return None
    return ggml  # pyright: ignore[reportUnknownVariableType]


def _ggml_type(ggml: Any, c: Case) -> int:
    f = c.format
    if f.element == "f4e2m1fn":
        return ggml.GGML_TYPE_MXFP4
    if f.kind == "float":
        return ggml.GGML_TYPE_F16 if f.element == "f16" else ggml.GGML_TYPE_BF16
    return ggml.GGML_TYPE_Q8_0


def mul_mat_peer(
    ggml: Any,
    c: Case,
    sets: list[WeightSet],
    values: Callable[[WeightSet], Array],
    x: Array,
    y: Array,
    layers: int,
) -> Callable[[], object]:
    """A call computing the next set's `layers` layers (rotating) into `y`;
    `values(set)` gives a set's (layers, R, K) weight values."""
    kind = _ggml_type(ggml, c)
    row_bytes = int(ggml.ggml_row_size(kind, c.cols))
    overhead = (
        ggml.ggml_tensor_overhead() * (2 * layers + 4) + ggml.ggml_graph_overhead()
    )
    size = layers * c.rows * (row_bytes + 4) + 4 * c.cols + overhead + (1 << 20)
    steps: list[Callable[[], None]] = []
    keep: list[Any] = []
    for ws in sets:
        ctx = ggml.ggml_init(ggml.ggml_init_params(mem_size=size, mem_buffer=None))
        xt = ggml.ggml_new_tensor_1d(ctx, ggml.GGML_TYPE_F32, c.cols)
        ctypes.memmove(ggml.ggml_get_data(xt), x.ctypes.data, x.nbytes)
        graph = ggml.ggml_new_graph(ctx)
        outs: list[Any] = []
        dense = values(ws).astype(np.float32)
        for layer in range(layers):
            w = ggml.ggml_new_tensor_2d(ctx, kind, c.cols, c.rows)
            src = np.ascontiguousarray(dense[layer])
            ggml.ggml_quantize_chunk(
                kind,
                src.ctypes.data_as(ctypes.POINTER(ctypes.c_float)),
                ggml.ggml_get_data(w),
                0,
                c.rows,
                c.cols,
                None,
            )
            out = ggml.ggml_mul_mat(ctx, w, xt)
            ggml.ggml_build_forward_expand(graph, out)
            outs.append(out)
        keep.append(ctx)

        def step(ctx: Any = ctx, graph: Any = graph, outs: list[Any] = outs) -> None:
            ggml.ggml_graph_compute_with_ctx(ctx, graph, 1)
            for layer, out in enumerate(outs):
                ctypes.memmove(
                    y.ctypes.data + 4 * layer * c.rows,
                    ggml.ggml_get_data(out),
                    4 * c.rows,
                )

        steps.append(step)
    return _Rotation(ggml, steps, keep)


def _free(ggml: Any, contexts: list[Any]) -> None:
    for ctx in contexts:
        ggml.ggml_free(ctx)


class _Rotation:
    """Calls the steps in turn; keeps their ggml contexts alive, and frees them
    (ggml's own buffers, which Python does not see) when it is dropped."""

    def __init__(
        self, ggml: Any, steps: list[Callable[[], None]], contexts: list[Any]
    ) -> None:
        self.steps, self.turn = steps, 0
        weakref.finalize(self, _free, ggml, contexts)

    def __call__(self) -> None:
        self.steps[self.turn]()
        self.turn = (self.turn + 1) % len(self.steps)

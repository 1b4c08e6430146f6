"""Arrays placed at a chosen distance from a cache line's start, for the
kernels whose path depends on where a row begins in a line; and hosts whose
L1 sets rows share fill or overflow, for the kernels that then stream one
tile of rows at a time or read rows by whole cache lines."""

from dataclasses import replace
from typing import Any

import numpy as np
import numpy.typing as npt
from xdsl.context import Context
from xdsl.parser import Parser

from mx.frontend import mx_context
from mx.lowering.matrix_to_affine.blocked import CACHE_LINE
from mx.lowering.matrix_to_affine.convert_matrix_to_affine import (
    ConvertMatrixToAffinePass,
)
from mx.lowering.matrix_to_affine.target_cpu import TargetCpu

Array = npt.NDArray[Any]


def at_byte(a: Array, by: int) -> Array:
    """`a` copied, C-ordered, to `by` bytes past a 64-byte boundary."""
    raw = np.zeros(a.nbytes + 128, np.uint8)
    start = (-raw.ctypes.data) % 64 + by
    view = raw[start : start + a.nbytes].view(a.dtype).reshape(a.shape)
    view[:] = a
    return view


def one_tile_host(cpu: TargetCpu) -> TargetCpu:
    """`cpu` with an L1 of as many ways as a tile has rows (its f32 lanes),
    4 KiB a way: one tile's lines of rows 4 KiB apart fit a set, two tiles'
    overflow it, so the fused row-major kernels read them by chunks one tile
    at a time (`decoded_matvec.one_by_one`)."""
    lanes = cpu.f32_lanes
    return replace(
        cpu, caches=replace(cpu.caches, l1_bytes=4096 * lanes, l1_ways=lanes)
    )


def lines_host(cpu: TargetCpu) -> TargetCpu:
    """`cpu` with an L1 of one set, of half as many ways as a tile has rows
    (its f32 lanes): the lines at a column of a tile's rows overflow it
    wherever the rows are a whole number of lines apart, so the fused
    row-major kernels read them by whole cache lines of each row
    (`decoded_matvec.in_lines`), as 16 rows 4 KiB apart are in a 12-way
    L1."""
    ways = cpu.f32_lanes // 2
    return replace(
        cpu, caches=replace(cpu.caches, l1_bytes=CACHE_LINE * ways, l1_ways=ways)
    )


def _lowered(text: str, cpu: TargetCpu | None, layout: str = "column-major") -> str:
    """`text` lowered by `convert-matrix-to-affine` with the boundary's
    `layout`, for `cpu`'s lanes and L1 (None: the pass's defaults)."""
    module = Parser(mx_context(), text).parse_module()
    if cpu is None:
        lowering = ConvertMatrixToAffinePass(layout=layout)
    else:
        lowering = ConvertMatrixToAffinePass(
            layout=layout,
            vector_bits=32 * cpu.f32_lanes,
            l1_bytes=cpu.caches.l1_bytes,
            l1_ways=cpu.caches.l1_ways,
        )
    lowering.apply(Context(), module)
    return str(module)


def reads_address(text: str, cpu: TargetCpu | None = None) -> bool:
    """Whether `text` lowered (NumPy's layout at the boundary; for `cpu`'s
    lanes and L1, else the pass's defaults) reads a memref's address, as the
    steps by cache lines do for their first column at a line's start."""
    lowered = _lowered(text, cpu, layout="row-major")
    return "memref.extract_aligned_pointer_as_index" in lowered


def one_tile_loops(text: str, cpu: TargetCpu) -> int:
    """How many row loops of `text` lowered for `cpu`'s lanes and L1 carry one
    tile's sums (one vector); 0 if any carries two tiles' (two vectors)."""
    lanes = cpu.f32_lanes
    lowered = _lowered(text, cpu)
    if f"-> (vector<{lanes}xf32>, vector<{lanes}xf32>)" in lowered:
        return 0
    return lowered.count(f"-> (vector<{lanes}xf32>) {{")

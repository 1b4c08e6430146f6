"""How a cache-blocked product run on threads splits D into blocks
(`blocked.py`'s `_Sizes` for `parallel`): the blocks tile the panels
exactly, their count is a multiple of PARALLEL_BLOCKS whenever one fits in
the panels, and the contiguous runs of blocks the OpenMP trampoline gives 1,
2, 3, 4 or 6 threads (`mx/runtime/parallel_for.py`: the first n mod T
threads one block more) hold equal work to within one panel per block.

The panel boundaries are read from the affine expressions the lowering
emits (evaluated by xDSL's AffineMap), the expected ones computed here."""

import os
from itertools import pairwise
from math import gcd

from hypothesis import given, settings
from hypothesis import strategies as st
from xdsl.dialects.builtin import f32, f64
from xdsl.ir.affine import AffineExpr, AffineMap

from mx.lowering.matrix_to_affine.blocked import (
    PANEL_SHAPES,
    PARALLEL_BLOCKS,
    Blocking,
    Gemm,
    _Sizes,  # pyright: ignore[reportPrivateUsage]
    _Split,  # pyright: ignore[reportPrivateUsage]
)
from mx.lowering.matrix_to_affine.caches import Caches
from mx.lowering.matrix_to_affine.target_cpu import TargetCpu

ZEN4 = Caches(32 * 1024, 1024 * 1024, 32 * 1024 * 1024)

_EXAMPLES = int(os.environ.get("MX_PARALLEL_BLOCKS_EXAMPLES", "200"))


def _sizes(
    rows: int,
    cols: int,
    depth: int,
    wide: bool,
    caches: Caches,
    panels: tuple[int, bool] = (32, False),
) -> _Sizes:
    """The sizes on an AVX-512 target (32 registers, broadcasts in registers
    or not) or an AVX2 one (16): `PANEL_SHAPES`' keys."""
    registers, broadcasts = panels
    f32_lanes = 16 if registers == 32 else 8
    lanes = f32_lanes // (2 if wide else 1)
    t = f64 if wide else f32
    g = Gemm(rows, cols, depth, None, None, None, None, t, None, lanes, None)  # type: ignore[arg-type]
    blocking = Blocking(caches.l1_bytes, caches.l2_bytes, caches.l3_bytes, 0, 1)
    target = TargetCpu(
        f32_lanes, vector_registers=registers, broadcast_registers=broadcasts
    )
    return _Sizes.of(g, blocking, parallel=True, target=target)


def _bounds(split: _Split) -> list[tuple[int, int]]:
    """[first, end) panels of each block, from the emitted expressions."""
    d0 = AffineExpr.dimension(0)
    starts = AffineMap(1, 0, (split.start(d0), split.end(d0)))
    return [
        (lo, min(hi, split.panels))
        for lo, hi in (starts.eval([b], []) for b in range(split.blocks))
    ]


def _tiles(split: _Split) -> list[int]:
    """Panels per block, checking that the blocks tile [0, panels)."""
    bounds = _bounds(split)
    assert bounds[0][0] == 0 and bounds[-1][1] == split.panels, bounds
    for (_, end), (start, _) in pairwise(bounds):
        assert end == start, bounds
    sizes = [hi - lo for lo, hi in bounds]
    assert min(sizes) >= 1 and max(sizes) <= split.size, (sizes, split.size)
    return sizes


def _shares(s: _Sizes, threads: int) -> list[int]:
    """Micro-kernel tiles (panel of rows x panel of columns) of each thread."""
    rows, cols = _tiles(s.row_split), _tiles(s.column_split)
    work = [r * c for r in rows for c in cols]  # unit u = ib * column_blocks + jb
    q, extra = divmod(len(work), threads)
    shares: list[int] = []
    start = 0
    for t in range(threads):
        size = q + (t < extra)
        shares.append(sum(work[start : start + size]))
        start += size
    return shares


def _twelve_fits(row_panels: int, col_panels: int) -> bool:
    return any(
        col_panels >= PARALLEL_BLOCKS // gcd(PARALLEL_BLOCKS, rb)
        for rb in range(1, row_panels + 1)
    )


@settings(max_examples=_EXAMPLES, deadline=None)
@given(
    shape=st.tuples(st.integers(1, 3000), st.integers(1, 3000), st.integers(2, 3000)),
    wide=st.booleans(),
    caches=st.sampled_from(
        [ZEN4, Caches(48 * 1024, 2 << 20, 32 << 20), Caches(4096, 65536, 1 << 20)]
    ),
    panels=st.sampled_from(sorted(PANEL_SHAPES)),
)
def test_blocks_on_threads_are_even(
    shape: tuple[int, int, int], wide: bool, caches: Caches, panels: tuple[int, bool]
) -> None:
    rows, cols, depth = shape
    s = _sizes(rows, cols, depth, wide, caches, panels)
    row_panels, col_panels = s.row_split.panels, s.column_split.panels
    assert row_panels == -(-rows // s.mr) and col_panels == -(-cols // s.nr)
    units = s.row_blocks * s.column_blocks
    if _twelve_fits(row_panels, col_panels):
        assert units % PARALLEL_BLOCKS == 0, s
    else:
        assert units == row_panels * col_panels, s
    for threads in (1, 2, 3, 4, 6):
        if units % threads:
            continue
        shares = _shares(s, threads)
        # Each thread's blocks differ from another's by a panel of rows and
        # one of columns at most: r x c tiles against (r - 1) x (c - 1).
        per_thread = units // threads
        slack = per_thread * (s.row_split.size + s.column_split.size - 1)
        assert max(shares) - min(shares) <= slack, (threads, shares, s)


def test_f32_512_on_two_threads_is_even() -> None:
    """The case that was not (11 column blocks: 18 and 14 of 32 panels)."""
    s = _sizes(512, 512, 512, False, ZEN4)
    assert _shares(s, 2) == [16 * 32, 16 * 32]
    s = _sizes(1024, 1024, 1024, False, ZEN4)
    assert _shares(s, 2) == [32 * 64, 32 * 64]
    assert _shares(s, 3)[0] in (21 * 64, 22 * 64)

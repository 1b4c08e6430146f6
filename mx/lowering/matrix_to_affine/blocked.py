"""Cache-blocked, packed products for matrices that outgrow the caches.

The structure of high-performance GEMM (Goto and van de Geijn's, as in BLIS),
for D = A·B (+ Acc) of an R x K by a K x C matrix, with the roles of the
operands chosen for vectors along the rows (the contiguous dimension of A
and D): a panel of A stays in L1 and the panels of B stream past it.

    for ic in blocks of MC rows:          MC x K of A stays in L3
      for jc in blocks of NC columns:     MC x NC of D and KC x NC of Bp in L2
        for pc in blocks of KC of the depth:
          pack Bp[jr][k][0..NR) = B[pc + k, jr*NR ..]   (each panel jr of jc)
          for ir in panels of MR rows of ic:
            pack Ap[k][0..MR) = A[ir*MR .., pc + k]     (MR x KC, in L1)
            for jr in panels of NR columns of jc:
              micro-kernel: MR x NR sums held in MR/lanes x NR vector
              registers, k over the block: per k, MR/lanes contiguous vector
              loads of Ap, NR broadcasts of Bp, (MR/lanes)·NR multiply-adds
              (MR and NR fit the target's registers: `PANEL_SHAPES`)

Every access of the micro-kernel is sequential (the packing makes it so),
which is what the hardware prefetchers follow; the partial sums it loads
and stores stay in L2 between depth blocks (in D, or in a contiguous buffer
of tiles when a row block is narrower than D), and each call prefetches the
next call's. The packing of A prefetches A's columns ahead (a stride apart,
beyond the hardware prefetchers). The last, partial panels of
rows and columns run the same kernel on fewer vectors or columns (in the
last row or column block).

Rounding order (docs/matrix-dialect.md's): a sum is never split. The first depth block
starts each sum from -0 (the additive identity of every float, so the first
step gives a(0)*b(0) exactly, even a -0 or a NaN), the others continue the
partial sums the previous block left in the result buffer, k = 0, 1, ..,
K-1; an accumulator operand is added last. Without `contract` each step is a
separate multiply and add, with it one `math.fma`. `reassoc` reorders
nothing here: the vectors already run across rows.

Block sizes (`_Sizes`, from the pass options' `Blocking`): KC so that
MR x KC of Ap and a KC x NR panel of Bp take at most 3/4 of L1 (the depth
split in equal blocks); MC and NC so that D's MC x NC and Bp's KC x NC take
at most L2 and MC x K of A at most half of L3, with the least packing (A is
packed C/NC times, B R/MC times). Run on threads, D is split into a
multiple of PARALLEL_BLOCKS blocks, their panels split evenly (`_Split`).
"""

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import partial
from math import gcd

from xdsl.dialects import affine, arith, memref, scf, vector
from xdsl.dialects.arith import FastMathFlagsAttr
from xdsl.dialects.builtin import (
    AffineMapAttr,
    IndexType,
    IntegerType,
    MemRefType,
    NoneAttr,
    VectorType,
)
from xdsl.dialects.utils import FastMathFlag
from xdsl.ir import Attribute, Block, BlockArgument, Region, SSAValue
from xdsl.ir.affine import AffineExpr, AffineMap

from mx.dialects.matrix import LoadOp, MatrixType, element_type_of
from mx.dialects.memref_ext import PrefetchOp
from mx.lowering import build
from mx.lowering.matrix_to_affine.buffers import element_bytes, heap_buffer
from mx.lowering.matrix_to_affine.elements import Emitter, Index, add, multiply
from mx.lowering.matrix_to_affine.products import dot
from mx.lowering.matrix_to_affine.target_cpu import TargetCpu, target_cpu
from mx.lowering.matrix_to_affine.vectors import (
    for_each_segment,
    lanes_of,
    offset,
    prefetch_block,
    read_block,
    segments,
    transpose_tile,
)
from mx.passes.outline_parallel_loops import mark_parallel, mark_parallel_block

PANEL_SHAPES = {(32, True): (4, 6), (32, False): (1, 16), (16, True): (2, 6)}
"""The micro-kernel's panels by the target's vector registers and whether
it holds broadcasts in registers (`TargetCpu.broadcast_registers`): (vectors
of rows of A per panel (MR = vectors * lanes), columns of B per panel (NR)).

- 32 registers (AVX-512), broadcasts in registers (Intel): 4 x 6 = 24
  accumulators. Per k, 4 vector loads of Ap and 6 broadcasts of Bp, each
  feeding 4 multiplies; a broadcast from memory is a load µop alone there.
  1 x 16 (one multiply a broadcast, folded into its memory operand) needs
  17 loads per 16 multiply-adds, more than the two 512-bit load ports
  serve. On an Intel Xeon with AVX512-FP16, one thread, 1024^3: f32 with
  `contract` 18.8 ms with 1 x 16 against 13.5 (2 x 12: 14.0, 3 x 8: 14.8,
  2 x 8: 13.9), strict 22.5 against 21.1; f64 with `contract` 41.8 against
  26.8, strict 50.8 against 44.2; f32 512^3 `contract` 2.29 against 1.72.
- 32 registers, broadcasts folded into the multiplies (AMD Zen): 1 x 16 =
  16 accumulators, one vector load of Ap and 16 broadcasts of Bp, each
  feeding a single multiply: x86 folds such a broadcast into the multiply's
  memory operand ({1to16}), where a broadcast held in a register for
  several multiplies is an instruction of its own. On Zen 4 that
  instruction takes an FP pipe's cycle that the separate multiplies and
  adds (no `contract`) already fill: a 4 x 6 tile ran its kernel at 0.8x
  the speed of this one, f32 1024^3 1.2x slower.
- 16 registers (AVX2, SSE; no memory broadcasts there): 2 x 6 = 12
  accumulators, 2 vectors of Ap and a broadcast, and one product. 16
  accumulators took every register: LLVM spilled three of them and moved
  the others around each k. On a Zen 1, f32 1024^3 on one thread took 141
  ms with 1 x 16 and 96 ms with 2 x 6 (1 x 8: 113, 3 x 4: 97), with
  `contract` 127 and 72 ms (3 x 4: 64-68; OpenBLAS 58-61 ms); f64 309 and
  193 ms, with `contract` 190 and 135 (OpenBLAS 121)."""


def panel_shape(target: TargetCpu) -> tuple[int, int]:
    """`PANEL_SHAPES`' entry for `target`, or its `panel`."""
    if target.panel:
        vectors, columns = target.panel.split("x")
        return int(vectors), int(columns)
    if target.vector_registers < 32:
        return PANEL_SHAPES[16, True]
    return PANEL_SHAPES[32, target.broadcast_registers]


PARALLEL_BLOCKS = 12
"""A cache-blocked product run on threads splits D into a multiple of this
many blocks (`_parallel_blocks`), a matvec its rows into this many at least:
12 blocks share evenly among 1, 2, 3, 4 or 6 threads, and closely among
more."""

L1_SHARE = 0.75
"""Of L1, what Ap (MR x KC) and the panel of Bp (KC x NR) a kernel call reads
may take; the rest holds the tile of D and the lines prefetched. With Ap
alone in half of L1 (KC = 256 on a 32 KiB L1), Ap and a panel of Bp filled
all of it: on the Zen 4, f32 1024^3 ran 1.15x slower than with KC = 192 or
128, f64 1.07x slower than with KC = 128 (one thread, loaded machine,
bench/results/gemm.md)."""

L2_SHARE = 1.0
"""Of L2, what D's MC x NC block and Bp's KC x NC may take. Half of L2 (the
rule before) made narrower column blocks, so A was packed more often: on the
Zen 4 (1 MiB L2), f64 1024^3 ran 1.07x and f32 2048^3 1.06x slower, f32
1024^3 and f64 512^3 the same (one thread, loaded machine)."""

PACK_PREFETCH_COLUMNS = 8
"""How many columns of A ahead the packing of a panel prefetches."""


@dataclass(frozen=True)
class Blocking:
    """Cache sizes the block sizes derive from, and when to block at all."""

    l1_bytes: int
    l2_bytes: int
    l3_bytes: int
    min_bytes: int
    """Products whose operands and result take fewer bytes keep the
    register-blocked kernel of products.py."""
    parallel_min_work: int = 0
    """Products of at least this many multiply-adds run on threads (0: none)."""

    def parallel(self, work: int) -> bool:
        """Whether a product of `work` multiply-adds runs on threads."""
        return 0 < self.parallel_min_work <= work

    def applies(self, rows: int, cols: int, depth: int, element: Attribute) -> bool:
        size = element_bytes(element) * (rows * depth + depth * cols + rows * cols)
        return size >= self.min_bytes and depth > 1


@dataclass(frozen=True)
class Gemm:
    """D = A·B (+ Acc), A R x K and Acc R x C readable along rows."""

    rows: int
    cols: int
    depth: int
    lhs: SSAValue
    rhs: SSAValue
    accumulator: SSAValue | None
    output: SSAValue
    """The buffer of D."""
    element_type: Attribute
    """Of D (and Acc); the factors may be narrower."""
    flags: FastMathFlagsAttr
    lanes: int
    widen: Callable[[Emitter, SSAValue], SSAValue]
    """A factor (scalar or vector) widened exactly to `element_type`."""
    rhs_along_rows: bool = False
    """B reads in vectors along its rows (down the depth, a column-major B):
    its full panels are packed in square tiles transposed in registers."""
    rhs_along_columns: bool = False
    """B reads in vectors along its columns (a row-major B): each row of a
    full panel is packed as vectors."""


def _ceil(a: int, b: int) -> int:
    return -(-a // b)


def _apply(e: Emitter, expr: AffineExpr, operands: Sequence[SSAValue]) -> SSAValue:
    """affine.apply of one expression over `operands` (dimensions d0, d1, ..)."""
    amap = AffineMapAttr(AffineMap(len(operands), 0, (expr,)))
    return e.emit(affine.ApplyOp(operands, amap))


def _min(
    e: Emitter, expr: AffineExpr, limit: int, operands: Sequence[SSAValue]
) -> SSAValue:
    """affine.min(`expr`, `limit`) over `operands` (dimensions d0, d1, ..)."""
    amap = AffineMap(len(operands), 0, (expr, AffineExpr.constant(limit)))
    return e.emit(affine.MinOp(operands, AffineMapAttr(amap)))


def _d(i: int) -> AffineExpr:
    return AffineExpr.dimension(i)


def _for(
    e: Emitter,
    bounds: tuple[int, int] | tuple[SSAValue, int, int, int],
    inits: Sequence[SSAValue],
    body: Callable[[Emitter, SSAValue, Sequence[SSAValue]], Sequence[SSAValue]],
) -> Sequence[SSAValue]:
    """affine.for over [lower, upper), or, for (%b, size, step, limit), over
    [%b*step, min(%b*step + size, limit)): one block of a blocked loop."""
    if len(bounds) == 2:
        return e.loop(bounds[0], bounds[1], inits, body)
    outer, size, step, limit = bounds
    upper = (_d(0) * step + size, AffineExpr.constant(limit))
    return _loop_of(e, outer, _d(0) * step, upper, inits, body)


def _loop_of(
    e: Emitter,
    operand: SSAValue,
    lower: AffineExpr,
    upper: tuple[AffineExpr, ...],
    inits: Sequence[SSAValue],
    body: Callable[[Emitter, SSAValue, Sequence[SSAValue]], Sequence[SSAValue]],
) -> Sequence[SSAValue]:
    """affine.for from `lower` to min(`upper`), both maps of `operand` (d0),
    carrying `inits`."""
    lower_map = AffineMapAttr(AffineMap(1, 0, (lower,)))
    upper_map = AffineMapAttr(AffineMap(1, 0, upper))
    block = Block(arg_types=[IndexType(), *(v.type for v in inits)])
    op = affine.ForOp.from_region(
        [operand],
        [operand],
        inits,
        [v.type for v in inits],
        lower_map,
        upper_map,
        Region(block),
    )
    yielded = body(e.at_end(block), block.args[0], block.args[1:])
    block.add_op(affine.YieldOp.get(*yielded))
    e.builder.insert(op)
    return op.results


def _step(
    e: Emitter, flags: FastMathFlagsAttr, a: SSAValue, b: SSAValue, acc: SSAValue
) -> SSAValue:
    """acc + a*b: one `math.fma` with `contract` (floats), else a separate
    multiply and add."""
    element = a.type.element_type if isinstance(a.type, VectorType) else a.type
    if FastMathFlag.ALLOW_CONTRACT in flags.data and not isinstance(
        element, IntegerType
    ):
        fma_flags = None if flags == FastMathFlagsAttr("none") else flags
        return e.emit(build.fma(a, b, acc, fma_flags))
    return e.emit(add(acc, e.emit(multiply(a, b, flags)), flags))


def _identity(e: Emitter, t: Attribute) -> SSAValue:
    """-0.0 for floats (x + -0 == x for every x), 0 for integers."""
    if isinstance(t, IntegerType):
        return e.scalar_constant(0, t)
    return e.scalar_constant(-0.0, t)


def blocked_gemm(
    e: Emitter,
    g: Gemm,
    blocking: Blocking,
    allocate: Callable[[MatrixType], SSAValue],
    count_temporary: Callable[[], None],
) -> None:
    """Emit D = A·B (+ Acc) as the packed, blocked loop nest of the module
    docs into `g.output`; `allocate` gives the packing buffers. A product of
    at least `blocking.parallel_min_work` multiply-adds runs its blocks of D
    on threads: one loop over the (row block, column block) pairs, marked
    parallel (`outline-parallel-loops`), each iteration packing into heap
    buffers of its own (`count_temporary` is called for each)."""
    parallel = blocking.parallel(g.rows * g.cols * g.depth)
    s = _Sizes.of(g, blocking, parallel)
    scratch = [
        MatrixType(s.mr, s.kc, g.element_type),
        MatrixType(s.nr, s.nc * s.kc, g.element_type),
    ]
    if s.depth_blocks > 1 and s.row_blocks > 1:
        scratch.append(MatrixType(s.mr, s.mc * s.nc * s.nr, g.element_type))

    def kernel_of(buffers: Sequence[SSAValue]) -> "_MicroKernel":
        d_packed = buffers[2] if len(buffers) > 2 else None
        return _MicroKernel(g, s, buffers[0], buffers[1], d_packed)

    if not parallel:
        kernel = kernel_of([allocate(t) for t in scratch])
        _each(
            e,
            (0, s.row_blocks),
            lambda f, ib: _each(
                f,
                (0, s.column_blocks),
                lambda h, jb: _block(h, g, s, kernel, ib, jb),
            ),
        )
        return

    def block(f: Emitter, unit: SSAValue) -> None:
        """Block (unit / column_blocks, unit % column_blocks) of D, with
        packing buffers of its own (hoisted out of the loop when outlined)."""
        assert isinstance(unit, BlockArgument)
        mark_parallel(unit.block)
        buffers = [f.emit(heap_buffer(t)) for t in scratch]
        for _ in buffers:
            count_temporary()
        ib = (
            _apply(f, _d(0) // s.column_blocks, [unit])
            if s.row_blocks > 1
            else f.index(0)
        )
        jb = _apply(f, _d(0) % s.column_blocks, [unit]) if s.row_blocks > 1 else unit
        _block(f, g, s, kernel_of(buffers), ib, jb)
        for buffer in buffers:
            f.builder.insert(memref.DeallocOp.get(buffer))

    _each(e, (0, s.row_blocks * s.column_blocks), block)


def _block(
    f: Emitter, g: Gemm, s: "_Sizes", kernel: "_MicroKernel", ib: SSAValue, jb: SSAValue
) -> None:
    """Block (ib, jb) of D: for each depth block, B's panels packed, then
    each panel of rows of A packed and run against every panel of B."""
    last_ib, last_jb = s.row_blocks - 1, s.column_blocks - 1

    def depth_block(i: Emitter, kb: SSAValue) -> None:
        _pack_rhs(i, g, s, kernel.b_packed, jb, kb)

        def panel_row(j: Emitter, ir: SSAValue, rows: int) -> None:
            """Ap = rows ir*MR.. of the depth block, against every
            panel of Bp."""
            _pack_lhs(j, g, s, kernel.a_packed, ir, kb, rows)
            _each_panel(
                j,
                s.column_split,
                jb,
                s.full_cols,
                lambda m, jr: kernel.emit(m, kb, ib, ir, jb, jr, rows, s.nr),
            )
            if s.rest_cols:
                _when(
                    j,
                    jb,
                    last_jb,
                    lambda m: kernel.emit(
                        m, kb, ib, ir, jb, m.index(s.full_cols), rows, s.rest_cols
                    ),
                )

        _each_panel(
            i, s.row_split, ib, s.full_rows, lambda j, ir: panel_row(j, ir, s.mr)
        )
        if s.rest_rows:
            _when(
                i,
                ib,
                last_ib,
                lambda j: panel_row(j, j.index(s.full_rows), s.rest_rows),
            )

    _each(f, (0, s.depth_blocks), depth_block)


def _each(
    e: Emitter,
    bounds: tuple[int, int] | tuple[SSAValue, int, int, int],
    body: Callable[[Emitter, SSAValue], None],
) -> None:
    """`body` for each index of `_for`'s bounds (nothing if they are empty)."""

    def one(f: Emitter, i: SSAValue, _: object) -> list[SSAValue]:
        body(f, i)
        return []

    if len(bounds) == 4 or bounds[1] > bounds[0]:
        _for(e, bounds, [], one)


def _each_panel(
    e: Emitter,
    split: "_Split",
    block: SSAValue,
    limit: int,
    body: Callable[[Emitter, SSAValue], None],
) -> None:
    """`body` for each whole panel (those below `limit`) of `block`."""

    def one(f: Emitter, i: SSAValue, _: object) -> list[SSAValue]:
        body(f, i)
        return []

    upper = (split.end(_d(0)), AffineExpr.constant(limit))
    _loop_of(e, block, split.start(_d(0)), upper, [], one)


@dataclass(frozen=True)
class _Sizes:
    """Panels and blocks of one product (module docs)."""

    mr: int
    """Rows per panel of A (`PANEL_SHAPES`)."""
    nr: int
    """Columns per panel of B (`PANEL_SHAPES`)."""
    kc: int
    """Depth per block."""
    nc: int
    """Panels of B per column block."""
    mc: int
    """Panels of A per row block."""
    full_rows: int
    rest_rows: int
    full_cols: int
    rest_cols: int
    depth_blocks: int
    row_split: "_Split"
    """The panels of A in row blocks (of at most `mc`)."""
    column_split: "_Split"
    """The panels of B in column blocks (of at most `nc`)."""

    @property
    def row_blocks(self) -> int:
        return self.row_split.blocks

    @property
    def column_blocks(self) -> int:
        return self.column_split.blocks

    @staticmethod
    def of(
        g: Gemm,
        blocking: Blocking,
        parallel: bool = False,
        target: TargetCpu | None = None,
    ) -> "_Sizes":
        """The sizes for `target` (None: the target being compiled for)."""
        size = element_bytes(g.element_type)
        vectors, nr = panel_shape(target or target_cpu())
        mr = vectors * g.lanes
        full_rows, rest_rows = divmod(g.rows, mr)
        full_cols, rest_cols = divmod(g.cols, nr)
        row_panels, col_panels = _ceil(g.rows, mr), _ceil(g.cols, nr)
        # Depth blocks of equal size: Ap and the panel of Bp a kernel call
        # reads take at most L1_SHARE of L1.
        l1_depth = int(blocking.l1_bytes * L1_SHARE) // ((mr + nr) * size)
        depth_blocks = _ceil(g.depth, max(1, l1_depth))
        kc = _ceil(g.depth, depth_blocks)
        if depth_blocks > 1:  # whole tiles of `lanes` rows of B per block
            kc = _ceil(kc, g.lanes) * g.lanes
            depth_blocks = _ceil(g.depth, kc)
        # D's MC x NC block and Bp's KC x NC take L2_SHARE of L2; MC x K of A at
        # most half of L3. A is packed once per column block, B once per row
        # block: the sizes with the least packing, B's counted thrice (its
        # panels are gathered across columns, A's copied in vectors).
        budget = int(blocking.l2_bytes * L2_SHARE) // size
        most_rows = min(
            row_panels, max(1, blocking.l3_bytes // 2 // (g.depth * size * mr))
        )

        def columns(mc: int) -> int:
            return min(col_panels, max(1, budget // (mc * mr + kc) // nr))

        def blocks_packing(row_blocks: int, column_blocks: int) -> int:
            return g.rows * g.depth * column_blocks + 3 * g.depth * g.cols * row_blocks

        def packing(mc: int) -> int:
            return blocks_packing(_ceil(row_panels, mc), _ceil(col_panels, columns(mc)))

        if parallel:
            row_blocks, column_blocks = _parallel_blocks(
                row_panels, col_panels, most_rows, columns, blocks_packing
            )
            mc, nc = _ceil(row_panels, row_blocks), _ceil(col_panels, column_blocks)
        else:
            mc = min(range(most_rows, 0, -1), key=packing)
            nc = columns(mc)
            # As many blocks, as even as they can be (the last one the
            # smallest).
            row_blocks, column_blocks = _ceil(row_panels, mc), _ceil(col_panels, nc)
            mc, nc = _ceil(row_panels, row_blocks), _ceil(col_panels, column_blocks)
        return _Sizes(
            mr,
            nr,
            kc,
            nc,
            mc,
            full_rows,
            rest_rows,
            full_cols,
            rest_cols,
            depth_blocks,
            _Split(row_panels, row_blocks, mc, parallel),
            _Split(col_panels, column_blocks, nc, parallel),
        )


def _parallel_blocks(
    row_panels: int,
    col_panels: int,
    most_rows: int,
    columns: Callable[[int], int],
    packing: Callable[[int, int], int],
) -> tuple[int, int]:
    """Row and column blocks of a product run on threads: a multiple of
    PARALLEL_BLOCKS blocks (as many as there are panels if fewer), each
    within the cache budget (`most_rows` panels of rows, `columns(mc)` of
    columns), with the least `packing`. Split evenly (`_Split`), 12 blocks
    give 1, 2, 3, 4 or 6 threads equal work (f32 512^2 in 11 column blocks
    gave one of 2 threads 18 of the 32 panels)."""
    candidates: list[tuple[bool, int, int, int, int]] = []
    for row_blocks in range(_ceil(row_panels, most_rows), row_panels + 1):
        mc = _ceil(row_panels, row_blocks)
        least = _ceil(col_panels, columns(mc))
        step = PARALLEL_BLOCKS // gcd(PARALLEL_BLOCKS, row_blocks)
        column_blocks = min(col_panels, _ceil(least, step) * step)
        units = row_blocks * column_blocks
        even = units % PARALLEL_BLOCKS == 0
        cost = packing(row_blocks, column_blocks)
        candidates.append(
            (not even, 0 if even else -units, cost, row_blocks, column_blocks)
        )
    _, _, _, row_blocks, column_blocks = min(candidates)
    return row_blocks, column_blocks


@dataclass(frozen=True)
class _Split:
    """`panels` panels in `blocks` consecutive blocks of at most `size`:
    `evenly`, block b starts at panel b*panels floordiv blocks (sizes differ
    by one at most, so whole runs of blocks given to threads differ by one
    panel per block at most), else at b*size (the last the smallest)."""

    panels: int
    blocks: int
    size: int
    evenly: bool

    def start(self, block: AffineExpr) -> AffineExpr:
        """The first panel of `block`."""
        if self.evenly and self.panels % self.blocks:
            return (block * self.panels) // self.blocks
        return block * self.size

    def end(self, block: AffineExpr) -> AffineExpr:
        """The first panel after `block` (but for the last block's partial
        panel, clamped by the loops)."""
        if self.evenly and self.panels % self.blocks:
            return (block * self.panels + self.panels) // self.blocks
        return block * self.size + self.size


@dataclass
class _MicroKernel:
    """Emits the register-blocked kernel on Ap and one panel of Bp for one
    depth block."""

    g: Gemm
    s: _Sizes
    a_packed: SSAValue
    b_packed: SSAValue
    d_packed: SSAValue | None
    """The partial sums of the result block between depth blocks, tile
    after tile: the micro-kernel's MR x NR tile (ir, jr) of block (ib, jb)
    is NR columns of MR rows from column ((ir - ib*MC)*NC + jr - jb*NC)*NR.
    Only when there are several depth blocks and several row blocks: a row
    block of fewer rows than D's is a column stride apart in D, and at a
    power-of-two stride such a block uses a fraction of L2's sets (f64
    1024 x 1024 ran ~10 % faster with the block contiguous)."""

    def emit(
        self,
        f: Emitter,
        kb: SSAValue,
        ib: SSAValue,
        ir: SSAValue,
        jb: SSAValue,
        jr: SSAValue,
        rows: int,
        cols: int,
    ) -> None:
        """D[ir*MR .. +rows, jr*NR .. +cols] over depth block kb: partial sums
        loaded (-0 for the first block), continued in k order, stored (the
        accumulator operand added after the last block)."""
        g, s, t = self.g, self.s, self.g.element_type
        vectors = [
            (start + n * w, w)
            for start, w, count in segments(rows, g.lanes)
            for n in range(count)
        ]
        row_at = [_apply(f, _d(0) * s.mr + lane, [ir]) for lane, _ in vectors]
        col_at = [_apply(f, _d(0) * s.nr + j, [jr]) for j in range(cols)]
        # The panel's first row in Bp.
        b_base = _apply(f, (_d(0) - s.column_split.start(_d(1))) * s.kc, [jr, jb])
        targets = [
            (v, r, c) for c in col_at for v, r in zip(vectors, row_at, strict=True)
        ]

        def fresh(h: Emitter) -> list[SSAValue]:
            zero = _identity(h, t)
            return [
                h.emit(vector.BroadcastOp(zero, VectorType(t, [w])))
                for (_, w), _, _ in targets
            ]

        # Where each sum waits between depth blocks: d_packed's tile, or D.
        partial_sums: list[tuple[SSAValue, list[SSAValue]]] = [
            (g.output, [c, r]) for _, r, c in targets
        ]
        if self.d_packed is not None:
            first_column = _apply(
                f,
                (
                    (_d(0) - s.row_split.start(_d(2))) * s.nc
                    + _d(1)
                    - s.column_split.start(_d(3))
                )
                * s.nr,
                [ir, jr, ib, jb],
            )
            partial_sums = [
                (
                    self.d_packed,
                    [_apply(f, _d(0) + j, [first_column]), f.index(lane)],
                )
                for j in range(cols)
                for lane, _ in vectors
            ]

        if s.depth_blocks > 1:
            self._prefetch_next_tile(f, partial_sums)

        def stored(h: Emitter) -> list[SSAValue]:
            return [
                h.emit(vector.LoadOp(buffer, at, VectorType(t, [w])))
                for ((_, w), _, _), (buffer, at) in zip(
                    targets, partial_sums, strict=True
                )
            ]

        def finished(h: Emitter, *, sums: Sequence[SSAValue]) -> list[SSAValue]:
            assert g.accumulator is not None
            return [
                h.emit(add(s, read_block(h, g.accumulator, r, c, w, True), g.flags))
                for s, ((_, w), r, c) in zip(sums, targets, strict=True)
            ]

        types = [VectorType(t, [w]) for (_, w), _, _ in targets]
        if s.depth_blocks == 1:
            accs = fresh(f)
        else:
            first = f.emit(arith.CmpiOp(kb, f.index(0), "eq"))
            accs = _if(f, first, types, fresh, stored)

        def depth_step(
            h: Emitter, kk: SSAValue, carried: Sequence[SSAValue]
        ) -> list[SSAValue]:
            a = [
                h.emit(
                    vector.LoadOp(
                        self.a_packed, [kk, h.index(lane)], VectorType(t, [w])
                    )
                )
                for lane, w in vectors
            ]
            b_row = _apply(h, _d(0) + _d(1), [b_base, kk])
            out: list[SSAValue] = []
            for j in range(cols):
                b = h.load_buffer(self.b_packed, j, b_row)
                broadcasts = {
                    w: h.emit(vector.BroadcastOp(b, VectorType(t, [w])))
                    for w in sorted({w for _, w in vectors}, reverse=True)
                }
                for i, (_, w) in enumerate(vectors):
                    out.append(
                        _step(h, g.flags, a[i], broadcasts[w], carried[len(out)])
                    )
            return out

        sums = list(_depth_loop(f, s, g.depth, kb, accs, depth_step))

        def store(h: Emitter, *, sums: Sequence[SSAValue]) -> list[SSAValue]:
            if g.accumulator is not None:
                sums = finished(h, sums=sums)
            for acc, (_, r, c) in zip(sums, targets, strict=True):
                h.builder.insert(vector.StoreOp(acc, g.output, [c, r]))
            return []

        def keep(h: Emitter) -> list[SSAValue]:
            for acc, (buffer, at) in zip(sums, partial_sums, strict=True):
                h.builder.insert(vector.StoreOp(acc, buffer, at))
            return []

        if s.depth_blocks == 1:
            store(f, sums=sums)
        else:
            last = f.emit(arith.CmpiOp(kb, f.index(s.depth_blocks - 1), "eq"))
            _if(f, last, [], partial(store, sums=sums), keep)

    def _prefetch_next_tile(
        self, f: Emitter, partial_sums: Sequence[tuple[SSAValue, list[SSAValue]]]
    ) -> None:
        """Prefetches (for writing) the partial sums the next kernel call
        loads: NR columns on, in D or in d_packed (clamped to the last
        column; the next row panel's first tile is left to the hardware).
        Issued before this call's k loop, they arrive while it runs;
        unfetched, they stalled each call's start (~5 % of f32 1024^3)."""
        s = self.s
        last = self.g.cols - 1 if self.d_packed is None else s.mc * s.nc * s.nr - 1
        for buffer, (c, row) in partial_sums:
            column = _min(f, _d(0) + s.nr, last, [c])
            f.builder.insert(PrefetchOp(buffer, [column, row], is_write=True))


def _depth_loop(
    e: Emitter,
    s: _Sizes,
    depth: int,
    kb: SSAValue,
    inits: Sequence[SSAValue],
    body: Callable[[Emitter, SSAValue, Sequence[SSAValue]], Sequence[SSAValue]],
) -> Sequence[SSAValue]:
    """affine.for over the offsets [0, min(KC, K - kb*KC)) of depth block kb."""
    if depth % s.kc == 0:
        return e.loop(0, s.kc, inits, body)
    upper = (AffineExpr.constant(s.kc), _d(0) * -s.kc + depth)
    return _loop_of(e, kb, AffineExpr.constant(0), upper, inits, body)


def _when(e: Emitter, block: SSAValue, last: int, body: Callable[[Emitter], None]):
    """`body` in the last block only (the one holding a partial panel)."""
    if last == 0:
        body(e)
        return
    is_last = e.emit(arith.CmpiOp(block, e.index(last), "eq"))
    then = Block()
    body(e.at_end(then))
    then.add_op(scf.YieldOp())
    e.builder.insert(scf.IfOp(is_last, [], Region(then)))


def _if(
    e: Emitter,
    condition: SSAValue,
    types: Sequence[Attribute],
    then: Callable[[Emitter], Sequence[SSAValue]],
    otherwise: Callable[[Emitter], Sequence[SSAValue]],
) -> list[SSAValue]:
    """scf.if yielding `then`'s values or `otherwise`'s."""
    regions: list[Region] = []
    for branch in (then, otherwise):
        block = Block()
        block.add_op(scf.YieldOp(*branch(e.at_end(block))))
        regions.append(Region(block))
    op = scf.IfOp(condition, types, regions[0], regions[1])
    e.builder.insert(op)
    return list(op.results)


def _pack_lhs(
    e: Emitter,
    g: Gemm,
    s: _Sizes,
    packed: SSAValue,
    ir: SSAValue,
    kb: SSAValue,
    rows: int,
) -> None:
    """Ap[k][0..rows) = rows ir*MR.. of column kb*KC + k of A, prefetching
    the column PACK_PREFETCH_COLUMNS on (A's columns are a stride apart, in
    different pages: the hardware prefetchers do not follow)."""

    def column(f: Emitter, kk: SSAValue, _: object) -> list[SSAValue]:
        k = _apply(f, _d(0) * s.kc + _d(1), [kb, kk])
        ahead = _min(
            f, _d(0) * s.kc + _d(1) + PACK_PREFETCH_COLUMNS, g.depth - 1, [kb, kk]
        )
        for start, w, count in segments(rows, g.lanes):
            for n in range(count):
                lane = start + n * w
                r = _apply(f, _d(0) * s.mr + lane, [ir])
                prefetch_block(f, g.lhs, r, ahead)
                block = g.widen(f, read_block(f, g.lhs, r, k, w, True))
                f.builder.insert(vector.StoreOp(block, packed, [kk, f.index(lane)]))
        return []

    _depth_loop(e, s, g.depth, kb, [], column)


def _pack_rhs(
    e: Emitter, g: Gemm, s: _Sizes, packed: SSAValue, jb: SSAValue, kb: SSAValue
) -> None:
    """Bp[(jr - jb*NC)*KC + k][0..NR) = columns jr*NR.. of row kb*KC + k of
    B, for each panel jr of column block jb: for a full panel, in vectors
    (`_pack_rhs_tiles`, or a vector per row of a row-major B), else (and
    for the rows left over) element by element."""

    def panel(f: Emitter, jr: SSAValue, cols: int) -> None:
        base = _apply(f, (_d(0) - s.column_split.start(_d(1))) * s.kc, [jr, jb])

        def row(h: Emitter, kk: SSAValue, _: object) -> list[SSAValue]:
            k = _apply(h, _d(0) * s.kc + _d(1), [kb, kk])
            at = _apply(h, _d(0) + _d(1), [base, kk])
            for j in range(cols):
                c = _apply(h, _d(0) * s.nr + j, [jr])
                h.store_buffer(g.widen(h, h.element(g.rhs, k, c)), packed, j, at)
            return []

        def row_in_vectors(h: Emitter, kk: SSAValue, _: object) -> list[SSAValue]:
            k = _apply(h, _d(0) * s.kc + _d(1), [kb, kk])
            at = _apply(h, _d(0) + _d(1), [base, kk])
            for j in range(0, cols, g.lanes):
                c = _apply(h, _d(0) * s.nr + j, [jr])
                block = g.widen(h, read_block(h, g.rhs, k, c, g.lanes, False))
                h.builder.insert(vector.StoreOp(block, packed, [at, h.index(j)]))
            return []

        full = cols == s.nr and s.nr % g.lanes == 0
        if full and g.rhs_along_columns:
            _depth_loop(f, s, g.depth, kb, [], row_in_vectors)
        elif full and g.rhs_along_rows:
            _pack_rhs_tiles(f, g, s, packed, jr, base, kb)
            # The rows of the depth block after its last whole tile: only
            # in the last block (the others are whole tiles, `_Sizes`).
            last = g.depth - (s.depth_blocks - 1) * s.kc
            if last % g.lanes:
                lower = _d(0) * -s.kc + (
                    (s.depth_blocks - 1) * s.kc + last // g.lanes * g.lanes
                )
                upper = (AffineExpr.constant(s.kc), _d(0) * -s.kc + g.depth)
                _loop_of(f, kb, lower, upper, [], row)
        else:
            _depth_loop(f, s, g.depth, kb, [], row)

    _each_panel(
        e,
        s.column_split,
        jb,
        s.full_cols,
        lambda f, jr: panel(f, jr, s.nr),
    )
    if s.rest_cols:
        _when(
            e,
            jb,
            s.column_blocks - 1,
            lambda f: panel(f, f.index(s.full_cols), s.rest_cols),
        )


def _pack_rhs_tiles(
    e: Emitter,
    g: Gemm,
    s: _Sizes,
    packed: SSAValue,
    jr: SSAValue,
    base: SSAValue,
    kb: SSAValue,
) -> None:
    """The whole `lanes` x `lanes` tiles of panel jr in depth block kb: per
    tile, `lanes` vectors down columns of B, transposed in registers into
    `lanes` rows of Bp (element by element, a column-major B is read across
    NR columns a stride apart: ~5 % of f32 1024^3)."""
    lanes = g.lanes

    def tile_rows(h: Emitter, q: SSAValue, _: object) -> list[SSAValue]:
        k = _apply(h, _d(0) * s.kc + _d(1) * lanes, [kb, q])
        for j0 in range(0, s.nr, lanes):
            lines = [
                g.widen(
                    h,
                    read_block(
                        h,
                        g.rhs,
                        k,
                        _apply(h, _d(0) * s.nr + j0 + j, [jr]),
                        lanes,
                        True,
                    ),
                )
                for j in range(lanes)
            ]
            for i, line in enumerate(transpose_tile(h, lines)):
                at = _apply(h, _d(0) + _d(1) * lanes + i, [base, q])
                h.builder.insert(vector.StoreOp(line, packed, [at, h.index(j0)]))
        return []

    upper = (
        AffineExpr.constant(s.kc // lanes),
        (_d(0) * -s.kc + g.depth) // lanes,
    )
    _loop_of(e, kb, AffineExpr.constant(0), upper, [], tile_rows)


MATVEC_COLUMNS = 8
"""Columns of a column-major matrix one pass over the result consumes."""


@dataclass(frozen=True)
class Gemv:
    """y = M·x (+ bias), M R x K: readable along rows (column-major) or, for
    a row-major matrix, along columns."""

    rows: int
    cols: int
    matrix: SSAValue
    vector: SSAValue
    bias: SSAValue | None
    element_type: Attribute
    """Of y (and the bias); M and x may be narrower."""
    flags: FastMathFlagsAttr
    lanes: int
    widen: Callable[[Emitter, SSAValue], SSAValue]
    """A factor (scalar or vector) widened exactly to `element_type`."""
    stored_bytes: int = 4
    """Bytes an element of M takes in the memory it is read from (the
    narrowest, if several): a row-major M is read a cache line of each row
    at a time."""
    line_start: Callable[[Emitter, Index], SSAValue] | None = None
    """The first column of row r (an index) at the start of a cache line,
    less than a line ahead, if the row-major memory M is read from has
    addresses (None: unknown, the steps start at column 0)."""


def blocked_matvec(
    e: Emitter,
    g: Gemv,
    along_rows: bool,
    blocking: Blocking,
    allocate: Callable[[MatrixType], SSAValue],
) -> SSAValue:
    """y = M·x (+ bias), each y(r) summed in k order from -0, the bias
    added last. A column-major M (`along_rows`) is read column after column
    (MATVEC_COLUMNS at a time, each a contiguous stream), updating blocks of
    y that stay in L1; a row-major M in square tiles of `lanes` rows by
    `lanes` columns, transposed in registers so that the lanes are rows."""
    t = g.element_type
    x = allocate(MatrixType(g.cols, 1, element_type_of(g.vector.type)))
    y = allocate(MatrixType(g.rows, 1, t))
    zero = e.index(0)
    e.builder.insert(vector.StoreOp(g.vector, x, [zero, zero]))
    if along_rows:
        _matvec_by_columns(e, g, x, y, blocking)
    else:
        _matvec_by_tiles(e, g, x, y, blocking.parallel(g.rows * g.cols))
    bias = g.bias
    if bias is not None:
        b = allocate(MatrixType(g.rows, 1, t))
        e.builder.insert(vector.StoreOp(bias, b, [zero, zero]))

        def add_bias(f: Emitter, r: Index, w: int) -> None:
            vt = VectorType(t, [w])
            at = [f.index(0), f.index(r)]
            total = add(
                f.emit(vector.LoadOp(y, at, vt)),
                f.emit(vector.LoadOp(b, at, vt)),
                g.flags,
            )
            f.builder.insert(vector.StoreOp(f.emit(total), y, at))

        for_each_segment(e, g.rows, g.lanes, add_bias)
    result = VectorType(t, [g.rows])
    return e.emit(vector.LoadOp(y, [zero, zero], result))


def _broadcast_x(
    e: Emitter, g: Gemv, x: SSAValue, k: Index, vt: VectorType
) -> SSAValue:
    """x(k), widened, in every lane of a vector of type `vt`."""
    return e.emit(vector.BroadcastOp(g.widen(e, e.load_buffer(x, k, 0)), vt))


def _matvec_by_columns(
    e: Emitter, g: Gemv, x: SSAValue, y: SSAValue, blocking: Blocking
) -> None:
    t, lanes = g.element_type, g.lanes
    per_block = max(1, blocking.l1_bytes // 2 // (element_bytes(t) * lanes))
    """Vectors of y per row block: half of L1."""
    full_vectors, rest = divmod(g.rows, lanes)
    parallel = blocking.parallel(g.rows * g.cols)
    if parallel:  # PARALLEL_BLOCKS row blocks at least, run on threads
        per_block = max(1, min(per_block, _ceil(full_vectors, PARALLEL_BLOCKS)))

    def fill(f: Emitter, r: Index, w: int) -> None:
        splat = f.emit(vector.BroadcastOp(_identity(f, t), VectorType(t, [w])))
        f.builder.insert(vector.StoreOp(splat, y, [f.index(0), f.index(r)]))

    for_each_segment(e, g.rows, lanes, fill)

    def column(f: Emitter, k0: Index, j: int) -> Index:
        return k0 + j if isinstance(k0, int) else _apply(f, _d(0) + j, [k0])

    def update(
        f: Emitter,
        r: Index,
        w: int,
        k0: Index,
        count: int,
        xs: list[SSAValue] | None = None,
    ) -> None:
        """y[r..r+w) += M[r..r+w, k0..k0+count) · x[k0..k0+count), in k order
        (`xs`: x's broadcasts, made before the loop over the rows)."""
        at = [f.index(0), f.index(r)]
        acc = f.emit(vector.LoadOp(y, at, VectorType(t, [w])))
        for j in range(count):
            k = column(f, k0, j)
            a = g.widen(f, read_block(f, g.matrix, r, k, w, True))
            vt = VectorType(t, [w])
            xk = _broadcast_x(f, g, x, k, vt) if xs is None else xs[j]
            acc = _step(f, g.flags, a, xk, acc)
        f.builder.insert(vector.StoreOp(acc, y, at))

    full_steps, last = divmod(g.cols, MATVEC_COLUMNS)

    def columns(f: Emitter, rows: Callable[[Emitter, Index, int], None]) -> None:
        """Every step of MATVEC_COLUMNS columns (then the last, narrower
        one) over the rows `rows` emits."""

        def one(h: Emitter, s: SSAValue, _: object) -> list[SSAValue]:
            k0 = _apply(h, _d(0) * MATVEC_COLUMNS, [s])
            rows(h, k0, MATVEC_COLUMNS)
            return []

        if full_steps:
            f.loop(0, full_steps, [], one)
        if last:
            rows(f, full_steps * MATVEC_COLUMNS, last)

    def row_block(f: Emitter, rb: SSAValue, _: object) -> list[SSAValue]:
        if parallel:
            assert isinstance(rb, BlockArgument)
            mark_parallel(rb.block)

        def rows(h: Emitter, k0: Index, count: int) -> None:
            # On threads, x's broadcasts before the loop over the rows (in the
            # outlined function LLVM must assume the stores to y may alias x,
            # and reloads it for every vector), and the loop over a block's
            # rows marked so that a thread sweeps each step of columns over
            # all its rows at once (`outline-parallel-loops`), not block by
            # block: f32 4096², one thread, 3.9 -> 2.4 ms.
            xs = (
                [
                    _broadcast_x(h, g, x, column(h, k0, j), VectorType(t, [lanes]))
                    for j in range(count)
                ]
                if parallel
                else None
            )

            def vec(i: Emitter, v: SSAValue, _: object) -> list[SSAValue]:
                if parallel:
                    assert isinstance(v, BlockArgument)
                    mark_parallel_block(v.block)
                update(i, _apply(i, _d(0) * lanes, [v]), lanes, k0, count, xs)
                return []

            _for(h, (rb, per_block, per_block, full_vectors), [], vec)

        columns(f, rows)
        return []

    if full_vectors:
        e.loop(0, _ceil(full_vectors, per_block), [], row_block)
    if rest:

        def tail(h: Emitter, k0: Index, count: int) -> None:
            for start, w, n in segments(rest, lanes):
                for i in range(n):
                    update(h, full_vectors * lanes + start + i * w, w, k0, count)

        columns(e, tail)


CACHE_LINE = 64
"""Bytes of a cache line."""


@dataclass(frozen=True)
class RowMajorMemory:
    """Memory with addresses that a matrix is read from along its rows'
    elements (row-major): a row-major matrix load's (the user's memref), or
    the buffer `memref<RxK>` of a K×R matrix read through a fused transpose
    (a C-ordered function argument, `abi.py`)."""

    memref: SSAValue
    load: LoadOp | None
    """The load, if the memory is a load's; else `memref` is a buffer."""

    @property
    def pitch(self) -> int | None:
        """Elements from a row to the next, if known at compile time."""
        if self.load is not None:
            stride = self.load.stride()
            return stride if isinstance(stride, int) else None
        t = self.memref.type
        assert isinstance(t, MemRefType) and isinstance(t.layout, NoneAttr)
        return t.get_shape()[1]

    def row(self, e: Emitter, r: Index) -> Index:
        """The element of `memref` holding column 0 of row r."""
        if self.load is not None:
            return e.position(self.load, r, 0)
        pitch = self.pitch
        assert pitch is not None
        return (
            r * pitch if isinstance(r, int) else e.emit(arith.MuliOp(r, e.index(pitch)))
        )


def line_start(e: Emitter, r: Index, *, memory: RowMajorMemory, bits: int) -> SSAValue:
    """The first column of row r of `memory` (elements of `bits` bits: 4 is
    two a byte, and row r must start at a byte) whose address is a multiple
    of CACHE_LINE (less than a line ahead)."""
    base = e.emit(memref.ExtractAlignedPointerAsIndexOp.get(memory.memref))
    row = e.index(memory.row(e, r))
    packed = bits == 4
    if packed:
        at = e.emit(arith.ShRUIOp(row, e.index(1)))
    else:
        at = e.emit(arith.MuliOp(row, e.index(bits // 8)))
    address = e.emit(arith.AddiOp(base, at))
    ahead = e.emit(arith.SubiOp(e.index(0), address))
    in_line = e.emit(arith.AndIOp(ahead, e.index(CACHE_LINE - 1)))
    if packed:
        return e.emit(arith.MuliOp(in_line, e.index(2)))
    return e.emit(arith.DivUIOp(in_line, e.index(bits // 8)))


_Keep = Callable[[Emitter, int], SSAValue]
"""Whether column j of a masked step is added (an i1)."""


def steps_in_lines(
    e: Emitter,
    first: SSAValue,
    cols: int,
    span: int,
    inits: Sequence[SSAValue],
    body: Callable[
        [Emitter, Index, Sequence[SSAValue], _Keep | None], Sequence[SSAValue]
    ],
) -> Sequence[SSAValue]:
    """Columns 0 .. cols-1 (cols >= span) in k order by steps of `span`
    columns, `body(e, k0, carried, keep)` each, carrying `inits`: the
    columns before `first` (a `line_start`) in a step at 0, the whole steps
    from `first` while one fits, then the columns after them in a step at
    cols - span. An `scf.for` with `arith` index math: `first` comes from an
    address, no affine dimension or symbol (upstream MLIR refuses it in
    affine maps). One loop runs them all; `body` is emitted twice:
    for the whole steps (`keep` None) and, under an `scf.if`, for the two
    partial ones (`keep(j)`: column k0 + j is one of theirs). Emitted once
    each, the partial steps tripled the code of a kernel (a row-major FP8
    matvec's was ~9000 lines of LLVM IR)."""
    columns = e.emit(build.binary(arith.SubiOp, e.index(cols), first))
    count = e.emit(build.binary(arith.DivUIOp, columns, e.index(span)))
    stepped = e.emit(build.binary(arith.MuliOp, count, e.index(span)))
    done = e.emit(build.binary(arith.AddiOp, first, stepped))
    after = e.emit(build.binary(arith.AddiOp, count, e.index(1)))
    block = Block(arg_types=[IndexType(), *(v.type for v in inits)])
    h = e.at_end(block)
    t, carried = block.args[0], block.args[1:]
    at_start = h.emit(arith.CmpiOp(t, h.index(0), "eq"))

    def partial_step(f: Emitter) -> Sequence[SSAValue]:
        def pick(start: Index, end: Index) -> SSAValue:
            return f.emit(arith.SelectOp(at_start, f.index(start), f.index(end)))

        k0, low, high = pick(0, cols - span), pick(0, done), pick(first, cols)

        def keep(g: Emitter, j: int) -> SSAValue:
            k = g.index(offset(g, k0, j))
            above = g.emit(arith.CmpiOp(k, low, "uge"))
            return g.emit(arith.AndIOp(above, g.emit(arith.CmpiOp(k, high, "ult"))))

        return body(f, k0, carried, keep)

    def whole_step(f: Emitter) -> Sequence[SSAValue]:
        skipped = f.emit(build.binary(arith.SubiOp, t, f.index(1)))
        k0 = f.emit(build.binary(arith.MuliOp, skipped, f.index(span)))
        return body(f, f.emit(build.binary(arith.AddiOp, k0, first)), carried, None)

    at_end = h.emit(arith.CmpiOp(t, after, "eq"))
    first_or_last = h.emit(arith.OrIOp(at_start, at_end))
    results = _if(h, first_or_last, [v.type for v in inits], partial_step, whole_step)
    h.builder.insert(scf.YieldOp(*results))
    # (a partial step without columns of its own is skipped: rows that start
    # on a line's start, or end on a line's end)
    none_before = e.emit(arith.CmpiOp(first, e.index(0), "eq"))
    start = e.emit(arith.SelectOp(none_before, e.index(1), e.index(0)))
    none_after = e.emit(arith.CmpiOp(done, e.index(cols), "eq"))
    beyond = e.emit(build.binary(arith.AddiOp, after, e.index(1)))
    total = e.emit(arith.SelectOp(none_after, after, beyond))
    loop = scf.ForOp(start, total, e.index(1), inits, Region(block))
    e.builder.insert(loop)
    return loop.results


def _matvec_by_tiles(
    e: Emitter, g: Gemv, x: SSAValue, y: SSAValue, parallel: bool
) -> None:
    """Tiles of `lanes` rows: each step reads a cache line of every row (one
    load a row) from the first column at a line's start on (`line_start`),
    splits it in square tiles, transposes each in registers and adds its
    columns in k order. The rows of a tile map to the same L1 set when they
    are a multiple of 4 KiB apart: a line read in two steps came from L2
    twice (f16 1.7x slower per weight at K = 4096 than at 4064). The columns
    before the first line and after the last whole one take a step of the
    first and of the last columns whose other columns are masked (the sums
    keep their k order); without `line_start` or a whole step of columns,
    steps from column 0, then narrower steps, then element by element."""
    t, lanes = g.element_type, g.lanes
    vt = VectorType(t, [lanes])
    full_tiles, rest_rows = divmod(g.rows, lanes)
    span = lanes * max(1, CACHE_LINE // (lanes * g.stored_bytes))
    """Columns of a step: a cache line of each row."""

    def tile_rows(f: Emitter, it: SSAValue, _: object) -> list[SSAValue]:
        if parallel:
            assert isinstance(it, BlockArgument)
            mark_parallel(it.block)
        r0 = _apply(f, _d(0) * lanes, [it])
        rows = [_apply(f, _d(0) * lanes + i, [it]) for i in range(lanes)]

        def add_columns(
            h: Emitter, k0: Index, width: int, acc: SSAValue, keep: _Keep | None = None
        ) -> SSAValue:
            """acc plus columns k0 + j for j below `width` (a multiple of
            `lanes`; with `keep`, only where `keep(j)` holds), one load of
            each row."""
            blocks = [read_block(h, g.matrix, r, k0, width, False) for r in rows]
            for part in range(0, width, lanes):
                lines = [lanes_of(h, b, part, lanes) for b in blocks]
                for j, narrow in enumerate(transpose_tile(h, lines)):
                    column = g.widen(h, narrow)
                    k = offset(h, k0, part + j)
                    xk = _broadcast_x(h, g, x, k, vt)
                    added = _step(h, g.flags, column, xk, acc)
                    acc = (
                        added
                        if keep is None
                        else h.emit(arith.SelectOp(keep(h, part + j), added, acc))
                    )
            return acc

        def gathered(
            h: Emitter, k: SSAValue, carried: Sequence[SSAValue]
        ) -> list[SSAValue]:
            column = h.emit(
                vector.BroadcastOp(g.widen(h, h.element(g.matrix, rows[0], k)), vt)
            )
            for i in range(1, lanes):
                value = g.widen(h, h.element(g.matrix, rows[i], k))
                column = h.emit(vector.InsertOp(value, column, [i]))
            return [_step(h, g.flags, column, _broadcast_x(h, g, x, k, vt), carried[0])]

        acc = f.emit(vector.BroadcastOp(_identity(f, t), vt))
        if g.line_start is not None and g.cols >= span:

            def line(
                h: Emitter,
                k0: Index,
                carried: Sequence[SSAValue],
                keep: _Keep | None,
            ) -> list[SSAValue]:
                return [add_columns(h, k0, span, carried[0], keep)]

            first = g.line_start(f, r0)
            (acc,) = steps_in_lines(f, first, g.cols, span, [acc], line)
            f.builder.insert(vector.StoreOp(acc, y, [f.index(0), r0]))
            return []

        def step(
            h: Emitter, s: SSAValue, carried: Sequence[SSAValue]
        ) -> list[SSAValue]:
            return [add_columns(h, _apply(h, _d(0) * span, [s]), span, carried[0])]

        full_steps, rest = divmod(g.cols, span)
        if full_steps:
            acc = f.loop(0, full_steps, [acc], step)[0]
        narrow_end = full_steps * span + rest // lanes * lanes
        for k0 in range(full_steps * span, narrow_end, lanes):
            acc = add_columns(f, k0, lanes, acc)
        if narrow_end < g.cols:
            acc = f.loop(narrow_end, g.cols, [acc], gathered)[0]
        f.builder.insert(vector.StoreOp(acc, y, [f.index(0), r0]))
        return []

    if full_tiles:
        e.loop(0, full_tiles, [], tile_rows)
    for r in range(full_tiles * lanes, full_tiles * lanes + rest_rows):
        total = dot(
            e,
            lambda f, k, r=r: g.widen(f, f.element(g.matrix, r, k)),
            lambda f, k: g.widen(f, f.load_buffer(x, k, 0)),
            g.cols,
            g.flags,
        )
        e.store_buffer(total, y, r, 0)

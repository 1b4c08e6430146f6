"""Cache-blocked, packed products for matrices that outgrow the caches.

The structure of high-performance GEMM (Goto and van de Geijn's, as in BLIS),
for D = A·B (+ Acc) of an R x K by a K x C matrix:

    pack A into panels of MR rows:      Ap[i][k][0..MR)  (rows past R zero)
    pack B into panels of NR columns:   Bp[j][k][0..NR)  (columns past C zero)
    for jc in blocks of NC columns:         KC x NC of Bp stays in L3
      for pc in blocks of KC of the depth:
        for ic in blocks of MC rows:        MC x KC of Ap stays in L2
          for jr in panels of NR columns:   KC x NR of Bp stays in L1
            for ir in panels of MR rows:    streamed from L2
              micro-kernel: MR x NR sums held in MR/lanes x NR vector
              registers, k over the block: per k, MR/lanes contiguous vector
              loads of Ap, NR broadcasts of Bp, (MR/lanes)·NR multiply-adds

Every access of the loop nest is sequential within a panel (the packing
makes it so), which is what the hardware prefetchers follow.

Rounding order (docs/matrix-dialect.md's): a sum is never split. The first depth block
starts each sum from -0 (the additive identity of every float, so the first
step gives a(0)*b(0) exactly, even a -0 or a NaN), the others continue the
partial sums the previous block left in the result buffer, k = 0, 1, ..,
K-1; an accumulator operand is added last. Without `contract` each step is a
separate multiply and add, with it one `math.fma`. `reassoc` reorders
nothing here: the vectors already run across rows.

Block sizes (`Blocking`, from the pass options): KC so that a KC x NR panel
of Bp takes half of L1, MC so that an MC x KC block of Ap takes half of L2,
NC so that a KC x NC block of Bp takes half of the L3 bytes given.
"""

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import partial

from xdsl.dialects import affine, arith, math, scf, vector
from xdsl.dialects.arith import FastMathFlagsAttr
from xdsl.dialects.builtin import AffineMapAttr, IndexType, IntegerType, VectorType
from xdsl.dialects.utils import FastMathFlag
from xdsl.ir import Attribute, Block, Region, SSAValue
from xdsl.ir.affine import AffineExpr, AffineMap

from mx.dialects.matrix import MatrixType, element_type_of
from mx.lowering.matrix_to_affine.buffers import element_bytes
from mx.lowering.matrix_to_affine.elements import Emitter, Index, add, multiply
from mx.lowering.matrix_to_affine.products import dot
from mx.lowering.matrix_to_affine.vectors import (
    for_each_segment,
    read_block,
    segments,
    transpose_tile,
)

PANEL_VECTORS = 2
"""Machine vectors per panel of rows of A (MR = PANEL_VECTORS * lanes)."""

PANEL_COLUMNS = 12
"""Columns per panel of B (NR): 2 x 12 = 24 accumulator registers of the 32
of AVX-512, leaving room for the vectors of A and the broadcasts of B."""


@dataclass(frozen=True)
class Blocking:
    """Cache sizes the block sizes derive from, and when to block at all."""

    l1_bytes: int
    l2_bytes: int
    l3_bytes: int
    min_bytes: int
    """Products whose operands and result take fewer bytes keep the
    register-blocked kernel of products.py."""

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


def _ceil(a: int, b: int) -> int:
    return -(-a // b)


def _apply(e: Emitter, expr: AffineExpr, operands: Sequence[SSAValue]) -> SSAValue:
    """affine.apply of one expression over `operands` (dimensions d0, d1, ..)."""
    amap = AffineMapAttr(AffineMap(len(operands), 0, (expr,)))
    return e.emit(affine.ApplyOp(operands, amap))


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
    lower = AffineMapAttr(AffineMap(1, 0, (_d(0) * step,)))
    upper = AffineMapAttr(
        AffineMap(1, 0, (_d(0) * step + size, AffineExpr.constant(limit)))
    )
    block = Block(arg_types=[IndexType(), *(v.type for v in inits)])
    op = affine.ForOp.from_region(
        [outer], [outer], inits, [v.type for v in inits], lower, upper, Region(block)
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
        return e.emit(math.FmaOp(a, b, acc, fma_flags))
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
) -> None:
    """Emit D = A·B (+ Acc) as the packed, blocked loop nest of the module
    docs into `g.output`; `allocate` gives the packing buffers."""
    t = g.element_type
    size = element_bytes(t)
    mr, nr = PANEL_VECTORS * g.lanes, PANEL_COLUMNS
    full_rows, rest_rows = divmod(g.rows, mr)
    full_cols, rest_cols = divmod(g.cols, nr)
    kc = max(1, min(g.depth, blocking.l1_bytes // 2 // (nr * size)))
    mc = max(1, blocking.l2_bytes // 2 // (kc * size * mr))
    nc = max(1, blocking.l3_bytes // 2 // (kc * size * nr))
    a_packed = allocate(MatrixType(mr, _ceil(g.rows, mr) * g.depth, t))
    b_packed = allocate(MatrixType(nr, _ceil(g.cols, nr) * g.depth, t))
    _pack_lhs(e, g, mr, a_packed)
    _pack_rhs(e, g, nr, b_packed)
    kernel = _MicroKernel(g, kc, a_packed, b_packed)

    def depth_blocks(f: Emitter, body: Callable[[Emitter, SSAValue], None]) -> None:
        def one(h: Emitter, kb: SSAValue, _: object) -> list[SSAValue]:
            body(h, kb)
            return []

        f.loop(0, kernel.depth_blocks, [], one)

    def panels(
        f: Emitter,
        count: int,
        per_block: int,
        body: Callable[[Emitter, SSAValue, SSAValue], None],
    ) -> None:
        """Blocks of `per_block` of the first `count` panels; `body(f,
        block, panel)` for each panel."""

        def block(h: Emitter, b: SSAValue, _: object) -> list[SSAValue]:
            def panel(i: Emitter, p: SSAValue, _: object) -> list[SSAValue]:
                body(i, b, p)
                return []

            _for(h, (b, per_block, per_block, count), [], panel)
            return []

        if count:
            f.loop(0, _ceil(count, per_block), [], block)

    # Full panels: the nest of the module docs.
    def column_block(f: Emitter, jb: SSAValue, _: object) -> list[SSAValue]:
        def depth_block(h: Emitter, kb: SSAValue) -> None:
            def row_block(i: Emitter, ib: SSAValue, _: object) -> list[SSAValue]:
                def col_panel(j: Emitter, jr: SSAValue, _: object) -> list[SSAValue]:
                    def row_panel(
                        m: Emitter, ir: SSAValue, _: object
                    ) -> list[SSAValue]:
                        kernel.emit(m, kb, ir, jr, mr, nr)
                        return []

                    _for(j, (ib, mc, mc, full_rows), [], row_panel)
                    return []

                _for(i, (jb, nc, nc, full_cols), [], col_panel)
                return []

            if full_rows:
                h.loop(0, _ceil(full_rows, mc), [], row_block)

        depth_blocks(f, depth_block)
        return []

    if full_cols:
        e.loop(0, _ceil(full_cols, nc), [], column_block)
    # The last, partial panels: kernels on fewer rows or columns.
    if rest_cols:
        tail = e.index(full_cols)

        def last_columns(f: Emitter, kb: SSAValue) -> None:
            panels(
                f,
                full_rows,
                mc,
                lambda h, _, ir: kernel.emit(h, kb, ir, tail, mr, rest_cols),
            )
            if rest_rows:
                kernel.emit(f, kb, f.index(full_rows), tail, rest_rows, rest_cols)

        depth_blocks(e, last_columns)
    if rest_rows:
        corner = e.index(full_rows)

        def last_rows(f: Emitter, kb: SSAValue) -> None:
            panels(
                f,
                full_cols,
                nc,
                lambda h, _, jr: kernel.emit(h, kb, corner, jr, rest_rows, nr),
            )

        depth_blocks(e, last_rows)


@dataclass
class _MicroKernel:
    """Emits the register-blocked kernel on one panel of Ap and one of Bp
    for one depth block."""

    g: Gemm
    kc: int
    a_packed: SSAValue
    b_packed: SSAValue

    @property
    def depth_blocks(self) -> int:
        return _ceil(self.g.depth, self.kc)

    def emit(
        self,
        f: Emitter,
        kb: SSAValue,
        ir: SSAValue,
        jr: SSAValue,
        rows: int,
        cols: int,
    ) -> None:
        """D[ir*MR .. +rows, jr*NR .. +cols] over depth block kb: partial sums
        loaded (-0 for the first block), continued in k order, stored (the
        accumulator operand added after the last block)."""
        g, t, k = self.g, self.g.element_type, self.g.depth
        mr = PANEL_VECTORS * g.lanes
        vectors = [
            (start + n * w, w)
            for start, w, count in segments(rows, g.lanes)
            for n in range(count)
        ]
        row_at = [_apply(f, _d(0) * mr + lane, [ir]) for lane, _ in vectors]
        col_at = [_apply(f, _d(0) * PANEL_COLUMNS + j, [jr]) for j in range(cols)]
        targets = [
            (v, r, c) for c in col_at for v, r in zip(vectors, row_at, strict=True)
        ]

        def fresh(h: Emitter) -> list[SSAValue]:
            zero = _identity(h, t)
            return [
                h.emit(vector.BroadcastOp(zero, VectorType(t, [w])))
                for (_, w), _, _ in targets
            ]

        def stored(h: Emitter) -> list[SSAValue]:
            return [
                h.emit(vector.LoadOp(g.output, [c, r], VectorType(t, [w])))
                for (_, w), r, c in targets
            ]

        def finished(h: Emitter, *, sums: Sequence[SSAValue]) -> list[SSAValue]:
            assert g.accumulator is not None
            return [
                h.emit(add(s, read_block(h, g.accumulator, r, c, w, True), g.flags))
                for s, ((_, w), r, c) in zip(sums, targets, strict=True)
            ]

        types = [VectorType(t, [w]) for (_, w), _, _ in targets]
        if self.depth_blocks == 1:
            accs = fresh(f)
        else:
            first = f.emit(arith.CmpiOp(kb, f.index(0), "eq"))
            accs = _if(f, first, types, fresh, stored)

        def depth_step(
            h: Emitter, kk: SSAValue, carried: Sequence[SSAValue]
        ) -> list[SSAValue]:
            a_row = _apply(h, _d(0) * k + _d(1), [ir, kk])
            b_row = _apply(h, _d(0) * k + _d(1), [jr, kk])
            a = [
                h.emit(
                    vector.LoadOp(
                        self.a_packed, [a_row, h.index(lane)], VectorType(t, [w])
                    )
                )
                for lane, w in vectors
            ]
            out: list[SSAValue] = []
            for j in range(cols):
                b = h.load_buffer(self.b_packed, j, b_row)
                for i, (_, w) in enumerate(vectors):
                    broadcast = h.emit(vector.BroadcastOp(b, VectorType(t, [w])))
                    out.append(_step(h, g.flags, a[i], broadcast, carried[len(out)]))
            return out

        sums = list(_for(f, (kb, self.kc, self.kc, k), accs, depth_step))

        def unchanged(_: Emitter) -> list[SSAValue]:
            return sums

        if g.accumulator is not None:
            if self.depth_blocks == 1:
                sums = finished(f, sums=sums)
            else:
                last = f.emit(arith.CmpiOp(kb, f.index(self.depth_blocks - 1), "eq"))
                sums = _if(f, last, types, partial(finished, sums=sums), unchanged)
        for acc, (_, r, c) in zip(sums, targets, strict=True):
            f.builder.insert(vector.StoreOp(acc, g.output, [c, r]))


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


def _pack_lhs(e: Emitter, g: Gemm, mr: int, packed: SSAValue) -> None:
    """Ap[i*K + k][0..MR) = rows i*MR.. of column k of A, zero past the last row."""
    t, lanes, k = g.element_type, g.lanes, g.depth

    def panel(f: Emitter, first_row: Index, panel_index: Index, rows: int) -> None:
        def column(h: Emitter, kk: SSAValue, _: object) -> list[SSAValue]:
            row = (
                h.emit(arith.AddiOp(h.index(panel_index * k), kk))
                if isinstance(panel_index, int)
                else _apply(h, _d(0) * k + _d(1), [panel_index, kk])
            )
            for start, w, count in segments(rows, lanes):
                for n in range(count):
                    lane = start + n * w
                    r = (
                        first_row + lane
                        if isinstance(first_row, int)
                        else _apply(h, _d(0) + lane, [first_row])
                    )
                    block = g.widen(h, read_block(h, g.lhs, r, kk, w, True))
                    h.builder.insert(
                        vector.StoreOp(block, packed, [row, h.index(lane)])
                    )
            for start, w, count in segments(mr - rows, lanes):
                zero = h.emit(vector.BroadcastOp(_identity(h, t), VectorType(t, [w])))
                for n in range(count):
                    lane = rows + start + n * w
                    h.builder.insert(vector.StoreOp(zero, packed, [row, h.index(lane)]))
            return []

        f.loop(0, k, [], column)

    full, rest = divmod(g.rows, mr)
    if full:

        def each(f: Emitter, i: SSAValue, _: object) -> list[SSAValue]:
            panel(f, _apply(f, _d(0) * mr, [i]), i, mr)
            return []

        e.loop(0, full, [], each)
    if rest:
        panel(e, full * mr, full, rest)


def _pack_rhs(e: Emitter, g: Gemm, nr: int, packed: SSAValue) -> None:
    """Bp[j*K + k][0..NR) = columns j*NR.. of row k of B, zero past the last
    column."""
    t, k = g.element_type, g.depth

    def panel(f: Emitter, panel_index: Index, cols: int) -> None:
        def row(h: Emitter, kk: SSAValue, _: object) -> list[SSAValue]:
            at = (
                h.emit(arith.AddiOp(h.index(panel_index * k), kk))
                if isinstance(panel_index, int)
                else _apply(h, _d(0) * k + _d(1), [panel_index, kk])
            )
            for j in range(nr):
                if j < cols:
                    c = (
                        panel_index * nr + j
                        if isinstance(panel_index, int)
                        else _apply(h, _d(0) * nr + j, [panel_index])
                    )
                    value = g.widen(h, h.element(g.rhs, kk, c))
                else:
                    value = _identity(h, t)
                h.store_buffer(value, packed, j, at)
            return []

        f.loop(0, k, [], row)

    full, rest = divmod(g.cols, nr)
    if full:

        def each(f: Emitter, j: SSAValue, _: object) -> list[SSAValue]:
            panel(f, j, nr)
            return []

        e.loop(0, full, [], each)
    if rest:
        panel(e, full, rest)


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
        _matvec_by_tiles(e, g, x, y)
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

    def fill(f: Emitter, r: Index, w: int) -> None:
        splat = f.emit(vector.BroadcastOp(_identity(f, t), VectorType(t, [w])))
        f.builder.insert(vector.StoreOp(splat, y, [f.index(0), f.index(r)]))

    for_each_segment(e, g.rows, lanes, fill)

    def update(f: Emitter, r: Index, w: int, k0: Index, count: int) -> None:
        """y[r..r+w) += M[r..r+w, k0..k0+count) · x[k0..k0+count), in k order."""
        at = [f.index(0), f.index(r)]
        acc = f.emit(vector.LoadOp(y, at, VectorType(t, [w])))
        for j in range(count):
            k = k0 + j if isinstance(k0, int) else _apply(f, _d(0) + j, [k0])
            a = g.widen(f, read_block(f, g.matrix, r, k, w, True))
            acc = _step(
                f, g.flags, a, _broadcast_x(f, g, x, k, VectorType(t, [w])), acc
            )
        f.builder.insert(vector.StoreOp(acc, y, at))

    full_vectors, rest = divmod(g.rows, lanes)
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
        def rows(h: Emitter, k0: Index, count: int) -> None:
            def vec(i: Emitter, v: SSAValue, _: object) -> list[SSAValue]:
                update(i, _apply(i, _d(0) * lanes, [v]), lanes, k0, count)
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


def _matvec_by_tiles(e: Emitter, g: Gemv, x: SSAValue, y: SSAValue) -> None:
    t, lanes = g.element_type, g.lanes
    vt = VectorType(t, [lanes])
    full_tiles, rest_rows = divmod(g.rows, lanes)
    full_steps, last = divmod(g.cols, lanes)

    def tile_rows(f: Emitter, it: SSAValue, _: object) -> list[SSAValue]:
        r0 = _apply(f, _d(0) * lanes, [it])
        rows = [_apply(f, _d(0) * lanes + i, [it]) for i in range(lanes)]

        def step(
            h: Emitter, s: SSAValue, carried: Sequence[SSAValue]
        ) -> list[SSAValue]:
            k0 = _apply(h, _d(0) * lanes, [s])
            lines = [read_block(h, g.matrix, r, k0, lanes, False) for r in rows]
            acc = carried[0]
            for j, narrow in enumerate(transpose_tile(h, lines)):
                column = g.widen(h, narrow)
                k = _apply(h, _d(0) * lanes + j, [s])
                acc = _step(h, g.flags, column, _broadcast_x(h, g, x, k, vt), acc)
            return [acc]

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
        if full_steps:
            acc = f.loop(0, full_steps, [acc], step)[0]
        if last:
            acc = f.loop(full_steps * lanes, g.cols, [acc], gathered)[0]
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

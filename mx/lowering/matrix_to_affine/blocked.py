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

Rounding order (matrix.md's): a sum is never split. The first depth block
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

from mx.dialects.matrix import MatrixType
from mx.lowering.matrix_to_affine.buffers import element_bytes
from mx.lowering.matrix_to_affine.elements import Emitter, Index, add, multiply
from mx.lowering.matrix_to_affine.vectors import read_block, segments

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
    flags: FastMathFlagsAttr
    lanes: int


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

    def step(self, f: Emitter, a: SSAValue, b: SSAValue, acc: SSAValue) -> SSAValue:
        """acc + a*b, fused with `contract`."""
        g = self.g
        if FastMathFlag.ALLOW_CONTRACT in g.flags.data and not isinstance(
            g.element_type, IntegerType
        ):
            flags = None if g.flags == FastMathFlagsAttr("none") else g.flags
            return f.emit(math.FmaOp(a, b, acc, flags))
        return f.emit(add(acc, f.emit(multiply(a, b, g.flags)), g.flags))

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
                    out.append(self.step(h, a[i], broadcast, carried[len(out)]))
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
                    block = read_block(h, g.lhs, r, kk, w, True)
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
                    value = h.element(g.rhs, kk, c)
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

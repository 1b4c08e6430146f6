"""Random matrix programs built as xDSL IR: DAGs over every matrix op, plus
matrices carried through control flow and long dependent chains.

`ProgramGenerator(seed).build()` gives a module with one `func.func @f` and
arguments for it. Besides the straight-line DAG of matrix ops (random shapes
up to 3x3, element types, fastmath flags, static and dynamic indices), a
program may carry matrices where the lowering once failed on valid input:

- `arith.select` of two matrices, `scf.if` and `scf.index_switch` yielding
  matrices, `affine.for`, `scf.for` and `scf.while` carrying matrices;
- block arguments of `cf.br`/`cf.cond_br`: the function body is split into an
  entry block and a join block entered with matrices;
- a long dependent elementwise chain (`LONG_CHAIN` ops and more);
- a result returned twice (`RETURNED_TWICE`).

`ProgramGenerator.covered` counts the matrix ops and the `STRUCTURES` (`select`,
`scf.if`, `affine.for`, `cf.cond_br`, `cf.br`, `chain`, `returned twice`, ...) a
program used, so that a test can report and check what a sample reached. The property test
(tests/passes/test_pass_equivalence.py) and the fuzzer (`mx.testing.fuzz`) use it.
"""

from __future__ import annotations

import random
from collections import Counter
from typing import Any

import ml_dtypes
import numpy as np
from xdsl.dialects import affine, arith, cf, func, scf
from xdsl.dialects.arith import FastMathFlagsAttr
from xdsl.dialects.builtin import (
    BFloat16Type,
    DenseArrayBase,
    Float16Type,
    Float32Type,
    Float64Type,
    IndexType,
    IntegerAttr,
    IntegerType,
    MemRefType,
    ModuleOp,
    UnitAttr,
    VectorType,
    i1,
    i64,
)
from xdsl.ir import Attribute, Block, Operation, Region, SSAValue

from mx.dialects import matrix as mx

LONG_CHAIN = 400
"""Length of a long chain: fused chains this long once overflowed Python's
recursion limit in the lowering."""

LONG_CHAIN_SHARE = 0.05
"""Share of programs with a long chain."""

RETURNED_TWICE = 0.25
"""Share of programs returning one of their results a second time."""

STRUCTURES = (
    "select",
    "scf.if",
    "scf.index_switch",
    "affine.for",
    "scf.for",
    "scf.while",
    "cf.cond_br",
    "cf.br",
    "chain",
    "returned twice",
)

CARRIERS = ("select", "if", "switch", "for", "scf_for", "while")
"""The `_step` kinds that carry matrices through control flow."""

ELEMENT_TYPES: list[Attribute] = [
    Float16Type(),
    BFloat16Type(),
    Float32Type(),
    Float64Type(),
    IntegerType(8),
    IntegerType(16),
    IntegerType(32),
    IntegerType(64),
]
PRECISION: dict[type[Attribute], int] = {
    Float16Type: 11,
    BFloat16Type: 8,
    Float32Type: 24,
    Float64Type: 53,
}
NUMPY: dict[type[Attribute], Any] = {
    Float16Type: np.float16,
    BFloat16Type: ml_dtypes.bfloat16,
    Float32Type: np.float32,
    Float64Type: np.float64,
}
FLOAT_PRECISION: dict[np.dtype[Any], int] = {
    np.dtype(NUMPY[t]): p for t, p in PRECISION.items()
}
MEMORY_SIZE = 64
FLAG_CHOICES = ["none", "contract", "fast", "nsz", "contract,reassoc"]

ALL_OPS = {op.name for op in mx.Matrix.operations}


def _is_float(t: Attribute) -> bool:
    return type(t) in PRECISION


def _dtype(t: Attribute) -> Any:
    if _is_float(t):
        return NUMPY[type(t)]
    assert isinstance(t, IntegerType)
    return np.dtype(f"int{t.width.data}")


class ProgramGenerator:
    """Builds one random `func.func @f` from a seed; records the ops it used."""

    def __init__(self, seed: int):
        self.rnd = random.Random(seed)
        self.t = self.rnd.choice(ELEMENT_TYPES)
        self.use_contract = self.rnd.random() < 0.5
        self.long_chain = self.rnd.random() < LONG_CHAIN_SHARE
        self.ops: list[Operation] = []
        self.pool: list[SSAValue] = []
        self.scalars: list[SSAValue] = []
        self.covered: Counter[str] = Counter()
        """The matrix ops and `STRUCTURES` the program uses."""

    # -- helpers ---------------------------------------------------------

    def _emit(self, op: Operation) -> Operation:
        self.ops.append(op)
        return op

    def _flags(self) -> FastMathFlagsAttr | None:
        if not _is_float(self.t):
            return None
        choices = FLAG_CHOICES if self.use_contract else ["none", "nsz"]
        choice = self.rnd.choice(choices)
        if choice in ("none", "fast"):
            return FastMathFlagsAttr(choice)  # type: ignore[arg-type]
        return FastMathFlagsAttr(choice.split(","))  # type: ignore[arg-type]

    def _shape(self) -> tuple[int, int]:
        return (self.rnd.randint(1, 3), self.rnd.randint(1, 3))

    def _scalar_literal(self) -> int | float:
        if _is_float(self.t):
            # Full-width significands, so that a product's rounding shows
            # (fusing without `contract` must be caught); some small dyadic
            # values for exact cancellations and signed zeros.
            if self.rnd.random() < 0.3:
                return self.rnd.randint(-8, 8) / 4
            return float(np.asarray(self.rnd.uniform(-2, 2), dtype=_dtype(self.t)))
        return self.rnd.randint(-20, 20)

    def _index(self, bound: int) -> int | SSAValue:
        i = self.rnd.randrange(bound)
        if self.rnd.random() < 0.3:
            c = self._emit(arith.ConstantOp(IntegerAttr(i, IndexType())))
            return c.results[0]
        return i

    def _new_matrix(self, shape: tuple[int, int]) -> SSAValue:
        """A fresh value of `shape`: transpose, splat, constant or load."""
        mt = mx.MatrixType(*shape, self.t)
        kind = self.rnd.choice(["transpose", "splat", "constant", "load"])
        if kind == "transpose":
            src = self._matrix((shape[1], shape[0]), fresh_ok=False)
            if src is not None:
                return self._emit(mx.TransposeOp(src)).results[0]
        if kind == "splat":
            x = self.rnd.choice(self.scalars)
            return self._emit(mx.SplatOp(x, mt)).results[0]
        if kind == "load":
            load_type = self.rnd.choice([mx.ColumnMajorLoadOp, mx.RowMajorLoadOp])
            lead = load_type.default_stride(mt)
            stride = lead + self.rnd.randint(0, 1)
            span = load_type.element_position(shape[0] - 1, shape[1] - 1, stride)
            offset = self.rnd.randint(0, MEMORY_SIZE - 1 - span)
            return self._emit(load_type(self.memory, mt, offset, stride)).results[0]
        values = [self._scalar_literal() for _ in range(mt.num_elements)]
        return self._emit(mx.ConstantOp.from_values(values, mt)).results[0]

    def _matrix(self, shape: tuple[int, int], fresh_ok: bool = True) -> SSAValue | None:
        same = [
            v
            for v in self.pool
            if isinstance(v.type, mx.MatrixType)
            and v.type.shape == shape
            and v.type.element_type == self.t
        ]
        if same and (not fresh_ok or self.rnd.random() < 0.7):
            return self.rnd.choice(same)
        return self._new_matrix(shape) if fresh_ok else None

    def _any_matrix(self) -> SSAValue:
        value = self._matrix(self._shape())
        assert value is not None
        return value

    def _vector(self, n: int) -> SSAValue:
        return self.vectors[n - 1]

    # -- one random op ---------------------------------------------------

    def _step(self) -> None:
        rnd = self.rnd
        float_ops = ["neg", "fma"] if _is_float(self.t) else []
        kind = rnd.choice(
            [
                "add", "sub", "mul", "div", "matmul", "matmul_add", "transpose",
                "cast", "extract", "insert", "matvec", "outer", "store",
                "mul_add", "transposed_chain", *CARRIERS, *float_ops,
            ]
        )  # fmt: skip
        a = self._any_matrix()
        mt = a.type
        assert isinstance(mt, mx.MatrixType)
        result: Operation | None = None
        if kind in CARRIERS:
            b = self._matrix(mt.shape)
            assert b is not None
            carrier = {
                "select": self._select,
                "if": self._if,
                "switch": self._switch,
                "for": self._for,
                "scf_for": self._scf_for,
                "while": self._while,
            }[kind]
            result = carrier(a, b)
        elif kind in ("add", "sub", "mul", "div"):
            b = self._matrix(mt.shape)
            assert b is not None
            op_type = {"add": mx.AddOp, "sub": mx.SubOp, "mul": mx.MulOp}.get(
                kind, mx.DivOp
            )
            props = {}
            if op_type is mx.DivOp and not _is_float(self.t) and rnd.random() < 0.5:
                props["unsigned"] = UnitAttr()
            lhs, rhs = (a, b) if rnd.random() < 0.5 else (b, a)
            result = op_type(lhs, rhs, fastmath=self._flags(), properties=props)
        elif kind == "neg":
            result = mx.NegOp(a, fastmath=self._flags())
        elif kind == "fma":
            b, c = self._matrix(mt.shape), self._matrix(mt.shape)
            assert b is not None and c is not None
            result = mx.FmaOp(a, b, c, fastmath=self._flags())
        elif kind == "mul_add":
            # The contraction candidates: add/sub of a (single-use) product.
            b, c = self._matrix(mt.shape), self._matrix(mt.shape)
            assert b is not None and c is not None
            p = self._emit(mx.MulOp(a, b, fastmath=self._flags())).results[0]
            op_type = rnd.choice([mx.AddOp, mx.SubOp])
            lhs, rhs = (p, c) if rnd.random() < 0.5 else (c, p)
            result = op_type(lhs, rhs, fastmath=self._flags())
        elif kind in ("matmul", "matmul_add"):
            k = mt.cols
            b = self._matrix((k, rnd.randint(1, 3)))
            assert b is not None and isinstance(b.type, mx.MatrixType)
            if kind == "matmul":
                result = mx.MatmulOp(a, b, self._flags())
            else:
                c = self._matrix((mt.rows, b.type.cols))
                assert c is not None
                result = mx.MatmulAddOp(a, b, c, self._flags())
            if rnd.random() < 0.4:
                # add(matmul, c): the matmul_add fusion candidate
                self._emit(result)
                c = self._matrix((mt.rows, b.type.cols))
                assert c is not None
                lhs, rhs = (result.results[0], c)
                if rnd.random() < 0.5:
                    lhs, rhs = rhs, lhs
                result = mx.AddOp(lhs, rhs, fastmath=self._flags())
        elif kind == "transpose":
            result = mx.TransposeOp(a)
        elif kind == "transposed_chain":
            # transpose of an elementwise op or product of transposes: the
            # sink/lift candidates
            at = self._emit(mx.TransposeOp(a)).results[0]
            b = self._matrix((mt.cols, mt.rows))
            assert b is not None
            inner = self._emit(
                rnd.choice([mx.AddOp, mx.SubOp, mx.MulOp])(
                    at, b, fastmath=self._flags()
                )
            )
            result = mx.TransposeOp(inner.results[0])
        elif kind == "cast":
            target = rnd.choice(ELEMENT_TYPES)
            unsigned = (
                isinstance(target, IntegerType) or isinstance(self.t, IntegerType)
            ) and rnd.random() < 0.3
            c1 = self._emit(mx.CastOp(a, mt.with_element_type(target), unsigned))
            self.pool.append(c1.results[0])
            back = rnd.choice(ELEMENT_TYPES + [self.t] * 4)
            unsigned = (
                isinstance(target, IntegerType) or isinstance(back, IntegerType)
            ) and rnd.random() < 0.3
            result = mx.CastOp(c1.results[0], mt.with_element_type(back), unsigned)
        elif kind == "extract":
            e = self._emit(
                mx.ExtractOp(a, [self._index(mt.rows), self._index(mt.cols)])
            )
            self.scalars.append(e.results[0])
            result = mx.SplatOp(e.results[0], mx.MatrixType(*self._shape(), self.t))
        elif kind == "insert":
            x = self.rnd.choice(self.scalars)
            result = mx.InsertOp(x, a, [self._index(mt.rows), self._index(mt.cols)])
        elif kind == "matvec":
            bias = self._vector(mt.rows) if rnd.random() < 0.5 else None
            mv = self._emit(mx.MatvecOp(a, self._vector(mt.cols), bias, self._flags()))
            self.results.append(mv.results[0])
            return
        elif kind == "outer":
            result = mx.OuterProductOp(
                self._vector(rnd.randint(1, 3)), self._vector(rnd.randint(1, 3))
            )
        else:
            store_type = rnd.choice([mx.ColumnMajorStoreOp, mx.RowMajorStoreOp])
            stride = store_type.default_stride(mt) + rnd.randint(0, 1)
            span = store_type.element_position(mt.rows - 1, mt.cols - 1, stride)
            offset = rnd.randint(0, MEMORY_SIZE - 1 - span)
            self._emit(store_type(a, self.memory, offset, stride))
            return
        self._emit(result)
        if isinstance(result.results[0].type, mx.MatrixType):
            self.pool.append(result.results[0])

    # -- matrices carried through control flow ----------------------------

    def _elementwise(self, a: SSAValue, b: SSAValue, flags: bool = True) -> Operation:
        op_type = self.rnd.choice([mx.AddOp, mx.SubOp, mx.MulOp])
        return op_type(a, b, fastmath=self._flags() if flags else None)

    def _select(self, a: SSAValue, b: SSAValue) -> Operation:
        self.covered["select"] += 1
        return arith.SelectOp(self.flag, a, b)

    def _if(self, a: SSAValue, b: SSAValue) -> Operation:
        """scf.if %flag -> (matrix) { a op b } else { a or b }."""
        self.covered["scf.if"] += 1
        then = self._elementwise(a, b)
        other = self.rnd.choice([a, b])
        return scf.IfOp(
            self.flag,
            [a.type],
            [then, scf.YieldOp(then.results[0])],
            [scf.YieldOp(other)],
        )

    def _for(self, a: SSAValue, b: SSAValue) -> Operation:
        """affine.for %i = 0 to N iter_args(%acc = a) { acc op b }."""
        self.covered["affine.for"] += 1
        body = Block(arg_types=[IndexType(), a.type])
        step = self._elementwise(body.args[1], b)
        body.add_ops([step, affine.YieldOp.get(step.results[0])])
        trips = self.rnd.randint(0, 3)
        return affine.ForOp.from_region([], [], [a], [a.type], 0, trips, Region(body))

    def _switch(self, a: SSAValue, b: SSAValue) -> Operation:
        """scf.index_switch on %flag as an index (0 or 1), with up to three
        of the cases -1, 0, 1, 2 (the default taken when none matches), each
        yielding a, b or a op b."""
        self.covered["scf.index_switch"] += 1
        wide = self._emit(arith.ExtUIOp(self.flag, IntegerType(64)))
        index = self._emit(arith.IndexCastOp(wide, IndexType()))
        cases = self.rnd.sample([-1, 0, 1, 2], self.rnd.randint(0, 3))

        def region() -> Region:
            if self.rnd.random() < 0.5:
                return Region(Block([scf.YieldOp(self.rnd.choice([a, b]))]))
            then = self._elementwise(a, b)
            return Region(Block([then, scf.YieldOp(then.results[0])]))

        return scf.IndexSwitchOp(
            index,
            DenseArrayBase.from_list(i64, cases),
            region(),
            [region() for _ in cases],
            [a.type],
        )

    def _index_constant(self, value: int) -> SSAValue:
        return self._emit(arith.ConstantOp(IntegerAttr(value, IndexType()))).results[0]

    def _scf_for(self, a: SSAValue, b: SSAValue) -> Operation:
        """scf.for %i = 0 to N iter_args(%x = a, %y = b) { yield y, x op y }
        (a parallel copy of the carried matrices)."""
        self.covered["scf.for"] += 1
        body = Block(arg_types=[IndexType(), a.type, b.type])
        step = self._elementwise(body.args[1], body.args[2])
        body.add_ops([step, scf.YieldOp(body.args[2], step.results[0])])
        lower, upper, step_size = (
            self._index_constant(n) for n in (0, self.rnd.randint(0, 3), 1)
        )
        return scf.ForOp(lower, upper, step_size, [a, b], body)

    def _while(self, a: SSAValue, b: SSAValue) -> Operation:
        """scf.while (%x = a, %i = 0) { condition(i < N) x, i } do { x op b,
        i + 1 } (the matrix first: the op's first result joins the pool)."""
        self.covered["scf.while"] += 1
        types = [a.type, IndexType()]
        zero = self._index_constant(0)
        trips = self._index_constant(self.rnd.randint(0, 3))
        before = Block(arg_types=types)
        more = arith.CmpiOp(before.args[1], trips, "ult")
        before.add_ops([more, scf.ConditionOp(more, *before.args)])
        after = Block(arg_types=types)
        step = self._elementwise(after.args[0], b)
        one = arith.ConstantOp(IntegerAttr(1, IndexType()))
        next_i = arith.AddiOp(after.args[1], one)
        after.add_ops(
            [step, one, next_i, scf.YieldOp(step.results[0], next_i.results[0])]
        )
        return scf.WhileOp([a, zero], types, [before], [after])

    def _chain(self) -> None:
        """A dependent chain of `LONG_CHAIN` or more elementwise ops (without
        fastmath flags: their results compare bit for bit)."""
        self.covered["chain"] += 1
        x = self._any_matrix()
        assert isinstance(x.type, mx.MatrixType)
        b = self._matrix(x.type.shape)
        assert b is not None
        for _ in range(LONG_CHAIN + self.rnd.randint(0, 20)):
            x = self._emit(self._elementwise(x, b, flags=False)).results[0]
        self.pool.append(x)

    def _branch(self, blocks: list[Block]) -> None:
        """Ends the current block with a branch to a new block that takes one
        or two matrices as arguments; the rest of the program goes there."""
        carried = [self._any_matrix() for _ in range(self.rnd.randint(1, 2))]
        join = Block(arg_types=[v.type for v in carried])
        if self.rnd.random() < 0.5:
            self.covered["cf.br"] += 1
            self._emit(cf.BranchOp(join, *carried))
        else:
            self.covered["cf.cond_br"] += 1
            others: list[SSAValue] = []
            for v in carried:
                assert isinstance(v.type, mx.MatrixType)
                other = self._matrix(v.type.shape)
                assert other is not None
                others.append(other)
            self._emit(cf.ConditionalBranchOp(self.flag, join, carried, join, others))
        blocks[-1].add_ops(self.ops)
        self.ops = []
        blocks.append(join)
        self.pool += list(join.args)

    # -- the program -----------------------------------------------------

    def build(self) -> tuple[ModuleOp, list[Any]]:
        """The module and arguments for `@f`."""
        shapes = [self._shape() for _ in range(3)]
        arg_types: list[Attribute] = [
            *(mx.MatrixType(*s, self.t) for s in shapes),
            self.t,
            MemRefType(self.t, [MEMORY_SIZE]),
            *(VectorType(self.t, [n]) for n in (1, 2, 3)),
            i1,
        ]
        block = Block(arg_types=arg_types)
        self.pool = list(block.args[:3])
        self.scalars = [block.args[3]]
        self.memory = block.args[4]
        self.vectors = list(block.args[5:8])
        self.flag = block.args[8]
        self.results: list[SSAValue] = []
        blocks = [block]
        steps = self.rnd.randint(3, 12)
        branch_at = self.rnd.randrange(steps) if self.rnd.random() < 0.3 else -1
        for i in range(steps):
            if i == branch_at:
                self._branch(blocks)
            self._step()
        if self.long_chain:
            self._chain()
        # Values of the entry block dominate the join block: any may be returned.
        outputs = [v for v in self.pool[3:] if self.rnd.random() < 0.6]
        outputs = [*self.results, *(outputs or self.pool[-1:])]
        if self.rnd.random() < RETURNED_TWICE:
            # (the lowering computes a returned matrix in its first
            # out-parameter and copies it into the second)
            outputs.append(self.rnd.choice(outputs))
            self.covered["returned twice"] += 1
        self._emit(func.ReturnOp(*outputs))
        blocks[-1].add_ops(self.ops)
        self.covered.update(
            op.name for b in blocks for op in b.walk() if op.name in ALL_OPS
        )
        f = func.FuncOp(
            "f",
            (arg_types, [v.type for v in outputs]),
            Region(blocks),
        )
        module = ModuleOp([f])
        return module, self._arguments(arg_types)

    def _arguments(self, arg_types: list[Attribute]) -> list[Any]:
        dtype = _dtype(self.t)
        args: list[Any] = []
        for t in arg_types:
            if isinstance(t, mx.MatrixType):
                shape: tuple[int, ...] = t.shape
            elif isinstance(t, MemRefType):
                shape = (MEMORY_SIZE,)
            elif isinstance(t, VectorType):
                shape = tuple(t.get_shape())
            elif t == i1:
                args.append(self.rnd.random() < 0.5)
                continue
            else:
                args.append(self._scalar_literal())
                continue
            values = [self._scalar_literal() for _ in range(int(np.prod(shape)))]
            args.append(np.array(values, dtype=dtype).reshape(shape))
        return args

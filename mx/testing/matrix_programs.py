"""Random matrix programs, written twice: as C with Clang's matrix extension and
as `matrix` dialect, plus an independent NumPy reference evaluator.

A program is a straight-line list of statements in SSA form. Every function
takes only 1-D buffers (`memref<?xT>` / `T *`), scalars and `index`/`long`
values, so the C ABI of the lowered function is just pointers and values and
does not depend on how functions with matrix arguments are lowered.

Generated programs stay inside defined behaviour in both languages:

- float→int casts only of values whose magnitude bound (tracked statically, see
  `Stmt.bound`) is below 2**31, never of a possible NaN/inf;
- integer division only by nonzero constants other than -1;
- no scalar arithmetic in C (signed overflow would be UB); scalars only feed
  matrix ops, where Clang's integer arithmetic wraps like ours;
- no transpose of an elementwise result, unless `allow_clang_bugs`: clang-16
  miscompiles `transpose(A + B)` for non-square A at -O1+ (llvm-project#81507)
  and crashes on integer `transpose(M + 3)`.
"""

from __future__ import annotations

import copy
import json
import math
import random
from collections.abc import Callable, Iterator
from dataclasses import asdict, dataclass, field
from typing import Any

import numpy as np

ELEMENTS = ("f32", "f64", "i32", "f16")
C_TYPE = {"f32": "float", "f64": "double", "i32": "int", "f16": "_Float16"}
NP_TYPE: dict[str, Any] = {
    "f32": np.float32,
    "f64": np.float64,
    "i32": np.int32,
    "f16": np.float16,
}
ELEMENT_OF = {v: k for k, v in NP_TYPE.items()}
FLOAT_MAX = {"f16": 65504.0, "f32": 3.4e38, "f64": 1.7e308}
INT_CAST_LIMIT = 2.0**31 - 1024
"""A float whose magnitude is below this converts to i32 without UB."""

SCALAR_OPS = ("M+s", "s+M", "M-s", "s-M", "M*s", "s*M", "M/s")
MLIR_OP = {"+": "matrix.add", "-": "matrix.sub", "*": "matrix.mul", "/": "matrix.div"}

Array = np.ndarray[Any, Any]


def is_float(elem: str) -> bool:
    return elem != "i32"


@dataclass(frozen=True)
class MType:
    rows: int
    cols: int
    elem: str

    @property
    def mlir(self) -> str:
        return f"!matrix.matrix<{self.rows}x{self.cols}x{self.elem}>"

    @property
    def c(self) -> str:
        return f"m{self.rows}x{self.cols}_{self.elem}"


@dataclass
class Scalar:
    """A scalar operand: `const` (value), `arg` (scalar argument index) or
    `extract` (statement index and a static row/column)."""

    kind: str
    elem: str
    value: float = 0.0
    index: int = 0
    row: int = 0
    col: int = 0


@dataclass
class Stmt:
    """`op` is one of load, add, sub, scalar, matmul, transpose, cast, insert.

    `args` are statement indices; `scalar` is the scalar operand of scalar ops
    and insert; `bound` bounds the magnitude of every element (inf: may be
    inf/NaN), used only to keep float→int casts defined."""

    op: str
    type: MType
    args: list[int] = field(default_factory=list[int])
    scalar: Scalar | None = None
    kind: str = ""
    """Scalar op kind (one of SCALAR_OPS)."""
    buffer: int = 0
    offset: int = 0
    stride: int = 0
    dynamic_stride: int = -1
    """Index of the `index` argument that carries the stride, or -1 (static)."""
    row: int = 0
    col: int = 0
    bound: float = 0.0


@dataclass
class Store:
    value: int
    offset: int
    stride: int


@dataclass
class Program:
    inputs: list[tuple[str, int]]
    """Element type and length of each input buffer."""
    scalar_args: list[str]
    index_args: list[int]
    """Value of each `index` argument (fixed per program)."""
    stmts: list[Stmt]
    stores: list[Store]
    contract: bool = False

    # -- serialization (regression files) ----------------------------------

    def to_json(self) -> str:
        return json.dumps(asdict(self), indent=1)

    @staticmethod
    def from_json(text: str) -> Program:
        d = json.loads(text)
        stmts: list[Stmt] = []
        for s in d["stmts"]:
            s["type"] = MType(**s["type"])
            if s["scalar"] is not None:
                s["scalar"] = Scalar(**s["scalar"])
            stmts.append(Stmt(**s))
        return Program(
            inputs=[(e, n) for e, n in d["inputs"]],
            scalar_args=d["scalar_args"],
            index_args=d["index_args"],
            stmts=stmts,
            stores=[Store(**s) for s in d["stores"]],
            contract=d["contract"],
        )

    # -- magnitude bounds (keep float→int casts defined) ----------------------

    def _scalar_bound(self, sc: Scalar) -> float:
        if sc.kind == "const":
            return abs(sc.value)
        if sc.kind == "arg":
            return INPUT_BOUND[sc.elem]
        return self.stmts[sc.index].bound

    def bound_of(self, s: Stmt) -> float:
        """A bound on |element| of `s` given its operands' bounds; inf when the
        value may overflow its type (then it may be inf or NaN). The 1.01
        factors cover rounding."""
        a = [self.stmts[i].bound for i in s.args]
        if s.op == "load":
            bound = INPUT_BOUND[s.type.elem]
        elif s.op in ("add", "sub"):
            bound = (a[0] + a[1]) * 1.01
        elif s.op == "matmul":
            bound = self.stmts[s.args[0]].type.cols * a[0] * a[1] * 1.01
        elif s.op == "transpose":
            bound = a[0]
        elif s.op == "cast":
            bound = a[0] if is_float(s.type.elem) else min(a[0], 2.0**31)
        else:
            assert s.scalar is not None
            sb = self._scalar_bound(s.scalar)
            if s.op == "insert":
                bound = max(a[0], sb)
            elif s.kind == "M/s":
                bound = a[0] / abs(s.scalar.value) * 1.01
            elif "*" in s.kind:
                bound = a[0] * sb * 1.01
            else:
                bound = (a[0] + sb) * 1.01
        return math.inf if bound >= FLOAT_MAX.get(s.type.elem, math.inf) else bound

    def cast_is_defined(self, s: Stmt) -> bool:
        """False for a float→int cast that may be UB in C (out of range or NaN),
        and for any float→int cast under contraction (which may move a value
        across an integer)."""
        src = self.stmts[s.args[0]]
        if s.type.elem != "i32" or not is_float(src.type.elem):
            return True
        return not self.contract and src.bound < INT_CAST_LIMIT

    def recompute_bounds(self) -> bool:
        """Recompute every bound (after an edit); False if a cast became UB."""
        for s in self.stmts:
            if s.op == "cast" and not self.cast_is_defined(s):
                return False
            s.bound = self.bound_of(s)
        return True

    # -- layout ------------------------------------------------------------

    def output_lengths(self) -> list[tuple[str, int]]:
        out: list[tuple[str, int]] = []
        for st in self.stores:
            t = self.stmts[st.value].type
            out.append((t.elem, st.offset + st.stride * (t.cols - 1) + t.rows + 3))
        return out

    def ops_covered(self) -> set[str]:
        names: set[str] = set()
        for s in self.stmts:
            name = s.op if s.op != "scalar" else f"scalar {s.kind}"
            if s.op == "cast":
                name = f"cast {self.stmts[s.args[0]].type.elem}->{s.type.elem}"
            if s.op == "load" and s.dynamic_stride >= 0:
                name = "load (dynamic stride)"
            names.add(name)
            if s.scalar is not None:
                names.add(f"scalar operand {s.scalar.kind}")
        names.add("store")
        names.update(f"elem {s.type.elem}" for s in self.stmts)
        return names

    # -- C -----------------------------------------------------------------

    def _c_params(self) -> str:
        params = [f"{C_TYPE[e]} *in{i}" for i, (e, _) in enumerate(self.inputs)]
        params += [
            f"{C_TYPE[e]} *out{i}" for i, (e, _) in enumerate(self.output_lengths())
        ]
        params += [f"{C_TYPE[e]} s{i}" for i, e in enumerate(self.scalar_args)]
        params += [f"long d{i}" for i in range(len(self.index_args))]
        return ", ".join(params)

    def c_prototype(self, name: str) -> str:
        return f"void {name}({self._c_params()})"

    def c_source(self, name: str) -> str:
        types = sorted({s.type for s in self.stmts}, key=lambda t: t.c)
        lines = [
            f"typedef {C_TYPE[t.elem]} {t.c} __attribute__((matrix_type({t.rows}, {t.cols})));"
            for t in types
        ]
        lines.append(self.c_prototype(name) + " {")
        for k, s in enumerate(self.stmts):
            lines.extend(f"  {line}" for line in self._c_stmt(k, s))
        for st in self.stores:
            i = self.stores.index(st)
            lines.append(
                f"  __builtin_matrix_column_major_store(v{st.value}, out{i} + {st.offset}, {st.stride});"
            )
        lines.append("}")
        return "\n".join(lines) + "\n"

    def _c_scalar(self, sc: Scalar) -> str:
        if sc.kind == "const":
            if sc.elem == "i32":
                return f"({int(sc.value)})"
            return f"(({C_TYPE[sc.elem]}){sc.value!r})"
        if sc.kind == "arg":
            return f"s{sc.index}"
        return f"v{sc.index}[{sc.row}][{sc.col}]"

    def _c_stmt(self, k: int, s: Stmt) -> list[str]:
        t = s.type.c
        a = [f"v{i}" for i in s.args]
        if s.op == "load":
            stride = f"d{s.dynamic_stride}" if s.dynamic_stride >= 0 else str(s.stride)
            return [
                f"{t} v{k} = __builtin_matrix_column_major_load(in{s.buffer} + {s.offset}, "
                f"{s.type.rows}, {s.type.cols}, {stride});"
            ]
        if s.op in ("add", "sub"):
            return [f"{t} v{k} = {a[0]} {'+' if s.op == 'add' else '-'} {a[1]};"]
        if s.op == "matmul":
            return [f"{t} v{k} = {a[0]} * {a[1]};"]
        if s.op == "transpose":
            return [f"{t} v{k} = __builtin_matrix_transpose({a[0]});"]
        if s.op == "cast":
            return [f"{t} v{k} = ({t}){a[0]};"]
        assert s.scalar is not None
        sc = self._c_scalar(s.scalar)
        if s.op == "insert":
            return [f"{t} v{k} = {a[0]};", f"v{k}[{s.row}][{s.col}] = {sc};"]
        expr = s.kind.replace("M", a[0]).replace("s", sc)
        return [f"{t} v{k} = {expr};"]

    # -- MLIR --------------------------------------------------------------

    def mlir_source(self, name: str) -> str:
        params = [f"%in{i}: memref<?x{e}>" for i, (e, _) in enumerate(self.inputs)]
        params += [
            f"%out{i}: memref<?x{e}>" for i, (e, _) in enumerate(self.output_lengths())
        ]
        params += [f"%s{i}: {e}" for i, e in enumerate(self.scalar_args)]
        params += [f"%d{i}: index" for i in range(len(self.index_args))]
        lines = [f"func.func @{name}({', '.join(params)}) {{"]
        for k, s in enumerate(self.stmts):
            lines.extend(f"  {line}" for line in self._mlir_stmt(k, s))
        for i, st in enumerate(self.stores):
            t = self.stmts[st.value].type
            lines.append(
                f"  matrix.column_major_store %v{st.value}, %out{i}[{st.offset}] stride {st.stride} "
                f": {t.mlir}, memref<?x{t.elem}>"
            )
        lines += ["  func.return", "}"]
        return "\n".join(lines) + "\n"

    def _fm(self, elem: str) -> str:
        return " fastmath<contract>" if self.contract and is_float(elem) else ""

    def _mlir_scalar(self, k: int, sc: Scalar) -> tuple[list[str], str]:
        """Lines defining the scalar operand of statement k, and its name."""
        if sc.kind == "arg":
            return [], f"%s{sc.index}"
        if sc.kind == "const":
            lit = str(int(sc.value)) if sc.elem == "i32" else repr(sc.value)
            return [f"%c{k} = arith.constant {lit} : {sc.elem}"], f"%c{k}"
        t = self.stmts[sc.index].type
        return [
            f"%e{k} = matrix.extract %v{sc.index}[{sc.row}, {sc.col}] : {t.mlir}"
        ], f"%e{k}"

    def _mlir_stmt(self, k: int, s: Stmt) -> list[str]:
        t = s.type.mlir
        a = [f"%v{i}" for i in s.args]
        fm = self._fm(s.type.elem)
        if s.op == "load":
            stride = f"%d{s.dynamic_stride}" if s.dynamic_stride >= 0 else str(s.stride)
            return [
                f"%v{k} = matrix.column_major_load %in{s.buffer}[{s.offset}] stride {stride} "
                f": memref<?x{s.type.elem}> -> {t}"
            ]
        if s.op in ("add", "sub"):
            return [f"%v{k} = matrix.{s.op} {a[0]}, {a[1]}{fm} : {t}"]
        if s.op == "matmul":
            ta, tb = (self.stmts[i].type.mlir for i in s.args)
            return [f"%v{k} = matrix.matmul {a[0]}, {a[1]}{fm} : {ta}, {tb} -> {t}"]
        if s.op == "transpose":
            return [
                f"%v{k} = matrix.transpose {a[0]} : {self.stmts[s.args[0]].type.mlir} -> {t}"
            ]
        if s.op == "cast":
            return [
                f"%v{k} = matrix.cast {a[0]} : {self.stmts[s.args[0]].type.mlir} to {t}"
            ]
        assert s.scalar is not None
        lines, sc = self._mlir_scalar(k, s.scalar)
        if s.op == "insert":
            return [
                *lines,
                f"%v{k} = matrix.insert {sc}, {a[0]}[{s.row}, {s.col}] : {t}",
            ]
        lines.append(f"%m{k} = matrix.splat {sc} : {t}")
        lhs, op, rhs = s.kind
        x = a[0] if lhs == "M" else f"%m{k}"
        y = a[0] if rhs == "M" else f"%m{k}"
        return [*lines, f"%v{k} = {MLIR_OP[op]} {x}, {y}{fm} : {t}"]

    # -- NumPy reference ---------------------------------------------------

    def evaluate(
        self, inputs: list[Array], scalars: list[Array], magnitude: bool = False
    ) -> list[Array]:
        """The output buffers, computed with NumPy one rounding per C operation
        (NumPy's f16 arithmetic rounds a float32 result: innocuous double
        rounding for + - * /, since 24 >= 2*11 + 2).

        With `magnitude`, float values are instead the program evaluated in
        float64 on absolute values with subtractions turned into additions
        (the `m` of the contraction error bound); float buffers are float64."""
        vals: list[Array] = []
        with np.errstate(all="ignore"):
            for s in self.stmts:
                if magnitude and is_float(s.type.elem):
                    vals.append(self._magnitude(s, vals, inputs, scalars))
                else:
                    vals.append(self._eval(s, vals, inputs, scalars))
        outs: list[Array] = []
        for st, (elem, n) in zip(self.stores, self.output_lengths(), strict=True):
            buf = np.zeros(n) if magnitude and is_float(elem) else pad_buffer(elem, n)
            v = vals[st.value]
            for c in range(v.shape[1]):
                start = st.offset + c * st.stride
                buf[start : start + v.shape[0]] = v[:, c]
            outs.append(buf)
        return outs

    def _magnitude(
        self, s: Stmt, vals: list[Array], inputs: list[Array], scalars: list[Array]
    ) -> Array:
        if s.op == "load":
            return np.abs(self._eval(s, vals, inputs, scalars).astype(np.float64))
        a = [np.abs(vals[i].astype(np.float64)) for i in s.args]
        if s.op in ("add", "sub"):
            return a[0] + a[1]
        if s.op == "matmul":
            return a[0] @ a[1]
        if s.op == "transpose":
            return a[0].T.copy()
        if s.op == "cast":
            return a[0]
        assert s.scalar is not None
        sv = abs(float(self._scalar_value(s.scalar, vals, scalars)))
        if s.op == "insert":
            m = a[0].copy()
            m[s.row, s.col] = sv
            return m
        if s.kind == "M/s":
            return a[0] / sv
        return a[0] * sv if "*" in s.kind else a[0] + sv

    def rounding_depth(self) -> int:
        """The most float roundings on any path from an input to an output."""
        depth: list[int] = []
        for s in self.stmts:
            own = {"matmul": self.stmts[s.args[0]].type.cols if s.args else 0}.get(
                s.op, 1 if s.op in ("add", "sub", "scalar", "cast") else 0
            )
            below = [depth[i] for i in s.args]
            if s.scalar is not None and s.scalar.kind == "extract":
                below.append(depth[s.scalar.index])
            depth.append(own + max(below, default=0))
        return max(depth, default=0)

    def _scalar_value(
        self, sc: Scalar, vals: list[Array], scalars: list[Array]
    ) -> np.generic:
        dt = NP_TYPE[sc.elem]
        if sc.kind == "const":
            return dt(int(sc.value)) if sc.elem == "i32" else dt(sc.value)
        if sc.kind == "arg":
            return scalars[sc.index][0]
        return vals[sc.index][sc.row, sc.col]

    def _eval(
        self, s: Stmt, vals: list[Array], inputs: list[Array], scalars: list[Array]
    ) -> Array:
        r, c = s.type.rows, s.type.cols
        dt = NP_TYPE[s.type.elem]
        if s.op == "load":
            stride = (
                self.index_args[s.dynamic_stride] if s.dynamic_stride >= 0 else s.stride
            )
            buf = inputs[s.buffer]
            m = np.empty((r, c), dtype=dt)
            for j in range(c):
                start = s.offset + j * stride
                m[:, j] = buf[start : start + r]
            return m
        a = [vals[i] for i in s.args]
        if s.op == "add":
            return (a[0] + a[1]).astype(dt)
        if s.op == "sub":
            return (a[0] - a[1]).astype(dt)
        if s.op == "transpose":
            return a[0].T.copy()
        if s.op == "cast":
            return a[0].astype(
                dt
            )  # float→int truncates, as C; callers keep it in range
        if s.op == "matmul":
            x, y = a
            acc: Array = (x[:, 0:1] * y[0:1, :]).astype(dt)
            for k in range(1, x.shape[1]):
                acc = (acc + (x[:, k : k + 1] * y[k : k + 1, :]).astype(dt)).astype(dt)
            return acc
        assert s.scalar is not None
        sv = self._scalar_value(s.scalar, vals, scalars)
        if s.op == "insert":
            m = a[0].copy()
            m[s.row, s.col] = sv
            return m
        m = a[0]
        splat: Array = np.full((r, c), sv, dtype=dt)
        lhs, op, rhs = s.kind
        x = m if lhs == "M" else splat
        y = m if rhs == "M" else splat
        if op == "+":
            return (x + y).astype(dt)
        if op == "-":
            return (x - y).astype(dt)
        if op == "*":
            return (x * y).astype(dt)
        if is_float(s.type.elem):
            return (x / y).astype(dt)
        # C's integer division truncates toward zero.
        xi, yi = x.astype(np.int64), y.astype(np.int64)
        q = (np.abs(xi) // np.abs(yi)) * np.sign(xi) * np.sign(yi)
        return q.astype(dt)


def pad_buffer(elem: str, n: int) -> Array:
    """An output buffer before the kernel runs: every byte 0xA5, so that a
    write into the padding between columns is seen."""
    return np.frombuffer(
        b"\xa5" * (n * np.dtype(NP_TYPE[elem]).itemsize), dtype=NP_TYPE[elem]
    ).copy()


def matmul_chain(count: int, size: int, element: str = "f32") -> str:
    """`@chain(%a, %b)`: `count` dependent size x size matmuls `x = x · b`
    (the shape of a compile-time stress: one contraction signature repeated)."""
    m = f"!matrix.matrix<{size}x{size}x{element}>"
    lines = [f"func.func @chain(%a: {m}, %b: {m}) -> {m} {{"]
    previous = "%a"
    for i in range(count):
        lines.append(f"  %x{i} = matrix.matmul {previous}, %b : {m}, {m} -> {m}")
        previous = f"%x{i}"
    lines += [f"  func.return {previous} : {m}", "}", ""]
    return "\n".join(lines)


# -- generation --------------------------------------------------------------


SCALAR_CONSTS = (0.5, 1.5, 2.0, -3.0, 0.25, 1.25, -0.75, 3.5, 10.0, -1.0)
INT_CONSTS = (2, 3, 5, 7, -2, -3, 1, 11, 100)
"""Nonzero and not -1: also the divisors of integer `M / s`."""


@dataclass
class Generator:
    rng: random.Random
    max_dim: int = 16
    max_stmts: int = 10
    contract: bool = False
    allow_clang_bugs: bool = False
    elems: tuple[str, ...] = ELEMENTS
    main_elem: str = ""
    """The element type of the first loads (and of half of the later ones);
    empty: a random one of `elems`."""

    def program(self) -> Program:
        self.p = Program([], [], [], [], [], self.contract)
        if not self.main_elem:
            self.main_elem = self.rng.choice(self.elems)
        for _ in range(self.rng.randint(1, 2)):
            self._load(self._shape(self.main_elem))
        for _ in range(self.rng.randint(1, self.max_stmts)):
            self._step()
        self._choose_stores()
        return self.p

    # The random choices below keep shapes small and let values combine.

    def _shape(self, elem: str) -> MType:
        dims = [1, 2, 3, 4, self.rng.randint(1, self.max_dim)]
        return MType(self.rng.choice(dims), self.rng.choice(dims), elem)

    def _add(self, s: Stmt) -> int:
        s.bound = self.p.bound_of(s)
        self.p.stmts.append(s)
        return len(self.p.stmts) - 1

    def _load(self, t: MType) -> int:
        stride = t.rows + self.rng.choice([0, 0, 1, 3])
        offset = self.rng.choice([0, 0, 1, 5])
        dyn = -1
        if self.rng.random() < 0.2:
            self.p.index_args.append(stride)
            dyn = len(self.p.index_args) - 1
        n = offset + stride * (t.cols - 1) + t.rows + self.rng.randint(0, 2)
        self.p.inputs.append((t.elem, n))
        buffer = len(self.p.inputs) - 1
        return self._add(
            Stmt(
                "load",
                t,
                buffer=buffer,
                offset=offset,
                stride=stride,
                dynamic_stride=dyn,
            )
        )

    def _pick(self, pred: Callable[[Stmt], bool] | None = None) -> int | None:
        cands = [i for i, s in enumerate(self.p.stmts) if pred is None or pred(s)]
        if not cands:
            return None
        # Prefer recent values so that chains grow deep.
        return max(self.rng.sample(cands, min(2, len(cands))))

    def _same_type(self, t: MType) -> int:
        i = self._pick(lambda s: s.type == t)
        return i if i is not None else self._load(t)

    def _scalar(self, elem: str, for_division: bool = False) -> Scalar:
        roll = self.rng.random()
        if roll < 0.5 or for_division:
            consts = INT_CONSTS if elem == "i32" else SCALAR_CONSTS
            return Scalar("const", elem, value=float(self.rng.choice(consts)))
        if roll < 0.75:
            self.p.scalar_args.append(elem)
            return Scalar("arg", elem, index=len(self.p.scalar_args) - 1)
        src = self._pick(lambda s: s.type.elem == elem)
        assert src is not None
        t = self.p.stmts[src].type
        return Scalar(
            "extract",
            elem,
            index=src,
            row=self.rng.randrange(t.rows),
            col=self.rng.randrange(t.cols),
        )

    def _step(self) -> None:
        op = self.rng.choice(
            [
                "add",
                "sub",
                "scalar",
                "scalar",
                "matmul",
                "matmul",
                "transpose",
                "cast",
                "insert",
                "load",
            ]
        )
        src = self._pick()
        assert src is not None
        a = self.p.stmts[src]
        t = a.type
        if op == "load":
            self._load(self._shape(self.rng.choice((self.main_elem, *self.elems))))
        elif op in ("add", "sub"):
            self._add(Stmt(op, t, [src, self._same_type(t)]))
        elif op == "scalar":
            kind = self.rng.choice(SCALAR_OPS)
            sc = self._scalar(t.elem, for_division=kind == "M/s")
            self._add(Stmt("scalar", t, [src], scalar=sc, kind=kind))
        elif op == "matmul":
            n = self.rng.choice([1, 2, 3, 4, self.rng.randint(1, self.max_dim)])
            b = self._same_type(MType(t.cols, n, t.elem))
            self._add(Stmt("matmul", MType(t.rows, n, t.elem), [src, b]))
        elif op == "transpose":
            if not self.allow_clang_bugs and a.op in ("add", "sub", "scalar"):
                return
            self._add(Stmt("transpose", MType(t.cols, t.rows, t.elem), [src]))
        elif op == "cast":
            to = self.rng.choice([e for e in self.elems if e != t.elem] or [t.elem])
            s = Stmt("cast", MType(t.rows, t.cols, to), [src])
            if self.p.cast_is_defined(s):
                self._add(s)
        elif op == "insert":
            sc = self._scalar(t.elem)
            row, col = self.rng.randrange(t.rows), self.rng.randrange(t.cols)
            self._add(Stmt("insert", t, [src], scalar=sc, row=row, col=col))

    def _choose_stores(self) -> None:
        used = {i for s in self.p.stmts for i in s.args}
        used |= {
            s.scalar.index
            for s in self.p.stmts
            if s.scalar and s.scalar.kind == "extract"
        }
        leaves = [i for i in range(len(self.p.stmts)) if i not in used]
        for i in leaves[-3:]:
            t = self.p.stmts[i].type
            self.p.stores.append(
                Store(
                    i,
                    self.rng.choice([0, 0, 2]),
                    t.rows + self.rng.choice([0, 0, 1, 2]),
                )
            )


INPUT_BOUND = {"f16": 16.0, "f32": 16.0, "f64": 16.0, "i32": 2.0**31}


def random_inputs(
    p: Program, rng: np.random.Generator
) -> tuple[list[Array], list[Array]]:
    """Input buffers and scalar arguments (each a 1-element array) for `p`."""
    return (
        [random_values(e, n, rng) for e, n in p.inputs],
        [random_values(e, 1, rng) for e in p.scalar_args],
    )


def random_values(elem: str, n: int, rng: np.random.Generator) -> Array:
    """Values of magnitude below INPUT_BOUND: full-precision mantissas, small
    integers and signed zeros for floats; small and full-range integers."""
    if elem == "i32":
        small = rng.integers(-100, 100, n)
        wide = rng.integers(-(2**31), 2**31, n)
        return np.where(rng.random(n) < 0.7, small, wide).astype(np.int32)
    dt = NP_TYPE[elem]
    mant = rng.uniform(-1.0, 1.0, n)
    exps = rng.integers(-3, 3, n).astype(np.float64)
    vals = mant * np.exp2(exps)
    special = rng.random(n)
    vals = np.where(special < 0.1, np.round(vals * 4), vals)
    vals = np.where(special > 0.97, -0.0, vals)
    return vals.astype(dt)


# -- editing (for the minimizer) ---------------------------------------------


def prune(p: Program) -> Program:
    """A copy of `p` without the statements, buffers and arguments that no
    store depends on, renumbered."""
    live: set[int] = set()
    work = [st.value for st in p.stores]
    while work:
        i = work.pop()
        if i in live:
            continue
        live.add(i)
        s = p.stmts[i]
        work.extend(s.args)
        if s.scalar is not None and s.scalar.kind == "extract":
            work.append(s.scalar.index)
    order = sorted(live)
    new_index = {old: new for new, old in enumerate(order)}
    stmts = [copy.deepcopy(p.stmts[i]) for i in order]
    buffers = sorted({s.buffer for s in stmts if s.op == "load"})
    scalar_args = sorted(
        {s.scalar.index for s in stmts if s.scalar and s.scalar.kind == "arg"}
    )
    index_args = sorted(
        {s.dynamic_stride for s in stmts if s.op == "load" and s.dynamic_stride >= 0}
    )
    for s in stmts:
        s.args = [new_index[i] for i in s.args]
        if s.op == "load":
            s.buffer = buffers.index(s.buffer)
            if s.dynamic_stride >= 0:
                s.dynamic_stride = index_args.index(s.dynamic_stride)
        if s.scalar is not None:
            if s.scalar.kind == "extract":
                s.scalar.index = new_index[s.scalar.index]
            elif s.scalar.kind == "arg":
                s.scalar.index = scalar_args.index(s.scalar.index)
    return Program(
        inputs=[p.inputs[b] for b in buffers],
        scalar_args=[p.scalar_args[i] for i in scalar_args],
        index_args=[p.index_args[i] for i in index_args],
        stmts=stmts,
        stores=[Store(new_index[st.value], st.offset, st.stride) for st in p.stores],
        contract=p.contract,
    )


def simplifications(p: Program) -> Iterator[Program]:
    """Smaller variants of `p`, most aggressive first: one store only, then a
    statement replaced by a fresh load of its type, then a scalar operand
    replaced by a constant."""
    if len(p.stores) > 1:
        for st in p.stores:
            q = copy.deepcopy(p)
            q.stores = [copy.deepcopy(st)]
            yield prune(q)
    for i in reversed(range(len(p.stmts))):
        s = p.stmts[i]
        if s.op != "load":
            q = copy.deepcopy(p)
            q.inputs.append((s.type.elem, s.type.rows * s.type.cols))
            q.stmts[i] = Stmt(
                "load", s.type, buffer=len(q.inputs) - 1, stride=s.type.rows
            )
            if q.recompute_bounds():
                yield prune(q)
        if s.scalar is not None and s.scalar.kind != "const":
            q = copy.deepcopy(p)
            sc = q.stmts[i].scalar
            assert sc is not None
            q.stmts[i].scalar = Scalar("const", sc.elem, value=2.0)
            if q.recompute_bounds():
                yield prune(q)
    for i, s in enumerate(p.stmts):
        if s.op == "load" and (
            s.offset or s.dynamic_stride >= 0 or s.stride != s.type.rows
        ):
            q = copy.deepcopy(p)
            q.stmts[i] = Stmt("load", s.type, buffer=s.buffer, stride=s.type.rows)
            if q.recompute_bounds():
                yield prune(q)


def minimize(p: Program, fails: Callable[[Program], bool]) -> Program:
    """Greedily shrink `p` while `fails` stays true."""
    p = prune(p)
    progress = True
    while progress:
        progress = False
        for q in simplifications(p):
            if fails(q):
                p, progress = q, True
                break
    return p

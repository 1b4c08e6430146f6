"""Random programs over huge splats, written twice: at a huge square shape
(`HUGE`x`HUGE`, terabytes if expanded) and at a small one (`SMALL`x`SMALL`)
whose every matrix is an explicit, element-by-element literal.

The huge program computes with `matrix.constant dense<c>` splats and
`matrix.splat %x` of its scalar arguments; the small one with literals listing
every element (the arguments' values written in), so it runs the interpreter's
ordinary path. Every element of every value is the same in both, so an element
the huge program extracts must equal the small program's, bit for bit.

Ops: add, sub, mul, neg, fma, div (floats), transpose, a cast to another type
and back, and products of a tall `HUGE`xK by a wide Kx`HUGE` splat (K small).
"""

from __future__ import annotations

import random
from dataclasses import dataclass

import numpy as np

HUGE = 1048575
"""The largest matrix dimension: a splat of HUGE x HUGE f32 is 4 TiB."""
SMALL = 3

ELEMENTS = ("f16", "f32", "f64", "i32")
DTYPES = {"f16": np.float16, "f32": np.float32, "f64": np.float64, "i32": np.int32}
CAST_VIA = {"f16": "f32", "f32": "f64", "f64": "f32", "i32": "i64"}
"""The type a value is cast to and back from (f64 -> f32 rounds)."""


@dataclass
class SplatProgram:
    huge: str
    """`func.func @f` at the huge shape, taking `arguments`."""
    small: str
    """`func.func @f` at the small shape, taking no argument."""
    arguments: list[int | float]
    element: str


def _literal(value: int | float, element: str) -> str:
    if element == "i32":
        return str(int(value))
    return repr(float(value))


class _Writer:
    def __init__(self, rng: random.Random, element: str, size: int) -> None:
        self.rng = rng
        self.element = element
        self.size = size
        self.lines: list[str] = []
        self.count = 0

    def type(self, rows: int | None = None, cols: int | None = None) -> str:
        rows = self.size if rows is None else rows
        cols = self.size if cols is None else cols
        return f"!matrix.matrix<{rows}x{cols}x{self.element}>"

    def emit(self, text: str) -> str:
        name = f"%v{self.count}"
        self.count += 1
        self.lines.append(f"  {name} = {text}")
        return name


def _value(rng: random.Random, element: str) -> int | float:
    if element == "i32":
        return rng.randint(-100, 100)
    if rng.random() < 0.5:
        return rng.randint(-8, 8) / 4
    return float(np.asarray(rng.uniform(-4, 4), dtype=DTYPES[element]))


def splat_program(rng: random.Random) -> SplatProgram:
    """One random program (see the module docs)."""
    element = rng.choice(ELEMENTS)
    arguments: list[int | float] = []
    huge = _Writer(rng, element, HUGE)
    small = _Writer(rng, element, SMALL)
    writers = (huge, small)

    def source(rows: int | None = None, cols: int | None = None) -> str:
        """A splat constant or a splat of a new argument, in both programs."""
        value = _value(rng, element)
        kind = "argument" if rng.random() < 0.5 else "constant"
        names: list[str] = []
        for w in writers:
            t = w.type(rows, cols)
            r = w.size if rows is None else rows
            c = w.size if cols is None else cols
            literal = _literal(value, element)
            if w is huge and kind == "argument":
                names.append(w.emit(f"matrix.splat %x{len(arguments)} : {t}"))
            elif w is huge:
                names.append(w.emit(f"matrix.constant dense<{literal}> : {t}"))
            else:
                row = "[" + ", ".join([literal] * c) + "]"
                rows_text = "[" + ", ".join([row] * r) + "]"
                names.append(w.emit(f"matrix.constant dense<{rows_text}> : {t}"))
        if kind == "argument":
            arguments.append(value)
        return names[0]

    # Both programs emit the same lines in the same order: values have the
    # same names in both.
    pool = [source() for _ in range(2)]
    is_float = element != "i32"
    kinds = ["add", "sub", "mul", "transpose", "cast", "matmul", "source"]
    kinds += ["neg", "fma", "div"] if is_float else []
    for _ in range(rng.randint(2, 8)):
        kind = rng.choice(kinds)
        a, b, c = (rng.choice(pool) for _ in range(3))
        if kind == "source":
            pool.append(source())
            continue
        depth = rng.randint(1, 4)
        if kind == "matmul":
            a, b = source(None, depth), source(depth, None)
        name = ""
        for w in writers:
            t = w.type()
            via = t.replace(element, CAST_VIA[element])
            text = {
                "matmul": f"matrix.matmul {a}, {b} : {w.type(None, depth)}, "
                f"{w.type(depth, None)} -> {t}",
                "transpose": f"matrix.transpose {a} : {t} -> {t}",
                "cast": f"matrix.cast {a} : {t} to {via}",
                "neg": f"matrix.neg {a} : {t}",
                "fma": f"matrix.fma {a}, {b}, {c} : {t}",
            }.get(kind, f"matrix.{kind} {a}, {b} : {t}")
            emitted = w.emit(text)
            if kind == "cast":
                emitted = w.emit(f"matrix.cast {emitted} : {via} to {t}")
            name = emitted
        pool.append(name)
    row, col = rng.randrange(HUGE), rng.randrange(HUGE)
    result = pool[-1] if rng.random() < 0.7 else rng.choice(pool)
    scalar = element
    texts: list[str] = []
    for w in writers:
        at = (row, col) if w is huge else (row % SMALL, col % SMALL)
        e = w.emit(f"matrix.extract {result}[{at[0]}, {at[1]}] : {w.type()}")
        params = (
            ", ".join(f"%x{i}: {scalar}" for i in range(len(arguments)))
            if w is huge
            else ""
        )
        body = "\n".join(w.lines)
        texts.append(
            f"func.func @f({params}) -> {scalar} {{\n{body}\n"
            f"  func.return {e} : {scalar}\n}}\n"
        )
    return SplatProgram(texts[0], texts[1], arguments, element)

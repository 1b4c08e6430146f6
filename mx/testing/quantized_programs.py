"""Random low-precision product programs: narrow weights loaded from memory,
decoded, and fed to a contraction, at sizes that cross the lowering's vector
tiles (up to 40 rows, 96 columns).

The lowering decodes such weights in registers inside the product's loop nest
(plain and block-scaled FP8/FP6/FP4, f16/bf16 and integer widenings, a splat
scale), with vector code for some layouts and element by element for others;
mixed-precision products widen their factors in registers. Each of those
paths has its own remainders, offsets and strides. `QuantizedProgram(seed)`
draws one `func.func @f` over them:

- weights: `column_major_load`/`row_major_load` at a random offset (a literal
  or an `index` argument) and stride (`packed` i4 among them) of FP8/FP6/FP4
  codes, f16/bf16 or i8 values, or (unpacked) a matrix argument, C- or
  F-ordered;
- a loop over 2 to 4 layers (`scf.for`) around it all now and then: each load
  at the layer's offset (the induction variable times the layer's size, plus
  the offset), the results summed in a loop-carried value;
- decode: `arbfp.convert_from`, `arbfp.scaled_convert_from` (block 16 or 32,
  e8m0 or e4m3 scales loaded from memory too), `matrix.cast`, or none (a
  mixed-precision product reads the narrow factor itself); then optionally a
  multiply by a splat scale and a transpose;
- consumer: `matvec` (with or without bias), `matmul` with the weights on
  either side, `matmul_add`.

No fastmath flags: every result has one rounding order, so the JIT must
equal the interpreter bit for bit. `covered` names the forms a program used;
`fused` is True for the programs the fused FP4/FP8 matvec kernel must take
(docs/passes.md: f4e2m1fn/f8e4m3fn/f8e5m2 codes decoded to f32 by a matvec, rows
a multiple of 32, ...), which the tests check through the lowering's remark.
"""

from __future__ import annotations

import random
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

import ml_dtypes
import numpy as np

Array = np.ndarray[Any, Any]

FORMAT_CONTAINER = {
    "f8e4m3fn": "i8",
    "f8e5m2": "i8",
    "f6e2m3fn": "i6",
    "f6e3m2fn": "i6",
    "f4e2m1fn": "i4",
}
WIDENINGS = {"f16": "f32", "bf16": "f32", "i8": "i32"}
NUMPY: dict[str, Any] = {
    "f16": np.float16,
    "bf16": ml_dtypes.bfloat16,
    "f32": np.float32,
    "f64": np.float64,
    "i8": np.int8,
    "i32": np.int32,
}


def _matrix(rows: int, cols: int, element: str) -> str:
    return f"!matrix.matrix<{rows}x{cols}x{element}>"


@dataclass
class QuantizedProgram:
    """One random program `@f` (`source`) and its arguments (`arguments`)."""

    seed: int
    source: str = ""
    arguments: list[Any] = field(default_factory=list[Any])
    parameter_types: list[str] = field(default_factory=list[str])
    """The type of each argument of `@f`, as written in `source`."""
    covered: Counter[str] = field(default_factory=Counter[str])
    fused: bool = False
    """The fused FP4/FP8 matvec kernel must compute this program."""
    dynamic_offsets: bool = False
    """Some load's offset is an `index` argument."""

    def __post_init__(self) -> None:
        rnd = random.Random(self.seed)
        self._rnd = rnd
        self._np = np.random.default_rng(self.seed)
        self._body: list[str] = []
        self._loads: list[tuple[str, int | None, int, bool]] = []
        """(layout, literal offset or None, stride, packed) of each load (a
        matrix argument: stride 0)."""
        self._format: str | None = None
        """The FP format of the codes, if the weights are codes."""
        # Spellings and fast-path candidates are drawn apart, so that the
        # other draws stay those of the programs before they were added.
        self._spelling = random.Random(-1 - self.seed)
        self._candidate = self._spelling.random() < 0.3
        """An FP4/FP8 matvec of 32 rows (the fused kernel's shape)."""
        loop = random.Random(f"layers {self.seed}")
        self._layers = loop.randint(2, 4) if loop.random() < 0.3 else 1
        """How many layers a loop runs the program over (1: no loop)."""
        decode = rnd.choice(["convert_from", "scaled", "cast", "mixed"])
        if self._candidate:
            decode = self._spelling.choice(["convert_from", "scaled"])
        self.covered[decode] += 1
        rows = rnd.randint(1, 40)
        if self._candidate:
            rows = 32
        block = rnd.choice([16, 32])
        depth = block * rnd.randint(1, 3) if decode == "scaled" else rnd.randint(1, 96)
        self._one_column = (
            self._candidate and decode == "convert_from" and self._draw_one_column()
        )
        if self._one_column:
            # A matrix argument, C- and F-contiguous: a C-ordered 32x1 one
            # lost the fused kernel.
            self.covered["one column"] += 1
            depth = 1
        if decode == "mixed" and rnd.random() < 0.3:
            # 1- to 3-element vectors and columns (a 3x1 bf16 matvec aborted LLVM).
            self.covered["short depth"] += 1
            depth = rnd.randint(1, 3)
        weights, element = self._weights(decode, rows, depth, block)
        fused = self._fusable(decode, rows, depth, element)
        if decode != "mixed" and element in ("f32", "f64") and rnd.random() < 0.3:
            fused = fused and decode == "convert_from"
            weights = self._splat_scale(weights, rows, depth, element)
        if rnd.random() < 0.25 and not self._candidate:
            fused = False
            self.covered["transpose"] += 1
            t = self._value()
            self._body.append(
                f"{t} = matrix.transpose {weights} : {_matrix(rows, depth, element)}"
                f" -> {_matrix(depth, rows, element)}"
            )
            weights, rows, depth = t, depth, rows
        result_element = WIDENINGS.get(element, element)
        kind = self._consume(weights, rows, depth, element, result_element)
        self.fused = fused and kind.startswith("matvec")
        if self._layers > 1:
            self._sum_over_layers(result_element)
        params = ", ".join(f"%a{i}: {t}" for i, t in enumerate(self.parameter_types))
        body = "\n".join(f"  {line}" for line in self._body)
        self.source = f"func.func @f({params}) -> {self._result_type} {{\n{body}\n}}\n"

    def _draw_one_column(self) -> bool:
        """Whether a fused-kernel candidate's weights are a matrix argument of
        one column (drawn apart from the other draws, which stay those of the
        programs before)."""
        return random.Random(f"one column {self.seed}").random() < 0.4

    def _fusable(self, decode: str, rows: int, depth: int, element: str) -> bool:
        """True if the weights just drawn, decoded by `decode` to `element`,
        fit the fused matvec kernel (consumer aside): FP4/FP8 codes (FP4
        packed at an offset and stride that are even, or an offset checked at
        run time), rows a multiple of 32, row-major rows of whole 32-bit
        words (or one column of an argument), column-major scales."""
        if decode not in ("convert_from", "scaled") or element != "f32":
            return False
        fmt = self._format
        if fmt not in ("f4e2m1fn", "f8e4m3fn", "f8e5m2") or rows % 32 != 0:
            return False
        layout, offset, stride, packed = self._loads[0]
        odd = stride % 2 or (offset is not None and offset % 2)
        if packed and odd:
            return False
        per_word = 8 if packed else 4
        argument = stride == 0  # (`_load`: a matrix argument)
        return (
            layout == "column_major"
            or depth % per_word == 0
            or (argument and depth == 1)  # (either order: the same bytes)
        )

    # -- helpers -----------------------------------------------------------

    def _value(self) -> str:
        return f"%v{len(self._body)}"

    def _argument(self, type_: str, value: Any) -> str:
        name = f"%a{len(self.parameter_types)}"
        self.parameter_types.append(type_)
        self.arguments.append(value)
        return name

    def _load(
        self,
        memory_element: str,
        rows: int,
        cols: int,
        element: str,
        packed: bool,
        codes: Array,
    ) -> str:
        """A load of a rows x cols matrix at a random offset and stride from
        a fresh buffer filled from `codes` (one value per element); or, for
        unpacked elements now and then, the matrix as an argument (a C- or
        F-ordered array: row- or column-major)."""
        rnd = self._rnd
        layout = rnd.choice(["column_major", "row_major"])
        self.covered[f"{layout}{' packed' if packed else ''}"] += 1
        lead = rows if layout == "column_major" else cols
        stride = lead + rnd.choice([0, 0, 1, 2, 5])
        offset = rnd.choice([0, 0, 1, 2, 3])
        dynamic = self._spelling.random() < 0.3
        outer = cols if layout == "column_major" else rows
        span = offset + (outer - 1) * stride + lead
        if packed:
            # Two elements per byte; the bytes past the matrix keep random bits.
            nibbles = self._np.integers(0, 16, span + span % 2).astype(np.uint8)
            positions = self._positions(layout, rows, cols, offset, stride)
            nibbles[positions] = codes.reshape(rows, cols)
            memory: Array = nibbles[0::2] | (nibbles[1::2] << 4)
            memory = memory.astype(np.uint8)
        else:
            memory = self._filler(memory_element, span)
            positions = self._positions(layout, rows, cols, offset, stride)
            if memory_element in ("i6", "i4"):
                # Loads ignore the bits above the container's width.
                high = self._np.integers(0, 256, codes.size).astype(np.uint8)
                codes = codes | (high & ~np.uint8((1 << int(memory_element[1:])) - 1))
            memory[positions] = codes.reshape(rows, cols)
        if not packed and (self._spelling.random() < 0.2 or self._one_column):
            self.covered["matrix argument"] += 1
            array = codes.reshape(rows, cols)
            if layout == "column_major":
                array = np.asfortranarray(array)
            self._loads.append((layout, 0, 0, False))
            return self._argument(_matrix(rows, cols, element), array)
        layer_size = (2 if packed else 1) * memory.size
        if self._layers > 1:  # other layers' bytes: random codes or values
            more = (self._layers - 1) * memory.size
            filler = self._np.integers(0, 256, more) if packed else None
            memory = np.concatenate(
                [memory, self._filler(memory_element, more) if filler is None else filler]
            ).astype(memory.dtype)
        buffer = self._argument(f"memref<?x{memory_element}>", memory)
        offset_text = str(offset)
        if dynamic:
            self.covered["index offset"] += 1
            self.dynamic_offsets = True
            offset_text = self._argument("index", np.int64(offset))
        if self._layers > 1:
            self.dynamic_offsets = True
            offset_text = self._layer_offset(layer_size, offset_text)
        # (In a loop over layers a literal offset keeps its parity: a layer of
        # packed codes is a whole number of bytes, an even number of codes.)
        known = None if dynamic else offset
        self._loads.append((layout, known, stride, packed))
        value = self._value()
        suffix = " packed" if packed else ""
        stride_text = f" stride {stride}" if stride != lead else ""
        self._body.append(
            f"{value} = matrix.{layout}_load {buffer}[{offset_text}]{stride_text}{suffix}"
            f" : memref<?x{memory_element}> -> {_matrix(rows, cols, element)}"
        )
        return value

    def _layer_offset(self, layer_size: int, offset: str) -> str:
        """`%layer * layer_size + offset`, emitted in the loop's body."""
        size, start, base = self._value(), f"%v{len(self._body) + 1}", offset
        self._body.append(f"{size} = arith.constant {layer_size} : index")
        self._body.append(f"{start} = arith.muli %layer, {size} : index")
        if not offset.startswith("%"):
            base = self._value()
            self._body.append(f"{base} = arith.constant {offset} : index")
        at = self._value()
        self._body.append(f"{at} = arith.addi {start}, {base} : index")
        return at

    def _sum_over_layers(self, element: str) -> None:
        """Puts the body in a loop over `_layers` layers whose results are
        summed (from zeros) in a loop-carried value, returned at the end."""
        self.covered["layer loop"] += 1
        result = self._body.pop().split()[1]  # func.return %value : type
        t = self._result_type
        integer = element.startswith("i")
        zero = "0" if integer else "0.0"
        if t.startswith("vector"):
            init = [f"%init = arith.constant dense<{zero}> : {t}"]
            add = "arith.addi" if integer else "arith.addf"
        else:
            init = [
                f"%zero = arith.constant {zero} : {element}",
                f"%init = matrix.splat %zero : {t}",
            ]
            add = "matrix.add"
        self._body = [
            "%first = arith.constant 0 : index",
            "%one = arith.constant 1 : index",
            f"%layers = arith.constant {self._layers} : index",
            *init,
            f"%sum = scf.for %layer = %first to %layers step %one "
            f"iter_args(%partial = %init) -> ({t}) {{",
            *(f"  {line}" for line in self._body),
            f"  %next = {add} %partial, {result} : {t}",
            f"  scf.yield %next : {t}",
            "}",
            f"func.return %sum : {t}",
        ]

    @staticmethod
    def _positions(
        layout: str, rows: int, cols: int, offset: int, stride: int
    ) -> Array:
        r, c = np.meshgrid(np.arange(rows), np.arange(cols), indexing="ij")
        if layout == "column_major":
            return offset + c * stride + r
        return offset + r * stride + c

    def _filler(self, element: str, n: int) -> Array:
        if element in ("i8", "i6", "i4"):
            return self._np.integers(0, 256, n).astype(np.uint8)
        return self._floats(element, n)

    def _floats(self, element: str, n: int) -> Array:
        values = self._np.standard_normal(n) * self._rnd.choice([1.0, 8.0, 1e-3])
        return values.astype(NUMPY[element])

    def _codes(self, fmt: str, n: int) -> Array:
        """Element codes: every encoding, NaN and inf included."""
        width = int(FORMAT_CONTAINER[fmt][1:])
        return self._np.integers(0, 1 << width, n).astype(np.uint8)

    # -- the weights ---------------------------------------------------------

    def _weights(
        self, decode: str, rows: int, depth: int, block: int
    ) -> tuple[str, str]:
        """The decoded weights (a rows x depth matrix) and their element type."""
        rnd = self._rnd
        n = rows * depth
        if decode in ("convert_from", "scaled"):
            fmt = rnd.choice(list(FORMAT_CONTAINER))
            if self._candidate:
                fmt = self._spelling.choice(["f4e2m1fn", "f8e4m3fn", "f8e5m2"])
            self.covered[fmt] += 1
            self._format = fmt
            container = FORMAT_CONTAINER[fmt]
            packed = container == "i4" and (
                rnd.random() < 0.6
                or (self._candidate and self._spelling.random() < 0.7)
            )
            memory = "i8" if packed or container == "i8" else container
            codes = self._codes(fmt, n)
            q = self._load(memory, rows, depth, container, packed, codes)
            target = rnd.choice(["f32", "f32", "f16", "bf16", "f64"])
            if self._candidate:
                target = "f32"
            value = self._value()
            if decode == "convert_from":
                self._body.append(
                    f"{value} = arbfp.convert_from {fmt} {q} : "
                    f"{_matrix(rows, depth, container)} to {_matrix(rows, depth, target)}"
                )
                return value, target
            scale_fmt = rnd.choice(["f8e8m0fnu", "f8e8m0fnu", "f8e4m3fn"])
            self.covered[f"scale {scale_fmt}"] += 1
            blocks = depth // block
            if scale_fmt == "f8e8m0fnu":
                scale_codes = self._np.integers(110, 145, rows * blocks)
                scale_codes[self._np.random(rows * blocks) < 0.05] = 0xFF
            else:
                scale_codes = self._np.integers(0, 256, rows * blocks)
            s = self._load(
                "i8", rows, blocks, "i8", False, scale_codes.astype(np.uint8)
            )
            value = self._value()
            scale_text = "" if scale_fmt == "f8e8m0fnu" else " scale f8e4m3fn"
            self._body.append(
                f"{value} = arbfp.scaled_convert_from {fmt} {q}, {s} block {block}"
                f"{scale_text} : {_matrix(rows, depth, container)}, "
                f"{_matrix(rows, blocks, 'i8')} to {_matrix(rows, depth, target)}"
            )
            return value, target
        narrow = rnd.choice(list(WIDENINGS))
        self.covered[narrow] += 1
        if narrow == "i8":
            codes = self._np.integers(0, 256, n).astype(np.uint8)
            q = self._load("i8", rows, depth, "i8", False, codes)
        else:
            q = self._load(narrow, rows, depth, narrow, False, self._floats(narrow, n))
        if decode == "mixed":
            return q, narrow
        wide = WIDENINGS[narrow]
        value = self._value()
        unsigned = " {unsigned}" if narrow == "i8" and rnd.random() < 0.5 else ""
        self._body.append(
            f"{value} = matrix.cast {q}{unsigned} : {_matrix(rows, depth, narrow)}"
            f" to {_matrix(rows, depth, wide)}"
        )
        return value, wide

    def _splat_scale(self, weights: str, rows: int, depth: int, element: str) -> str:
        self.covered["splat scale"] += 1
        scale = self._argument(element, float(self._rnd.choice([0.125, 0.3, -3.0])))
        splat, product = self._value(), f"%v{len(self._body) + 1}"
        t = _matrix(rows, depth, element)
        self._body.append(f"{splat} = matrix.splat {scale} : {t}")
        self._body.append(f"{product} = matrix.mul {weights}, {splat} : {t}")
        return product

    # -- the consumer ----------------------------------------------------------

    def _operand(self, shape: tuple[int, ...], element: str) -> str:
        """A matrix or vector argument of `element` (the result's element
        type, or one that widens to it)."""
        n = int(np.prod(shape))
        if element in ("i8", "i32"):
            bound = 100 if element == "i8" else 1000
            values: Array = self._np.integers(-bound, bound, n).astype(NUMPY[element])
        else:
            values = self._floats(element, n)
        if len(shape) == 1:
            return self._argument(f"vector<{shape[0]}x{element}>", values)
        return self._argument(
            _matrix(shape[0], shape[1], element), values.reshape(shape)
        )

    def _consume(self, w: str, rows: int, depth: int, element: str, result: str) -> str:
        """Emits the consumer; its kind."""
        rnd = self._rnd
        kind = rnd.choice(
            ["matvec", "matvec bias", "matmul", "matmul left", "matmul_add"]
        )
        if self._candidate:
            kind = self._spelling.choice(["matvec", "matvec bias"])
        self.covered[kind] += 1
        value = self._value()
        wt = _matrix(rows, depth, element)
        if kind.startswith("matvec"):
            x_element = result
            if element != result and rnd.random() < 0.5:
                # A mixed pair: the vector narrow too (f16 x bf16 -> f32).
                self.covered["narrow vector"] += 1
                x_element = rnd.choice(
                    [t for t, wide in WIDENINGS.items() if wide == result]
                )
            x = self._operand((depth,), x_element)
            bias = ""
            bias_type = ""
            if kind == "matvec bias":
                bias = f", {self._operand((rows,), result)}"
                bias_type = f", vector<{rows}x{result}>"
            self._result_type = f"vector<{rows}x{result}>"
            self._body.append(
                f"{value} = matrix.matvec {w}, {x}{bias} : {wt}, "
                f"vector<{depth}x{x_element}>{bias_type} -> {self._result_type}"
            )
        elif kind == "matmul left":
            cols = rnd.randint(1, 20)
            a = self._operand((cols, rows), result)
            self._result_type = _matrix(cols, depth, result)
            self._body.append(
                f"{value} = matrix.matmul {a}, {w} : {_matrix(cols, rows, result)}, "
                f"{wt} -> {self._result_type}"
            )
        else:
            cols = rnd.randint(1, 20)
            b = self._operand((depth, cols), result)
            self._result_type = _matrix(rows, cols, result)
            bt = _matrix(depth, cols, result)
            if kind == "matmul":
                self._body.append(
                    f"{value} = matrix.matmul {w}, {b} : {wt}, {bt} -> {self._result_type}"
                )
            else:
                c = self._operand((rows, cols), result)
                self._body.append(
                    f"{value} = matrix.matmul_add {w}, {b}, {c} : {wt}, {bt}, "
                    f"{self._result_type} -> {self._result_type}"
                )
        self._body.append(f"func.return {value} : {self._result_type}")
        return kind

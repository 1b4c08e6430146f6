"""arbfp's block-scaled conversions through the interpreter and the constant
folder, against the exact reference (`reference/exact_scaled.py`) and, for the
quantizer, a second formulation of OCP MX section 6.3 (microxcaling-style):

- scaled_convert_from: every element encoding x a set of e8m0 and e4m3 scales
  (incl. 2^-127, 2^127, NaN, signed, subnormal and zero e4m3 scales) into every
  destination type;
- scaled_convert_to: fixed-seed random blocks plus special blocks (NaN, inf,
  zero, subnormal, clamp) from every source type, every rounding mode and
  scale rule, block sizes 1, 16 and 32 (`reference/scaled_inputs.py`).
The JIT runs the same sets in test_arbfp_scaled_jit.py.
"""

from __future__ import annotations

from fractions import Fraction
from typing import Any, cast

import numpy as np
import pytest
from xdsl.context import Context
from xdsl.dialects import arith, func
from xdsl.dialects.builtin import Builtin, DenseIntOrFPElementsAttr, ModuleOp
from xdsl.folder import Folder
from xdsl.interpreter import Interpreter
from xdsl.interpreters.func import FuncFunctions
from xdsl.parser import Parser

from mx.dialects.arbfp import Arbfp, ScaledConvertFromOp, ScaledConvertToOp
from mx.dialects.matrix import Matrix
from mx.interpreters.arbfp import ArbfpFunctions
from mx.interpreters.matrix import MatrixFunctions
from mx.semantics.arbfp import Rounding, ScaleRule
from tests.reference import exact_fp as ref
from tests.reference import exact_scaled as scaled_ref
from tests.reference import scaled_inputs as inputs

ELEMENT_FORMATS = [
    n for n in ref.SPECS if n not in ("f8e8m0fnu", "f16")
]  # every arbfp format but the scale format
DESTINATIONS = ("f16", "bf16", "f32", "f64")
MODES = ref.MODES
RULES = ("floor", "ceil")
OCP_FORMATS = ("f8e4m3fn", "f8e5m2", "f6e3m2fn", "f6e2m3fn", "f4e2m1fn")


def _context() -> Context:
    ctx = Context()
    for dialect in (Builtin, arith.Arith, func.Func, Matrix, Arbfp):
        ctx.load_dialect(dialect)
    return ctx


def run(source: str, *args: Any) -> tuple[Any, ...]:
    """Interprets `@f` of `source` on `args`."""
    module = Parser(_context(), source).parse_module()
    module.verify()
    interpreter = Interpreter(module)
    for functions in (FuncFunctions(), ArbfpFunctions(), MatrixFunctions()):
        interpreter.register_implementations(functions)
    return interpreter.call_op("f", args)


def _width(name: str) -> int:
    return ref.SPECS[name].width


def _check_decoded(
    name: str, scale_name: str, destination: str, got: np.ndarray
) -> None:
    elements, scales, block = inputs.decode_grid(name, scale_name)
    for i, value in enumerate(np.asarray(got).reshape(-1).tolist()):
        bits, scale = int(elements[i]), int(scales[i // block])
        want = scaled_ref.scaled_decode(name, scale_name, bits, scale, destination)
        assert ref.exact(float(value)) == want, (hex(bits), hex(scale), value, want)


@pytest.mark.parametrize("scale_name", inputs.SCALES)
@pytest.mark.parametrize("name", ELEMENT_FORMATS)
def test_interpret_decode_every_encoding(name: str, scale_name: str) -> None:
    """One vector of every encoding per scale of the set, into every destination."""
    elements, scales, block = inputs.decode_grid(name, scale_name)
    q = f"vector<{elements.size}xi{_width(name)}>"
    s = f"vector<{scales.size}xi8>"
    results = [f"vector<{elements.size}x{d}>" for d in DESTINATIONS]
    body = "\n".join(
        f"  %r{i} = arbfp.scaled_convert_from {name} %q, %s block {block} "
        f"scale {scale_name} : {q}, {s} to {t}"
        for i, t in enumerate(results)
    )
    returned = ", ".join(f"%r{i}" for i in range(len(results)))
    source = f"""func.func @f(%q: {q}, %s: {s}) -> ({", ".join(results)}) {{
{body}
  func.return {returned} : {", ".join(results)}
}}"""
    outputs = run(source, elements.astype(np.uint8), scales.astype(np.uint8))
    for destination, out in zip(DESTINATIONS, outputs, strict=True):
        _check_decoded(name, scale_name, destination, out)


def _fold(op: Any, *constants: Any) -> list[list[int | float]]:
    """The values `op` folds to, one list per result."""
    ModuleOp([*constants, op])
    folded = Folder(_context()).try_fold(op)
    assert folded is not None, op.name
    values: list[list[int | float]] = []
    for constant, result in zip(folded[1], op.results, strict=True):
        value = constant.properties["value"]
        assert isinstance(value, DenseIntOrFPElementsAttr)
        assert constant.results[0].type == result.type
        values.append(list(cast(Any, value.get_values())))
    return values


@pytest.mark.parametrize("name", ELEMENT_FORMATS)
def test_fold_decode_matrix(name: str) -> None:
    """Folded from matrix constants: one row per scale, into f32."""
    from mx.dialects.matrix import ConstantOp, MatrixType

    for scale_name in inputs.SCALES:
        elements, scales, block = inputs.decode_grid(name, scale_name)
        rows = scales.size
        w = _width(name)
        q = ConstantOp.from_values(
            [int(b) for b in elements], MatrixType(rows, block, _int(w))
        )
        s = ConstantOp.from_values(
            [int(b) - 256 * (b > 127) for b in scales], MatrixType(rows, 1, _int(8))
        )
        op = ScaledConvertFromOp(
            name, q, s, block, MatrixType(rows, block, _float("f32")), scale_name
        )
        (got,) = _fold(op, q, s)
        _check_decoded(name, scale_name, "f32", np.array(got))


def _int(width: int) -> Any:
    from xdsl.dialects.builtin import IntegerType

    return IntegerType(width)


def _float(name: str) -> Any:
    return Parser(_context(), name).parse_type()


# -- scaled_convert_to --------------------------------------------------------


def _check_encoded(
    name: str,
    x: np.ndarray,
    block: int,
    mode: str,
    rule: str,
    got: tuple[np.ndarray, np.ndarray],
) -> None:
    want_elements, want_scales = scaled_ref.scaled_encode(name, x, block, mode, rule)
    got_elements = np.asarray(got[0]).astype(np.int64) & ((1 << _width(name)) - 1)
    got_scales = np.asarray(got[1]).astype(np.int64) & 0xFF
    bad_scales = got_scales != want_scales
    assert not bad_scales.any(), (
        mode,
        rule,
        x.reshape(-1, block)[bad_scales][:2],
        got_scales[bad_scales][:4],
        want_scales[bad_scales][:4],
    )
    # Saturating conversions of finite values never give NaN, so the encodings
    # must be equal, except a NaN into a format without NaN (never here).
    bad = got_elements != want_elements
    assert not bad.any(), (
        mode,
        rule,
        x[bad][:6],
        got_elements[bad][:6],
        want_elements[bad][:6],
    )


def _quantizer(name: str, source: str, block: int, size: int) -> str:
    """`@f` applying scaled_convert_to in every mode and rule to a vector."""
    x = f"vector<{size}x{source}>"
    q = f"vector<{size}xi{_width(name)}>"
    s = f"vector<{size // block}xi8>"
    lines: list[str] = []
    returned: list[str] = []
    for i, (mode, rule) in enumerate((m, r) for m in MODES for r in RULES):
        lines.append(
            f"  %q{i}, %s{i} = arbfp.scaled_convert_to {name} %x block {block} "
            f"rounding {mode} scale_rule {rule} : {x} to {q}, {s}"
        )
        returned += [f"%q{i}", f"%s{i}"]
    types = ", ".join([q, s] * (len(returned) // 2))
    return f"""func.func @f(%x: {x}) -> ({types}) {{
{chr(10).join(lines)}
  func.return {", ".join(returned)} : {types}
}}"""


@pytest.mark.parametrize("block", [1, 16, 32])
@pytest.mark.parametrize("source", DESTINATIONS)
@pytest.mark.parametrize("name", ELEMENT_FORMATS)
def test_interpret_encode(name: str, source: str, block: int) -> None:
    x = inputs.random_blocks(name, source, block, seed=block)
    outputs = run(_quantizer(name, source, block, x.size), x)
    variants = [(m, r) for m in MODES for r in RULES]
    for i, (mode, rule) in enumerate(variants):
        _check_encoded(name, x, block, mode, rule, (outputs[2 * i], outputs[2 * i + 1]))


@pytest.mark.parametrize("name", ELEMENT_FORMATS)
def test_fold_encode(name: str) -> None:
    """Folded from a vector constant (a slice of the f32 set), every variant."""
    from xdsl.dialects.builtin import VectorType

    block = 16
    x = inputs.random_blocks(name, "f32", block, seed=7)[-64 * block :]
    values = x.astype(np.float64).tolist()
    for mode in MODES:
        for rule in RULES:
            constant = arith.ConstantOp(
                DenseIntOrFPElementsAttr.from_list(
                    VectorType(_float("f32"), [x.size]), values
                )
            )
            op = ScaledConvertToOp(
                name,
                constant,
                block,
                VectorType(_int(_width(name)), [x.size]),
                Rounding(mode),
                ScaleRule(rule),
            )
            got_elements, got_scales = _fold(op, constant)
            _check_encoded(
                name,
                x,
                block,
                mode,
                rule,
                (np.array(got_elements), np.array(got_scales)),
            )


def test_reference_special_blocks() -> None:
    """The reference itself on hand-worked blocks of docs/arbfp-block-scaled.md's rules."""
    block = scaled_ref.scaled_encode_block
    half = Fraction(1, 2)
    # amax 12 = 1.5 * 2^3, f4e2m1fn emax 2: e = 1; 12/2 = 6, 3/2 = 1.5, 0.5/2 -> 0.25
    # ties to even 0 (nearest_even) or 0.5 (nearest_away)
    assert block("f4e2m1fn", [Fraction(12), Fraction(-3), half]) == (128, [7, 0xB, 0])
    assert block("f4e2m1fn", [Fraction(12), Fraction(-3), half], "nearest_away") == (
        128,
        [7, 0xB, 1],
    )
    # ceil: 12 / 6 = 2 -> e = 1 as well; 13 / 6 -> e = 2 (13 / 4 = 3.25 -> 3)
    assert block("f4e2m1fn", [Fraction(13)], rule="ceil") == (129, [5])
    assert block("f4e2m1fn", [Fraction(13)]) == (128, [7])  # 6.5 saturates to 6
    assert block("f8e4m3fn", ["nan", Fraction(1)]) == (0xFF, [0, 0])
    assert block("f8e4m3fn", ["-inf", Fraction(1)]) == (0xFF, [0, 0])
    assert block("f8e4m3fn", ["-0", Fraction(0)]) == (0, [0x80, 0])
    assert block("f8e4m3fn", [Fraction(2) ** -200]) == (0, [0])  # clamp at -127
    assert block("f8e4m3fn", [Fraction(2) ** 200]) == (254, [0x7E])  # clamp, saturate
    assert scaled_ref.scaled_decode("f8e4m3", "f8e4m3fn", 0x78, 0x00, "f32") == "nan"


@pytest.mark.parametrize("name", OCP_FORMATS)
def test_quantizer_against_microxcaling_formulation(name: str) -> None:
    """On finite blocks whose scale needs no clamp (nearest even, rule floor),
    interpreter, exact reference and the microxcaling-style formulation agree
    on the dequantized values."""
    block = 32
    x = inputs.random_blocks(name, "f32", block, seed=11).astype(np.float64)
    blocks = x.reshape(-1, block)
    amax = np.abs(blocks).max(axis=1)
    with np.errstate(divide="ignore"):
        e = np.frexp(amax)[1] - 1 - scaled_ref.emax(name)
    keep = np.isfinite(blocks).all(axis=1) & (amax > 0) & (e > -127) & (e < 127)
    x = blocks[keep].reshape(-1).astype(np.float32)
    elements, scales = run(_quantizer(name, "f32", block, x.size), x)[:2]
    dequantized = np.array(
        [
            float(cast(Fraction, ref.decode(name, int(b)))) * 2.0 ** (int(s) - 127)
            for b, s in zip(
                (np.asarray(elements).astype(np.int64) & ((1 << _width(name)) - 1)),
                np.repeat(np.asarray(scales).astype(np.int64) & 0xFF, block),
                strict=True,
            )
        ]
    )
    other = scaled_ref.microxcaling_quantize(name, x.astype(np.float64), block)
    assert x.size > 100 * block
    mismatch = dequantized != other
    assert not mismatch.any(), (x[mismatch][:4], dequantized[mismatch][:4])
    want, _ = scaled_ref.scaled_encode(name, x, block, "nearest_even", "floor")
    assert np.array_equal(
        want, np.asarray(elements).astype(np.int64) & ((1 << _width(name)) - 1)
    )

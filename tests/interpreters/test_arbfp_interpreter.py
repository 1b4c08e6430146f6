"""arbfp through the interpreter and the folder, against the exact reference."""

from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest
from xdsl.dialects import arith
from xdsl.dialects.builtin import (
    FloatAttr,
    IntegerAttr,
    IntegerType,
    ModuleOp,
    f32,
)
from xdsl.folder import Folder
from xdsl.interpreter import Interpreter
from xdsl.interpreters.arith import ArithFunctions
from xdsl.interpreters.func import FuncFunctions
from xdsl.ir import Attribute
from xdsl.parser import Parser

from mx.dialects.arbfp import ConvertFromOp, ConvertToOp
from mx.frontend import mx_context
from mx.interpreters.arbfp import ArbfpFunctions
from mx.semantics.arbfp import FLOAT_TYPES, FORMATS, Rounding, float_dtype
from tests.reference import exact_fp as ref

FLOATS = list(FLOAT_TYPES)


def _run(source: str, *args: object) -> tuple[object, ...]:
    module = Parser(mx_context(), source).parse_module()
    module.verify()
    interpreter = Interpreter(module)
    for functions in (FuncFunctions(), ArithFunctions(), ArbfpFunctions()):
        interpreter.register_implementations(functions)
    return interpreter.call_op("f", args)


def _container(bits: int) -> str:
    return f"i{bits}"


@pytest.mark.parametrize("name", FORMATS)
def test_matrix_convert_from_every_encoding(name: str) -> None:
    """Every encoding, as a matrix, into every float type, against the reference."""
    fmt = FORMATS[name]
    n = 1 << fmt.bits
    c = _container(fmt.bits)
    rows = n // 16
    results = ", ".join(f"!matrix.matrix<{rows}x16x{t}>" for t in FLOATS)
    body = "\n".join(
        f"  %{t} = arbfp.convert_from {name} %q : !matrix.matrix<{rows}x16x{c}> "
        f"to !matrix.matrix<{rows}x16x{t}>"
        for t in FLOATS
    )
    source = f"""
func.func @f(%q: !matrix.matrix<{rows}x16x{c}>) -> ({results}) {{
{body}
  func.return {", ".join(f"%{t}" for t in FLOATS)} : {results}
}}"""
    storage = np.uint8 if fmt.bits < 8 else np.int8
    bits = np.arange(n).astype(np.uint8).astype(storage).reshape(rows, 16)
    outputs = _run(source, bits)
    for t, out in zip(FLOATS, outputs, strict=True):
        assert isinstance(out, np.ndarray)
        assert out.dtype == float_dtype(t) and out.shape == (rows, 16)
        for b, value in enumerate(out.astype(np.float64).ravel().tolist()):
            want = ref.decode(name, b)
            if t == "f16":
                want = ref.to_f16(want)
            assert ref.exact(value) == want, (name, t, b)


@pytest.mark.parametrize("saturate", [False, True])
@pytest.mark.parametrize("mode", list(Rounding))
def test_vector_convert_to_all_bf16(mode: Rounding, saturate: bool) -> None:
    """Every bf16 value as one vector, into every format, against the reference."""
    x = np.arange(1 << 16, dtype=np.uint16).view(ml_dtypes.bfloat16)
    sat = " saturate" if saturate else ""
    for name, fmt in FORMATS.items():
        c = _container(fmt.bits)
        source = f"""
func.func @f(%x: vector<65536xbf16>) -> vector<65536x{c}> {{
  %r = arbfp.convert_to {name} %x rounding {mode.value}{sat} : vector<65536xbf16> to vector<65536x{c}>
  func.return %r : vector<65536x{c}>
}}"""
        (out,) = _run(source, x)
        assert isinstance(out, np.ndarray)
        assert out.dtype == (np.int8 if fmt.bits == 8 else np.uint8)
        got = out.view(np.uint8)
        want = ref.encode_array(name, x, mode.value, saturate)
        assert ref.same_results(name, got, want, x).all(), name


def _scalar_cases() -> list[tuple[str, str, float]]:
    values = [0.0, -0.0, 1.0, -1.5, 0.3, 7e-3, 65504.0, 1e30, -1e-30, float("inf")]
    values += [float("nan"), 1 + 2.0**-4 + 2.0**-30]
    return [(n, t, v) for n in FORMATS for t in FLOATS for v in values]


@pytest.mark.ci_sample(128)
@pytest.mark.parametrize(("name", "float_type", "value"), _scalar_cases())
def test_scalars_interpreted_and_folded(
    name: str, float_type: str, value: float
) -> None:
    """Scalars both ways, interpreted and folded, against the reference."""
    fmt = FORMATS[name]
    c = _container(fmt.bits)
    t = Parser(mx_context(), float_type).parse_type()
    with np.errstate(over="ignore"):  # 1e30 is inf in f16, as intended
        x = float(np.array([value]).astype(float_dtype(float_type))[0])
    is_nan = x != x
    for mode in Rounding:
        for saturate in (False, True):
            sat = " saturate" if saturate else ""
            source = f"""
func.func @f(%x: {float_type}) -> ({c}, {float_type}) {{
  %b = arbfp.convert_to {name} %x rounding {mode.value}{sat} : {float_type} to {c}
  %y = arbfp.convert_from {name} %b : {c} to {float_type}
  func.return %b, %y : {c}, {float_type}
}}"""
            want = ref.encode(name, ref.exact(x), mode.value, saturate)
            bits, back = _run(source, FloatAttr(x, t))  # type: ignore[arg-type]
            assert isinstance(bits, IntegerAttr) and isinstance(back, FloatAttr)
            got = bits.value.data & ((1 << fmt.bits) - 1)
            assert ref.same_result(name, got, want, is_nan), (mode, saturate)
            decoded = ref.decode(name, got)
            expected_back = ref.to_f16(decoded) if float_type == "f16" else decoded
            assert ref.exact(back.value.data) == expected_back or decoded == "nan"
            assert ref.same_result(
                name, _fold(name, t, x, mode, saturate), want, is_nan
            )


def _fold(name: str, t: Attribute, x: float, mode: Rounding, saturate: bool) -> int:
    """The encoding `convert_to` of the constant x folds to."""
    constant = arith.ConstantOp(FloatAttr(x, t))  # type: ignore[arg-type]
    fmt = FORMATS[name]
    op = ConvertToOp(name, constant, IntegerType(fmt.bits), mode, saturate)
    ModuleOp([constant, op])
    folded = Folder(mx_context()).try_fold(op)
    assert folded is not None
    (new,) = folded[1]
    assert isinstance(new, arith.ConstantOp) and isinstance(new.value, IntegerAttr)
    return new.value.value.data & ((1 << fmt.bits) - 1)


def test_fold_convert_from_constant() -> None:
    constant = arith.ConstantOp(IntegerAttr(0x38, IntegerType(8)))
    op = ConvertFromOp("f8e4m3fn", constant, f32)
    ModuleOp([constant, op])
    folded = Folder(mx_context()).try_fold(op)
    assert folded is not None
    (new,) = folded[1]
    assert isinstance(new, arith.ConstantOp)
    assert new.value == FloatAttr(1.0, f32)

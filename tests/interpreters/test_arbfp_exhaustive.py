"""arbfp's conversions through the interpreter and the constant folder on the
full input sets, against the exact reference and
ml_dtypes; the JIT runs the same sets in test_arbfp_jit.py.

- convert_from: every encoding of every format into every float type, folded
  from a vector constant and from a matrix constant;
- convert_to: every f16 and bf16 value and the fixed-seed f32/f64 samples with
  the format's edge cases (`arbfp_inputs`), every rounding mode with and
  without saturation, interpreted as one vector per source type. The folder
  (whose dense attributes cost a Python call per element) gets a 4096-element
  slice of each set, and the whole sets with MX_LONG_TESTS=1.
"""

from __future__ import annotations

from typing import Any, cast

import numpy as np
import pytest
from xdsl.dialects import arith
from xdsl.dialects.builtin import (
    DenseIntOrFPElementsAttr,
    IntegerType,
    ModuleOp,
    VectorType,
)
from xdsl.folder import Folder
from xdsl.interpreter import Interpreter
from xdsl.interpreters.func import FuncFunctions
from xdsl.ir import Attribute, Operation
from xdsl.parser import Parser

from mx.dialects.arbfp import ConvertFromOp, ConvertToOp
from mx.dialects.matrix import ConstantOp as MatrixConstantOp
from mx.dialects.matrix import MatrixType
from mx.frontend import mx_context
from mx.interpreters.arbfp import ArbfpFunctions
from mx.semantics.arbfp import FLOAT_TYPES, FORMATS, Rounding
from tests.reference import arbfp_inputs as inputs
from tests.reference import exact_fp as ref

VARIANTS = [(mode, saturate) for mode in Rounding for saturate in (False, True)]
FOLDED = None if inputs.LONG else 4096


def _type(spelling: str) -> Attribute:
    return Parser(mx_context(), spelling).parse_type()


def _fold(op: Operation, operand: Operation) -> list[int | float]:
    """The values `op` (whose operand is the constant `operand`) folds to."""
    ModuleOp([operand, op])
    folded = Folder(mx_context()).try_fold(op)
    assert folded is not None, op.name
    (constant,) = folded[1]
    value = constant.properties["value"]
    assert isinstance(value, DenseIntOrFPElementsAttr)
    assert constant.results[0].type == op.results[0].type
    return list(cast(Any, value.get_values()))


def _check_decoded(name: str, float_type: str, got: list[int | float]) -> None:
    for bits, value in enumerate(got):
        want = ref.decode(name, bits)
        if float_type == "f16":
            want = ref.to_f16(want)
        assert ref.exact(float(value)) == want, (name, float_type, hex(bits), value)


@pytest.mark.parametrize("float_type", FLOAT_TYPES)
@pytest.mark.parametrize("name", FORMATS)
def test_fold_every_encoding(name: str, float_type: str) -> None:
    """Every encoding folded as a vector constant and as a matrix constant."""
    fmt = FORMATS[name]
    n = 1 << fmt.bits
    container = IntegerType(fmt.bits)
    encodings = list(range(n))
    vector = _type(f"vector<{n}x{float_type}>")
    constant = arith.ConstantOp(
        DenseIntOrFPElementsAttr.from_list(VectorType(container, [n]), encodings)
    )
    _check_decoded(
        name, float_type, _fold(ConvertFromOp(name, constant, vector), constant)
    )
    rows = n // 4
    matrix = MatrixConstantOp.from_values(
        encodings, cast(MatrixType, _type(f"!matrix.matrix<{rows}x4xi{fmt.bits}>"))
    )
    result = _type(f"!matrix.matrix<{rows}x4x{float_type}>")
    _check_decoded(name, float_type, _fold(ConvertFromOp(name, matrix, result), matrix))


def _encodings(name: str, got: np.ndarray) -> np.ndarray:
    return np.asarray(got).astype(np.int64) & ((1 << FORMATS[name].bits) - 1)


def _check_encoded(
    name: str, x: np.ndarray, mode: Rounding, saturate: bool, got: np.ndarray
) -> None:
    want = ref.encode_array(name, x, mode.value, saturate)
    same = ref.same_results(name, got, want, x)
    assert same.all(), (mode, saturate, x[~same][:6], got[~same][:6])
    nearest = mode is Rounding.NEAREST_EVEN and not saturate
    # ml_dtypes lacks f8e5m3fnu and rounds f64 through f32 (double rounding).
    if nearest and name in inputs.ML_DTYPES and x.dtype != np.float64:
        agrees = inputs.ml_dtypes_agrees(name, x, got)
        assert agrees.all(), (x[~agrees][:6], got[~agrees][:6])


@pytest.mark.parametrize("source", FLOAT_TYPES)
@pytest.mark.parametrize("name", FORMATS)
def test_interpret_convert_to(name: str, source: str) -> None:
    """The whole input set as one vector, every mode, with and without saturation."""
    fmt = FORMATS[name]
    x = inputs.sources(name)[source]
    s = f"vector<{x.size}x{source}>"
    d = f"vector<{x.size}xi{fmt.bits}>"
    body = "\n".join(
        f"  %r{i} = arbfp.convert_to {name} %x rounding {mode.value}"
        f"{' saturate' if saturate else ''} : {s} to {d}"
        for i, (mode, saturate) in enumerate(VARIANTS)
    )
    results = ", ".join([d] * len(VARIANTS))
    returned = ", ".join(f"%r{i}" for i in range(len(VARIANTS)))
    source_text = f"""func.func @f(%x: {s}) -> ({results}) {{
{body}
  func.return {returned} : {results}
}}"""
    module = Parser(mx_context(), source_text).parse_module()
    interpreter = Interpreter(module)
    interpreter.register_implementations(FuncFunctions())
    interpreter.register_implementations(ArbfpFunctions())
    outputs = interpreter.call_op("f", (x,))
    for (mode, saturate), out in zip(VARIANTS, outputs, strict=True):
        _check_encoded(name, x, mode, saturate, _encodings(name, out))


@pytest.mark.parametrize("source", FLOAT_TYPES)
@pytest.mark.parametrize("name", FORMATS)
def test_fold_convert_to(name: str, source: str) -> None:
    """Folded from a vector constant, every mode, with and without saturation."""
    fmt = FORMATS[name]
    x = inputs.sources(name)[source]
    if FOLDED is not None and x.size > FOLDED:
        # Spread over the whole set, plus its end (the f32/f64 edge cases).
        x = np.concatenate([x[:: x.size // FOLDED], x[-FOLDED // 4 :]])
    with np.errstate(invalid="ignore"):
        values = x.astype(np.float64).tolist()  # exact
    float_type = _type(source)
    for mode, saturate in VARIANTS:
        constant = arith.ConstantOp(
            DenseIntOrFPElementsAttr.from_list(
                VectorType(cast(Any, float_type), [x.size]), values
            )
        )
        op = ConvertToOp(
            name,
            constant,
            VectorType(IntegerType(fmt.bits), [x.size]),
            mode,
            saturate,
        )
        got = _encodings(name, np.array(_fold(op, constant)))
        _check_encoded(name, x, mode, saturate, got)

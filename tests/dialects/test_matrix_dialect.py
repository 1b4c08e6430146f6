"""The `matrix` dialect's Python API: building ops with xDSL builders, verifying, printing."""

import re
from io import StringIO

import pytest
from xdsl.builder import Builder
from xdsl.dialects import arith, func
from xdsl.dialects.builtin import (
    DYNAMIC_INDEX,
    Float32Type,
    IndexType,
    MemRefType,
    ModuleOp,
    VectorType,
    f32,
    f64,
    i32,
)
from xdsl.ir import Attribute, Block, Region
from xdsl.parser import Parser
from xdsl.printer import Printer
from xdsl.rewriter import InsertPoint
from xdsl.utils.exceptions import VerifyException

from mx.dialects import matrix
from mx.dialects.matrix import MatrixType
from mx.frontend import mx_context


def _print(module: ModuleOp) -> str:
    out = StringIO()
    Printer(stream=out).print_op(module)
    return out.getvalue()


def test_type_accessors() -> None:
    t = MatrixType(2, 3, f32)
    assert (t.rows, t.cols, t.shape, t.num_elements) == (2, 3, (2, 3), 6)
    assert t.transposed() == MatrixType(3, 2, f32)
    assert t.with_element_type(i32) == MatrixType(2, 3, i32)
    assert str(t) == "!matrix.matrix<2x3xf32>"


@pytest.mark.parametrize(
    ("rows", "cols", "element", "message"),
    [
        (0, 3, f32, "matrix row count 0 is outside [1, 1048575]"),
        (3, 1 << 20, f32, "matrix column count 1048576 is outside [1, 1048575]"),
        (2, 2, IndexType(), "invalid matrix element type 'index'"),
    ],
)
def test_type_verifier(rows: int, cols: int, element: Attribute, message: str) -> None:
    with pytest.raises(VerifyException, match=message.replace("[", r"\[")):
        MatrixType(rows, cols, element)


def test_build_a_function_with_builders() -> None:
    """Build `C = Aᵀ·B + splat(x)` and an element read with the op constructors."""
    a_type, b_type = MatrixType(3, 2, f64), MatrixType(3, 4, f64)
    block = Block(arg_types=[a_type, b_type, f64, IndexType()])
    a, b, x, i = block.args
    builder = Builder(InsertPoint.at_end(block))
    at = builder.insert(matrix.TransposeOp(a)).result
    product = builder.insert(matrix.MatmulOp(at, b)).result
    splat = builder.insert(matrix.SplatOp(x, MatrixType(2, 4, f64))).result
    total = builder.insert(
        matrix.AddOp(product, splat, fastmath=arith.FastMathFlagsAttr("fast"))
    ).result
    element = builder.insert(matrix.ExtractOp(total, [i, 3])).result
    builder.insert(func.ReturnOp(total, element))
    f = func.FuncOp(
        "f", ((a_type, b_type, f64, IndexType()), (total.type, f64)), Region(block)
    )
    module = ModuleOp([f])
    module.verify()

    text = _print(module)
    assert re.search(
        r"matrix\.transpose %\w+ : !matrix\.matrix<3x2xf64> -> !matrix\.matrix<2x3xf64>",
        text,
    )
    assert "fastmath<fast>" in text
    assert "matrix.extract" in text and ", 3] : !matrix.matrix<2x4xf64>" in text
    # What we print parses back to the same text.
    reparsed = Parser(mx_context(), text).parse_module()
    reparsed.verify()
    assert _print(reparsed) == text


def test_mixed_indices_accessors() -> None:
    block = Block(
        arg_types=[MatrixType(4, 4, f32), IndexType(), MemRefType(f32, [DYNAMIC_INDEX])]
    )
    m, i, mem = block.args
    extract = matrix.ExtractOp(m, [i, 2])
    assert extract.indices() == [i, 2]
    load = matrix.ColumnMajorLoadOp(mem, MatrixType(4, 4, f32), offset=i)
    assert load.offset() == i
    assert load.stride() == 4, (
        "the default stride of a column-major load is the row count"
    )
    row_load = matrix.RowMajorLoadOp(mem, MatrixType(2, 3, f32), offset=5, stride=i)
    assert (row_load.offset(), row_load.stride()) == (5, i)
    assert matrix.RowMajorLoadOp.element_position(1, 2, 7) == 1 * 7 + 2
    assert matrix.ColumnMajorLoadOp.element_position(1, 2, 7) == 2 * 7 + 1


def test_verifier_rejects_built_ops() -> None:
    """Verification of ops built in Python reports the same errors as parsed ones."""
    block = Block(arg_types=[MatrixType(2, 3, f32), MatrixType(2, 3, f32)])
    a, b = block.args
    with pytest.raises(
        VerifyException, match=r"inner dimensions of .matrix\.matmul. do not agree"
    ):
        matrix.MatmulOp(a, b).verify()
    with pytest.raises(VerifyException, match=r"row index 2 is outside \[0, 2\)"):
        matrix.ExtractOp(a, [2, 0]).verify()
    vec = Block(arg_types=[VectorType(f32, [3]), VectorType(Float32Type(), [2])]).args
    outer = matrix.OuterProductOp(vec[0], vec[1])
    outer.verify()
    assert outer.result.type == MatrixType(3, 2, f32)


def test_constant_from_values_is_row_major() -> None:
    op = matrix.ConstantOp.from_values(
        [1.0, 2.0, 3.0, 4.0, 5.0, 6.0], MatrixType(2, 3, f32)
    )
    op.verify()
    assert op.row_major_values() == (1.0, 2.0, 3.0, 4.0, 5.0, 6.0)
    out = StringIO()
    Printer(stream=out).print_op(op)
    assert (
        "dense<[[1.000000e+00, 2.000000e+00, 3.000000e+00], [4.000000e+00, 5.000000e+00, 6.000000e+00]]>"
        in out.getvalue()
    )


def test_splat_constant_prints_one_value_but_keeps_signed_zero_apart() -> None:
    t = MatrixType(1, 2, f32)
    out = StringIO()
    Printer(stream=out).print_op(matrix.ConstantOp.from_values([0.0, -0.0], t))
    assert "dense<[[0.000000e+00, -0.000000e+00]]>" in out.getvalue()
    out = StringIO()
    Printer(stream=out).print_op(matrix.ConstantOp.from_values([2.0, 2.0], t))
    assert "dense<2.000000e+00>" in out.getvalue()

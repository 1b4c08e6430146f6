"""The ops' syntax comes from their declarative `assembly_format`s and the
custom directives of mx/dialects/directives.py: which ops are declarative, the
round trip of mixed literal/SSA index lists and default strides against the
text docs/matrix-dialect.md prescribes (written here by hand), and located
errors for a type that is not a matrix."""

import re
from dataclasses import dataclass
from io import StringIO

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from xdsl.ir import SSAValue
from xdsl.irdl import IRDLOperation
from xdsl.parser import Parser
from xdsl.printer import Printer
from xdsl.utils.exceptions import ParseError, VerifyException

from mx.dialects.arbfp import Arbfp
from mx.dialects.matrix import (
    ConstantOp,
    ExtractOp,
    InsertOp,
    Matrix,
    MemoryAccessOp,
)
from mx.frontend import FrontendError, mx_context, parse_and_verify
from mx.xdsl_compat import patches as fixes

HAND_WRITTEN = {ConstantOp}
"""Ops whose syntax the assembly format cannot express (each says why)."""


@pytest.mark.parametrize(
    "op", [*Matrix.operations, *Arbfp.operations], ids=lambda op: op.name
)
def test_ops_are_declarative(op: type[IRDLOperation]) -> None:
    declarative = op.get_irdl_definition().assembly_format is not None
    assert declarative != (op in HAND_WRITTEN)


def _printed(text: str) -> str:
    out = StringIO()
    Printer(stream=out).print_op(parse_and_verify(text))
    return out.getvalue()


@dataclass(frozen=True)
class Access:
    op: str
    rows: int
    cols: int
    element: str
    packed: bool
    offset: str
    stride: str | None

    @property
    def loads(self) -> bool:
        return self.op.endswith("load")

    @property
    def default_stride(self) -> int:
        return self.rows if self.op.startswith("column_major") else self.cols

    @property
    def matrix(self) -> str:
        return f"!matrix.matrix<{self.rows}x{self.cols}x{self.element}>"

    @property
    def memref(self) -> str:
        return "memref<?xi8>" if self.packed else f"memref<?x{self.element}>"

    def line(self, stride: str | None) -> str:
        layout = f"%mem[{self.offset}]" + (
            "" if stride is None else f" stride {stride}"
        )
        layout += " packed" if self.packed else ""
        if self.loads:
            return f"%r = matrix.{self.op} {layout} : {self.memref} -> {self.matrix}"
        return f"matrix.{self.op} %m, {layout} : {self.matrix}, {self.memref}"

    def function(self, body: str) -> str:
        return (
            f"func.func @f(%mem: {self.memref}, %m: {self.matrix}, %o: index, "
            f"%s: index) {{\n  {body}\n  func.return\n}}\n"
        )


@st.composite
def accesses(draw: st.DrawFn) -> Access:
    rows, cols = draw(st.integers(1, 6)), draw(st.integers(1, 6))
    element = draw(st.sampled_from(["f32", "i8", "i4", "i6"]))
    packed = element in ("i4", "i6") and draw(st.booleans())
    op = draw(
        st.sampled_from(
            [
                "column_major_load",
                "row_major_load",
                "column_major_store",
                "row_major_store",
            ]
        )
    )
    access = Access(op, rows, cols, element, packed, "", None)
    offset = draw(st.sampled_from(["%o", str(draw(st.integers(0, 1000)))]))
    stride = draw(
        st.sampled_from(
            [None, "%s", str(access.default_stride + draw(st.integers(0, 3)))]
        )
    )
    return Access(op, rows, cols, element, packed, offset, stride)


@settings(max_examples=60, deadline=None)
@given(access=accesses())
def test_loads_and_stores_print_the_stride_only_when_it_is_not_the_default(
    access: Access,
) -> None:
    shown = None if access.stride == str(access.default_stride) else access.stride
    expected = access.line(shown)
    printed = _printed(access.function(access.line(access.stride)))
    assert expected in printed, (expected, printed)
    assert _printed(printed) == printed

    module = parse_and_verify(access.function(access.line(access.stride)))
    (op,) = (o for o in module.walk() if isinstance(o, MemoryAccessOp))
    stride = access.stride or str(access.default_stride)
    for value, written in ((op.offset(), access.offset), (op.stride(), stride)):
        if isinstance(value, SSAValue):
            assert written.startswith("%") and value.name_hint == written[1:]
        else:
            assert str(value) == written
    assert op.is_packed == access.packed


@settings(max_examples=40, deadline=None)
@given(
    rows=st.integers(1, 5),
    cols=st.integers(1, 5),
    data=st.data(),
    insert=st.booleans(),
)
def test_index_pairs_round_trip(
    rows: int, cols: int, data: st.DataObject, insert: bool
) -> None:
    row = data.draw(st.sampled_from(["%i", str(data.draw(st.integers(0, rows - 1)))]))
    col = data.draw(st.sampled_from(["%j", str(data.draw(st.integers(0, cols - 1)))]))
    t = f"!matrix.matrix<{rows}x{cols}xi16>"
    line = (
        f"%r = matrix.insert %e, %m[{row}, {col}] : {t}"
        if insert
        else f"%r = matrix.extract %m[{row}, {col}] : {t}"
    )
    text = (
        f"func.func @f(%m: {t}, %e: i16, %i: index, %j: index) {{\n"
        f"  {line}\n  func.return\n}}\n"
    )
    printed = _printed(text)
    assert f"    {line}\n" in printed
    (op,) = (
        o for o in parse_and_verify(text).walk() if isinstance(o, InsertOp | ExtractOp)
    )
    indices = [v.name_hint if isinstance(v, SSAValue) else v for v in op.indices()]
    assert indices == [w[1:] if w.startswith("%") else int(w) for w in (row, col)]


NOT_A_MATRIX = [
    "%r = matrix.add %a, %a : TYPE",
    "%r = matrix.neg %a : TYPE",
    "%r = matrix.fma %a, %a, %a : TYPE",
    "%r = matrix.splat %x : TYPE",
    "%r = matrix.extract %a[0, 0] : TYPE",
    "%r = matrix.insert %x, %a[0, 0] : TYPE",
    "%r = matrix.row_major_load %mem[0] : memref<?xf32> -> TYPE",
    "matrix.column_major_store %a, %mem[0] stride 4 : TYPE, memref<?xf32>",
]


@pytest.mark.parametrize("line", NOT_A_MATRIX)
@pytest.mark.parametrize("bad", ["f32", "vector<4xf32>", "tensor<2x2xf32>"])
def test_a_type_that_is_not_a_matrix_is_an_error_at_the_type(
    line: str, bad: str
) -> None:
    text = (
        "func.func @f(%a: !matrix.matrix<2x2xf32>, %x: f32, %mem: memref<?xf32>) {\n"
        f"  {line.replace('TYPE', bad)}\n  func.return\n}}\n"
    )
    with pytest.raises(FrontendError) as caught:
        parse_and_verify(text, "t.mlir")
    column = 3 + line.index("TYPE")
    first = str(caught.value).splitlines()[0]
    assert re.fullmatch(
        rf"t\.mlir:2:{column}: error: expected a matrix type, got '{re.escape(bad)}'",
        first,
    ), first


@pytest.mark.parametrize(
    ("arguments", "line", "message"),
    [
        (
            "%mem: memref<?xf32>",
            "%r = matrix.column_major_load %mem[0] : f32 -> !matrix.matrix<2x2xf32>",
            "f32 should be of base attribute memref",
        ),
        (
            "%a: vector<4xf32>",
            "%r = matrix.cast %a : vector<4xf32> to !matrix.matrix<2x2xf32>",
            "vector<4xf32> should be of base attribute matrix.matrix",
        ),
        ("%a: f32", "%r = arith.addi %a, %a : f32", "f32"),
    ],
)
def test_fix_a_type_against_its_constraint_is_an_error_at_the_type(
    arguments: str, line: str, message: str
) -> None:
    """A `type($x)` of a declarative format that breaks its constraint: stock
    xDSL raises a bare VerifyException after the op; with the fix, a parse
    error at the type (the first one the line writes after its colon)."""
    text = f"func.func @f({arguments}) {{\n  {line}\n  func.return\n}}\n"
    with fixes.stock_xdsl(), pytest.raises(VerifyException):
        Parser(mx_context(), text).parse_module()
    with pytest.raises(ParseError) as caught:
        Parser(mx_context(), text).parse_module()
    assert caught.value.span.start == text.index(" : ") + 3
    assert message in caught.value.msg

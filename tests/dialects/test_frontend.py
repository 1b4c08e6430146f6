"""Tests of mx's front end (`mx.frontend`, `mx.diagnostics`, `mx.xdsl_compat`):
bit-exact literals, located errors for bad input, deep nesting, the xDSL fixes."""

import io
import struct
import subprocess
import sys
from pathlib import Path

import ml_dtypes
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from xdsl.dialects.builtin import (
    BFloat16Type,
    Float16Type,
    Float32Type,
    Float64Type,
    IndexType,
    IntegerAttr,
    IntegerType,
)
from xdsl.ir import Block, Operation
from xdsl.irdl import IRDLOperation, OpDef, irdl_op_definition, traits_def
from xdsl.parser import Parser
from xdsl.printer import Printer
from xdsl.transforms.canonicalize import CanonicalizePass
from xdsl.utils.exceptions import ParseError
from xdsl.utils.lexer import Input, Span
from xdsl.utils.mlir_lexer import MLIRLexer, MLIRTokenKind

from mx.diagnostics import EXCERPT_WIDTH, Diag, Source, located_message
from mx.dialects.matrix import ConstantOp
from mx.frontend import FrontendError, mx_context, parse_and_verify
from mx.jit import compile_module
from mx.tools.mx_opt import main
from mx.xdsl_compat import patches as fixes
from tests.nests import nested_loops

BIN = Path(sys.executable).parent
BF16 = ml_dtypes.bfloat16

FLOAT_TYPES = {
    "f16": (Float16Type(), 5, 10),
    "bf16": (BFloat16Type(), 8, 7),
    "f32": (Float32Type(), 8, 23),
    "f64": (Float64Type(), 11, 52),
}


@st.composite
def special_bits(draw: st.DrawFn, exponent_bits: int, fraction_bits: int) -> int:
    """NaNs (any payload, quiet or signalling), infinities, zeros, subnormals
    and the extremes of the finite range, with either sign."""
    sign = draw(st.integers(0, 1))
    top = (1 << exponent_bits) - 1
    exponent = draw(st.sampled_from([top, top, 0, 1, top - 1]))
    fraction = draw(
        st.sampled_from([0, 1, (1 << fraction_bits) - 1, 1 << (fraction_bits - 1)])
        | st.integers(0, (1 << fraction_bits) - 1)
    )
    return (
        (sign << (exponent_bits + fraction_bits))
        | (exponent << fraction_bits)
        | fraction
    )


def _round_trip(text: str) -> str:
    """`text` parsed and printed as mx-opt does."""
    module = parse_and_verify(text)
    out = io.StringIO()
    Printer(stream=out).print_op(module)
    return out.getvalue()


def _constant(module_text: str) -> ConstantOp:
    module = parse_and_verify(module_text)
    return next(op for op in module.walk() if isinstance(op, ConstantOp))


@settings(max_examples=300, deadline=None)
@given(data=st.data(), name=st.sampled_from(sorted(FLOAT_TYPES)))
def test_float_constants_round_trip_bit_exactly(data: st.DataObject, name: str) -> None:
    """print -> parse gives the same bits for every special value of every float type."""
    type_, exponent_bits, fraction_bits = FLOAT_TYPES[name]
    strategy = special_bits(exponent_bits, fraction_bits)
    bits = [data.draw(strategy) for _ in range(4)]
    t = f"!matrix.matrix<2x2x{name}>"
    text = (
        f"func.func @f() -> {t} {{\n"
        f"  %c = matrix.constant dense<{_rows(bits, type_.bitwidth // 4)}> : {t}\n"
        f"  func.return %c : {t}\n}}\n"
    )
    first = _constant(text)
    printed = _round_trip(text)
    second = _constant(printed)
    assert first.value.data.data == second.value.data.data
    size = type_.compile_time_size
    assert [
        int.from_bytes(first.value.data.data[i : i + size], "little")
        for i in range(0, 4 * size, size)
    ] == bits
    assert _round_trip(printed) == printed


def _rows(bits: list[int], width: int) -> str:
    row = [f"0x{b:0{width}x}" for b in bits]
    return f"[[{row[0]}, {row[1]}], [{row[2]}, {row[3]}]]"


def _scalar_text(bits: int, name: str) -> str:
    width = FLOAT_TYPES[name][0].bitwidth // 4
    return (
        f"func.func @f() -> {name} {{\n"
        f"  %c = arith.constant 0x{bits:0{width}x} : {name}\n"
        f"  func.return %c : {name}\n}}\n"
    )


def _vector_text(bits: list[int], name: str) -> str:
    width = FLOAT_TYPES[name][0].bitwidth // 4
    t = f"vector<{len(bits)}x{name}>"
    elements = ", ".join(f"0x{b:0{width}x}" for b in bits)
    return (
        f"func.func @f() -> {t} {{\n"
        f"  %c = arith.constant dense<[{elements}]> : {t}\n"
        f"  func.return %c : {t}\n}}\n"
    )


def _exponent_all_ones(bits: int, name: str) -> bool:
    _, exponent_bits, fraction_bits = FLOAT_TYPES[name]
    ones = (1 << exponent_bits) - 1
    return (bits >> fraction_bits) & ones == ones


@settings(max_examples=300, deadline=None)
@given(data=st.data(), name=st.sampled_from(sorted(FLOAT_TYPES)))
def test_scalar_and_vector_float_constants_keep_their_bits(
    data: st.DataObject, name: str
) -> None:
    """`arith.constant` scalars and builtin `dense` vectors: a NaN or an
    infinity prints as the bits it was written with (xDSL's conversions quieted
    signalling NaNs of f16, bf16 and f32: 0x7fa00001 -> 0x7fe00001), and every
    value re-parses to the same printed form."""
    _, exponent_bits, fraction_bits = FLOAT_TYPES[name]
    strategy = special_bits(exponent_bits, fraction_bits)
    width = FLOAT_TYPES[name][0].bitwidth // 4
    bits = [data.draw(strategy) for _ in range(3)]
    for text in (_scalar_text(bits[0], name), _vector_text(bits, name)):
        printed = _round_trip(text)
        assert _round_trip(printed) == printed
        for b in bits if "vector" in text else bits[:1]:
            if _exponent_all_ones(b, name):
                assert f"0x{b:0{width}x}" in printed, (hex(b), printed)


def test_nan_constants_keep_their_bits_in_compiled_code() -> None:
    """Signalling and quiet NaNs with payloads, as scalar and vector
    constants, reach memory with the bits written (LLVM IR spells an f32
    constant as the double of the same value, a payload shifted by 29 bits)."""
    bits = {
        "f16": [0x7C01, 0xFC01, 0x7D55, 0x7E01],
        "bf16": [0x7F81, 0xFF81, 0x7FA5, 0x7FC1],
        "f32": [0x7FA00001, 0xFF800001, 0x7F800F00, 0x7FC00001],
        "f64": [0x7FF0000000000001, 0xFFF4000000000000, 0x7FF8000000000001, 1],
    }
    views = {"f16": np.uint16, "bf16": np.uint16, "f32": np.uint32, "f64": np.uint64}
    dtypes = {"f16": np.float16, "bf16": BF16, "f32": np.float32, "f64": np.float64}
    for name, patterns in bits.items():
        width = FLOAT_TYPES[name][0].bitwidth // 4
        hexes = [f"0x{b:0{width}x}" for b in patterns]
        stores = "".join(
            f"  %s{i} = arith.constant {h} : {name}\n"
            f"  %i{i} = arith.constant {i} : index\n"
            f"  memref.store %s{i}, %out[%i{i}] : memref<8x{name}>\n"
            for i, h in enumerate(hexes)
        )
        module = compile_module(
            f"func.func @k(%out: memref<8x{name}>) {{\n{stores}"
            f"  %v = arith.constant dense<[{', '.join(hexes)}]> : vector<4x{name}>\n"
            f"  %four = arith.constant 4 : index\n"
            f"  vector.store %v, %out[%four] : memref<8x{name}>, vector<4x{name}>\n"
            "  func.return\n}\n"
        )
        out = np.zeros(8, dtypes[name])
        module.k(out)
        assert out.view(views[name]).tolist() == patterns * 2, name


def test_fix_float_conversions_keep_nan_bits() -> None:
    """Stock xDSL's f16/bf16/f32 conversions quiet a signalling NaN (the
    behaviour replaced); with the fixes, every NaN keeps its bits."""
    f32, bf16 = Float32Type(), BFloat16Type()
    signalling = (0x7FA00001).to_bytes(4, "little")
    with fixes.stock_xdsl():
        quieted = f32.pack(f32.unpack(signalling, 1))
    assert quieted == (0x7FE00001).to_bytes(4, "little")
    for type_, raw in ((f32, signalling), (bf16, (0xFF81).to_bytes(2, "little"))):
        (value,) = type_.unpack(raw, 1)
        assert type_.pack((value,)) == raw
        assert type_.pack(list(type_.iter_unpack(raw))) == raw
        buffer = bytearray(len(raw))
        type_.pack_into(buffer, 0, value)
        assert bytes(buffer) == raw
    # A NaN a narrower type cannot hold exactly is quieted, as hardware does.
    wide = struct.unpack("<d", (0x7FF0000000000001).to_bytes(8, "little"))[0]
    assert f32.pack((wide,)) == (0x7FC00000).to_bytes(4, "little")
    assert f32.unpack((0x3F800000).to_bytes(4, "little"), 1) == (1.0,)
    with fixes.stock_xdsl():
        assert "unpack" not in Float32Type.__dict__


@settings(max_examples=100, deadline=None)
@given(
    width=st.sampled_from([4, 6, 8, 16, 32, 64]),
    data=st.data(),
)
def test_integer_constants_round_trip(width: int, data: st.DataObject) -> None:
    values = data.draw(
        st.lists(
            st.integers(-(1 << (width - 1)), (1 << (width - 1)) - 1),
            min_size=2,
            max_size=2,
        )
    )
    t = f"!matrix.matrix<1x2xi{width}>"
    text = (
        f"func.func @f() -> {t} {{\n  %c = matrix.constant dense<[[{values[0]}, "
        f"{values[1]}]]> : {t}\n  func.return %c : {t}\n}}\n"
    )
    printed = _round_trip(text)
    assert _constant(printed).value.data.data == _constant(text).value.data.data
    assert IntegerType(width).unpack(_constant(printed).value.data.data, 2) == tuple(
        values
    )


def test_folded_nan_survives_a_pipe_into_mx_run(tmp_path: Path) -> None:
    """`mx-opt -p canonicalize | mx-run` gives what the one-step run gives."""
    source = tmp_path / "nan.mlir"
    source.write_text(
        "func.func @main() -> !matrix.matrix<1x3xf32> {\n"
        "  %a = matrix.constant dense<[[0.0, 1.0, -1.0]]> : !matrix.matrix<1x3xf32>\n"
        "  %z = matrix.constant dense<0.0> : !matrix.matrix<1x3xf32>\n"
        "  %d = matrix.div %a, %z : !matrix.matrix<1x3xf32>\n"
        "  func.return %d : !matrix.matrix<1x3xf32>\n}\n"
    )
    folded = subprocess.run(
        [BIN / "mx-opt", "-p", "canonicalize", source],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    assert "matrix.div" not in folded
    piped = subprocess.run(
        [BIN / "mx-run", "-"], input=folded, capture_output=True, text=True, check=True
    ).stdout
    direct = subprocess.run(
        [BIN / "mx-run", source], capture_output=True, text=True, check=True
    ).stdout
    assert "nan" in piped and "inf" in piped
    assert piped == direct


def test_overflowing_f16_constant_is_infinity() -> None:
    op = _constant(
        "func.func @f() -> !matrix.matrix<1x2xf16> {\n"
        "  %c = matrix.constant dense<[[70000.0, -70000.0]]> : !matrix.matrix<1x2xf16>\n"
        "  func.return %c : !matrix.matrix<1x2xf16>\n}\n"
    )
    assert struct.unpack("<2H", op.value.data.data) == (0x7C00, 0xFC00)


def _user_error(capsys: pytest.CaptureFixture[str], path: Path) -> str:
    status = main([str(path)])
    err = capsys.readouterr().err
    assert status == 1, err
    assert "Traceback" not in err and "internal error" not in err
    return err


def test_huge_dimension_is_a_located_error(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    path = tmp_path / "dim.mlir"
    path.write_text(
        "func.func @f(%a: !matrix.matrix<" + "1" * 100_000 + "x1xf32>) {\n  return\n}\n"
    )
    err = _user_error(capsys, path)
    assert f"{path}:1:33: error: integer literal of 100000 digits is too large" in err
    assert len(err) < 1000  # neither the number nor the line in full


def test_unknown_op_is_located_at_its_name(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    path = tmp_path / "op.mlir"
    path.write_text(
        "func.func @f(%a: f32) -> f32 {\n  %b = matrix.inverse %a : f32\n"
        '  %c = "nosuch.op"(%b) : (f32) -> f32\n  return %c : f32\n}\n'
    )
    err = _user_error(capsys, path)
    assert f"{path}:2:8: error: Operation matrix.inverse is not registered" in err


def test_negative_dimension_is_reported_as_such(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    path = tmp_path / "neg.mlir"
    path.write_text("func.func @f(%a: !matrix.matrix<-1x4xf32>) {\n  return\n}\n")
    err = _user_error(capsys, path)
    assert "matrix row count -1 is outside [1, 1048575]" in err


@pytest.mark.parametrize("depth", [1000])
def test_deep_nesting(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, depth: int
) -> None:
    """1000 nested regions parse, verify and print (no recursion limit hit)."""
    path = tmp_path / "deep.mlir"
    path.write_text(
        "func.func @f(%c: i1) {\n"
        + "scf.if %c {\n" * depth
        + "}\n" * depth
        + "return\n}\n"
    )
    status = main([str(path)])
    captured = capsys.readouterr()
    assert status == 0, captured.err[-2000:]
    assert captured.out.count("scf.if") == depth


def test_excerpt_of_a_long_line_is_clipped() -> None:
    line = "x" * 1_000_000 + " bad " + "y" * 1_000_000
    column = 1_000_002
    text = located_message(line, "big.mlir", 1, column, "oops")
    header, shown, caret = text.split("\n")
    assert header == f"big.mlir:1:{column}: error: oops"
    assert len(shown) <= EXCERPT_WIDTH + 6 and shown.startswith("...")
    assert shown[len(caret) - 1] == "b" and caret.strip() == "^"
    short = Source.of_text("s", "abc def").render(Diag("error", 1, 5, "m"))
    assert short.split("\n")[1:] == ["abc def", "    ^"]


def test_parse_and_verify_raises_located_errors() -> None:
    text = "func.func @f() -> i32 {\n  %b = arith.addi %a, %a : i32\n  %a = arith.constant 1 : i32\n  return %b : i32\n}\n"
    with pytest.raises(FrontendError) as info:
        parse_and_verify(text, "<kernel>")
    assert str(info.value) == (
        "<kernel>:2:3: error: 'arith.addi' op operand #0 does not dominate this use\n"
        "  %b = arith.addi %a, %a : i32\n  ^"
    )


def test_context_loads_mx_and_llvm_extension_ops() -> None:
    ctx = mx_context()
    for name in ("matrix.constant", "arbfp.convert_from", "llvm.fptosi", "llvm.add"):
        assert ctx.get_optional_op(name) is not None, name


# -- the xDSL fixes are scoped, and each fixes what it replaces ---------------


def _long_integer_span() -> Span:
    return Span(0, 5000, Input("9" * 5000, "<t>"))


def test_xdsl_fixes_are_installed_and_stock_xdsl_restores_xdsl() -> None:
    patched = [
        (owner, name, fix)
        for owner, name, fix in fixes.PATCHES
        if not isinstance(fix, classmethod | staticmethod)
    ]
    assert [owner.__dict__[name] for owner, name, _ in patched] == [  # pyright: ignore
        fix for _, _, fix in patched
    ]
    with fixes.stock_xdsl():
        assert Operation.verify is not fixes._verify  # pyright: ignore[reportPrivateUsage]
        assert all(owner.__dict__.get(name) is not fix for owner, name, fix in patched)  # pyright: ignore
    assert Operation.verify is fixes._verify  # pyright: ignore[reportPrivateUsage]
    # Stock xdsl-opt loads mx's universe, which installs the fixes (the
    # integer literal is one they reject; xDSL raised a ValueError).
    result = subprocess.run(
        [str(BIN / "xdsl-opt"), "--parsing-diagnostics"],
        input=f"%x = arith.constant {'9' * 5000} : i64\n",
        capture_output=True,
        text=True,
        check=False,
    )
    assert "integer literal of 5000 digits is too large" in result.stdout, result
    assert "Exceeds the limit" not in result.stdout + result.stderr


def test_fix_block_redeclared_after_a_forward_reference() -> None:
    # Stock xDSL fails with a KeyError on the second `^bb1:`; with the fix, a
    # parse error at it (stock xdsl-opt included).
    text = (
        "func.func @f() {\n  cf.br ^bb1\n^bb1:\n  cf.br ^bb1\n^bb1:\n  func.return\n}\n"
    )
    with fixes.stock_xdsl(), pytest.raises(KeyError):
        Parser(mx_context(), text).parse_module()
    with pytest.raises(ParseError, match="re-declaration of block 'bb1'"):
        Parser(mx_context(), text).parse_module()


@settings(max_examples=60, deadline=None)
@given(
    op=st.sampled_from(["addi", "subi", "muli"]),
    lhs=st.integers(-(2**63), 2**63 - 1),
    rhs=st.integers(-(2**63), 2**63 - 1),
)
def test_folded_index_arithmetic_is_64_bit(op: str, lhs: int, rhs: int) -> None:
    """canonicalize folds `index` arithmetic as NumPy's int64 computes it
    (xDSL's folds were unbounded: 2^62 + 2^62 gave 2^63), and its output
    re-parses."""
    text = (
        "func.func @f() -> index {\n"
        f"  %a = arith.constant {lhs} : index\n"
        f"  %b = arith.constant {rhs} : index\n"
        f"  %c = arith.{op} %a, %b : index\n"
        "  func.return %c : index\n}\n"
    )
    module = parse_and_verify(text)
    CanonicalizePass().apply(mx_context(), module)
    folded = str(module)
    with np.errstate(over="ignore"):
        expected = {"addi": np.add, "subi": np.subtract, "muli": np.multiply}[op](
            np.int64(lhs), np.int64(rhs)
        )
    assert f"arith.constant {int(expected)} : index" in folded, folded
    parse_and_verify(folded)


def test_fix_index_attributes_wrap_to_64_bits() -> None:
    """Stock xDSL keeps an `index` attribute's value unbounded (the behaviour
    replaced); with the fixes, it wraps as an i64 result does."""
    with fixes.stock_xdsl():
        assert IntegerAttr(2**63, IndexType()).value.data == 2**63
        assert IntegerAttr.__init__ is not fixes._integer_attr_init  # pyright: ignore[reportPrivateUsage]
    assert "__init__" in IntegerAttr.__dict__
    assert IntegerAttr(2**63, IndexType()).value.data == -(2**63)
    assert IntegerAttr(2**64 + 5, IndexType()).value.data == 5
    assert IntegerAttr(-1, IndexType()).value.data == -1
    assert IntegerAttr(2**63 - 1, IndexType()).value.data == 2**63 - 1


def test_fix_long_integer_literal() -> None:
    span = _long_integer_span()
    with fixes.stock_xdsl(), pytest.raises(ValueError, match="Exceeds the limit"):
        MLIRTokenKind.INTEGER_LIT.get_int_value(span)
    with pytest.raises(ParseError, match="5000 digits"):
        MLIRTokenKind.INTEGER_LIT.get_int_value(span)


def test_fix_unterminated_string_is_linear() -> None:
    # xDSL's regex backtracks exponentially on an unterminated string; the fix
    # accepts the same strings.
    text = '"' + "a\\n" * 20 + "\\"
    assert fixes._STRING_LITERAL.match(text) is None  # pyright: ignore[reportPrivateUsage]
    for literal in ('"abc"', '"a\\"b"', '"\\41\\n"'):
        with fixes.stock_xdsl():
            xdsl = MLIRLexer.__dict__["_unescaped_characters_regex"]
        assert bool(fixes._STRING_LITERAL.fullmatch(literal)) == bool(  # pyright: ignore[reportPrivateUsage]
            xdsl.fullmatch(literal)
        )


def test_fix_block_count_and_split() -> None:
    # Same results as xDSL's own code, with and without the fixes.
    def build() -> tuple[Block, list[Operation]]:
        module = parse_and_verify(
            "func.func @f() {\n  %a = arith.constant 1 : i32\n"
            "  %b = arith.constant 2 : i32\n  func.return\n}\n"
        )
        func = next(iter(module.ops))
        block = func.regions[0].blocks.first
        assert block is not None
        return block, list(block.ops)

    with fixes.stock_xdsl():
        block, ops = build()
        new = block.split_before(ops[1])
        assert [len(block.parent.blocks) for _ in range(1)] == [2]  # pyright: ignore
        assert list(new.ops) == ops[1:] and list(block.ops) == ops[:1]
    block, ops = build()
    new = block.split_before(ops[1])
    assert block.parent is not None and len(block.parent.blocks) == 2
    assert list(new.ops) == ops[1:] and list(block.ops) == ops[:1]
    assert block.next_block is new


def _forget_verified_signatures(monkeypatch: pytest.MonkeyPatch) -> None:
    """The signatures other tests verified are forgotten during this test."""
    monkeypatch.setattr(fixes, "_verified_signatures", set[tuple[object, ...]]())
    monkeypatch.setattr(fixes, "_verified_identities", dict[object, object]())


def test_fix_checks_a_repeated_op_signature_once(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # Five `arith.addi`s of one signature: xDSL checks each against its
    # definition, the fix only the first.
    text = (
        "func.func @f(%a: i32) {\n"
        + "".join(f"  %x{i} = arith.addi %a, %a : i32\n" for i in range(5))
        + "  func.return\n}\n"
    )
    module = parse_and_verify(text)
    checked: list[str] = []
    xdsl_check = fixes._xdsl_op_def_verify  # pyright: ignore[reportPrivateUsage]

    def counting(op_def: OpDef, op: Operation) -> None:
        checked.append(op.name)
        xdsl_check(op_def, op)

    with fixes.stock_xdsl(), monkeypatch.context() as stock:
        stock.setattr(OpDef, "verify", counting)
        module.verify()
    assert checked.count("arith.addi") == 5
    checked.clear()
    _forget_verified_signatures(monkeypatch)
    monkeypatch.setattr(fixes, "_xdsl_op_def_verify", counting)
    module.verify()
    # mx-opt -t llvm verifies each function apart: known signatures stay known.
    parse_and_verify(text.replace("@f", "@g")).verify()
    assert checked.count("arith.addi") == 1


def test_fix_knows_a_signature_by_its_attribute_objects(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # Ops built with the same type objects (a lowering's cached types) are
    # known without building and hashing their signature; an equal type that
    # is another object takes the signature path, and is not checked again.
    from xdsl.dialects import arith
    from xdsl.dialects.builtin import IntegerType

    shared = IntegerType(32)
    block = Block(arg_types=[shared, IntegerType(32)])
    same = [arith.AddiOp(block.args[0], block.args[0]) for _ in range(4)]
    equal = arith.AddiOp(block.args[1], block.args[1])
    assert equal.result.type is not shared and equal.result.type == shared
    signatures: list[Operation] = []
    checked: list[Operation] = []
    xdsl_signature = fixes._signature  # pyright: ignore[reportPrivateUsage]
    xdsl_check = fixes._xdsl_op_def_verify  # pyright: ignore[reportPrivateUsage]

    def signature(op: Operation) -> tuple[object, ...]:
        signatures.append(op)
        return xdsl_signature(op)

    def check(op_def: OpDef, op: Operation) -> None:
        checked.append(op)
        xdsl_check(op_def, op)

    _forget_verified_signatures(monkeypatch)
    monkeypatch.setattr(fixes, "_signature", signature)
    monkeypatch.setattr(fixes, "_xdsl_op_def_verify", check)
    for op in [*same, equal]:
        op.verify()
    assert signatures == [same[0], equal]
    assert checked == [same[0]]


def test_fix_remembers_trait_answers_until_the_traits_change() -> None:
    # Same answers as xDSL's own lookups, for every op class and trait asked;
    # a trait added to a class afterwards is seen.
    from xdsl.dialects import arith, func, llvm
    from xdsl.traits import (
        ConstantLike,
        HasCanonicalizationPatternsTrait,
        IsTerminator,
        MemoryEffect,
        OpTrait,
        Pure,
    )

    classes = (arith.AddiOp, arith.ConstantOp, func.ReturnOp, llvm.StoreOp, llvm.BrOp)
    questions = (
        ConstantLike,
        HasCanonicalizationPatternsTrait,
        IsTerminator,
        MemoryEffect,
        Pure,
    )

    def answers() -> list[tuple[OpTrait | None, bool, list[OpTrait]]]:
        return [
            (c.get_trait(t), c.has_trait(t), c.get_traits_of_type(t))
            for c in classes
            for t in questions
        ]

    with fixes.stock_xdsl():
        expected = answers()
    assert any(a[0] is not None for a in expected)
    assert any(a[0] is None for a in expected)
    assert answers() == expected
    assert answers() == expected  # remembered answers

    @irdl_op_definition
    class MarkedOp(IRDLOperation):
        name = "test.marked"
        traits = traits_def(Pure())

    assert MarkedOp.get_traits_of_type(IsTerminator) == []
    assert not MarkedOp.has_trait(IsTerminator)
    MarkedOp.traits.add_trait(IsTerminator())
    assert MarkedOp.has_trait(IsTerminator)
    assert MarkedOp.get_traits_of_type(IsTerminator) == [IsTerminator()]


def test_fix_remembers_whether_an_op_class_is_dead_if_unused() -> None:
    # The same answers as xDSL's `would_be_trivially_dead` for every op of a
    # module mixing pure, reading, writing, allocating, recursive-effect,
    # terminator, symbol and unregistered ops, before and after its lowering,
    # asked twice (the second time remembered where the class decides it).
    from xdsl.dialects import arith, scf
    from xdsl.dialects.builtin import ModuleOp
    from xdsl.transforms import dead_code_elimination
    from xdsl.universe import Universe

    text = (
        "func.func @f(%m: memref<4xf32>, %i: index, %a: !matrix.matrix<4x4xf32>)"
        " -> !matrix.matrix<4x4xf32> {\n"
        "  %x = memref.load %m[%i] : memref<4xf32>\n"
        "  %y = arith.addf %x, %x : f32\n"
        "  memref.store %y, %m[%i] : memref<4xf32>\n"
        "  %b = memref.alloc() : memref<4xf32>\n"
        "  memref.dealloc %b : memref<4xf32>\n"
        '  "test.unknown"() : () -> ()\n'
        "  %c0 = arith.constant 0 : index\n"
        "  %c4 = arith.constant 4 : index\n"
        "  %c1 = arith.constant 1 : index\n"
        "  scf.for %k = %c0 to %c4 step %c1 {\n"
        "    %z = arith.mulf %y, %y : f32\n"
        "  }\n"
        "  scf.for %k = %c0 to %c4 step %c1 {\n"
        "    memref.store %y, %m[%k] : memref<4xf32>\n"
        "  }\n"
        "  %t = matrix.transpose %a : !matrix.matrix<4x4xf32> -> !matrix.matrix<4x4xf32>\n"
        "  %p = matrix.matmul %t, %a : !matrix.matrix<4x4xf32>,"
        " !matrix.matrix<4x4xf32> -> !matrix.matrix<4x4xf32>\n"
        "  func.return %p : !matrix.matrix<4x4xf32>\n"
        "}\n"
    )
    xdsl_answer = fixes._xdsl_would_be_trivially_dead  # pyright: ignore[reportPrivateUsage]

    def answers(module: ModuleOp) -> list[tuple[str, bool]]:
        return [
            (op.name, dead_code_elimination.would_be_trivially_dead(op))
            for op in module.walk()
        ]

    ctx = mx_context()
    ctx.allow_unregistered = True
    module = parse_and_verify(text, ctx=ctx)
    lowered = parse_and_verify(text.replace('  "test.unknown"() : () -> ()\n', ""))
    Universe.get_multiverse().all_passes["mx-lower-to-llvm"]()().apply(ctx, lowered)
    nests = parse_and_verify(
        "func.func @g(%c: i1, %m: memref<4xf32>, %i: index) {\n"
        "  scf.if %c {\n"  # an allocation of its own, a read: dead if unused
        "    scf.if %c {\n"
        "      %b = memref.alloc() : memref<4xf32>\n"
        "      %x = memref.load %m[%i] : memref<4xf32>\n"
        "    }\n"
        "  }\n"
        "  scf.if %c {\n"  # a write two levels down, after a pure loop
        "    scf.for %k = %i to %i step %i {\n"
        "      %y = arith.constant 1.0 : f32\n"
        "    }\n"
        "    scf.if %c {\n"
        "      %z = arith.constant 2.0 : f32\n"
        "      memref.store %z, %m[%i] : memref<4xf32>\n"
        "    }\n"
        "  }\n"
        "  scf.if %c {\n"  # a deallocation
        "    %d = memref.alloc() : memref<4xf32>\n"
        "    memref.dealloc %d : memref<4xf32>\n"
        "  }\n"
        "  func.return\n"
        "}\n"
    )
    for m in (module, lowered, nests):
        with fixes.stock_xdsl():
            expected = [(op.name, xdsl_answer(op)) for op in m.walk()]
        assert {a for _, a in expected} == {True, False}
        assert answers(m) == expected
        assert answers(m) == expected  # remembered
        remembered = fixes._dead_if_unused  # pyright: ignore[reportPrivateUsage]
        if m is module:  # decided by the class, or not (nested effects)
            assert arith.AddfOp in remembered and scf.ForOp not in remembered


@pytest.mark.parametrize("name", ["cse", "dce"])
def test_fix_asks_each_op_for_its_effects_once_a_run(
    name: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    # `cse` and `dce` of ops nested 40 deep in scf.if and scf.for, with
    # reads, writes, dead ops and duplicates at every level: the same module
    # as xDSL's own pass gives, and xDSL's effect computation runs once per
    # op and run (it ran once per enclosing op: quadratic in the depth, 1000
    # nested scf.if took 15 s in `cse` and 32 s in `dce`).
    from xdsl.universe import Universe

    make_pass = Universe.get_multiverse().all_passes[name]

    text = nested_loops(40)
    unchanged = str(parse_and_verify(text))

    def run(text: str) -> str:
        module = parse_and_verify(text)
        make_pass()().apply(mx_context(), module)
        return str(module)

    with fixes.stock_xdsl():
        expected = run(text)
    asked: list[Operation] = []
    xdsl_effects = fixes._xdsl_get_effects  # pyright: ignore[reportPrivateUsage]

    def effects(op: Operation) -> object:
        asked.append(op)
        return xdsl_effects(op)

    monkeypatch.setattr(fixes, "_xdsl_get_effects", effects)
    assert run(text) == expected != unchanged
    assert len(asked) == len(set(asked)), "an op's effects computed twice"
    assert len(asked) <= unchanged.count("\n")


def test_fix_still_checks_traits_of_a_repeated_op_signature() -> None:
    # @g's inner `func.return` has the signature of @f's, which verified: its
    # parent, a trait's check, is still checked.
    text = (
        "func.func @f() {\n  func.return\n}\n"
        "func.func @g() {\n  scf.execute_region {\n    func.return\n  }\n"
        "  func.return\n}\n"
    )
    with pytest.raises(FrontendError) as info:
        parse_and_verify(text)
    assert str(info.value).startswith(
        "<string>:6:5: error: 'func.return' op 'func.return' expects parent op"
    )

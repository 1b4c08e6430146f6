"""Tests of the compile driver (`mx.compiler`): `mx-lower-to-llvm{route=...}`
alone chooses how mx-opt's `-t llvm` and the JIT reach LLVM IR; debugging
options keep the route, and `remarks` says which one ran."""

from pathlib import Path

import pytest

from mx.jit import lower_to_llvm_ir
from mx.tools.mx_opt import main

PROGRAM = """\
func.func @f(%a: !matrix.matrix<4x4xf32>, %b: !matrix.matrix<4x4xf32>) -> !matrix.matrix<4x4xf32> {
  %p = matrix.matmul %a, %b : !matrix.matrix<4x4xf32>, !matrix.matrix<4x4xf32> -> !matrix.matrix<4x4xf32>
  %s = matrix.add %p, %a : !matrix.matrix<4x4xf32>
  func.return %s : !matrix.matrix<4x4xf32>
}
"""

UNCOVERED = """\
func.func @f(%c: i1, %x: f32, %y: f32) -> f32 {
  cf.cond_br %c, ^first, ^second
^first:
  func.return %x : f32
^second:
  func.return %y : f32
}
"""
"""A function of several blocks: the direct writer leaves it to convert-to-llvm."""

ROUTES = ("direct", "dialect")
DEBUG_FLAGS = ([], ["--time-passes"], ["--print-between-passes"])


def _mx_opt(
    capsys: pytest.CaptureFixture[str], path: str, pipeline: str, *flags: str
) -> tuple[str, str]:
    """(LLVM IR, stderr) of `mx-opt path -p pipeline -t llvm flags`."""
    assert main([path, "-p", pipeline, "-t", "llvm", *flags]) == 0
    captured = capsys.readouterr()
    ir = captured.out[captured.out.index("target datalayout") :]
    return ir, captured.err


@pytest.fixture
def program(tmp_path: Path) -> str:
    path = tmp_path / "program.mlir"
    path.write_text(PROGRAM)
    return str(path)


def test_the_routes_write_different_llvm_ir(
    capsys: pytest.CaptureFixture[str], program: str
) -> None:
    # Else the tests below could not tell the routes apart.
    direct, _ = _mx_opt(capsys, program, "mx-lower-to-llvm{route=direct}")
    dialect, _ = _mx_opt(capsys, program, "mx-lower-to-llvm{route=dialect}")
    assert direct != dialect


@pytest.mark.parametrize("route", ROUTES)
def test_mx_opt_and_the_jit_take_the_route_asked(
    capsys: pytest.CaptureFixture[str], program: str, route: str
) -> None:
    pipeline = f"mx-lower-to-llvm{{route={route}}}"
    plain, _ = _mx_opt(capsys, program, pipeline)
    jit_ir, _, _ = lower_to_llvm_ir(PROGRAM, pipeline)
    assert jit_ir[jit_ir.index("target datalayout") :] == plain
    if route == "direct":
        default, _ = _mx_opt(capsys, program, "mx-lower-to-llvm")
        assert default == plain


@pytest.mark.parametrize("route", ROUTES)
@pytest.mark.parametrize("flags", DEBUG_FLAGS)
def test_debugging_options_keep_the_route_and_remarks_name_it(
    capsys: pytest.CaptureFixture[str], program: str, route: str, flags: list[str]
) -> None:
    plain, _ = _mx_opt(capsys, program, f"mx-lower-to-llvm{{route={route}}}")
    pipeline = f"mx-lower-to-llvm{{route={route} remarks}}"
    ir, err = _mx_opt(capsys, program, pipeline, *flags)
    assert ir == plain
    expected = {
        "direct": "remark: mx-lower-to-llvm: route direct: LLVM IR written directly",
        "dialect": "remark: mx-lower-to-llvm: route dialect: convert-to-llvm",
    }[route]
    assert expected in err.splitlines(), err
    jit_ir, _, _ = lower_to_llvm_ir(PROGRAM, pipeline)
    assert jit_ir[jit_ir.index("target datalayout") :] == plain
    assert expected in capsys.readouterr().err.splitlines()


def test_what_the_direct_writer_does_not_cover_takes_the_dialect_route(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    path = tmp_path / "blocks.mlir"
    path.write_text(UNCOVERED)
    direct, err = _mx_opt(capsys, str(path), "mx-lower-to-llvm{remarks}")
    assert (
        "remark: mx-lower-to-llvm: route direct does not cover a declaration, "
        "several blocks or several results: convert-to-llvm"
    ) in err.splitlines(), err
    dialect, _ = _mx_opt(capsys, str(path), "mx-lower-to-llvm{route=dialect}")
    assert direct == dialect


def test_an_unknown_route_is_a_located_error(
    capsys: pytest.CaptureFixture[str], program: str
) -> None:
    assert main([program, "-p", "mx-lower-to-llvm{route=fast}", "-t", "llvm"]) == 1
    err = capsys.readouterr().err
    assert err.startswith(
        "<pipeline>:1:18: error: option 'route' of pass 'mx-lower-to-llvm' must be "
        "one of direct, dialect (got 'fast')"
    ), err

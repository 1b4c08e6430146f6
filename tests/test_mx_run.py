"""mx-run's arguments from .npy files, the interpreter in stock xdsl-run, and
`python -m mx` (the lit tests in tests/filecheck/interpreter cover literal
arguments, undefined behaviour and limits)."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import mx
from mx.tools.mx_run import main

SCALE = """
func.func @scale(%a: !matrix.matrix<2x3xf32>, %s: f32, %mem: memref<?xi8>) -> !matrix.matrix<2x3xf32> {
  %k = matrix.splat %s : !matrix.matrix<2x3xf32>
  %r = matrix.mul %a, %k : !matrix.matrix<2x3xf32>
  %c = arith.constant 7 : i8
  %i = arith.constant 1 : index
  memref.store %c, %mem[%i] : memref<?xi8>
  func.return %r : !matrix.matrix<2x3xf32>
}
"""


def _run(
    tmp_path: Path, args: list[str], capsys: pytest.CaptureFixture[str]
) -> tuple[int, str, str]:
    source = tmp_path / "scale.mlir"
    source.write_text(SCALE)
    status = main([str(source), "--entry", "scale", *args])
    out, err = capsys.readouterr()
    return status, out, err


def test_npy_arguments(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    a, mem = tmp_path / "a.npy", tmp_path / "mem.npy"
    np.save(a, np.arange(6, dtype=np.float64).reshape(2, 3))  # exact in f32
    np.save(mem, np.array([-1, 2, 3], dtype=np.int64))
    status, out, _ = _run(
        tmp_path, ["--arg", str(a), "--arg", "2", "--arg", str(mem)], capsys
    )
    assert status == 0
    assert out.splitlines() == [
        "result #0 : !matrix.matrix<2x3xf32> =",
        "  [ 0.0,  2.0,  4.0]",
        "  [ 6.0,  8.0, 10.0]",
        "argument #2 : memref<?xi8> = [-1, 7, 3]",
    ]


def test_npy_values_are_never_rounded(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    a = tmp_path / "a.npy"
    np.save(a, np.full((2, 3), 0.1))  # 0.1 is not an f32
    status, out, err = _run(
        tmp_path, ["--arg", str(a), "--arg", "1", "--arg", "[0]"], capsys
    )
    assert status == 1 and not out
    assert "argument #0 (!matrix.matrix<2x3xf32>)" in err
    assert "cannot represent exactly" in err


@pytest.mark.parametrize(
    ("array", "message"),
    [
        (np.zeros((3, 2), np.float32), "has shape (3, 2), expected (2, 3)"),
        (np.array(["a"] * 6).reshape(2, 3), "not numbers"),
    ],
)
def test_bad_npy_arguments(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    array: np.ndarray,  # pyright: ignore[reportMissingTypeArgument, reportUnknownParameterType]
    message: str,
) -> None:
    a = tmp_path / "a.npy"
    np.save(a, array)
    status, _, err = _run(
        tmp_path, ["--arg", str(a), "--arg", "1", "--arg", "[0]"], capsys
    )
    assert status == 1
    assert message in err
    assert "Traceback" not in err


def test_xdsl_run_interprets_mx_programs(tmp_path: Path) -> None:
    xdsl_run = Path(sys.executable).parent / "xdsl-run"
    assert xdsl_run.exists() or shutil.which("xdsl-run")
    source = tmp_path / "f.mlir"
    source.write_text("""
func.func @f(%a: !matrix.matrix<1x2xf32>, %j: index) -> f32 {
  %t = matrix.transpose %a : !matrix.matrix<1x2xf32> -> !matrix.matrix<2x1xf32>
  %e = matrix.extract %t[%j, 0] : !matrix.matrix<2x1xf32>
  %b = arith.constant 56 : i8
  %one = arbfp.convert_from f8e4m3fn %b : i8 to f32
  %r = arith.addf %e, %one : f32
  func.return %r : f32
}
""")
    result = subprocess.run(
        [str(xdsl_run), str(source), "--symbol", "f", "--verbose",
         "--args", "dense<[[1.5, 2.5]]> : tensor<1x2xf32>, 1 : index"],
        capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "result: 3.500000e+00 : f32"


def test_python_m_mx_prints_version_and_usage() -> None:
    result = subprocess.run(
        [sys.executable, "-m", "mx"], capture_output=True, text=True, timeout=60
    )
    assert result.returncode == 0
    assert result.stdout.startswith(f"mx {mx.__version__}:")
    assert "mx-opt" in result.stdout and "mx-run" in result.stdout


def test_version_comes_from_the_package_metadata() -> None:
    from importlib.metadata import version

    assert mx.__version__ == version("mx")
    assert (Path(mx.__file__).parent / "py.typed").is_file()


def test_signalling_nan_result_prints_without_warnings(tmp_path: Path) -> None:
    """A signalling NaN constant (kept bit-exactly since the front end reads
    it so) prints as nan, without NumPy's cast warning on stderr."""
    source = tmp_path / "snan.mlir"
    source.write_text(
        "func.func @h() -> vector<2xf32> {\n"
        "  %c = arith.constant dense<[0x7fa00001, 1.0]> : vector<2xf32>\n"
        "  func.return %c : vector<2xf32>\n}\n"
    )
    result = subprocess.run(
        [Path(sys.executable).parent / "mx-run", str(source), "--entry", "h"],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    assert "[nan, 1.0]" in result.stdout
    assert result.stderr == ""

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
from hypothesis import given, settings
from hypothesis import strategies as st

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


FUNCTIONS = """
func.func @neg(%x: f32) -> f32 {
  %n = arith.negf %x : f32
  func.return %n : f32
}
func.func @sub(%x: i32, %y: i32) -> i32 {
  %d = arith.subi %x, %y : i32
  func.return %d : i32
}
"""


def _run_text(
    tmp_path: Path, text: str, args: list[str], capsys: pytest.CaptureFixture[str]
) -> tuple[int, str, str]:
    source = tmp_path / "f.mlir"
    source.write_text(text)
    status = main([str(source), *args])
    out, err = capsys.readouterr()
    assert "Traceback" not in err
    return status, out, err


@pytest.mark.parametrize(
    ("entry", "message"),
    [
        ("main", "no function @main to run (the module's functions: @neg, @sub;"),
        ("sbu", "no function @sbu to run; did you mean: @sub? (the module's"),
    ],
)
def test_missing_entry_lists_the_functions(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], entry: str, message: str
) -> None:
    status, out, err = _run_text(tmp_path, FUNCTIONS, ["--entry", entry], capsys)
    assert status == 1 and not out
    assert message in err and "choose one with --entry NAME" in err


@pytest.mark.parametrize(
    ("args", "result"),
    [
        (["--entry", "neg", "--arg", "-inf"], "result #0 : f32 = inf"),
        (["--entry", "neg", "--arg", "-1e-3"], "result #0 : f32 = 0.001"),
        (["--entry", "neg", "--arg", "-0.5"], "result #0 : f32 = 0.5"),
        (["--entry", "sub", "--arg", "-0x1", "--arg", "-2"], "result #0 : i32 = 1"),
        (["--arg", "-0x1", "--arg", "-2", "--entry", "sub"], "result #0 : i32 = 1"),
        (["--entry=sub", "--arg=-0x10", "--arg", "0x10"], "result #0 : i32 = -32"),
    ],
)
def test_values_starting_with_a_minus_are_values(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], args: list[str], result: str
) -> None:
    """docs/tools.md's `--arg -inf`, `--arg -1e-3`, `--arg -0x1` are values,
    not options."""
    status, out, err = _run_text(tmp_path, FUNCTIONS, args, capsys)
    assert status == 0, err
    assert out.splitlines() == [result]


def test_negative_hexadecimal_float_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    status, _, err = _run_text(
        tmp_path, FUNCTIONS, ["--entry", "neg", "--arg", "-0x3F800000"], capsys
    )
    assert status == 1
    assert "f.mlir:2:1: error: 'func.func' op argument #0 (f32): -0x3F800000: " in err
    assert "should not have a leading minus" in err


@pytest.mark.parametrize(
    "array",
    [np.array([[1 + 2j, 0, 0], [0, 0, 0]]), np.zeros((2, 3), np.complex64)],
    ids=["complex128", "complex64 zeros"],
)
def test_complex_npy_is_refused(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    array: np.ndarray,  # pyright: ignore[reportMissingTypeArgument, reportUnknownParameterType]
) -> None:
    """Never cut to its real part, even when the imaginary parts are zero."""
    a = tmp_path / "a.npy"
    np.save(a, array)
    status, out, err = _run(
        tmp_path, ["--arg", str(a), "--arg", "1", "--arg", "[0]"], capsys
    )
    assert status == 1 and not out
    assert "scale.mlir:2:1: error: 'func.func' op argument #0" in err
    assert "takes real numbers" in err


NARROW = """
func.func @widen(%b: !matrix.matrix<2x2xbf16>, %q: vector<4xi8>, %p: vector<2xi4>)
    -> (!matrix.matrix<2x2xf32>, vector<4xf32>, vector<2xi4>) {
  %w = matrix.cast %b : !matrix.matrix<2x2xbf16> to !matrix.matrix<2x2xf32>
  %f = arbfp.convert_from f8e4m3fn %q : vector<4xi8> to vector<4xf32>
  func.return %w, %f, %p : !matrix.matrix<2x2xf32>, vector<4xf32>, vector<2xi4>
}
"""


def test_ml_dtypes_npy_files_are_read_as_bit_patterns(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """NumPy saves ml_dtypes' arrays as raw bytes (`V2`, `V1`); the JIT takes
    such arrays, so mx-run reads their files as bit patterns of the type."""
    import ml_dtypes

    b, q, p = (tmp_path / name for name in ("b.npy", "q.npy", "p.npy"))
    bf16 = np.array([[1.5, -2.0], [3.0, 2.0**-133]], ml_dtypes.bfloat16)
    np.save(b, bf16)
    fp8 = np.array([1.5, -2.0, 448.0, 0.015625], ml_dtypes.float8_e4m3fn)
    np.save(q, fp8)
    np.save(p, np.array([1.5, -6.0], ml_dtypes.float4_e2m1fn))
    assert np.load(b).dtype.kind == np.load(q).dtype.kind == "V"
    args = ["--entry", "widen", "--arg", str(b), "--arg", str(q), "--arg", str(p)]
    status, out, err = _run_text(tmp_path, NARROW, args, capsys)
    assert status == 0, err
    lines = out.splitlines()
    assert lines[0] == "result #0 : !matrix.matrix<2x2xf32> ="
    rows = [[float(v) for v in row.strip(" []").split(",")] for row in lines[1:3]]
    # The shortest decimals that read back as the bf16 values.
    assert np.array_equal(np.array(rows).astype(ml_dtypes.bfloat16), bf16)
    assert lines[3:] == [
        "result #1 : vector<4xf32> = "
        f"[{', '.join(repr(float(x)) for x in fp8.astype(np.float64))}]",
        # FP4 codes of 1.5 and -6.0: 0b0011 and 0b1111, as the JIT returns them.
        "result #2 : vector<2xi4> = [3, 15]",
    ]


@pytest.mark.parametrize(
    ("position", "array", "message"),
    [
        (0, np.zeros((2, 2), "V1"), "holds raw 1-byte values (|V1), expected 2-byte"),
        (1, np.zeros(4, "V2"), "holds raw 2-byte values (|V2), expected 1-byte"),
    ],
)
def test_raw_npy_of_the_wrong_size_is_refused(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    position: int,
    array: np.ndarray,  # pyright: ignore[reportMissingTypeArgument, reportUnknownParameterType]
    message: str,
) -> None:
    arrays = [np.zeros((2, 2)), np.zeros(4, np.int8), np.zeros(2, np.int8)]
    arrays[position] = array
    args = ["--entry", "widen"]
    for index, value in enumerate(arrays):
        path = tmp_path / f"{index}.npy"
        np.save(path, value)
        args += ["--arg", str(path)]
    status, _, err = _run_text(tmp_path, NARROW, args, capsys)
    assert status == 1
    assert f"argument #{position}" in err and message in err


def test_raw_npy_with_bits_above_the_container_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    b, q, p = tmp_path / "b.npy", tmp_path / "q.npy", tmp_path / "p.npy"
    np.save(b, np.zeros((2, 2)))
    np.save(q, np.zeros(4, np.int8))
    np.save(p, np.frombuffer(bytes([0x03, 0x13]), "V1"))
    args = ["--entry", "widen", "--arg", str(b), "--arg", str(q), "--arg", str(p)]
    status, _, err = _run_text(tmp_path, NARROW, args, capsys)
    assert status == 1
    assert "holds values with bits above the 4 of 'i4'" in err


@pytest.mark.parametrize("width", [4, 6, 8, 16, 64])
def test_integers_print_as_the_jit_returns_them(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], width: int
) -> None:
    """One convention: i8 … i64 signed, the i4/i6 (any other width)
    containers as their bits; the JIT is the reference."""
    from mx.jit import jit

    t = f"i{width}"
    text = f"""
func.func @f(%x: {t}, %y: {t}) -> ({t}, vector<2x{t}>) {{
  %d = arith.subi %x, %y : {t}
  %v = vector.broadcast %d : {t} to vector<2x{t}>
  func.return %d, %v : {t}, vector<2x{t}>
}}
"""
    compiled = jit(text, "f")
    low, high = -(1 << (width - 1)), 1 << (width - 1)
    for x, y in [(0, 1), (low, 1), (high - 1, low), (1, 0), (low, high - 1)]:
        expected, expected_vector = compiled(x, y)
        status, out, err = _run_text(
            tmp_path, text, ["--entry", "f", "--arg", str(x), "--arg", str(y)], capsys
        )
        assert status == 0, err
        assert out.splitlines() == [
            f"result #0 : {t} = {int(expected)}",
            f"result #1 : vector<2x{t}> = "
            f"[{', '.join(str(int(v)) for v in expected_vector)}]",
        ]


@settings(max_examples=60, deadline=None)
@given(st.floats(allow_nan=False, width=64) | st.integers(-(2**40), 2**40))
def test_any_number_is_an_argument(number: float) -> None:
    """Every number, negative ones included, written as Python writes it, is
    read as a value (rounded to f32 as NumPy rounds) and never as an option."""
    import contextlib
    import io
    import tempfile

    with tempfile.TemporaryDirectory() as directory:
        source = Path(directory) / "f.mlir"
        source.write_text(FUNCTIONS)
        out, err = io.StringIO(), io.StringIO()
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            status = main([str(source), "--entry", "neg", "--arg", repr(number)])
    assert status == 0, err.getvalue()
    (line,) = out.getvalue().splitlines()
    printed = np.float32(float(line.removeprefix("result #0 : f32 = ")))
    with np.errstate(over="ignore"):  # above f32's range: infinity
        expected = -np.float32(float(number))
    assert printed.tobytes() == expected.tobytes(), (number, line)

"""`mx-opt` and `mx-run` import what their input needs: ml_dtypes only for a
bf16 value (its import costs ~0.6 s of CPU, more than the rest of their
start-up), the LLVM lowering only for `-t llvm` (~0.3 s). The test suite
starts them hundreds of times (lit, the bench build, the fuzzer's sample)."""

import json
import subprocess
import sys
from pathlib import Path

import pytest

F32 = """
func.func @f(%a: !matrix.matrix<2x2xf32>) -> (!matrix.matrix<2x2xf32>, f32, f64) {
  %x = arith.constant 1.5 : f32
  %y = arith.constant 2.0 : f32
  %z = arith.addf %x, %y : f32
  %s = matrix.splat %z : !matrix.matrix<2x2xf32>
  %r = matrix.add %a, %s : !matrix.matrix<2x2xf32>
  %c = arith.constant 56 : i8
  %d = arbfp.convert_from f8e4m3fn %c : i8 to f32
  %e = arbfp.convert_to f8e5m2 %d : f32 to i8
  %f = arbfp.convert_from f8e5m2 %e : i8 to f64
  func.return %r, %d, %f : !matrix.matrix<2x2xf32>, f32, f64
}
"""
"""Folds of f32 scalars and FP8 conversions, matrices of f32: no bf16."""

BF16 = """
func.func @g() -> bf16 {
  %c = arith.constant 33 : i6
  %d = arbfp.convert_from f6e2m3fn %c : i6 to bf16
  func.return %d : bf16
}
"""
"""A fold that makes a bf16 value."""


def _run_tool(tool: str, args: list[str]) -> tuple[int, str, list[str]]:
    """Runs `tool`'s main in a fresh interpreter: (status, stdout, the
    modules imported)."""
    code = (
        "import contextlib, io, json, sys\n"
        f"from mx.tools.{tool} import main\n"
        "out = io.StringIO()\n"
        "with contextlib.redirect_stdout(out):\n"
        f"    status = main({args!r})\n"
        "print(json.dumps([status, out.getvalue(), sorted(sys.modules)]))\n"
    )
    run = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    )
    status, out, modules = json.loads(run.stdout)
    return status, out, modules


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        # The scalar and FP8 folds ran: 1.5 + 2.0, and FP8 56 (e4m3) is 1.0.
        (["-p", "canonicalize"], ["3.500000e+00 : f32", "1.000000e+00 : f64"]),
        (["-p", "mx-lower-to-llvm", "-t", "llvm"], ["define "]),
        (["-p", "convert-matrix-to-affine,convert-arbfp-to-arith"], ["affine.for"]),
    ],
    ids=["canonicalize", "llvm", "affine"],
)
def test_mx_opt_without_bf16_does_not_import_ml_dtypes(
    tmp_path: Path, args: list[str], expected: list[str]
) -> None:
    path = tmp_path / "f32.mlir"
    path.write_text(F32)
    status, out, modules = _run_tool("mx_opt", [str(path), *args])
    assert status == 0
    assert all(text in out for text in expected), out
    assert "ml_dtypes" not in modules


@pytest.mark.parametrize("target", ["mlir", "mlir16"])
def test_mx_opt_without_llvm_target_does_not_import_the_llvm_lowering(
    tmp_path: Path, target: str
) -> None:
    path = tmp_path / "f32.mlir"
    path.write_text(F32)
    status, out, modules = _run_tool(
        "mx_opt", [str(path), "-p", "matrix-fold-transposes", "-t", target]
    )
    assert status == 0 and "matrix.add" in out
    assert "mx.passes.mx_lower_to_llvm" not in modules
    assert not [m for m in modules if m.startswith("mx.lowering")]


def test_mx_run_without_bf16_does_not_import_ml_dtypes(tmp_path: Path) -> None:
    path = tmp_path / "f32.mlir"
    path.write_text(F32)
    status, out, modules = _run_tool(
        "mx_run", [str(path), "--entry", "f", "--arg", "[[1.0, 2.0], [3.0, 4.0]]"]
    )
    assert status == 0
    assert "4.5" in out and "1.0" in out  # 1 + 3.5; the FP8 value 56 is 1.0
    assert "ml_dtypes" not in modules


def test_a_bf16_fold_imports_ml_dtypes(tmp_path: Path) -> None:
    path = tmp_path / "bf16.mlir"
    path.write_text(BF16)
    status, out, modules = _run_tool("mx_opt", [str(path), "-p", "canonicalize"])
    # f6e2m3fn 33 = 0b100001: sign set, exponent 0, mantissa 1: -1/8 (subnormal).
    assert status == 0 and "arith.constant -1.250000e-01 : bf16" in out
    assert "ml_dtypes" in modules

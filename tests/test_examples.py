"""The README's main command (examples/run_examples.py) keeps working."""

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_examples_compile_run_and_agree(tmp_path: Path) -> None:
    done = subprocess.run(
        [
            sys.executable,
            str(ROOT / "examples" / "run_examples.py"),
            "--out",
            str(tmp_path),
        ],
        capture_output=True,
        text=True,
        cwd=ROOT,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    count = len(list((ROOT / "examples").glob("*.mlir")))
    assert f"{count} of {count} examples passed" in done.stdout
    for name in ("transform_chain", "gemm_bias", "fp8_dequant_matmul"):
        ir = (tmp_path / f"{name}.ll").read_text()
        assert "define void @" in ir and "target triple" in ir

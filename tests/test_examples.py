"""The README's main command (examples/run_examples.py) keeps working."""

import re
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
    examples = ROOT / "examples"
    scripts = [p for p in examples.glob("*.py") if p.name != "run_examples.py"]
    count = len(list(examples.glob("*.mlir"))) + len(scripts)
    for script in scripts:  # each Python example checked itself
        assert f"{script.name}:" in done.stdout
    assert f"{count} of {count} examples passed" in done.stdout
    for name in ("transform_chain", "gemm_bias", "fp8_dequant_matmul"):
        ir = (tmp_path / f"{name}.ll").read_text()
        assert "define void @" in ir and "target triple" in ir


def test_quantized_examples_hold_no_dequantized_copy() -> None:
    """The FP8 (and packed MXFP4) weights are decoded where the product reads them: the lowered
    code allocates only the small buffers of x, y or the result (or none: a
    returned product is written into its out-parameter), never one of the
    weights' shape."""
    allocated = 0
    for name, weights in (
        ("fp8_weights_matvec", "memref<64x32x"),
        ("fp8_dequant_matmul", "memref<16x8x"),
        ("mxfp4_matvec", "memref<64x16xf"),
    ):
        lowered = subprocess.run(
            [
                str(Path(sys.executable).parent / "mx-opt"),
                str(ROOT / "examples" / f"{name}.mlir"),
                "-p",
                "convert-matrix-to-affine",
            ],
            capture_output=True,
            text=True,
            check=True,
        ).stdout
        buffers = re.findall(r"memref\.alloca?\(\).*: (memref<[^>]*>)", lowered)
        allocated += len(buffers)
        assert not [b for b in buffers if b.startswith(weights)], (name, buffers)
    assert allocated, "the pattern finds no buffer at all"

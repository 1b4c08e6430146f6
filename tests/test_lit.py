"""Runs the lit/FileCheck suite in tests/filecheck, so that `pytest` runs everything."""

import os
import subprocess
import sys
from pathlib import Path


def test_lit_suite() -> None:
    lit = Path(sys.executable).parent / "lit"
    suite = Path(__file__).parent / "filecheck"
    result = subprocess.run(
        [str(lit), "-v", f"-j{os.cpu_count() or 1}", str(suite)],
        capture_output=True,
        text=True,
        check=False,
    )
    # lit -v prints the commands and output of each failing test.
    assert result.returncode == 0, f"lit failed:\n{result.stdout}\n{result.stderr}"

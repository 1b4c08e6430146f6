"""Runs the lit/FileCheck suite in tests/filecheck, so that `pytest` runs everything.

One pytest test per lit file: pytest-xdist spreads them over its workers like
any other test (one lit run of the whole suite was a three-minute straggler).
Each runs lit on its one file, so lit.cfg.py's substitutions and environment
apply as in a direct `lit tests/filecheck` run."""

import subprocess
import sys
from pathlib import Path

import pytest

LIT = Path(sys.executable).parent / "lit"
SUITE = Path(__file__).parent / "filecheck"
FILES = sorted(
    path.relative_to(SUITE).as_posix()
    for path in SUITE.rglob("*.mlir")
    # lit.cfg.py excludes `Inputs`; `Output` holds lit's own temporary files.
    if not {"Inputs", "Output"} & set(path.relative_to(SUITE).parts)
)


def _lit(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(LIT), *args], capture_output=True, text=True, check=False
    )


@pytest.mark.parametrize("name", FILES)
def test_lit_file(name: str) -> None:
    result = _lit("-v", str(SUITE / name))
    # lit -v prints the commands and output of a failing test.
    assert result.returncode == 0, f"lit failed:\n{result.stdout}\n{result.stderr}"


def test_every_lit_test_runs() -> None:
    """The files above are exactly the tests lit itself finds in the suite."""
    result = _lit("--show-tests", str(SUITE))
    assert result.returncode == 0, result.stderr
    found = sorted(
        line.split(" :: ", 1)[1]
        for line in result.stdout.splitlines()
        if " :: " in line
    )
    assert found == FILES

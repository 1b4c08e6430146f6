"""Runs the lit/FileCheck suite in tests/filecheck, so that `pytest` runs everything.

One pytest test per lit file: pytest-xdist spreads them over its workers like
any other test (one lit run of the whole suite was a three-minute straggler).
Each runs lit on its one file, so lit.cfg.py's substitutions and environment
apply as in a direct `lit tests/filecheck` run; the tools themselves run in
processes forked from one server per worker that imported them
(tests/tool_server.py), not each a new Python."""

import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.tool_server import running

LIT = Path(sys.executable).parent / "lit"
SUITE = Path(__file__).parent / "filecheck"
FILES = sorted(
    path.relative_to(SUITE).as_posix()
    for path in SUITE.rglob("*.mlir")
    # lit.cfg.py excludes `Inputs`; `Output` holds lit's own temporary files.
    if not {"Inputs", "Output"} & set(path.relative_to(SUITE).parts)
)


def _lit(
    *args: str, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(LIT), *args], capture_output=True, text=True, check=False, env=env
    )


@pytest.fixture(scope="module")
def served_tools(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, str]]:
    """The environment of a lit run whose RUN lines' tools the server runs."""
    with running(tmp_path_factory.mktemp("lit") / "tools.sock") as env:
        yield env


@pytest.mark.parametrize("name", FILES)
def test_lit_file(name: str, served_tools: dict[str, str]) -> None:
    result = _lit("-v", str(SUITE / name), env=served_tools)
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

"""A tool run through tests/tool_server.py (as the lit suite runs them) ends
as the real tool does: the same standard output and error and exit status,
file names relative to the client's working directory; a signal that ends
the tool's process ends the client."""

import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.tool_server import client, running

BIN = Path(sys.executable).parent

VALID = """func.func @f(%a: !matrix.matrix<2x2xf32>) -> !matrix.matrix<2x2xf32> {
  %t = matrix.transpose %a : !matrix.matrix<2x2xf32> -> !matrix.matrix<2x2xf32>
  %u = matrix.transpose %t : !matrix.matrix<2x2xf32> -> !matrix.matrix<2x2xf32>
  func.return %u : !matrix.matrix<2x2xf32>
}
"""
INVALID = "func.func @g(%a: i32) -> f32 {\n  func.return %a : i32\n}\n"
SCALE = """func.func @scale(%x: f32) -> f32 {
  %y = arith.mulf %x, %x : f32
  func.return %y : f32
}
"""


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    with running(tmp_path_factory.mktemp("served") / "tools.sock") as env:
        yield env["MX_LIT_TOOL_SERVER"]


def _both(
    server: str, tool: str, args: list[str], stdin: str, cwd: Path
) -> tuple[subprocess.CompletedProcess[str], subprocess.CompletedProcess[str]]:
    """The real tool's run and the served one's, from the same directory."""
    commands = (
        [str(BIN / tool), *args],
        [*client(server, tool), *args],
    )
    real, served = (
        subprocess.run(
            command, input=stdin, capture_output=True, text=True, cwd=cwd, check=False,
        )
        for command in commands
    )  # fmt: skip
    return real, served


@pytest.mark.parametrize(
    ("tool", "args", "stdin", "status"),
    [
        ("mx-opt", ["-p", "matrix-fold-transposes"], VALID, 0),
        ("mx-opt", ["valid.mlir", "--print-op-generic"], "", 0),
        ("mx-opt", ["-"], INVALID, 1),
        ("mx-opt", ["--no-such-option"], "", 1),
        ("mx-run", ["scale.mlir", "--entry", "scale", "--arg", "-1.5"], "", 0),
        ("mx-run", ["scale.mlir", "--entry", "missing"], "", 1),
        ("filecheck", ["valid.mlir", "--check-prefix=OUT"], "x\nOUT-LINE\n", 0),
        ("filecheck", ["valid.mlir", "--check-prefix=OUT"], "nothing\n", 1),
    ],
)
def test_a_served_tool_ends_as_the_real_one(
    server: str, tmp_path: Path, tool: str, args: list[str], stdin: str, status: int
) -> None:
    (tmp_path / "valid.mlir").write_text(VALID + "// OUT: OUT-LINE\n")
    (tmp_path / "scale.mlir").write_text(SCALE)
    real, served = _both(server, tool, args, stdin, tmp_path)
    assert real.returncode == status, real.stderr
    assert (served.returncode, served.stdout, served.stderr) == (
        real.returncode,
        real.stdout,
        real.stderr,
    )


def _command_line(process: Path) -> list[str]:
    try:
        return (process / "cmdline").read_bytes().decode().split("\0")[-3:-1]
    except OSError:  # ended meanwhile
        return []


def _children(pid: int) -> list[int]:
    return [
        int(child)
        for task in Path(f"/proc/{pid}/task").iterdir()
        for child in (task / "children").read_text().split()
    ]


def test_a_signal_ending_the_tool_ends_the_client(server: str) -> None:
    """The tool's process killed while it reads its input: the client dies of
    the same signal."""
    served = subprocess.Popen(
        client(server, "mx-opt"),
        stdin=subprocess.PIPE,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    (server_pid,) = (
        int(process.name)
        for process in Path("/proc").iterdir()
        if process.name.isdigit() and _command_line(process) == ["serve", server]
    )
    deadline = time.monotonic() + 30
    tools: list[int] = []
    while not tools and time.monotonic() < deadline:  # the handler forks the tool
        tools = [t for h in _children(server_pid) for t in _children(h)]
        time.sleep(0.05)
    assert len(tools) == 1, tools
    os.kill(tools[0], signal.SIGKILL)
    assert served.wait(timeout=30) == -signal.SIGKILL
    assert served.stdin is not None
    served.stdin.close()

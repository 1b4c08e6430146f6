"""Runs `mx-opt`, `mx-run` and `filecheck` for the lit suite without paying
Python's start-up for each RUN line.

Starting `mx-run` takes ~0.8 s of CPU (importing xDSL's interpreters), `mx-opt`
~0.6 s, `filecheck` ~0.15 s: most of a lit file's time. `tests/test_lit.py`
starts one server per worker, which imports the three tools once and forks
for each request; lit.cfg.py then runs each tool as a small client
(`python -S -E tests/tool_server.py run SOCKET TOOL ARGS...`, standard library
only) that hands its argument list, working directory, environment and
standard streams (the file descriptors themselves) to the server. A forked
child takes them over, runs the tool's `main` as its console script does
(`sys.exit(main())`, so the interpreter exits as a fresh one would, and an
uncaught exception prints its traceback), and the client ends as the child
ended: the same exit status, or the same signal. A direct `lit tests/filecheck`
runs the real tools.
"""

import contextlib
import gc
import io
import json
import os
import signal
import socket
import struct
import sys
from collections.abc import Generator
from pathlib import Path
from typing import Any, NoReturn

TOOLS = {
    "mx-opt": "mx.tools.mx_opt",
    "mx-run": "mx.tools.mx_run",
    "filecheck": "filecheck.main",
}
"""The tools served, and the module of each one's `main`."""

SERVER_ENV = "MX_LIT_TOOL_SERVER"
"""The environment variable through which `tests/test_lit.py` gives lit.cfg.py
the server's socket."""

_LENGTH = struct.Struct("!I")
_ENDED = struct.Struct("!?B")
"""How the tool's process ended: by a signal or not, and the signal or status."""


def _receive(connection: socket.socket, size: int) -> bytes:
    data = b""
    while len(data) < size:
        chunk = connection.recv(size - len(data))
        if not chunk:
            raise EOFError("the client closed the connection")
        data += chunk
    return data


def run(path: str, tool: str, args: list[str]) -> NoReturn:
    """The client: `tool args` run by the server at `path`; ends as it ended."""
    request = json.dumps(
        {"tool": tool, "args": args, "cwd": os.getcwd(), "env": dict(os.environ)}
    ).encode()
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as connection:
        connection.connect(path)
        socket.send_fds(connection, [_LENGTH.pack(len(request))], [0, 1, 2])
        connection.sendall(request)
        signalled, number = _ENDED.unpack(_receive(connection, _ENDED.size))
    if signalled:
        with contextlib.suppress(OSError):  # (SIGKILL's action cannot be set)
            signal.signal(number, signal.SIG_DFL)
        os.kill(os.getpid(), number)
    sys.exit(number)


def _standard_streams() -> None:
    """`sys.stdin`, `sys.stdout` and `sys.stderr` made anew over file
    descriptors 0, 1 and 2, as Python's start-up makes them: the server's
    were made for other files (a seekable one cannot be reconfigured once it
    is a pipe, as `filecheck` does)."""
    unbuffered = bool(os.environ.get("PYTHONUNBUFFERED"))
    made: list[io.TextIOWrapper] = []
    for fd, old in enumerate((sys.__stdin__, sys.__stdout__, sys.__stderr__)):
        assert old is not None
        raw = io.FileIO(fd, "r" if fd == 0 else "w", closefd=False)
        buffered = (
            io.BufferedReader(raw)
            if fd == 0
            else raw
            if unbuffered
            else io.BufferedWriter(raw)
        )
        made.append(
            io.TextIOWrapper(
                buffered,
                encoding=old.encoding,
                errors=old.errors,
                line_buffering=fd == 2 or (fd == 1 and raw.isatty()),
                write_through=unbuffered and fd > 0,
            )
        )
    sys.stdin, sys.stdout, sys.stderr = made
    sys.__stdin__, sys.__stdout__, sys.__stderr__ = made


def _run_tool(connection: socket.socket, listener: socket.socket) -> Any:
    """In a forked child: the request's tool run with its streams; what its
    `main` returns, for `sys.exit`."""
    header, fds, _, _ = socket.recv_fds(connection, _LENGTH.size, 3)
    header += _receive(connection, _LENGTH.size - len(header))
    request = json.loads(_receive(connection, _LENGTH.unpack(header)[0]))
    status_pid = os.fork()
    if status_pid:  # this process reports how the tool's process ended
        for fd in fds:
            os.close(fd)
        _, status = os.waitpid(status_pid, 0)
        signalled = os.WIFSIGNALED(status)
        number = os.WTERMSIG(status) if signalled else os.WEXITSTATUS(status)
        connection.sendall(_ENDED.pack(signalled, number))
        os._exit(0)
    connection.close()
    listener.close()
    for target, fd in enumerate(fds):
        os.dup2(fd, target)
        os.close(fd)
    os.chdir(request["cwd"])
    os.environ.clear()
    os.environ.update(request["env"])
    _standard_streams()
    tool = request["tool"]
    sys.argv = [os.path.join(os.path.dirname(sys.executable), tool), *request["args"]]
    return sys.modules[TOOLS[tool]].main()


def serve(path: str) -> Any:
    """The server: imports the tools, then forks for each connection. Returns
    only in a forked child, what the tool's `main` returned."""
    import importlib

    for module in TOOLS.values():
        importlib.import_module(module)
    # The imports' objects in a generation the collector never visits: a
    # child's exit then takes ~25 ms instead of ~130 ms (its collections
    # touched, so copied, every page of the server's heap).
    gc.freeze()
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as listener:
        listener.bind(path)
        listener.listen(64)
        print("ready", flush=True)
        while True:
            connection, _ = listener.accept()
            sys.stdout.flush()
            sys.stderr.flush()
            if os.fork() == 0:
                return _run_tool(connection, listener)
            connection.close()
            while True:  # reap the children that have ended
                try:
                    if os.waitpid(-1, os.WNOHANG)[0] == 0:
                        break
                except ChildProcessError:
                    break


def client(path: str, tool: str) -> list[str]:
    """The command running `tool` through the server at `path`."""
    return [sys.executable, "-S", "-E", __file__, "run", path, tool]


@contextlib.contextmanager
def running(path: Path) -> Generator[dict[str, str]]:
    """A server at `path` (a socket's file name) for the context's span; the
    environment of a lit run whose tools it runs."""
    import subprocess

    server = subprocess.Popen(
        [sys.executable, "-m", "tests.tool_server", "serve", str(path)],
        cwd=Path(__file__).parents[1],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert server.stdout is not None
        assert server.stdout.readline() == "ready\n", "the tool server did not start"
        yield {**os.environ, SERVER_ENV: str(path)}
    finally:
        server.kill()
        server.wait()


if __name__ == "__main__":
    if sys.argv[1] == "run":
        run(sys.argv[2], sys.argv[3], sys.argv[4:])
    sys.exit(serve(sys.argv[2]))

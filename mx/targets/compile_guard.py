"""Compiling LLVM IR where an LLVM abort cannot end the caller's process.

LLVM reports some failures of its back end (a type it cannot legalize for a
CPU, an assertion) by aborting the process, which Python cannot catch.
`compile_in_child` runs the compilation in a forked child, which sends the
object code back through a pipe: if the child dies, the functions that make
it die are found by compiling halves of the module (the others declared
only), and a `CompileError` names them and the CPU. `functions` and
`failing_functions` split a module's text by function for that search (the
test of every CPU uses them too); `reachable_code`, the functions a call may
bring in, is the JIT's measure of what its batch loop lets LLVM inline.

The JIT compiles every module so (`mx.jit_machine_code.machine_code`): LLVM
aborted on modules with f16 or bf16 vectors for some CPUs (see
docs/low-precision.md), and llvmlite's LLVM 22 at -O3 on some packed MXFP4
matvecs in loops over layers (an optimizer bug; the JIT then compiles at -O2
in a second child). A fork costs the copy-on-write of the parent's pages
touched while the child runs (the compilation itself is done once): a 4x4
f32 matmul's object code took 4.6 ms in the process, 15.9 ms in a child
(Intel Xeon, 2 vCPUs).
"""

from __future__ import annotations

import faulthandler
import os
import re
import signal
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

from mx.errors import CompileError

_LINKAGE = re.compile(
    r"\b(private|internal|linkonce_odr|linkonce|weak_odr|weak|dso_local|hidden)\s+"
)
_NAME = re.compile(r'@("(?:[^"\\]|\\.)*"|[-\w.$]+)\(')


@dataclass(frozen=True)
class Function:
    """One `define` of a module: its symbol, the text of its definition and
    a declaration of it (to keep the module valid without the body)."""

    name: str
    definition: str
    declaration: str


def functions(llvm_ir: str) -> tuple[str, list[Function]]:
    """The text of `llvm_ir` outside its function definitions (types,
    globals, declarations) and its definitions, in order."""
    rest: list[str] = []
    found: list[Function] = []
    body: list[str] | None = None
    for line in llvm_ir.splitlines():
        if body is None and line.startswith("define "):
            body = [line]
            continue
        if body is None:
            rest.append(line)
            continue
        body.append(line)
        if line == "}":
            header = body[0]
            match = _NAME.search(header)
            assert match is not None, header
            signature = header[len("define ") : header.rindex(")") + 1]
            found.append(
                Function(
                    match.group(1),
                    "\n".join(body),
                    "declare " + _LINKAGE.sub("", signature),
                )
            )
            body = None
    return "\n".join(rest), found


def reachable_code(definitions: Mapping[str, str], symbol: str) -> list[str]:
    """The definitions of `symbol` (without its `@`) and of every function
    it calls, directly or not, among a module's `definitions` (by name, as
    `functions` splits them): the code LLVM may inline where `symbol` is
    called."""
    seen: dict[str, str] = {}
    todo = [symbol]
    while todo:
        name = todo.pop()
        if name in seen or name not in definitions:
            continue
        seen[name] = definitions[name]
        todo += _NAME.findall(definitions[name].split("\n", 1)[1])
    return list(seen.values())


def _module(rest: str, all_functions: Sequence[Function], kept: set[str]) -> str:
    return "\n".join(
        [rest]
        + [f.definition if f.name in kept else f.declaration for f in all_functions]
    )


def failing_functions(llvm_ir: str, compiles: Callable[[str], bool]) -> list[str]:
    """The functions of `llvm_ir` that fail to compile on their own (each
    with the others declared): `compiles(text)` says whether a module does.
    Halves that compile are not searched further."""
    rest, all_functions = functions(llvm_ir)
    failing: list[str] = []

    def search(part: Sequence[Function]) -> None:
        if not part or compiles(_module(rest, all_functions, {f.name for f in part})):
            return
        if len(part) == 1:
            failing.append(part[0].name)
            return
        search(part[: len(part) // 2])
        search(part[len(part) // 2 :])

    search(all_functions)
    return failing


@dataclass(frozen=True)
class _Ended:
    """How a child that did not finish its compilation ended: a signal, or
    an exit status."""

    how: str


def _in_child(
    compile_: Callable[[str], bytes], llvm_ir: str, quiet: bool = False
) -> bytes | _Ended:
    """What `compile_(llvm_ir)` returns, run in a forked child and sent back
    through a pipe; `_Ended` if the child did not finish. `quiet`: without
    the child's messages on stderr."""
    read_end, write_end = os.pipe()
    try:
        pid = os.fork()
    except OSError:
        os.close(read_end)
        os.close(write_end)
        raise
    if pid == 0:  # the child: never returns into the caller's code
        status = 1
        try:
            os.close(read_end)
            faulthandler.disable()  # LLVM's own message says what failed
            if quiet:
                os.dup2(os.open(os.devnull, os.O_WRONLY), 2)
            with os.fdopen(write_end, "wb") as pipe:
                pipe.write(compile_(llvm_ir))
            status = 0
        finally:
            os._exit(status)
    os.close(write_end)
    # Read to the end before waiting: a child blocked on a full pipe would
    # never exit.
    with os.fdopen(read_end, "rb") as pipe:
        output = pipe.read()
    _, status = os.waitpid(pid, 0)
    if os.WIFSIGNALED(status):
        return _Ended(f"signal {signal.Signals(os.WTERMSIG(status)).name}")
    code = os.waitstatus_to_exitcode(status)
    return output if code == 0 else _Ended(f"exit status {code}")


def compile_in_child(
    llvm_ir: str,
    cpu: str,
    compile_: Callable[[str], bytes],
    source_name: Callable[[str], str] = lambda symbol: symbol,
    fallback: Callable[[str], bytes] | None = None,
) -> bytes:
    """What `compile_(llvm_ir)` (LLVM's optimization and code generation for
    `cpu`: the object code) returns, run in a forked child; if the child
    does not finish, what `fallback(llvm_ir)` returns in another; if that
    does not finish either (or there is none), raises a `CompileError`
    naming the failing functions (`source_name` of their symbols) and the
    CPU."""
    compiled = _in_child(compile_, llvm_ir)
    if not isinstance(compiled, _Ended):
        return compiled
    last = compile_
    if fallback is not None:
        last, retried = fallback, _in_child(fallback, llvm_ir)
        if not isinstance(retried, _Ended):
            return retried
    symbols = failing_functions(
        llvm_ir,
        lambda text: not isinstance(_in_child(last, text, quiet=True), _Ended),
    )
    names = dict.fromkeys(source_name(symbol) for symbol in symbols)
    listed = ", ".join(f"@{name}" for name in names) or "the module as a whole"
    raise CompileError(
        [
            f"error: LLVM failed to compile {listed} for CPU '{cpu}' (it ended "
            f"with {compiled.how}); please report it with the module"
        ]
    )

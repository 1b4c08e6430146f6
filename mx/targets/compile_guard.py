"""Compiling LLVM IR where an LLVM abort cannot end the caller's process.

LLVM reports some failures of its back end (a type it cannot legalize for a
CPU, an assertion) by aborting the process, which Python cannot catch.
`check_compiles` runs the compilation in a forked child first: if the child
dies, the functions that make it die are found by compiling halves of the
module (the others declared only), and an `LLVMCompileError` names them and
the CPU. `functions` and `failing_functions` split a module's text by
function for that search (the test of every CPU uses them too).

Forking costs a second compilation, so the JIT checks only modules with f16
or bf16 vectors, the values whose lowering LLVM decides per CPU (see
docs/low-precision.md).
"""

from __future__ import annotations

import faulthandler
import os
import re
import signal
from collections.abc import Callable, Sequence
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


def _compiles_in_child(
    compile_: Callable[[str], object], llvm_ir: str, quiet: bool = False
) -> str | None:
    """None if `compile_(llvm_ir)` returns in a forked child; else how the
    child ended (a signal, or an exit status). `quiet`: without the child's
    messages on stderr."""
    pid = os.fork()
    if pid == 0:  # the child: never returns into the caller's code
        status = 1
        try:
            faulthandler.disable()  # LLVM's own message says what failed
            if quiet:
                os.dup2(os.open(os.devnull, os.O_WRONLY), 2)
            compile_(llvm_ir)
            status = 0
        finally:
            os._exit(status)
    _, status = os.waitpid(pid, 0)
    if os.WIFSIGNALED(status):
        return f"signal {signal.Signals(os.WTERMSIG(status)).name}"
    code = os.waitstatus_to_exitcode(status)
    return None if code == 0 else f"exit status {code}"


def check_compiles(
    llvm_ir: str,
    cpu: str,
    compile_: Callable[[str], object],
    source_name: Callable[[str], str] = lambda symbol: symbol,
) -> None:
    """Runs `compile_(llvm_ir)` (LLVM's optimization and code generation for
    `cpu`) in a forked child; if the child does not finish, raises a
    `CompileError` naming the failing functions (`source_name` of their
    symbols) and the CPU."""
    ended = _compiles_in_child(compile_, llvm_ir)
    if ended is None:
        return
    symbols = failing_functions(
        llvm_ir, lambda text: _compiles_in_child(compile_, text, quiet=True) is None
    )
    names = dict.fromkeys(source_name(symbol) for symbol in symbols)
    listed = ", ".join(f"@{name}" for name in names) or "the module as a whole"
    raise CompileError(
        [
            f"error: LLVM failed to compile {listed} for CPU '{cpu}' (it ended "
            f"with {ended}); please report it with the module"
        ]
    )

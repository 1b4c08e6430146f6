"""Located diagnostics, as mlir-opt prints them.

A `Diag` is one message at a 1-based line and column of an input; `Source`
renders it as

    name:line:col: error: message
    <the source line, clipped around the column if it is long>
    <a caret under the column>

`located_message` does the same for a caller holding only the text and a
name (e.g. `<string>` for IR given to the JIT as a string); `op_diag` places a
diagnostic at an operation's `file:line:col` location (or its nearest located
ancestor's), which the front end's parser gives every op.

A pass that rejects its input (e.g. a matrix too large to lower) raises
`OpDiagnostic`, so that `mx-opt` reports the error at the offending op's source
line and `--verify-diagnostics` can match it.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Literal, cast

from xdsl.dialects.builtin import FileLineColLoc
from xdsl.ir import Operation
from xdsl.utils.exceptions import PassFailedException

Severity = Literal["error", "warning", "note", "remark"]

EXCERPT_WIDTH = 160
"""Longest source excerpt printed under a diagnostic: a longer line is clipped
to a window around the column, marked with `...` where text was cut."""


@dataclass(frozen=True)
class Diag:
    """One diagnostic; `line` is 1-based in the whole input, None if unknown."""

    severity: Severity
    line: int | None
    column: int
    message: str


def excerpt(line: str, column: int) -> tuple[str, int]:
    """`line` clipped to `EXCERPT_WIDTH` characters around the 1-based `column`,
    and the column's position in the clipped text."""
    if len(line) <= EXCERPT_WIDTH:
        return line, column
    half = EXCERPT_WIDTH // 2
    start = max(0, min(column - 1 - half, len(line) - EXCERPT_WIDTH))
    end = start + EXCERPT_WIDTH
    text = line[start:end]
    caret = column - start
    if start > 0:
        text = "..." + text
        caret += 3
    if end < len(line):
        text += "..."
    return text, caret


@dataclass(frozen=True)
class Source:
    """An input text and its name, for printing diagnostics with their source line."""

    name: str
    lines: list[str]

    @staticmethod
    def of_text(name: str, text: str) -> Source:
        return Source(name, text.split("\n"))

    @property
    def text(self) -> str:
        return "\n".join(self.lines)

    def render(self, diag: Diag) -> str:
        if diag.line is None:
            return f"{self.name}: {diag.severity}: {diag.message}"
        text = f"{self.name}:{diag.line}:{diag.column}: {diag.severity}: {diag.message}"
        if diag.line <= len(self.lines) and (
            line := self.lines[diag.line - 1].rstrip("\r")
        ):
            shown, caret = excerpt(line, diag.column)
            text += f"\n{shown}\n{' ' * (caret - 1)}^"
        return text


def located_message(
    text: str, name: str, line: int | None, column: int, message: str
) -> str:
    """`name:line:col: error: message`, the source line and a caret under the column."""
    return Source.of_text(name, text).render(Diag("error", line, column, message))


def op_diag(op: Operation, message: str, severity: Severity = "error") -> Diag:
    """A diagnostic at `op`'s location, or its nearest located ancestor's."""
    located: Operation | None = op
    while located is not None and not isinstance(located.location, FileLineColLoc):
        located = located.parent_op()
    text = f"'{op.name}' op {message}"
    if located is None:
        return Diag(severity, None, 1, text)
    loc = cast(FileLineColLoc, located.location)
    return Diag(severity, loc.line.data, loc.column.data, text)


class OpDiagnostic(PassFailedException):
    """A pass error about `op`, reported at `op`'s location."""

    def __init__(self, op: Operation, message: str) -> None:
        super().__init__(message)
        self.op = op
        self.message = message


def did_you_mean(name: str, candidates: Iterable[str], cutoff: float = 0.6) -> str:
    """`; did you mean: a, b?` naming the candidates close to `name`, or ''."""
    close = difflib.get_close_matches(name, list(candidates), n=5, cutoff=cutoff)
    return f"; did you mean: {', '.join(close)}?" if close else ""

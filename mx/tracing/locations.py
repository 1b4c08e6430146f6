"""Where a traced operation was written: the Python file, line and column of
the user's expression, as an MLIR `FileLineColLoc`, and errors located there.

The location is the innermost frame outside mx's own code (this package and
xDSL), so an error inside `mx.fma` points at the user's call of it."""

from __future__ import annotations

import linecache
import sys
from dataclasses import dataclass
from pathlib import Path
from types import FrameType

from xdsl.dialects.builtin import FileLineColLoc, IntAttr, StringAttr

from mx.diagnostics import Diag, Source
from mx.errors import MXError

_OWN_FILES = str(Path(__file__).resolve().parent)


class TracingError(MXError):
    """A traced Python function does something mx cannot compile (a shape or
    dtype mismatch, an unsupported operation). The message starts with the
    Python file, line and column of the offending expression."""


@dataclass(frozen=True)
class PythonLocation:
    file: str
    line: int
    column: int
    """1-based, as in MLIR locations."""

    def attribute(self) -> FileLineColLoc:
        return FileLineColLoc(
            StringAttr(self.file), IntAttr(self.line), IntAttr(self.column)
        )

    def error(self, message: str) -> TracingError:
        source = Source(
            self.file, [line.rstrip("\n") for line in linecache.getlines(self.file)]
        )
        return TracingError(
            source.render(Diag("error", self.line, self.column, message))
        )


def _user_frame() -> FrameType | None:
    frame = sys._getframe(1)  # pyright: ignore[reportPrivateUsage]
    while frame is not None and frame.f_code.co_filename.startswith(_OWN_FILES):
        frame = frame.f_back
    return frame


def caller_location() -> PythonLocation:
    """The location of the user's expression being evaluated."""
    frame = _user_frame()
    if frame is None:
        return PythonLocation("<unknown>", 1, 1)
    code = frame.f_code
    column = 1
    for index, position in enumerate(code.co_positions()):
        if index == frame.f_lasti // 2:
            line, _, start, _ = position
            if start is not None and line == frame.f_lineno:
                column = start + 1
            break
    return PythonLocation(code.co_filename, frame.f_lineno, column)

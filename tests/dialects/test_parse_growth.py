"""Parsing (mx's located parser) and printing do work linear in the input,
measured without clocks:

- the text scanned to locate ops: each op's line and column (mlir-opt's
  `file:line:col` locations) once took a count of the newlines before it
  (xDSL's `Span.get_location`), quadratic in the input; the characters the
  located parser scans that way must stay within a constant factor of the
  input's length;
- the Python calls made to parse, verify and print a module grow by the same
  amount each time the module grows by the same number of functions.

Timings against stock `xdsl-opt` are in bench/COMPILE_TIME.md
(`python -m bench.compile_time --parse`).
"""

import io
import sys
from itertools import pairwise
from types import FrameType
from typing import Any

import pytest
from xdsl.printer import Printer
from xdsl.utils.lexer import Input, Span

from bench.compile_time import module_text
from mx.frontend import parse_and_verify


def _print(text: str) -> str:
    out = io.StringIO()
    Printer(stream=out).print_op(parse_and_verify(text))
    return out.getvalue()


def test_locating_ops_scans_the_input_once(monkeypatch: pytest.MonkeyPatch) -> None:
    scanned = 0
    get_location, start_of_line = Span.get_location, Input.get_start_of_line

    def counted_location(self: Span) -> Any:
        nonlocal scanned
        scanned += self.start  # the newlines counted before the span
        return get_location(self)

    def counted_start(self: Input, pos: int) -> int:
        nonlocal scanned
        start = start_of_line(self, pos)
        scanned += pos - start
        return start

    monkeypatch.setattr(Span, "get_location", counted_location)
    monkeypatch.setattr(Input, "get_start_of_line", counted_start)
    text = module_text(40)
    _print(text)
    assert scanned <= 2 * len(text), (scanned, len(text))


def test_parse_verify_print_calls_grow_linearly() -> None:
    calls: list[int] = []
    for functions in (10, 20, 30):
        text = module_text(functions)
        count = 0

        def profile(frame: FrameType, event: str, arg: Any) -> None:
            nonlocal count
            if event in ("call", "c_call"):
                count += 1

        sys.setprofile(profile)
        try:
            _print(text)
        finally:
            sys.setprofile(None)
        calls.append(count)
    first, second = (b - a for a, b in pairwise(calls))
    assert abs(second - first) <= 0.02 * first, calls

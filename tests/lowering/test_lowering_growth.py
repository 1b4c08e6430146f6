"""`convert-to-llvm` does work linear in its input, measured without clocks:
the ops it visits (every pattern-dispatch call, each a created or re-visited
op) and the ops it leaves grow by the same amount each time the input grows
by the same amount — in the number of functions and in the length of one
function's chain of matrix ops (a quadratic walk or a re-visit of the whole
function per rewrite would make the increments grow)."""

from itertools import pairwise
from typing import Any

import pytest
from xdsl.dialects.builtin import ModuleOp
from xdsl.parser import Parser
from xdsl.universe import Universe

from mx.frontend import mx_context
from mx.lowering.dispatch import OpTypeDispatchApplier
from mx.passes.mx_lower_to_llvm import PIPELINE

M = "!matrix.matrix<4x4xf32>"


def _function(name: str, chain: int) -> str:
    """A chain of `chain` dependent adds/transposes/muls, loaded and stored."""
    body = [f"  %m0 = matrix.column_major_load %a[0] : memref<16xf32> -> {M}"]
    for k in range(chain):
        op = ("add", "transpose", "mul")[k % 3]
        if op == "transpose":
            body.append(f"  %m{k + 1} = matrix.transpose %m{k} : {M} -> {M}")
        else:
            body.append(f"  %m{k + 1} = matrix.{op} %m{k}, %m0 : {M}")
    body.append(f"  matrix.column_major_store %m{chain}, %b[0] : {M}, memref<16xf32>")
    return (
        f"func.func @{name}(%a: memref<16xf32>, %b: memref<16xf32>) {{\n"
        + "\n".join(body)
        + "\n  func.return\n}\n"
    )


def _convert(source: str, monkeypatch: pytest.MonkeyPatch) -> tuple[int, int]:
    """(pattern-dispatch calls, ops left) of convert-to-llvm on `source`
    after the rest of mx-lower-to-llvm's pipeline."""
    ctx = mx_context()
    module = Parser(ctx, source).parse_module()
    passes = Universe.get_multiverse().all_passes
    for name in PIPELINE[: PIPELINE.index("convert-to-llvm")]:
        passes[name]()().apply(ctx, module)
    calls = 0
    original = OpTypeDispatchApplier.match_and_rewrite

    def counted(self: OpTypeDispatchApplier, op: Any, rewriter: Any) -> None:
        nonlocal calls
        calls += 1
        original(self, op, rewriter)

    with monkeypatch.context() as patch:
        patch.setattr(OpTypeDispatchApplier, "match_and_rewrite", counted)
        passes["convert-to-llvm"]()().apply(ctx, module)
    assert isinstance(module, ModuleOp)
    return calls, sum(1 for _ in module.walk())


def _assert_linear(counts: list[tuple[int, int]]) -> None:
    for what in (0, 1):
        steps = [b[what] - a[what] for a, b in pairwise(counts)]
        assert steps[0] > 0
        # Equal input increments: equal work increments (up to a few ops of
        # per-function constants that the first sizes may not yet need).
        assert max(steps) - min(steps) <= 0.02 * steps[0] + 8, (what, counts)


def test_work_is_linear_in_the_number_of_functions(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    counts = [
        _convert("".join(_function(f"f{i}", 6) for i in range(n)), monkeypatch)
        for n in (2, 4, 6)
    ]
    _assert_linear(counts)


def test_work_is_linear_in_the_length_of_a_chain(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    counts = [_convert(_function("f", n), monkeypatch) for n in (12, 24, 36)]
    _assert_linear(counts)

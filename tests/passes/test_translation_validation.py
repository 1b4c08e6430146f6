"""Translation validation: every pipeline of a
FileCheck RUN line in tests/filecheck/passes/*.mlir and
tests/filecheck/dialects/*/canonicalize.mlir must leave the interpreted results
of the functions it transforms unchanged (see `mx.testing.translation`).
`MX_TV_INPUTS=<n>` draws more random inputs per function (default 3)."""

import os
from dataclasses import dataclass
from pathlib import Path

import pytest
from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import ModulePass, PassPipeline
from xdsl.pattern_rewriter import (
    PatternRewriter,
    PatternRewriteWalker,
    RewritePattern,
    op_type_rewrite_pattern,
)

from mx.dialects import matrix
from mx.testing.translation import ROOT, filecheck_files, run_line_pipelines, validate

INPUTS = int(os.environ.get("MX_TV_INPUTS", "3"))
CASES = [(f, p, split) for f in filecheck_files() for p, split in run_line_pipelines(f)]


@pytest.mark.parametrize(
    ("path", "pipeline", "split"),
    CASES,
    ids=[f"{f.relative_to(ROOT / 'tests' / 'filecheck')}:{p}" for f, p, _ in CASES],
)
def test_pipeline_preserves_results(path: Path, pipeline: str, split: bool) -> None:
    report = validate(path, pipeline, split, INPUTS)
    assert report.skipped is not None
    # Not vacuous: a file whose functions can all be skipped says so here.
    assert report.validated > 0 or all(
        "arbfp" in why for why in report.skipped.values()
    ), report.skipped


def test_there_is_something_to_validate() -> None:
    assert len(CASES) >= 5
    assert any(p == "canonicalize" for _, p, _ in CASES)


class _AddToSub(RewritePattern):
    """matrix.add(a, b) -> matrix.sub(a, b): a miscompile for the check to catch."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: matrix.AddOp, rewriter: PatternRewriter) -> None:
        rewriter.replace(
            op,
            matrix.SubOp.create(
                operands=op.operands,
                result_types=[op.result.type],
                properties=dict(op.properties),
            ),
        )


@dataclass(frozen=True)
class _BrokenPass(ModulePass):
    name = "test-broken"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        PatternRewriteWalker(_AddToSub()).rewrite_module(op)


def test_a_wrong_pass_is_caught() -> None:
    path = ROOT / "tests" / "filecheck" / "passes" / "matrix-fuse-contractions.mlir"
    with pytest.raises(AssertionError, match="changed"):
        validate(path, "test-broken", False, 2, passes=PassPipeline((_BrokenPass(),)))

"""Everything mx prints re-parses in stock `xdsl-opt` (mx installed), and,
where it is upstream IR, in `mlir-opt-16`.

The corpus: every lit input of tests/filecheck that `mx-opt` accepts, chunk
by chunk, printed as parsed and after each pipeline its RUN lines give (the
lowerings, including cache-blocked products with `memref.prefetch`), plus a
512×512 f32 matmul lowered by `convert-matrix-to-affine`. Each output is
parsed as `xdsl-opt` parses it: xDSL's own `Parser` and a context of the
multiverse's dialects, without mx's parser or its fixes of xDSL. Outputs that
hold upstream dialects only are printed with `-t mlir16` and given to
`mlir-opt-16` in one `--split-input-file` run per lit file. Stock `xdsl-opt`
itself (a subprocess) reads the blocked matmul.

xDSL's parser takes ~1 s per 1000 ops: outputs of more than `MAX_OPS` ops are
left to the blocked matmul's test unless MX_STOCK_REPARSE_ALL=1
(docs/long-runs.md).
"""

import os
import re
import shlex
import subprocess
import sys
from io import StringIO
from pathlib import Path

import pytest
from xdsl.dialects.builtin import ModuleOp
from xdsl.printer import Printer
from xdsl.universe import Universe
from xdsl.utils.exceptions import DiagnosticException

from mx.diagnostics import OpDiagnostic
from mx.frontend import FrontendError, mx_context, parse_and_verify
from mx.targets.mlir16 import MLIR16Target
from mx.testing.stock_xdsl import stock_parse_error
from mx.testing.translation import DISCARDED
from mx.tools.mx_opt import split_input
from mx.tools.pipeline import PipelineError, build_passes
from tests.system_tools import required_tool

LIT = Path(__file__).parents[1] / "filecheck"
UPSTREAM = {
    "builtin",
    "func",
    "affine",
    "scf",
    "cf",
    "arith",
    "math",
    "memref",
    "vector",
}

BLOCKED_MATMUL = """\
func.func @mm(%a: !matrix.matrix<512x512xf32>, %b: !matrix.matrix<512x512xf32>)
    -> !matrix.matrix<512x512xf32> {
  %c = matrix.matmul %a, %b
      : !matrix.matrix<512x512xf32>, !matrix.matrix<512x512xf32> -> !matrix.matrix<512x512xf32>
  func.return %c : !matrix.matrix<512x512xf32>
}
"""

MAX_OPS = None if os.environ.get("MX_STOCK_REPARSE_ALL") else 3000

_PIPELINE = re.compile(r"""-p[= ]\s*("[^"]*"|'[^']*'|\S+)""")


def _inputs() -> list[Path]:
    return sorted(p for p in LIT.rglob("*.mlir") if "Output" not in p.parts)


def _pipelines(text: str) -> list[str]:
    """The pipelines of the RUN lines whose output is MLIR text (not LLVM IR,
    nor discarded with `-o /dev/null`)."""
    pipelines: list[str] = []
    for line in text.splitlines():
        if "RUN:" not in line or "mx-opt" not in line or "-t llvm" in line:
            continue
        if DISCARDED.search(line.split("|")[0]):
            continue
        for match in _PIPELINE.finditer(line):
            (pipeline,) = shlex.split(match.group(1))
            if pipeline not in pipelines:
                pipelines.append(pipeline)
    return pipelines


def _printed(module: ModuleOp) -> str:
    out = StringIO()
    Printer(stream=out).print_op(module)
    return out.getvalue()


def _outputs(text: str) -> list[tuple[str, ModuleOp]]:
    """(what, module) of each chunk as parsed and after each pipeline."""
    outputs: list[tuple[str, ModuleOp]] = []
    available = Universe.get_multiverse().all_passes
    for chunk, offset in split_input(text):
        try:
            module = parse_and_verify(chunk)
        except FrontendError:
            continue  # an invalid input (its diagnostics are tested)
        outputs.append((f"chunk at line {offset + 1}", module))
        for pipeline in _pipelines(text):
            lowered = module.clone()
            try:
                for _, made in build_passes(pipeline, available):
                    made.apply(mx_context(), lowered)
            except (DiagnosticException, FrontendError, PipelineError):
                continue  # a located error, which its lit test checks
            outputs.append((f"chunk at line {offset + 1}, -p {pipeline}", lowered))
    return outputs


def _check_stock_parse(what: str, module: ModuleOp) -> None:
    if MAX_OPS is not None and sum(1 for _ in module.walk()) > MAX_OPS:
        return
    text = _printed(module)
    if (error := stock_parse_error(text)) is not None:
        pytest.fail(f"{what}: stock xDSL cannot parse mx's output:\n{error}\n{text}")


def _mlir16(module: ModuleOp) -> str | None:
    """`-t mlir16` of `module` if it is upstream IR that MLIR 16 has."""
    out = StringIO()
    try:
        MLIR16Target().emit(mx_context(), module, out)
    except OpDiagnostic:
        return None  # not in MLIR 16 (a dynamic vector.extract position, ...)
    text = out.getvalue()
    if "!matrix." in text or "#arbfp." in text:
        return None
    return text


def _check_mlir_opt_16(path: Path, outputs: list[tuple[str, ModuleOp]]) -> None:
    texts = [
        text
        for _, module in outputs
        if {op.dialect_name() for op in module.walk()} <= UPSTREAM
        and (text := _mlir16(module)) is not None
    ]
    if not texts:
        return
    result = subprocess.run(
        [required_tool("mlir-opt-16"), "--split-input-file", "-o", "/dev/null"],
        input="\n// -----\n".join(texts),
        capture_output=True,
        text=True,
        check=False,
    )
    assert result.returncode == 0, f"{path}: mlir-opt-16:\n{result.stderr[:4000]}"


@pytest.mark.parametrize("path", _inputs(), ids=lambda p: str(p.relative_to(LIT)))
def test_lit_outputs_reparse(path: Path) -> None:
    outputs = _outputs(path.read_text())
    for what, module in outputs:
        _check_stock_parse(f"{path.relative_to(LIT)}: {what}", module)
    _check_mlir_opt_16(path, outputs)


def test_blocked_matmul_reparses_in_stock_xdsl_opt(tmp_path: Path) -> None:
    """The README's promise, with the real tools: the lowered 512² matmul
    (cache-blocked, with memref.prefetch) goes through stock `xdsl-opt`."""
    source = tmp_path / "mm.mlir"
    source.write_text(BLOCKED_MATMUL)
    bin_dir = Path(sys.executable).parent
    lowered = subprocess.run(
        [bin_dir / "mx-opt", source, "-p", "convert-matrix-to-affine"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    assert "memref.prefetch" in lowered
    result = subprocess.run(
        [bin_dir / "xdsl-opt"], input=lowered, capture_output=True, text=True
    )
    assert result.returncode == 0, result.stderr[-3000:]
    assert result.stdout.count("memref.prefetch") == lowered.count("memref.prefetch")

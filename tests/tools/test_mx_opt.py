"""Tests of the `mx-opt` driver: exit statuses, located errors, --verify-diagnostics."""

import json
import os
import re
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from importlib.metadata import version
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from xdsl.context import Context
from xdsl.dialects import func
from xdsl.dialects.builtin import FunctionType, ModuleOp, i64
from xdsl.passes import ModulePass
from xdsl.universe import Universe
from xdsl.utils.exceptions import PassFailedException

from mx.diagnostics import OpDiagnostic
from mx.errors import MXError
from mx.tools.mx_opt import MxOptMain, main
from mx.tools.pipeline import PipelineError, build_passes

MX_OPT = Path(sys.executable).parent / "mx-opt"

VALID = """\
func.func @add(%a : i32, %b : i32) -> i32 {
  %s = arith.addi %a, %b : i32
  func.return %s : i32
}
"""

# The return on line 3 does not match the function type.
BAD_RETURN = """\
func.func @f() -> i64 {
  %0 = arith.constant 1 : i32
  func.return %0 : i32
}
"""


@dataclass
class Result:
    status: int
    out: str
    err: str


def run(capsys: pytest.CaptureFixture[str], *args: str) -> Result:
    status = main(list(args))
    captured = capsys.readouterr()
    return Result(status, captured.out, captured.err)


def write(tmp_path: Path, text: str, name: str = "input.mlir") -> str:
    path = tmp_path / name
    path.write_text(text)
    return str(path)


def assert_user_error(result: Result, pattern: str) -> None:
    """Exit status 1, a message matching `pattern` on stderr, no traceback."""
    assert result.status == 1, result
    assert re.search(pattern, result.err), result.err
    assert "Traceback" not in result.out + result.err
    assert "internal error" not in result.err


# -- test-only passes, registered in-process only -------------------------


@dataclass(frozen=True)
class RaisingPass(ModulePass):
    name = "test-raise"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        raise RuntimeError("a bug in a pass")


@dataclass(frozen=True)
class BreakingPass(ModulePass):
    """Leaves IR that does not verify: a return of a value of the wrong type."""

    name = "test-break"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        for f in op.walk():
            if isinstance(f, func.FuncOp):
                f.function_type = FunctionType.from_lists([], [i64])


@dataclass(frozen=True)
class RejectingPass(ModulePass):
    """Rejects every function, located at the function."""

    name = "test-reject"
    reason: str = "unsupported"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        for f in op.walk():
            if isinstance(f, func.FuncOp):
                raise OpDiagnostic(f, f"cannot handle this function: {self.reason}")


@dataclass(frozen=True)
class UnlocatedFailurePass(ModulePass):
    """Fails like most xDSL passes do: a message without an op."""

    name = "test-fail-unlocated"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        raise PassFailedException("no location for this")


@pytest.fixture
def test_passes(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    register = MxOptMain.register_all_passes

    def register_with_test_passes(self: MxOptMain) -> None:
        register(self)
        for p in (RaisingPass, BreakingPass, RejectingPass, UnlocatedFailurePass):
            self.register_pass(p.name, lambda p=p: p)

    monkeypatch.setattr(MxOptMain, "register_all_passes", register_with_test_passes)
    yield


# -- plain runs -------------------------------------------------------------


def test_valid_input_round_trips(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    result = run(capsys, write(tmp_path, VALID))
    assert result.status == 0, result.err
    assert "arith.addi %a, %b : i32" in result.out
    assert result.err == ""


def test_output_file(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    out = tmp_path / "out.mlir"
    result = run(capsys, write(tmp_path, VALID), "-o", str(out))
    assert result.status == 0 and result.out == ""
    assert "func.func @add" in out.read_text()


def test_pass_with_option(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, test_passes: None
) -> None:
    result = run(capsys, write(tmp_path, VALID), "-p", "test-reject{reason=nope}")
    assert_user_error(
        result,
        r"input\.mlir:1:1: error: 'func\.func' op cannot handle this function: nope",
    )


def test_empty_file_is_an_empty_module(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    # As mlir-opt (xdsl-opt 0.75 raises): empty input is an empty module.
    result = run(capsys, write(tmp_path, ""))
    assert result.status == 0, result.err
    assert result.out.split() == ["builtin.module", "{", "}"]


def test_version(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_info:
        run(capsys, "--version")
    assert exit_info.value.code == 0
    out = capsys.readouterr().out
    assert version("mx") in out and version("xdsl") in out


def test_help(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_info:
        run(capsys, "--help")
    assert exit_info.value.code == 0
    out = capsys.readouterr().out
    for flag in (
        "--verify-diagnostics",
        "--split-input-file",
        "--list-passes",
        "-p",
        "-t",
        "-o",
    ):
        assert flag in out


def test_help_fits_80_columns(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        run(capsys, "--help")
    out = capsys.readouterr().out
    assert max(len(line) for line in out.splitlines()) <= 80
    assert "canonicalize" not in out  # no list of every pass


def test_list_passes(capsys: pytest.CaptureFixture[str], test_passes: None) -> None:
    result = run(capsys, "--list-passes")
    assert result.status == 0
    lines = result.out.splitlines()
    assert lines[0] == "mx passes:"
    mx_part = lines[: lines.index("xDSL passes (see xDSL's documentation):")]
    assert "  matrix-fuse-contractions" in mx_part
    assert "      mode: fastmath, matrix, off (default: fastmath)" in mx_part
    assert (
        "      vector-bits: 0, 64, 128, 256, 512, 1024, 2048 (default: 512)" in mx_part
    )
    assert (
        "      Lowers the matrix dialect to memref buffers and affine loop nests."
        in mx_part
    )
    assert "  canonicalize" in lines and "  cse" in lines
    assert "  canonicalize" not in mx_part
    only = run(capsys, "--list-passes", "--mx-only").out.splitlines()
    assert only == mx_part[:-1]  # without the blank separator line


@pytest.mark.parametrize(
    ("pipeline", "message"),
    [
        (
            "matrix-fuse-contractions{mode=bogus}",
            "<pipeline>:1:26: error: option 'mode' of pass 'matrix-fuse-contractions' "
            "must be one of fastmath, matrix, off (got 'bogus')\n"
            "matrix-fuse-contractions{mode=bogus}\n" + " " * 25 + "^\n",
        ),
        (
            "cse,convert-matrix-to-affine{vector-bits=7}",
            "<pipeline>:1:30: error: option 'vector-bits' of pass "
            "'convert-matrix-to-affine' must be one of 0, 64, 128, 256, 512, 1024, "
            "2048 (got '7')\n",
        ),
        (
            "matrix-lowering-remarks{vector-bits=96}",
            "<pipeline>:1:25: error: option 'vector-bits' of pass "
            "'matrix-lowering-remarks' must be one of 0, 64, 128, 256, 512, 1024, "
            "2048 (got '96')\n",
        ),
        (
            "convert-matrix-to-affine{vector-bits=-64}",
            "must be one of 0, 64, 128, 256, 512, 1024, 2048 (got '-64')",
        ),
        (
            "matrix-fold-transposes{report=yes}",
            "<pipeline>:1:24: error: option 'report' of pass 'matrix-fold-transposes' "
            "must be true or false (got 'yes')\n",
        ),
        (
            "matrix-fuse-contractions{mode=3}",
            "must be one of fastmath, matrix, off (got '3')",
        ),
        (
            "outline-contractions{min-work=-1}",
            "<pipeline>:1:1: error: invalid options for pass 'outline-contractions': "
            "min-work must be 0 or more, got -1\n",
        ),
        (
            "mx-lower-to-llvm{outline-min-work=-4096}",
            "error: invalid options for pass 'mx-lower-to-llvm': "
            "outline-min-work must be 0 or more, got -4096\n",
        ),
        (
            "convert-matrix-to-affine{byte-shuffles=8}",
            "<pipeline>:1:26: error: option 'byte-shuffles' of pass "
            "'convert-matrix-to-affine' must be one of 0, 16, 32, 64 (got '8')\n",
        ),
        (
            "mx-lower-to-llvm{vector-registers=8}",
            "<pipeline>:1:18: error: option 'vector-registers' of pass "
            "'mx-lower-to-llvm' must be one of 0, 16, 32 (got '8')\n",
        ),
        (
            "convert-matrix-to-affine{vector-registers=7}",
            "<pipeline>:1:26: error: option 'vector-registers' of pass "
            "'convert-matrix-to-affine' must be one of 0, 16, 32 (got '7')\n",
        ),
        (
            "mx-lower-to-llvm{weight-streams=3}",
            "<pipeline>:1:18: error: option 'weight-streams' of pass "
            "'mx-lower-to-llvm' must be one of 0, 1, 2, 4, 8 (got '3')\n",
        ),
        (
            "convert-matrix-to-affine{weight-streams=16}",
            "<pipeline>:1:26: error: option 'weight-streams' of pass "
            "'convert-matrix-to-affine' must be one of 0, 1, 2, 4, 8 (got '16')\n",
        ),
        (
            "mx-lower-to-llvm{panel=5x5}",
            "<pipeline>:1:18: error: option 'panel' of pass "
            "'mx-lower-to-llvm' must be one of target, 1x16, 4x6, 2x6 (got '5x5')\n",
        ),
        (
            "convert-matrix-to-affine{layout=row_major}",
            "<pipeline>:1:26: error: option 'layout' of pass "
            "'convert-matrix-to-affine' must be one of column-major, row-major "
            "(got 'row_major')\n",
        ),
    ],
)
def test_pass_options_are_checked_with_the_pipeline(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, pipeline: str, message: str
) -> None:
    """Checked before the input is read (the file does not exist), at the option."""
    result = run(capsys, str(tmp_path / "missing.mlir"), "-p", pipeline)
    assert result.status == 1 and result.out == ""
    assert message in result.err
    assert "Traceback" not in result.err and "(" + "'" not in result.err


@pytest.mark.parametrize(
    ("name", "option", "value", "allowed"),
    [
        ("matrix-fuse-contractions", "mode", "bogus", "fastmath, matrix, off"),
        (
            "convert-matrix-to-affine",
            "vector_bits",
            7,
            "0, 64, 128, 256, 512, 1024, 2048",
        ),
        ("convert-matrix-to-affine", "layout", "row_major", "column-major, row-major"),
        (
            "matrix-lowering-remarks",
            "vector_bits",
            96,
            "0, 64, 128, 256, 512, 1024, 2048",
        ),
    ],
)
def test_pass_options_are_checked_by_the_pass(
    name: str, option: str, value: object, allowed: str
) -> None:
    """A pass made from Python checks its options' choices as mx-opt does."""
    from mx.universe import ALL_PASSES

    cls = ALL_PASSES[name]()
    message = (
        f"option '{option.replace('_', '-')}' of pass '{name}' must be one of "
        f"{allowed} (got '{value}')"
    )
    with pytest.raises(ValueError, match=re.escape(message)):
        cls(**{option: value})
    assert cls(**{option: cls.__dataclass_fields__[option].default}).name == name


def test_valid_pass_options(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    path = write(tmp_path, VALID)
    for pipeline in (
        "mx-lower-to-llvm{remarks}",  # a boolean option without a value is true
        "matrix-fold-transposes{report},matrix-lowering-remarks{annotate}",
        "convert-matrix-to-affine{vector-bits=0}",
        "convert-matrix-to-affine{vector-bits=256}",
        "matrix-fuse-contractions{mode=matrix}",
        "matrix-fold-transposes{report=false}",
    ):
        assert run(capsys, path, "-p", pipeline).status == 0, pipeline


MATMUL = """
func.func @f(%a: !matrix.matrix<40x40xf32>, %b: !matrix.matrix<40x40xf32>) -> !matrix.matrix<40x40xf32> {
  %p = matrix.matmul %a, %b : !matrix.matrix<40x40xf32>, !matrix.matrix<40x40xf32> -> !matrix.matrix<40x40xf32>
  func.return %p : !matrix.matrix<40x40xf32>
}
"""


def test_lower_to_llvm_passes_its_vector_options_on(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """`mx-lower-to-llvm{vector-bits=256 vector-registers=16}` (the LLVM IR of
    an AVX2 target) is its steps with those options on
    convert-matrix-to-affine, and differs from the default."""
    path = write(tmp_path, MATMUL)
    steps = (
        "matrix-fold-transposes,matrix-fuse-contractions,canonicalize,"
        "outline-contractions,"
        "convert-matrix-to-affine{vector-bits=256 vector-registers=16},"
        "convert-arbfp-to-arith,canonicalize,cse,outline-parallel-loops,"
        "convert-to-llvm,cse"
    )
    avx2 = run(
        capsys, path, "-p", "mx-lower-to-llvm{vector-bits=256 vector-registers=16}"
    )
    spelled_out = run(capsys, path, "-p", steps)
    default = run(capsys, path, "-p", "mx-lower-to-llvm")
    assert avx2.status == spelled_out.status == default.status == 0
    assert avx2.out == spelled_out.out
    assert "vector<8xf32>" in avx2.out and "vector<16xf32>" not in avx2.out
    assert "vector<16xf32>" in default.out


def test_lower_to_llvm_passes_weight_streams_on(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """`mx-lower-to-llvm{weight-streams=1}` (an AMD Zen 4 target) lowers a
    reassociated f16 matvec with convert-matrix-to-affine's
    `weight-streams=1`: one row's weights at a time instead of 4."""
    path = write(
        tmp_path,
        """func.func @f(%w: memref<?xf16>, %x: vector<1024xf32>) -> vector<64xf32> {
  %q = matrix.row_major_load %w[0] : memref<?xf16> -> !matrix.matrix<64x1024xf16>
  %m = matrix.cast %q : !matrix.matrix<64x1024xf16> to !matrix.matrix<64x1024xf32>
  %y = matrix.matvec %m, %x fastmath<reassoc> : !matrix.matrix<64x1024xf32>, vector<1024xf32> -> vector<64xf32>
  func.return %y : vector<64xf32>
}
""",
    )
    affine = "-p", "convert-matrix-to-affine{weight-streams=1}"
    one = run(capsys, path, "-p", "mx-lower-to-llvm{weight-streams=1}")
    default = run(capsys, path, "-p", "mx-lower-to-llvm")
    one_affine = run(capsys, path, *affine)
    assert one.status == default.status == one_affine.status == 0
    assert one.out != default.out
    # 64 rows (large enough for the kernel): 64 groups of one row, not 16 of 4
    four = run(capsys, path, "-p", "convert-matrix-to-affine").out
    assert _has_loop(one_affine.out, 64) and not _has_loop(four, 64)
    assert _has_loop(four, 16) and not _has_loop(one_affine.out, 16)


def _has_loop(text: str, trips: int) -> bool:
    """Whether `text` has an `affine.for` from 0 to `trips` without iter_args."""
    return re.search(rf"affine\.for %\w+ = 0 to {trips} \{{", text) is not None


@pytest.mark.parametrize(
    "pipeline", ["mx-lower-to-llvm{remarks}", "mx-lower-to-llvm{remarks=true}"]
)
def test_boolean_option_without_value_is_true(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, pipeline: str
) -> None:
    """As in MLIR: `{remarks}` is `{remarks=true}` (docs/tools.md writes it so)."""
    result = run(capsys, write(tmp_path, MATRIX_ADD), "-p", pipeline, "-t", "llvm")
    assert result.status == 0, result.err
    assert "remark: @f: lowered with" in result.err


_PIPELINE_TOKENS = [
    *("canonicalize", "cse", "mx-lower-to-llvm", "matrix-fuse-contractions"),
    *("mode", "remarks", "report", "matrix", "true", "7", '"x"'),
    *("{", "}", "=", ",", ",", " "),
]


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from(_PIPELINE_TOKENS), max_size=8))
def test_pipeline_text_is_accepted_whole_or_rejected_at_a_column(
    tokens: list[str],
) -> None:
    """Any pipeline text either builds one pass per comma-separated element
    (none dropped, as `a,` once silently was) or is a `PipelineError` at a
    column inside the text (never another exception)."""
    text = "".join(tokens)
    available = Universe.get_multiverse().all_passes
    try:
        built = build_passes(text, available)
    except PipelineError as err:
        assert 1 <= err.column <= len(text) + 1, (text, err.column)
        assert err.message and "Traceback" not in err.render(text)
        return
    depth, elements = 0, 1 if text else 0
    for char in text:
        depth += {"{": 1, "}": -1}.get(char, 0)
        elements += char == "," and depth == 0
    assert len(built) == elements, text


MATRIX_ADD = """\
func.func @f(%a: !matrix.matrix<2x2xf32>) -> !matrix.matrix<2x2xf32> {
  %b = matrix.add %a, %a : !matrix.matrix<2x2xf32>
  func.return %b : !matrix.matrix<2x2xf32>
}
"""


def test_timings_and_dumps_go_to_stderr_with_each_step(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    from mx.passes.mx_lower_to_llvm import STRUCTURED_STEPS

    path = write(tmp_path, MATRIX_ADD)
    out_file = tmp_path / "out.ll"
    result = run(
        capsys,
        path,
        "-p",
        "mx-lower-to-llvm",
        "-t",
        "llvm",
        "--time-passes",
        "--print-between-passes",
        "-o",
        str(out_file),
    )
    assert result.status == 0, result.err
    assert result.out == ""
    ir = out_file.read_text()
    assert ir.startswith("target datalayout") and "Execution time" not in ir
    assert "IR Dump" not in ir
    # The direct route (the default) stops the steps before convert-to-llvm
    # and writes the LLVM IR of their result (mx.compiler).
    dumps = re.findall(r"// -----// IR Dump After (\S+) //----- //", result.err)
    assert dumps == list(STRUCTURED_STEPS[:-1])  # the last step's IR is the output
    table = result.err[result.err.index("... Execution time report ...") :]
    names = re.findall(r"^ +[0-9.]+ \( *[0-9.]+%\)  (\S+)$", table, re.M)
    assert [n for n in names if not n.startswith("(")] == [*STRUCTURED_STEPS, "Total"]
    # On stdout, the output stays the IR alone.
    plain = run(capsys, path, "-p", "mx-lower-to-llvm", "--time-passes")
    assert plain.out.startswith("builtin.module") and "Execution" in plain.err


def test_llvm_target_on_unlowered_input_suggests_lowering(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    result = run(capsys, write(tmp_path, MATRIX_ADD), "-t", "llvm")
    assert_user_error(
        result,
        r"input\.mlir:1:1: error: 'func\.func' op cannot be translated to LLVM IR: "
        r"lower the input to the llvm dialect first, e\.g\. with -p mx-lower-to-llvm",
    )


def test_dash_reads_stdin() -> None:
    ok = subprocess.run(
        [str(MX_OPT), "-"], input=VALID.encode(), capture_output=True, check=False
    )
    assert ok.returncode == 0 and b"arith.addi" in ok.stdout, ok.stderr


# -- bad input: exit status 1 with a located message ------------------------

BAD_INPUTS = {
    "unparsable": ("func.func @f( {\n", r"input\.mlir:1:\d+: error: "),
    "unknown op": (
        '"nosuch.op"() : () -> ()\n',
        r"input\.mlir:1:\d+: error: .*nosuch\.op",
    ),
    "unknown type": (
        "func.func @f(%a : !nosuch.t) {\n  func.return\n}\n",
        r"input\.mlir:1:\d+: error: .*nosuch\.t",
    ),
    "unknown attribute": (
        "func.func @f() attributes {a = #nosuch.a} {\n  func.return\n}\n",
        r"input\.mlir:1:\d+: error: .*nosuch\.a",
    ),
    "failed verifier": (BAD_RETURN, r"input\.mlir:3:3: error: 'func\.return' op "),
    "undefined value": (
        "func.func @f() {\n  %0 = arith.addi %x, %x : i32\n  func.return\n}\n",
        r"input\.mlir:2:3: error: 'arith\.addi' op uses value %x, which is not defined",
    ),
    "deep nesting": (
        "builtin.module {" * 100_000 + "}" * 100_000,
        r"input\.mlir:1:\d+: error: input nests too deeply",
    ),
}


@pytest.mark.parametrize("kind", BAD_INPUTS)
def test_bad_input(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, kind: str
) -> None:
    text, pattern = BAD_INPUTS[kind]
    assert_user_error(run(capsys, write(tmp_path, text)), pattern)


def test_invalid_utf8(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    path = tmp_path / "input.mlir"
    path.write_bytes(b"func.func @f() {\n  \xff\n}\n")
    assert_user_error(
        run(capsys, str(path)), r"input\.mlir:2:3: error: invalid UTF-8 \(byte 0xff\)"
    )


def test_missing_file(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    result = run(capsys, str(tmp_path / "nope.mlir"))
    assert_user_error(result, r"mx-opt: error: cannot read input file '.*nope\.mlir'")


def test_split_input_file_reports_file_lines(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    text = VALID + "// -----\n" + BAD_RETURN + "// -----\n" + VALID
    result = run(capsys, write(tmp_path, text), "--split-input-file")
    # BAD_RETURN's line 3 is line 4 + 1 + 3 of the whole file.
    assert_user_error(result, r"input\.mlir:8:3: error: 'func\.return' op ")
    assert result.out.count("func.func @add") == 2  # the other chunks are still printed


@pytest.mark.parametrize(
    ("args", "pattern"),
    [
        (
            ["-p", "canonicalise"],
            r"unknown pass 'canonicalise'; did you mean: canonicalize",
        ),
        (
            ["-p", "no-such-thing-at-all"],
            r"unknown pass 'no-such-thing-at-all' \(see mx-opt --list-passes\)",
        ),
        (["-p", "cse{foo=1}"], r"pass 'cse' has no option 'foo' \(it has no options\)"),
        (["-p", "test-reject{reasn=x}"], r"no option 'reasn'; did you mean: reason\?"),
        (
            ["-p", "test-reject{reason=1}"],
            r"<pipeline>:1:13: error: option 'reason' of pass 'test-reject' must be a "
            r"string \(quoted",
        ),
        (["-p", "cse{"], r"<pipeline>:1:5: error: expected argument name here"),
        (["-p", "cse,"], r"<pipeline>:1:4: error: expected a pass name after ','"),
        (["-p", "cse,,cse"], r"<pipeline>:1:5: error: expected pass name here"),
        (
            ["-p", "matrix-fuse-contractions{mode}"],
            r"<pipeline>:1:26: error: option 'mode' of pass 'matrix-fuse-contractions'"
            r" needs a value \(fastmath, matrix, off\)",
        ),
        (["-t", "llvn"], r"invalid choice: 'llvn'; did you mean: llvm\?"),
        (["-t", "llvm{"], r"<pipeline>:1:6: error: expected argument name here"),
        (["-t", "llvm,mlir"], r"<pipeline>:1:10: error: expected one target"),
        (
            ["-t", "llvm{triple=1}"],
            r"option 'triple' of target 'llvm' must be a string \(quoted",
        ),
        (["--no-such-flag"], r"unrecognized arguments: --no-such-flag"),
    ],
)
def test_bad_command_line(
    capsys: pytest.CaptureFixture[str],
    tmp_path: Path,
    test_passes: None,
    args: list[str],
    pattern: str,
) -> None:
    path = write(tmp_path, VALID)
    try:
        result = run(capsys, path, *args)
    except SystemExit as exit_info:  # argparse's own errors
        captured = capsys.readouterr()
        result = Result(int(str(exit_info.code)), captured.out, captured.err)
    assert_user_error(result, pattern)


# -- bugs: exit status 2, never a diagnostic --------------------------------


@pytest.mark.parametrize("verify", [[], ["--verify-diagnostics"]])
def test_exception_in_pass_is_internal_error(
    capsys: pytest.CaptureFixture[str],
    tmp_path: Path,
    test_passes: None,
    verify: list[str],
) -> None:
    result = run(capsys, write(tmp_path, VALID), "-p", "test-raise", *verify)
    assert result.status == 2
    assert result.err.startswith(
        "mx-opt: internal error: RuntimeError: a bug in a pass\n"
    )


def test_invalid_ir_after_pass_is_internal_error(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, test_passes: None
) -> None:
    result = run(capsys, write(tmp_path, VALID), "-p", "test-break")
    assert result.status == 2
    assert result.err.startswith(
        "mx-opt: internal error: InternalError: IR after pass 'test-break' does not verify: "
    )
    assert re.search(r"input\.mlir:3:3: error: 'func\.return' op", result.err)


# -- --verify-diagnostics --------------------------------------------------

EXPECTED_BAD_RETURN = """\
func.func @f() -> i64 {
  %0 = arith.constant 1 : i32
  // expected-error@+1 {{expected [i64], got [i32]}}
  func.return %0 : i32
}
"""


def verify(capsys: pytest.CaptureFixture[str], tmp_path: Path, text: str) -> Result:
    return run(
        capsys, write(tmp_path, text), "--verify-diagnostics", "--split-input-file"
    )


def test_verify_diagnostics_correct(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    text = (
        EXPECTED_BAD_RETURN + "// -----\n" + VALID + "// -----\n" + EXPECTED_BAD_RETURN
    )
    result = verify(capsys, tmp_path, text)
    assert result.status == 0, result.err
    assert result.err == ""


def test_verify_diagnostics_pass_error(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, test_passes: None
) -> None:
    text = "// expected-error@+1 {{cannot handle this function}}\n" + VALID
    result = run(
        capsys, write(tmp_path, text), "--verify-diagnostics", "-p", "test-reject"
    )
    assert result.status == 0, result.err


@pytest.mark.parametrize(
    ("text", "pattern"),
    [
        # Missing: nothing is wrong with the op.
        (
            "// expected-error@+1 {{oops}}\n" + VALID,
            r'input\.mlir:1:4: error: expected error "oops" was not produced',
        ),
        # Extra: an error without a directive.
        (BAD_RETURN, r"input\.mlir:3:3: error: unexpected error: 'func\.return' op"),
        # Mismatched text.
        (
            EXPECTED_BAD_RETURN.replace("got [i32]", "got [i16]"),
            r'input\.mlir:3:6: error: expected error "expected \[i64\], got \[i16\]" was not produced',
        ),
        # Wrong line.
        (
            EXPECTED_BAD_RETURN.replace("@+1", "@+2"),
            r"input\.mlir:4:3: error: unexpected error: 'func\.return' op",
        ),
        # Wrong severity.
        (
            EXPECTED_BAD_RETURN.replace("expected-error", "expected-warning"),
            r'expected warning "expected \[i64\], got \[i32\]" was not produced',
        ),
        # Correct in one chunk, missing in the next: chunks are checked separately.
        (
            EXPECTED_BAD_RETURN
            + "// -----\n"
            + EXPECTED_BAD_RETURN.replace("func.return %0 : i32", ""),
            r'input\.mlir:9:6: error: expected error "expected \[i64\], got \[i32\]" was not produced',
        ),
    ],
    ids=["missing", "extra", "mismatched", "wrong-line", "wrong-severity", "per-chunk"],
)
def test_verify_diagnostics_fails(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, text: str, pattern: str
) -> None:
    assert_user_error(verify(capsys, tmp_path, text), pattern)


# -- the installed console script ------------------------------------------


def test_console_script_reads_stdin() -> None:
    result = subprocess.run(
        [str(MX_OPT)], input=b"\xc3\x28", capture_output=True, check=False
    )
    assert result.returncode == 1
    assert result.stderr.decode() == "<stdin>:1:1: error: invalid UTF-8 (byte 0xc3)\n"
    ok = subprocess.run(
        [str(MX_OPT)], input=VALID.encode(), capture_output=True, check=False
    )
    assert ok.returncode == 0 and b"arith.addi" in ok.stdout


def test_target_options_are_checked(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    result = run(capsys, write(tmp_path, VALID), "-t", "llvm{tripel=x}")
    assert_user_error(
        result, r"target 'llvm' has no option 'tripel'; did you mean: triple\?"
    )


def test_llvm_target_is_mx_s(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    text = "llvm.func @id(%a : i32) -> i32 {\n  llvm.return %a : i32\n}\n"
    result = run(capsys, write(tmp_path, text), "-t", "llvm")
    assert result.status == 0, result.err
    # xDSL's own `llvm` target prints no target triple.
    assert "target triple = " in result.out and "define i32 @id(i32" in result.out


def test_unlocated_pass_error(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, test_passes: None
) -> None:
    path = write(tmp_path, VALID)
    result = run(capsys, path, "-p", "test-fail-unlocated")
    assert_user_error(
        result, r"input\.mlir: error: pass 'test-fail-unlocated': no location"
    )
    text = "// expected-error@unknown {{no location for this}}\n" + VALID
    result = run(
        capsys,
        write(tmp_path, text),
        "-p",
        "test-fail-unlocated",
        "--verify-diagnostics",
    )
    assert result.status == 0, result.err


# Functions that declare C functions (`malloc`, `free`, `aligned_alloc`, the
# latest first) and an intrinsic, in that order of first use.
EACH_FUNCTION = """\
func.func @a() -> memref<4xf32> {
  %m = memref.alloc() : memref<4xf32>
  func.return %m : memref<4xf32>
}
func.func @b(%m: memref<4xf32>) {
  memref.dealloc %m : memref<4xf32>
  func.return
}
func.func @c(%x: f32, %y: f32) -> f32 {
  %z = arith.maximumf %x, %y : f32
  func.return %z : f32
}
func.func @d() -> memref<4xf32> {
  %m = memref.alloc() {alignment = 64 : i64} : memref<4xf32>
  %n = memref.alloc() : memref<4xf32>
  memref.dealloc %n : memref<4xf32>
  func.return %m : memref<4xf32>
}
"""


def _lowered_whole(text: str) -> str:
    """`text` lowered by mx-lower-to-llvm as one module, in LLVM IR."""
    from mx.frontend import mx_context, parse_and_verify
    from mx.passes.mx_lower_to_llvm import MxLowerToLLVMPass
    from mx.targets.llvm_ir import module_to_llvm_ir

    module = parse_and_verify(text)
    MxLowerToLLVMPass().apply(mx_context(), module)
    return module_to_llvm_ir(module)


def _translated_functions(
    monkeypatch: pytest.MonkeyPatch,
) -> list[list[str]]:
    """The names of the functions defined in each module that `-t llvm`
    translates, recorded as it goes."""
    from xdsl.dialects import llvm

    from mx.targets.llvm_ir import LLVMIRWriter

    added: list[list[str]] = []
    add = LLVMIRWriter.add

    def recording(writer: LLVMIRWriter, module: ModuleOp) -> None:
        added.append(
            [
                op.sym_name.data
                for op in module.ops
                if isinstance(op, llvm.FuncOp) and op.body.blocks
            ]
        )
        add(writer, module)

    monkeypatch.setattr(LLVMIRWriter, "add", recording)
    return added


def test_llvm_target_lowers_and_translates_each_function_alone(
    capsys: pytest.CaptureFixture[str],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    expected = _lowered_whole(EACH_FUNCTION)
    assert "declare ptr @aligned_alloc(i64, i64)\n\ndeclare void @free" in expected
    added = _translated_functions(monkeypatch)
    path = write(tmp_path, EACH_FUNCTION)
    result = run(capsys, path, "-p", "mx-lower-to-llvm", "-t", "llvm")
    assert result.status == 0, result.err
    assert added == [["a"], ["b"], ["c"], ["d"]]
    assert result.out == expected


def test_llvm_target_lowers_calling_functions_together(
    capsys: pytest.CaptureFixture[str],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    text = EACH_FUNCTION + (
        "func.func @e(%x: f32) -> f32 {\n"
        "  %y = func.call @c(%x, %x) : (f32, f32) -> f32\n"
        "  func.return %y : f32\n}\n"
    )
    added = _translated_functions(monkeypatch)
    result = run(capsys, write(tmp_path, text), "-p", "mx-lower-to-llvm", "-t", "llvm")
    assert result.status == 0, result.err
    assert added == [["a", "b", "c", "d", "e"]]
    assert result.out == _lowered_whole(text)


def test_lowering_error_in_a_later_function_is_located(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    text = EACH_FUNCTION + (
        "func.func @e() {\n"
        "  %m = memref.alloc() : memref<2x!matrix.matrix<2x2xf32>>\n"
        "  func.return\n}\n"
    )
    result = run(capsys, write(tmp_path, text), "-p", "mx-lower-to-llvm", "-t", "llvm")
    assert_user_error(
        result,
        r"input\.mlir:20:3: error: 'memref\.alloc' op 'memref\.alloc' uses a memref "
        r"or vector of matrices",
    )


def test_llvm_target_given_triple_and_layout_does_not_load_llvm(
    tmp_path: Path,
) -> None:
    # Only the host's triple and layout need llvmlite's LLVM (~44 MB of memory).
    path = write(tmp_path, EACH_FUNCTION)
    target = 'llvm{triple="x86_64-unknown-linux-gnu" data_layout="e-m:e-i64:64"}'
    code = (
        "import sys\nfrom mx.tools.mx_opt import main\n"
        f"status = main([{path!r}, '-p', 'mx-lower-to-llvm', '-t', {target!r}])\n"
        "print(status, 'llvmlite' in sys.modules)\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    )
    assert result.stdout.startswith('target datalayout = "e-m:e-i64:64"\n')
    assert result.stdout.splitlines()[-1] == "0 False"


def test_llvm_target_keeps_the_host_triple_and_layout_in_the_cache(
    tmp_path: Path,
) -> None:
    # The first run asks LLVM in a subprocess and writes the cache; later runs
    # read it and never load llvmlite (~44 MB); the JIT asks LLVM itself.
    from mx.targets.llvm_ir import ask_llvm

    path = write(tmp_path, EACH_FUNCTION)
    code = (
        "import sys\nfrom mx.tools.mx_opt import main\n"
        f"status = main([{path!r}, '-p', 'mx-lower-to-llvm', '-t', 'llvm'])\n"
        "print(status, 'llvmlite' in sys.modules)\n"
    )
    env = {**os.environ, "XDG_CACHE_HOME": str(tmp_path / "cache")}
    runs = [
        subprocess.run(
            [sys.executable, "-c", code],
            capture_output=True,
            text=True,
            check=True,
            env=env,
        ).stdout
        for _ in range(2)
    ]
    (cached,) = (tmp_path / "cache" / "mx").glob("host-target-*.json")
    assert json.loads(cached.read_text()) == list(ask_llvm())
    triple, layout = ask_llvm()
    for out in runs:
        assert out.startswith(
            f'target datalayout = "{layout}"\ntarget triple = "{triple}"\n'
        )
        assert out.splitlines()[-1] == "0 False"
    assert runs[0] == runs[1]


def test_llvm_ir_of_function_modules_keeps_symbols_unique() -> None:
    from xdsl.utils.exceptions import DiagnosticException

    from mx.frontend import parse_and_verify
    from mx.targets.llvm_ir import LLVMIRWriter

    def module(name: str) -> ModuleOp:
        return parse_and_verify(
            "llvm.func @malloc(i64) -> !llvm.ptr\n"
            f"llvm.func @{name}() {{\n  llvm.return\n}}\n"
        )

    writer = LLVMIRWriter()
    writer.add(module("f"))
    writer.add(module("g"))  # declares @malloc again: declared once
    text = writer.text("t", "e")
    assert text.count("declare ptr @malloc(i64)") == 1
    assert "define void @f()" in text and "define void @g()" in text
    with pytest.raises(DiagnosticException, match="@f is defined twice"):
        writer.add(module("f"))


@pytest.mark.parametrize(
    ("pipeline", "message"),
    [
        ("canonicalize,", "<pipeline>:1:13: error: expected a pass name after ','"),
        ("canonicalise", "did you mean: canonicalize"),
        ("mx-lower-to-llvm{remarks=2}", "must be true or false (got '2')"),
    ],
)
def test_jit_pipeline_errors_are_located(pipeline: str, message: str) -> None:
    """The JIT reads its pipeline as mx-opt does."""
    from mx.jit import lower_to_llvm_ir

    with pytest.raises(MXError) as err:
        lower_to_llvm_ir(MATRIX_ADD, pipeline)
    assert message in str(err.value)

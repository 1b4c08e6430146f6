"""Fuzzing the `mx-opt` driver.

Mutated inputs run through mx-opt with every pipeline of mx's registry must
end with exit status 0 or 1, no traceback, no `internal error`, within
`mx.testing.fuzz.TIMEOUT` seconds of CPU time, and MLIR they print must read
back. A fixed-seed sample runs here in-process
(`MX_FUZZ_COUNT=<n>` for more) plus a few through the real console script;
`python -m mx.testing.fuzz --count 5000` runs many (docs/long-runs.md).
Every crashing input found is kept in tests/fuzz_regressions/.
"""

import io
import os
import random
import re
from pathlib import Path

import pytest

from mx.testing import fuzz
from mx.testing.fuzz import (
    REPARSE,
    VALID_MARK,
    Result,
    cases,
    corpus,
    mutate,
    pipelines,
    regression_args,
    run_case,
    run_in_process,
    run_subprocess,
)
from mx.testing.fuzz import main as fuzz_main
from mx.testing.progress import Progress

COUNT = int(os.environ.get("MX_FUZZ_COUNT", "160"))
BATCH = 40
REGRESSIONS = sorted((Path(__file__).parents[1] / "fuzz_regressions").glob("*.mlir"))


def _describe(args: list[str], data: bytes, stderr: str) -> str:
    return f"mx-opt {' '.join(args)} on:\n{data[:2000]!r}\n{stderr[-3000:]}"


@pytest.mark.parametrize("batch", range((COUNT + BATCH - 1) // BATCH))
def test_fuzz_in_process(batch: int) -> None:
    all_cases = list(cases(seed=batch, count=BATCH))
    for case in all_cases:
        r = run_case(case.data, case.args)
        assert not case.failed(r), _describe(
            case.args, case.data, f"{r.status}\n{r.stderr}"
        )


@pytest.mark.ci_sample(6)
@pytest.mark.parametrize("args", pipelines(), ids=lambda a: " ".join(a) or "none")
def test_fuzz_subprocess_sample(args: list[str]) -> None:
    """The real entry point (stdin, exit status, signals) on a few mutants per pipeline."""
    rng = random.Random(" ".join(args))
    seeds = corpus()
    for _ in range(2):
        data = mutate(rng.choice(seeds), rng)
        r = run_subprocess(data, args)
        assert not r.is_bug, _describe(args, data, f"{r.status}\n{r.stderr}")


@pytest.mark.parametrize("path", REGRESSIONS, ids=[p.stem for p in REGRESSIONS])
def test_fuzz_regression(path: Path, request: pytest.FixtureRequest) -> None:
    data, args = regression_args(path)
    if (why := re.search(rb"^// fuzz-xfail: (.*)$", data, re.M)) is not None:
        # A known, reported bug: fails until fixed, then XPASS(strict) says so.
        request.applymarker(
            pytest.mark.xfail(reason=why.group(1).decode(), strict=True)
        )
    r = run_in_process(data, args)
    allowed = (0,) if VALID_MARK in data else (0, 1)
    assert r.status in allowed and not r.is_bug, _describe(args, data, r.stderr)


PACKED_SEED = """
func.func @f(%mem: memref<40xi4>, %out: memref<?xi4>, %sc: !matrix.matrix<16x1xi8>, %x: vector<32xf32>) -> vector<16xf32> {
  %q = matrix.column_major_load %mem[2] stride 16 : memref<40xi4> -> !matrix.matrix<16x2xi4>
  matrix.row_major_store %q, %out[1] stride 3 : !matrix.matrix<16x2xi4>, memref<?xi4>
  %w = matrix.column_major_load %out[0] : memref<?xi4> -> !matrix.matrix<16x32xi4>
  %f = arbfp.scaled_convert_from f4e2m1fn %w, %sc block 32 : !matrix.matrix<16x32xi4>, !matrix.matrix<16x1xi8> to !matrix.matrix<16x32xf32>
  %y = matrix.matvec %f, %x : !matrix.matrix<16x32xf32>, vector<32xf32> -> vector<16xf32>
  func.return %y : vector<16xf32>
}
"""


def test_packed_mutations() -> None:
    """`packed` toggled on the loads/stores of an MX program (valid packed
    programs and packed verifier errors), through the whole lowering."""
    from mx.testing.fuzz import MUTATIONS

    toggle = next(m for m in MUTATIONS if m.__name__ == "_toggle_packed")
    rng = random.Random(10)
    outcomes: set[int | str] = set()
    for _ in range(12):
        data = toggle(PACKED_SEED, rng)
        if rng.random() < 0.5:
            data = toggle(data.decode(), rng)
        r = run_in_process(data, ["-p", "mx-lower-to-llvm"])
        assert not r.is_bug, _describe(["-p", "mx-lower-to-llvm"], data, r.stderr)
        outcomes.add(r.status)
    assert outcomes == {0, 1}  # both valid and rejected programs were produced


def test_detector_sees_internal_errors() -> None:
    """The oracle itself: exit status 2, a traceback or a timeout are bugs."""

    assert Result(2, "mx-opt: internal error: KeyError: 'x'", 0.1).is_bug
    assert Result(1, "Traceback (most recent call last):", 0.1).is_bug
    assert Result("timeout", "", 10.0).is_bug
    assert Result(-11, "", 0.1).is_bug
    assert not Result(1, "f.mlir:1:1: error: bad", 0.1).is_bug


def test_printed_mlir_that_does_not_read_back_is_a_bug(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The re-parse oracle: mx-opt's printed output is read back; text that
    does not parse is a bug (`no-reparse`); LLVM IR output is not read."""
    fine = b"func.func @f() -> index {\n  %c = arith.constant 5 : index\n  func.return %c : index\n}\n"
    assert run_case(fine, ["-p", "canonicalize"]).status == 0
    assert run_case(fine, ["-p", "mx-lower-to-llvm", "-t", "llvm"]).status == 0
    # mx-opt printing what a folded 2^63 index constant once printed as.
    printed = "func.func @f() {\n  %c = arith.constant 9223372036854775808 : index\n}\n"

    def printing_bad_output(data: bytes, args: list[str]) -> Result:
        if args:
            return Result(0, "", 0.1, printed)
        return run_in_process(data, args)

    monkeypatch.setattr(fuzz, "run_in_process", printing_bad_output)
    broken = run_case(fine, ["-p", "canonicalize"])
    assert broken.status == REPARSE and broken.is_bug
    assert broken.signature().startswith(
        "no-reparse:integer value 9223372036854775808 is out of range"
    )
    assert run_case(fine, ["-p", "canonicalize", "-t", "llvm"]).status == 0


def test_progress_lines_are_throttled_and_end_with_the_total() -> None:
    """The long-running tools print a first line at once, then at most one
    per interval, and always the last (mx.testing.progress)."""
    now = [0.0]
    stream = io.StringIO()
    progress = Progress("fuzz", 4, "inputs", 10.0, stream, lambda: now[0])
    for done, at in enumerate((0.0, 3.0, 11.0, 12.0, 14.0)):
        now[0] = at
        progress.update(done, done // 2)
    assert stream.getvalue().splitlines() == [
        "fuzz: 0/4 inputs, 0 failures, 0 s",
        "fuzz: 2/4 inputs, 1 failures, 11 s, ~11 s left",
        "fuzz: 4/4 inputs, 2 failures, 14 s, ~0 s left",
    ]


def test_the_fuzzer_reports_progress_on_stderr(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert fuzz_main(["--count", "3"]) == 0
    err = capsys.readouterr().err.splitlines()
    assert err[0] == "fuzz: 0/3 inputs, 0 failures, 0 s"
    assert err[-1].startswith("fuzz: 3/3 inputs, 0 failures, ")

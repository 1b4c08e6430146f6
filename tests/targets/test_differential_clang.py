"""Differential testing of mx against clang-16.

Random matrix programs are compiled twice (C with Clang's matrix extension, and
`matrix` dialect through `mx-opt -p mx-lower-to-llvm -t llvm`), linked into one
driver and run on the same inputs; see `mx.testing.differential`. This runs a
fixed-seed sample; `MX_DIFF_COUNT=<n>` runs more, and
`python -m mx.testing.differential --count 1000` runs thousands (docs/long-runs.md).
A second sample starts every program from `_Float16`/f16 matrices
(`MX_DIFF_F16_COUNT=<n>`; `--main-element f16` on the command line).
clang-16 missing is a failure, never a skip.
"""

import os
from pathlib import Path

import numpy as np
import pytest

from mx.testing.differential import (
    compare,
    load_regression,
    program_for_seed,
    run_program,
)
from mx.testing.differential import main as differential_main
from mx.testing.matrix_programs import random_inputs

COUNT = int(os.environ.get("MX_DIFF_COUNT", "24"))
F16_COUNT = int(os.environ.get("MX_DIFF_F16_COUNT", "16"))
REGRESSIONS = sorted(
    (Path(__file__).parents[1] / "differential_regressions").glob("*.json")
)


@pytest.mark.parametrize("seed", range(COUNT))
def test_random_program(seed: int) -> None:
    p = program_for_seed(seed)
    outcome = run_program(p, seed)
    assert outcome.verdict == "ok", f"{outcome.detail}\n{p.mlir_source('mx_kernel')}"


@pytest.mark.parametrize("seed", range(F16_COUNT))
def test_random_f16_program(seed: int) -> None:
    """Programs over f16 matrices (clang: `_Float16` with
    `-ffloat16-excess-precision=none`), every other one under contraction:
    strict ones bit for bit, contracted ones within the error bound. clang-16
    miscompiles some sums of non-square f16 transposes (see
    `differential_regressions/`): `clang-wrong` passes, since it still means mx
    equals the reference bit for bit."""
    p = program_for_seed(seed, contract_every=2, main_elem="f16")
    assert {"f16"} <= {s.type.elem for s in p.stmts}
    outcome = run_program(p, seed)
    assert outcome.verdict in ("ok", "clang-wrong"), (
        f"{outcome.detail}\n{p.mlir_source('mx_kernel')}"
    )


@pytest.mark.parametrize("path", REGRESSIONS, ids=[p.stem for p in REGRESSIONS])
def test_regression(path: Path) -> None:
    """Minimized failures; `clang-wrong` ones pin a clang-16 bug (mx must
    still agree with the reference)."""
    p, seed, expect = load_regression(path)
    outcome = run_program(p, seed)
    assert outcome.verdict == expect, outcome.detail


@pytest.mark.parametrize("seed", range(1000, 1004))
def test_harness_against_clang_alone(seed: int) -> None:
    """clang -O0 in place of mx: the generator, driver and NumPy reference agree
    with clang (no mx involved), so a later mismatch is about mx or clang."""
    outcome = run_program(program_for_seed(seed), seed, self_check=True)
    assert outcome.verdict == "ok", outcome.detail


def test_known_clang_miscompile_is_detected() -> None:
    """clang-16 -O2 miscompiles transpose(0.5 + M) for non-square M
    (llvm-project#81507); clang -O0 and the reference agree."""
    p, seed, _ = load_regression(
        Path(__file__).parents[1]
        / "differential_regressions"
        / "clang81507_transpose_of_scalar_add.json"
    )
    assert run_program(p, seed, self_check=True).verdict == "clang-wrong"


@pytest.mark.parametrize("contract", [False, True])
def test_compare_can_fail(contract: bool) -> None:
    """A one-ulp change of one output is caught (exact), a large one under contraction."""
    seed = next(
        s for s in range(100) if program_for_seed(s).stores and _float_output(s)
    )
    p = program_for_seed(seed)
    p.contract = contract
    ins, scal = random_inputs(p, np.random.default_rng(0))
    ref = p.evaluate(ins, scal)
    mags = p.evaluate(ins, scal, magnitude=True) if contract else None
    assert compare(p, ref, ref, ref, mags)[0] == "ok"
    wrong = [r.copy() for r in ref]
    i = next(i for i, r in enumerate(wrong) if r.dtype.kind == "f")
    k = p.stores[i].offset
    if contract:
        assert mags is not None
        wrong[i][k] += mags[i][k] + 1  # far beyond 2*gamma_n*m
    else:
        wrong[i][k] = np.nextafter(wrong[i][k], np.inf)
    assert compare(p, ref, wrong, ref, mags)[0] == "mx-wrong"


def _float_output(seed: int) -> bool:
    p = program_for_seed(seed)
    return any(p.stmts[s.value].type.elem != "i32" for s in p.stores)


def test_the_runner_reports_progress_on_stderr(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert differential_main(["--count", "2", "--jobs", "1", "--sets", "1"]) == 0
    captured = capsys.readouterr()
    err = captured.err.splitlines()
    assert err[0] == "differential: 0/2 programs, 0 failures, 0 s"
    assert err[-1].startswith("differential: 2/2 programs, 0 failures, ")
    assert "programs: 2" in captured.out  # the report stays on stdout

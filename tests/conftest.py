"""What every Python test shares: the Hypothesis profiles and a fresh random
generator per test.

Property tests draw the same examples on every run (profile `ci`, the
default: a seed derived from each test). `MX_HYPOTHESIS_PROFILE=long` draws
new examples on every run and keeps failing ones in Hypothesis' example
database (docs/long-runs.md)."""

import os
from pathlib import Path

import numpy as np
import pytest
from hypothesis import settings

settings.register_profile("ci", derandomize=True, database=None, print_blob=True)
settings.register_profile("long", derandomize=False, print_blob=True)
settings.load_profile(os.environ.get("MX_HYPOTHESIS_PROFILE", "ci"))


@pytest.fixture
def rng() -> np.random.Generator:
    """A generator seeded for this test alone: what a test draws does not
    depend on which tests ran before it in the same worker."""
    return np.random.default_rng(20240601)


SLOW_FIRST = (
    "tests/test_bench_kernels.py",  # its first test builds every kernel (~50 s)
    "tests/passes/test_outline_contractions.py",
    "tests/jit/test_jit_runtime.py",
    "tests/passes/test_fold_differential.py",
    "tests/test_examples.py",
    "tests/passes/test_pass_equivalence.py",
    "tests/interpreters/test_interpreter_lowered.py",
    "tests/targets/test_direct_llvm_ir.py",
    "tests/targets/test_cpu_targets.py",
    "tests/lowering/test_decoded_matvec.py",
    "tests/test_lit.py",
)
"""Files holding the longest tests (10-50 s each in a `--durations` run)."""


def pytest_collection_modifyitems(
    config: pytest.Config, items: list[pytest.Item]
) -> None:
    """Runs the files of `SLOW_FIRST` first, in that order, then the rest in
    collection order. pyproject's `--dist worksteal` gives each xdist worker
    half of this list; an idle worker takes the back half of the other's
    queue. With the long tests at the front, what is taken last is short,
    so neither worker is left idle while the other runs a long test."""
    rank = {name: i for i, name in enumerate(SLOW_FIRST)}
    root = Path(config.rootpath)
    items.sort(
        key=lambda item: rank.get(
            item.path.relative_to(root).as_posix(), len(SLOW_FIRST)
        )
    )

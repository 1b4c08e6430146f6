"""What every Python test shares: the Hypothesis profiles and a fresh random
generator per test, the CPU the JIT lowers for, a JIT without its cache.

Property tests draw the same examples on every run (profile `ci`, the
default: a seed derived from each test). `MX_HYPOTHESIS_PROFILE=long` draws
new examples on every run and keeps failing ones in Hypothesis' example
database (docs/long-runs.md)."""

import os
from collections import defaultdict
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest
from hypothesis import settings

from mx.lowering.matrix_to_affine.target_cpu import TargetCpu
from tests.fixtures import JitHost
from tests.sampling import LONG, ci_sample

settings.register_profile("ci", derandomize=True, database=None, print_blob=True)
settings.register_profile("long", derandomize=False, print_blob=True)
settings.load_profile(os.environ.get("MX_HYPOTHESIS_PROFILE", "ci"))


@pytest.fixture
def rng() -> np.random.Generator:
    """A generator seeded for this test alone: what a test draws does not
    depend on which tests ran before it in the same worker."""
    return np.random.default_rng(20240601)


@pytest.fixture
def jit_host(monkeypatch: pytest.MonkeyPatch) -> JitHost:
    """Sets, for the rest of the test, the CPU the JIT lowers for (permutes,
    byte shuffles, vector width, registers, weight streams, broadcasts), as
    on a host that has it (machine code stays the host's). The JIT's cache
    is keyed by text and pipeline, not by these: compile texts no other test
    compiles, or anew."""
    import mx.jit_compile

    def lower_as_on(cpu: TargetCpu) -> None:
        monkeypatch.setattr(mx.jit_compile, "host_cpu", lambda: cpu)

    return lower_as_on


@pytest.fixture
def no_cache() -> Iterator[None]:
    """The JIT's cache disabled for the test: only the test's references keep
    code alive, and every compile compiles, so `recording()` sees its kernel
    remarks (a module found in the cache reports none; two seeds of a random
    generator may draw the same program)."""
    from mx.jit import set_cache_limit

    previous = set_cache_limit(0)
    try:
        yield
    finally:
        set_cache_limit(previous)


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


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers",
        "ci_sample(n): without MX_LONG_TESTS=1, run n of the test's cases "
        "(tests/sampling.py)",
    )


def _sampled_out(items: list[pytest.Item]) -> list[pytest.Item]:
    """The cases of tests marked `ci_sample(n)` left out of the CI sample."""
    families: dict[tuple[str, str], list[pytest.Function]] = defaultdict(list)
    for item in items:
        if isinstance(item, pytest.Function) and item.get_closest_marker("ci_sample"):
            families[(item.path.as_posix(), item.originalname)].append(item)
    out: list[pytest.Item] = []
    for family in families.values():
        marker = family[0].get_closest_marker("ci_sample")
        assert marker is not None
        kept = ci_sample(
            [(item.callspec.id, item.callspec.params) for item in family],
            marker.args[0],
        )
        out += [item for item in family if item.callspec.id not in kept]
    return out


def pytest_collection_modifyitems(
    config: pytest.Config, items: list[pytest.Item]
) -> None:
    """Leaves out what the CI samples leave out (`ci_sample`; every case
    with MX_LONG_TESTS=1), then runs the files of `SLOW_FIRST` first, in
    that order, then the rest in collection order. pyproject's `--dist
    worksteal` gives each xdist worker half of this list; an idle worker
    takes the back half of the other's queue. With the long tests at the
    front, what is taken last is short, so neither worker is left idle
    while the other runs a long test."""
    if not LONG and (out := _sampled_out(items)):
        config.hook.pytest_deselected(items=out)
        left_out = {id(item) for item in out}
        items[:] = [item for item in items if id(item) not in left_out]
    rank = {name: i for i, name in enumerate(SLOW_FIRST)}
    root = Path(config.rootpath)
    items.sort(
        key=lambda item: rank.get(
            item.path.relative_to(root).as_posix(), len(SLOW_FIRST)
        )
    )

"""What every Python test shares: the Hypothesis profiles and a fresh random
generator per test.

Property tests draw the same examples on every run (profile `ci`, the
default: a seed derived from each test). `MX_HYPOTHESIS_PROFILE=long` draws
new examples on every run and keeps failing ones in Hypothesis' example
database (docs/long-runs.md)."""

import os

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

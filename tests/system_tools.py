"""System tools (clang-16, llvm-as-16, mlir-opt-16, ...) that some tests run."""

from __future__ import annotations

import os
import shutil

import pytest


def required_tool(name: str) -> str:
    """The path of `name`; a missing tool skips the test, or fails it in CI
    (`.ci/run` installs every tool the tests use)."""
    path = shutil.which(name)
    if path is None:
        if os.environ.get("CI"):
            pytest.fail(f"{name} is required in CI")
        pytest.skip(f"{name} not installed")
    return path

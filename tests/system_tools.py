"""System tools (clang-16, llvm-as-16, mlir-opt-16, ...) that some tests run."""

from __future__ import annotations

import os
import re
import shutil
import subprocess

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


def llc_assembly(llvm_ir: str, cpu: str) -> str:
    """The x86 assembly `llc-16 -O3` makes of `llvm_ir` for `cpu`."""
    llc = required_tool("llc-16")
    return subprocess.run(
        [llc, "-O3", f"-mcpu={cpu}", "-o", "-"],
        input=llvm_ir,
        capture_output=True,
        text=True,
        check=True,
    ).stdout


def blocks_with(assembly: str, instruction: str, least: int) -> list[str]:
    """The basic blocks of `assembly` holding at least `least` instructions
    matching the regular expression `instruction` (a kernel's loop)."""
    blocks = re.split(r"\n\.?LBB\S*:", assembly)
    return [b for b in blocks if len(re.findall(instruction, b)) >= least]


def vector_spills(block: str) -> list[str]:
    """The lines of `block` that move a vector register to or from the stack."""
    return [x for x in block.splitlines() if "(%rsp)" in x and "mm" in x]

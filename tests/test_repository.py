"""The repository is self-contained: no tracked file refers to files outside
it — the design notes it was written from, machine paths, or issue threads.
A user with a fresh clone finds everything in `docs/`."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

OUTSIDE = re.compile(
    r"\.\./shared"  # the directory above the repository
    r"|shared/(spec|seeds)"
    r"|(?<![\w/-])(matrix|arbfp|toolchain)\.md\b"  # design notes, not docs/*.md
    r"|\bseed 0\d\d\b"  # numbered design notes
    r"|\bissue \"|\bissue #?\d+"  # issue threads
    r"|/work/|/home/\w+"  # paths of one machine
)


def tracked_files() -> list[Path]:
    try:
        listed = subprocess.run(
            ["git", "ls-files", "-z"],
            cwd=ROOT,
            capture_output=True,
            check=True,
        ).stdout
    except (OSError, subprocess.CalledProcessError):
        pytest.skip("not a git checkout")
    return [ROOT / name for name in listed.decode().split("\0") if name]


def references_outside(text: str) -> list[str]:
    return [m.group(0) for m in OUTSIDE.finditer(text)]


def test_no_file_refers_outside_the_repository() -> None:
    offenders: list[str] = []
    for path in tracked_files():
        if path.name == "test_repository.py" or not path.is_file():
            continue
        try:
            text = path.read_text(encoding="utf-8")
        except UnicodeDecodeError:
            continue  # binary
        for number, line in enumerate(text.splitlines(), 1):
            if found := references_outside(line):
                offenders.append(f"{path.relative_to(ROOT)}:{number}: {found}")
    assert not offenders, "references outside the repository:\n" + "\n".join(offenders)


@pytest.mark.parametrize(
    "text",
    [
        # (assembled, so that this file itself names no outside path)
        "Full contract: `../" + "shared" + "/spec/matrix.md`.",
        "rounded as matrix.md requires",
        "the formats of arbfp.md",
        "follow Clang (seed 000)",
        'Fuzzing (issue "Robustness", part 2).',
        "see issue 14",
        "Profile at /work/main/bench/compile_time.py",
    ],
)
def test_the_check_finds_outside_references(text: str) -> None:
    assert references_outside(text)


@pytest.mark.parametrize(
    "text",
    [
        "see docs/matrix-dialect.md and [the arbfp dialect](arbfp-dialect.md)",
        "a fixed seed 7 for the sample",
        "llvm-project#81507 miscompiles transpose(A + B)",
    ],
)
def test_the_check_accepts_docs_references(text: str) -> None:
    assert not references_outside(text)


def test_the_documents_a_user_needs_are_in_the_repository() -> None:
    docs = ROOT / "docs"
    for name in (
        "index.md",
        "matrix-dialect.md",
        "arbfp-dialect.md",
        "passes.md",
        "c-abi.md",
        "architecture.md",
        "tools.md",
        "long-runs.md",
    ):
        assert (docs / name).is_file(), name
    assert (ROOT / "LICENSE").is_file()

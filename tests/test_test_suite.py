"""The rules every Python test follows (tests/conftest.py): property tests
are derandomized unless a long run asks otherwise, and no module shares a
random generator between its tests (what a test draws would then depend on
which tests ran before it in the same worker)."""

import ast
import os
from pathlib import Path

import pytest
from hypothesis import settings

from tests.sampling import ci_sample

ROOT = Path(__file__).resolve().parents[1]
SOURCES = sorted(
    [*(ROOT / "tests").rglob("*.py"), *(ROOT / "mx" / "testing").rglob("*.py")]
)
GENERATORS = {"default_rng", "Random", "RandomState", "Generator", "seed"}


def _called_name(node: ast.expr) -> str | None:
    if isinstance(node, ast.Call):
        func = node.func
        if isinstance(func, ast.Attribute):
            return func.attr
        if isinstance(func, ast.Name):
            return func.id
    return None


def _module_level_generators(tree: ast.Module) -> list[int]:
    """Lines of module-level statements that make or seed a generator."""
    lines: list[int] = []
    for statement in tree.body:
        value = (
            statement.value
            if isinstance(statement, ast.Assign | ast.AnnAssign | ast.Expr)
            else None
        )
        if value is not None and _called_name(value) in GENERATORS:
            lines.append(statement.lineno)
    return lines


def _explicit_derandomize(tree: ast.Module) -> list[int]:
    """Lines of `settings(..., derandomize=...)`: the profile decides that."""
    return [
        node.lineno
        for node in ast.walk(tree)
        if _called_name(node) == "settings"  # pyright: ignore[reportArgumentType]
        and isinstance(node, ast.Call)
        and any(k.arg == "derandomize" for k in node.keywords)
    ]


@pytest.mark.skipif(
    os.environ.get("MX_HYPOTHESIS_PROFILE", "ci") != "ci", reason="a long-run profile"
)
def test_property_tests_are_derandomized_by_default() -> None:
    current = settings.get_profile(settings.get_current_profile_name())
    assert current.derandomize
    assert current.database is None


def test_no_module_level_random_generator() -> None:
    found = [
        f"{path.relative_to(ROOT)}:{line}"
        for path in SOURCES
        for line in _module_level_generators(ast.parse(path.read_text()))
    ]
    assert not found, f"module-level random generators: {found}"


def test_property_tests_leave_randomization_to_the_profile() -> None:
    found = [
        f"{path.relative_to(ROOT)}:{line}"
        for path in (ROOT / "tests").rglob("test_*.py")
        for line in _explicit_derandomize(ast.parse(path.read_text()))
    ]
    assert not found, f"derandomize set by a test, not by the profile: {found}"


def test_slow_first_names_existing_files() -> None:
    """tests/conftest.py's scheduling list follows moves and renames."""
    from tests.conftest import SLOW_FIRST

    missing = [name for name in SLOW_FIRST if not (ROOT / name).is_file()]
    assert not missing, f"SLOW_FIRST names files that do not exist: {missing}"


def test_ci_sample_keeps_every_shared_value_and_is_fixed() -> None:
    cases: list[tuple[str, dict[str, object]]] = [
        (f"{f}-{layout}-{k}", {"case": (f, layout), "k": k})
        for f in ("f4e2m1fn", "f8e4m3fn", "f8e5m2")
        for layout in ("row_major", "column_major")
        for k in (32, 96, 160, 232)
    ]
    kept = ci_sample(cases, 5)
    assert kept == ci_sample(list(reversed(cases)), 5)
    assert 5 <= len(kept) < len(cases)
    taken = [key.split("-") for key, _ in cases if key in kept]
    assert {f for f, _, _ in taken} == {"f4e2m1fn", "f8e4m3fn", "f8e5m2"}
    assert {layout for _, layout, _ in taken} == {"row_major", "column_major"}
    assert {k for _, _, k in taken} == {"32", "96", "160", "232"}
    assert len(ci_sample(cases, len(cases))) == len(cases)


def test_ci_sample_of_distinct_values_takes_n() -> None:
    """A value no other case has names a case, not a kind of case."""
    cases = [(str(i), {"encoding": i}) for i in range(256)]
    assert len(ci_sample(cases, 16)) == 16

"""What CI installs is enough: every package the checked code (`mx`, `tests`,
`bench`, as pyright sees them) imports is the standard library, the repository
itself, or a dependency of `mx` with its `test` extra (directly or through their own
requirements). An import of a package of another extra (`bench`: threadpoolctl,
matplotlib, ...) or of none (ggml) tells pyright the package may be missing: a
developer whose venv has it must not make CI's pyright, which runs without it, fail.
(Such imports belong inside the functions that use them, behind typed helpers:
pyright still checks how the unknown names are used.)"""

from __future__ import annotations

import ast
import re
import sys
import tomllib
from importlib import metadata
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CHECKED = ("mx", "tests", "bench")
LOCAL = {"mx", "bench", "tests", "examples"}
MAY_BE_MISSING = "reportMissingImports"


def _name(requirement: str) -> str:
    return re.split(r"[\s<>=!~;\[(]", requirement.strip(), maxsplit=1)[0]


def _normalized(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def installed_by_ci() -> set[str]:
    """Normalized names of the distributions `pip install -e '.[test]'` brings."""
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    pending = [_name(r) for r in project["dependencies"]]
    pending += [_name(r) for r in project["optional-dependencies"]["test"]]
    found: set[str] = set()
    while pending:
        name = _normalized(pending.pop())
        if name in found:
            continue
        found.add(name)
        try:
            requires = metadata.requires(name) or []
        except metadata.PackageNotFoundError:
            continue  # not installed here: its own requirements are unknown
        pending += [_name(r) for r in requires if "extra ==" not in r]
    return found


def _imports(tree: ast.Module) -> list[tuple[ast.stmt, str]]:
    """(statement, top-level module) for every absolute import."""
    found: list[tuple[ast.stmt, str]] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found += [(node, a.name.split(".")[0]) for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            found.append((node, node.module.split(".")[0]))
    return found


def unprovided_imports(root: Path, provided: set[str]) -> list[str]:
    """`path:line: module` for each import, without pyright's missing-import
    waiver, of a module CI may not have."""
    providers = metadata.packages_distributions()
    offenders: list[str] = []
    for directory in CHECKED:
        for path in sorted((root / directory).rglob("*.py")):
            text = path.read_text(encoding="utf-8")
            lines = text.splitlines()
            for statement, module in _imports(ast.parse(text)):
                if module in sys.stdlib_module_names or module in LOCAL:
                    continue
                if {_normalized(d) for d in providers.get(module, [])} & provided:
                    continue
                spanned = lines[statement.lineno - 1 : statement.end_lineno]
                if not any(MAY_BE_MISSING in s for s in spanned):
                    where = path.relative_to(root)
                    offenders.append(f"{where}:{statement.lineno}: {module}")
    return offenders


def test_ci_installs_everything_imported_without_a_waiver() -> None:
    offenders = unprovided_imports(ROOT, installed_by_ci())
    assert not offenders, (
        "imports of packages outside the dependencies and the test extra (import them "
        f"inside the function using them, with `# pyright: ignore[{MAY_BE_MISSING}]`):\n"
        + "\n".join(offenders)
    )


def test_a_bench_extra_import_without_a_waiver_is_found(tmp_path: Path) -> None:
    (tmp_path / "bench").mkdir()
    (tmp_path / "bench" / "peer.py").write_text(
        "import numpy\n"
        "from threadpoolctl import threadpool_limits\n"
        "def lazy():\n"
        f"    import matplotlib  # pyright: ignore[{MAY_BE_MISSING}]\n"
        "    import pyinstrument\n"
    )
    for directory in CHECKED[:2]:
        (tmp_path / directory).mkdir()
    assert unprovided_imports(tmp_path, installed_by_ci()) == [
        "bench/peer.py:2: threadpoolctl",
        "bench/peer.py:5: pyinstrument",
    ]

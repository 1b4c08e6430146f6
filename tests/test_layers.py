"""mx's modules in layers (docs/architecture.md#layers): a module imports
only from its own layer or the layers below, and no modules import each
other in a loop, not even through an import inside a function (which only
hides the loop). The one upward import allowed is xDSL's idiom of a dialect
finding its folders and canonicalization patterns lazily, inside `fold` or
`get_canonicalization_patterns`. Imports under `if TYPE_CHECKING:` are
annotations only and not checked."""

import ast
import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

LAYERS: tuple[tuple[str, ...], ...] = (
    # compat/bottom: no mx imports above it (errors, diagnostics, the exact
    # semantics of the number formats, the threads runtime, xDSL workarounds)
    (
        "mx.errors",
        "mx.diagnostics",
        "mx.semantics",
        "mx.runtime",
        "mx.xdsl_compat",
        "mx.compile_memos",
    ),
    # dialects: the IR
    ("mx.dialects",),
    # reading and running the IR: the parser, the reference interpreter
    ("mx.frontend", "mx.suggestions", "mx.verifier", "mx.interpreters"),
    # transformations: passes, lowerings, targets (LLVM IR writers)
    ("mx.passes", "mx.lowering", "mx.targets"),
    # the registry of dialects and passes (what mx-opt and xdsl-opt see)
    ("mx.universe",),
    # compiling: pipelines, the compile driver, the JIT
    (
        "mx.tools.pipeline",
        "mx.compiler",
        "mx.jit_runtime",
        "mx.jit_machine_code",
        "mx.jit_object_layout",
        "mx.jit_signature",
        "mx.jit_compile",
        "mx.jit_wrappers",
        "mx.jit_modules",
    ),
    # the Python API: the JIT's, the precision report, the tracing front end
    ("mx.jit", "mx.tracing", "mx.precision"),
    # tools, the package's API, test generators, benchmarks
    ("mx.tools", "mx.testing", "mx", "mx.__main__", "bench"),
)

@dataclass(frozen=True)
class Import:
    importer: str
    imported: str
    line: int
    function: str | None
    """The function the import is in (None: module level)."""


def _modules() -> dict[str, Path]:
    found: dict[str, Path] = {}
    for package in ("mx", "bench"):
        for path in sorted((ROOT / package).rglob("*.py")):
            parts = list(path.relative_to(ROOT).with_suffix("").parts)
            if parts[-1] == "__init__":
                parts.pop()
            found[".".join(parts)] = path
    return found


def _layer(module: str) -> int:
    best, layer = -1, -1
    for index, prefixes in enumerate(LAYERS):
        for prefix in prefixes:
            matches = module == prefix or module.startswith(prefix + ".")
            if matches and len(prefix) > best:
                best, layer = len(prefix), index
    assert layer >= 0, f"{module} is in no layer: add it to LAYERS"
    return layer


def _type_checking(node: ast.If) -> bool:
    test = node.test
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def _imports_in(
    body: list[ast.stmt], function: str | None
) -> Iterator[tuple[ast.Import | ast.ImportFrom, str | None]]:
    for node in body:
        if isinstance(node, ast.Import | ast.ImportFrom):
            yield node, function
        elif isinstance(node, ast.If) and _type_checking(node):
            yield from _imports_in(node.orelse, function)
        elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            yield from _imports_in(node.body, node.name)
        else:
            for field in ("body", "orelse", "finalbody", "handlers"):
                inner = getattr(node, field, None)
                if isinstance(inner, list) and inner and isinstance(inner[0], ast.AST):
                    yield from _imports_in(
                        [s for s in inner if isinstance(s, ast.stmt)]
                        + [s for h in inner if isinstance(h, ast.ExceptHandler) for s in h.body],
                        function,
                    )


def _imports(modules: dict[str, Path]) -> list[Import]:
    found: list[Import] = []
    for module, path in modules.items():
        package = module if path.name == "__init__.py" else module.rpartition(".")[0]
        tree = ast.parse(path.read_text())
        for node, function in _imports_in(tree.body, None):
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            else:
                base = node.module or ""
                if node.level:
                    up = package.split(".")[: len(package.split(".")) - node.level + 1]
                    base = ".".join([*up, base] if base else up)
                # `from package import submodule` imports the submodule
                names = [
                    f"{base}.{a.name}" if f"{base}.{a.name}" in modules else base
                    for a in node.names
                ]
            for name in names:
                while name and name not in modules:
                    name = name.rpartition(".")[0]
                if name and name != module:
                    found.append(Import(module, name, node.lineno, function))
    return found


def _lazy_pattern_lookup(i: Import) -> bool:
    return (
        i.function in ("fold", "get_canonicalization_patterns")
        and i.importer.startswith("mx.dialects.")
        and i.imported.startswith("mx.passes.canonicalization.")
    )


def _cycles(edges: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(edges.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component: list[str] = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for v in sorted(edges):
        if v not in index:
            visit(v)
    return found


MODULES = _modules()
IMPORTS = [i for i in _imports(MODULES) if not _lazy_pattern_lookup(i)]


def test_every_module_is_in_a_layer() -> None:
    for module in MODULES:
        _layer(module)


def test_imports_only_go_down() -> None:
    upward = {
        (i.importer, i.imported): f"{MODULES[i.importer].relative_to(ROOT)}:{i.line}"
        for i in IMPORTS
        if _layer(i.imported) > _layer(i.importer)
    }
    assert not upward, "upward imports:\n" + "\n".join(
        f"{at}: {a} imports {b}" for (a, b), at in sorted(upward.items())
    )


def test_no_import_cycles() -> None:
    edges: dict[str, set[str]] = {}
    for i in IMPORTS:
        edges.setdefault(i.importer, set()).add(i.imported)
    cycles = _cycles(edges)
    assert not cycles, "modules importing each other in a loop:\n" + "\n".join(
        " <-> ".join(c) for c in sorted(cycles)
    )


def test_the_check_sees_imports_inside_functions() -> None:
    """The check itself: it finds mx.jit_modules's function-local import of
    the compile step and a dialect's lazy pattern lookup."""
    everything = _imports(MODULES)
    assert any(
        i.importer == "mx.jit_modules" and i.imported == "mx.jit_compile" and i.function
        for i in everything
    )
    assert any(_lazy_pattern_lookup(i) for i in everything)
    assert _cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]


ARCHITECTURE = ROOT / "docs" / "architecture.md"


def _sections(text: str) -> dict[str, str]:
    """docs/architecture.md's `### ` sections by heading."""
    sections: dict[str, str] = {}
    heading = ""
    for line in text.splitlines():
        if line.startswith("#"):
            heading = line
        sections[heading] = sections.get(heading, "") + line + "\n"
    return sections


def _named(path: Path, text: str, sections: dict[str, str]) -> bool:
    """`mx/a/b.py` is named as `a/b.py` anywhere, or as `b.py` in the
    section headed by its package `mx/a/`; a package as `mx/a/`."""
    relative = path.relative_to(ROOT / "mx")
    if path.name == "__init__.py":
        return f"mx/{relative.parent.as_posix()}/" in text or relative.parent == Path(".")
    if re.search(rf"(?<!\w){re.escape(relative.as_posix())}", text):
        return True  # not as the tail of another name (`test_jit.py`)
    package = f"mx/{relative.parent.as_posix()}/" if relative.parent != Path(".") else None
    return any(
        f"`{path.name}`" in body
        for heading, body in sections.items()
        if package is not None and f"`{package}`" in heading
    )


def test_architecture_names_every_module() -> None:
    text = ARCHITECTURE.read_text()
    sections = _sections(text)
    missing = [
        str(path.relative_to(ROOT))
        for module, path in MODULES.items()
        if module.startswith("mx") and not _named(path, text, sections)
    ]
    assert not missing, f"modules docs/architecture.md does not name: {missing}"

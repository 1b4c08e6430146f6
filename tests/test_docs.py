"""The docs agree with the code: docs/passes.md's summary table lists every
pass of mx (and the xDSL passes it mentions) with exactly its options, each
pass's option table each option with its default and choices, and the steps
of `mx-lower-to-llvm` are the ones it runs; the Python code of
docs/python-api.md's "Building IR from Python" runs as written; every page
is linked from docs/index.md and every link to a section reaches one."""

import dataclasses
import re
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from xdsl.universe import Universe

from mx.passes.mx_lower_to_llvm import PIPELINE
from mx.passes.options import option_choices
from mx.tools.pipeline import option_name, options
from mx.universe import ALL_PASSES

DOCS = Path(__file__).parent.parent / "docs"
PASSES = (DOCS / "passes.md").read_text()
XDSL_PASSES = {"canonicalize", "cse"}


def _cells(line: str) -> list[str]:
    return [cell.strip() for cell in line.strip().strip("|").split("|")]


def _table(text: str, header: str) -> list[list[str]]:
    """The rows of the first table of `text` whose header line is `header`."""
    lines = text.splitlines()
    start = lines.index(header)
    rows: list[list[str]] = []
    for line in lines[start + 2 :]:
        if not line.startswith("|"):
            break
        rows.append(_cells(line))
    return rows


def _section(name: str) -> str:
    match = re.search(
        rf"^## `{re.escape(name)}`\n(.*?)(?=^## |\Z)", PASSES, re.S | re.M
    )
    assert match is not None, f"docs/passes.md has no section for {name}"
    return match.group(1)


def _ticked(cell: str) -> list[str]:
    return re.findall(r"`([^`]*)`", cell)


def _spelled(value: object) -> str:
    return str(value).lower() if isinstance(value, bool) else str(value)


def test_summary_table_lists_every_pass_with_its_options() -> None:
    rows = _table(PASSES, "| pass | options | changes |")
    listed = {_ticked(row[0])[0]: row[1] for row in rows}
    assert set(listed) == set(ALL_PASSES) | XDSL_PASSES
    for name, cell in listed.items():
        if name in XDSL_PASSES:
            assert cell == "(xDSL's)", name
            continue
        expected = [option_name(f.name) for f in options(ALL_PASSES[name]())]
        assert (_ticked(cell) if cell != "none" else []) == expected, name


def _documented_options(name: str) -> dict[str, tuple[list[str], str]]:
    """option -> (values written in backticks, default) of a pass's table."""
    documented: dict[str, tuple[list[str], str]] = {}
    option = ""
    for row in _table(_section(name), "| option | values | default | effect |"):
        if row[0]:  # else a further value of the option above (✓ marks the default)
            option = _ticked(row[0])[0]
            documented[option] = ([], "")
        values, default = documented[option]
        values += _ticked(row[1]) if not row[1].startswith("as ") else ["(as)"]
        if row[2] == "✓":
            default = _ticked(row[1])[0]
        elif row[2]:
            default = _ticked(row[2])[0]
        documented[option] = (values, default)
    return documented


@pytest.mark.parametrize("name", [n for n in ALL_PASSES if options(ALL_PASSES[n]())])
def test_option_tables_give_each_option_its_default_and_choices(name: str) -> None:
    cls = ALL_PASSES[name]()
    documented = _documented_options(name)
    fields = options(cls)
    assert list(documented) == [option_name(f.name) for f in fields]
    for field in fields:
        values, default = documented[option_name(field.name)]
        assert default == _spelled(field.default), field.name
        allowed = option_choices(cls).get(field.name)
        hints: Any = {f.name: f.type for f in dataclasses.fields(cls)}
        if values == ["(as)"]:  # "as convert-matrix-to-affine's"
            continue
        if allowed is not None:
            assert values == [_spelled(v) for v in allowed], field.name
        elif hints[field.name] in (bool, "bool"):
            assert values == ["true", "false"], field.name


def test_mx_lower_to_llvm_steps_are_the_ones_it_runs() -> None:
    text = _section("mx-lower-to-llvm")
    steps = text.split("The whole lowering as one pass:")[1].split(". ")[0]
    assert _ticked(steps) == list(PIPELINE)
    assert set(PIPELINE) <= set(ALL_PASSES) | XDSL_PASSES
    assert set(Universe.get_multiverse().all_passes) >= XDSL_PASSES


def test_building_ir_from_python_runs_as_written(
    capsys: pytest.CaptureFixture[str],
) -> None:
    text = (DOCS / "python-api.md").read_text()
    section = text.split("## Building IR from Python")[1].split("\n## ")[0]
    (code,) = re.findall(r"```python\n(.*?)```", section, re.S)
    namespace: dict[str, Any] = {}
    exec(compile(code, "docs/python-api.md", "exec"), namespace)
    printed = capsys.readouterr().out
    assert "arbfp.convert_from f8e4m3fn" in printed
    assert "matrix.matmul" in printed and "fastmath<contract>" in printed
    # NumPy and ml_dtypes as the reference (contract allows fmas: to rounding).
    w, x, c = (np.asarray(namespace[n]) for n in ("w_fp8", "x", "c"))
    expected = w.astype(np.float64) @ x.astype(np.float64) + c
    assert np.allclose(namespace["d"], expected, rtol=1e-5, atol=1e-6)


def test_every_page_is_linked_from_the_index() -> None:
    index = (DOCS / "index.md").read_text()
    linked = set(re.findall(r"\]\(([\w-]+\.md)(?:#[\w-]*)?\)", index))
    assert {page.name for page in DOCS.glob("*.md")} - {"index.md"} <= linked


def test_links_between_pages_reach_their_sections() -> None:
    """A `page.md#anchor` link names a heading of that page (GitHub's anchors)."""
    pages = [*DOCS.glob("*.md"), DOCS.parent / "README.md"]
    for page in pages:
        for target, anchor in re.findall(
            r"\]\(((?:docs/)?[\w-]+\.md)?#([\w-]+)\)", page.read_text()
        ):
            linked = page.parent / target if target else page
            headings = re.findall(r"^#+ (.*)$", linked.read_text(), re.M)
            anchors = {
                re.sub(r"[^\w\- ]", "", h).strip().lower().replace(" ", "-")
                for h in headings
            }
            assert anchor in anchors, f"{page.name}: {target}#{anchor}"

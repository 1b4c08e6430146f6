"""What a user of `f.precision_report` sees: the recommendation of a plain
`convert_to` against the exact rational reference, the table's alignment,
the JSON schema against docs/precision-report.md, and bad arguments as
located `ArgumentError`s (docs/precision-report.md)."""

import json
import math
import re
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import mx
from mx.errors import ArgumentError
from tests.precision.test_precision_report import _both, _errors, _jit, _round_trip
from tests.reference import exact_fp as ref

Array = np.ndarray[Any, Any]

DOCS = Path(__file__).resolve().parents[2] / "docs" / "precision-report.md"
CANDIDATES = [f for f in ref.MAX_FINITE if f not in ("f8e8m0fnu", "f16")]


def _converted(fmt: str, x: Array, saturate: bool) -> Array:
    """`convert_to` (nearest_even) then back, by the exact reference."""
    values: list[float] = []
    for v in x.astype(np.float64).tolist():
        value = ref.decode(fmt, ref.encode(fmt, ref.exact(v), "nearest_even", saturate))
        if isinstance(value, str):
            value = {"nan": math.nan, "inf": math.inf, "-inf": -math.inf}.get(
                value, -0.0
            )
        values.append(float(value))
    return np.array(values)


@pytest.mark.parametrize("saturate", [False, True])
def test_convert_to_recommendation_against_the_exact_reference(
    saturate: bool,
) -> None:
    """Gaussian values and one outlier (300: above the largest value of
    f8e3m4, f8e4m3, f8e4m3fnuz, the FP6 and FP4 formats), converted with the
    op's options to each candidate format by the exact reference. Without
    `saturate`, a format that turns a finite value into NaN or ±inf (the
    outlier; negatives into unsigned f8e5m3fnu) has SQNR -inf: its other
    elements' SQNR would hide the lost value. The recommendation is the
    narrowest format reaching the target, the best SQNR of that width."""
    rng = np.random.default_rng(30)
    x = (rng.standard_normal(64) * 2).astype(np.float32)
    x[7] = 300.0
    option = " saturate" if saturate else ""
    text = _round_trip("f8e4m3fn", x.size).replace("%x : ", f"%x{option} : ", 1)
    shadow = x.astype(np.float64)
    expected: dict[str, float] = {}
    for fmt in CANDIDATES:
        values = _converted(fmt, x, saturate)
        lost = bool((~np.isfinite(values)).any())
        expected[fmt] = -math.inf if lost else _errors(values, shadow)["sqnr_db"]
    if not saturate:
        assert {f for f, s in expected.items() if s == -math.inf} == {
            "f8e3m4",
            "f8e4m3",
            "f8e4m3fnuz",
            "f8e5m3fnu",
        }
    target = 20.0
    reaching = [f for f, s in expected.items() if s >= target]
    narrowest = min(ref.SPECS[f].width for f in reaching)
    best = max(
        (f for f in reaching if ref.SPECS[f].width == narrowest),
        key=lambda f: expected[f],
    )
    for report in _both(text, "q", x.reshape(1, -1), target_sqnr_db=target):
        rec = report.values[0]["recommendation"]
        assert rec["candidates"].keys() == expected.keys()
        for fmt, sqnr in expected.items():
            assert rec["candidates"][fmt] == pytest.approx(sqnr, rel=1e-9), fmt
        assert rec["format"] == best
        assert f"recommend: {best} (" in str(report)


def _column_ends(line: str) -> list[int]:
    """Where each space-separated cell of `line` ends."""
    return [m.end() for m in re.finditer(r"\S+", line)]


def test_table_columns_are_aligned() -> None:
    """Every row of `str(report)` has its cells under the header's: text
    columns (op, loc, type) start where their title starts, numbers end
    where their title ends; the lines under a record are indented."""
    x = np.array([[1.0, 2.0, 7.0, 0.1, 1e6, -3.3, 0.0, 5.5]], np.float32)
    report = _jit(_round_trip("f4e2m1fn", x.size), "q").precision_report(
        x, target_sqnr_db=10
    )
    lines = str(report).splitlines()
    assert lines[0] == "precision report of @q"
    header = lines[1]
    titles = header.split()
    assert titles[:4] == ["op", "loc", "type", "count"]
    starts = [m.start() for m in re.finditer(r"\S+", header)]
    ends = _column_ends(header)
    rows = [line for line in lines[2:] if not line.startswith("    ")]
    notes = [line for line in lines[2:] if line.startswith("    ")]
    assert len(rows) == len(report.values) == 3 and notes  # a recommendation line
    for row in rows:
        cells = list(re.finditer(r"\S+", row))
        assert len(cells) == len(titles), row
        assert [c.start() for c in cells[:3]] == starts[:3], row
        assert [c.end() for c in cells[3:]] == ends[3:], row


def _documented_keys() -> set[str]:
    """The keys the table of docs/precision-report.md names (its first
    column, `key` cells)."""
    keys: set[str] = set()
    for line in DOCS.read_text().splitlines():
        if line.startswith("| `"):
            keys |= set(re.findall(r"`(\w+)`", line.split("|")[1]))
    return keys


def test_json_keys_are_the_documented_schema() -> None:
    """Every key of `to_json()` (the top level, each record, the nested
    `rules` and `recommendation`) is documented; JSON has no inf/NaN."""
    x = np.array([[1.0, 2.0, 7.0, 0.1] * 8], np.float32)
    text = (
        "func.func @q(%x: !matrix.matrix<1x32xf32>) -> !matrix.matrix<1x32xf32> {\n"
        "  %b, %s = arbfp.scaled_convert_to f4e2m1fn %x block 32 : "
        "!matrix.matrix<1x32xf32> to !matrix.matrix<1x32xi4>, !matrix.matrix<1x1xi8>\n"
        "  %y = arbfp.scaled_convert_from f4e2m1fn %b, %s block 32 : "
        "!matrix.matrix<1x32xi4>, !matrix.matrix<1x1xi8> to !matrix.matrix<1x32xf32>\n"
        "  func.return %y : !matrix.matrix<1x32xf32>\n}\n"
    )
    report = _jit(text, "q").precision_report(x, target_sqnr_db=30)
    data = json.loads(report.to_json(), parse_constant=pytest.fail)
    assert set(data) == {"version", "function", "target_sqnr_db", "values"}
    documented = _documented_keys()
    rule_keys = {"count", "saturated", "underflow", "nan", "inf"}
    rule_keys |= {"max_abs_err", "max_rel_err", "sqnr_db", "clipped_blocks"}
    for record in data["values"]:
        assert set(record) <= documented, set(record) - documented
        for counts in record.get("rules", {}).values():
            assert set(counts) == rule_keys
        if "recommendation" in record:
            assert set(record["recommendation"]) == {"format", "sqnr_db", "candidates"}
    assert {"rules", "recommendation", "blocks", "clipped_blocks"} <= set(
        data["values"][0]
    )


def test_bad_arguments_are_located_argument_errors() -> None:
    """Wrong counts, shapes and options: `ArgumentError` (an
    `mx.MXError`) located at the function like a call's, never a traceback;
    NumPy numbers are numbers of dB."""
    f = _jit(_round_trip("f4e2m1fn", 4), "q")
    x = np.zeros((1, 4), np.float32)
    located = r"^<string>:1:1: error: "
    with pytest.raises(ArgumentError, match=located + "@q takes 1 arguments, got 2"):
        f.precision_report(x, x)
    with pytest.raises(ArgumentError, match=located + "argument #0"):
        f.precision_report(np.zeros((1, 3), np.float32))
    with pytest.raises(ArgumentError, match="unknown option targetsqnr"):
        f.precision_report(x, targetsqnr=3)
    for bad in ("30", [30], math.nan, True, np.bool_(True)):
        with pytest.raises(mx.MXError, match="target_sqnr_db must be a number"):
            f.precision_report(x, target_sqnr_db=bad)
    for number in (np.float32(30), np.int64(30), 30, 30.0):
        assert f.precision_report(x, target_sqnr_db=number).target_sqnr_db == 30.0


@pytest.mark.parametrize("batch", [(0,), (3, 0), (0, 2)])
def test_an_empty_batch_has_no_records(batch: tuple[int, ...]) -> None:
    """A batch of no elements runs nothing: no records, and the results a
    call gives (empty arrays of the batch's shape), not an IndexError; on
    the row-kernel path and on the instrumented copy's (an f16 op)."""
    half = (
        "func.func @h(%x: !matrix.matrix<1x4xf32>) -> !matrix.matrix<1x4xf16> {\n"
        "  %h = matrix.cast %x : !matrix.matrix<1x4xf32> to !matrix.matrix<1x4xf16>\n"
        "  %s = matrix.add %h, %h : !matrix.matrix<1x4xf16>\n"
        "  func.return %s : !matrix.matrix<1x4xf16>\n}\n"
    )
    empty = np.zeros((*batch, 1, 4), np.float32)
    for f in (_jit(_round_trip("f4e2m1fn", 4), "q"), _jit(half, "h")):
        report = f.precision_report(empty)
        assert report.values == []
        assert np.shape(report.results) == np.shape(f(empty)) == (*batch, 1, 4)
        assert json.loads(report.to_json())["values"] == []

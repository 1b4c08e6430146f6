"""`PrecisionReport`: the records of a shadow execution as dicts, JSON and a
table (the schema is documented in docs/precision-report.md)."""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from mx.precision.stats import Tally
from mx.precision.trace import Record, location
from mx.semantics.arbfp import FORMATS

SCHEMA_VERSION = 1


def blame_db(inputs: float, output: float) -> float:
    """How many dB of SQNR the op lost: its inputs' SQNR minus its own. An
    op whose inputs are exact and whose value is not gets inf (it is where
    the error starts); exact in, exact out is 0."""
    if math.isinf(inputs) and math.isinf(output) and inputs == output:
        return 0.0
    return inputs - output


def recommendation(
    candidates: dict[str, Tally], made_nonfinite: set[str], target_sqnr_db: float
) -> dict[str, Any]:
    """The narrowest format whose SQNR is at least the target (the best SQNR
    among formats of one width); `format` is None if none reaches it. A
    format that turned finite values into NaN or ±inf (`made_nonfinite`) has
    SQNR -inf: its finite elements' SQNR would hide the values it lost."""
    sqnr = {
        name: -math.inf if name in made_nonfinite else t.sqnr_db
        for name, t in candidates.items()
    }
    reaching = [n for n, s in sqnr.items() if s >= target_sqnr_db]
    best = min(reaching, key=lambda n: (FORMATS[n].bits, -sqnr[n]), default=None)
    return {
        "format": best,
        "sqnr_db": None if best is None else sqnr[best],
        "candidates": sqnr,
    }


def record_dict(record: Record, target_sqnr_db: float | None) -> dict[str, Any]:
    tally = record.tally
    entry: dict[str, Any] = {
        "op": record.op.name,
        "loc": location(record.op),
        "type": record.type,
        **tally.counts(),
    }
    if record.inputs:
        inputs = min(t.sqnr_db for t in record.inputs)
        entry["input_sqnr_db"] = inputs
        entry["blame_db"] = blame_db(inputs, tally.sqnr_db)
    else:
        entry["input_sqnr_db"] = entry["blame_db"] = None
    if record.format is not None:
        entry["format"] = record.format
    if record.blocks is not None:
        entry["blocks"] = record.blocks
        entry["clipped_blocks"] = tally.clipped_blocks
    if record.rules:
        entry["scale_rule"] = record.scale_rule
        entry["rules"] = {
            rule: {**t.counts(), "clipped_blocks": t.clipped_blocks}
            for rule, t in record.rules.items()
        }
    if target_sqnr_db is not None and record.candidates:
        entry["recommendation"] = recommendation(
            record.candidates, record.made_nonfinite, target_sqnr_db
        )
    return entry


def _json_number(value: Any) -> Any:
    """JSON has no inf/nan: they are written as the strings "inf", "-inf", "nan"."""
    if isinstance(value, float) and not math.isfinite(value):
        return "nan" if math.isnan(value) else ("inf" if value > 0 else "-inf")
    if isinstance(value, dict):
        return {k: _json_number(v) for k, v in value.items()}  # pyright: ignore[reportUnknownVariableType]
    return value


def _number(value: Any) -> str:
    if value is None:
        return "-"
    if isinstance(value, int):
        return str(value)
    return f"{value:.4g}" if math.isfinite(value) else str(value)


_COLUMNS = (
    ("op", "op"),
    ("loc", "loc"),
    ("type", "type"),
    ("count", "count"),
    ("saturated", "sat"),
    ("underflow", "underflow"),
    ("nan", "nan"),
    ("inf", "inf"),
    ("max_abs_err", "max_abs_err"),
    ("max_rel_err", "max_rel_err"),
    ("sqnr_db", "sqnr_db"),
    ("blame_db", "blame_db"),
)


@dataclass(frozen=True)
class PrecisionReport:
    """What low precision did to each value of one run of a function:
    `values` (one dict per value produced by a conversion or an f16/bf16
    operation, then per float result, in program order), `to_json()` and
    `str(report)` (a table). See docs/precision-report.md."""

    function: str
    values: list[dict[str, Any]]
    results: Any
    """What the run returned (as a call of the function does)."""
    target_sqnr_db: float | None = None

    @staticmethod
    def of(
        function: str,
        records: Sequence[Record],
        results: Any,
        target_sqnr_db: float | None = None,
    ) -> PrecisionReport:
        values = [record_dict(r, target_sqnr_db) for r in records]
        return PrecisionReport(function, values, results, target_sqnr_db)

    def to_json(self) -> str:
        return json.dumps(
            {
                "version": SCHEMA_VERSION,
                "function": self.function,
                "target_sqnr_db": _json_number(self.target_sqnr_db),
                "values": [_json_number(v) for v in self.values],
            },
            indent=1,
        )

    def __str__(self) -> str:
        rows = [[title for _, title in _COLUMNS]]
        rows += [
            [
                _number(v[k]) if k not in ("op", "loc", "type") else v[k]
                for k, _ in _COLUMNS
            ]
            for v in self.values
        ]
        widths = [max(len(r[i]) for r in rows) for i in range(len(_COLUMNS))]
        text = [f"precision report of @{self.function}"]
        notes: list[list[str]] = [[]] + [_notes(v) for v in self.values]
        for row, extra in zip(rows, notes, strict=True):
            text.append(
                "  ".join(
                    cell.ljust(w) if i < 3 else cell.rjust(w)
                    for i, (cell, w) in enumerate(zip(row, widths, strict=True))
                ).rstrip()
            )
            text.extend(f"    {line}" for line in extra)
        return "\n".join(text)


def _notes(value: dict[str, Any]) -> list[str]:
    lines: list[str] = []
    rules: dict[str, dict[str, Any]] = value.get("rules", {})
    for rule, counts in rules.items():
        used = " (used)" if rule == value.get("scale_rule") else ""
        lines.append(
            f"scale_rule {rule}{used}: {counts['clipped_blocks']} of "
            f"{value['blocks']} blocks clipped, {counts['saturated']} saturated, "
            f"{counts['underflow']} underflow, sqnr {_number(counts['sqnr_db'])} dB"
        )
    if "recommendation" in value:
        rec = value["recommendation"]
        if rec["format"] is None:
            lines.append("recommend: no arbfp format reaches the target SQNR")
        else:
            lines.append(f"recommend: {rec['format']} ({_number(rec['sqnr_db'])} dB)")
    return lines

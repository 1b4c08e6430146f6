"""`mx-opt`'s pass pipeline: parsing, option checking, composite expansion,
pass list, timing.

- `build_passes` turns a `-p` pipeline into passes (mx-opt and the JIT);
  every error in it, from a stray comma to a value of the wrong type, is a
  `PipelineError` at its column of the pipeline text. A boolean option
  given without a value (`mx-lower-to-llvm{remarks}`) is true, as in MLIR.
- `check_options` validates a pass's `name{option=value}` spec when the
  pipeline is parsed (before any input is read): unknown options, values of the
  wrong type and values outside an option's choices (which the pass declares,
  `mx.passes.options`) are reported at their column in the pipeline text, with
  the allowed values.
- `expand_composites` replaces `mx-lower-to-llvm` by the passes it runs, so
  that `--print-between-passes` and `--time-passes` show each step.
- `describe_passes` is `--list-passes`: mx's passes first, each with its
  one-line description and options (type, choices, default), then xDSL's.
- `TimingReport` is `--time-passes`' table, laid out like mlir-opt's
  `--mlir-timing` report.
"""

from __future__ import annotations

import dataclasses
import inspect
import re
import typing
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import IO, TYPE_CHECKING, Any

from xdsl.passes import ModulePass
from xdsl.utils.arg_spec import ArgSpec, ArgSpecConvertible, parse_pipeline
from xdsl.utils.exceptions import ArgSpecParseError

from mx.diagnostics import Diag, Source, did_you_mean
from mx.passes.options import option_choices
from mx.universe import ALL_PASSES

if TYPE_CHECKING:
    from mx.passes.mx_lower_to_llvm import MxLowerToLLVMPass

COMPOSITES = ("mx-lower-to-llvm",)
"""Passes that only run a fixed list of other passes."""


class PipelineError(Exception):
    """A bad pass pipeline, at a 1-based column of its text."""

    def __init__(self, message: str, column: int) -> None:
        super().__init__(message)
        self.message = message
        self.column = column

    def render(self, pipeline: str) -> str:
        return Source("<pipeline>", [pipeline]).render(
            Diag("error", 1, self.column, self.message)
        )


def option_name(field_name: str) -> str:
    return field_name.replace("_", "-")


def options(cls: type[ArgSpecConvertible]) -> list[dataclasses.Field[object]]:
    return [f for f in dataclasses.fields(cls) if f.init and f.name != "name"]


_XDSL_ERROR = re.compile(r"pass-pipeline:\d+:(\d+)\n.*\n *\^\n *(.*)$", re.DOTALL)
"""xDSL's pipeline syntax error: its column and message (after the excerpt)."""


def parse(pipeline: str) -> list[tuple[ArgSpec, int]]:
    """The passes of `pipeline` with the index where each name starts."""
    stripped = pipeline.rstrip()
    if stripped.endswith(","):  # xDSL takes `a,` for `a`
        raise PipelineError("expected a pass name after ','", len(stripped))
    try:
        specs = list(parse_pipeline(pipeline))
    except ArgSpecParseError as err:
        match = _XDSL_ERROR.search(str(err))
        if match is None:
            raise PipelineError(str(err), 1) from None
        message = match.group(2).strip()
        column = int(match.group(1))
        raise PipelineError(message[:1].lower() + message[1:], column) from None
    return list(zip(specs, spec_positions(pipeline, specs), strict=True))


def make_pass(
    cls: type[ModulePass], spec: ArgSpec, pipeline: str, at: int
) -> tuple[ArgSpec, ModulePass]:
    """The pass of `spec` (at index `at` of `pipeline`), options checked, with
    the normalized spec (see `check_options`)."""
    spec = check_options("pass", cls, spec, pipeline, at)
    try:
        return spec, cls.from_pass_spec(spec)
    except ValueError as err:
        message = f"invalid options for pass '{spec.name}': {err}"
        raise PipelineError(message, at + 1) from None


def build_passes(
    pipeline: str, available: dict[str, Callable[[], type[ModulePass]]]
) -> list[tuple[ArgSpec, ModulePass]]:
    """The passes of `pipeline` with their normalized specs; a `PipelineError`
    for anything wrong in it."""
    built: list[tuple[ArgSpec, ModulePass]] = []
    for spec, at in parse(pipeline):
        factory = available.get(spec.name)
        if factory is None:
            hint = did_you_mean(spec.name, available)
            raise PipelineError(
                f"unknown pass '{spec.name}'{hint or ' (see mx-opt --list-passes)'}",
                at + 1,
            )
        built.append(make_pass(factory(), spec, pipeline, at))
    return built


def _spelling(value: object) -> str:
    return str(value).lower() if isinstance(value, bool) else str(value)


def _type_of(cls: type[ArgSpecConvertible], name: str) -> object:
    try:
        return typing.get_type_hints(cls)[name]
    except Exception:  # an annotation that does not resolve: no type check
        return Any


def _accepts(annotation: object, value: object) -> str | None:
    """None if `value` fits `annotation`, else the expected kind of value."""
    kinds = typing.get_args(annotation) or (annotation,)
    if type(None) in kinds and isinstance(value, str) and value == "none":
        return None
    if bool in kinds:
        return None if isinstance(value, bool) else "true or false"
    if int in kinds:
        return (
            None
            if isinstance(value, int) and not isinstance(value, bool)
            else "an integer"
        )
    if float in kinds:
        return None if isinstance(value, int | float) else "a number"
    if str in kinds:
        return None if isinstance(value, str) else 'a string (quoted: "...")'
    return None  # tuples, enums, ...: xDSL's own conversion checks them


def choices_of(cls: type[ArgSpecConvertible], option: dataclasses.Field[object]) -> str:
    """The values an option takes, for messages and --list-passes."""
    if (allowed := option_choices(cls).get(option.name)) is not None:
        return ", ".join(_spelling(c) for c in allowed)
    annotation = _type_of(cls, option.name)
    kinds = typing.get_args(annotation) or (annotation,)
    if bool in kinds:
        return "true, false"
    names = [k.__name__ for k in kinds if isinstance(k, type)]
    return " | ".join(names) if names else str(annotation)


def check_options(
    kind: str, cls: type[ArgSpecConvertible], spec: ArgSpec, pipeline: str, at: int
) -> ArgSpec:
    """`spec`, which starts at index `at` of `pipeline`, with each boolean
    option given without a value set to true; a `PipelineError` for a bad
    option."""
    known = {option_name(f.name): f for f in options(cls)}
    parameters = dict(spec.parameters)
    for given, values in spec.parameters.items():
        column = _column_of(pipeline, at, given)
        option = known.get(option_name(given))
        if option is None:
            listed = (
                f" (options: {', '.join(known)})" if known else " (it has no options)"
            )
            hint = did_you_mean(option_name(given), list(known))
            raise PipelineError(
                f"{kind} '{spec.name}' has no option '{given}'{hint}{listed}", column
            )
        annotation = _type_of(cls, option.name)
        is_tuple = typing.get_origin(annotation) is tuple
        kinds = typing.get_args(annotation) or (annotation,)
        if not values and bool in kinds:
            parameters[given] = values = (True,)
        elif not values and not is_tuple and type(None) not in kinds:
            raise PipelineError(
                f"option '{given}' of {kind} '{spec.name}' needs a value "
                f"({choices_of(cls, option)})",
                column,
            )
        for value in values:
            if not is_tuple and len(values) != 1:
                raise PipelineError(
                    f"option '{given}' of {kind} '{spec.name}' takes one value", column
                )
            expected = _accepts(annotation, value)
            allowed = option_choices(cls).get(option.name)
            if allowed is not None and value not in allowed:
                expected = f"one of {choices_of(cls, option)}"
            if expected is not None:
                raise PipelineError(
                    f"option '{given}' of {kind} '{spec.name}' must be {expected} "
                    f"(got '{_spelling(value)}')",
                    column,
                )
    return ArgSpec(spec.name, parameters)


def _column_of(pipeline: str, at: int, option: str) -> int:
    index = pipeline.find(option, at)
    return (index if index >= 0 else at) + 1


def spec_positions(pipeline: str, specs: Sequence[ArgSpec]) -> list[int]:
    """The index in `pipeline` where each spec's pass name starts."""
    positions: list[int] = []
    cursor = 0
    for spec in specs:
        index = pipeline.find(spec.name, cursor)
        if index < 0:
            index = cursor
        positions.append(index)
        cursor = index + len(spec.name)
    return positions


def expand_composites(
    specs: Sequence[ArgSpec], llvm_ir: bool = False
) -> tuple[list[ArgSpec], MxLowerToLLVMPass | None]:
    """`specs` with each composite pass replaced by the passes it runs. On
    the way to LLVM IR (`llvm_ir`), a last `mx-lower-to-llvm` is returned
    too, for its route to finish at the output (`mx.compiler`): on the
    `direct` route its steps stop before `convert-to-llvm`."""
    from mx.passes.mx_lower_to_llvm import MxLowerToLLVMPass

    expanded: list[ArgSpec] = []
    for index, spec in enumerate(specs):
        if spec.name != "mx-lower-to-llvm":
            expanded.append(spec)
            continue
        composite = MxLowerToLLVMPass.from_pass_spec(spec)
        composite_steps = composite.steps()
        if llvm_ir and index == len(specs) - 1:
            if composite.route == "direct":
                names = [step.name for step in composite_steps]
                composite_steps = composite_steps[: names.index("convert-to-llvm")]
            expanded.extend(composite_steps)
            return expanded, composite
        expanded.extend(composite_steps)
    return expanded, None


def _summary(cls: type[ModulePass]) -> str:
    doc = inspect.getdoc(cls) or ""
    if doc == inspect.getdoc(ModulePass):
        return ""
    return doc.split("\n\n")[0].replace("\n", " ")


def describe_passes(
    available: dict[str, Callable[[], type[ModulePass]]], out: IO[str], mx_only: bool
) -> None:
    """mx's passes with a description and their options, then the others' names."""
    mx_names = [name for name in ALL_PASSES if name in available]
    out.write("mx passes:\n")
    for name in mx_names:
        cls = available[name]()
        out.write(f"  {name}\n")
        if summary := _summary(cls):
            out.write(f"      {summary}\n")
        for option in options(cls):
            default = (
                ""
                if option.default is dataclasses.MISSING
                else f" (default: {_spelling(option.default)})"
            )
            out.write(
                f"      {option_name(option.name)}: {choices_of(cls, option)}{default}\n"
            )
    if mx_only:
        return
    out.write("\nxDSL passes (see xDSL's documentation):\n")
    for name in sorted(set(available) - set(mx_names)):
        out.write(f"  {name}\n")


@dataclass
class TimingReport:
    """Wall time per step, printed like mlir-opt's `--mlir-timing` report."""

    rows: list[tuple[str, float]] = field(default_factory=list[tuple[str, float]])

    def add(self, name: str, seconds: float) -> None:
        self.rows.append((name, seconds))

    def write(self, out: IO[str]) -> None:
        total = sum(t for _, t in self.rows) or 1e-12
        rule = "===" + "-" * 73 + "==="
        title = f"{'... Execution time report ...':^79}".rstrip()
        out.write(f"{rule}\n{title}\n{rule}\n")
        out.write(f"  Total Execution Time: {total:.4f} seconds\n\n")
        out.write("  ----Wall Time----  ----Name----\n")
        for name, seconds in [*self.rows, ("Total", total)]:
            out.write(f"  {seconds:9.4f} ({100 * seconds / total:5.1f}%)  {name}\n")

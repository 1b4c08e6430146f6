"""`mx-opt`: xDSL's `xdsl-opt` with mlir-opt's diagnostics and exit statuses.

On top of `xDSLOptMain` (the dialects and passes come from the `xdsl.universe`
entry point, so nothing is registered here twice) this driver

- reports every bad input (unparsable or non-UTF-8 text, unknown names, failed
  verifiers, too-deep nesting, unknown passes or options, unreadable files) as a
  located `file:line:col: error: ...` on stderr with exit status 1;
- reports a bug (any other exception, or IR that no longer verifies after a
  pass) as `mx-opt: internal error: ...` with exit status 2, so a fuzzer can
  tell the two apart;
- implements `--verify-diagnostics` with mlir-opt's semantics
  (`// expected-error@+1 {{...}}` and friends);
- replaces xDSL's `-t llvm` target with mx's LLVM IR printer.

Parsing, locating and verification are `mx.frontend`'s; the rendering of
diagnostics is `mx.diagnostics`'.
"""

from __future__ import annotations

import argparse
import gc
import inspect
import re
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from importlib.metadata import version
from typing import IO, TYPE_CHECKING, ClassVar, TypeVar, cast

from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp, SymbolRefAttr
from xdsl.passes import ModulePass, PassPipeline
from xdsl.printer import Printer
from xdsl.utils.arg_spec import ArgSpec, ArgSpecConvertible, parse_spec
from xdsl.utils.diagnostic import Diagnostic
from xdsl.utils.exceptions import (
    DiagnosticException,
)
from xdsl.utils.target import Target
from xdsl.xdsl_opt_main import xDSLOptMain

from mx.diagnostics import Diag, OpDiagnostic, Severity, Source, did_you_mean, op_diag
from mx.frontend import (
    FrontendError,
    deep_recursion,
    mx_context,
    parse_source,
)
from mx.tools.exit_status import ArgumentParser, run_tool
from mx.tools.pipeline import (
    PipelineError,
    TimingReport,
    build_passes,
    check_options,
    describe_passes,
    expand_composites,
    make_pass,
    parse,
)
from mx.verifier import verify_module

if TYPE_CHECKING:
    from mx.passes.mx_lower_to_llvm import MxLowerToLLVMPass
    from mx.targets.llvm_ir import LLVMIRWriter


class UsageError(Exception):
    """Bad command line or unreadable input; exit status 1."""

    def __init__(
        self, message: str, where: str = "mx-opt", rendered: str | None = None
    ) -> None:
        super().__init__(message)
        self.where = where
        self.rendered = rendered
        """The whole diagnostic, if it shows an excerpt (e.g. of the pipeline)."""


class InternalError(Exception):
    """A failure that is the compiler's fault, not the input's; exit status 2."""


# -- expected-* directives (mlir-opt's --verify-diagnostics) -----------------

_DIRECTIVE = re.compile(
    r"expected-(error|note|remark|warning)(-re)?"
    r" *(?:@([+-][0-9]+|above|below|unknown))? *\{\{(.*)\}\}\s*$"
)
_DIRECTIVE_START = re.compile(r"expected-(error|note|remark|warning)")
_REGEX_PART = re.compile(r"\{\{(.*?)\}\}")


@dataclass
class Expectation:
    severity: Severity
    line: int | None
    text: str
    pattern: re.Pattern[str] | None
    """For `expected-error-re`: text outside `{{...}}` literal, inside a regex."""
    directive_line: int
    directive_column: int

    def matches(self, diag: Diag) -> bool:
        if diag.severity != self.severity or diag.line != self.line:
            return False
        if self.pattern is not None:
            return self.pattern.search(diag.message) is not None
        return self.text in diag.message


def _regex(text: str) -> re.Pattern[str]:
    parts: list[str] = []
    pos = 0
    for m in _REGEX_PART.finditer(text):
        parts.append(re.escape(text[pos : m.start()]))
        parts.append(f"(?:{m.group(1)})")
        pos = m.end()
    parts.append(re.escape(text[pos:]))
    return re.compile("".join(parts))


def parse_expectations(
    chunk: str, line_offset: int
) -> tuple[list[Expectation], list[Diag]]:
    """The expected-* directives of a chunk, and errors for malformed ones."""
    expected: list[Expectation] = []
    errors: list[Diag] = []
    waiting_below: list[Expectation] = []
    last_plain_line: int | None = None
    for index, text in enumerate(chunk.split("\n")):
        line = line_offset + index + 1
        start = _DIRECTIVE_START.search(text)
        if start is None:
            for e in waiting_below:
                e.line = line
            waiting_below.clear()
            last_plain_line = line
            continue
        m = _DIRECTIVE.search(text, start.start())
        column = start.start() + 1
        if m is None:
            errors.append(Diag("error", line, column, "malformed expected-* directive"))
            continue
        severity = cast(Severity, m.group(1))
        where, message = m.group(3), m.group(4)
        try:
            pattern = _regex(message) if m.group(2) else None
        except re.error as err:
            errors.append(
                Diag("error", line, column, f"invalid regex in directive: {err}")
            )
            continue
        e = Expectation(severity, line, message, pattern, line, column)
        if where == "unknown":
            e.line = None
        elif where == "below":
            waiting_below.append(e)
        elif where == "above":
            if last_plain_line is None:
                errors.append(
                    Diag("error", line, column, "no line above this directive")
                )
                continue
            e.line = last_plain_line
        elif where is not None:
            e.line = line + int(where)
        expected.append(e)
    for e in waiting_below:
        errors.append(
            Diag(
                "error",
                e.directive_line,
                e.directive_column,
                "no line below this directive",
            )
        )
        expected.remove(e)
    return expected, errors


def check_diagnostics(expected: list[Expectation], produced: list[Diag]) -> list[Diag]:
    """mlir-opt's rule: each diagnostic must match a distinct expectation
    (same severity and line, message containing the text), and vice versa."""
    unmatched = list(expected)
    problems: list[Diag] = []
    for d in produced:
        match = next((e for e in unmatched if e.matches(d)), None)
        if match is None:
            problems.append(
                Diag("error", d.line, d.column, f"unexpected {d.severity}: {d.message}")
            )
        else:
            unmatched.remove(match)
    for e in unmatched:
        problems.append(
            Diag(
                "error",
                e.directive_line,
                e.directive_column,
                f'expected {e.severity} "{e.text}" was not produced',
            )
        )
    return problems


def split_input(text: str) -> list[tuple[str, int]]:
    """Chunks separated by `// -----` lines, each with its first line's offset."""
    lines = text.split("\n")
    chunks: list[tuple[str, int]] = []
    start = 0
    for index, line in enumerate(lines):
        if line.lstrip().startswith("// -----"):
            chunks.append(("\n".join(lines[start:index]), start))
            start = index + 1
    chunks.append(("\n".join(lines[start:]), start))
    return chunks


def _llvm_target() -> type[Target]:
    # mx's LLVM IR printer (LLVM 16+ text, host triple) replaces xDSL's `llvm`
    # target, which only prints the llvm dialect. Imported lazily: it loads llvmlite.
    from mx.targets.llvm_ir import LLVMIRTarget

    return LLVMIRTarget


def _mlir16_target() -> type[Target]:
    from mx.targets.mlir16 import MLIR16Target

    return MLIR16Target


_Convertible = TypeVar("_Convertible", bound=ArgSpecConvertible)


def _from_spec(
    kind: str, cls: type[_Convertible], spec: ArgSpec, text: str, at: int
) -> _Convertible:
    """A target from its `name{opt=v}` spec, which starts at index `at` of
    the option `text`; bad options are usage errors located in `text`."""
    try:
        spec = check_options(kind, cls, spec, text, at)
    except PipelineError as err:
        raise UsageError(err.message, rendered=err.render(text)) from None
    try:
        return cls.from_spec(spec)
    except ValueError as err:
        raise UsageError(f"invalid options for {kind} '{spec.name}': {err}") from None


class MxOptMain(xDSLOptMain):
    version_format: ClassVar[str] = f"mx-opt {version('mx')} (xdsl {{xdsl_version}})"

    failed: bool = False
    """Set by `run` when some chunk produced an error (exit status 1)."""

    def __init__(self, args: Sequence[str] | None = None) -> None:
        # Not super().__init__(): its argparse exits with status 2 (our internal
        # error status), it patches Attribute globally for --disable-verify, and
        # its pipeline set-up raises bare ValueErrors.
        self.available_frontends = {}
        self.available_passes = {}
        self.available_targets = {}
        self.ctx = mx_context()
        self.register_all_frontends()
        self.register_all_passes()
        self.register_all_targets()

        arg_parser = ArgumentParser(
            prog="mx-opt", description="mx modular optimizer driver (xdsl-opt with mx)"
        )
        self.register_all_arguments(arg_parser)
        self.args = arg_parser.parse_args(args=args)

        try:
            specs = parse(self.args.target)
            if len(specs) != 1:
                raise PipelineError("expected one target", len(self.args.target) + 1)
        except PipelineError as err:
            raise UsageError(
                err.message, rendered=err.render(self.args.target)
            ) from None
        target_spec = specs[0][0]
        target = self.available_targets.get(target_spec.name)
        if target is None:
            arg_parser.error(
                f"argument -t/--target: invalid choice: '{target_spec.name}'"
                f"{did_you_mean(target_spec.name, list(self.available_targets))}"
            )
        if not inspect.signature(target).parameters:  # not a legacy print function
            _from_spec(
                "target",
                cast(Callable[[], type[Target]], target)(),
                target_spec,
                self.args.target,
                0,
            )
        if self.args.shrink or self.args.parsing_diagnostics:
            arg_parser.error(
                "--shrink and --parsing-diagnostics are not supported by mx-opt"
            )
        if self.args.frontend not in (None, "mlir"):
            arg_parser.error("argument -f/--frontend: mx-opt reads MLIR text only")
        self.ctx.allow_unregistered = self.args.allow_unregistered_dialect
        if self.args.syntax_highlight:
            Diagnostic.colored = True
        self.current_pass: ModulePass | None = None
        self.llvm_lowering: MxLowerToLLVMPass | None = None
        """With `--print-between-passes`/`--time-passes` and `-t llvm`: the
        `mx-lower-to-llvm` whose steps were run one by one, for its route to
        finish at the output (`mx.compiler`)."""
        self.pass_start = time.perf_counter()
        self.timing = TimingReport()
        if not self.args.list_passes:
            self.setup_pipeline()

    def register_all_targets(self) -> None:
        super().register_all_targets()
        self.available_targets["llvm"] = _llvm_target
        self.available_targets["mlir16"] = _mlir16_target

    def register_all_arguments(self, arg_parser: argparse.ArgumentParser) -> None:
        super().register_all_arguments(arg_parser)
        helps = {
            "input_file": "input file ('-' or none: standard input)",
            "frontend": "input format (mx-opt reads MLIR text only)",
            "target": (
                "output: mlir (default), llvm (LLVM IR, after -p mx-lower-to-llvm) or"
                " mlir16 (MLIR text for mlir-opt-16); xDSL's other targets too"
            ),
            "passes": (
                "comma-separated pass pipeline, e.g. "
                "'matrix-fuse-contractions{mode=matrix},mx-lower-to-llvm' "
                "(see --list-passes)"
            ),
            "verify_diagnostics": (
                "check the diagnostics against the `// expected-error@+N {{...}}` "
                "directives in the input, as mlir-opt does"
            ),
            "disable_verify": "do not verify the IR before and after passes",
            "print_between_passes": (
                "print the IR after each pass to stderr (composite passes "
                "such as mx-lower-to-llvm show each step)"
            ),
            "time_passes": "print the time of each pass (and step) to stderr",
            "allow_unregistered_dialect": "accept ops of unknown dialects",
            "no_implicit_module": "require an explicit top-level builtin.module",
        }
        for action in arg_parser._actions:
            if action.dest in helps:
                action.help = helps[action.dest]
            elif action.dest in ("shrink", "parsing_diagnostics"):
                action.help = argparse.SUPPRESS
        arg_parser.add_argument(
            "--list-passes",
            action="store_true",
            help="list mx's passes with their options, then xDSL's, then exit",
        )
        arg_parser.add_argument(
            "--mx-only",
            action="store_true",
            help="with --list-passes: list mx's passes only",
        )

    # -- pipeline ----------------------------------------------------------

    def setup_pipeline(self) -> None:
        text = self.args.passes
        try:
            built = build_passes(text, self.available_passes)
            if self.args.print_between_passes or self.args.time_passes:
                # Show each step of composite passes (already checked above).
                steps, self.llvm_lowering = expand_composites(
                    [spec for spec, _ in built],
                    llvm_ir=parse_spec(self.args.target).name == "llvm",
                )
                built = [
                    make_pass(self.available_passes[spec.name](), spec, text, 0)
                    for spec in steps
                ]
        except PipelineError as err:
            raise UsageError(err.message, rendered=err.render(text)) from None
        passes = tuple(made for _, made in built)
        self.pipeline = PassPipeline(passes, self._between_passes)

    def _between_passes(
        self,
        previous: ModulePass | None,
        module: ModuleOp,
        following: ModulePass | None,
    ) -> None:
        if self.args.time_passes and previous is not None:
            self.timing.add(previous.name, time.perf_counter() - self.pass_start)
        verify_start = time.perf_counter()
        if not self.args.disable_verify and (diag := verify_module(module)) is not None:
            if previous is None:
                raise FrontendError([diag])
            raise InternalError(
                f"IR after pass '{previous.name}' does not verify: "
                f"{self.source.render(diag)}"
            )
        if self.args.time_passes:
            self.timing.add("(verifier)", time.perf_counter() - verify_start)
        if (
            previous is not None
            and following is not None
            and self.args.print_between_passes
        ):
            sys.stderr.write(f"// -----// IR Dump After {previous.name} //----- //\n")
            Printer(stream=sys.stderr).print_op(module)
            sys.stderr.write("\n\n")
        self.current_pass = following
        self.pass_start = time.perf_counter()

    def list_passes(self, out: IO[str]) -> None:
        describe_passes(self.available_passes, out, self.args.mx_only)

    # -- input and chunks --------------------------------------------------

    def read_input(self) -> Source:
        from_stdin = self.args.input_file in (None, "-")
        name = "<stdin>" if from_stdin else self.args.input_file
        try:
            if from_stdin:
                data = sys.stdin.buffer.read()
            else:
                with open(self.args.input_file, "rb") as f:
                    data = f.read()
        except OSError as err:
            raise UsageError(
                f"cannot read input file '{name}': {err.strerror}"
            ) from None
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError as err:
            line = data.count(b"\n", 0, err.start) + 1
            column = err.start - (data.rfind(b"\n", 0, err.start) + 1) + 1
            raise UsageError(
                f"invalid UTF-8 (byte 0x{data[err.start]:02x})",
                f"{name}:{line}:{column}",
            ) from None
        return Source(name, text.split("\n"))

    def parse_text(self, text: str, line_offset: int) -> ModuleOp:
        start = time.perf_counter()
        module = parse_source(
            self.ctx,
            text,
            self.source.name,
            line_offset,
            not self.args.no_implicit_module,
        )
        if self.args.time_passes:
            self.timing.add("(parser)", time.perf_counter() - start)
        return module

    def _output(self, module: ModuleOp) -> str:
        start = time.perf_counter()
        try:
            if self.llvm_lowering is not None:
                return self._finish_route(module, self.llvm_lowering)
            return self.output_resulting_program(module)
        except OpDiagnostic:
            raise  # located at its op by the caller
        except DiagnosticException as err:
            raise FrontendError([self._target_diag(module, err)]) from None
        finally:
            if self.args.time_passes:
                self.timing.add("(output)", time.perf_counter() - start)

    def _target_diag(self, module: ModuleOp, err: DiagnosticException) -> Diag:
        """A target's error, at the first op it cannot handle if it is -t llvm."""
        if parse_spec(self.args.target).name == "llvm":
            unlowered = next(
                (
                    op
                    for op in module.walk()
                    if op is not module and op.dialect_name() != "llvm"
                ),
                None,
            )
            if unlowered is not None:
                return op_diag(
                    unlowered,
                    "cannot be translated to LLVM IR: lower the input to the llvm "
                    "dialect first, e.g. with -p mx-lower-to-llvm",
                )
        return Diag("error", None, 1, str(err))

    def _lowers_to_llvm_ir(self) -> bool:
        """Whether the run is `-p mx-lower-to-llvm -t llvm`, the steps neither
        printed nor timed: the pass's route leads to LLVM IR (`mx.compiler`)."""
        passes = self.pipeline.passes
        if (
            parse_spec(self.args.target).name != "llvm"
            or self.args.print_between_passes
            or self.args.time_passes
            or not passes
        ):
            return False
        # Imported only now: the lowering's modules are a third of the start-up.
        from mx.passes.mx_lower_to_llvm import MxLowerToLLVMPass

        return all(isinstance(p, MxLowerToLLVMPass) for p in passes)

    def _lowers_each_function(self, module: ModuleOp) -> bool:
        """Whether `-t llvm` can lower and translate `module` one function at
        a time: `_lowers_to_llvm_ir`, and the module holds only function
        definitions that refer to no symbol (no calls), none named like a C
        function the lowering declares; and no remarks (they come in the order
        of the whole module's steps)."""
        if not self._lowers_to_llvm_ir() or module.attributes or module.properties:
            return False
        from mx.lowering.llvm.memref import EXTERNAL_FUNCTIONS
        from mx.passes.mx_lower_to_llvm import MxLowerToLLVMPass

        if any(
            isinstance(p, MxLowerToLLVMPass) and p.remarks for p in self.pipeline.passes
        ):
            return False
        for function in module.ops:
            if (
                not isinstance(function, func.FuncOp)
                or not function.body.blocks
                or function.sym_name.data in EXTERNAL_FUNCTIONS
            ):
                return False
        return not any(
            isinstance(value, SymbolRefAttr)
            for op in module.walk()
            for value in (*op.properties.values(), *op.attributes.values())
        )

    def _lower_whole_module(self, module: ModuleOp) -> str:
        """`-p mx-lower-to-llvm -t llvm` of a module that cannot go function
        by function (calls, say): lowered whole, and translated directly if
        `mx.targets.direct_llvm_ir` covers it."""
        from mx.targets.llvm_ir import LLVMIRTarget, LLVMIRWriter

        target = LLVMIRTarget.from_spec(parse_spec(self.args.target))
        self._between_passes(None, module, self.pipeline.passes[0])
        writer = LLVMIRWriter()
        self._lower_and_translate(module, writer)
        return writer.text(target.triple or None, target.data_layout or None)

    def _lower_each_function(self, module: ModuleOp) -> str:
        """`-t llvm` of the pipeline run on each function of `module` in turn,
        each in a module of its own that is dropped once translated: the whole
        lowered module (~17 `llvm` ops per input op) never exists at once.
        The text is the one of the whole module lowered and translated."""
        from mx.targets.llvm_ir import LLVMIRTarget, LLVMIRWriter

        target = LLVMIRTarget.from_spec(parse_spec(self.args.target))
        self._between_passes(None, module, self.pipeline.passes[0])

        def after_each_pass(
            previous: ModulePass | None, part: ModuleOp, following: ModulePass | None
        ) -> None:
            if previous is None:  # a function of `module`, verified above
                self.current_pass = following
                self.pass_start = time.perf_counter()
            else:
                self._between_passes(previous, part, following)

        pipeline = PassPipeline(self.pipeline.passes, after_each_pass)
        writer = LLVMIRWriter()
        thresholds = gc.get_threshold()
        gc.set_threshold(*PYTHON_GC_THRESHOLDS)
        try:
            # Not `for function in list(module.ops)`: the list would keep every
            # function, lowered in place, alive to the end.
            while (function := module.body.block.first_op) is not None:
                function.detach()
                part = ModuleOp([function])
                if len(pipeline.passes) == 1:
                    self._lower_and_translate(part, writer)
                    continue
                pipeline.apply(self.ctx, part)
                self.current_pass = None
                self._write(part, writer)
        finally:
            gc.set_threshold(*thresholds)
        return writer.text(target.triple or None, target.data_layout or None)

    def _lower_and_translate(self, part: ModuleOp, writer: LLVMIRWriter) -> None:
        """`mx-lower-to-llvm` and `-t llvm` of `part`, by the pass's route
        (`mx.compiler`): LLVM IR written directly, or `convert-to-llvm`,
        verification and the printer."""
        from mx.compiler import lower_for_llvm_ir
        from mx.passes.mx_lower_to_llvm import MxLowerToLLVMPass

        (lowering,) = self.pipeline.passes
        assert isinstance(lowering, MxLowerToLLVMPass)
        self.current_pass = lowering
        self.pass_start = time.perf_counter()
        translation = lower_for_llvm_ir(lowering, self.ctx, part)
        if translation is None:
            self._between_passes(lowering, part, None)
            self._write(part, writer)
            return
        self.current_pass = None
        writer.add_functions(translation.functions, translation.declarations)

    def _finish_route(self, module: ModuleOp, lowering: MxLowerToLLVMPass) -> str:
        """`-t llvm` of `module` after the steps of `lowering`, finished by
        its route: the dialect route's steps ran to the end; the direct
        route's stopped before `convert-to-llvm`."""
        from mx.compiler import remark_dialect_route, translate_structured
        from mx.targets.llvm_ir import LLVMIRTarget, LLVMIRWriter

        if lowering.route == "dialect":
            remark_dialect_route(lowering)
            return self.output_resulting_program(module)

        target = LLVMIRTarget.from_spec(parse_spec(self.args.target))
        writer = LLVMIRWriter()
        translation = translate_structured(lowering, self.ctx, module)
        if translation is None:
            self._write(module, writer)
        else:
            writer.add_functions(translation.functions, translation.declarations)
        return writer.text(target.triple or None, target.data_layout or None)

    def _write(self, part: ModuleOp, writer: LLVMIRWriter) -> None:
        try:
            writer.add(part)
        except DiagnosticException as err:
            raise FrontendError([self._target_diag(part, err)]) from None

    def process_chunk(
        self, text: str, line_offset: int
    ) -> tuple[str | None, list[Diag]]:
        """The chunk's output, or None and the diagnostics that stopped it."""
        try:
            module = self.parse_text(text, line_offset)
            self.current_pass = None
            try:
                if self._lowers_each_function(module):
                    return self._lower_each_function(module), []
                if self._lowers_to_llvm_ir() and len(self.pipeline.passes) == 1:
                    return self._lower_whole_module(module), []
                self.apply_passes(module)
                self.current_pass = None
                return self._output(module), []
            except OpDiagnostic as err:
                raise FrontendError([op_diag(err.op, err.message)]) from None
            except DiagnosticException as err:
                where = (
                    f"pass '{self.current_pass.name}': " if self.current_pass else ""
                )
                raise FrontendError([Diag("error", None, 1, f"{where}{err}")]) from None
        except FrontendError as failed:
            return None, failed.diags

    def run(self) -> None:
        if self.args.list_passes:
            self.list_passes(sys.stdout)
            return
        self.source = self.read_input()
        whole = "\n".join(self.source.lines)
        chunks = split_input(whole) if self.args.split_input_file else [(whole, 0)]
        try:
            output = self.prepare_output()
        except OSError as err:
            raise UsageError(
                f"cannot write '{self.args.output_file}': {err.strerror}"
            ) from None
        try:
            for index, (text, line_offset) in enumerate(chunks):
                if index > 0:
                    output.write("// -----\n")
                result, diags = self.process_chunk(text, line_offset)
                if result is not None:
                    output.write(result)
                if self.args.verify_diagnostics:
                    expected, malformed = parse_expectations(text, line_offset)
                    diags = malformed + check_diagnostics(expected, diags)
                for diag in diags:
                    print(self.source.render(diag), file=sys.stderr)
                self.failed |= bool(diags)
                output.flush()
        finally:
            if output is not sys.stdout:
                output.close()
        if self.args.time_passes:
            self.timing.write(sys.stderr)


# xDSL IR is a great many small objects that all stay alive until the module is
# printed; with Python's default thresholds the collector rescans them again and
# again (~10% of `-p mx-lower-to-llvm` time). Collect ~100x less often.
GC_THRESHOLDS = (100_000, 50, 100)
# When functions are lowered one at a time, each dropped function is garbage
# with reference cycles (ops and their blocks) while little IR stays alive:
# Python's default thresholds free it soon and cheaply (10k bench ops: 142 MB
# peak instead of 339 MB, and less CPU time).
PYTHON_GC_THRESHOLDS = (700, 10, 10)


def main(argv: Sequence[str] | None = None) -> int:
    thresholds = gc.get_threshold()
    gc.set_threshold(*GC_THRESHOLDS)
    try:
        with deep_recursion():
            return run_tool("mx-opt", lambda: _main(argv))
    finally:
        gc.set_threshold(*thresholds)


def _main(argv: Sequence[str] | None) -> int:
    try:
        app = MxOptMain(argv)
        app.run()
        return 1 if app.failed else 0
    except UsageError as err:
        print(err.rendered or f"{err.where}: error: {err}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())

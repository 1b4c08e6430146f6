"""The direct LLVM IR translation (`mx.targets.direct_llvm_ir`) against the
`llvm`-dialect path it stands in for.

Each program is run through `mx-lower-to-llvm`'s steps before
`convert-to-llvm`; where the direct translation covers the result, its text
must be the text of `convert-to-llvm` + the LLVM IR printer up to the names
of values and blocks (both renamed in order of first appearance, per
function). `mx-lower-to-llvm` runs `cse` after `convert-to-llvm`, which the
direct translation leaves to LLVM: the comparison is with `convert-to-llvm`
alone. Programs: every chunk of the FileCheck tests that lowers, the
bench kernels and examples, and random programs of the differential tests'
generator (`MX_DIRECT_CASES`, default 120, for a longer run)."""

import os
import random
import re
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest
from xdsl.utils.exceptions import DiagnosticException

from mx.diagnostics import OpDiagnostic
from mx.frontend import FrontendError, mx_context, parse_and_verify
from mx.lowering.llvm.convert_to_llvm import ConvertToLLVMPass
from mx.passes.mx_lower_to_llvm import MxLowerToLLVMPass
from mx.targets.direct_llvm_ir import NotCovered, translate_module
from mx.targets.llvm_ir import LLVMIRWriter, module_to_llvm_ir
from mx.testing.fuzz import corpus, generated_program
from tests.arith_ops import sweep_cases, sweep_function

ROOT = Path(__file__).resolve().parents[2]
TRIPLE, LAYOUT = "x86_64-unknown-linux-gnu", "e-m:e-i64:64-n8:16:32:64-S128"
MX_OPT = Path(sys.executable).parent / "mx-opt"
CASES = int(os.environ.get("MX_DIRECT_CASES", "120"))
LOWERING = MxLowerToLLVMPass()


def _renamed(chunk: str, pattern: str, prefix: str) -> str:
    """`chunk` with the names matching `pattern` renamed `prefix0`,
    `prefix1`, ... in order of first appearance."""
    names: dict[str, str] = {}
    return re.sub(
        pattern, lambda m: names.setdefault(m[0], f"{prefix}{len(names)}"), chunk
    )


def _alpha(text: str) -> str:
    """`text` with each function's values and blocks renamed in order of
    first appearance (`%v7` -> `%x0`, `bb3` -> `B0`)."""
    return "\n".join(
        _renamed(_renamed(chunk, r"%v\d+\b", "%x"), r"\bbb\d+\b", "B")
        for chunk in re.split(r"\n(?=define )", text)
    )


def _both(text: str, uncovered: bool = True) -> tuple[str | None, str] | None:
    """(direct translation or None if not covered, dialect path's LLVM IR)
    of a program; None if it does not lower (a diagnostic test's input).
    Without `uncovered`, a program the direct writer does not cover is not
    taken through the dialect path (its LLVM IR is then "")."""
    try:
        module = parse_and_verify(text, "<test>")
        LOWERING.apply_structured(mx_context(), module)
    except (FrontendError, OpDiagnostic, DiagnosticException):
        return None
    try:
        translation = translate_module(module)
    except NotCovered:
        direct = None
        if not uncovered:
            return None, ""
    else:
        writer = LLVMIRWriter()
        writer.add_functions(translation.functions, translation.declarations)
        direct = writer.text(TRIPLE, LAYOUT)
    try:
        ConvertToLLVMPass().apply(mx_context(), module)
        return direct, module_to_llvm_ir(module, TRIPLE, LAYOUT)
    except (OpDiagnostic, DiagnosticException):
        assert direct is None, "translated directly what convert-to-llvm refuses"
        return None


def _check(
    texts: list[str], uncovered: bool = True, covered: list[int] | None = None
) -> Counter[str]:
    """Counts of the outcomes; the positions of the texts translated
    directly are appended to `covered`."""
    counts: Counter[str] = Counter()
    for i, text in enumerate(texts):
        both = _both(text, uncovered)
        if both is None:
            counts["does not lower"] += 1
            continue
        direct, dialect = both
        if direct is None:
            counts["not covered"] += 1
            continue
        assert _alpha(direct) == _alpha(dialect), text
        counts["same"] += 1
        if covered is not None:
            covered.append(i)
    return counts


def test_filecheck_inputs_translate_as_convert_to_llvm() -> None:
    # (the lit inputs the direct writer does not cover, e.g. the fused decode
    # kernels of i4 buffers, ~12 s each through convert-to-llvm, compare
    # nothing: the lit and JIT tests take them through the pipeline)
    counts = _check(corpus(), uncovered=False)
    print(dict(counts))
    assert counts["same"] >= 30, counts


def test_bench_kernels_and_examples_translate_as_convert_to_llvm() -> None:
    paths = sorted((ROOT / "bench" / "kernels" / "mx").glob("*.mlir"))
    paths += sorted((ROOT / "examples").glob("*.mlir"))
    translated: list[int] = []
    counts = _check([p.read_text() for p in paths], covered=translated)
    assert counts["does not lower"] == 0, counts
    covered = {paths[i].name for i in translated}
    # Every f32/f64 kernel is covered: the FP8 ones use i1/bf16/f16 steps.
    expected = {p.name for p in paths if re.search(r"_f(32|64)_", p.name)}
    assert expected <= covered, sorted(expected - covered)


def test_random_programs_translate_as_convert_to_llvm() -> None:
    rng = random.Random(20261202)
    counts = _check([generated_program(rng) for _ in range(CASES)])
    print(dict(counts))
    assert counts["same"] >= CASES // 4, counts


CAST_TYPES = ["i8", "i16", "i32", "i64", "index", "f16", "f32", "f64"]


def _casts() -> list[str]:
    """A function per cast op between every two of `CAST_TYPES` it allows."""
    pairs = [(a, b) for a in CAST_TYPES for b in CAST_TYPES if a != b]
    ops = ["extsi", "extui", "trunci", "sitofp", "uitofp", "fptosi", "fptoui",
           "extf", "truncf", "index_cast", "bitcast"]  # fmt: skip
    return [
        f"func.func @f(%a: {a}) -> {b} {{\n  %c = arith.{op} %a : {a} to {b}\n"
        f"  func.return %c : {b}\n}}\n"
        for a, b in pairs
        for op in ops
    ]


def test_every_arith_and_math_op_and_cast_translates_as_convert_to_llvm() -> None:
    """The op sweep's cases and every cast; those that do not verify (a cast
    between the wrong kinds or widths) do not count."""
    sweep = [sweep_function("f", line, type_) for line, type_ in sweep_cases()]
    counts = _check(sweep + _casts())
    print(dict(counts))
    assert counts["same"] >= 250, counts


def test_compile_time_module_translates_as_convert_to_llvm() -> None:
    from bench.compile_time import chains_text, module_text

    counts = _check([module_text(12), chains_text(4)])
    assert counts == Counter(same=2), counts


EDGES = {
    "quoted name": """func.func @"my kernel"(%a: memref<4xf32>) -> f32 {
  %c = arith.constant 3 : index
  %v = memref.load %a[%c] : memref<4xf32>
  func.return %v : f32
}""",
    "largest index": """func.func @f(%a: memref<?x4xf32>) -> f32 {
  %c = arith.constant 9223372036854775807 : index
  %d = arith.constant 3 : index
  %v = memref.load %a[%c, %d] : memref<?x4xf32>
  func.return %v : f32
}""",
    "i32 edges of GEP constants": """func.func @f(%a: memref<?xf32>) -> f32 {
  %c = arith.constant 2147483648 : index
  %v = memref.load %a[%c] : memref<?xf32>
  %e = arith.constant -2147483648 : index
  %w = memref.load %a[%e] : memref<?xf32>
  %s = arith.addf %v, %w : f32
  func.return %s : f32
}""",
    "signalling NaN": """func.func @f(%x: f32) -> f32 {
  %c = arith.constant 0x7FA00001 : f32
  %s = arith.addf %x, %c : f32
  func.return %s : f32
}""",
    "index vectors": """func.func @f(%a: memref<8xindex>) -> vector<4xindex> {
  %c = arith.constant 4 : index
  %v = vector.load %a[%c] : memref<8xindex>, vector<4xindex>
  %k = arith.constant dense<[1, 2, 3, -1]> : vector<4xindex>
  %s = arith.addi %v, %k : vector<4xindex>
  func.return %s : vector<4xindex>
}""",
    "scf.for on i32": """func.func @f(%n: i32, %x: f64) -> f64 {
  %z = arith.constant 0 : i32
  %o = arith.constant 1 : i32
  %r = scf.for %i = %z to %n step %o iter_args(%acc = %x) -> (f64) : i32 {
    %y = arith.mulf %acc, %acc fastmath<fast> : f64
    scf.yield %y : f64
  }
  func.return %r : f64
}""",
    # Found when written: the bounds' max and min were computed in another order.
    "max/min loop bounds": """func.func @f(%a: memref<?xf32>, %n: index, %m: index) {
  %c = arith.constant 1.0 : f32
  affine.for %i = max affine_map<(d0, d1) -> (d0, d1)>(%n, %m)
      to min affine_map<(d0)[s0] -> (d0 * 2 + 3, s0)>(%n)[%m] {
    affine.store %c, %a[%i * 3 + 1] : memref<?xf32>
  }
  func.return
}""",
}


def test_edge_cases_translate_as_convert_to_llvm() -> None:
    assert _check(list(EDGES.values())) == Counter(same=len(EDGES))


UNCOVERED = {
    "f16 to f64": "func.func @f(%x: f16) -> f64 {\n"
    "  %w = arith.extf %x : f16 to f64\n  func.return %w : f64\n}",
    "bf16": "func.func @f(%x: bf16) -> bf16 {\n"
    "  %s = arith.addf %x, %x : bf16\n  func.return %s : bf16\n}",
    "f16 fma": "func.func @f(%x: f16) -> f16 {\n"
    "  %s = math.fma %x, %x, %x : f16\n  func.return %s : f16\n}",
    "i1 in memory": "func.func @f(%m: memref<4xi1>) -> i1 {\n"
    "  %c = arith.constant 1 : index\n  %v = memref.load %m[%c] : memref<4xi1>\n"
    "  func.return %v : i1\n}",
    "two results": "func.func @f(%x: f32) -> (f32, f32) {\n"
    "  func.return %x, %x : f32, f32\n}",
    "conditional": "func.func @f(%c: i1, %x: f32) -> f32 {\n"
    "  %r = scf.if %c -> (f32) {\n    scf.yield %x : f32\n"
    "  } else {\n    %n = arith.negf %x : f32\n    scf.yield %n : f32\n  }\n"
    "  func.return %r : f32\n}",
}


@pytest.mark.parametrize("name", UNCOVERED)
def test_uncovered_ops_are_left_to_convert_to_llvm(name: str) -> None:
    both = _both(UNCOVERED[name])
    assert both is not None
    direct, dialect = both
    assert direct is None
    assert "define" in dialect


MIXED = """
func.func @single(%a: !matrix.matrix<4x4xf32>, %b: !matrix.matrix<4x4xf32>) -> !matrix.matrix<4x4xf32> {
  %c = matrix.matmul %a, %b : !matrix.matrix<4x4xf32>, !matrix.matrix<4x4xf32> -> !matrix.matrix<4x4xf32>
  func.return %c : !matrix.matrix<4x4xf32>
}
func.func @half(%a: !matrix.matrix<2x2xf16>, %b: !matrix.matrix<2x2xf16>) -> !matrix.matrix<2x2xf16> {
  %c = matrix.add %a, %b : !matrix.matrix<2x2xf16>
  func.return %c : !matrix.matrix<2x2xf16>
}
"""


WITH_CALL = """
func.func @twice(%x: f32) -> f32 {
  %y = arith.addf %x, %x : f32
  func.return %y : f32
}
func.func @caller(%a: !matrix.matrix<2x2xf32>, %x: f32) -> !matrix.matrix<2x2xf32> {
  %s = func.call @twice(%x) : (f32) -> f32
  %t = matrix.splat %s : !matrix.matrix<2x2xf32>
  %b = matrix.mul %a, %t : !matrix.matrix<2x2xf32>
  func.return %b : !matrix.matrix<2x2xf32>
}
"""


def _mx_opt(args: list[str], stdin: str) -> str:
    done = subprocess.run(
        [MX_OPT, *args],
        input=stdin,
        capture_output=True,
        text=True,
        check=True,
    )
    return done.stdout


@pytest.mark.parametrize("source", [MIXED, WITH_CALL], ids=["mixed", "call"])
def test_mx_opt_translates_as_the_two_step_pipeline(source: str) -> None:
    """`-p mx-lower-to-llvm -t llvm` (direct where covered: per function, or
    the whole module when functions call each other) against lowering to the
    llvm dialect and translating that."""
    target = ["-t", f'llvm{{triple="{TRIPLE}" data_layout="{LAYOUT}"}}']
    one_step = _mx_opt(["-p", "mx-lower-to-llvm", *target], source)
    lowered = _mx_opt(["-p", "mx-lower-to-llvm"], source)
    two_steps = _mx_opt(target, lowered)
    assert one_step.count("define ") == 2
    assert _alpha(one_step) == _alpha(two_steps)


def test_calls_are_covered() -> None:
    both = _both(WITH_CALL)
    assert both is not None and both[0] is not None
    assert _alpha(both[0]) == _alpha(both[1])
    assert "call float @twice(float" in both[0]

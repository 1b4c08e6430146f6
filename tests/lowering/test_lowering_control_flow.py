"""Matrices carried by control flow (cf branches, select, iter_args, while,
index_switch), long fused chains and values the lowering must not judge at
compile time: compiled with `mx-lower-to-llvm`, JIT-run and compared bit for
bit with the interpreter on the original program; likewise random programs of
`mx.testing.matrix_dags` that carry matrices through `scf` control flow (CI:
the first 12 from seed 0; `MX_CONTROL_FLOW_JIT_EXAMPLES` for more)."""

import os
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from xdsl.parser import Parser

from mx.diagnostics import OpDiagnostic
from mx.frontend import mx_context
from mx.interpreters import UndefinedBehaviorError, run_function
from mx.jit import compile_module
from mx.lowering.matrix_to_affine.convert_matrix_to_affine import (
    ConvertMatrixToAffinePass,
)
from mx.testing.matrix_dags import ProgramGenerator
from mx.tools.mx_opt import main as mx_opt

M = "!matrix.matrix<3x5xf32>"
S = "!matrix.matrix<5x5xf32>"

PROGRAMS: dict[str, str] = {
    # Both edges of a cond_br into one block, with different matrices.
    "same_block_twice": f"""
func.func @f(%c: i1, %a: {M}, %b: {M}) -> {M} {{
  %s = matrix.sub %a, %b : {M}
  cf.cond_br %c, ^join(%a : {M}), ^join(%s : {M})
^join(%m: {M}):
  %r = matrix.add %m, %b : {M}
  func.return %r : {M}
}}""",
    # A diamond: each side computes its own matrix (fused into the edge copy).
    "diamond": f"""
func.func @f(%c: i1, %a: {M}, %b: {M}) -> {M} {{
  cf.cond_br %c, ^left, ^right
^left:
  %l = matrix.mul %a, %b : {M}
  cf.br ^join(%l, %a : {M}, {M})
^right:
  %t = matrix.neg %a : {M}
  cf.br ^join(%b, %t : {M}, {M})
^join(%x: {M}, %y: {M}):
  %r = matrix.sub %x, %y : {M}
  func.return %r : {M}
}}""",
    # A cf loop swapping two carried matrices (a parallel copy) and
    # accumulating into a third; the exit edge carries one of them.
    "cf_loop_swap": f"""
func.func @f(%c: i1, %a: {S}, %b: {S}) -> {S} {{
  %zero = arith.constant 0 : index
  %one = arith.constant 1 : index
  %n = arith.constant 3 : index
  cf.br ^head(%zero, %a, %b : index, {S}, {S})
^head(%i: index, %x: {S}, %y: {S}):
  %more = arith.cmpi ult, %i, %n : index
  cf.cond_br %more, ^body, ^exit(%y : {S})
^body:
  %next = arith.addi %i, %one : index
  %p = matrix.matmul %x, %y : {S}, {S} -> {S}
  cf.br ^head(%next, %y, %p : index, {S}, {S})
^exit(%r: {S}):
  func.return %r : {S}
}}""",
    # arith.select of matrices: fused into its user, and used twice.
    "select": f"""
func.func @f(%c: i1, %a: {M}, %b: {M}) -> {M} {{
  %s = matrix.add %a, %b : {M}
  %p = arith.select %c, %s, %b : {M}
  %q = arith.select %c, %a, %p : {M}
  %r = matrix.mul %q, %q : {M}
  %t = matrix.add %r, %q : {M}
  func.return %t : {M}
}}""",
    # affine.for iter_args carrying two matrices that swap each iteration.
    "affine_iter_args": f"""
func.func @f(%c: i1, %a: {S}, %b: {S}) -> {S} {{
  %r:2 = affine.for %i = 0 to 4 iter_args(%x = %a, %y = %b) -> ({S}, {S}) {{
    %s = matrix.add %x, %y : {S}
    affine.yield %y, %s : {S}, {S}
  }}
  %t = matrix.matmul %r#0, %r#1 : {S}, {S} -> {S}
  func.return %t : {S}
}}""",
    # scf.for carrying a matrix and a scalar, matrix result of scf.if inside.
    "scf_for_if": f"""
func.func @f(%c: i1, %a: {S}, %b: {S}) -> {S} {{
  %lo = arith.constant 0 : index
  %hi = arith.constant 3 : index
  %st = arith.constant 1 : index
  %r = scf.for %i = %lo to %hi step %st iter_args(%x = %a) -> ({S}) {{
    %y = scf.if %c -> ({S}) {{
      %p = matrix.matmul %x, %b : {S}, {S} -> {S}
      scf.yield %p : {S}
    }} else {{
      %q = matrix.sub %x, %b : {S}
      scf.yield %q : {S}
    }}
    scf.yield %y : {S}
  }}
  func.return %r : {S}
}}""",
    # scf.while with matrices in both regions.
    "scf_while": f"""
func.func @f(%c: i1, %a: {S}, %b: {S}) -> {S} {{
  %zero = arith.constant 0 : index
  %r:2 = scf.while (%i = %zero, %x = %a) : (index, {S}) -> (index, {S}) {{
    %n = arith.constant 2 : index
    %more = arith.cmpi ult, %i, %n : index
    %t = matrix.transpose %x : {S} -> {S}
    scf.condition(%more) %i, %t : index, {S}
  }} do {{
  ^bb0(%j: index, %y: {S}):
    %one = arith.constant 1 : index
    %k = arith.addi %j, %one : index
    %z = matrix.add %y, %b : {S}
    scf.yield %k, %z : index, {S}
  }}
  func.return %r#1 : {S}
}}""",
    # scf.index_switch yielding matrices: case 1 when %c, else the default.
    "index_switch": f"""
func.func @f(%c: i1, %a: {S}, %b: {S}) -> {S} {{
  %w = arith.extui %c : i1 to i64
  %i = arith.index_cast %w : i64 to index
  %r = scf.index_switch %i -> {S}
  case 2 {{
    scf.yield %a : {S}
  }}
  case 1 {{
    %p = matrix.matmul %a, %b : {S}, {S} -> {S}
    scf.yield %p : {S}
  }}
  default {{
    %n = matrix.sub %b, %a : {S}
    scf.yield %n : {S}
  }}
  func.return %r : {S}
}}""",
}


def _same(a: Any, b: Any) -> bool:
    x, y = np.asarray(a), np.asarray(b)
    if x.shape != y.shape or x.dtype != y.dtype:
        return False
    if x.dtype.kind == "f":
        nan = np.isnan(x) & np.isnan(y)
        return bool(
            np.all(nan | (x.view(f"u{x.itemsize}") == y.view(f"u{y.itemsize}")))
        )
    return bool(np.array_equal(x, y))


def _interpretable(text: str) -> str:
    """`text` with `affine.for` iter_args (which xDSL's interpreter does not
    run) spelled as the equivalent `scf.for`."""
    return text.replace(
        "%r:2 = affine.for %i = 0 to 4 iter_args",
        "%lo = arith.constant 0 : index\n  %hi = arith.constant 4 : index\n"
        "  %st = arith.constant 1 : index\n"
        "  %r:2 = scf.for %i = %lo to %hi step %st iter_args",
    ).replace("affine.yield", "scf.yield")


def _check(text: str, *arguments: Any) -> None:
    compiled = compile_module(text)["f"]
    module = Parser(mx_context(), _interpretable(text)).parse_module()
    (expected,) = run_function(module, "f", *arguments)
    assert _same(compiled(*arguments), expected)


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_control_flow_carrying_matrices(name: str) -> None:
    text = PROGRAMS[name]
    rng = np.random.default_rng(len(name))
    shape = (3, 5) if M in text.split("\n")[1] else (5, 5)
    for c in (True, False):
        a = rng.standard_normal(shape).astype(np.float32)
        b = rng.standard_normal(shape).astype(np.float32)
        _check(text, c, a, b)


CONTROL_FLOW_JIT_EXAMPLES = int(os.environ.get("MX_CONTROL_FLOW_JIT_EXAMPLES", "12"))
SCF_CARRIERS = {"scf.if", "scf.index_switch", "scf.for", "scf.while"}


def _generated_with_scf_carriers(count: int) -> list[int]:
    """The first `count` seeds whose program carries matrices through `scf`
    and has no `contract` flags (whose fusion may change a rounding)."""
    seeds: list[int] = []
    seed = 0
    while len(seeds) < count:
        generator = ProgramGenerator(seed)
        generator.build()
        if SCF_CARRIERS & set(generator.covered) and not generator.use_contract:
            seeds.append(seed)
        seed += 1
    return seeds


@pytest.mark.parametrize(
    "seed", _generated_with_scf_carriers(CONTROL_FLOW_JIT_EXAMPLES)
)
def test_generated_control_flow_jit(seed: int) -> None:
    """A random program carrying matrices through `scf` ops, JIT-compiled,
    gives the interpreter's results and memory bit for bit (any NaN matches
    any NaN)."""
    module, arguments = ProgramGenerator(seed).build()
    interpreted = [a.copy() if isinstance(a, np.ndarray) else a for a in arguments]
    compiled = [a.copy() if isinstance(a, np.ndarray) else a for a in arguments]
    try:
        expected = run_function(module.clone(), "f", *interpreted)
    except UndefinedBehaviorError:
        pytest.skip("the program has undefined behaviour")
    got = compile_module(str(module))["f"](*compiled)
    got = got if isinstance(got, tuple) else (got,)
    pairs = [*zip(expected, got, strict=True)]
    pairs += [
        (x, y)
        for x, y in zip(interpreted, compiled, strict=True)
        if isinstance(x, np.ndarray)
    ]
    for x, y in pairs:
        assert _same(x, y), f"seed {seed}:\n{module}"


def test_canonicalize_turns_a_branch_into_a_select() -> None:
    """`canonicalize` (part of mx-lower-to-llvm) folds this diamond, whose
    blocks only forward matrices, into `arith.select` of matrices."""
    text = f"""
func.func @f(%c: i1, %a: {M}, %b: {M}) -> {M} {{
  cf.cond_br %c, ^l, ^r
^l:
  cf.br ^join(%a : {M})
^r:
  cf.br ^join(%b : {M})
^join(%m: {M}):
  func.return %m : {M}
}}"""
    rng = np.random.default_rng(1)
    a = rng.standard_normal((3, 5)).astype(np.float32)
    b = rng.standard_normal((3, 5)).astype(np.float32)
    for c in (True, False):
        _check(text, c, a, b)


def _chain(length: int) -> str:
    """`length` dependent elementwise ops, all fused into one loop nest."""
    t = "!matrix.matrix<4x4xf32>"
    lines = [
        f"func.func @f(%a: {t}, %b: {t}) -> {t} {{",
        f"  %v0 = matrix.add %a, %b : {t}",
    ]
    for i in range(1, length):
        if i % 4 == 0:
            lines.append(f"  %v{i} = matrix.transpose %v{i - 1} : {t} -> {t}")
            continue
        op = ("matrix.add", "matrix.mul", "matrix.sub", "matrix.add")[i % 4]
        lines.append(f"  %v{i} = {op} %v{i - 1}, %b : {t}")
    lines += [f"  func.return %v{length - 1} : {t}", "}"]
    return "\n".join(lines)


@pytest.mark.parametrize("length", [500])
def test_long_dependent_chain(length: int) -> None:
    rng = np.random.default_rng(2)
    a = rng.standard_normal((4, 4)).astype(np.float32)
    b = (rng.standard_normal((4, 4)) * 0.01 + 1).astype(np.float32)
    _check(_chain(length), a, b)


def test_out_of_range_dynamic_stride_in_a_branch_not_taken() -> None:
    """A dynamic offset and stride (constants only after canonicalize) that
    would overflow the address arithmetic are undefined behaviour only if
    executed: the program compiles and runs the branch that is taken."""
    t = "!matrix.matrix<3x3xf32>"
    text = f"""
func.func @f(%c: i1, %mem: memref<16xf32>, %a: {t}) -> f32 {{
  %r = scf.if %c -> (f32) {{
    %s = arith.constant 9223372036854775807 : index
    %o = arith.constant 100 : index
    %m = matrix.column_major_load %mem[%o] stride %s : memref<16xf32> -> {t}
    %e = matrix.extract %m[1, 2] : {t}
    matrix.row_major_store %a, %mem[%s] stride %s : {t}, memref<16xf32>
    scf.yield %e : f32
  }} else {{
    %e = matrix.extract %a[2, 1] : {t}
    scf.yield %e : f32
  }}
  func.return %r : f32
}}"""
    a = np.arange(9, dtype=np.float32).reshape(3, 3)
    mem = np.zeros(16, np.float32)
    assert compile_module(text)["f"](False, mem, a) == a[2, 1]


def test_use_before_definition_is_reported(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """`%m = matrix.add %m, %m` does not verify; if it reaches the lowering
    (verification disabled, or the pass run from Python), the lowering reports
    it at the op instead of following the cycle."""
    text = """func.func @f() -> !matrix.matrix<2x2xf32> {
  %m = matrix.add %m, %m : !matrix.matrix<2x2xf32>
  func.return %m : !matrix.matrix<2x2xf32>
}
"""
    module = Parser(mx_context(), text).parse_module()
    with pytest.raises(OpDiagnostic, match="used before its definition"):
        ConvertMatrixToAffinePass().apply(mx_context(), module)
    path = tmp_path / "self.mlir"
    path.write_text(text)
    assert mx_opt([str(path), "-p", "convert-matrix-to-affine"]) == 1
    assert f"{path}:2:" in capsys.readouterr().err

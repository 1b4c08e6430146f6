"""Every `matrix` and `arbfp` op, compiled (`mx-lower-to-llvm` + JIT) and
interpreted on the same inputs, gives the same bits; the emitted LLVM IR of
all of them is accepted by `llvm-as-16`.

Functions take and return matrices, so the JIT's matrix ABI (column-major
buffers, out-parameters) is exercised too. Ops without `contract` must agree
bit for bit; NaNs compare equal whatever their payload.
"""

import os
import subprocess
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from xdsl.parser import Parser

from mx import jit
from mx.frontend import mx_context
from mx.interpreters import UndefinedBehaviorError, run_function
from mx.jit import compile_module, lower_to_llvm_ir
from mx.testing.matrix_dags import MEMORY_SIZE, ProgramGenerator
from tests.reference.bits import same_bits
from tests.reference.element_types import BF16, ELEMENT_DTYPES
from tests.system_tools import required_tool

DTYPES = ELEMENT_DTYPES
FLOATS = ("f16", "bf16", "f32", "f64")
INTS = ("i8", "i16", "i32", "i64")


def m(rows: int, cols: int, t: str) -> str:
    return f"!matrix.matrix<{rows}x{cols}x{t}>"


def _functions(t: str) -> list[tuple[str, str]]:
    """(name, definition) of one function per op for element type `t`."""
    a, b, s = m(3, 4, t), m(4, 2, t), m(3, 2, t)
    fm = " fastmath<nnan>" if t in FLOATS else ""
    fns = [
        ("add", f"(%x: {a}, %y: {a}) -> {a} {{\n %r = matrix.add %x, %y{fm} : {a}"),
        ("sub", f"(%x: {a}, %y: {a}) -> {a} {{\n %r = matrix.sub %x, %y : {a}"),
        ("mul", f"(%x: {a}, %y: {a}) -> {a} {{\n %r = matrix.mul %x, %y : {a}"),
        (
            "matmul",
            f"(%x: {a}, %y: {b}) -> {s} {{\n %r = matrix.matmul %x, %y : {a}, {b} -> {s}",
        ),
        (
            "matmul_add",
            f"(%x: {a}, %y: {b}, %z: {s}) -> {s} {{\n"
            f" %r = matrix.matmul_add %x, %y, %z : {a}, {b}, {s} -> {s}",
        ),
        (
            "transpose",
            f"(%x: {a}) -> {m(4, 3, t)} {{\n %r = matrix.transpose %x : {a} -> {m(4, 3, t)}",
        ),
        ("splat", f"(%x: {t}) -> {a} {{\n %r = matrix.splat %x : {a}"),
        (
            "extract_insert",
            f"(%x: {a}, %i: index) -> {a} {{\n"
            f" %e = matrix.extract %x[%i, 3] : {a}\n"
            f" %r = matrix.insert %e, %x[0, %i] : {a}",
        ),
        (
            "load_store",
            f"(%mem: memref<?x{t}>, %out: memref<?x{t}>) -> {a} {{\n"
            f" %r = matrix.column_major_load %mem[2] stride 5 : memref<?x{t}> -> {a}\n"
            f" matrix.row_major_store %r, %out[1] stride 6 : {a}, memref<?x{t}>",
        ),
        (
            "matvec",
            f"(%x: {a}, %v: vector<4x{t}>, %c: vector<3x{t}>) -> vector<3x{t}> {{\n"
            f" %r = matrix.matvec %x, %v, %c : {a}, vector<4x{t}>, vector<3x{t}> -> vector<3x{t}>",
        ),
        (
            "outer_product",
            f"(%u: vector<3x{t}>, %v: vector<4x{t}>) -> {a} {{\n"
            f" %r = matrix.outer_product %u, %v : vector<3x{t}>, vector<4x{t}> -> {a}",
        ),
    ]
    if t in FLOATS:
        fns += [
            ("div", f"(%x: {a}, %y: {a}) -> {a} {{\n %r = matrix.div %x, %y : {a}"),
            ("neg", f"(%x: {a}) -> {a} {{\n %r = matrix.neg %x : {a}"),
            (
                "fma",
                f"(%x: {a}, %y: {a}, %z: {a}) -> {a} {{\n %r = matrix.fma %x, %y, %z : {a}",
            ),
            (
                "constant",
                f"() -> {m(2, 2, t)} {{\n"
                f" %r = matrix.constant dense<[[1.5, -0.0], [3.25e2, 7.0e-3]]> : {m(2, 2, t)}",
            ),
        ]
        for target in ("f32", "i32", "f16", "bf16"):
            fns.append(
                (
                    f"cast_{target}",
                    f"(%x: {a}) -> {m(3, 4, target)} {{\n"
                    f" %r = matrix.cast %x : {a} to {m(3, 4, target)}",
                )
            )
    else:
        fns += [
            (
                "div_u",
                f"(%x: {a}, %y: {a}) -> {a} {{\n %r = matrix.div %x, %y {{unsigned}} : {a}",
            ),
            ("div_s", f"(%x: {a}, %y: {a}) -> {a} {{\n %r = matrix.div %x, %y : {a}"),
            (
                "constant",
                f"() -> {m(2, 2, t)} {{\n %r = matrix.constant dense<[[1, -2], [3, 100]]> : {m(2, 2, t)}",
            ),
            (
                "cast_f32",
                f"(%x: {a}) -> {m(3, 4, 'f32')} {{\n %r = matrix.cast %x : {a} to {m(3, 4, 'f32')}",
            ),
            (
                "cast_u_f64",
                f"(%x: {a}) -> {m(3, 4, 'f64')} {{\n"
                f" %r = matrix.cast %x {{unsigned}} : {a} to {m(3, 4, 'f64')}",
            ),
            (
                "cast_i16",
                f"(%x: {a}) -> {m(3, 4, 'i16')} {{\n %r = matrix.cast %x : {a} to {m(3, 4, 'i16')}",
            ),
        ]
    return fns


def _module(t: str) -> tuple[str, list[str]]:
    functions = _functions(t)
    text = "\n".join(
        f"func.func @{name}{body}\n func.return %r : {_result_type(body)}\n}}"
        for name, body in functions
    )
    return text, [name for name, _ in functions]


def _result_type(body: str) -> str:
    """The type after the signature's `->` (the first line of `body`)."""
    signature = body.split("\n")[0]
    return signature.split(") -> ")[1].removesuffix(" {")


def _random(
    dtype: np.dtype[Any], shape: tuple[int, ...], rng: np.random.Generator
) -> Any:
    if dtype.kind in "iu":
        info = np.iinfo(dtype)
        values = rng.integers(info.min, info.max, shape, dtype=np.int64, endpoint=True)
        values[values == 0] = 1  # division operands stay defined
        if (
            dtype == np.int8
            or dtype == np.int16
            or dtype == np.int32
            or dtype == np.int64
        ):
            values[values == info.min] = info.min + 1  # INT_MIN / -1 is UB
        return values.astype(dtype)
    values = rng.standard_normal(shape) * 4.0 ** rng.integers(-3, 4, shape)
    return values.astype(dtype)


def _arguments(
    module_text: str, name: str, t: str, rng: np.random.Generator
) -> Callable[[], list[Any]]:
    """A factory of fresh arguments (memrefs are written to, so each run gets copies)."""
    ctx = mx_context()
    func = next(
        op
        for op in Parser(ctx, module_text).parse_module().walk()
        if getattr(op, "sym_name", None) is not None and op.sym_name.data == name  # pyright: ignore[reportAttributeAccessIssue]
    )
    dtype = DTYPES[t]
    values: list[Any] = []
    for arg_type in func.function_type.inputs.data:  # pyright: ignore[reportAttributeAccessIssue]
        text = str(arg_type)
        if text.startswith("!matrix.matrix"):
            rows, cols = (int(d) for d in text.split("<")[1].split("x")[:2])
            values.append(_random(dtype, (rows, cols), rng))
        elif text.startswith("vector"):
            values.append(_random(dtype, (int(text.split("<")[1].split("x")[0]),), rng))
        elif text.startswith("memref"):
            values.append(_random(dtype, (40,), rng))
        elif text == "index":
            values.append(int(rng.integers(0, 3)))
        else:
            values.append(_random(dtype, (1,), rng)[0])
    return lambda: [v.copy() if isinstance(v, np.ndarray) else v for v in values]


def _same(a: Any, b: Any) -> bool:
    x, y = np.asarray(a), np.asarray(b)
    if x.shape != y.shape:
        return False
    if x.dtype.kind == "f" or x.dtype == BF16:
        xf, yf = x.astype(np.float64), y.astype(np.float64)
        both_nan = np.isnan(xf) & np.isnan(yf)
        return bool(
            np.all(both_nan | (x.view(f"u{x.itemsize}") == y.view(f"u{y.itemsize}")))
        )
    return bool(np.array_equal(x, y))


@pytest.mark.parametrize("t", list(DTYPES))
def test_every_matrix_op_jit_equals_interpreter(t: str) -> None:
    text, names = _module(t)
    compiled = compile_module(text)
    module = Parser(mx_context(), text).parse_module()
    rng = np.random.default_rng(sum(map(ord, t)))
    for name in names:
        fresh = _arguments(text, name, t, rng)
        for _ in range(3):
            jit_args, interp_args = fresh(), fresh()
            jit_result = compiled[name](*jit_args)
            (interp_result,) = run_function(module, name, *interp_args)
            assert _same(jit_result, interp_result), (name, jit_result, interp_result)
            for jit_arg, interp_arg in zip(jit_args, interp_args, strict=True):
                assert _same(jit_arg, interp_arg), (
                    f"{name}: memory differs after the call"
                )


ARBFP = """
func.func @decode(%q: !matrix.matrix<16x16xi8>) -> !matrix.matrix<16x16xf32> {
  %r = arbfp.convert_from f8e5m2 %q : !matrix.matrix<16x16xi8> to !matrix.matrix<16x16xf32>
  func.return %r : !matrix.matrix<16x16xf32>
}
func.func @decode_fp4(%q: !matrix.matrix<4x4xi4>) -> !matrix.matrix<4x4xbf16> {
  %r = arbfp.convert_from f4e2m1fn %q : !matrix.matrix<4x4xi4> to !matrix.matrix<4x4xbf16>
  func.return %r : !matrix.matrix<4x4xbf16>
}
func.func @encode(%x: !matrix.matrix<16x16xf32>) -> !matrix.matrix<16x16xi8> {
  %r = arbfp.convert_to f8e4m3fn %x rounding toward_zero saturate : !matrix.matrix<16x16xf32> to !matrix.matrix<16x16xi8>
  func.return %r : !matrix.matrix<16x16xi8>
}
"""


def test_arbfp_on_matrices_jit_equals_interpreter() -> None:
    compiled = compile_module(ARBFP)
    module = Parser(mx_context(), ARBFP).parse_module()
    every_byte = np.arange(256, dtype=np.uint8).view(np.int8).reshape(16, 16)
    nibbles = np.arange(16, dtype=np.int8).reshape(4, 4)
    rng = np.random.default_rng(5)
    values = (rng.standard_normal((16, 16)) * 300).astype(np.float32)
    for name, argument in (
        ("decode", every_byte),
        ("decode_fp4", nibbles),
        ("encode", values),
    ):
        (expected,) = run_function(module, name, argument)
        assert _same(compiled[name](argument), expected), name


def test_llvm_as_accepts_every_op(tmp_path: Path) -> None:
    llvm_as = required_tool("llvm-as-16")
    for t in DTYPES:
        ir, _, _ = lower_to_llvm_ir(_module(t)[0], "mx-lower-to-llvm")
        path = tmp_path / f"{t}.ll"
        path.write_text(ir)
        done = subprocess.run(
            [llvm_as, str(path), "-o", os.devnull], capture_output=True, text=True
        )
        assert done.returncode == 0, done.stderr
    ir, _, _ = lower_to_llvm_ir(ARBFP, "mx-lower-to-llvm")
    (tmp_path / "arbfp.ll").write_text(ir)
    done = subprocess.run(
        [llvm_as, str(tmp_path / "arbfp.ll"), "-o", os.devnull],
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0, done.stderr


@pytest.mark.parametrize("t", FLOATS)
def test_float_min_max_jit_equals_interpreter(t: str) -> None:
    """`maximumf`/`minimumf` (NaN wins, -0 < +0) and `maxnumf`/`minnumf` (a
    NaN operand is ignored) on every pair of special values, as vectors. The
    interpreter had no maxnumf/minnumf. Between +0 and -0, which one
    maxnumf/minnumf return is left open by LLVM: not compared."""
    ops = ("maximumf", "minimumf", "maxnumf", "minnumf")
    specials = [0.0, -0.0, 1.5, -2.0, np.inf, -np.inf, np.nan]
    pairs = [(a, b) for a in specials for b in specials]
    n = len(pairs)
    v = f"vector<{n}x{t}>"
    source = "".join(
        f"func.func @{op}(%a: {v}, %b: {v}) -> {v} {{\n"
        f"  %c = arith.{op} %a, %b : {v}\n  func.return %c : {v}\n}}\n"
        for op in ops
    )
    dtype = DTYPES[t]
    a = np.array([p[0] for p in pairs]).astype(dtype)
    b = np.array([p[1] for p in pairs]).astype(dtype)
    compiled = compile_module(source)
    module = Parser(mx_context(), source).parse_module()
    zeros = (a == 0) & (b == 0)
    one_nan = np.isnan(a) != np.isnan(b)
    for op in ops:
        jit = getattr(compiled, op)(a, b)
        (interpreted,) = run_function(module, op, a, b)
        same = (_raw(jit) == _raw(interpreted)) | (
            np.isnan(jit) & np.isnan(interpreted)
        )
        if op.endswith("numf"):
            same |= zeros
            # The number, where one operand is a NaN.
            number = np.where(np.isnan(a), b, a)[one_nan]
            assert np.array_equal(jit[one_nan], number), op
        else:
            assert np.isnan(jit[np.isnan(a) | np.isnan(b)]).all(), op
        assert same.all(), (op, a[~same], b[~same], jit[~same], interpreted[~same])


def _raw(x: np.ndarray) -> np.ndarray:
    return x.view(f"u{x.dtype.itemsize}")


DAG_EXAMPLES = int(os.environ.get("MX_JIT_DAG_EXAMPLES", "60"))
"""Random programs the JIT runs beside the interpreter (a long run: 2000)."""


def test_jit_runs_random_programs_like_the_interpreter() -> None:
    """`mx.testing.matrix_dags` programs without `contract` (DAGs over every
    matrix op, matrices carried by control flow, results returned once or
    twice: computed in their out-parameters or copied there), compiled and
    interpreted on the same arguments: every result and the memory argument
    agree bit for bit. Programs with undefined behaviour are not compared."""
    compared: Counter[str] = Counter()
    for seed in range(DAG_EXAMPLES):
        generator = ProgramGenerator(seed)
        module, args = generator.build()
        if generator.use_contract:
            continue
        interpreted = [a.copy() if isinstance(a, np.ndarray) else a for a in args]
        try:
            expected = run_function(module, "f", *interpreted)
        except UndefinedBehaviorError:
            continue
        compiled = [a.copy() if isinstance(a, np.ndarray) else a for a in args]
        got = jit.jit(module, "f")(*compiled)
        got = got if isinstance(got, tuple) else (got,)
        memories = [
            (i, c)
            for i, (a, c) in enumerate(zip(interpreted, compiled, strict=True))
            if isinstance(a, np.ndarray) and a.ndim == 1 and a.size == MEMORY_SIZE
        ]
        pairs = [*zip(expected, got, strict=True)] + [
            (interpreted[i], c) for i, c in memories
        ]
        for i, (e, g) in enumerate(pairs):
            e_arr, g_arr = np.asarray(e), np.asarray(g)
            assert same_bits(e_arr, g_arr), f"seed {seed}, result {i}:\n{module}"
        compared.update(generator.covered)
        compared["programs"] += 1
    print("compared:", dict(sorted(compared.items())))
    assert compared["programs"] >= DAG_EXAMPLES // 4
    assert compared["returned twice"] > 0

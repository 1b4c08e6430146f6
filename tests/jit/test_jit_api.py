"""The Python API's contract: one error type with mx-opt's located messages,
read-only outputs refused, i1/sub-byte vectors, several results, a bounded
compile cache."""

import gc
import re
import weakref
from pathlib import Path
from typing import Any

import ml_dtypes
import numpy as np
import pytest

import mx
from mx import jit
from mx.errors import ArgumentError, CompileError, MXError, UnknownFunctionError
from mx.jit import compile_module

COPY = """
func.func @copy(%src: memref<4xf32>, %dst: memref<4xf32>) {
  affine.for %i = 0 to 4 {
    %x = affine.load %src[%i] : memref<4xf32>
    affine.store %x, %dst[%i] : memref<4xf32>
  }
  func.return
}
"""


def test_read_only_outputs_are_refused_and_left_untouched() -> None:
    copy = compile_module(COPY).copy
    src = np.arange(4, dtype=np.float32)
    src.flags.writeable = False  # only read: accepted
    frozen = np.zeros(4, np.float32)
    frozen.flags.writeable = False
    with pytest.raises(ArgumentError, match="read-only") as error:
        copy(src, frozen)
    assert "argument #1 (%dst) of @copy" in str(error.value)
    assert not frozen.any()
    over_bytes = np.frombuffer(bytes(16), np.float32)
    with pytest.raises(ArgumentError, match="read-only"):
        copy(src, over_bytes)
    assert over_bytes.tobytes() == bytes(16)
    out = np.zeros(4, np.float32)
    copy(src, out)
    np.testing.assert_array_equal(out, src)


BOOLS = """
func.func @logic(%a: vector<8xi1>, %b: vector<8xi1>) -> (vector<8xi1>, vector<8xi1>) {
  %x = arith.xori %a, %b : vector<8xi1>
  %y = arith.andi %a, %b : vector<8xi1>
  func.return %x, %y : vector<8xi1>, vector<8xi1>
}
func.func @flip(%a: vector<5xi1>) -> vector<5xi1> {
  %t = arith.constant dense<true> : vector<5xi1>
  %r = arith.xori %a, %t : vector<5xi1>
  func.return %r : vector<5xi1>
}
"""


def test_i1_vectors_exhaustively() -> None:
    module = compile_module(BOOLS)
    bits = np.arange(256, dtype=np.uint8)[:, None] >> np.arange(8) & 1
    rows = bits.astype(np.bool_)
    for a in rows[::17]:
        for b in rows:
            x, y = module.logic(a, b)
            assert x.dtype == np.bool_ and y.dtype == np.bool_
            np.testing.assert_array_equal(x, a ^ b)
            np.testing.assert_array_equal(y, a & b)
    odd = np.array([True, False, False, True, True])
    np.testing.assert_array_equal(module.flip(odd), ~odd)


def test_several_scalar_results_among_matrices() -> None:
    module = compile_module(
        """
func.func @stats(%m: !matrix.matrix<2x2xf64>, %k: i32) -> (f64, !matrix.matrix<2x2xf64>, i32, f16) {
  %a = matrix.extract %m[0, 1] : !matrix.matrix<2x2xf64>
  %t = matrix.transpose %m : !matrix.matrix<2x2xf64> -> !matrix.matrix<2x2xf64>
  %one = arith.constant 1 : i32
  %n = arith.addi %k, %one : i32
  %h = arith.truncf %a : f64 to f16
  func.return %a, %t, %n, %h : f64, !matrix.matrix<2x2xf64>, i32, f16
}
"""
    )
    m = np.array([[1.0, 2.5], [3.0, 4.0]])
    a, t, n, h = module.stats(m, 41)
    assert a == 2.5 and n == 42 and h == np.float16(2.5)
    assert type(n) is np.int32 and type(h) is np.float16
    np.testing.assert_array_equal(t, m.T)


def _kernel(i: int) -> str:
    return f"func.func @f(%a: i64) -> i64 {{\n  func.return %a : i64\n}} // {i}\n"


def test_the_compile_cache_is_bounded() -> None:
    size = compile_module(_kernel(0)).nbytes
    previous = jit.set_cache_limit(3 * size)
    try:
        first = compile_module(_kernel(0))
        assert compile_module(_kernel(0)) is first
        module_alive = weakref.ref(first)
        f = first.f
        del first
        for i in range(1, 5):
            compile_module(_kernel(i))
        gc.collect()
        assert module_alive() is None, "evicted from the cache"
        assert f(7) == 7, "a function keeps its native code alive"
        assert compile_module(_kernel(4)) is compile_module(_kernel(4))
    finally:
        jit.set_cache_limit(previous)


# -- one error type, mx-opt's located messages -------------------------------


def test_errors_derive_from_the_package_error() -> None:
    assert mx.MXError is MXError
    for cls in (CompileError, ArgumentError, UnknownFunctionError):
        assert issubclass(cls, MXError)


def test_parse_error_is_located_with_source_line_and_caret() -> None:
    source = "func.func @f(%a: f32) -> f32 {\n  %b = arith.addf %a, %zz : f32\n  func.return %b : f32\n}\n"
    with pytest.raises(CompileError) as error:
        compile_module(source)
    lines = str(error.value).split("\n")
    assert lines[0].startswith("<string>:2:")
    assert "error:" in lines[0] and "%zz" in lines[0]
    assert lines[1] == "  %b = arith.addf %a, %zz : f32"
    assert lines[2].strip() == "^"


def test_verifier_error_is_located() -> None:
    source = """
func.func @f(%a: !matrix.matrix<2x3xf32>) -> !matrix.matrix<2x3xf32> {
  %b = matrix.matmul %a, %a : !matrix.matrix<2x3xf32>, !matrix.matrix<2x3xf32> -> !matrix.matrix<2x3xf32>
  func.return %b : !matrix.matrix<2x3xf32>
}
"""
    with pytest.raises(CompileError) as error:
        compile_module(source)
    first, line, caret = str(error.value).split("\n")[:3]
    assert first.startswith("<string>:3:3: error: 'matrix.matmul' op")
    assert line.startswith("  %b = matrix.matmul")
    assert caret == "  ^"


def test_pass_diagnostic_is_located() -> None:
    huge = "!matrix.matrix<65536x65536xf64>"
    source = f"""
func.func @f(%a: {huge}) -> f64 {{
  %b = matrix.matmul %a, %a : {huge}, {huge} -> {huge}
  %e = matrix.extract %b[0, 0] : {huge}
  func.return %e : f64
}}
"""
    with pytest.raises(CompileError, match="too large") as error:
        compile_module(source)
    assert str(error.value).startswith("<string>:3:3: error:")


def test_unknown_pass_and_option_suggest_close_matches() -> None:
    with pytest.raises(CompileError, match="did you mean: convert-matrix-to-affine"):
        compile_module(COPY, "convert-matrix-to-afine")
    with pytest.raises(CompileError, match=r"no option 'vector-bit'.*vector-bits"):
        compile_module(COPY, "convert-matrix-to-affine{vector-bit=0}")


def test_unknown_function_lists_the_functions() -> None:
    module = compile_module(COPY + BOOLS)
    with pytest.raises(UnknownFunctionError, match="@copy, @flip, @logic") as error:
        module["lgic"]
    assert "did you mean: logic" in str(error.value)
    with pytest.raises(AttributeError):
        module.nothing  # noqa: B018
    assert not hasattr(module, "nothing")
    with pytest.raises(UnknownFunctionError, match="@copy"):
        jit.jit(COPY, "paste")


def test_an_empty_module_is_accepted() -> None:
    for source in ("", "\n// nothing\n", "builtin.module {}"):
        assert compile_module(source).functions == {}


def test_argument_errors_are_located_at_the_function() -> None:
    copy = compile_module(COPY).copy
    good = np.zeros(4, np.float32)
    cases = [
        ((good,), "takes 2 arguments, got 1"),
        ((good, np.zeros(4, np.float64)), "dtype float64"),
        ((good, np.zeros(3, np.float32)), "needs 4 elements"),
        ((good, np.zeros(8, np.float32)[::2]), "C-contiguous"),
        ((good, [0.0] * 4), "got list"),
    ]
    for args, message in cases:
        with pytest.raises(MXError, match=message) as error:
            copy(*args)
        assert str(error.value).startswith("<string>:2:1: error: ")
        assert str(error.value).split("\n")[1].startswith("func.func @copy")


def test_natural_containers_of_one_byte_data() -> None:
    module = compile_module(
        """
func.func @widen(%q: memref<4xi8>, %out: memref<4xf32>) {
  affine.for %i = 0 to 4 {
    %x = affine.load %q[%i] : memref<4xi8>
    %y = arbfp.convert_from f8e4m3fn %x : i8 to f32
    affine.store %y, %out[%i] : memref<4xf32>
  }
  func.return
}
"""
    )
    values = np.array([0.5, -1.0, 448.0, 0.015625], ml_dtypes.float8_e4m3fn)
    for view in (values, values.view(np.uint8), values.view(np.int8)):
        out = np.zeros(4, np.float32)
        module.widen(view, out)
        np.testing.assert_array_equal(out, values.astype(np.float32))
    with pytest.raises(ArgumentError, match="dtype float16"):
        module.widen(np.zeros(4, np.float16), np.zeros(4, np.float32))


def test_ml_dtypes_floats_only_fill_containers_of_their_width() -> None:
    module = compile_module(
        """
func.func @fp6(%q: !matrix.matrix<2x2xi6>) -> !matrix.matrix<2x2xf32> {
  %d = arbfp.convert_from f6e2m3fn %q : !matrix.matrix<2x2xi6> to !matrix.matrix<2x2xf32>
  func.return %d : !matrix.matrix<2x2xf32>
}
"""
    )
    q = np.array([[1.0, 2.0], [-3.0, 0.25]], ml_dtypes.float6_e2m3fn)
    np.testing.assert_array_equal(module.fp6(q), q.astype(np.float32))
    # FP8 bytes in an i6 container would be read without their high bits.
    with pytest.raises(ArgumentError, match="float6_e2m3fn or float6_e3m2fn") as error:
        module.fp6(q.astype(ml_dtypes.float8_e4m3fn))
    assert "got dtype float8_e4m3fn" in str(error.value)


SHORT = """
func.func @load(%m: memref<?xf32>) -> !matrix.matrix<4x4xf32> {
  %a = matrix.column_major_load %m[2] stride 5 : memref<?xf32> -> !matrix.matrix<4x4xf32>
  func.return %a : !matrix.matrix<4x4xf32>
}
func.func @store(%a: !matrix.matrix<4x4xf32>, %m: memref<?xf32>) {
  matrix.row_major_store %a, %m[0] : !matrix.matrix<4x4xf32>, memref<?xf32>
  func.return
}
func.func @packed(%m: memref<?xi8>) -> !matrix.matrix<3x3xi4> {
  %a = matrix.column_major_load %m[1] packed : memref<?xi8> -> !matrix.matrix<3x3xi4>
  func.return %a : !matrix.matrix<3x3xi4>
}
func.func @scalar(%m: memref<?xf32>) -> f32 {
  %c = arith.constant 9 : index
  %x = memref.load %m[%c] : memref<?xf32>
  func.return %x : f32
}
func.func @branch(%c: i1, %m: memref<?xf32>) -> !matrix.matrix<4x4xf32> {
  %z = matrix.splat %f : !matrix.matrix<4x4xf32>
  cf.cond_br %c, ^read, ^done(%z : !matrix.matrix<4x4xf32>)
^read:
  %a = matrix.column_major_load %m[100] : memref<?xf32> -> !matrix.matrix<4x4xf32>
  cf.br ^done(%a : !matrix.matrix<4x4xf32>)
^done(%r: !matrix.matrix<4x4xf32>):
  func.return %r : !matrix.matrix<4x4xf32>
}
""".replace("%f :", "%zero :").replace(
    "  %z = matrix.splat", "  %zero = arith.constant 0.0 : f32\n  %z = matrix.splat"
)


def _short_call_arguments(name: str, n: int) -> list[Any]:
    """Arguments for @name of SHORT whose memref array has n elements."""
    if name == "packed":
        return [np.zeros(n, np.uint8)]
    memory = np.zeros(n, np.float32)
    return [np.ones((4, 4), np.float32), memory] if name == "store" else [memory]


@pytest.mark.parametrize(
    ("name", "needed"),
    [("load", 2 + 3 * 5 + 4), ("store", 16), ("packed", 5), ("scalar", 10)],
)  # packed: nibbles 1..9 are in bytes 0..4
def test_arrays_too_short_for_static_accesses_are_refused(
    name: str, needed: int
) -> None:
    """A dynamically sized memref's array must hold every element the
    function always accesses: refused before the call (never read or
    written out of bounds), after the fast entry exists too."""
    function = compile_module(SHORT)[name]
    function(*_short_call_arguments(name, needed))
    function(*_short_call_arguments(name, needed))  # the native fast entry
    short = _short_call_arguments(name, needed - 1)
    with pytest.raises(ArgumentError, match=f"reach element {needed - 1} of") as error:
        function(*short)
    assert f"of @{name}" in str(error.value)


def test_accesses_in_branches_are_the_callers_responsibility() -> None:
    """Only the entry block's accesses always run: a load in a branch not
    taken does not make a short array wrong (docs/matrix-dialect.md: undefined behaviour
    only when executed)."""
    branch = compile_module(SHORT).branch
    np.testing.assert_array_equal(branch(False, np.zeros(4, np.float32)), 0)


def test_the_readme_python_section_runs(capsys: pytest.CaptureFixture[str]) -> None:
    """README's From Python examples run as shown: a batched call with out=
    and the error type, printing the located message; a traced MXFP4 decode."""
    readme = (Path(__file__).parents[2] / "README.md").read_text()
    section = readme[readme.index("## From Python") :]
    section = section[: section.index("\n## ", 1)]
    blocks = re.findall(r"```python\n(.*?)```", section, re.S)
    assert len(blocks) == 3
    scope: dict[str, Any] = {}
    exec("\n".join(blocks), scope)
    a, b, c, d = (scope[k] for k in "abcd")
    assert d.shape == (100_000, 4, 4)
    np.testing.assert_allclose(d, a @ b + c, rtol=1e-6)
    assert scope["y"].shape == (256,) and scope["y"].dtype == np.float32
    printed = capsys.readouterr().out
    assert printed.startswith("<string>:2:1: error: argument #0 (%a) of @mma")

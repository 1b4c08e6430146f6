"""Calling JIT-compiled matrix functions from NumPy: arrays are used in place
(C or F order), batches follow NumPy's gufunc rules, every bad argument is
the package's error, calls from several threads are safe."""

import itertools
import threading
from collections.abc import Callable
from typing import Any

import ml_dtypes
import numpy as np
import pytest

from mx.errors import ArgumentError, MXError
from mx.jit import compile_module

M4 = "!matrix.matrix<4x4xf32>"
MMA = f"""
func.func @mma(%a: {M4}, %b: {M4}, %c: {M4}) -> {M4} {{
  %p = matrix.matmul %a, %b : {M4}, {M4} -> {M4}
  %r = matrix.add %p, %c : {M4}
  func.return %r : {M4}
}}

func.func @rect(%a: !matrix.matrix<2x3xf64>, %k: f64) -> (!matrix.matrix<3x2xf64>, f64) {{
  %t = matrix.transpose %a : !matrix.matrix<2x3xf64> -> !matrix.matrix<3x2xf64>
  %s = matrix.splat %k : !matrix.matrix<3x2xf64>
  %r = matrix.mul %t, %s : !matrix.matrix<3x2xf64>
  %e = matrix.extract %a[1, 2] : !matrix.matrix<2x3xf64>
  %x = arith.addf %e, %k : f64
  func.return %r, %x : !matrix.matrix<3x2xf64>, f64
}}

func.func @alias(%m: !matrix.matrix<2x2xf32>, %mem: memref<4xf32>, %i: index) -> f32 {{
  %c = arith.constant 42.0 : f32
  memref.store %c, %mem[%i] : memref<4xf32>
  %e = matrix.extract %m[0, 1] : !matrix.matrix<2x2xf32>
  func.return %e : f32
}}
"""


def _f32(rng: np.random.Generator, *shape: int) -> np.ndarray[Any, Any]:
    return rng.standard_normal(shape).astype(np.float32)


def _mma_reference(a: np.ndarray, b: np.ndarray, c: np.ndarray) -> np.ndarray:
    """docs/matrix-dialect.md's order: sum over k left to right, then + c, in f32."""
    out = np.zeros((4, 4), np.float32)
    for r in range(4):
        for col in range(4):
            acc = np.float32(a[r, 0] * b[0, col])
            for k in range(1, 4):
                acc = np.float32(acc + np.float32(a[r, k] * b[k, col]))
            out[r, col] = np.float32(acc + c[r, col])
    return out


def test_single_call_in_any_order_matches_the_reference(
    rng: np.random.Generator,
) -> None:
    mma = compile_module(MMA).mma
    a, b, c = _f32(rng, 4, 4), _f32(rng, 4, 4), _f32(rng, 4, 4)
    expected = _mma_reference(a, b, c)
    for orders in ("CCC", "FCC", "CFC", "CCF", "FFF"):
        args = [
            np.asfortranarray(x) if o == "F" else x
            for x, o in zip((a, b, c), orders, strict=True)
        ]
        got = mma(*args)
        assert got.flags.c_contiguous and got.base is None
        np.testing.assert_array_equal(got, expected, err_msg=orders)


def test_every_order_is_served_by_the_fast_entry_once_compiled(
    monkeypatch: pytest.MonkeyPatch, rng: np.random.Generator
) -> None:
    """The first call in a combination of C/F orders compiles it (general
    path); later calls go straight through the fast entry's table, each to
    the function compiled for its orders."""
    mma = compile_module(MMA).mma
    a, b, c = _f32(rng, 4, 4), _f32(rng, 4, 4), _f32(rng, 4, 4)
    expected = _mma_reference(a, b, c)
    orders = ["".join(o) for o in itertools.product("CF", repeat=3)]

    def args(order: str) -> list[np.ndarray[Any, Any]]:
        return [
            np.asfortranarray(x) if o == "F" else x
            for x, o in zip((a, b, c), order, strict=True)
        ]

    for order in orders:
        mma(*args(order))

    def general_path(*_: object) -> None:
        raise AssertionError("the general path was taken")

    monkeypatch.setattr(mma, "_call", general_path)
    for order in orders * 2:
        np.testing.assert_array_equal(mma(*args(order)), expected, err_msg=order)


def test_arguments_are_read_in_place_in_c_and_f_order() -> None:
    """The kernel writes the memref, then reads the matrix: it sees its own
    write only if the matrix argument is the caller's memory, not a copy."""
    alias = compile_module(MMA).alias
    data = np.zeros(4, np.float32)
    # C order: element (0, 1) is data[1].
    assert alias(data.reshape(2, 2), data, 1) == 42.0
    data[:] = 0
    # F order (a transposed view): element (0, 1) is data[2].
    assert alias(data.reshape(2, 2).T, data, 2) == 42.0
    data[:] = 0
    assert alias(data.reshape(2, 2), data, 3) == 0.0
    # Again, now that the F order is compiled (the fast entry's table).
    assert alias(data.reshape(2, 2).T, data, 2) == 42.0


def test_results_are_written_in_place_with_out(rng: np.random.Generator) -> None:
    module = compile_module(MMA)
    a, b, c = _f32(rng, 4, 4), _f32(rng, 4, 4), _f32(rng, 4, 4)
    for out in (np.empty((4, 4), np.float32), np.empty((4, 4), np.float32, order="F")):
        got = module.mma(a, b, c, out=out)
        assert got is out
        np.testing.assert_array_equal(out, _mma_reference(a, b, c))
    m = rng.standard_normal((2, 3))
    r, x = (
        np.empty((2, 3, 2), np.float64).transpose(0, 2, 1)[0].T,
        np.empty((), np.float64),
    )
    assert module.rect(m, 2.0, out=(r, x)) == (r, x)
    np.testing.assert_array_equal(r, m.T * 2.0)
    assert x[()] == m[1, 2] + 2.0


def test_batches_match_a_loop_of_single_calls_bit_for_bit(
    rng: np.random.Generator,
) -> None:
    mma = compile_module(MMA).mma
    cases = [
        ((7, 4, 4), (4, 4), (7, 4, 4)),
        ((3, 1, 4, 4), (5, 4, 4), (4, 4)),
        ((2, 1, 3, 4, 4), (1, 6, 1, 4, 4), (6, 3, 4, 4)),
        ((0, 4, 4), (4, 4), (4, 4)),
    ]
    for shapes in cases:
        a, b, c = (_f32(rng, *s) for s in shapes)
        b = np.asfortranarray(b) if b.ndim == 2 else b
        got = mma(a, b, c)
        batch = np.broadcast_shapes(*(s[:-2] for s in shapes))
        assert got.shape == (*batch, 4, 4)
        whole = [np.broadcast_to(x, (*batch, 4, 4)) for x in (a, b, c)]
        for index in np.ndindex(*batch):
            single = mma(*(x[index] for x in whole))
            np.testing.assert_array_equal(got[index], single, err_msg=str(index))


LONG_VECTOR_SCALE = """
func.func @scale(%x: vector<2048xf32>, %s: f32) -> vector<2048xf32> {
  %b = vector.broadcast %s : f32 to vector<2048xf32>
  %y = arith.mulf %x, %b : vector<2048xf32>
  func.return %y : vector<2048xf32>
}"""


def _batch_calls(module_ir: str, name: str) -> list[str]:
    """The calls of function `name` in its batch loop in a compiled module."""
    loop = module_ir.split(f"@_mx_batch_{name}.body(i64 %lo", 1)[1]
    body = loop.split("\n}", 1)[0]
    return [line for line in body.splitlines() if f"@_mx_fn_{name}(" in line]


def test_batch_loops_inline_small_kernels_only(rng: np.random.Generator) -> None:
    """The batch loop lets LLVM inline a small kernel (a call costs as much as
    a 4x4 `a@b+c`), not one holding long vectors (inlined into the loop, a
    4-layer 4096 x 4096 decode took LLVM 10 s instead of 1); either way a
    batch is the loop of single calls."""
    small = compile_module(MMA)
    (call,) = _batch_calls(small.llvm_ir, "mma")
    assert "noinline" not in call
    long = compile_module(LONG_VECTOR_SCALE)
    (call,) = _batch_calls(long.llvm_ir, "scale")
    assert call.endswith(" noinline")
    x = _f32(rng, 3, 2048)
    got = long.scale(x, np.float32(0.5))
    for i in range(3):
        np.testing.assert_array_equal(got[i], long.scale(x[i], np.float32(0.5)))


def test_batches_of_scalars_and_matrices_with_several_results(
    rng: np.random.Generator,
) -> None:
    rect = compile_module(MMA).rect
    m = rng.standard_normal((5, 2, 3))
    k = rng.standard_normal(5)
    r, x = rect(m, k)
    assert r.shape == (5, 3, 2) and x.shape == (5,)
    for i in range(5):
        ri, xi = rect(m[i], float(k[i]))
        np.testing.assert_array_equal(r[i], ri)
        assert x[i] == xi
    # A strided (non-contiguous) batch of contiguous matrices is read in place.
    strided = np.zeros((10, 2, 3))
    strided[::2] = m
    np.testing.assert_array_equal(rect(strided[::2], k)[0], r)


def test_natural_containers_for_i8_matrices() -> None:
    module = compile_module(
        """
func.func @decode(%q: !matrix.matrix<2x2xi8>) -> !matrix.matrix<2x2xf32> {
  %r = arbfp.convert_from f8e5m2 %q : !matrix.matrix<2x2xi8> to !matrix.matrix<2x2xf32>
  func.return %r : !matrix.matrix<2x2xf32>
}
"""
    )
    values = np.array([[1.5, -2.0], [0.25, 57344.0]], ml_dtypes.float8_e5m2)
    for view in (values, values.view(np.uint8), values.view(np.int8)):
        np.testing.assert_array_equal(module.decode(view), values.astype(np.float32))


def _bad_calls(rng: np.random.Generator) -> list[tuple[str, Callable[[], object], str]]:
    module = compile_module(MMA)
    mma, alias = module.mma, module.alias
    good = _f32(rng, 4, 4)
    frozen = _f32(rng, 4, 4)
    frozen.flags.writeable = False
    memory = np.zeros(4, np.float32)
    read_only_memory = np.zeros(4, np.float32)
    read_only_memory.flags.writeable = False
    square = np.zeros((2, 2), np.float32)
    return [
        ("dtype", lambda: mma(good.astype(np.float64), good, good), "dtype float64"),
        ("shape", lambda: mma(_f32(rng, 4, 3), good, good), r"expected shape \(4, 4\)"),
        (
            "order",
            lambda: mma(_f32(rng, 4, 8)[:, ::2], good, good),
            "C- or F-contiguous",
        ),
        (
            "non-contiguous memref",
            lambda: alias(square, np.zeros(8, np.float32)[::2], 0),
            "C-contiguous",
        ),
        ("read-only memref", lambda: alias(square, read_only_memory, 0), "read-only"),
        ("read-only out", lambda: mma(good, good, good, out=frozen), "read-only"),
        (
            "too-small memref",
            lambda: alias(square, np.zeros(3, np.float32), 0),
            "needs 4 elements",
        ),
        ("wrong count", lambda: mma(good, good), "takes 3 arguments, got 2"),
        (
            "wrong batch shape",
            lambda: mma(_f32(rng, 3, 4, 4), _f32(rng, 2, 4, 4), good),
            "do not broadcast",
        ),
        (
            "out shape",
            lambda: mma(
                _f32(rng, 3, 4, 4), good, good, out=np.empty((4, 4), np.float32)
            ),
            r"out= result #0: expected a \(3, 4, 4\)",
        ),
        (
            "out overlaps",
            lambda: mma(
                good, good, memory.reshape(2, 2).repeat(2, 0).repeat(2, 1), out=good
            ),
            "overlaps",
        ),
        ("not an array", lambda: mma(good.tolist(), good, good), "got list"),
        ("scalar type", lambda: alias(square, memory, 1.5), "expected an integer"),
        (
            "memory of the wrong size",
            lambda: alias(square, memory, 2**64),
            "does not fit",
        ),
    ]


@pytest.mark.parametrize("case", range(14))
def test_every_bad_argument_class_is_the_package_error(
    case: int, rng: np.random.Generator
) -> None:
    name, call, message = _bad_calls(rng)[case]
    with pytest.raises(MXError, match=message) as error:
        call()
    assert isinstance(error.value, ArgumentError), name
    first, line = str(error.value).split("\n")[:2]
    assert first.startswith("<string>:") and ": error: " in first, name
    assert line.startswith("func.func @"), name


def test_calls_from_several_threads(rng: np.random.Generator) -> None:
    module = compile_module(MMA)
    inputs = [(_f32(rng, 4, 4), _f32(rng, 4, 4), _f32(rng, 16, 4, 4)) for _ in range(4)]
    expected = [module.mma(*args) for args in inputs]
    failures: list[str] = []

    def work(t: int) -> None:
        a, b, c = inputs[t]
        for i in range(300):
            if i % 2:
                got = module.mma(a, b, c)
                ok = np.array_equal(got, expected[t])
            else:
                got = module.mma(a, b, c[i % 16])
                ok = np.array_equal(got, expected[t][i % 16])
            if not ok:
                failures.append(f"thread {t}, call {i}")
            try:
                module.mma(a, b)
            except ArgumentError:
                pass
            else:
                failures.append("no error")

    threads = [threading.Thread(target=work, args=(t,)) for t in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert not failures


def test_threads_compiling_the_same_order_at_once(rng: np.random.Generator) -> None:
    """Threads whose first calls all need the same new combination of orders
    (F-ordered A) get one compiled variant between them and correct results,
    then share the fast entry's table; batches run with the GIL released."""
    mma = compile_module(MMA.replace("@mma", "@mma_threads")).mma_threads
    a, b, c = np.asfortranarray(_f32(rng, 4, 4)), _f32(rng, 4, 4), _f32(rng, 4, 4)
    batch = _f32(rng, 64, 4, 4)
    expected = _mma_reference(a, b, c)
    start = threading.Barrier(4)
    failures: list[str] = []
    compiles: list[object] = []
    compile_variant = mma._compile_variant  # pyright: ignore[reportPrivateUsage]

    def counted(layouts: Any) -> Any:
        compiles.append(layouts)
        return compile_variant(layouts)

    mma._compile_variant = counted  # pyright: ignore[reportPrivateUsage]

    def work(t: int) -> None:
        start.wait()
        for i in range(50):
            if not np.array_equal(mma(a, b, c), expected):
                failures.append(f"thread {t}, call {i}")
            got = mma(batch, b, c)
            if not np.array_equal(got[t], _mma_reference(batch[t], b, c)):
                failures.append(f"thread {t}, batch {i}")

    threads = [threading.Thread(target=work, args=(t,)) for t in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert not failures
    assert compiles == [("F", "C", "C", "C")]


def test_row_major_abi_option_of_the_lowering(rng: np.random.Generator) -> None:
    """`convert-matrix-to-affine{layout=row-major}`: the same results through
    row-major boundary buffers."""
    pipeline = (
        "matrix-fold-transposes,convert-matrix-to-affine{layout=row-major},"
        "convert-arbfp-to-arith,canonicalize,convert-to-llvm"
    )
    module = compile_module(MMA, pipeline)
    a, b, c = _f32(rng, 4, 4), _f32(rng, 4, 4), _f32(rng, 4, 4)
    np.testing.assert_array_equal(
        module.mma(a, b, np.asfortranarray(c)), _mma_reference(a, b, c)
    )
    m = rng.standard_normal((2, 3))
    r, x = module.rect(m, 0.5)
    np.testing.assert_array_equal(r, m.T * 0.5)
    assert x == m[1, 2] + 0.5

"""`math` ops compiled by the JIT, and run by the interpreter, against NumPy, on vectors of every float type.

Inputs: specials (±0, ±inf, NaN, the largest finite, the smallest normal and
subnormal) and a fixed-seed random sample. The exactly rounded ops (`sqrt`,
`absf`, `floor`, `ceil`, `trunc`, `round`, `roundeven`, `copysign`, `fma`)
must match NumPy bit for bit (NaNs as NaNs); the transcendental ones (`exp`,
`exp2`, `log`, `log2`, `log10`, `sin`, `cos`, `powf`) within 2 ulps of NumPy
where NumPy's result is finite, and with the same class (NaN, ±inf, ±0)
elsewhere: f16 and bf16 compute in f32 and round once, as NumPy does for
f16. The interpreter (mx-run) gives the same (it lacked most of these ops,
and raised Python's errors for exp(1000), log(0), sqrt(-1)). The integer ops (`absi`, `ctpop`, `ctlz`, `cttz`) on i8 … i64 and
`index` match Python's integer arithmetic (`index` did not lower before).
"""

from collections.abc import Callable, Iterator

import ml_dtypes
import numpy as np
import pytest

from mx.frontend import parse_and_verify
from mx.interpreters import run_function
from mx.jit import compile_module

BF16 = ml_dtypes.bfloat16
FLOATS = {"f16": np.float16, "bf16": BF16, "f32": np.float32, "f64": np.float64}
EXACT: dict[str, Callable[[np.ndarray], np.ndarray]] = {
    "sqrt": np.sqrt, "absf": np.abs, "floor": np.floor, "ceil": np.ceil,
    "trunc": np.trunc, "roundeven": np.rint,
}  # fmt: skip


def _round_half_away(x: np.ndarray) -> np.ndarray:
    return np.copysign(np.floor(np.abs(x) + 0.5), x)


EXACT["round"] = _round_half_away
TRANSCENDENTAL: dict[str, Callable[[np.ndarray], np.ndarray]] = {
    "exp": np.exp, "exp2": np.exp2, "log": np.log, "log2": np.log2,
    "log10": np.log10, "sin": np.sin, "cos": np.cos,
}  # fmt: skip
N = 64


def _inputs(dtype: type) -> np.ndarray:
    info = ml_dtypes.finfo(dtype) if dtype is BF16 else np.finfo(dtype)
    specials = [0.0, -0.0, np.inf, -np.inf, np.nan, float(info.max), -float(info.max),
                float(info.tiny), float(info.smallest_subnormal), 0.5, 1.5, 2.5, -2.5, 1.0]  # fmt: skip
    rng = np.random.default_rng(20261202)
    sample = rng.standard_normal(N - len(specials)) * rng.choice(
        [1, 10, 1000], N - len(specials)
    )
    return np.concatenate([specials, sample]).astype(dtype)


def _unary_module(names: list[str], t: str) -> str:
    v = f"vector<{N}x{t}>"
    return "".join(
        f"func.func @{name}(%a: {v}) -> {v} {{\n"
        f"  %c = math.{name} %a : {v}\n  func.return %c : {v}\n}}\n"
        for name in names
    )


def _ulps(got: np.ndarray, expected: np.ndarray, dtype: type) -> np.ndarray:
    """Distance in units in the last place (of `dtype`), through f64."""
    info = ml_dtypes.finfo(dtype) if dtype is BF16 else np.finfo(dtype)
    e = expected.astype(np.float64)
    scale = np.maximum(np.abs(e), float(info.tiny))
    ulp = 2.0 ** (np.floor(np.log2(scale)) - int(info.nmant))
    return np.abs(got.astype(np.float64) - e) / ulp


def _same_class(got: np.ndarray, expected: np.ndarray) -> np.ndarray:
    g, e = got.astype(np.float64), expected.astype(np.float64)
    return (
        (np.isnan(g) == np.isnan(e))
        & (np.isinf(g) == np.isinf(e))
        & (np.isnan(e) | ((g == 0) == (e == 0)) & (np.sign(g) == np.sign(e)))
    )


def _runner(source: str, runner: str) -> Callable[[str, np.ndarray], np.ndarray]:
    """Calls of the functions of `source`, compiled or interpreted (mx-run)."""
    if runner == "jit":
        module = compile_module(source)
        return lambda name, x: getattr(module, name)(x)
    parsed = parse_and_verify(source)

    def interpret(name: str, x: np.ndarray) -> np.ndarray:
        (result,) = run_function(parsed, name, x)
        return result

    return interpret


RUNNERS = ["jit", "interpreter"]


def _outcomes(
    ops: dict[str, Callable[[np.ndarray], np.ndarray]], t: str, runner: str
) -> Iterator[tuple[str, np.ndarray, np.ndarray, np.ndarray]]:
    """(name, inputs, result, NumPy's f64 result rounded to `t`) of each op."""
    dtype = FLOATS[t]
    run = _runner(_unary_module(list(ops), t), runner)
    x = _inputs(dtype)
    for name, reference in ops.items():
        with np.errstate(all="ignore"):
            expected = reference(x.astype(np.float64)).astype(dtype)
        yield name, x, run(name, x), expected


@pytest.mark.parametrize("runner", RUNNERS)
@pytest.mark.parametrize("t", FLOATS)
def test_exactly_rounded_math_ops(t: str, runner: str) -> None:
    for name, x, got, expected in _outcomes(EXACT, t, runner):
        nan = np.isnan(expected)
        assert np.array_equal(np.isnan(got), nan), name
        raw = f"u{np.dtype(FLOATS[t]).itemsize}"
        assert np.array_equal(got[~nan].view(raw), expected[~nan].view(raw)), (
            name, x[~nan][got[~nan] != expected[~nan]])  # fmt: skip


@pytest.mark.parametrize("runner", RUNNERS)
@pytest.mark.parametrize("t", FLOATS)
def test_transcendental_math_ops(t: str, runner: str) -> None:
    dtype = FLOATS[t]
    for name, x, got, expected in _outcomes(TRANSCENDENTAL, t, runner):
        # sin/cos of huge arguments: libm and NumPy reduce differently.
        reliable = (
            np.abs(x.astype(np.float64)) < 1e4 if name in ("sin", "cos") else True
        )
        finite = np.isfinite(expected.astype(np.float64)) & (expected != 0) & reliable
        assert _same_class(got, expected)[~finite & reliable].all(), name
        with np.errstate(all="ignore"):
            error = _ulps(got[finite], expected[finite], dtype)
        assert (error <= 2).all(), (name, x[finite][error > 2], got[finite][error > 2])


def test_fma_and_copysign_f32() -> None:
    v = f"vector<{N}xf32>"
    module = compile_module(
        f"func.func @fma(%a: {v}, %b: {v}, %c: {v}) -> {v} {{\n"
        f"  %r = math.fma %a, %b, %c : {v}\n  func.return %r : {v}\n}}\n"
        f"func.func @copysign(%a: {v}, %b: {v}) -> {v} {{\n"
        f"  %r = math.copysign %a, %b : {v}\n  func.return %r : {v}\n}}\n"
    )
    x = _inputs(np.float32)
    y, z = np.roll(x, 1), np.roll(x, 7)
    fused = module.fma(x, y, z)
    with np.errstate(all="ignore"):
        exact = (x.astype(np.float64) * y + z).astype(np.float32)  # one rounding of f64
    finite = np.isfinite(exact)
    assert np.array_equal(fused[finite], exact[finite])
    assert np.array_equal(
        module.copysign(x, y).view(np.uint32), np.copysign(x, y).view(np.uint32)
    )


@pytest.mark.parametrize("t", ["i8", "i16", "i32", "i64", "index"])
def test_integer_math_ops(t: str) -> None:
    width = 64 if t == "index" else int(t[1:])
    dtype = np.dtype(f"int{width}")
    v = f"vector<8x{t}>"
    names = {"absi": "absi", "ctpop": "ctpop", "ctlz": "ctlz", "cttz": "cttz"}
    module = compile_module(
        "".join(
            f"func.func @{n}(%a: {v}) -> {v} {{\n  %c = math.{op} %a : {v}\n"
            f"  func.return %c : {v}\n}}\n"
            for n, op in names.items()
        )
    )
    low, high = -(2 ** (width - 1)), 2 ** (width - 1) - 1
    x = np.array([0, 1, -1, low, high, 6, -40, 2 ** (width // 2)], dtype)
    bits = [int(value) % 2**width for value in x]
    expected = {
        "absi": [abs(int(value)) for value in x],
        "ctpop": [b.bit_count() for b in bits],
        "ctlz": [width - b.bit_length() for b in bits],
        "cttz": [(b & -b).bit_length() - 1 if b else width for b in bits],
    }
    for name in names:
        got = [int(value) % 2**width for value in getattr(module, name)(x)]
        assert got == [e % 2**width for e in expected[name]], name


def test_a_kernel_named_like_a_libm_function() -> None:
    """LLVM lowers `math.exp` to a call of the C library's `exp`: the JIT's
    symbol for a kernel named `exp` must not be that (it called itself)."""
    v = "vector<4xf64>"
    module = compile_module(
        f"func.func @exp(%a: {v}) -> {v} {{\n  %c = math.exp %a : {v}\n"
        f"  func.return %c : {v}\n}}\n"
        f"func.func @log(%a: {v}) -> {v} {{\n  %e = func.call @exp(%a) : ({v}) -> {v}\n"
        f"  %c = math.log %e : {v}\n  func.return %c : {v}\n}}\n"
    )
    x = np.array([0.0, 1.0, -2.0, 0.5])
    assert np.allclose(module.exp(x), np.exp(x), rtol=1e-15)
    assert np.allclose(module.log(x), x, rtol=1e-15)

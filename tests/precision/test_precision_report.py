"""The precision report (docs/precision-report.md) against independent
computations: counts and errors of every conversion from ml_dtypes on inputs
placed on both sides of each threshold (largest finite value, half the
smallest subnormal) of every format; both scale rules of the block-scaled
conversions from a NumPy/ml_dtypes formulation of OCP MX; SQNR from
`math.fsum`. The compiled run (`f.precision_report`) and the interpreted one
(`mx-run --precision-report`) must give the same report, and a batch the sums
of its elements' reports."""

import json
import math
from typing import Any

import ml_dtypes
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from xdsl.dialects import func

import mx
from mx.errors import ArgumentError
from mx.frontend import parse_and_verify
from mx.interpreters import make_interpreter, to_runtime
from mx.jit import JitFunction, compile_module
from mx.precision import interpreted_report, quantize
from mx.precision.capture import prepare
from tests.reference import exact_fp as ref

Array = np.ndarray[Any, Any]

ML_DTYPES = {
    "f8e5m2": ml_dtypes.float8_e5m2,
    "f8e4m3fn": ml_dtypes.float8_e4m3fn,
    "f8e5m2fnuz": ml_dtypes.float8_e5m2fnuz,
    "f8e4m3fnuz": ml_dtypes.float8_e4m3fnuz,
    "f8e4m3": ml_dtypes.float8_e4m3,
    "f8e3m4": ml_dtypes.float8_e3m4,
    "f8e8m0fnu": ml_dtypes.float8_e8m0fnu,
    "f6e3m2fn": ml_dtypes.float6_e3m2fn,
    "f6e2m3fn": ml_dtypes.float6_e2m3fn,
    "f4e2m1fn": ml_dtypes.float4_e2m1fn,
}
WIDTH = {k: 8 for k in ML_DTYPES} | {
    "f8e5m3fnu": 8,
    "f6e3m2fn": 6,
    "f6e2m3fn": 6,
    "f4e2m1fn": 4,
}


def _jit(text: str, name: str) -> JitFunction:
    return compile_module(text)[name]


def _interpreted(
    text: str, name: str, *args: Any, **options: Any
) -> mx.PrecisionReport:
    module = parse_and_verify(text, "<string>")
    body = next(
        op
        for op in module.ops
        if isinstance(op, func.FuncOp) and op.sym_name.data == name
    )
    interpreter = make_interpreter(module)
    types = body.function_type.inputs.data
    runtime = [to_runtime(a, t, interpreter) for a, t in zip(args, types, strict=True)]
    return interpreted_report(interpreter, prepare(module, body), runtime, **options)


def _both(text: str, name: str, *args: Any, **options: Any) -> list[mx.PrecisionReport]:
    """The report of the compiled run and of the interpreted one."""
    return [
        _jit(text, name).precision_report(*args, **options),
        _interpreted(text, name, *args, **options),
    ]


def _errors(value: Array, reference: Array) -> dict[str, float]:
    """max_abs_err, max_rel_err, sqnr_db over the finite pairs, with fsum."""
    both = np.isfinite(value) & np.isfinite(reference)
    v, r = value[both].tolist(), reference[both].tolist()
    errors = [abs(a - b) for a, b in zip(v, r, strict=True)]
    noise = math.fsum(e * e for e in errors)
    signal = math.fsum(b * b for b in r)
    sqnr = (
        math.inf
        if noise == 0
        else (-math.inf if signal == 0 else 10 * math.log10(signal / noise))
    )
    return {
        "max_abs_err": max(errors, default=0.0),
        "max_rel_err": max(
            (e / abs(b) for e, b in zip(errors, r, strict=True) if b), default=0.0
        ),
        "sqnr_db": sqnr,
    }


def _assert_errors(entry: dict[str, Any], expected: dict[str, float]) -> None:
    for key, value in expected.items():
        assert entry[key] == pytest.approx(value, rel=1e-9), key


def _threshold_inputs(fmt: str, rng: np.random.Generator) -> Array:
    info = ml_dtypes.finfo(ML_DTYPES[fmt])
    return _threshold_inputs_for(float(info.max), float(info.smallest_subnormal), rng)


def _threshold_inputs_for(
    largest_value: float, tiny_value: float, rng: np.random.Generator
) -> Array:
    """f32 values on both sides of the largest finite value and of half the
    smallest positive value (the rounding-to-zero boundary), either sign, and
    zeros, infinities and NaN, plus random values across the range."""
    largest, tiny = np.float32(largest_value), np.float32(tiny_value)
    half = np.float32(tiny / 2)
    up, down = np.float32(np.inf), np.float32(0)
    with np.errstate(over="ignore"):
        doubled = np.float32(2 * float(largest))  # inf for f8e8m0fnu
    edges = [
        largest,
        np.nextafter(largest, up),
        np.nextafter(largest, down),
        largest * np.float32(1.0625),
        doubled,
        half,
        np.nextafter(half, up),
        np.nextafter(half, down),
        tiny,
        np.float32(1.0),
    ]
    values = [*edges, *(-e for e in edges), 0.0, -0.0, np.inf, -np.inf, np.nan]
    spread = rng.standard_normal(64) * np.exp2(
        rng.uniform(np.log2(tiny) - 2, np.log2(largest) + 1, 64)
    )
    return np.concatenate([np.array(values, np.float32), spread.astype(np.float32)])


def _round_trip(fmt: str, n: int) -> str:
    bits = WIDTH[fmt]
    t, q = f"!matrix.matrix<1x{n}xf32>", f"!matrix.matrix<1x{n}xi{bits}>"
    return (
        f"func.func @q(%x: {t}) -> {t} {{\n"
        f"  %b = arbfp.convert_to {fmt} %x : {t} to {q}\n"
        f"  %y = arbfp.convert_from {fmt} %b : {q} to {t}\n"
        f"  func.return %y : {t}\n}}\n"
    )


@pytest.mark.parametrize("fmt", list(ML_DTYPES))
def test_conversion_counts_and_errors_match_ml_dtypes(fmt: str) -> None:
    x = _threshold_inputs(fmt, np.random.default_rng(28))
    if fmt in ("f6e3m2fn", "f6e2m3fn", "f4e2m1fn"):
        x = x[
            ~np.isnan(x)
        ]  # these formats have no NaN: mx gives 0, ml_dtypes its own choice
    largest = float(ml_dtypes.finfo(ML_DTYPES[fmt]).max)
    converted = x.astype(ML_DTYPES[fmt]).astype(np.float64)
    finite = np.isfinite(x)
    expected = {
        "count": x.size,
        "saturated": int((finite & (np.abs(x) > largest)).sum()),
        "underflow": int((finite & (x != 0) & (converted == 0)).sum()),
        "nan": int(np.isnan(converted).sum()),
        "inf": int(np.isinf(converted).sum()),
    }
    assert expected["saturated"] >= 4 and (
        expected["underflow"] >= 4 or fmt == "f8e8m0fnu"
    )
    for report in _both(_round_trip(fmt, x.size), "q", x.reshape(1, -1)):
        convert_to, convert_from, returned = report.values
        assert [v["op"] for v in report.values] == [
            "arbfp.convert_to",
            "arbfp.convert_from",
            "func.return",
        ]
        assert convert_to["loc"] == "<string>:2:3" and convert_to["format"] == fmt
        for entry in (convert_to, convert_from):
            assert {k: entry[k] for k in expected} == expected
            _assert_errors(entry, _errors(converted, x.astype(np.float64)))
        assert convert_to["blame_db"] == (
            math.inf if convert_to["sqnr_db"] < math.inf else 0
        )
        assert convert_from["blame_db"] == 0
        _assert_errors(returned, _errors(converted, x.astype(np.float64)))


def _exact_value(fmt: str, x: float, mode: str, saturate: bool) -> float:
    """x converted by the exact rational reference, as a float."""
    value = ref.decode(fmt, ref.encode(fmt, ref.exact(x), mode, saturate))
    if isinstance(value, str):
        return {"nan": math.nan, "inf": math.inf, "-inf": -math.inf, "-0": -0.0}[value]
    return float(value)


@pytest.mark.parametrize("fmt", list(ref.MAX_FINITE)[:-1])  # every format (not f16)
@pytest.mark.parametrize(
    ("mode", "saturate"),
    [
        ("nearest_even", False),
        ("nearest_away", True),
        ("toward_zero", False),
        ("upward", True),
        ("downward", False),
    ],
)
def test_every_format_and_mode_against_the_exact_reference(
    fmt: str, mode: str, saturate: bool
) -> None:
    """Counts and SQNR of convert_to in every rounding mode, with and without
    saturation, against the rational reference (f8e5m3fnu included, which
    ml_dtypes lacks), on the threshold inputs of the format."""
    largest = float(ref.MAX_FINITE[fmt])
    tiny = min(
        float(v)
        for b in range(256 >> (8 - WIDTH.get(fmt, 8)))
        if not isinstance(v := ref.decode(fmt, b), str) and v > 0
    )
    x = _threshold_inputs_for(largest, tiny, np.random.default_rng(4))
    expected_values = np.array([_exact_value(fmt, float(v), mode, saturate) for v in x])
    finite = np.isfinite(x)
    expected = {
        "saturated": int((finite & (np.abs(x) > largest)).sum()),
        "underflow": int((finite & (x != 0) & (expected_values == 0)).sum()),
        "nan": int(np.isnan(expected_values).sum()),
        "inf": int(np.isinf(expected_values).sum()),
    }
    saturating = " saturate" if saturate else ""
    text = _round_trip(fmt, x.size).replace(
        "%x : ", f"%x rounding {mode}{saturating} : ", 1
    )
    entry = _interpreted(text, "q", x.reshape(1, -1)).values[0]
    assert {k: entry[k] for k in expected} == expected
    _assert_errors(entry, _errors(expected_values, x.astype(np.float64)))


ELEMENT_FORMATS = ("f4e2m1fn", "f6e2m3fn", "f6e3m2fn", "f8e4m3fn", "f8e5m2")


def _ocp_reference(x: Array, fmt: str, block: int, rule: str) -> tuple[Array, Array]:
    """OCP MX quantize-dequantize in NumPy/ml_dtypes: per block the scale 2^e
    (floor: ⌊log2 amax⌋ − emax; ceil: the least e with max·2^e ≥ amax),
    elements x/2^e clamped to ±max and rounded by ml_dtypes; NaN/inf blocks
    all NaN. Returns the values and each element's x/2^e (NaN in those blocks)."""
    largest = float(ml_dtypes.finfo(ML_DTYPES[fmt]).max)
    blocks = x.astype(np.float64).reshape(x.shape[0], -1, block)
    special = ~np.isfinite(blocks).all(axis=2, keepdims=True)
    amax = np.where(special, 1.0, np.abs(blocks).max(axis=2, keepdims=True))
    emax = np.frexp(largest)[1] - 1
    if rule == "floor":
        e = np.frexp(amax)[1] - 1 - emax
    else:
        e = np.frexp(amax / largest)[1]  # a first guess, corrected exactly below
        e = np.where(np.ldexp(largest, e - 1) >= amax, e - 1, e)
        e = np.where(np.ldexp(largest, e) < amax, e + 1, e)
    e = np.where(amax == 0, -127, np.clip(e, -127, 127))
    units = np.ldexp(np.where(special, 0.0, blocks), -e)
    codes = np.clip(units, -largest, largest).astype(np.float32).astype(ML_DTYPES[fmt])
    values = np.where(special, np.nan, np.ldexp(codes.astype(np.float64), e))
    return values.reshape(x.shape), np.where(special, np.nan, units).reshape(x.shape)


def _scaled_round_trip(fmt: str, rows: int, cols: int, rule: str) -> str:
    t, q = (
        f"!matrix.matrix<{rows}x{cols}xf32>",
        f"!matrix.matrix<{rows}x{cols}xi{WIDTH[fmt]}>",
    )
    s = f"!matrix.matrix<{rows}x{cols // 32}xi8>"
    return (
        f"func.func @q(%x: {t}) -> {t} {{\n"
        f"  %b, %s = arbfp.scaled_convert_to {fmt} %x block 32 scale_rule {rule} : {t} to {q}, {s}\n"
        f"  %y = arbfp.scaled_convert_from {fmt} %b, %s block 32 : {q}, {s} to {t}\n"
        f"  func.return %y : {t}\n}}\n"
    )


def _blocks_input(rng: np.random.Generator, rows: int, cols: int) -> Array:
    """Gaussian blocks with outliers (clipped under floor), tiny elements
    (underflow), an all-zero block and blocks holding NaN or inf."""
    x = rng.standard_normal((rows, cols))
    x[rng.random((rows, cols)) < 0.02] *= 40
    x[rng.random((rows, cols)) < 0.05] *= 1e-6
    x[0, :32] = 0
    x[1, 5] = np.nan
    x[2, 40] = -np.inf
    return x.astype(np.float32)


@pytest.mark.parametrize("fmt", ELEMENT_FORMATS)
@pytest.mark.parametrize("rule", ["floor", "ceil"])
def test_block_scaled_counts_under_both_rules(fmt: str, rule: str) -> None:
    rows, cols = 8, 128
    x = _blocks_input(np.random.default_rng(7), rows, cols)
    largest = float(ml_dtypes.finfo(ML_DTYPES[fmt]).max)
    for report in _both(_scaled_round_trip(fmt, rows, cols, rule), "q", x):
        entry = report.values[0]
        assert entry["op"] == "arbfp.scaled_convert_to" and entry["scale_rule"] == rule
        assert entry["blocks"] == rows * cols // 32
        for each_rule in ("floor", "ceil"):
            values, units = _ocp_reference(x, fmt, 32, each_rule)
            finite = np.isfinite(units)
            over = finite & (np.abs(units) > largest)
            expected = {
                "saturated": int(over.sum()),
                "underflow": int((finite & (units != 0) & (values == 0)).sum()),
                "nan": int(np.isnan(values).sum()),
                "clipped_blocks": int(over.reshape(rows, -1, 32).any(axis=2).sum()),
            }
            counts = entry["rules"][each_rule]
            assert {k: counts[k] for k in expected} == expected, each_rule
            _assert_errors(counts, _errors(values, x.astype(np.float64)))
            if each_rule == rule:
                assert {k: entry[k] for k in expected} == expected
        assert entry["rules"]["ceil"]["saturated"] == 0
        if fmt == "f4e2m1fn":
            assert entry["rules"]["floor"]["clipped_blocks"] > 0
        decoded = report.values[1]
        assert decoded["op"] == "arbfp.scaled_convert_from"
        assert decoded["sqnr_db"] == entry["sqnr_db"] and decoded["blame_db"] == 0


def test_compiled_and_reference_conversions_agree(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The kernels that convert large arrays under the other scale rule and
    the candidate formats give the reference semantics' values."""
    x = _blocks_input(np.random.default_rng(3), 4, 64)
    for conversion in (
        quantize.Conversion("f4e2m1fn", block=32, rule=quantize.ScaleRule.CEIL),
        quantize.Conversion("f6e3m2fn", quantize.Rounding.TOWARD_ZERO, block=32),
        quantize.Conversion("f8e4m3fn", saturate=True),
        quantize.Conversion("f8e5m2"),
    ):
        reference = conversion.apply(x, compiled=False)
        monkeypatch.setattr(quantize, "COMPILED_FROM", 1)
        compiled = conversion.apply(x, compiled=True)
        monkeypatch.undo()
        for a, b in zip(reference, compiled, strict=True):
            np.testing.assert_array_equal(a, b)


NARROW = """
func.func @narrow(%a: !matrix.matrix<4x8xf32>, %b: !matrix.matrix<4x8xf32>) -> !matrix.matrix<4x8xf32> {
  %q = arbfp.convert_to f8e4m3fn %a : !matrix.matrix<4x8xf32> to !matrix.matrix<4x8xi8>
  %d = arbfp.convert_from f8e4m3fn %q : !matrix.matrix<4x8xi8> to !matrix.matrix<4x8xf32>
  %h = matrix.cast %d : !matrix.matrix<4x8xf32> to !matrix.matrix<4x8xf16>
  %g = matrix.cast %b : !matrix.matrix<4x8xf32> to !matrix.matrix<4x8xf16>
  %p = matrix.mul %h, %g : !matrix.matrix<4x8xf16>
  %s = matrix.add %p, %h : !matrix.matrix<4x8xf16>
  %w = matrix.cast %s : !matrix.matrix<4x8xf16> to !matrix.matrix<4x8xf32>
  %r = matrix.add %w, %b : !matrix.matrix<4x8xf32>
  func.return %r : !matrix.matrix<4x8xf32>
}
"""

_FLOATS = st.one_of(
    st.floats(-1e6, 1e6, width=32),
    st.sampled_from(
        [0.0, -0.0, 448.0, 464.0, -1e9, 2.0**-10, 2.0**-9, 70000.0, math.nan, math.inf]
    ),
)


@settings(max_examples=25, deadline=None)
@given(st.lists(_FLOATS, min_size=64, max_size=64))
def test_compiled_and_interpreted_reports_agree(values: list[float]) -> None:
    """Property: the report of the compiled run equals the interpreter's,
    field for field, and the counts satisfy their invariants."""
    a = np.array(values[:32], np.float32).reshape(4, 8)
    b = np.array(values[32:], np.float32).reshape(4, 8)
    compiled, interpreted = _both(NARROW, "narrow", a, b)
    assert compiled.to_json() == interpreted.to_json()
    ops = [v["op"] for v in compiled.values]
    assert ops == [
        "arbfp.convert_to",
        "arbfp.convert_from",
        "matrix.cast",
        "matrix.cast",
        "matrix.mul",
        "matrix.add",
        "func.return",
    ]
    for v in compiled.values:
        assert 0 <= v["saturated"] + v["nan"] + v["inf"] <= 2 * v["count"]
        assert v["sqnr_db"] == math.inf or v["max_abs_err"] > 0
    np.testing.assert_array_equal(compiled.results, _jit(NARROW, "narrow")(a, b))


def test_batch_report_adds_up_its_elements() -> None:
    rng = np.random.default_rng(11)
    a = (rng.standard_normal((3, 4, 8)) * 300).astype(np.float32)
    b = rng.standard_normal((4, 8)).astype(np.float32)
    f = _jit(NARROW, "narrow")
    batch = f.precision_report(a, b)
    singles = [f.precision_report(a[i], b) for i in range(3)]
    np.testing.assert_array_equal(batch.results, f(a, b))
    for i, entry in enumerate(batch.values):
        parts = [s.values[i] for s in singles]
        for key in ("count", "saturated", "underflow", "nan", "inf"):
            assert entry[key] == sum(p[key] for p in parts)
        for key in ("max_abs_err", "max_rel_err"):
            assert entry[key] == max(p[key] for p in parts)
        assert (
            min(p["sqnr_db"] for p in parts) - 1e-9
            <= entry["sqnr_db"]
            <= max(p["sqnr_db"] for p in parts) + 1e-9
        )


def test_blame_and_f16_overflow_underflow() -> None:
    a = np.full((4, 8), 1.0, np.float32)
    a[0, 0], a[0, 1] = (
        500.0,
        2.0**-12,
    )  # f8e4m3fn: NaN (no saturate), 0 (below half its least subnormal)
    b = np.full((4, 8), 0.5, np.float32)
    a[1, 1] = 2.0**-9  # f8e4m3fn's least subnormal
    b[1, 0], b[1, 1] = (
        70000.0,
        2.0**-16,
    )  # f16: inf; 2^-9 · 2^-16 is half f16's least subnormal: 0
    report = _jit(NARROW, "narrow").precision_report(a, b)
    to, _, _, cast_b, mul, _, result = report.values
    assert (to["saturated"], to["underflow"], to["nan"]) == (1, 1, 1)
    assert cast_b["saturated"] == 1 and cast_b["inf"] == 1
    assert mul["underflow"] == 1
    assert mul["input_sqnr_db"] == min(to["sqnr_db"], cast_b["sqnr_db"])
    assert mul["blame_db"] == mul["input_sqnr_db"] - mul["sqnr_db"]
    assert result["nan"] >= 1


def test_recommendation_is_the_narrowest_format_reaching_the_target() -> None:
    rng = np.random.default_rng(5)
    x = rng.standard_normal((8, 128)).astype(np.float32)
    text = _scaled_round_trip("f4e2m1fn", 8, 128, "floor")
    report = _jit(text, "q").precision_report(x, target_sqnr_db=25)
    rec = report.values[0]["recommendation"]
    candidates = rec["candidates"]
    for fmt in ELEMENT_FORMATS:  # each candidate's SQNR, independently
        values, _ = _ocp_reference(x, fmt, 32, "floor")
        assert candidates[fmt] == pytest.approx(
            _errors(values, x.astype(np.float64))["sqnr_db"], rel=1e-9
        )
    reaching = [f for f, s in candidates.items() if s >= 25]
    narrowest = min(WIDTH.get(f, 8) for f in reaching)
    assert WIDTH.get(rec["format"], 8) == narrowest
    assert candidates[rec["format"]] == max(
        candidates[f] for f in reaching if WIDTH.get(f, 8) == narrowest
    )
    assert candidates["f4e2m1fn"] < 25 <= rec["sqnr_db"]
    assert "recommend: " + rec["format"] in str(report)
    assert "recommendation" not in _jit(text, "q").precision_report(x).values[0]


def test_shadows_flow_through_packed_memory() -> None:
    """examples/mxfp4_matvec.mlir quantizes into packed bytes, loads them back
    and decodes them: the decoded weights keep the quantization's error."""
    from pathlib import Path

    text = (
        Path(__file__).resolve().parents[2] / "examples" / "mxfp4_matvec.mlir"
    ).read_text()
    rng = np.random.default_rng(1)
    w, x = (
        rng.standard_normal((16, 64)).astype(np.float32),
        rng.standard_normal(64).astype(np.float32),
    )
    packed, scales = np.zeros(512, np.uint8), np.zeros(32, np.uint8)
    report = _jit(text, "mxfp4_matvec").precision_report(w, x, packed, scales)
    by_op = {v["op"]: v for v in report.values}
    assert (
        by_op["arbfp.scaled_convert_from"]["sqnr_db"]
        == by_op["arbfp.scaled_convert_to"]["sqnr_db"]
        < 30
    )
    assert by_op["func.return"]["sqnr_db"] < 30
    assert packed.any()  # the run wrote the caller's buffers, as a call does


def test_json_table_and_errors() -> None:
    x = np.array([[1.0, 2.0, 7.0, 0.1]], np.float32)
    report = _jit(_round_trip("f4e2m1fn", 4), "q").precision_report(x)
    assert isinstance(report, mx.PrecisionReport)
    data = json.loads(report.to_json())
    assert data["version"] == 1 and data["values"][0]["input_sqnr_db"] == "inf"
    assert str(report).splitlines()[1].split()[:4] == ["op", "loc", "type", "count"]
    with pytest.raises(
        mx.MXError, match=r"<string>:3:3: error: 'math.fpowi' op is not supported"
    ):
        _jit(
            "func.func @r(%x: f32) -> f32 {\n  %n = arith.constant 3 : i32\n"
            "  %y = math.fpowi %x, %n : f32, i32\n  func.return %y : f32\n}\n",
            "r",
        ).precision_report(np.float32(2.0))
    with pytest.raises(ArgumentError):
        _jit(_round_trip("f4e2m1fn", 4), "q").precision_report(
            np.zeros((1, 3), np.float32)
        )


def test_unsupported_programs_are_located_errors() -> None:
    """Loops with bounds the compiled report cannot size its buffers by,
    and region ops other than scf.for, affine.for and scf.if."""
    loop = (
        "func.func @l(%x: f32, %n: index) -> f32 {\n"
        "  %c0 = arith.constant 0 : index\n"
        "  %c1 = arith.constant 1 : index\n"
        "  %r = scf.for %i = %c0 to %n step %c1 iter_args(%a = %x) -> (f32) {\n"
        "    %s = arith.addf %a, %a : f32\n"
        "    scf.yield %s : f32\n"
        "  }\n"
        "  func.return %r : f32\n"
        "}\n"
    )
    with pytest.raises(
        mx.MXError,
        match=r"<string>:4:3: error: 'scf.for' op is not supported by the precision report: the compiled report needs constant loop bounds",
    ):
        _jit(loop, "l").precision_report(np.float32(1.0), 2)
    report = _interpreted(loop, "l", np.float32(1.5), 3)  # the interpreter runs it
    assert report.values[-1]["op"] == "func.return"
    assert report.results[0].value.data == 12.0  # 1.5 doubled 3 times
    while_loop = (
        "func.func @w(%x: f32) -> f32 {\n"
        "  %r = scf.while (%a = %x) : (f32) -> f32 {\n"
        "    %c = arith.constant true\n"
        "    scf.condition(%c) %a : f32\n"
        "  } do {\n"
        "  ^bb0(%b: f32):\n"
        "    scf.yield %b : f32\n"
        "  }\n"
        "  func.return %r : f32\n"
        "}\n"
    )
    with pytest.raises(
        mx.MXError,
        match=r"<string>:2:3: error: 'scf.while' op is not supported by the precision report: only scf.for, affine.for and scf.if",
    ):
        _interpreted(while_loop, "w", np.float32(1.0))


def test_memref_loads_count_as_exact() -> None:
    """A float read from a memref argument is an input: exact, so the f16
    truncation that follows is where the error starts."""
    text = (
        "func.func @m(%m: memref<4xf32>) -> f16 {\n"
        "  %c = arith.constant 1 : index\n"
        "  %x = memref.load %m[%c] : memref<4xf32>\n"
        "  %h = arith.truncf %x : f32 to f16\n"
        "  func.return %h : f16\n"
        "}\n"
    )
    m = np.array([1.0, 0.1, 3.0, 4.0], np.float32)
    for report in _both(text, "m", m):
        truncf, returned = report.values
        expected = _errors(
            np.array([float(np.float16(np.float32(0.1)))]),
            np.array([float(np.float32(0.1))]),
        )
        _assert_errors(truncf, expected)
        assert truncf["input_sqnr_db"] == math.inf and truncf["blame_db"] == math.inf
        assert returned["sqnr_db"] == truncf["sqnr_db"]


@pytest.mark.parametrize("unsigned", [False, True])
def test_integer_sources_are_exact_shadows(unsigned: bool) -> None:
    """An integer converted to f16 is shadowed by its exact value, read as
    unsigned with `{unsigned}`: 255 and -128 are exact in f16, 2049 is not,
    and -1 read as 65535 overflows f16 to inf."""
    attr = " {unsigned}" if unsigned else ""
    text = (
        "func.func @c(%a: !matrix.matrix<1x4xi16>) -> !matrix.matrix<1x4xf16> {\n"
        f"  %f = matrix.cast %a{attr} : !matrix.matrix<1x4xi16> to !matrix.matrix<1x4xf16>\n"
        "  func.return %f : !matrix.matrix<1x4xf16>\n}\n"
    )
    a = np.array([[255, -128, 2049, -1]], np.int16)
    exact = a.view(np.uint16).astype(np.float64) if unsigned else a.astype(np.float64)
    with np.errstate(over="ignore"):
        rounded = exact.astype(np.float16).astype(np.float64)
    for report in _both(text, "c", a):
        cast = report.values[0]
        _assert_errors(cast, _errors(rounded, exact))
        assert cast["max_abs_err"] == 1.0  # 2049 -> 2048
        assert (cast["saturated"], cast["inf"]) == ((1, 1) if unsigned else (0, 0))


def test_vector_programs_compiled_and_interpreted_agree() -> None:
    """Vectors of i4 encodings and f16 values are captured from the compiled
    run (vector stores) as the interpreter computes them."""
    from pathlib import Path

    text = (
        Path(__file__).parents[1]
        / "filecheck"
        / "interpreter"
        / "precision_report.mlir"
    ).read_text()
    x = np.array([0.1, 0.2, 7.0, -100.0, 0.24, 0.26, 1e-30, 3.0], np.float32)
    for name in ("quantize", "mx"):
        compiled, interpreted = _both(text, name, x)
        assert compiled.to_json() == interpreted.to_json()
    assert [v["saturated"] for v in compiled.values] == [1, 1, 0]


def test_shadows_flow_through_memref_and_vector_stores() -> None:
    """A quantized value stored with `memref.store`/`vector.store` and loaded
    back keeps its shadow (the unquantized value): the f16 ops after the load
    see the quantization's error; elements never stored are exact inputs."""
    text = (
        "func.func @m(%m: memref<8xf32>) -> (f16, vector<4xf16>) {\n"
        "  %c0 = arith.constant 0 : index\n"
        "  %c1 = arith.constant 1 : index\n"
        "  %c4 = arith.constant 4 : index\n"
        "  %x = memref.load %m[%c0] : memref<8xf32>\n"
        "  %q = arbfp.convert_to f4e2m1fn %x : f32 to i4\n"
        "  %d = arbfp.convert_from f4e2m1fn %q : i4 to f32\n"
        "  memref.store %d, %m[%c1] : memref<8xf32>\n"
        "  %y = memref.load %m[%c1] : memref<8xf32>\n"
        "  %h = arith.truncf %y : f32 to f16\n"
        "  %v = vector.load %m[%c0] : memref<8xf32>, vector<4xf32>\n"
        "  %vq = arbfp.convert_to f4e2m1fn %v : vector<4xf32> to vector<4xi4>\n"
        "  %vd = arbfp.convert_from f4e2m1fn %vq : vector<4xi4> to vector<4xf32>\n"
        "  vector.store %vd, %m[%c4] : memref<8xf32>, vector<4xf32>\n"
        "  %w = vector.load %m[%c1] : memref<8xf32>, vector<4xf32>\n"
        "  %wh = arith.truncf %w : vector<4xf32> to vector<4xf16>\n"
        "  func.return %h, %wh : f16, vector<4xf16>\n"
        "}\n"
    )
    m = np.array([0.3, 9.0, 2.5, 1.0, 7.0, 7.0, 7.0, 7.0], np.float32)
    x = float(np.float32(0.3))
    for report in _both(text, "m", m.copy()):
        by_loc = {v["loc"]: v for v in report.values}
        truncf = by_loc["<string>:10:3"]
        assert truncf["max_abs_err"] == pytest.approx(0.5 - x, rel=1e-12)  # 0.3 -> 0.5
        # %w = [m1, m2, m3, m4] = [0.5 (shadow 0.3), 2.5, 1.0, 0.5 (shadow 0.3)]:
        # m2, m3 were never stored (exact); m4 holds %vd[0], whose shadow is 0.3.
        vector_truncf = by_loc["<string>:16:3"]
        assert vector_truncf["max_abs_err"] == pytest.approx(0.5 - x, rel=1e-12)
        _assert_errors(
            vector_truncf,
            _errors(np.array([0.5, 2.5, 1.0, 0.5]), np.array([x, 2.5, 1.0, x])),
        )


def test_matrix_loads_of_partly_stored_floats() -> None:
    """A matrix load covering stored (shadowed) and never stored elements:
    the latter are exact inputs, the former keep their shadow."""
    m12, m14 = "!matrix.matrix<1x2xf32>", "!matrix.matrix<1x4xf32>"
    text = (
        f"func.func @p(%m: memref<4xf32>, %a: {m12}) -> !matrix.matrix<1x4xf16> {{\n"
        f"  %q = arbfp.convert_to f4e2m1fn %a : {m12} to !matrix.matrix<1x2xi4>\n"
        f"  %d = arbfp.convert_from f4e2m1fn %q : !matrix.matrix<1x2xi4> to {m12}\n"
        f"  matrix.row_major_store %d, %m[1] : {m12}, memref<4xf32>\n"
        f"  %l = matrix.row_major_load %m[0] : memref<4xf32> -> {m14}\n"
        f"  %h = matrix.cast %l : {m14} to !matrix.matrix<1x4xf16>\n"
        "  func.return %h : !matrix.matrix<1x4xf16>\n}\n"
    )
    m = np.array([0.1, 9.0, 9.0, 3.0], np.float32)
    a = np.array([[0.3, 5.0]], np.float32)
    loaded = np.array([np.float32(0.1), 0.5, 4.0, 3.0])
    shadow = np.array([np.float32(0.1), np.float32(0.3), 5.0, 3.0])
    for report in _both(text, "p", m.copy(), a):
        cast = report.values[2]
        assert cast["op"] == "matrix.cast"
        _assert_errors(
            cast, _errors(loaded.astype(np.float16).astype(np.float64), shadow)
        )


def test_bad_options_are_argument_errors() -> None:
    f = _jit(_round_trip("f4e2m1fn", 4), "q")
    x = np.zeros((1, 4), np.float32)
    with pytest.raises(
        ArgumentError, match=r"unknown option out \(the option is target_sqnr_db\)"
    ):
        f.precision_report(x, out=x)
    with pytest.raises(
        ArgumentError, match="target_sqnr_db must be a number of dB, got 'high'"
    ):
        f.precision_report(x, target_sqnr_db="high")
    assert f.precision_report(x, target_sqnr_db=30).target_sqnr_db == 30.0


ROWS = """
func.func @rows(%w: !matrix.matrix<6x64xf32>, %x: vector<64xf32>, %v: vector<64xf32>) -> (vector<6xf32>, vector<64xi8>) {
  %q, %s = arbfp.scaled_convert_to f4e2m1fn %w block 32 : !matrix.matrix<6x64xf32> to !matrix.matrix<6x64xi4>, !matrix.matrix<6x2xi8>
  %d = arbfp.scaled_convert_from f4e2m1fn %q, %s block 32 : !matrix.matrix<6x64xi4>, !matrix.matrix<6x2xi8> to !matrix.matrix<6x64xf32>
  %e = arbfp.convert_to f8e4m3fn %v saturate : vector<64xf32> to vector<64xi8>
  %y = matrix.matvec %d, %x : !matrix.matrix<6x64xf32>, vector<64xf32> -> vector<6xf32>
  func.return %y, %e : vector<6xf32>, vector<64xi8>
}
"""


def test_conversions_run_by_row_kernels_without_an_instrumented_copy(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A function of conversions and returned values is reported from its
    own call (what it returns) and row kernels of its conversions: no
    instrumented copy of the whole function is compiled, and the report
    equals the interpreter's field for field (rows of every block)."""
    import mx.precision

    def no_copy(*_: object) -> None:
        raise AssertionError("compiled an instrumented copy")

    rng = np.random.default_rng(5)
    w = _blocks_input(rng, 6, 64)
    x = rng.standard_normal(64).astype(np.float32)
    v = np.array([500.0, -1e-9, 3.0, math.nan] * 16, np.float32)
    interpreted = _interpreted(ROWS, "rows", w, x, v)
    monkeypatch.setattr(mx.precision, "instrument", no_copy)
    compiled = _jit(ROWS, "rows").precision_report(w, x, v)
    assert compiled.to_json() == interpreted.to_json()
    assert [r["op"] for r in compiled.values][:3] == [
        "arbfp.scaled_convert_to",
        "arbfp.scaled_convert_from",
        "arbfp.convert_to",
    ]
    assert compiled.values[2]["saturated"] == 16
    y, e = _jit(ROWS, "rows")(w, x, v)
    np.testing.assert_array_equal(compiled.results[0], y)
    np.testing.assert_array_equal(compiled.results[1], e)


MATH = """
func.func @m(%x: vector<8xf16>, %a: vector<8xf16>, %b: vector<8xf16>) -> (vector<8xf16>, vector<8xf16>, vector<8xf16>, vector<8xf32>) {
  %e = math.exp %x : vector<8xf16>
  %r = math.sqrt %a : vector<8xf16>
  %f = vector.fma %a, %b, %x : vector<8xf16>
  %g = math.fma %a, %b, %f : vector<8xf16>
  %w = arith.extf %g : vector<8xf16> to vector<8xf32>
  %t = math.log %w : vector<8xf32>
  func.return %e, %r, %f, %t : vector<8xf16>, vector<8xf16>, vector<8xf16>, vector<8xf32>
}
"""


def test_math_and_fma_shadows_against_python_math_and_fractions() -> None:
    """`math.exp`, `math.sqrt`, `vector.fma`, `math.fma` on f16 vectors: the
    counts and errors of each against a shadow from Python's `math` (exp,
    sqrt) and exact rationals (the fmas, whose f64 shadow is exact here);
    exp(11.1) > 65504 saturates, exp(-18) < 2^-25 underflows. The compiled
    report equals the interpreter's."""
    from fractions import Fraction

    x = np.array([0, 1, -1, 11.08, 11.1, -18, np.nan, 2.5], np.float16)
    a = np.array([4, 2, -1, 0, 3, 1e-4, 65504, 7], np.float16)
    b = np.array([0.5, 3, 2, 1, 1e4, 1e-4, 2, 3], np.float16)
    compiled, interpreted = _both(MATH, "m", x, a, b)
    assert compiled.to_json() == interpreted.to_json()
    e, r, f, _ = (np.asarray(v, np.float64) for v in compiled.results)
    xs, as_, bs = (v.astype(np.float64).tolist() for v in (x, a, b))
    exp = np.array([math.exp(v) if v == v else math.nan for v in xs])
    sqrt = np.array([math.sqrt(v) if v >= 0 else math.nan for v in as_])
    fma = np.array(
        [
            float(Fraction(p) * Fraction(q) + Fraction(s)) if s == s else math.nan
            for p, q, s in zip(as_, bs, xs, strict=True)
        ]
    )
    records = {v["op"]: v for v in compiled.values}
    _assert_errors(records["math.exp"], _errors(e, exp))
    assert records["math.exp"]["saturated"] == 1  # exp(11.1) = 66171
    assert records["math.exp"]["underflow"] == 1  # exp(-18) = 1.5e-8
    assert records["math.exp"]["blame_db"] == math.inf
    _assert_errors(records["math.sqrt"], _errors(r, sqrt))
    assert records["math.sqrt"]["nan"] == 1  # sqrt(-1)
    _assert_errors(records["vector.fma"], _errors(f, fma))
    assert records["vector.fma"]["max_abs_err"] > 0  # 3 * 1e4 - 18 rounds


def test_tanh_shadow_in_the_interpreter() -> None:
    """`math.tanh` (run by the interpreter; the JIT does not lower it)
    against Python's `math.tanh`: bf16 rounding of tanh near ±1."""
    text = """
func.func @t(%x: vector<6xbf16>) -> vector<6xbf16> {
  %t = math.tanh %x : vector<6xbf16>
  func.return %t : vector<6xbf16>
}
"""
    x = np.array([0.5, -0.75, 3.0, 1e-3, -20.0, 0.0], ml_dtypes.bfloat16)
    report = _interpreted(text, "t", x)
    value = np.asarray(report.results[0]).astype(np.float64)
    shadow = np.array([math.tanh(v) for v in x.astype(np.float64).tolist()])
    tanh = report.values[0]
    assert tanh["op"] == "math.tanh" and tanh["count"] == 6
    _assert_errors(tanh, _errors(value, shadow))
    assert tanh["sqnr_db"] < math.inf


LAYERS = """
func.func @decode(%w: memref<96xf32>, %x: vector<8xf32>) -> vector<8xf32> {
  %c32 = arith.constant 32 : index
  %r = affine.for %l = 0 to 3 iter_args(%h = %x) -> (vector<8xf32>) {
    %base = arith.muli %l, %c32 : index
    %wl = vector.load %w[%base] : memref<96xf32>, vector<8xf32>
    %q = arbfp.convert_to f8e4m3fn %wl : vector<8xf32> to vector<8xi8>
    %d = arbfp.convert_from f8e4m3fn %q : vector<8xi8> to vector<8xf32>
    %a = arith.truncf %h : vector<8xf32> to vector<8xf16>
    %b = arith.truncf %d : vector<8xf32> to vector<8xf16>
    %p = arith.mulf %a, %b : vector<8xf16>
    %e = arith.extf %p : vector<8xf16> to vector<8xf32>
    %n = arith.addf %e, %h : vector<8xf32>
    affine.yield %n : vector<8xf32>
  }
  func.return %r : vector<8xf32>
}
"""


def test_layer_loop_aggregates_iterations_and_carries_shadows() -> None:
    """A decode-style loop over 3 layers (index offsets into a memref,
    the hidden vector carried through iter_args): one record per op site
    over all iterations, as a batch adds up; the convert_to record against
    ml_dtypes on the three weight slices; the result against the same loop
    run in f64 by NumPy (the carried shadow). Compiled == interpreted."""
    rng = np.random.default_rng(9)
    w = (rng.standard_normal(96) * 3).astype(np.float32)
    w[3] = 500.0  # above f8e4m3fn's 448: saturates (to NaN without saturate)
    x = rng.standard_normal(8).astype(np.float32)
    compiled, interpreted = _both(LAYERS, "decode", w, x)
    assert compiled.to_json() == interpreted.to_json()
    slices = np.concatenate([w[32 * i : 32 * i + 8] for i in range(3)])
    quantized = slices.astype(ml_dtypes.float8_e4m3fn).astype(np.float64)
    convert = compiled.values[0]
    assert convert["op"] == "arbfp.convert_to" and convert["count"] == 24
    assert convert["saturated"] == 1 and convert["nan"] == 1
    _assert_errors(convert, _errors(quantized, slices.astype(np.float64)))
    shadow = x.astype(np.float64)
    for i in range(3):
        shadow = shadow * w[32 * i : 32 * i + 8].astype(np.float64) + shadow
    result = np.asarray(compiled.results, np.float64)
    returned = compiled.values[-1]
    assert returned["op"] == "func.return" and returned["count"] == 8
    _assert_errors(returned, _errors(result, shadow))
    assert [v["count"] for v in compiled.values[1:-1]] == [24] * 4


BRANCHES = """
func.func @branches(%x: vector<8xf32>) -> vector<8xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c5 = arith.constant 5 : index
  %r = scf.for %i = %c0 to %c5 step %c1 iter_args(%h = %x) -> (vector<8xf32>) {
    %low = arith.cmpi ult, %i, %c2 : index
    %y = scf.if %low -> (vector<8xf32>) {
      %q = arbfp.convert_to f4e2m1fn %h : vector<8xf32> to vector<8xi4>
      %d = arbfp.convert_from f4e2m1fn %q : vector<8xi4> to vector<8xf32>
      scf.yield %d : vector<8xf32>
    } else {
      %q = arbfp.convert_to f8e5m2 %h : vector<8xf32> to vector<8xi8>
      %d = arbfp.convert_from f8e5m2 %q : vector<8xi8> to vector<8xf32>
      scf.yield %d : vector<8xf32>
    }
    scf.yield %y : vector<8xf32>
  }
  func.return %r : vector<8xf32>
}
"""


def test_branches_in_a_loop_report_the_runs_of_each_site() -> None:
    """scf.if in a 5-iteration scf.for: the then branch (FP4) runs twice,
    the else branch (FP8 e5m2) three times; each convert_to's record sums its
    runs, against ml_dtypes conversions of the values it received (the
    carried vector) and the unquantized input as the shadow throughout."""
    x = np.array([0.3, -1.7, 2.2, 5.0, -0.04, 7.5, 0.9, -3.1], np.float32)
    compiled, interpreted = _both(BRANCHES, "branches", x)
    assert compiled.to_json() == interpreted.to_json()
    h, fp4, fp8 = x.astype(np.float64), [], []
    for i in range(5):
        dtype = ml_dtypes.float4_e2m1fn if i < 2 else ml_dtypes.float8_e5m2
        (fp4 if i < 2 else fp8).append(h)
        h = h.astype(np.float32).astype(dtype).astype(np.float64)
    by_format = {
        v["format"]: v for v in compiled.values if v["op"] == "arbfp.convert_to"
    }
    shadow = x.astype(np.float64)
    for fmt, inputs, dtype in (
        ("f4e2m1fn", fp4, ml_dtypes.float4_e2m1fn),
        ("f8e5m2", fp8, ml_dtypes.float8_e5m2),
    ):
        record = by_format[fmt]
        assert record["count"] == 8 * len(inputs)
        values = np.concatenate(
            [v.astype(np.float32).astype(dtype).astype(np.float64) for v in inputs]
        )
        _assert_errors(record, _errors(values, np.tile(shadow, len(inputs))))
    np.testing.assert_array_equal(compiled.results, h.astype(np.float32))


def _loop_program(trips: int, split: int, carried: str) -> str:
    """A loop of `trips` iterations carrying a vector<8xf32>: iterations
    below `split` quantize to FP4 (MXFP4 blocks of 4), the others to FP8 and
    multiply in f16 by the loop's input; `carried` chooses scf.for or
    affine.for."""
    body = """
    %low = arith.cmpi ult, %i, %split : index
    %y = scf.if %low -> (vector<8xf32>) {
      %q, %s = arbfp.scaled_convert_to f4e2m1fn %h block 4 : vector<8xf32> to vector<8xi4>, vector<2xi8>
      %d = arbfp.scaled_convert_from f4e2m1fn %q, %s block 4 : vector<8xi4>, vector<2xi8> to vector<8xf32>
      scf.yield %d : vector<8xf32>
    } else {
      %q = arbfp.convert_to f8e4m3fn %h : vector<8xf32> to vector<8xi8>
      %d = arbfp.convert_from f8e4m3fn %q : vector<8xi8> to vector<8xf32>
      %a = arith.truncf %d : vector<8xf32> to vector<8xf16>
      %b = arith.truncf %x : vector<8xf32> to vector<8xf16>
      %p = arith.mulf %a, %b : vector<8xf16>
      %e = arith.extf %p : vector<8xf16> to vector<8xf32>
      scf.yield %e : vector<8xf32>
    }"""
    if carried == "scf":
        loop = (
            f"  %r = scf.for %i = %c0 to %n step %c1 iter_args(%h = %x) -> (vector<8xf32>) {{{body}\n"
            "    scf.yield %y : vector<8xf32>\n  }\n"
        )
    else:
        loop = (
            f"  %r = affine.for %i = 0 to {trips} iter_args(%h = %x) -> (vector<8xf32>) {{{body}\n"
            "    affine.yield %y : vector<8xf32>\n  }\n"
        )
    return (
        "func.func @loop(%x: vector<8xf32>) -> vector<8xf32> {\n"
        "  %c0 = arith.constant 0 : index\n"
        "  %c1 = arith.constant 1 : index\n"
        f"  %n = arith.constant {trips} : index\n"
        f"  %split = arith.constant {split} : index\n"
        f"{loop}"
        "  func.return %r : vector<8xf32>\n}\n"
    )


@settings(max_examples=12, deadline=None)
@given(
    st.integers(0, 3),
    st.integers(0, 3),
    st.sampled_from(["scf", "affine"]),
    st.lists(_FLOATS, min_size=8, max_size=8),
)
def test_loops_and_branches_compiled_and_interpreted_agree(
    trips: int, split: int, carried: str, values: list[float]
) -> None:
    """Property: for loops of 0 to 3 iterations over both branches of an
    scf.if (block-scaled and plain conversions, f16 arithmetic), the report of
    the compiled run equals the interpreter's field for field; each site's
    count is its elements times its runs."""
    text = _loop_program(trips, split, carried)
    x = np.array(values, np.float32)
    compiled, interpreted = _both(text, "loop", x)
    assert compiled.to_json() == interpreted.to_json()
    fp4_runs, fp8_runs = min(trips, split), trips - min(trips, split)
    counts = {(v["op"], v.get("format")): v["count"] for v in compiled.values}
    assert counts.get(("arbfp.scaled_convert_to", "f4e2m1fn"), 0) == 8 * fp4_runs
    assert counts.get(("arbfp.convert_to", "f8e4m3fn"), 0) == 8 * fp8_runs
    assert counts[("func.return", None)] == 8


def test_batches_of_row_kernel_reports_add_up() -> None:
    """The function-and-row-kernels path over a batch of 3: each record is
    the sum of the three single reports (counts added, maxima of errors)."""
    rng = np.random.default_rng(13)
    w = np.stack([_blocks_input(rng, 6, 64) for _ in range(3)])
    x = rng.standard_normal(64).astype(np.float32)
    v = (rng.standard_normal((3, 64)) * 300).astype(np.float32)
    f = _jit(ROWS, "rows")
    batch = f.precision_report(w, x, v)
    singles = [f.precision_report(w[i], x, v[i]) for i in range(3)]
    np.testing.assert_array_equal(batch.results[0], f(w, x, v)[0])
    for i, entry in enumerate(batch.values):
        parts = [s.values[i] for s in singles]
        for key in ("count", "saturated", "underflow", "nan", "inf"):
            assert entry[key] == sum(p[key] for p in parts)
        for key in ("max_abs_err", "max_rel_err"):
            assert entry[key] == max(p[key] for p in parts)


DECODE_LOOP = """
func.func @decode(%w: memref<3072xf32>, %x: vector<32xf32>) -> vector<32xf32> {
  %c0 = arith.constant 0 : index
  %c3 = arith.constant 3 : index
  %c1 = arith.constant 1 : index
  %c1024 = arith.constant 1024 : index
  %r = scf.for %l = %c0 to %c3 step %c1 iter_args(%h = %x) -> (vector<32xf32>) {
    %base = arith.muli %l, %c1024 : index
    %wl = matrix.row_major_load %w[%base] : memref<3072xf32> -> !matrix.matrix<32x32xf32>
    %q, %s = arbfp.scaled_convert_to f4e2m1fn %wl block 32 : !matrix.matrix<32x32xf32> to !matrix.matrix<32x32xi4>, !matrix.matrix<32x1xi8>
    %d = arbfp.scaled_convert_from f4e2m1fn %q, %s block 32 : !matrix.matrix<32x32xi4>, !matrix.matrix<32x1xi8> to !matrix.matrix<32x32xf32>
    %y = matrix.matvec %d, %h : !matrix.matrix<32x32xf32>, vector<32xf32> -> vector<32xf32>
    scf.yield %y : vector<32xf32>
  }
  func.return %r : vector<32xf32>
}
"""


def test_decode_loop_over_mxfp4_layers() -> None:
    """An LLM-style decode loop: each of 3 layers loads its 32×32 f32
    weights at an offset into one memref, quantizes them to MXFP4 and
    multiplies the carried hidden vector. The scaled_convert_to record (all
    3 layers, both scale rules) against the OCP MX formulation in
    NumPy/ml_dtypes of the 3 weight matrices stacked; the result against the
    3 matvecs on the unquantized weights (f64 products, `math.fsum`).
    Compiled == interpreted."""
    rng = np.random.default_rng(17)
    w = (rng.standard_normal(3072) * 0.2).astype(np.float32)
    w[rng.random(3072) < 0.02] *= 30
    x = rng.standard_normal(32).astype(np.float32)
    compiled, interpreted = _both(DECODE_LOOP, "decode", w, x)
    assert compiled.to_json() == interpreted.to_json()
    entry = compiled.values[0]
    assert entry["op"] == "arbfp.scaled_convert_to"
    assert entry["count"] == 3072 and entry["blocks"] == 96
    layers = w.reshape(96, 32)  # the 3 layers' rows, stacked
    for rule in ("floor", "ceil"):
        values, units = _ocp_reference(layers, "f4e2m1fn", 32, rule)
        over = np.abs(units) > 6
        counts = entry["rules"][rule]
        assert counts["saturated"] == int(over.sum()), rule
        assert counts["clipped_blocks"] == int(over.any(axis=1).sum()), rule
        assert counts["underflow"] == int(((units != 0) & (values == 0)).sum()), rule
        _assert_errors(counts, _errors(values.ravel(), w.astype(np.float64)))
    shadow = x.astype(np.float64).tolist()
    for layer in w.astype(np.float64).reshape(3, 32, 32).tolist():
        shadow = [
            math.fsum(a * b for a, b in zip(row, shadow, strict=True)) for row in layer
        ]
    returned = compiled.values[-1]
    assert returned["op"] == "func.return"
    _assert_errors(
        returned, _errors(np.asarray(compiled.results, np.float64), np.array(shadow))
    )
    np.testing.assert_array_equal(compiled.results, _jit(DECODE_LOOP, "decode")(w, x))

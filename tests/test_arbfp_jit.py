"""convert-arbfp-to-arith, compiled by LLVM, bit for bit against the references.

Scalar functions (vectors are not lowered yet): convert_from of every encoding
of every format into every float type; convert_to of a sample with the edge
cases of each format, in every mode, with and without saturation.
MX_LONG_TESTS=1 converts every f16 input too.
"""

from __future__ import annotations

import os

import numpy as np
import pytest
from reference import exact_fp as ref

from mx.jit import compile_module, jit
from mx.semantics.arbfp import FLOAT_DTYPES, FORMATS, Rounding

PIPELINE = "convert-arbfp-to-arith,convert-to-llvm"
LONG = os.environ.get("MX_LONG_TESTS") == "1"


@pytest.mark.parametrize("float_type", FLOAT_DTYPES)
@pytest.mark.parametrize("name", FORMATS)
def test_convert_from_every_encoding(name: str, float_type: str) -> None:
    fmt = FORMATS[name]
    c = f"i{fmt.bits}"
    f = jit(
        f"""func.func @f(%b: {c}) -> {float_type} {{
  %r = arbfp.convert_from {name} %b : {c} to {float_type}
  func.return %r : {float_type}
}}""",
        "f",
        PIPELINE,
    )
    for bits in range(1 << fmt.bits):
        got = float(np.asarray(f(bits)).astype(np.float64))
        want = ref.decode(name, bits)
        if float_type == "f16":
            want = ref.to_f16(want)
        assert ref.exact(got) == want or (want == "nan" and got != got), (bits, got)


def _inputs(name: str, float_type: str) -> np.ndarray:
    dtype = FLOAT_DTYPES[float_type]
    if LONG and float_type == "f16":
        return np.arange(1 << 16, dtype=np.uint16).view(np.float16)
    points = np.array([float(p) for p in ref._pieces(name)[1]])
    rng = np.random.default_rng(7)
    with np.errstate(over="ignore"):
        base = points.astype(dtype)
        sample = (rng.standard_normal(200) * 10.0 ** rng.integers(-8, 6, 200)).astype(
            dtype
        )
    inf = np.array(np.inf, dtype=dtype)
    specials = np.array([0.0, -0.0, np.inf, -np.inf, np.nan], dtype=dtype)
    return np.concatenate(
        [base, np.nextafter(base, inf), np.nextafter(base, -inf), sample, specials]
    )


@pytest.mark.parametrize("float_type", FLOAT_DTYPES)
@pytest.mark.parametrize("name", FORMATS)
def test_convert_to(name: str, float_type: str) -> None:
    fmt = FORMATS[name]
    c = f"i{fmt.bits}"
    xs = _inputs(name, float_type)
    variants = [(mode, saturate) for mode in Rounding for saturate in (False, True)]
    functions = "\n".join(
        f"""func.func @f{i}(%x: {float_type}) -> {c} {{
  %r = arbfp.convert_to {name} %x rounding {mode.value}{" saturate" if saturate else ""} : {float_type} to {c}
  func.return %r : {c}
}}"""
        for i, (mode, saturate) in enumerate(variants)
    )
    module = compile_module(functions, PIPELINE)  # one compilation for all variants
    for i, (mode, saturate) in enumerate(variants):
        f = module[f"f{i}"]
        got = np.array([int(f(x)) for x in xs]) & ((1 << fmt.bits) - 1)
        want = ref.encode_array(name, xs, mode.value, saturate)
        same = ref.same_results(name, got, want, xs)
        assert same.all(), (mode, saturate, xs[~same][:6], got[~same][:6])

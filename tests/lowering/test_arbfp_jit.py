"""convert-arbfp-to-arith, compiled by LLVM, bit for bit against the references.

Each kernel converts a whole array in one call: an `scf.for` loop storing
`convert(in[i])` to `out[i]`, either one scalar per step or one
`vector<8x...>` per step (vector operands of the conversions; i4/i6 vectors
are gathered from and scattered to their byte-per-element memrefs). For every
format and float type:
- convert_from of every encoding (i4/i6 bytes with random high bits, which
  loads ignore), against the exact reference and ml_dtypes;
- convert_to of every f16 and bf16 value and of fixed-seed f32/f64 samples with
  the format's edge cases (`arbfp_inputs`), in every rounding mode with and
  without saturation, each as a scalar or a vector kernel (`_variants`),
  against the exact reference, and nearest_even against ml_dtypes.
  MX_LONG_TESTS=1: 2*10^6 random f32 and f64 inputs per mode, every mode
  and saturation in both shapes.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from mx.jit import compile_module
from mx.semantics.arbfp import FLOAT_TYPES, FORMATS, Rounding, float_dtype
from tests.reference import arbfp_inputs as inputs
from tests.reference import exact_fp as ref

PIPELINE = "convert-arbfp-to-arith,convert-to-llvm"
LANES = 8
SHAPES = {"scalar": 1, "vector": LANES}
VARIANTS = [(mode, saturate) for mode in Rounding for saturate in (False, True)]


def _gathered(t: str) -> bool:
    """Sub-byte vectors are moved lane by lane: LLVM packs `<16 x i6>` in memory."""
    return t in ("i4", "i6")


def _load(t: str, lanes: int) -> tuple[list[str], str]:
    if lanes == 1:
        return [f"%x = memref.load %in[%i] : memref<?x{t}>"], "%x"
    vector = f"vector<{lanes}x{t}>"
    if not _gathered(t):
        return [f"%x = vector.load %in[%i] : memref<?x{t}>, {vector}"], "%x"
    lines = [f"%x0 = arith.constant dense<0> : {vector}"]
    for j in range(lanes):
        lines += [
            f"%lo{j} = arith.constant {j} : index",
            f"%li{j} = arith.addi %i, %lo{j} : index",
            f"%le{j} = memref.load %in[%li{j}] : memref<?x{t}>",
            f"%x{j + 1} = vector.insert %le{j}, %x{j} [{j}] : {t} into {vector}",
        ]
    return lines, f"%x{lanes}"


def _store(t: str, lanes: int) -> list[str]:
    if lanes == 1:
        return [f"memref.store %y, %out[%i] : memref<?x{t}>"]
    vector = f"vector<{lanes}x{t}>"
    if not _gathered(t):
        return [f"vector.store %y, %out[%i] : memref<?x{t}>, {vector}"]
    lines: list[str] = []
    for j in range(lanes):
        lines += [
            f"%so{j} = arith.constant {j} : index",
            f"%si{j} = arith.addi %i, %so{j} : index",
            f"%se{j} = vector.extract %y[{j}] : {t} from {vector}",
            f"memref.store %se{j}, %out[%si{j}] : memref<?x{t}>",
        ]
    return lines


def _kernel(fn: str, op: str, source: str, dest: str, lanes: int) -> str:
    """`@fn(%in: memref<?xsource>, %out: memref<?xdest>, %n: index)` storing
    `op` of each element; `op` spells the conversion with `{x}` for the
    operand and `{s}`/`{d}` for the operand/result types."""
    load, x = _load(source, lanes)

    def shaped(t: str) -> str:
        return t if lanes == 1 else f"vector<{lanes}x{t}>"

    convert = "%y = " + op.format(x=x, s=shaped(source), d=shaped(dest))
    body = "\n    ".join([*load, convert, *_store(dest, lanes)])
    return f"""func.func @{fn}(%in: memref<?x{source}>, %out: memref<?x{dest}>, %n: index) {{
  %c0 = arith.constant 0 : index
  %step = arith.constant {lanes} : index
  scf.for %i = %c0 to %n step %step {{
    {body}
  }}
  func.return
}}"""


def _run(f: Any, x: np.ndarray, out_dtype: Any) -> np.ndarray:
    """`f` over all of `x` (padded to whole vectors)."""
    n = len(x)
    padded = -(-n // LANES) * LANES
    data = np.zeros(padded, x.dtype)
    data[:n] = x
    out = np.zeros(padded, out_dtype)
    f(data, out, padded)
    return out[:n]


@pytest.mark.parametrize("float_type", FLOAT_TYPES)
@pytest.mark.parametrize("name", FORMATS)
def test_convert_from_every_encoding(name: str, float_type: str) -> None:
    fmt = FORMATS[name]
    c = f"i{fmt.bits}"
    op = f"arbfp.convert_from {name} {{x}} : {{s}} to {{d}}"
    module = compile_module(
        "\n".join(
            _kernel(shape, op, c, float_type, lanes) for shape, lanes in SHAPES.items()
        ),
        PIPELINE,
    )
    encodings = np.arange(1 << fmt.bits)
    rng = np.random.default_rng(3)
    high = rng.integers(0, 256 >> fmt.bits, encodings.size) << fmt.bits
    stored = (encodings | high).astype(np.uint8).view(np.int8)
    want = [ref.decode(name, int(b)) for b in encodings]
    if float_type == "f16":
        want = [ref.to_f16(w) for w in want]
    dtype = float_dtype(float_type)
    for shape in SHAPES:
        got = _run(module[shape], stored, dtype)
        values = got.astype(np.float64).tolist()
        wrong = [
            (hex(b), v, w)
            for b, v, w in zip(encodings.tolist(), values, want, strict=True)
            if not (ref.exact(v) == w or (w == "nan" and v != v))
        ]
        assert not wrong, (shape, wrong[:6])
        if name in inputs.ML_DTYPES:
            expected = encodings.astype(np.uint8).view(inputs.ML_DTYPES[name])
            expected = expected.astype(dtype)
            unsigned = f"uint{dtype.itemsize * 8}"
            same = got.view(unsigned) == expected.view(unsigned)
            with np.errstate(invalid="ignore"):
                same |= np.isnan(got.astype(np.float32)) & np.isnan(
                    expected.astype(np.float32)
                )
            assert same.all(), (shape, encodings[~same][:6])


def _variants(shape: str, float_type: str) -> list[tuple[Rounding, bool]]:
    """Each shape takes each mode once, saturating every other one; the
    vector kernels saturate where the scalar ones do not, and which ones
    alternates with the float type. So every mode with and without
    saturation runs for each float type (in one shape or the other), and
    for each shape over two float types: the scalar and vector kernels are
    the same emitted arithmetic, and compilation is the cost.
    MX_LONG_TESTS=1: every combination in both shapes."""
    if inputs.LONG:
        return VARIANTS
    flip = (FLOAT_TYPES.index(float_type) + (shape == "vector")) % 2
    return [(mode, (i + flip) % 2 == 1) for i, mode in enumerate(Rounding)]


@pytest.mark.ci_sample(16)
@pytest.mark.parametrize("float_type", FLOAT_TYPES)
@pytest.mark.parametrize("name", FORMATS)
def test_convert_to(name: str, float_type: str) -> None:
    fmt = FORMATS[name]
    c = f"i{fmt.bits}"
    kernels = []
    for shape, lanes in SHAPES.items():
        for mode, saturate in _variants(shape, float_type):
            sat = " saturate" if saturate else ""
            op = (
                f"arbfp.convert_to {name} {{x}} rounding {mode.value}{sat} "
                ": {s} to {d}"
            )
            kernels.append(
                _kernel(f"{shape}_{mode.value}_{saturate}", op, float_type, c, lanes)
            )
    module = compile_module("\n".join(kernels), PIPELINE)  # one compilation
    x = inputs.sources(name)[float_type]
    checked: set[tuple[Rounding, bool]] = set()
    for mode, saturate in VARIANTS:
        want = ref.encode_array(name, x, mode.value, saturate)
        for shape in SHAPES:
            if (mode, saturate) not in _variants(shape, float_type):
                continue
            out = _run(module[f"{shape}_{mode.value}_{saturate}"], x, np.int8)
            got = out.view(np.uint8)
            assert not (got >> fmt.bits).any(), "stores write the high bits as zero"
            same = ref.same_results(name, got, want, x)
            assert same.all(), (shape, mode, saturate, x[~same][:6], got[~same][:6])
            checked.add((mode, saturate))
            if (
                mode is Rounding.NEAREST_EVEN
                and not saturate
                and name in inputs.ML_DTYPES
                and float_type != "f64"  # ml_dtypes rounds f64 through f32
            ):
                agrees = inputs.ml_dtypes_agrees(name, x, got)
                assert agrees.all(), (shape, x[~agrees][:6], got[~agrees][:6])
    assert checked == set(VARIANTS)

"""bf16 vector arithmetic through convert-to-llvm (its exact bf16 rounding on
vectors, built from `mx.lowering.bitwise` masks), JIT-compiled, bit for bit
against NumPy + ml_dtypes: the f32 result of two bf16 operands rounded once to
bf16 (exact for + and *: f32 has more than 2*8+2 significand bits)."""

from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest

from mx.jit import jit

LANES = 8


@pytest.mark.parametrize("op", ["addf", "mulf"])
def test_bf16_vector_arithmetic(op: str) -> None:
    t = f"vector<{LANES}xbf16>"
    f = jit(
        f"""func.func @f(%a: {t}, %b: {t}) -> {t} {{
  %r = arith.{op} %a, %b : {t}
  func.return %r : {t}
}}""",
        "f",
        "convert-to-llvm",
    )
    rng = np.random.default_rng(11)
    bits = rng.integers(0, 1 << 16, (2, 4096, LANES), dtype=np.uint16)
    bits[:, :16] &= 0x80FF  # zeros and subnormals, whose results LLVM could flush
    a, b = bits.view(ml_dtypes.bfloat16)
    wide = {"addf": np.add, "mulf": np.multiply}[op]
    with np.errstate(all="ignore"):
        want = wide(a.astype(np.float32), b.astype(np.float32)).astype(
            ml_dtypes.bfloat16
        )
    got = np.array([f(x, y) for x, y in zip(a, b, strict=True)])
    same = (got.view(np.uint16) == want.view(np.uint16)) | (
        np.isnan(got.astype(np.float32)) & np.isnan(want.astype(np.float32))
    )
    assert same.all(), (a[~same.all(1)][:2], b[~same.all(1)][:2], got[~same.all(1)][:2])


def test_f32_to_bf16_vector_truncation() -> None:
    t = f"vector<{LANES}xf32>"
    f = jit(
        f"""func.func @f(%x: {t}) -> vector<{LANES}xbf16> {{
  %r = arith.truncf %x : {t} to vector<{LANES}xbf16>
  func.return %r : vector<{LANES}xbf16>
}}""",
        "f",
        "convert-to-llvm",
    )
    rng = np.random.default_rng(12)
    x = rng.integers(0, 1 << 32, (4096, LANES), dtype=np.uint64).astype(np.uint32)
    x = x.view(np.float32)
    with np.errstate(all="ignore"):
        want = x.astype(ml_dtypes.bfloat16)
    got = np.array([f(row) for row in x])
    same = (got.view(np.uint16) == want.view(np.uint16)) | (
        np.isnan(got.astype(np.float32)) & np.isnan(want.astype(np.float32))
    )
    assert same.all(), (x[~same][:4], got[~same][:4], want[~same][:4])

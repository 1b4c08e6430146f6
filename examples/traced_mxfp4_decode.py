"""A decode step with MXFP4 weights, written in Python with the tracing front
end (docs/python-frontend.md). Run with:

    python examples/traced_mxfp4_decode.py

The f32 weights are quantized once to OCP MX FP4 (f4e2m1fn codes packed two
per byte, one f8e8m0fnu scale per block of 32 along each row); each token then
computes y = dequantize(Wq, s) @ x, which mx compiles to one matrix-vector
product that decodes the packed codes in registers (the decoded matrix is never
stored). Both steps are checked against NumPy/ml_dtypes: the packed bytes and
scales exactly, the products to rounding (NumPy sums in another order).
Exit status 1 on a mismatch.
"""

import sys
from typing import Any

import ml_dtypes
import numpy as np

import mx

Array = np.ndarray[Any, Any]
ROWS, COLS, BLOCK = 256, 512, 32


@mx.function
def decode_step(wq: Any, scales: Any, x: Any) -> Any:
    """One token: the MXFP4 weights times the activation vector."""
    w = mx.dequantize_mx(wq, scales, "f4e2m1fn", block=BLOCK, dtype=np.float32)
    return w @ x


def numpy_mxfp4(w: Array) -> tuple[Array, Array]:
    """OCP MX v1.0 section 6.3 with ml_dtypes: per block, the scale 2^e with
    e = floor(log2 amax) - 2 (f4e2m1fn's largest value is 1.5 * 2^2), the
    elements w / 2^e clamped to [-6, 6] and rounded to f4e2m1fn. Returns the
    FP4 codes (one per byte) and the scale codes e + 127."""
    blocks = w.astype(np.float64).reshape(w.shape[0], -1, BLOCK)
    amax = np.abs(blocks).max(axis=2, keepdims=True)
    e = np.frexp(amax)[1] - 1 - 2
    fp4 = np.clip(blocks / 2.0**e, -6, 6).astype(ml_dtypes.float4_e2m1fn)
    return fp4.reshape(w.shape).view(np.uint8), (
        e.reshape(w.shape[0], -1) + 127
    ).astype(np.uint8)


def main() -> int:
    rng = np.random.default_rng(2026)
    w = rng.standard_normal((ROWS, COLS)).astype(np.float32)
    wq, scales = mx.quantize_mx(w, "f4e2m1fn", block=BLOCK)  # once, packed
    codes, scale_codes = numpy_mxfp4(w)
    packed = codes[:, 0::2] | (codes[:, 1::2] << 4)  # low nibble first
    ok = np.array_equal(wq, packed) and np.array_equal(
        scales.view(np.uint8), scale_codes
    )
    print(
        f"quantized {ROWS}x{COLS} f32 weights to {wq.nbytes} bytes of packed FP4 "
        f"and {scales.nbytes} scales: {'OK' if ok else 'MISMATCH'} (== NumPy/ml_dtypes)"
    )
    dequantized = codes.view(ml_dtypes.float4_e2m1fn).astype(np.float64) * np.repeat(
        2.0 ** (scale_codes.astype(np.float64) - 127), BLOCK, axis=1
    )
    for token in range(4):
        x = rng.standard_normal(COLS).astype(np.float32)
        y = decode_step(wq, scales, x)
        expected = dequantized.astype(np.float32) @ x
        close = np.allclose(y, expected, rtol=1e-4, atol=1e-4)
        ok &= close
        print(
            f"token {token}: y[:4] = {y[:4]} {'OK' if close else 'MISMATCH'} (~= NumPy)"
        )
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())

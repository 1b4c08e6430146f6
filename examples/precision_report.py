"""Which format for these weights? f32 weights times a vector with the weights
in MXFP4, MXFP6 or FP8 (per-tensor scale), compared with precision reports
(docs/precision-report.md). Run with:

    python examples/precision_report.py [--target-sqnr-db 30]

For each choice it prints the report of one run (each conversion's counts,
errors and SQNR against an f64 shadow run, the result's SQNR), then the
narrowest choice whose result reaches the target SQNR. It checks the reports
against NumPy/ml_dtypes (the MXFP4 and MXFP6 weights' saturated and underflow
counts and SQNR, the result's SQNR) and exits with status 1 if they differ.
"""

import argparse
import math
import sys
from typing import Any

import ml_dtypes
import numpy as np

from mx.jit import compile_module

ROWS, COLS = 256, 1024
W = f"!matrix.matrix<{ROWS}x{COLS}xf32>"
X, Y = f"vector<{COLS}xf32>", f"vector<{ROWS}xf32>"


def _mx_kernel(fmt: str, bits: int) -> str:
    q, s = (
        f"!matrix.matrix<{ROWS}x{COLS}xi{bits}>",
        f"!matrix.matrix<{ROWS}x{COLS // 32}xi8>",
    )
    return f"""
func.func @matvec(%w: {W}, %x: {X}) -> {Y} {{
  %q, %s = arbfp.scaled_convert_to {fmt} %w block 32 : {W} to {q}, {s}
  %d = arbfp.scaled_convert_from {fmt} %q, %s block 32 : {q}, {s} to {W}
  %y = matrix.matvec %d, %x : {W}, {X} -> {Y}
  func.return %y : {Y}
}}
"""


FP8_KERNEL = f"""
func.func @matvec(%w: {W}, %x: {X}, %scale: f32, %unscale: f32) -> {Y} {{
  %k = matrix.splat %scale : {W}
  %ws = matrix.mul %w, %k : {W}
  %q = arbfp.convert_to f8e4m3fn %ws saturate : {W} to !matrix.matrix<{ROWS}x{COLS}xi8>
  %d = arbfp.convert_from f8e4m3fn %q : !matrix.matrix<{ROWS}x{COLS}xi8> to {W}
  %u = matrix.splat %unscale : {W}
  %dw = matrix.mul %d, %u : {W}
  %y = matrix.matvec %dw, %x : {W}, {X} -> {Y}
  func.return %y : {Y}
}}
"""

CHOICES = [  # (name, bits per weight, kernel)
    ("MXFP4 (f4e2m1fn, block 32)", 4 + 8 / 32, _mx_kernel("f4e2m1fn", 4)),
    ("MXFP6 (f6e2m3fn, block 32)", 6 + 8 / 32, _mx_kernel("f6e2m3fn", 6)),
    ("FP8 (f8e4m3fn, per-tensor scale)", 8, FP8_KERNEL),
]


def weights(
    rng: np.random.Generator,
) -> tuple[np.ndarray[Any, Any], np.ndarray[Any, Any]]:
    """Heavy-tailed weights (Student's t, 4 degrees of freedom, as trained
    layers have) with a few outlier columns, and a Gaussian activation."""
    w = rng.standard_t(4, (ROWS, COLS)) * 0.02
    w[:, rng.choice(COLS, 8, replace=False)] *= 8
    return w.astype(np.float32), rng.standard_normal(COLS).astype(np.float32)


def _sqnr(value: np.ndarray[Any, Any], reference: np.ndarray[Any, Any]) -> float:
    noise = math.fsum(((value - reference) ** 2).ravel().tolist())
    return 10 * math.log10(math.fsum((reference**2).ravel().tolist()) / noise)


def _ocp_mx(
    w: np.ndarray[Any, Any], dtype: Any
) -> tuple[np.ndarray[Any, Any], int, int]:
    """OCP MX §6.3 with ml_dtypes: the dequantized weights, saturated and
    underflow counts (the independent check of the report)."""
    largest = float(ml_dtypes.finfo(dtype).max)
    blocks = w.astype(np.float64).reshape(ROWS, -1, 32)
    e = (
        np.frexp(np.abs(blocks).max(axis=2, keepdims=True))[1]
        - 1
        - (np.frexp(largest)[1] - 1)
    )
    units = np.ldexp(blocks, -e)
    codes = (
        np.clip(units, -largest, largest)
        .astype(np.float32)
        .astype(dtype)
        .astype(np.float64)
    )
    saturated = int((np.abs(units) > largest).sum())
    underflow = int(((units != 0) & (codes == 0)).sum())
    return np.ldexp(codes, e).reshape(w.shape), saturated, underflow


def main() -> int:
    parser = argparse.ArgumentParser(description="precision reports of MXFP4, MXFP6 and FP8 weights")
    parser.add_argument("--target-sqnr-db", type=float, default=30.0)
    target = parser.parse_args().target_sqnr_db
    w, x = weights(np.random.default_rng(2026))
    exact = w.astype(np.float64) @ x.astype(np.float64)
    amax = float(np.abs(w).max())
    scale = np.float32(
        2.0 ** math.floor(math.log2(448 / amax))
    )  # a power of two: exact
    ok, chosen = True, None
    for (name, bits, kernel), dtype in zip(
        CHOICES, (ml_dtypes.float4_e2m1fn, ml_dtypes.float6_e2m3fn, None), strict=True
    ):
        f = compile_module(kernel)["matvec"]
        args: list[Any] = (
            [w, x] if dtype is not None else [w, x, scale, np.float32(1 / scale)]
        )
        report = f.precision_report(*args, target_sqnr_db=target)
        print(f"== {name}: {bits:g} bits per weight")
        print(report)
        weights_entry = next(v for v in report.values if v["op"].endswith("convert_to"))
        result = report.values[-1]
        if dtype is not None:  # the report against NumPy/ml_dtypes
            dequantized, saturated, underflow = _ocp_mx(w, dtype)
            expected = (saturated, underflow, _sqnr(dequantized, w.astype(np.float64)))
            got = (
                weights_entry["saturated"],
                weights_entry["underflow"],
                weights_entry["sqnr_db"],
            )
            if got[:2] != expected[:2] or not math.isclose(
                got[2], expected[2], rel_tol=1e-9
            ):
                print(f"  MISMATCH: report {got}, NumPy/ml_dtypes {expected}")
                ok = False
        y = np.asarray(report.results, np.float64)
        if not math.isclose(result["sqnr_db"], _sqnr(y, exact), rel_tol=1e-9):
            print(
                f"  MISMATCH: result SQNR {result['sqnr_db']} vs NumPy {_sqnr(y, exact)}"
            )
            ok = False
        print(
            f"  weights {weights_entry['sqnr_db']:.1f} dB, result {result['sqnr_db']:.1f} dB"
            f" (target {target:g} dB)\n"
        )
        if chosen is None and result["sqnr_db"] >= target:
            chosen = name
    print(f"choose: {chosen or 'none of them (keep f16/bf16)'}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())

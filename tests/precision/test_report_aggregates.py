"""Records that add up several runs of an op (loop iterations, batch
elements, the runs of a branch) against independent computations: the
input SQNR of an op counts the signal of every run, its exact runs included
(docs/precision-report.md, "Loops and branches")."""

import math
from typing import Any

import ml_dtypes
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.precision.test_precision_report import _both, _errors, _jit

Array = np.ndarray[Any, Any]

REQUANTIZE = """
func.func @requantize(%x: vector<8xf32>) -> vector<8xf32> {{
  %r = affine.for %i = 0 to {trips} iter_args(%h = %x) -> (vector<8xf32>) {{
    %b = arbfp.convert_to f4e2m1fn %h : vector<8xf32> to vector<8xi4>
    %y = arbfp.convert_from f4e2m1fn %b : vector<8xi4> to vector<8xf32>
    affine.yield %y : vector<8xf32>
  }}
  func.return %r : vector<8xf32>
}}
"""


def _sqnr_db(values: list[Array], shadows: list[Array]) -> float:
    """The SQNR of the runs together, with `math.fsum`."""
    return _errors(np.concatenate(values), np.concatenate(shadows))["sqnr_db"]


@settings(max_examples=10, deadline=None)
@given(
    st.integers(2, 5),
    st.lists(
        st.floats(-20, 20, width=32).filter(lambda v: abs(v) > 0.3),
        min_size=8,
        max_size=8,
    ),
)
def test_input_sqnr_of_a_loop_counts_its_exact_first_run(
    trips: int, values: list[float]
) -> None:
    """A loop quantizing its carried vector to FP4: run 1 receives x
    (exact), runs 2.. receive fp4(x) (which requantizes to itself) with the
    shadow x. The convert_to's input SQNR is that of the n inputs together
    (run 1's signal included), its value's that of n times fp4(x) against x:
    blame = 10·log10(n / (n − 1)) dB, never negative."""
    x = np.array(values, np.float32)
    fp4 = x.astype(ml_dtypes.float4_e2m1fn).astype(np.float64)
    exact = x.astype(np.float64)
    if np.array_equal(fp4, exact):
        return  # nothing rounds: every SQNR is inf
    inputs = [exact] + [fp4] * (trips - 1)
    for report in _both(REQUANTIZE.format(trips=trips), "requantize", x):
        convert_to = report.values[0]
        assert convert_to["op"] == "arbfp.convert_to"
        assert convert_to["input_sqnr_db"] == pytest.approx(
            _sqnr_db(inputs, [exact] * trips), rel=1e-9
        )
        assert convert_to["sqnr_db"] == pytest.approx(
            _sqnr_db([fp4] * trips, [exact] * trips), rel=1e-9
        )
        assert convert_to["blame_db"] == pytest.approx(
            10 * math.log10(trips / (trips - 1)), rel=1e-9
        )


BRANCH = """
func.func @maybe(%x: vector<8xf32>, %quantize: i1) -> vector<8xf16> {
  %y = scf.if %quantize -> (vector<8xf32>) {
    %b = arbfp.convert_to f8e4m3fn %x : vector<8xf32> to vector<8xi8>
    %d = arbfp.convert_from f8e4m3fn %b : vector<8xi8> to vector<8xf32>
    scf.yield %d : vector<8xf32>
  } else {
    scf.yield %x : vector<8xf32>
  }
  %h = arith.truncf %y : vector<8xf32> to vector<8xf16>
  func.return %h : vector<8xf16>
}
"""


def test_input_sqnr_of_a_batch_counts_its_exact_elements() -> None:
    """A batch of 2 through an scf.if: element 0 quantizes x to FP8 e4m3fn,
    element 1 passes its x through (exact). The truncf's input SQNR is over
    both elements (ml_dtypes values, fsum), and its blame is what rounding
    FP8 values and x to f16 adds: at least 0 (FP8 values are exact in f16)."""
    x = np.array(
        [
            [0.3, -1.7, 2.2, 5.1, -0.04, 7.5, 0.9, -3.1],
            [1.1, 2.3, -0.7, 9.9, 3.3, -6.1, 0.2, 4.4],
        ],
        np.float32,
    )
    quantize = np.array([True, False])
    fp8 = x[0].astype(ml_dtypes.float8_e4m3fn).astype(np.float64)
    inputs, shadows = (
        [fp8, x[1].astype(np.float64)],
        [x[0].astype(np.float64), x[1].astype(np.float64)],
    )
    values = [v.astype(np.float16).astype(np.float64) for v in inputs]
    report = _jit(BRANCH, "maybe").precision_report(x, quantize)
    truncf = next(v for v in report.values if v["op"] == "arith.truncf")
    assert truncf["input_sqnr_db"] == pytest.approx(_sqnr_db(inputs, shadows), rel=1e-9)
    assert truncf["sqnr_db"] == pytest.approx(_sqnr_db(values, shadows), rel=1e-9)
    assert truncf["blame_db"] >= 0

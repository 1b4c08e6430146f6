"""Conversions of long vectors compile to a loop over chunks
(`convert-arbfp-to-arith`, `ConvertLongVectorInChunks`): the LLVM IR of a
conversion has the same size whatever the vector's length, and the compiled
code gives the interpreter's results bit for bit, for lengths with and
without a partial last chunk, block-scaled (an MXFP4 round trip: the sub-byte
encodings stay in memory between the two conversions) and not."""

from collections.abc import Callable

import numpy as np
import pytest

from mx.frontend import parse_and_verify
from mx.interpreters import run_function
from mx.jit import compile_module, lower_to_llvm_ir
from tests.reference.arbfp_inputs import LONG


def _mxfp4_round_trip(length: int) -> str:
    x = f"vector<{length}xf32>"
    q = f"vector<{length}xi4>"
    s = f"vector<{length // 32}xi8>"
    return f"""func.func @f(%x: {x}) -> {x} {{
  %q, %s = arbfp.scaled_convert_to f4e2m1fn %x block 32 : {x} to {q}, {s}
  %y = arbfp.scaled_convert_from f4e2m1fn %q, %s block 32 : {q}, {s} to {x}
  func.return %y : {x}
}}
"""


def _fp8_round_trip(length: int) -> str:
    x = f"vector<{length}xf32>"
    q = f"vector<{length}xi8>"
    return f"""func.func @f(%x: {x}) -> {x} {{
  %q = arbfp.convert_to f8e4m3fn %x : {x} to {q}
  %y = arbfp.convert_from f8e4m3fn %q : {q} to {x}
  func.return %y : {x}
}}
"""


def _llvm_ir_lines(text: str) -> int:
    ir, _, _ = lower_to_llvm_ir(text)
    return len(ir.splitlines())


@pytest.mark.parametrize("program", [_mxfp4_round_trip, _fp8_round_trip])
def test_code_size_is_independent_of_the_length(program: Callable[[int], str]) -> None:
    short, long = _llvm_ir_lines(program(1024)), _llvm_ir_lines(program(8192))
    assert short == long, (short, long)
    assert long < 2000


@pytest.mark.parametrize(
    ("program", "length"),
    [
        (_mxfp4_round_trip, 8192 if LONG else 1024),  # whole chunks only
        (_mxfp4_round_trip, 1056),  # 16 chunks of 64 and one block of 32
        # 4 chunks of 64 and 4 lanes; 64 chunks in long runs (LLVM's compile
        # time grows with the length of the vector argument)
        (_fp8_round_trip, 4100 if LONG else 260),
    ],
)
def test_compiled_equals_interpreted(
    program: Callable[[int], str], length: int
) -> None:
    text = program(length)
    rng = np.random.default_rng(length)
    x = (rng.standard_normal(length) * 2.0 ** rng.integers(-12, 12, length)).astype(
        np.float32
    )
    x[::97] = np.float32(np.nan)
    x[5::101] = np.float32(np.inf)
    x[7::103] = 0.0
    (expected,) = run_function(parse_and_verify(text), "f", x)
    got = compile_module(text)["f"](x)
    expected, got = np.asarray(expected), np.asarray(got)
    nan = np.isnan(expected)
    assert np.array_equal(nan, np.isnan(got))
    assert expected[~nan].tobytes() == got[~nan].tobytes()

"""Number literals at the edges of their types: mx accepts what upstream MLIR accepts, with the same bits.

Each case is `arith.constant <literal> : <type>`, and the same literal as the
element of a one-element `dense<[...]> : vector<1x<type>>` (integers and
`index` at and beyond their ranges, decimal and hexadecimal floats, NaN/inf
bit patterns, signed hex). `mlir-opt-16` reads all of them in one run
(`--split-input-file`: a rejected case prints nothing); mx reads each through
its front end and prints it as mx-opt does. A case is accepted by both or
rejected by both, and an accepted value prints with the same bits: integers
modulo 2^width (MLIR prints i8 255 as -1), floats as the bit pattern of the
type (each printed literal is read back the same way: hexadecimal as bits,
decimals through NumPy/ml_dtypes).

Found when written (scalars): `9223372036854775808 : index` accepted and
wrapped by the lowering, `-0x7fc00000 : f32` read as the integer -2143289344,
signalling NaNs of f16, bf16 and f32 (`0x7fa00001`) quieted.

Needs mlir-opt-16 (Debian: mlir-16-tools); skipped without it, failed under CI.
"""

import io
import re
import subprocess

import ml_dtypes
import numpy as np
from xdsl.printer import Printer

from mx.frontend import FrontendError, parse_and_verify
from mx.tools.xdsl_fixes import xdsl_fixes
from tests.system_tools import required_tool

INTEGER_TYPES = {
    "i1": 1,
    "i4": 4,
    "i8": 8,
    "i16": 16,
    "i32": 32,
    "i64": 64,
    "index": 64,
}
FLOAT_TYPES = {
    "f16": np.float16,
    "bf16": ml_dtypes.bfloat16,
    "f32": np.float32,
    "f64": np.float64,
}
_EDGES = [
    0, 1, 7, 8, 15, 16, 127, 128, 255, 256, 32767, 32768, 65535, 65536,
    2**31 - 1, 2**31, 2**32 - 1, 2**32, 2**63 - 1, 2**63, 2**64 - 1, 2**64,
]  # fmt: skip
_DECIMALS = {str(v) for v in _EDGES} | {str(-v) for v in _EDGES} | {str(-(2**63) - 1)}
INTEGER_LITERALS = [
    *sorted(_DECIMALS),
    *("0x10", "0xff", "0x7fffffffffffffff", "0x8000000000000000", "true", "false"),
]
FLOAT_LITERALS = [
    "0.0", "-0.0", "1.5", "-1.5", "1.0e-50", "1.0e400", "-1.0e400", "70000.0",
    "-65520.0", "65504.0", "3.4028235e38", "3.4028236e38", "1.0e-8",
    "0x7fc00000", "0x7f800000", "0xff800000", "0x7fa00001", "0x7c00", "0xfc01",
    "0x7e00", "0x7f80", "0xff81", "0x7ff8000000000000", "0xfff0000000000000",
    "0x0", "0x1", "0x80000000", "0x17c00", "0x1ffffffff", "-0x7fc00000", "-0x1",
]  # fmt: skip

SCALAR_CASES = [(lit, t) for t in INTEGER_TYPES for lit in INTEGER_LITERALS] + [
    (lit, t) for t in FLOAT_TYPES for lit in FLOAT_LITERALS
]
CASES = SCALAR_CASES + [(f"dense<[{lit}]>", t) for lit, t in SCALAR_CASES]


_CONSTANT = re.compile(r"arith\.constant (?:dense<\[?)?([^\s\]>]+)")
"""The value of the printed constant (the element of a 1-element `dense`)."""


def _source(literal: str, type_: str) -> str:
    """A function returning the constant; a `dense` case as a 1-element vector."""
    if literal.startswith("dense"):
        type_ = f"vector<1x{type_}>"
    return (
        f"func.func @f() -> {type_} {{\n"
        f"  %c = arith.constant {literal} : {type_}\n"
        f"  func.return %c : {type_}\n}}\n"
    )


def _upstream_values() -> list[str | None]:
    """The literal mlir-opt-16 prints for each case, or None if it rejects it."""
    text = "// -----\n".join(_source(lit, t) for lit, t in CASES)
    run = subprocess.run(
        [required_tool("mlir-opt-16"), "--split-input-file", "-"],
        input=text, capture_output=True, text=True, check=False,
    )  # fmt: skip
    chunks = run.stdout.split("// -----")
    assert len(chunks) == len(CASES), run.stderr[-2000:]
    values: list[str | None] = []
    for chunk in chunks:
        found = _CONSTANT.search(chunk)
        values.append(found.group(1) if found else None)
    return values


def _bits(printed: str, type_: str) -> int:
    """The bits of a printed constant (integers modulo 2^width)."""
    if type_ in INTEGER_TYPES:
        value = {"true": 1, "false": 0}.get(printed)
        return (int(printed, 0) if value is None else value) % 2 ** INTEGER_TYPES[type_]
    if printed.lower().startswith("0x"):
        return int(printed, 16)
    scalar = np.array(float(printed), np.float64).astype(FLOAT_TYPES[type_])
    return int(scalar.view(f"uint{scalar.itemsize * 8}"))


def _mx_printed(literal: str, type_: str) -> str | None:
    """The constant as mx-opt prints it, or None if mx rejects the case."""
    try:
        module = parse_and_verify(_source(literal, type_), "case.mlir")
    except FrontendError:
        return None
    out = io.StringIO()
    with xdsl_fixes():
        Printer(stream=out).print_op(module)
    found = _CONSTANT.search(out.getvalue())
    assert found is not None
    return found.group(1)


def test_scalar_literals_match_upstream() -> None:
    mismatches: list[str] = []
    for (literal, type_), printed in zip(CASES, _upstream_values(), strict=True):
        ours = _mx_printed(literal, type_)
        expected = None if printed is None else _bits(printed, type_)
        if (None if ours is None else _bits(ours, type_)) != expected:
            mismatches.append(f"{literal} : {type_}: mlir-opt-16 {printed}, mx {ours}")
    assert not mismatches, "\n".join(mismatches)

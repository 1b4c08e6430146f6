"""Helpers of the differential tests against `mlir-opt-16` on constants.

Both tools' outputs are text; a printed constant is read back by the same
code on both sides: integers modulo 2^width (MLIR prints i8 255 as -1),
floats as the bit pattern of their type (hexadecimal as bits, decimals
through NumPy/ml_dtypes), so that the two spellings of one value compare
equal and a different value does not.
"""

from __future__ import annotations

import io
import re
import subprocess

import ml_dtypes
import numpy as np
from xdsl.printer import Printer
from xdsl.transforms.canonicalize import CanonicalizePass

from mx.frontend import FrontendError, mx_context, parse_and_verify
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
    "f16": (np.float16, 5, 10),
    "bf16": (ml_dtypes.bfloat16, 8, 7),
    "f32": (np.float32, 8, 23),
    "f64": (np.float64, 11, 52),
}

CONSTANT = re.compile(r"arith\.constant (?:dense<\[?)?([^\s\]>]+)")
"""The value of a printed constant (the element of a 1-element `dense`)."""


def printed_integer(printed: str) -> int:
    """The value of a printed integer constant, as written."""
    value = {"true": 1, "false": 0}.get(printed)
    return int(printed, 0) if value is None else value


def printed_bits(printed: str, type_: str) -> int:
    """The bits of a printed constant of `type_`."""
    if type_ in INTEGER_TYPES:
        return printed_integer(printed) % 2 ** INTEGER_TYPES[type_]
    if printed.lower().startswith("0x"):
        return int(printed, 16)
    with np.errstate(over="ignore"):  # beyond the type's range: infinity
        scalar = np.array(float(printed), np.float64).astype(FLOAT_TYPES[type_][0])
    return int(scalar.view(f"uint{scalar.itemsize * 8}"))


def is_nan(bits: int, type_: str) -> bool:
    """Whether `bits` of a float `type_` are a NaN."""
    if type_ not in FLOAT_TYPES:
        return False
    _, exponent_bits, fraction_bits = FLOAT_TYPES[type_]
    ones = (1 << exponent_bits) - 1
    return (bits >> fraction_bits) & ones == ones and bits & (
        (1 << fraction_bits) - 1
    ) != 0


def upstream_outputs(sources: list[str], *flags: str) -> list[str]:
    """What `mlir-opt-16 <flags>` prints for each source (one run,
    `--split-input-file`); an empty string where it rejects the source."""
    run = subprocess.run(
        [required_tool("mlir-opt-16"), "--split-input-file", *flags, "-"],
        input="// -----\n".join(sources),
        capture_output=True,
        text=True,
        check=False,
    )
    chunks = run.stdout.split("// -----")
    assert len(chunks) == len(sources), run.stderr[-2000:]
    return chunks


def mx_output(source: str, canonicalize: bool = False) -> str:
    """What mx-opt prints for `source` (after `canonicalize` if asked), or an
    empty string where it rejects the source."""
    try:
        module = parse_and_verify(source, "case.mlir")
    except FrontendError:
        return ""
    out = io.StringIO()
    if canonicalize:
        CanonicalizePass().apply(mx_context(), module)
    Printer(stream=out).print_op(module)
    return out.getvalue()

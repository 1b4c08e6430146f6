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

from tests.printed_constants import (
    CONSTANT,
    FLOAT_TYPES,
    INTEGER_TYPES,
    mx_output,
    printed_bits,
    upstream_outputs,
)

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


def _source(literal: str, type_: str) -> str:
    """A function returning the constant; a `dense` case as a 1-element vector."""
    if literal.startswith("dense"):
        type_ = f"vector<1x{type_}>"
    return (
        f"func.func @f() -> {type_} {{\n"
        f"  %c = arith.constant {literal} : {type_}\n"
        f"  func.return %c : {type_}\n}}\n"
    )


def _printed(output: str) -> str | None:
    found = CONSTANT.search(output)
    return found.group(1) if found else None


def test_literals_match_upstream() -> None:
    sources = [_source(lit, t) for lit, t in CASES]
    mismatches: list[str] = []
    for (literal, type_), source, upstream in zip(
        CASES, sources, upstream_outputs(sources), strict=True
    ):
        theirs, ours = _printed(upstream), _printed(mx_output(source))
        expected = None if theirs is None else printed_bits(theirs, type_)
        if (None if ours is None else printed_bits(ours, type_)) != expected:
            mismatches.append(f"{literal} : {type_}: mlir-opt-16 {theirs}, mx {ours}")
    assert not mismatches, "\n".join(mismatches)

"""`canonicalize` folds `arith` on constants to what upstream MLIR folds them to.

A fixed-seed sample of functions `%c = arith.<op> <constants>; return %c`:
integer binaries (wrapping, signed/unsigned division and remainder, shifts
beyond the width, min/max) and `cmpi` on i1 … i64 and `index`, float binaries
and `cmpf` on f16, bf16, f32 and f64 (zeros, infinities, NaN, overflow,
subnormals), and the casts between them. Each runs through
`mlir-opt-16 --canonicalize` (all in one run) and through mx's
`canonicalize`; where both fold the function to a constant, the constants
are equal (`tests.printed_constants` reads both printed forms the same way).
A NaN equals any NaN: the sign of a NaN an operation creates is not
specified (MLIR folds `inf * 0` to +NaN, x86 and Python give -NaN).

What is compared grows with xDSL: today its folders cover `addi`, `subi`,
`muli`, the bitwise ops, some shifts and divisions, and `addf`, `subf`,
`mulf`, `divf`; comparisons, casts, min/max and most divisions stay ops in mx
(MLIR 16 folds them, except `extf` and the float min/max), and are compared
once an xDSL upgrade folds them.

Found when written: `index` additions folded beyond 64 bits (2^62 + 2^62 gave
2^63, not -2^63). More cases: MX_FOLD_CASES=<n> (docs/long-runs.md).

Needs mlir-opt-16 (Debian: mlir-16-tools); skipped without it, failed under CI.
"""

import os
import random
import re

from tests.printed_constants import (
    CONSTANT,
    INTEGER_TYPES,
    is_nan,
    mx_output,
    printed_bits,
    printed_integer,
    upstream_outputs,
)

COUNT = int(os.environ.get("MX_FOLD_CASES", "1200"))
SEED = 20261202
INTEGERS = ["i1", "i8", "i16", "i32", "i64", "index"]
FLOATS = ["f16", "bf16", "f32", "f64"]
INTEGER_BINARIES = [
    "addi",
    "subi",
    "muli",
    "divsi",
    "divui",
    "remsi",
    "remui",
    "ceildivsi",
    "ceildivui",
    "floordivsi",
    "shli",
    "shrsi",
    "shrui",
    "andi",
    "ori",
    "xori",
    "maxsi",
    "minsi",
    "maxui",
    "minui",
]
FLOAT_BINARIES = [
    "addf",
    "subf",
    "mulf",
    "divf",
    "maximumf",
    "minimumf",
    "maxnumf",
    "minnumf",
]
CMPI = ["eq", "ne", "slt", "sle", "sgt", "sge", "ult", "ule", "ugt", "uge"]
CMPF = [
    "false",
    "oeq",
    "ogt",
    "oge",
    "olt",
    "ole",
    "one",
    "ord",
    "ueq",
    "ugt",
    "uge",
    "ult",
    "ule",
    "une",
    "uno",
    "true",
]
FLOAT_VALUES = (
    "0.0", "-0.0", "1.0", "-1.0", "0.5", "3.0", "-2.5", "1.0e30", "-7.0e-3",
    "65504.0", "1.0e-40", "2.0", "100.0", "1.5", "nan", "inf", "-inf",
)  # fmt: skip
_SPECIAL = {  # NaN and the infinities, per type
    "nan": {"f16": "0x7E00", "bf16": "0x7FC0", "f32": "0x7FC00000", "f64": "0x7FF8000000000000"},
    "inf": {"f16": "0x7C00", "bf16": "0x7F80", "f32": "0x7F800000", "f64": "0x7FF0000000000000"},
    "-inf": {"f16": "0xFC00", "bf16": "0xFF80", "f32": "0xFF800000", "f64": "0xFFF0000000000000"},
}  # fmt: skip
FLOAT_PAIRS = [("f16", "f32"), ("bf16", "f32"), ("f32", "f64"), ("f16", "f64")]


def _integer(rng: random.Random, type_: str) -> int:
    width = INTEGER_TYPES[type_]
    if width == 1:
        return rng.randrange(2)
    half = 1 << (width - 1)
    edges = [0, 1, -1, 2, 3, -2, half - 1, -half, width, width - 1, width + 1, 7, 8]
    return rng.choice(edges) if rng.random() < 0.6 else rng.randrange(-half, half)


def _float(rng: random.Random, type_: str) -> str:
    value = rng.choice(FLOAT_VALUES)
    return _SPECIAL[value][type_] if value in _SPECIAL else value


def _cast(rng: random.Random) -> tuple[str, str, str, str]:
    """(op, source type, value, result type) of a random cast."""
    ints = INTEGERS[:-1]
    op = rng.choice(
        [
            "extsi",
            "extui",
            "trunci",
            "sitofp",
            "uitofp",
            "fptosi",
            "fptoui",
            "extf",
            "truncf",
            "index_cast",
            "bitcast",
        ]
    )
    if op in ("extsi", "extui", "trunci"):
        narrow, wide = sorted(rng.sample(ints, 2), key=INTEGER_TYPES.__getitem__)
        source, result = (wide, narrow) if op == "trunci" else (narrow, wide)
    elif op in ("sitofp", "uitofp"):
        source, result = rng.choice(ints[1:]), rng.choice(FLOATS)
    elif op in ("fptosi", "fptoui"):
        source, result = rng.choice(FLOATS), rng.choice(ints[1:])
    elif op in ("extf", "truncf"):
        narrow, wide = rng.choice(FLOAT_PAIRS)
        source, result = (wide, narrow) if op == "truncf" else (narrow, wide)
    elif op == "index_cast":
        other = rng.choice(ints[1:])
        source, result = ("index", other) if rng.random() < 0.5 else (other, "index")
    else:
        pairs = [("i32", "f32"), ("f32", "i32"), ("i16", "f16"), ("f16", "i16")]
        source, result = rng.choice([*pairs, ("bf16", "i16"), ("i64", "f64")])
    value = _float(rng, source) if source in FLOATS else str(_integer(rng, source))
    return op, source, value, result


def _case(rng: random.Random) -> tuple[str, str]:
    """(source, result type) of one random folding case."""
    kind = rng.random()
    if kind < 0.6:
        type_ = rng.choice(INTEGERS if kind < 0.45 else FLOATS)
        if kind < 0.3 or 0.45 <= kind < 0.55:
            pool = INTEGER_BINARIES if type_ in INTEGERS else FLOAT_BINARIES
            op, result = rng.choice(pool), type_
        else:
            predicates = CMPI if type_ in INTEGERS else CMPF
            op = f"cmp{'i' if type_ in INTEGERS else 'f'} {rng.choice(predicates)},"
            result = "i1"
        a, b = (
            (str(_integer(rng, type_)) for _ in "ab")
            if type_ in INTEGERS
            else (_float(rng, type_) for _ in "ab")
        )
        body = (
            f"  %a = arith.constant {a} : {type_}\n"
            f"  %b = arith.constant {b} : {type_}\n"
            f"  %c = arith.{op} %a, %b : {type_}\n"
        )
    else:
        op, source, value, result = _cast(rng)
        body = (
            f"  %a = arith.constant {value} : {source}\n"
            f"  %c = arith.{op} %a : {source} to {result}\n"
        )
    return (
        f"func.func @f() -> {result} {{\n{body}  func.return %c : {result}\n}}\n",
        result,
    )


def _folded(output: str) -> str | None:
    """The constant a function was folded to, or None if an op is left."""
    if not output or re.search(r"arith\.(?!constant)", output):
        return None
    found = CONSTANT.search(output)
    return found.group(1) if found else None


def test_folds_match_upstream() -> None:
    rng = random.Random(SEED)
    cases = [_case(rng) for _ in range(COUNT)]
    sources = [source for source, _ in cases]
    upstream = upstream_outputs(sources, "--canonicalize")
    compared = 0
    mismatches: list[str] = []
    for (source, type_), theirs_text in zip(cases, upstream, strict=True):
        theirs, ours = (
            _folded(theirs_text),
            _folded(mx_output(source, canonicalize=True)),
        )
        if theirs is None or ours is None:
            continue  # not folded by one of them
        compared += 1
        if type_ in INTEGER_TYPES:
            # As printed: both print signless integers in the signed range, so a
            # value outside it (an index fold beyond 64 bits) is a mismatch.
            expected, got = printed_integer(theirs), printed_integer(ours)
        else:
            expected, got = printed_bits(theirs, type_), printed_bits(ours, type_)
        if expected != got and not (is_nan(expected, type_) and is_nan(got, type_)):
            mismatches.append(f"{source}mlir-opt-16: {theirs}, mx: {ours}")
    assert not mismatches, "\n".join(mismatches[:20])
    # Today xDSL folds about a sixth of the cases (see the module docstring).
    assert compared > COUNT // 8

"""Passes do work about linear in the nesting depth of their input,
measured without clocks: the Python calls a pass makes grow by about the
same amount each time a nest of `scf.for`/`scf.if` (each level reading and
writing memory, with a dead op, a duplicate and a matrix product) grows by
the same number of levels.

Found by mx's fuzzer: xDSL's `cse` and `dce` computed an op's memory effects
from all its nested ops once per enclosing op (1000 nested `scf.if`: 15 s
and 32 s), and the greedy rewriter (`canonicalize`, mx's passes) asked each
loop whether it was dead, from all its nested ops, on every visit
(docs/xdsl-upstream.md).
"""

import sys
from inspect import CO_GENERATOR
from itertools import pairwise
from types import FrameType
from typing import Any

import pytest
from xdsl.universe import Universe

from mx.frontend import mx_context, parse_and_verify

PASSES = [
    "cse",
    "dce",
    "canonicalize",
    "matrix-fold-transposes",
    "matrix-fuse-contractions",
    "convert-matrix-to-affine",
]
M = "!matrix.matrix<2x2xf32>"


def nest(depth: int) -> str:
    lines = [
        f"func.func @f(%c: i1, %m: memref<4xf32>, %i: index, %a: {M}) {{",
        "  %x = memref.load %m[%i] : memref<4xf32>",
    ]
    for level in range(depth):
        if level % 2:
            lines.append("  scf.if %c {")
        else:
            lines.append(f"  scf.for %k{level} = %i to %i step %i {{")
        lines += [
            f"  %d{level} = arith.mulf %x, %x : f32",
            f"  %s{level} = arith.addf %x, %x : f32",
            f"  %e{level} = arith.addf %x, %x : f32",
            f"  memref.store %s{level}, %m[%i] : memref<4xf32>",
            f"  memref.store %e{level}, %m[%i] : memref<4xf32>",
            f"  %t{level} = matrix.transpose %a : {M} -> {M}",
            f"  %p{level} = matrix.matmul %t{level}, %a : {M}, {M} -> {M}",
            f"  matrix.column_major_store %p{level}, %m[0] : {M}, memref<4xf32>",
        ]
    lines += ["  }"] * depth + ["  func.return", "}"]
    return "\n".join(lines)


def _resumed(frame: FrameType) -> bool:
    """A generator resumed, not called: xDSL's `walk` passes each op up
    through one generator per enclosing region (`yield from`), which is
    linear work in C per level, not a Python call."""
    return bool(frame.f_code.co_flags & CO_GENERATOR) and frame.f_lasti > 0


@pytest.mark.parametrize("name", PASSES)
def test_pass_calls_grow_linearly_with_the_depth(name: str) -> None:
    make_pass = Universe.get_multiverse().all_passes[name]
    make_pass()().apply(mx_context(), parse_and_verify(nest(2)))  # lazy imports
    calls: list[int] = []
    for depth in (20, 40, 60):
        module = parse_and_verify(nest(depth))
        count = 0

        def profile(frame: FrameType, event: str, arg: Any) -> None:
            nonlocal count
            if event == "c_call" or (event == "call" and not _resumed(frame)):
                count += 1

        sys.setprofile(profile)
        try:
            make_pass()().apply(mx_context(), module)
        finally:
            sys.setprofile(None)
        calls.append(count)
    first, second = (b - a for a, b in pairwise(calls))
    # Walking up an op's ancestors (`is_ancestor`) is linear in the depth
    # per op, and grows the second step by ~10 %; recomputing a nest's
    # effects once per enclosing op grew it by 60 %.
    assert abs(second - first) <= 0.2 * first, calls

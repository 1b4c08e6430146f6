"""Passes do work about linear in the nesting depth of their input,
measured without clocks: the Python calls a pass makes grow by about the
same amount each time a nest of `scf.for`/`scf.if` (`nested_loops`: each
level reading and writing memory, with dead and duplicate ops and a matrix
product) grows by the same number of levels.

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
from tests.nests import nested_loops

PASSES = [
    "cse",
    "dce",
    "canonicalize",
    "matrix-fold-transposes",
    "matrix-fuse-contractions",
    "convert-matrix-to-affine",
]


def _resumed(frame: FrameType) -> bool:
    """A generator resumed, not called: xDSL's `walk` passes each op up
    through one generator per enclosing region (`yield from`), which is
    linear work in C per level, not a Python call."""
    return bool(frame.f_code.co_flags & CO_GENERATOR) and frame.f_lasti > 0


@pytest.mark.parametrize("name", PASSES)
def test_pass_calls_grow_linearly_with_the_depth(name: str) -> None:
    make_pass = Universe.get_multiverse().all_passes[name]
    make_pass()().apply(mx_context(), parse_and_verify(nested_loops(2)))  # lazy imports
    calls: list[int] = []
    for depth in (20, 40, 60):
        module = parse_and_verify(nested_loops(depth))
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

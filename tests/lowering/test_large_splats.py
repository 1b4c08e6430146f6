"""Property test: splats of any size stay splats (`mx.testing.splat_programs`).

Each random program over HUGE x HUGE splats (4 TiB of f32 if expanded) is
parsed, printed in both forms and re-parsed, interpreted, canonicalized and
interpreted again, and (when canonicalize leaves no product, whose operands
are splats of arguments: a product materializes its result) JIT-compiled; every
result must equal, bit for bit, the interpreter's result on the same program at
a small shape written element by element (NaNs match any NaN).

CI size: 16 programs from seed 0; `MX_SPLAT_PROGRAMS=2000` for more.
"""

import io
import os
import random
import re
from collections import Counter
from typing import Any

import numpy as np
import pytest
from xdsl.printer import Printer
from xdsl.transforms.canonicalize import CanonicalizePass

from mx.frontend import mx_context, parse_and_verify
from mx.interpreters import UndefinedBehaviorError, run_function
from mx.jit import compile_module
from mx.testing.splat_programs import DTYPES, SplatProgram, splat_program

PROGRAMS = int(os.environ.get("MX_SPLAT_PROGRAMS", "16"))


def _same(x: Any, y: Any, element: str) -> bool:
    a, b = np.asarray(x, DTYPES[element]), np.asarray(y, DTYPES[element])
    if element != "i32" and np.isnan(a) and np.isnan(b):
        return True
    return a.tobytes() == b.tobytes()


def _generic(text: str) -> str:
    out = io.StringIO()
    Printer(stream=out, print_generic_format=True).print_op(parse_and_verify(text))
    return out.getvalue()


@pytest.mark.parametrize("seed", range(PROGRAMS))
def test_huge_splat_program(seed: int) -> None:
    program: SplatProgram = splat_program(random.Random(seed))
    try:
        (expected,) = run_function(parse_and_verify(program.small), "f")
    except UndefinedBehaviorError:
        pytest.skip("undefined behaviour")
    huge = parse_and_verify(program.huge)
    reparsed = parse_and_verify(_generic(program.huge))
    assert str(reparsed) == str(huge)
    (interpreted,) = run_function(huge, "f", *program.arguments)
    assert _same(interpreted, expected, program.element), program.huge
    CanonicalizePass().apply(mx_context(), huge)
    (folded,) = run_function(huge, "f", *program.arguments)
    assert _same(folded, expected, program.element), f"{program.huge}\n{huge}"
    if "matrix.matmul" not in str(huge):
        compiled = compile_module(program.huge)["f"](*program.arguments)
        assert _same(compiled, expected, program.element), program.huge


def test_sample_covers_every_op_and_element_type() -> None:
    """The CI sample reaches every op and element type the generator writes."""
    seen: Counter[str] = Counter()
    for seed in range(PROGRAMS):
        program = splat_program(random.Random(seed))
        seen.update({*re.findall(r"matrix\.(\w+)", program.huge), program.element})
    print("coverage:", dict(sorted(seen.items())))
    wanted = {*DTYPES, "splat", "constant", "extract", "cast", "transpose"}
    wanted |= {"add", "sub", "mul", "div", "neg", "fma", "matmul"}
    assert wanted <= set(seen), f"never generated: {sorted(wanted - set(seen))}"

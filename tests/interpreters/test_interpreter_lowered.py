"""The interpreter runs the lowered code too: the output of
`convert-matrix-to-affine,convert-arbfp-to-arith` (affine loops, memrefs,
vector and arith ops on vectors) computes what its input computes.

For the examples and the lowering's lit inputs, each function runs on random
arguments before and after the lowering. After it, a matrix argument is its
column-major `memref<CxRxT>` buffer and each matrix result an out-parameter
appended after the arguments (docs/c-abi.md). Results must be bit-identical;
functions with fastmath flags may round differently, within the bound of
`mx.testing.translation`. Each function is compared on one random input
(drawn again, up to `DRAWS` times, where it is undefined behaviour): the
lowered code is interpreted lane by lane, which is this test's cost. So a
function is compared only if its lowered code has an op on element types
that no function before it in the file had (the lowering's lit inputs pin
several kernels of one kind, each thousands of ops).
`MX_TV_INPUTS=<n>` compares n inputs per function; `MX_TV_LARGE=1` compares
every function, and the split chunks with a matrix of more than LARGE
elements (slow to interpret once lowered, lane by lane) too.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from xdsl.dialects.builtin import MemRefType, ModuleOp, VectorType
from xdsl.dialects.func import FuncOp
from xdsl.ir import Attribute
from xdsl.universe import Universe
from xdsl.utils.exceptions import InterpretationError

from mx.dialects.matrix import MatrixType
from mx.frontend import mx_context
from mx.interpreters import UndefinedBehaviorError, run_function
from mx.testing.translation import (
    NO_NANS,
    ROOT,
    flagged_tolerance,
    identical,
    modules,
    parse,
    random_arguments,
    rounding_depth,
    run_lowered,
    uses_flags,
)

INPUTS = int(os.environ.get("MX_TV_INPUTS", "1"))
DRAWS = 4 * INPUTS
EVERY_FUNCTION = os.environ.get("MX_TV_LARGE") == "1"
LARGE = 1 << 24 if EVERY_FUNCTION else 4096
LOWERING = ("convert-matrix-to-affine", "convert-arbfp-to-arith")
FILES = [
    *sorted((ROOT / "examples").glob("*.mlir")),
    # Not blocked.mlir: its cache-blocked products (small caches) are too slow
    # to interpret lane by lane in CI; not parallel-balanced.mlir: its one
    # product is 1024^3 (what it pins is the blocks of a large product).
    *sorted(
        f
        for f in (ROOT / "tests/filecheck/lowering/convert-matrix-to-affine").glob(
            "*.mlir"
        )
        if f.name not in ("blocked.mlir", "parallel-balanced.mlir", "invalid.mlir")
    ),
    *sorted((ROOT / "tests/filecheck/lowering/convert-arbfp-to-arith").glob("*.mlir")),
]


def _too_large(module: ModuleOp) -> bool:
    return any(
        isinstance(t := v.type, MatrixType) and t.rows * t.cols > LARGE
        for op in module.walk()
        for v in (*op.results, *op.operands)
    )


def _lower(module: ModuleOp) -> ModuleOp:
    ctx = mx_context()
    lowered = module.clone()
    passes = Universe.get_multiverse().all_passes
    for name in LOWERING:
        passes[name]()().apply(ctx, lowered)
    return lowered


def _op_kinds(f: FuncOp) -> set[tuple[str, ...]]:
    """The ops of `f` by name and the element types they take and give."""

    def element(t: Attribute) -> str:
        return str(t.element_type if isinstance(t, VectorType | MemRefType) else t)

    return {
        (op.name, *(element(v.type) for v in (*op.operands, *op.results)))
        for op in f.walk()
    }


def _copy(a: Any) -> Any:
    return a.copy() if isinstance(a, np.ndarray) else a


@pytest.mark.parametrize("path", FILES, ids=[str(f.relative_to(ROOT)) for f in FILES])
def test_lowered_code_computes_the_same(path: Path) -> None:
    rng = np.random.default_rng(7)
    ctx = mx_context()
    split = "--split-input-file" in path.read_text()
    compared = 0
    interpreted: set[tuple[str, ...]] = set()
    for chunk in modules(path, split):
        module = parse(ctx, chunk)
        if _too_large(module):
            continue
        lowered = _lower(module)
        lowered_functions = {
            f.sym_name.data: f for f in lowered.walk() if isinstance(f, FuncOp)
        }
        for func in module.walk():
            if not isinstance(func, FuncOp) or func.is_declaration:
                continue
            name = func.sym_name.data
            kinds = _op_kinds(lowered_functions[name])
            if not EVERY_FUNCTION and kinds <= interpreted:
                continue
            interpreted |= kinds
            flagged, depth = uses_flags(func), rounding_depth(func)
            no_nans = uses_flags(func, NO_NANS)
            memrefs = [
                i
                for i, t in enumerate(func.function_type.inputs.data)
                if isinstance(t, MemRefType)
            ]
            compared_here = 0
            for _ in range(DRAWS):
                if compared_here == INPUTS:
                    break
                args = random_arguments(func, rng)
                before_args = [_copy(a) for a in args]
                after_args = [_copy(a) for a in args]
                try:
                    before = run_function(module, name, *before_args)
                except UndefinedBehaviorError:
                    continue
                except InterpretationError as err:  # calls a declaration
                    assert "external function" in str(err), err
                    break
                after = run_lowered(lowered, func, after_args)
                expected = (*before, *(before_args[i] for i in memrefs))
                actual = (*after, *(after_args[i] for i in memrefs))
                for x, y in zip(expected, actual, strict=True):
                    same = (
                        flagged_tolerance(x, y, depth, no_nans)
                        if flagged
                        else identical(x, y)
                    )
                    assert same, f"{path.name} @{name}: {x!r} != {y!r} on {args!r}"
                compared_here += 1
            compared += compared_here
    assert compared > 0, f"nothing of {path.name} could be compared"

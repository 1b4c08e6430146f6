"""Property test: fold / fuse / canonicalize / the lowering never change what
a program computes.

Random matrix programs (`mx.testing.matrix_dags`: DAGs over every matrix op,
random shapes, element types and fastmath flags, matrices carried by
`arith.select`, `scf.if`, `affine.for` and `cf` branches, long dependent
chains) are interpreted (`mx.interpreters.run_function`) before and after
`matrix-fold-transposes`, `matrix-fuse-contractions`, `canonicalize` and all
three in a row, and after `convert-matrix-to-affine` + `convert-arbfp-to-arith`
(the lowered code interpreted, matrices in column-major buffers); the IR must
verify after every pass.

- Programs without `contract` must give bit-identical results (any NaN
  matches any NaN: commuting an add may pick the other operand's payload).
- With `contract`, fusion into `fma` drops the rounding of a product, so
  after the fuse, all and lowered pipelines floats are compared within a bound: |after - before| <= 2^-(p-8) *
  (1 + max |before|)^2 for precision p of the element type: each fusion
  drops one rounding of a product (at most half an ulp of |a·b|, and the
  product can be as large as the square of the values involved), and a
  DAG of at most a dozen ops on inputs in [-2, 2] adds a few more ulps.
  Integer results stay exact.
- A program whose reference run has undefined behaviour is skipped; the
  transformed program may then do anything.

CI size: 100 programs from a fixed seed (about 5 with a long chain). Long runs:
`MX_PASS_EQUIVALENCE_EXAMPLES=20000 pytest tests/passes/test_pass_equivalence.py`.
"""

from __future__ import annotations

import os
from collections import Counter
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from xdsl.dialects.builtin import ModuleOp
from xdsl.dialects.func import FuncOp
from xdsl.passes import ModulePass
from xdsl.transforms.canonicalize import CanonicalizePass

from mx.frontend import mx_context
from mx.interpreters import UndefinedBehaviorError, run_function
from mx.lowering.convert_arbfp_to_arith import ConvertArbfpToArithPass
from mx.lowering.matrix_to_affine.convert_matrix_to_affine import (
    ConvertMatrixToAffinePass,
)
from mx.passes.fold_transposes import MatrixFoldTransposesPass
from mx.passes.fuse_contractions import MatrixFuseContractionsPass
from mx.testing.matrix_dags import (
    ALL_OPS,
    FLOAT_PRECISION,
    MEMORY_SIZE,
    STRUCTURES,
    ProgramGenerator,
)
from mx.testing.translation import run_lowered

EXAMPLES = int(os.environ.get("MX_PASS_EQUIVALENCE_EXAMPLES", "100"))


PIPELINES: dict[str, list[Callable[[], ModulePass]]] = {
    "fold": [MatrixFoldTransposesPass],
    "fuse": [MatrixFuseContractionsPass],
    "canonicalize": [CanonicalizePass],
    "all": [MatrixFoldTransposesPass, MatrixFuseContractionsPass, CanonicalizePass],
    "lowered": [ConvertMatrixToAffinePass, ConvertArbfpToArithPass],
}


def _run(
    module: ModuleOp, args: list[Any], lowered_from: FuncOp | None = None
) -> tuple[list[Any], np.ndarray]:
    """Results and memory of `@f` on copies of `args` (of the lowered
    function, if `lowered_from` is the function before lowering)."""
    copies = [a.copy() if isinstance(a, np.ndarray) else a for a in args]
    results = (
        run_function(module, "f", *copies)
        if lowered_from is None
        else run_lowered(module, lowered_from, copies)
    )
    memory = next(
        a
        for a in copies
        if isinstance(a, np.ndarray) and a.ndim == 1 and a.size == MEMORY_SIZE
    )
    return list(results), memory


def _bits_equal(a: np.ndarray, b: np.ndarray) -> bool:
    """Equal bit for bit, except that any NaN matches any NaN."""
    if a.dtype != b.dtype or a.shape != b.shape:
        return False
    if a.dtype.kind in "iu":
        return bool(np.array_equal(a, b))
    wide_a, wide_b = a.astype(np.float64), b.astype(np.float64)
    nan = np.isnan(wide_a)
    if not np.array_equal(nan, np.isnan(wide_b)):
        return False
    same = np.signbit(wide_a) == np.signbit(wide_b)
    return bool(np.all((wide_a == wide_b) & same | nan))


def _close(a: np.ndarray, b: np.ndarray, precision: int) -> bool:
    wide_a, wide_b = a.astype(np.float64), b.astype(np.float64)
    finite = np.isfinite(wide_a)
    if not np.all(finite):
        return True  # overflow may differ once products are not rounded
    scale = 1 + float(np.max(np.abs(wide_a), initial=0))
    bound = 2.0 ** -(precision - 8) * scale * scale
    return bool(np.all(np.abs(wide_a - wide_b) <= bound))


def _check(seed: int) -> None:
    generator = ProgramGenerator(seed)
    module, args = generator.build()
    module.verify()
    try:
        expected, expected_memory = _run(module, args)
    except UndefinedBehaviorError:
        return
    contract = generator.use_contract
    for name, passes in PIPELINES.items():
        transformed = module.clone()
        ctx = mx_context()
        for make in passes:
            make().apply(ctx, transformed)
            transformed.verify()
        got, memory = _run(
            transformed, args, _function(module) if name == "lowered" else None
        )
        for i, (e, g) in enumerate(
            [*zip(expected, got, strict=True), (expected_memory, memory)]
        ):
            e_arr, g_arr = np.asarray(e), np.asarray(g)
            precision = FLOAT_PRECISION.get(e_arr.dtype)
            # Only fusion into fma may change a rounding.
            if contract and name in ("fuse", "all", "lowered") and precision:
                ok = _close(e_arr, g_arr, precision)
            else:
                ok = _bits_equal(e_arr, g_arr)
            assert ok, (
                f"seed {seed}, pipeline {name}, result {i}: {e_arr} != {g_arr}\n"
                f"before:\n{module}\nafter:\n{transformed}"
            )


@settings(
    max_examples=EXAMPLES,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)
@given(st.integers(min_value=0, max_value=2**32 - 1))
def test_passes_preserve_results(seed: int) -> None:
    _check(seed)


def _function(module: ModuleOp) -> FuncOp:
    (f,) = (op for op in module.walk() if isinstance(op, FuncOp))
    return f


def test_generator_covers_every_op_and_structure() -> None:
    """The generator reaches every matrix op and every way of carrying
    matrices through control flow (within the CI-sized budget)."""
    seen: Counter[str] = Counter()
    for seed in range(EXAMPLES):
        generator = ProgramGenerator(seed)
        generator.build()
        seen.update(generator.covered)
    print("coverage:", dict(sorted(seen.items())))
    wanted = ALL_OPS | set(STRUCTURES)
    assert set(seen) == wanted, f"never generated: {sorted(wanted - set(seen))}"


@pytest.mark.parametrize("seed", range(20))
def test_fixed_seeds(seed: int) -> None:
    """The same check on seeds 0..19, easy to rerun one by one."""
    _check(seed)

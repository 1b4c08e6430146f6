"""Buffers of the lowering: shared when their lifetimes do not overlap, and at
most `stack-bytes` of them on the stack per function (the rest on the heap).

A long chain of products needs a buffer per intermediate; before buffers were
shared, 200 chained 128x128 f32 products took 12.8 MiB of stack and the
process died. The chain runs in a subprocess (a crash fails the test instead
of killing the test worker) with the usual 8 MiB stack limit set explicitly.
"""

import json
import resource
import subprocess
import sys
import textwrap

import numpy as np
import pytest
from xdsl.dialects.func import FuncOp

from mx.frontend import mx_context
from mx.interpreters import run_function
from mx.jit import compile_module
from mx.testing.translation import ROOT, identical, modules, parse, random_arguments

BUFFERS = ROOT / "tests/filecheck/lowering/convert-matrix-to-affine/buffers.mlir"

SCALAR_PIPELINE = (
    "matrix-fold-transposes,canonicalize,convert-matrix-to-affine{{vector-bits=0{}}},"
    "convert-arbfp-to-arith,canonicalize,cse,convert-to-llvm,cse"
)
"""Scalar loop nests compile ~5x faster than vector ones (the chain's 200
products would take ~40 s of CPU to compile with vectors)."""

CHAIN = textwrap.dedent(
    """
    import json, sys
    import numpy as np
    from mx.jit import compile_module
    from mx.testing.matrix_programs import matmul_chain

    n, length, pipeline = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
    chain = compile_module(matmul_chain(length, n), pipeline).chain
    rng = np.random.default_rng(1)
    a = rng.standard_normal((n, n)).astype(np.float32)
    # An orthogonal factor keeps the magnitudes (and the rounding error) bounded.
    b = np.linalg.qr(rng.standard_normal((n, n)))[0].astype(np.float32)
    expected = a.astype(np.float64)
    for _ in range(length):
        expected = expected @ b.astype(np.float64)
    got = chain(a, b)
    print(json.dumps(float(np.max(np.abs(got - expected)) / np.max(np.abs(expected)))))
    """
)


def _eight_mib_stack() -> None:
    resource.setrlimit(resource.RLIMIT_STACK, (8 << 20, resource.RLIM_INFINITY))


def test_a_chain_of_200_products_of_64_kib_matrices_runs() -> None:
    done = subprocess.run(
        [sys.executable, "-c", CHAIN, "128", "200", SCALAR_PIPELINE.format("")],
        capture_output=True,
        text=True,
        timeout=600,
        preexec_fn=_eight_mib_stack,
    )
    assert done.returncode == 0, f"exit {done.returncode}: {done.stderr[-2000:]}"
    relative_error = json.loads(done.stdout)
    assert relative_error < 1e-4, relative_error


@pytest.mark.parametrize("options", ["", " stack-bytes=128", " stack-bytes=0"])
def test_shared_and_heap_buffers_compute_what_the_interpreter_does(
    options: str,
) -> None:
    """The functions of the FileCheck test, compiled with buffers shared and
    moved to the heap, agree bit for bit with the interpreter."""
    ctx = mx_context()
    rng = np.random.default_rng(3)
    (text,) = modules(BUFFERS, False)
    module = parse(ctx, text)
    compiled = compile_module(text, SCALAR_PIPELINE.format(options))
    compared = 0
    for func in module.walk():
        if not isinstance(func, FuncOp):
            continue
        for _ in range(4):
            args = random_arguments(func, rng)
            expected = run_function(module, func.sym_name.data, *args)
            got = getattr(compiled, func.sym_name.data)(*args)
            assert identical(expected[0], got), (func.sym_name.data, args)
            compared += 1
    assert compared == 12

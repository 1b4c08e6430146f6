"""JIT calls of functions whose arguments do not fit in registers: a kernel
large enough not to be inlined into the call's wrapper (a matvec), with
vector arguments of any length (passed on the stack past the registers, in
64-byte aligned slots on AVX-512) and integer, index and float scalars
among them, in a random order.

The wrapper once allocated the overflow flag of each integer argument in
the block that converts it: a dynamic alloca, after which the stack pointer
was 16-byte aligned only, and the 64-byte aligned stores of the call's
stack arguments crashed the process (a `vector<65xf32>`, a bias and an
`index` argument were enough). Each case is compared with NumPy, and run
once as one call and once as a batch of two."""

import os

import numpy as np
import pytest

from mx.jit import compile_module

SAMPLE = int(os.environ.get("MX_SIGNATURE_CASES", "6"))
"""Random signatures the CI runs (docs/long-runs.md)."""

SCALARS = ("index", "i64", "i32", "f32")


def signature(seed: int) -> tuple[list[tuple[str, int]], int]:
    """The extra parameters ((type, vector length: 0 for scalars)) in order,
    and K, the matvec's length."""
    rng = np.random.default_rng(seed)
    extras: list[tuple[str, int]] = []
    for _ in range(int(rng.integers(1, 6))):
        if rng.integers(0, 2):
            extras.append(("vector", int(rng.integers(1, 140))))
        else:
            extras.append((str(rng.choice(SCALARS)), 0))
    return extras, int(rng.integers(60, 140))


def source(extras: list[tuple[str, int]], k: int) -> str:
    """`@f(%w, %x, %b, extras...) -> vector<16xf32>`: W·x + b plus each
    extra's contribution (a vector's last element, a scalar as f32) in every
    lane."""
    params = [
        "%w: memref<?xf32>",
        f"%x: vector<{k}xf32>",
        "%b: vector<16xf32>",
    ]
    body = [
        f"%q = matrix.row_major_load %w[0] : memref<?xf32> -> !matrix.matrix<16x{k}xf32>",
        f"%y0 = matrix.matvec %q, %x, %b : !matrix.matrix<16x{k}xf32>, vector<{k}xf32>, vector<16xf32> -> vector<16xf32>",
    ]
    for i, (kind, n) in enumerate(extras):
        if kind == "vector":
            params.append(f"%e{i}: vector<{n}xf32>")
            body.append(
                f"%s{i} = vector.extract %e{i}[{n - 1}] : f32 from vector<{n}xf32>"
            )
        else:
            params.append(f"%e{i}: {kind}")
            value = f"%e{i}"
            if kind == "index":
                body.append(f"%n{i} = arith.index_cast %e{i} : index to i64")
                value, kind = f"%n{i}", "i64"
            conversion = (
                "" if kind == "f32" else f"arith.sitofp {value} : {kind} to f32"
            )
            body.append(
                f"%s{i} = {conversion}"
                if conversion
                else f"%s{i} = arith.addf {value}, {value} : f32"
            )
        body.append(f"%v{i} = vector.broadcast %s{i} : f32 to vector<16xf32>")
        body.append(f"%y{i + 1} = arith.addf %y{i}, %v{i} : vector<16xf32>")
    lines = "\n  ".join(body)
    return (
        f"func.func @f({', '.join(params)}) -> vector<16xf32> {{\n  {lines}\n"
        f"  func.return %y{len(extras)} : vector<16xf32>\n}}\n"
    )


@pytest.mark.parametrize("seed", range(SAMPLE))
def test_arguments_past_the_registers(seed: int) -> None:
    extras, k = signature(seed)
    f = compile_module(source(extras, k))["f"]
    rng = np.random.default_rng(seed)
    w = rng.integers(-3, 4, 16 * k).astype(np.float32)
    x = rng.integers(-3, 4, (2, k)).astype(np.float32)
    b = rng.integers(-3, 4, (2, 16)).astype(np.float32)
    args: list[object] = []
    extra = np.zeros(2)
    for kind, n in extras:
        if kind == "vector":
            v = rng.integers(-3, 4, (2, n)).astype(np.float32)
            args.append(v)
            extra += v[:, -1]
        else:
            s = int(rng.integers(-3, 4))  # (Python numbers: what users pass)
            args.append(float(s) if kind == "f32" else s)
            extra += s * (2 if kind == "f32" else 1)
    expected = (
        x.astype(np.float64) @ w.reshape(16, k).T.astype(np.float64)
        + b
        + extra[:, None]
    )
    one = f(w, x[0], b[0], *(a[0] if isinstance(a, np.ndarray) else a for a in args))
    np.testing.assert_array_equal(one, expected[0].astype(np.float32))
    batch = f(w, x, b, *args)
    np.testing.assert_array_equal(batch, expected.astype(np.float32))

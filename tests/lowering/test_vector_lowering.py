"""JIT tests of the vectorized lowering (register-blocked products, vector
copies, transposing copies): shapes that exercise every block and tail of the
blocking at the default 512-bit and at 256-bit vectors, both factor layouts,
with and without `contract`, bit for bit against a reference that sums each
element in docs/matrix-dialect.md's order with NumPy scalars of the element type.

MX_VECTOR_TESTS=all runs every shape instead of a sample.
"""

import os
import random
import re
from dataclasses import replace

import numpy as np
import pytest

from mx.jit import DEFAULT_PIPELINE, compile_module, lower_to_llvm_ir
from mx.jit_machine_code import host_cpu
from mx.testing.target_coverage import CPU_TARGETS
from tests.fixtures import JitHost

TYPES = {"f32": np.float32, "f64": np.float64, "i32": np.int32, "i8": np.int8}
SIZES = (1, 2, 3, 4, 5, 7, 8, 12, 16, 17, 20, 32, 33, 40)
ALL_SHAPES = [(r, k, c) for r in SIZES for k in (1, 3, 16) for c in SIZES]
SHAPES = (
    ALL_SHAPES
    if os.environ.get("MX_VECTOR_TESTS") == "all"
    else random.Random(7).sample(ALL_SHAPES, 12)
)


def _reference(a: np.ndarray, b: np.ndarray, acc: np.ndarray) -> np.ndarray:
    """acc = a[r][0]*b[0][c]; acc = acc + a[r][k]*b[k][c]; then + C, each
    step rounded to the element type."""
    dt = a.dtype.type
    out = np.zeros((a.shape[0], b.shape[1]), a.dtype)
    with np.errstate(over="ignore"):  # integers wrap
        _sum_in_order(a, b, acc, out, dt)
    return out


def _sum_in_order(
    a: np.ndarray, b: np.ndarray, acc: np.ndarray, out: np.ndarray, dt: type
) -> None:
    for r in range(a.shape[0]):
        for c in range(b.shape[1]):
            s = dt(a[r, 0] * b[0, c])
            for k in range(1, a.shape[1]):
                s = dt(s + dt(a[r, k] * b[k, c]))
            out[r, c] = dt(s + acc[r, c])


def _within_contract_bound(
    got: np.ndarray, a: np.ndarray, b: np.ndarray, acc: np.ndarray
) -> bool:
    """With `contract` any product may be fused with the sum it feeds, so
    compare with the exact result within the usual bound of a dot product:
    2(K + 2) ulps of the sum of magnitudes (half of it for the float64
    reference's own rounding)."""
    wide = [x.astype(np.float64) for x in (a, b, acc)]
    eps = float(np.finfo(a.dtype).eps)
    magnitude = np.abs(wide[0]) @ np.abs(wide[1]) + np.abs(wide[2])
    error = np.abs(got.astype(np.float64) - (wide[0] @ wide[1] + wide[2]))
    return bool(np.all(error <= 2 * (a.shape[1] + 2) * eps * magnitude))


def _values(rng: np.random.Generator, t: str, n: int) -> np.ndarray:
    if t.startswith("i"):
        return rng.integers(-5, 6, n).astype(TYPES[t])
    return rng.standard_normal(n).astype(TYPES[t])


def _module(t: str, r: int, k: int, c: int, a_layout: str, fm: str) -> str:
    def mat(rows: int, cols: int) -> str:
        return f"!matrix.matrix<{rows}x{cols}x{t}>"

    mem = f"memref<?x{t}>"
    return f"""
func.func @mma(%a: {mem}, %b: {mem}, %c: {mem}, %d: {mem}) {{
  %ma = matrix.{a_layout}_load %a[0] : {mem} -> {mat(r, k)}
  %mb = matrix.column_major_load %b[0] : {mem} -> {mat(k, c)}
  %mc = matrix.column_major_load %c[0] : {mem} -> {mat(r, c)}
  %p = matrix.matmul_add %ma, %mb, %mc{fm} : {mat(r, k)}, {mat(k, c)}, {mat(r, c)} -> {mat(r, c)}
  matrix.column_major_store %p, %d[0] : {mat(r, c)}, {mem}
  %t = matrix.transpose %ma : {mat(r, k)} -> {mat(k, r)}
  matrix.column_major_store %t, %d[{r * c}] : {mat(k, r)}, {mem}
  return
}}
"""


@pytest.mark.ci_sample(10)
@pytest.mark.parametrize("vector_bits", [512, 256])
@pytest.mark.parametrize("shape", SHAPES, ids=lambda s: "x".join(map(str, s)))
def test_product_and_transpose(
    shape: tuple[int, int, int], vector_bits: int, jit_host: JitHost
) -> None:
    """(On any host: the JIT's cap at the host's registers is lifted, so that
    512-bit kernels run on an AVX2 CPU too, as pairs of registers.)"""
    jit_host(replace(host_cpu(), vector_bits=0))
    r, k, c = shape
    rng = np.random.default_rng(r * 10000 + k * 100 + c)
    pipeline = (
        "matrix-fold-transposes,matrix-fuse-contractions,"
        f"convert-matrix-to-affine{{vector-bits={vector_bits}}},"
        "canonicalize,convert-to-llvm,cse"
    )
    for t in TYPES:
        for a_layout in ("column_major", "row_major"):
            contract = t.startswith("f") and a_layout == "column_major"
            fm = " fastmath<contract>" if contract else ""
            f = compile_module(_module(t, r, k, c, a_layout, fm), pipeline)["mma"]
            a, b, acc = (_values(rng, t, n) for n in (r * k, k * c, r * c))
            d = np.zeros(r * c + k * r, TYPES[t])
            f(a, b, acc, d)
            am = a.reshape(k, r).T if a_layout == "column_major" else a.reshape(r, k)
            bm, cm = b.reshape(c, k).T, acc.reshape(c, r).T
            got = d[: r * c].reshape(c, r).T
            if contract:
                assert _within_contract_bound(got, am, bm, cm), (t, a_layout)
            else:
                want = _reference(am, bm, cm)
                assert np.array_equal(got, want), (t, a_layout, got - want)
            assert np.array_equal(d[r * c :].reshape(r, k).T, am.T), (t, a_layout)


@pytest.mark.parametrize(
    ("cpu", "pipeline", "lanes"),
    [
        ("x86-64-v3", DEFAULT_PIPELINE, 8),
        ("x86-64", DEFAULT_PIPELINE, 4),
        ("znver4", DEFAULT_PIPELINE, 16),
        ("x86-64-v3", "convert-matrix-to-affine{vector-bits=512},convert-to-llvm", 8),
        ("znver4", "convert-matrix-to-affine{vector-bits=256},convert-to-llvm", 8),
    ],
)
def test_the_jit_takes_at_most_the_hosts_vectors(
    cpu: str, pipeline: str, lanes: int, jit_host: JitHost
) -> None:
    """On a host with `cpu`, the JIT lowers with vectors at most as wide as
    its registers, whatever the pipeline says (512-bit vectors on an AVX2
    CPU took pairs of registers: strict-order decode matvecs ran up to 1.9x
    slower; and spelling out another option of the pipeline gave `reassoc`
    sums of 16 lanes instead of the default's 8, other bits)."""
    jit_host(CPU_TARGETS[cpu])
    m = "!matrix.matrix<32x32xf32>"
    source = f"""func.func @add(%a: {m}, %b: {m}) -> {m} {{
  %c = matrix.add %a, %b : {m}
  func.return %c : {m}
}}"""
    widths = set(re.findall(r"<(\d+) x float>", lower_to_llvm_ir(source, pipeline)[0]))
    assert widths == {str(lanes)}

"""The reassociated float weight-times-vector kernel
(`reassociated_matvec.float_matvec_along_k`): `matrix.matvec` with
`reassoc` of row-major f16, bf16 (cast to f32), f32 or f64 weights, with
literal or `index` offsets and a padded row stride, in a loop over layers,
K not a multiple of the vector width or of two of them, rows not a multiple
of the group of 4, a bias.

Each result is checked against the float64 product of the weights (NumPy):
within (K + 2)·u·Σ|w·x| (u the unit roundoff of the sums' type); against
the interpreter (the strict k order) within twice that; and bit for bit
between 1 and 2 threads. The remark names the kernel; without `reassoc`
the strict cache-blocked kernel runs."""

from dataclasses import dataclass, replace
from typing import Any

import ml_dtypes
import numpy as np
import numpy.typing as npt
import pytest
from xdsl.parser import Parser

import mx
from mx.frontend import mx_context
from mx.interpreters import run_function
from mx.jit import compile_module, lower_to_llvm_ir
from mx.jit_machine_code import host_cpu
from mx.lowering.matrix_to_affine.kernel_remarks import (
    CACHE_BLOCKED,
    REASSOCIATED_VECTOR,
)
from tests.fixtures import JitHost
from tests.pipelines import THREADED
from tests.reference.bits import same_bits

Array = npt.NDArray[Any]


_DTYPES: dict[str, Any] = {
    "f16": np.float16,
    "bf16": ml_dtypes.bfloat16,
    "f32": np.float32,
    "f64": np.float64,
}


@dataclass(frozen=True)
class Case:
    rows: int
    cols: int
    element: str
    """The weights' type; the sums are f64 for f64 weights, else f32."""
    flags: str
    bias: bool
    offsets: str
    """"literal" (3), or "index" (an argument)."""
    layers: int
    """0: one matvec; else a `scf.for` over this many layers."""

    @property
    def result(self) -> str:
        return "f64" if self.element == "f64" else "f32"

    @property
    def stride(self) -> int:
        return self.cols + 3

    @property
    def layer_size(self) -> int:
        return self.rows * self.stride

    def __str__(self) -> str:
        return (
            f"{self.rows}x{self.cols}-{self.element}-{self.flags}"
            f"-{'bias' if self.bias else 'nobias'}-{self.offsets}-{self.layers}"
        )


def source(c: Case) -> str:
    """`@f(%w, %x, %y, %b, %o)`: y of each layer at layer·R; weights at
    %o + layer·R·stride (literal: 3)."""
    r, k, t = c.rows, c.cols, c.result
    w = f"!matrix.matrix<{r}x{k}x{t}>"
    q = f"!matrix.matrix<{r}x{k}x{c.element}>"
    start = "%o" if c.offsets == "index" else "%c3"
    fm = f" fastmath<{c.flags}>" if c.flags else ""
    body = f"""%wo = arith.addi {start}, %at_w : index
    %q = matrix.row_major_load %w[%wo] stride {c.stride} : memref<?x{c.element}> -> {q}
"""
    if c.element == t:
        matrix = "%q"
    else:
        body += f"%m = matrix.cast %q : {q} to {w}\n"
        matrix = "%m"
    bias, bias_type = "", ""
    if c.bias:
        body += f"%bv = vector.load %b[%at_y] : memref<?x{t}>, vector<{r}x{t}>\n"
        bias, bias_type = ", %bv", f", vector<{r}x{t}>"
    body += f"""%v = vector.load %x[%c0] : memref<?x{t}>, vector<{k}x{t}>
    %r = matrix.matvec {matrix}, %v{bias}{fm} : {w}, vector<{k}x{t}>{bias_type} -> vector<{r}x{t}>
    vector.store %r, %y[%at_y] : memref<?x{t}>, vector<{r}x{t}>
"""
    constants = sorted({0, 1, 3, r, c.layer_size, max(c.layers, 1)})
    lines = "\n".join(f"  %c{n} = arith.constant {n} : index" for n in constants)
    layer = f"""%at_w = arith.muli %i, %c{c.layer_size} : index
    %at_y = arith.muli %i, %c{r} : index
    {body}"""
    if c.layers:
        loop = f"""scf.for %i = %c0 to %c{c.layers} step %c1 {{
    {layer}  }}"""
    else:
        loop = f"%i = arith.constant 0 : index\n  {layer}"
    return f"""func.func @f(%w: memref<?x{c.element}>, %x: memref<?x{t}>, %y: memref<?x{t}>, %b: memref<?x{t}>, %o: index) {{
{lines}
  {loop}
  func.return
}}
"""


def check(c: Case, seed: int) -> None:
    text = source(c)
    module = compile_module(text)
    threaded = compile_module(text, THREADED)
    remarks = module.f.remarks
    assert remarks and all(
        r.endswith(f"kernel: {REASSOCIATED_VECTOR}") for r in remarks
    ), remarks
    rng = np.random.default_rng(seed)
    layers, t = max(c.layers, 1), _DTYPES[c.result]
    offset = 3 if c.offsets == "literal" else int(rng.integers(0, 9))
    values = rng.standard_normal((layers, c.rows, c.cols)).astype(_DTYPES[c.element])
    memory = np.zeros(offset + layers * c.layer_size, _DTYPES[c.element])
    at = (
        offset
        + np.arange(layers)[:, None, None] * c.layer_size
        + np.arange(c.rows)[None, :, None] * c.stride
        + np.arange(c.cols)[None, None, :]
    )
    memory[at] = values
    x = rng.standard_normal(c.cols).astype(t)
    bias = rng.standard_normal(layers * c.rows).astype(t)
    weights = values.astype(np.float64)
    exact = (weights @ x.astype(np.float64)).ravel()
    size = (np.abs(weights) @ np.abs(x.astype(np.float64))).ravel()
    if c.bias:
        exact, size = exact + bias, size + np.abs(bias.astype(np.float64))
    bound = (c.cols + 2) * float(np.finfo(t).eps) / 2 * size

    def run(f: Any) -> Array:
        y = np.full(layers * c.rows, np.nan, t)
        f(memory, x, y, bias, offset)
        return y

    y = run(module.f)
    assert np.all(np.abs(y - exact) <= bound), np.max(np.abs(y - exact) - bound)
    strict = np.full(layers * c.rows, np.nan, t)
    run_function(
        Parser(mx_context(), text).parse_module(), "f", memory, x, strict, bias, offset
    )
    assert np.all(np.abs(y - strict) <= 2 * bound)
    with mx.num_threads(1):
        one = run(threaded.f)
    with mx.num_threads(2):
        two = run(threaded.f)
    assert same_bits(one, two)
    assert same_bits(one, y)


CASES = [
    # the decode bench's spelling, small: a layer loop, index offsets
    Case(37, 256, "f16", "fast", False, "index", 3),
    Case(21, 100, "bf16", "contract,reassoc", True, "index", 2),
    # K below one vector, between one and two, not a multiple of 16
    Case(16, 7, "f16", "reassoc", True, "literal", 0),
    Case(18, 23, "bf16", "fast", False, "literal", 2),
    Case(19, 77, "f32", "contract,reassoc", True, "index", 0),
    Case(17, 40, "f64", "fast", True, "literal", 2),
]


@pytest.mark.parametrize("case", CASES, ids=str)
def test_reassociated_float_matvec(case: Case) -> None:
    check(case, case.rows * case.cols)


def test_without_reassoc_the_strict_kernel() -> None:
    c = Case(32, 64, "f16", "contract", False, "literal", 0)
    assert compile_module(source(c)).f.remarks[0].endswith(f"kernel: {CACHE_BLOCKED}")


def test_every_count_of_weight_streams_computes_the_same_bits(
    jit_host: JitHost,
) -> None:
    """Rows read 1, 2, 4 or 8 at a time (`TargetCpu.weight_streams`: the
    host's in the JIT, 1 on AMD Zen 4 and later, 4 elsewhere) give the same
    bits: each row's sums keep their order whatever the group. 37 rows, a multiple of
    none, so the last group overlaps the one before it."""
    c = Case(37, 100, "bf16", "contract,reassoc", True, "index", 2)
    rng = np.random.default_rng(5)
    memory = rng.standard_normal(7 + 2 * c.layer_size).astype(ml_dtypes.bfloat16)
    x = rng.standard_normal(c.cols).astype(np.float32)
    bias = rng.standard_normal(2 * c.rows).astype(np.float32)
    results: dict[int, Array] = {}
    codes: set[str] = set()
    for streams in (1, 2, 4, 8):
        jit_host(replace(host_cpu(), weight_streams=streams))
        text = source(c) + f"// {streams} weight streams\n"
        codes.add(lower_to_llvm_ir(text)[0])
        y = np.full(2 * c.rows, np.nan, np.float32)
        compile_module(text).f(memory, x, y, bias, 7)
        results[streams] = y
    assert len(codes) == 4  # four kernels
    assert not np.isnan(results[1]).any()
    assert all(same_bits(y, results[1]) for y in results.values())

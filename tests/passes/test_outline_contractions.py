"""`outline-contractions` (in `mx-lower-to-llvm`): repeated large
contractions become calls of one kernel, with the same bits.

Random programs (a fixed derandomized sample; MX_OUTLINE_EXAMPLES=N for
more) chain matmuls, matmul_adds (with transposed factors too) and matvecs
of one size and element types (f32, f64, f16 factors summed in f32; with or
without `contract`); each runs through the JIT outlined and inline
(`outline-min-work=0`), on C- and Fortran-ordered arrays, and through the
interpreter: the same bits. The growth of the LLVM IR with the length of a
chain is pinned without clocks; kernel remarks and threads work through the
calls.
"""

import os
import re
from itertools import pairwise
from typing import Any

import numpy as np
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st
from xdsl.parser import Parser

import mx
from mx.frontend import mx_context
from mx.interpreters import run_function
from mx.jit import compile_module, lower_to_llvm_ir
from mx.passes.outline_contractions import DEFAULT_MIN_WORK
from mx.testing.matrix_programs import matmul_chain
from tests.reference.bits import same_bits

EXAMPLES = int(os.environ.get("MX_OUTLINE_EXAMPLES", "8"))
INLINE = "mx-lower-to-llvm{outline-min-work=0}"
DTYPES: dict[str, Any] = {"f16": np.float16, "f32": np.float32, "f64": np.float64}
FORMS = ("matmul", "matmul_t", "matmul_add", "matvec")
"""x·b, x·bᵀ, x·b + c, (M·v: a vector chain of its own)."""


def _program(n: int, factor: str, result: str, forms: list[str], flags: str) -> str:
    """`@f(%a, %b, %c, %m, %v)`: x = a, then each form of `forms` in turn
    (x = x·b, x·bᵀ or x·b + c, a widening cast of x to the factor type in
    between when it is narrower), and v = m·v for each matvec; returns
    x and v."""
    f = f"!matrix.matrix<{n}x{n}x{factor}>"
    r = f"!matrix.matrix<{n}x{n}x{result}>"
    vec = f"vector<{n}x{result}>"
    fm = f" fastmath<{flags}>" if flags else ""
    lines = [
        f"func.func @f(%a: {f}, %b: {f}, %c: {r}, %m: {r}, %v: {vec}) -> ({r}, {vec}) {{",
        f"  %bt = matrix.transpose %b : {f} -> {f}",
    ]
    x, v, k = "%a", "%v", 0
    out = None
    for form in forms:
        k += 1
        if form == "matvec":
            lines.append(f"  %v{k} = matrix.matvec %m, {v}{fm} : {r}, {vec} -> {vec}")
            v = f"%v{k}"
            continue
        if out is not None and factor != result:
            lines.append(f"  %n{k} = matrix.cast {out} : {r} to {f}")
            x = f"%n{k}"
        elif out is not None:
            x = out
        rhs = "%bt" if form == "matmul_t" else "%b"
        if form == "matmul_add":
            lines.append(
                f"  %x{k} = matrix.matmul_add {x}, {rhs}, %c{fm} : {f}, {f}, {r} -> {r}"
            )
        else:
            lines.append(f"  %x{k} = matrix.matmul {x}, {rhs}{fm} : {f}, {f} -> {r}")
        out = f"%x{k}"
    if out is None:
        lines.append(f"  %x0 = matrix.matmul %a, %b{fm} : {f}, {f} -> {r}")
        out = "%x0"
    lines += [f"  func.return {out}, {v} : {r}, {vec}", "}", ""]
    return "\n".join(lines)


def _inputs(rng: np.random.Generator, n: int, factor: str, result: str) -> list[Any]:
    """Values scaled so that chains neither overflow nor vanish, with some
    +0 and -0."""

    def m(t: str, shape: tuple[int, ...]) -> np.ndarray:
        values = rng.standard_normal(shape) / np.sqrt(n)
        values[rng.random(shape) < 0.05] = -0.0
        return values.astype(DTYPES[t])

    return [
        m(factor, (n, n)) * DTYPES[factor](np.sqrt(n)),
        m(factor, (n, n)),
        m(result, (n, n)),
        m(result, (n, n)),
        m(result, (n,)),
    ]


@settings(
    max_examples=EXAMPLES,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
    phases=[Phase.explicit, Phase.generate],  # compiles are too slow to shrink
)
@given(
    st.sampled_from([24, 32, 96]),
    st.sampled_from([("f32", "f32"), ("f64", "f64"), ("f16", "f32")]),
    st.lists(st.sampled_from(FORMS), min_size=2, max_size=7),
    st.sampled_from(["", "contract"]),
    st.integers(0, 2**32 - 1),
)
def test_outlined_chains_compute_the_same_bits(
    n: int, types: tuple[str, str], forms: list[str], flags: str, seed: int
) -> None:
    factor, result = types
    source = _program(n, factor, result, forms, flags)
    # Column-major boundaries (mx-opt's): a form used twice is one signature.
    ir, _, _ = lower_to_llvm_ir(source)
    for form in {f for f in FORMS if forms.count(f) > 1}:
        if form == "matvec" and n * n < DEFAULT_MIN_WORK:
            continue  # n·n multiply-adds: kept inline
        kernel = "matvec" if form == "matvec" else form.removesuffix("_t")
        assert re.search(rf"define (internal )?[^@\n]*@f__{kernel}_\d", ir), form
    outlined = compile_module(source)
    inline = compile_module(source, INLINE)
    assert not re.search(r"@f__mat(mul|mul_add|vec)_\d", inline.llvm_ir)
    args = _inputs(np.random.default_rng(seed), n, factor, result)
    expected = inline["f"](*args)
    for order in ("C", "F"):
        got = outlined["f"](*(np.asarray(a, order=order) for a in args))
        for g, e in zip(got, expected, strict=True):
            assert same_bits(g, e)
    if not flags:
        module = Parser(mx_context(), source).parse_module()
        for g, e in zip(expected, run_function(module, "f", *args), strict=True):
            assert same_bits(g, np.asarray(e))


def test_llvm_ir_grows_by_a_call_per_matmul() -> None:
    """A chain of N equal 64×64 matmuls: one kernel whatever N, and a few
    lines (the call) per matmul (inline, each matmul is ~500 lines)."""
    sizes = (4, 8, 16, 32)
    lines: list[int] = []
    for count in sizes:
        ir, _, _ = lower_to_llvm_ir(matmul_chain(count, 64))
        assert len(re.findall(r"^define .*@chain__matmul_\d\(", ir, re.M)) == 1
        assert ir.count("call void @chain__matmul_0(") == count
        lines.append(len(ir.splitlines()))
    steps = [
        (b - a) / (m - n) for (a, n), (b, m) in pairwise(zip(lines, sizes, strict=True))
    ]
    assert max(steps) <= 2 and min(steps) == max(steps), (lines, steps)


def test_small_products_stay_inline() -> None:
    """4×4 and 16×16 products (below min-work) are not called."""
    for n in (4, 16):
        ir, _, _ = lower_to_llvm_ir(matmul_chain(6, n))
        assert "call void" not in ir and ir.count("define ") == 1


def test_remarks_name_the_kernel_at_each_use() -> None:
    """One remark per matmul in the calling function, at the user's line:
    the remarks of the inline lowering. (The last matmul, which
    matrix-fold-transposes rewrites at the JIT's row-major boundary, is at
    1:1 either way.)"""
    source = matmul_chain(3, 128)
    f = compile_module(source)["chain"]
    assert re.search(r"call void @\w*chain__matmul_0\(", compile_module(source).llvm_ir)
    assert f.remarks == compile_module(source, INLINE)["chain"].remarks
    assert f.remarks[:2] == tuple(
        f"<string>:{line}:3: remark: 'matrix.matmul' op kernel: cache-blocked vector"
        for line in (2, 3)
    )


def test_outlined_kernels_run_on_threads() -> None:
    """The outlined 128×128 matmul still runs its blocks on threads, with the
    same bits for 1 to 4 threads."""
    source = matmul_chain(3, 128)
    module = compile_module(source)
    parallel = r"define internal void @_mx_parallel_for_\w*chain__matmul_0__parallel_0"
    assert re.search(parallel, module.llvm_ir)
    rng = np.random.default_rng(7)
    a = rng.standard_normal((128, 128)).astype(np.float32)
    b = (rng.standard_normal((128, 128)) / 11).astype(np.float32)
    results = []
    for threads in (1, 2, 3, 4):
        with mx.num_threads(threads):
            results.append(module["chain"](a, b))
    assert all(same_bits(results[0], r) for r in results[1:])
    assert same_bits(results[0], compile_module(source, INLINE)["chain"](a, b))

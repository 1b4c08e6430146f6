"""Property test of the low-precision products: random programs of
`mx.testing.quantized_programs` (narrow weights loaded at random offsets and
strides, packed or not, decoded plainly, block-scaled, widened or read by a
mixed-precision product, fed to matvec/matmul/matmul_add at sizes crossing
the vector tiles, now and then in a loop over layers) compiled by the JIT equal the interpreter bit for bit.

Each seed is compiled with one of four pipelines: `mx-lower-to-llvm`; the
lowering alone, without the matrix-level passes (so casts stay casts
instead of becoming mixed-precision products), with 256- or 512-bit vectors;
the lowering with cache sizes small enough to block these products.
MX_QUANTIZED_PROGRAMS=N runs N seeds instead of the CI sample
(docs/long-runs.md)."""

from __future__ import annotations

import os
from collections import Counter
from typing import Any

import numpy as np
import pytest
from xdsl.parser import Parser

from mx.errors import ArgumentError
from mx.frontend import mx_context
from mx.interpreters import run_function
from mx.jit import compile_module
from mx.lowering.matrix_to_affine.kernel_remarks import recording
from mx.testing.quantized_programs import FORMAT_CONTAINER, QuantizedProgram

COUNT = int(os.environ.get("MX_QUANTIZED_PROGRAMS", "36"))
LOWERING = (
    "convert-matrix-to-affine{%s},convert-arbfp-to-arith,canonicalize,cse,"
    "convert-to-llvm,cse"
)
SMALL_CACHES = "l1-bytes=2048 l2-bytes=16384 l3-bytes=8192 blocked-min-bytes=0"
"""Cache sizes that make the products of these sizes cache-blocked."""
PIPELINES = (
    "mx-lower-to-llvm",
    LOWERING % "vector-bits=256",
    LOWERING % "vector-bits=512",
    "matrix-fold-transposes,matrix-fuse-contractions,canonicalize,"
    + LOWERING % SMALL_CACHES,
)


def _bits_equal(got: Any, want: Any) -> bool:
    """Bit for bit, every NaN equal to every NaN."""
    g, w = np.asarray(got), np.asarray(want, dtype=np.asarray(got).dtype)
    if g.shape != w.shape:
        return False
    if g.dtype.kind in "iu":
        return bool(np.array_equal(g, w))
    g_nan, w_nan = np.isnan(g.astype(np.float64)), np.isnan(w.astype(np.float64))
    bits = f"u{g.dtype.itemsize}"
    return bool(
        np.array_equal(g_nan, w_nan)
        and np.array_equal(g.view(bits)[~g_nan], w.view(bits)[~w_nan])
    )


@pytest.mark.parametrize("seed", range(COUNT))
@pytest.mark.usefixtures("no_cache")  # (the remarks: seeds may draw one program)
def test_jit_equals_interpreter(seed: int) -> None:
    program = QuantizedProgram(seed)
    pipeline = PIPELINES[seed % len(PIPELINES)]
    module = Parser(mx_context(), program.source).parse_module()
    inputs = [a.copy() if isinstance(a, np.ndarray) else a for a in program.arguments]
    (want,) = run_function(module, "f", *inputs)
    with recording() as kernels:  # (and of the variant of the arguments' orders)
        function = compile_module(program.source, pipeline)["f"]
        got = function(*program.arguments)
    assert _bits_equal(got, want), (
        f"seed {seed}, pipeline {pipeline}\n{program.source}\n"
        f"got {np.asarray(got)}\nwant {np.asarray(want)}"
    )
    if program.fused:  # the fast path, whatever the weights' spelling
        remark = str(kernels[-1])
        assert "kernel: fused" in remark, f"seed {seed}: {remark}\n{program.source}"
    if program.dynamic_offsets:
        return  # (accesses at run-time positions are the caller's to bound)
    # Each buffer ends at the last element its load reads: one shorter is
    # refused, never read out of bounds.
    for i, type_ in enumerate(program.parameter_types):
        if type_.startswith("memref<"):
            short = list(program.arguments)
            short[i] = short[i][:-1]
            with pytest.raises(ArgumentError, match="reach element"):
                function(*short)


def test_sample_covers_every_form() -> None:
    """The CI sample reaches every decode, format, layout and consumer."""
    seen: Counter[str] = Counter()
    for seed in range(COUNT):
        seen.update(QuantizedProgram(seed).covered)
    print("coverage:", dict(sorted(seen.items())))
    wanted = {
        *FORMAT_CONTAINER, "convert_from", "scaled", "cast", "mixed",
        "scale f8e8m0fnu", "scale f8e4m3fn", "f16", "bf16", "i8",
        "column_major", "row_major", "column_major packed", "row_major packed",
        "splat scale", "transpose", "index offset", "matrix argument",
        "matvec", "matvec bias", "matmul", "matmul left", "matmul_add",
        "short depth", "narrow vector", "layer loop", "one column",
    }  # fmt: skip
    assert wanted <= set(seen), f"never generated: {sorted(wanted - set(seen))}"
    programs = [QuantizedProgram(seed) for seed in range(COUNT)]
    fused = sum(p.fused for p in programs)
    assert fused >= 3, f"only {fused} programs for the fused matvec kernel"
    looped = sum(p.fused and p.covered["layer loop"] > 0 for p in programs)
    assert looped >= 1, "no program for the fused matvec kernel in a layer loop"

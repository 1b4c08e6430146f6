"""The block-scaled conversions compiled (mx-lower-to-llvm: the matrix forms
through convert-matrix-to-affine, the 1-D vector forms through
convert-arbfp-to-arith), bit for bit against the exact reference on the
input sets of test_arbfp_scaled.py (`reference/scaled_inputs.py`):

- scaled_convert_from: every element encoding x the e8m0 and e4m3 scale sets,
  into every destination type, as matrices (one row per scale);
- scaled_convert_to: the random and special blocks as a matrix with one block
  per row (block 32), from f32 in every mode and scale
  rule, from f16/bf16/f64 in two variants (block 16, five blocks per row);
  8-bit formats also as vectors (VECTOR_RANDOM_BLOCKS of the random blocks
  and the special ones: a vector of every block takes minutes to compile).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from mx.jit import compile_module
from tests.reference import exact_fp as ref
from tests.reference import exact_scaled as scaled_ref
from tests.reference import scaled_inputs as inputs

ELEMENT_FORMATS = [n for n in ref.SPECS if n not in ("f8e8m0fnu", "f16")]
DESTINATIONS = ("f16", "bf16", "f32", "f64")
ALL_VARIANTS = [(m, r) for m in ref.MODES for r in ("floor", "ceil")]
SOME_VARIANTS = [("nearest_even", "floor"), ("upward", "ceil")]
VECTOR_RANDOM_BLOCKS = 16
SPECIAL_BLOCKS = 9


def _width(name: str) -> int:
    return ref.SPECS[name].width


def _bits(name: str, values: Any) -> np.ndarray:
    return np.asarray(values).astype(np.int64) & ((1 << _width(name)) - 1)


@pytest.mark.ci_sample(5)
@pytest.mark.parametrize("name", ELEMENT_FORMATS)
def test_decode_matrix(name: str) -> None:
    functions: list[str] = []
    for scale_name in inputs.SCALES:
        elements, scales, block = inputs.decode_grid(name, scale_name)
        rows = scales.size
        q = f"!matrix.matrix<{rows}x{block}xi{_width(name)}>"
        s = f"!matrix.matrix<{rows}x1xi8>"
        for d in DESTINATIONS:
            r = f"!matrix.matrix<{rows}x{block}x{d}>"
            functions.append(f"""func.func @{scale_name}_{d}(%q: {q}, %s: {s}) -> {r} {{
  %r = arbfp.scaled_convert_from {name} %q, %s block {block} scale {scale_name} : {q}, {s} to {r}
  func.return %r : {r}
}}""")
    module = compile_module("\n".join(functions))
    for scale_name in inputs.SCALES:
        elements, scales, block = inputs.decode_grid(name, scale_name)
        q = elements.reshape(scales.size, block).astype(np.int8)
        s = scales.reshape(-1, 1).astype(np.uint8).view(np.int8)
        for d in DESTINATIONS:
            got = np.asarray(module[f"{scale_name}_{d}"](q, s)).reshape(-1)
            for i, value in enumerate(got.tolist()):
                want = scaled_ref.scaled_decode(
                    name, scale_name, int(elements[i]), int(scales[i // block]), d
                )
                assert ref.exact(float(value)) == want, (d, hex(elements[i]), value)


def _quantizers(
    name: str, sources: tuple[str, ...], variants: list[tuple[str, str]], shape: str
) -> str:
    """One function per (source, variant) returning the elements and scales
    of a matrix (`shape` "RxC:N"), or two (`@e_...` the elements, `@s_...`
    the scales: several vector results do not lower) of a vector ("K:N")."""
    dims, block = shape.split(":")
    functions: list[str] = []
    for source in sources:
        for mode, rule in variants:
            if "x" in dims:
                rows, cols = (int(v) for v in dims.split("x"))
                x = f"!matrix.matrix<{rows}x{cols}x{source}>"
                q = f"!matrix.matrix<{rows}x{cols}xi{_width(name)}>"
                s = f"!matrix.matrix<{rows}x{cols // int(block)}xi8>"
                results = [("", f"%q, %s : {q}, {s}", f"{q}, {s}")]
            else:
                x = f"vector<{dims}x{source}>"
                q = f"vector<{dims}xi{_width(name)}>"
                s = f"vector<{int(dims) // int(block)}xi8>"
                results = [("e_", f"%q : {q}", q), ("s_", f"%s : {s}", s)]
            for prefix, returned, types in results:
                functions.append(f"""func.func @{prefix}{source}_{mode}_{rule}(%x: {x}) -> ({types}) {{
  %q, %s = arbfp.scaled_convert_to {name} %x block {block} rounding {mode} scale_rule {rule} : {x} to {q}, {s}
  func.return {returned}
}}""")
    return "\n".join(functions)


def _check_quantizers(
    name: str,
    module: Any,
    sources: tuple[str, ...],
    variants: list[tuple[str, str]],
    block: int,
    columns: int | None,
) -> None:
    for source in sources:
        x = inputs.random_blocks(name, source, block, seed=3)
        if columns is None:
            x = np.concatenate(
                [x[: VECTOR_RANDOM_BLOCKS * block], x[-SPECIAL_BLOCKS * block :]]
            )
        else:
            # whole rows (`_rows` rounds down): the first random blocks go,
            # the special ones at the end stay
            x = x[len(x) // block % (columns // block) * block :]
        for mode, rule in variants:
            suffix = f"{source}_{mode}_{rule}"
            if columns is None:
                got = (module[f"e_{suffix}"](x), module[f"s_{suffix}"](x))
            else:
                got = module[suffix](x.reshape(-1, columns))
            elements = _bits(name, got[0]).reshape(-1)
            scales = _bits("f8e4m3fn", got[1]).reshape(-1)
            want_elements, want_scales = scaled_ref.scaled_encode(
                name, x, block, mode, rule
            )
            bad = scales != want_scales
            assert not bad.any(), (suffix, scales[bad][:4], want_scales[bad][:4])
            bad = elements != want_elements
            assert not bad.any(), (suffix, x[bad][:4], elements[bad][:4])


def _rows(block: int, cols: int) -> int:
    return (inputs.BLOCKS + SPECIAL_BLOCKS) * block // cols  # see `random_blocks`


@pytest.mark.ci_sample(5)
@pytest.mark.parametrize("name", ELEMENT_FORMATS)
def test_quantize_matrix_f32_every_variant(name: str) -> None:
    source = _quantizers(name, ("f32",), ALL_VARIANTS, f"{_rows(32, 32)}x32:32")
    _check_quantizers(name, compile_module(source), ("f32",), ALL_VARIANTS, 32, 32)


@pytest.mark.ci_sample(5)
@pytest.mark.parametrize("name", ELEMENT_FORMATS)
def test_quantize_matrix_other_sources(name: str) -> None:
    sources = ("f16", "bf16", "f64")
    source = _quantizers(name, sources, SOME_VARIANTS, f"{_rows(16, 80)}x80:16")
    _check_quantizers(name, compile_module(source), sources, SOME_VARIANTS, 16, 80)


@pytest.mark.parametrize("name", ["f8e4m3fn", "f8e5m3fnu"])
def test_quantize_vector(name: str) -> None:
    length = (VECTOR_RANDOM_BLOCKS + SPECIAL_BLOCKS) * 8
    source = _quantizers(name, ("f32",), SOME_VARIANTS, f"{length}:8")
    _check_quantizers(name, compile_module(source), ("f32",), SOME_VARIANTS, 8, None)

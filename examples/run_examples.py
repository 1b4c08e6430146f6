"""The main example: compile each kernel in examples/ to LLVM IR, run it, check it.

    python examples/run_examples.py [--out DIR]

For every MLIR example this
1. runs `mx-opt FILE -p mx-lower-to-llvm -t llvm` (the driver itself, as a user
   would) and writes the LLVM IR to DIR (default build/examples/),
2. JIT-compiles the same module through llvmlite and calls each function on
   fixed pseudo-random inputs,
3. compares the results, and the buffers the function writes, bit for bit
   with mx's reference interpreter, and with an independent NumPy/ml_dtypes
   computation (results to a tolerance: NumPy's matmul sums in another order;
   written buffers exactly, where the example gives them).

It then runs the Python examples, which check themselves against NumPy/ml_dtypes:
examples/precision_report.py (precision reports of f32 weights in MXFP4, MXFP6
and FP8) and the ones written with the tracing front end (`@mx.function`).

It exits with status 1 if anything disagrees.
"""

import argparse
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import ml_dtypes
import numpy as np

from mx.frontend import parse_and_verify
from mx.interpreters import run_function
from mx.jit import compile_module

HERE = Path(__file__).resolve().parent
Array = np.ndarray[Any, Any]


@dataclass(frozen=True)
class Case:
    file: str
    function: str
    make_inputs: Callable[[np.random.Generator], list[Any]]
    numpy_reference: Callable[..., tuple[Array, ...]]
    written_reference: Callable[..., dict[int, Array]] | None = None
    """The exact contents of the buffers the function writes, by argument index."""


def _f32(rng: np.random.Generator, *shape: int) -> Array:
    return rng.standard_normal(shape).astype(np.float32)


def _fp8_weights(rng: np.random.Generator, *shape: int) -> Array:
    bits = rng.integers(0, 256, shape).astype(np.uint8)
    bits[(bits & 0x7F) == 0x7F] = 0x38  # no NaN encodings: 1.0 instead
    return bits.view(np.int8)


def _fp8_matvec_reference(w: Array, scale: np.float32, x: Array) -> tuple[Array, ...]:
    weights = w.view(ml_dtypes.float8_e4m3fn).astype(np.float32).reshape(32, 64)
    return ((weights * scale) @ x,)


def _gemm_bias_reference(a: Array, x: Array, b: Array) -> tuple[Array, ...]:
    return (a @ x + b,)


def _dequant_reference(w: Array, scale: np.float32, x: Array) -> tuple[Array, ...]:
    weights = w.view(np.uint8).view(ml_dtypes.float8_e4m3fn).astype(np.float32)
    return ((weights * scale) @ x,)


def _mxfp4_quantized(w: Array) -> tuple[Array, Array]:
    """OCP MX section 6.3 with ml_dtypes: per block of 32, the scale 2^e with
    e = floor(log2 amax) - 2 (f4e2m1fn's largest value is 1.5 * 2^2), the
    elements w / 2^e clamped to [-6, 6] and rounded to f4e2m1fn. Returns the
    FP4 values (float64, W's shape) and e (one per block)."""
    blocks = w.astype(np.float64).reshape(w.shape[0], -1, 32)
    amax = np.abs(blocks).max(axis=2, keepdims=True)
    e = np.frexp(amax)[1] - 1 - 2
    scaled = np.clip(blocks / 2.0**e, -6, 6)
    fp4 = scaled.astype(ml_dtypes.float4_e2m1fn)
    return fp4.reshape(w.shape), e.reshape(w.shape[0], -1)


def _mxfp4_reference(w: Array, x: Array, *buffers: Array) -> tuple[Array, ...]:
    fp4, e = _mxfp4_quantized(w)
    scales = np.repeat(2.0**e, 32, axis=1)
    dequantized = (fp4.astype(np.float64) * scales).astype(np.float32)
    return (dequantized @ x,)


def _mxfp4_written(w: Array, x: Array, *buffers: Array) -> dict[int, Array]:
    """The packed bytes (column-major codes, two per byte, low nibble first)
    and the scale codes (e + 127, column-major)."""
    fp4, e = _mxfp4_quantized(w)
    codes = fp4.T.reshape(-1).view(np.uint8) & 15
    packed = codes[0::2] | (codes[1::2] << 4)
    return {2: packed, 3: (e.T.reshape(-1) + 127).astype(np.uint8)}


def _transform_chain_reference() -> tuple[Array, ...]:
    translate = np.array(
        [[1, 0, 0, 2], [0, 1, 0, -1], [0, 0, 1, 0.5], [0, 0, 0, 1]], np.float32
    )
    rotate = np.array(
        [[0, -1, 0, 0], [1, 0, 0, 0], [0, 0, 1, 0], [0, 0, 0, 1]], np.float32
    )
    scale = np.diag(np.array([2, 3, 0.5, 1], np.float32))
    m = translate @ (rotate @ scale)
    gram_minus_blend = m.T @ m - np.float32(0.25) * (m + m.T)
    return m, gram_minus_blend, m @ np.ones(4, np.float32)


CASES = [
    Case("transform_chain.mlir", "main", lambda rng: [], _transform_chain_reference),
    Case(
        "gemm_bias.mlir",
        "gemm_bias",
        lambda rng: [_f32(rng, 16, 32), _f32(rng, 32, 8), _f32(rng, 16, 8)],
        _gemm_bias_reference,
    ),
    Case(
        "fp8_dequant_matmul.mlir",
        "dequant_matmul",
        lambda rng: [_fp8_weights(rng, 8, 16), np.float32(0.125), _f32(rng, 16, 4)],
        _dequant_reference,
    ),
    Case(
        "fp8_weights_matvec.mlir",
        "fp8_matvec",
        lambda rng: [
            _fp8_weights(rng, 32 * 64).view(np.uint8),
            np.float32(0.0625),
            _f32(rng, 64),
        ],
        _fp8_matvec_reference,
    ),
    Case(
        "mxfp4_matvec.mlir",
        "mxfp4_matvec",
        lambda rng: [
            _f32(rng, 16, 64),
            _f32(rng, 64),
            np.zeros(512, np.uint8),
            np.zeros(32, np.uint8),
        ],
        _mxfp4_reference,
        _mxfp4_written,
    ),
]


PYTHON_EXAMPLES = ["precision_report.py", "traced_mxfp4_decode.py"]
"""Examples written with the tracing front end: each checks itself against
NumPy and exits with status 1 on a mismatch."""


def _as_tuple(value: Any) -> tuple[Any, ...]:
    return value if isinstance(value, tuple) else (value,)


def _same_bits(a: Any, b: Any) -> bool:
    a, b = np.asarray(a), np.asarray(b)
    return a.shape == b.shape and a.tobytes() == np.asarray(b, a.dtype).tobytes()


def _show(value: Any) -> str:
    return np.array2string(np.asarray(value), precision=4, suppress_small=True)


def run_case(case: Case, text: str, verbose: bool) -> bool:
    rng = np.random.default_rng(2026)
    inputs = case.make_inputs(rng)
    jit_inputs, interpreter_inputs = (
        [np.copy(a) if isinstance(a, np.ndarray) else a for a in inputs]
        for _ in range(2)
    )
    compiled = _as_tuple(compile_module(text)[case.function](*jit_inputs))
    interpreted = run_function(
        parse_and_verify(text), case.function, *interpreter_inputs
    )
    ok = True
    for i, (jit_value, ref_value) in enumerate(zip(compiled, interpreted, strict=True)):
        if not _same_bits(jit_value, ref_value):
            print(f"  result #{i}: JIT and interpreter differ")
            ok = False
    for i, (jit_arg, ref_arg) in enumerate(
        zip(jit_inputs, interpreter_inputs, strict=True)
    ):
        if isinstance(jit_arg, np.ndarray) and not _same_bits(jit_arg, ref_arg):
            print(f"  argument #{i}: JIT and interpreter wrote different contents")
            ok = False
    if case.written_reference is not None:
        for i, expected in case.written_reference(*inputs).items():
            if not _same_bits(jit_inputs[i], expected):
                print(f"  argument #{i}: written contents differ from NumPy")
                ok = False
    for i, expected in enumerate(case.numpy_reference(*inputs)):
        if not np.allclose(compiled[i], expected, rtol=1e-5, atol=1e-5):
            print(f"  result #{i}: differs from NumPy beyond rounding")
            ok = False
    for i, value in enumerate(compiled):
        if verbose or i == 0:
            print(f"  result #{i} {np.asarray(value).shape}:")
            print("    " + _show(value).replace("\n", "\n    "))
    return ok


def main() -> int:
    parser = argparse.ArgumentParser(description="Compile, run and check the examples.")
    parser.add_argument("--out", type=Path, default=Path("build/examples"))
    parser.add_argument(
        "-v", "--verbose", action="store_true", help="print all results"
    )
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    mx_opt = Path(sys.executable).parent / "mx-opt"
    failures = 0
    for case in CASES:
        source = HERE / case.file
        ll = args.out / (source.stem + ".ll")
        lowered = subprocess.run(
            [
                str(mx_opt),
                str(source),
                "-p",
                "mx-lower-to-llvm",
                "-t",
                "llvm",
                "-o",
                str(ll),
            ],
            capture_output=True,
            text=True,
        )
        if lowered.returncode != 0:
            print(f"{case.file}: mx-opt failed:\n{lowered.stderr}")
            failures += 1
            continue
        lines = ll.read_text().count("\n")
        print(f"{case.file} @{case.function}: {lines} lines of LLVM IR in {ll}")
        ok = run_case(case, source.read_text(), args.verbose)
        print(
            f"  {'OK' if ok else 'MISMATCH'}: JIT == interpreter bit for bit, ~= NumPy"
        )
        failures += not ok
    for script in PYTHON_EXAMPLES:
        print(f"{script}:")
        run = subprocess.run(
            [sys.executable, str(HERE / script)], capture_output=True, text=True
        )
        print("  " + (run.stdout + run.stderr).strip().replace("\n", "\n  "))
        failures += run.returncode != 0
    total = len(CASES) + len(PYTHON_EXAMPLES)
    print(f"{total - failures} of {total} examples passed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())

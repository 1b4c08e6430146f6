"""Translation validation of the FileCheck-tested pipelines.

For each `// RUN: mx-opt %s -p PIPELINE ...` line of the pass and canonicalize
tests, every function the interpreter can run is interpreted on random
arguments before and after the pipeline (applied through the Python API), and
the results must agree:

- bit for bit (every NaN equal to every NaN; signed zeros distinguished), or,
  when the function uses `contract`, `reassoc` or `fast` flags, within
  `flagged_tolerance`;
- if the original program has undefined behaviour on an input (the
  interpreter raises `UndefinedBehaviorError`), that input is skipped; if only
  the transformed one has, the pass introduced it: a failure.

An `index` argument gets a random value in [0, 4) (inputs on which the
original has undefined behaviour, e.g. an index out of range, are redrawn). A
1-D memref argument gets a random buffer (static size, or
`DYNAMIC_MEMREF_SIZE` elements), whose contents after the call count as a
result. Functions are skipped (each with its reason, see `Skip`) when an
argument is a memref of rank > 1, a matrix is too large to interpret, or the interpreter cannot run an
op they contain (xDSL's arith interpreter has no vector operands).
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, cast

import ml_dtypes
import numpy as np
from xdsl.context import Context
from xdsl.dialects.builtin import (
    BFloat16Type,
    Float16Type,
    Float32Type,
    Float64Type,
    IndexType,
    IntegerType,
    MemRefType,
    ModuleOp,
    VectorType,
)
from xdsl.dialects.func import FuncOp
from xdsl.ir import Attribute
from xdsl.parser import Parser
from xdsl.passes import PassPipeline
from xdsl.universe import Universe
from xdsl.utils.arg_spec import parse_pipeline

from mx.dialects.matrix import MatrixType
from mx.frontend import mx_context

ROOT = Path(__file__).resolve().parents[2]
FLAGGED = re.compile(r"fastmath<[^>]*\b(contract|reassoc|fast)\b")
NO_NANS = re.compile(r"fastmath<[^>]*\b(nnan|fast)\b")

Array = np.ndarray[Any, Any]


def filecheck_files() -> list[Path]:
    tests = ROOT / "tests" / "filecheck"
    return sorted(tests.glob("passes/*.mlir")) + sorted(
        tests.glob("dialects/*/canonicalize.mlir")
    )


TO_LLVM = re.compile(r"(^|,)\s*(mx-lower-to-llvm|convert-to-llvm)\b")
"""Pipelines whose output is the llvm dialect, which the interpreter does not
run (the JIT tests compare that code with the interpreter instead)."""

DISCARDED = re.compile(r"(^|\s)-o\s+/dev/null\b")
"""An `mx-opt` command that prints no IR (its RUN line checks remarks)."""


def run_line_pipelines(path: Path) -> list[tuple[str, bool]]:
    """(pipeline, split-input-file) of each `mx-opt %s -p ...` RUN line whose
    output the interpreter runs (not one that discards its IR with
    `-o /dev/null` to check only the remarks)."""
    found: list[tuple[str, bool]] = []
    for line in path.read_text().splitlines():
        m = re.match(r"//\s*RUN:\s*mx-opt\s+%s\s+(.*)", line)
        if not m:
            continue
        command = m.group(1).split("|")[0]
        if DISCARDED.search(command):
            continue
        p = re.search(r"""-p\s+(?:'([^']*)'|"([^"]*)"|(\S+))""", command)
        if p is None:
            continue
        pipeline = next(g for g in p.groups() if g is not None)
        if TO_LLVM.search(pipeline):
            continue
        entry = (pipeline, "--split-input-file" in command)
        if entry not in found:
            found.append(entry)
    return found


def build_pipeline(spec: str) -> PassPipeline:
    passes = Universe.get_multiverse().all_passes
    return PassPipeline(
        tuple(passes[s.name]().from_pass_spec(s) for s in parse_pipeline(spec))
    )


def modules(path: Path, split: bool) -> Iterator[str]:
    text = path.read_text()
    chunks = re.split(r"^// -----.*$", text, flags=re.M) if split else [text]
    yield from chunks


def parse(ctx: Context, text: str) -> ModuleOp:
    return Parser(ctx, text).parse_module()


# -- random arguments ------------------------------------------------------------


def _dtype(t: Attribute) -> Any:
    if isinstance(t, Float16Type):
        return np.float16
    if isinstance(t, BFloat16Type):
        return ml_dtypes.bfloat16
    if isinstance(t, Float32Type):
        return np.float32
    if isinstance(t, Float64Type):
        return np.float64
    if isinstance(t, IntegerType):
        return {
            1: np.bool_,
            4: np.int8,
            6: np.int8,
            8: np.int8,
            16: np.int16,
            32: np.int32,
            64: np.int64,
        }[t.width.data]
    raise NotImplementedError(str(t))


def random_array(
    t: Attribute, shape: tuple[int, ...], rng: np.random.Generator
) -> Array:
    """Random elements of `t`: small integers and full-range ones (containers:
    their range), floats of mixed magnitude with zeros of both signs."""
    dtype = _dtype(t)
    n = int(np.prod(shape))
    if isinstance(t, IntegerType):
        width = t.width.data
        if width == 1:
            return rng.integers(0, 2, n).astype(np.bool_).reshape(shape)
        lo, hi = -(2 ** (width - 1)), 2 ** (width - 1)
        small = rng.integers(max(lo, -8), min(hi, 8), n)
        wide = rng.integers(lo, hi, n, dtype=np.int64)
        return np.where(rng.random(n) < 0.6, small, wide).astype(dtype).reshape(shape)
    mant = rng.uniform(-1.0, 1.0, n) * np.exp2(
        rng.integers(-3, 4, n).astype(np.float64)
    )
    roll = rng.random(n)
    vals = np.where(roll < 0.15, np.round(mant * 4), mant)
    vals = np.where(roll > 0.95, -0.0, vals)
    return vals.astype(dtype).reshape(shape)


class Skip(Exception):
    """This function cannot be validated (the reason is the message)."""


DYNAMIC_MEMREF_SIZE = 4096
"""Elements of the buffer passed for a `memref<?xT>` argument (the tests'
loads and stores stay inside it: an example reads 32×64 weights)."""

MAX_ELEMENTS = 1 << 16
"""Functions with a larger matrix are not interpreted (1048575² splats exist to
test that nothing materializes them)."""


def random_arguments(func: FuncOp, rng: np.random.Generator) -> list[Any]:
    for op in func.walk():
        for r in op.results:
            if isinstance(r.type, MatrixType) and r.type.num_elements > MAX_ELEMENTS:
                raise Skip(f"a matrix of {r.type.num_elements} elements")
    args: list[Any] = []
    for t in func.function_type.inputs.data:
        if isinstance(t, MatrixType):
            args.append(random_array(t.element_type, t.shape, rng))
        elif isinstance(t, VectorType):
            args.append(random_array(t.element_type, tuple(t.get_shape()), rng))
        elif isinstance(t, IndexType):
            # Mostly inside the tests' small shapes; UB inputs are redrawn.
            args.append(int(rng.integers(0, 4)))
        elif isinstance(t, MemRefType):
            memref = cast(MemRefType[Attribute], t)
            shape = memref.get_shape()
            if len(shape) != 1:
                raise Skip(f"argument of type {t}")
            size = shape[0] if shape[0] >= 0 else DYNAMIC_MEMREF_SIZE
            args.append(random_array(memref.element_type, (size,), rng))
        elif isinstance(
            t, IntegerType | Float16Type | BFloat16Type | Float32Type | Float64Type
        ):
            v = random_array(t, (1,), rng)[0]
            args.append(
                bool(v)
                if isinstance(t, IntegerType) and t.width.data == 1
                else v.item()
            )
        else:
            raise Skip(f"argument of type {t}")
    return args


def run_lowered(lowered: ModuleOp, func: FuncOp, args: list[Any]) -> tuple[Any, ...]:
    """Call the lowered `func` with the arguments of the original one (memref
    arguments are written in place, as `run_function` does): a matrix
    argument is its column-major buffer, each matrix result an out-parameter
    appended after the arguments."""
    from mx.interpreters import run_function
    from mx.semantics.matrix import element_dtype

    inputs, outputs = func.function_type.inputs.data, func.function_type.outputs.data
    buffers = [
        np.ascontiguousarray(a.T) if isinstance(t, MatrixType) else a
        for a, t in zip(args, inputs, strict=True)
    ]
    out = [
        np.zeros((t.cols, t.rows), dtype=element_dtype(t.element_type))
        for t in outputs
        if isinstance(t, MatrixType)
    ]
    scalars = iter(run_function(lowered, func.sym_name.data, *buffers, *out))
    matrices = iter(out)
    return tuple(
        next(matrices).T if isinstance(t, MatrixType) else next(scalars)
        for t in outputs
    )


# -- comparison ------------------------------------------------------------------


def _bits(a: Array) -> Array:
    a = np.asarray(a)
    if a.dtype.kind == "f" or a.dtype == ml_dtypes.bfloat16:
        return a.view(np.dtype(f"u{a.dtype.itemsize}"))
    return a


def identical(a: Any, b: Any) -> bool:
    """Bit for bit, except that all NaNs are equal."""
    x, y = np.asarray(a), np.asarray(b)
    if x.shape != y.shape or x.dtype != y.dtype:
        return False
    if x.dtype.kind == "f" or x.dtype == ml_dtypes.bfloat16:
        xf, yf = x.astype(np.float64), y.astype(np.float64)
        both_nan = np.isnan(xf) & np.isnan(yf)
        return bool(np.all(both_nan | (_bits(x) == _bits(y))))
    return bool(np.array_equal(x, y))


def flagged_tolerance(
    before: Any, after: Any, depth: int, no_nans: bool = False
) -> bool:
    """For functions with contract/reassoc flags: |before - after| <=
    2 * depth * eps(T) * (max |before| + 1), where depth bounds the number of
    roundings a reassociation or fusion can change (the largest dimension of
    the function's matrices times its op count). A non-finite result must
    meet a non-finite one, or a finite one within 2^8 of overflow: where
    sums and products overflow, fusing a product changes which infinities
    meet (inf + -inf is NaN with the product rounded to -inf first, +inf
    with it fused) and whether a product's overflow survives (fused with a
    large addend of the other sign, the sum may stay finite). With
    `no_nans` (the function has an op with `nnan`), a NaN `before` meets
    anything: LLVM's poison."""
    x = np.asarray(before).astype(np.float64)
    y = np.asarray(after).astype(np.float64)
    if x.shape != y.shape:
        return False
    if (
        np.asarray(before).dtype.kind not in "fV"
        and np.asarray(before).dtype != ml_dtypes.bfloat16
    ):
        return identical(before, after)
    eps = float(ml_dtypes.finfo(np.asarray(before).dtype).eps)
    finite = np.isfinite(x) & np.isfinite(y)
    scale = float(np.max(np.abs(x[finite]), initial=0.0)) + 1.0
    with np.errstate(invalid="ignore"):
        close = np.abs(x - y) <= 2 * depth * eps * scale
    if no_nans:  # (a NaN reaching an op that promised none: any result)
        finite |= np.isnan(x)
        close |= np.isnan(x)
    near_overflow = float(ml_dtypes.finfo(np.asarray(before).dtype).max) / 256
    overflowed = ~np.isfinite(x) | (np.abs(x) >= near_overflow)
    overflowed_too = ~np.isfinite(y) | (np.abs(y) >= near_overflow)
    return bool(np.all(np.where(finite, close, overflowed & overflowed_too)))


def uses_flags(func: FuncOp, flags: re.Pattern[str] = FLAGGED) -> bool:
    """True if an op of `func` has fastmath flags `flags` matches."""
    return any(
        flags.search(str(op)) for op in func.body.walk() if "fastmath" in op.properties
    )


def rounding_depth(func: FuncOp) -> int:
    dims = [1]
    count = 0
    for op in func.body.walk():
        count += 1
        for r in op.results:
            if isinstance(r.type, MatrixType):
                dims.extend(r.type.shape)
    return max(dims) * count


@dataclass
class Report:
    validated: int = 0
    """Functions validated on at least one input."""
    inputs: int = 0
    skipped: dict[str, str] | None = None


def validate(
    path: Path,
    pipeline: str,
    split: bool,
    inputs: int,
    seed: int = 0,
    passes: PassPipeline | None = None,
) -> Report:
    """Validate every runnable function of `path` under `pipeline` (or the
    given `passes`, for testing this check); raises AssertionError at the first
    function whose results change."""
    from xdsl.utils.exceptions import InterpretationError

    from mx.interpreters import run_function
    from mx.semantics.matrix import UndefinedBehaviorError

    report = Report(skipped={})
    assert report.skipped is not None
    rng = np.random.default_rng(seed)
    ctx = mx_context()
    for chunk in modules(path, split):
        try:
            before = parse(ctx, chunk)
            before.verify()
            after = before.clone()
            (passes or build_pipeline(pipeline)).apply(ctx, after)
        except Exception as err:  # an input meant for error tests: not ours to judge
            report.skipped[f"chunk at {chunk.strip()[:40]!r}"] = (
                f"{type(err).__name__}: {err}"
            )
            continue
        for func in before.walk():
            if not isinstance(func, FuncOp) or func.is_declaration:
                continue
            name = func.sym_name.data
            flagged = uses_flags(func)
            done = 0
            try:
                for _ in range(inputs * 3):  # inputs with UB are drawn again
                    if done == inputs:
                        break
                    args = random_arguments(func, rng)
                    mem_before = [_copy(a) for a in args]
                    mem_after = [_copy(a) for a in args]
                    try:
                        expected = run_function(before, name, *mem_before)
                    except UndefinedBehaviorError:
                        continue
                    except (
                        InterpretationError,
                        NotImplementedError,
                        AssertionError,
                    ) as err:
                        # xDSL's arith interpreter asserts on vector operands.
                        raise Skip(
                            f"interpreter: {type(err).__name__}: {err}"
                        ) from None
                    try:
                        actual = run_function(after, name, *mem_after)
                    except UndefinedBehaviorError as err:
                        raise AssertionError(
                            f"{path.name} -p {pipeline}: @{name} has undefined behaviour only "
                            f"after the pipeline ({err}) on arguments {args}"
                        ) from None
                    except InterpretationError as err:
                        if "Could not find interpretation function" not in str(err):
                            raise
                        raise Skip(f"after the pipeline, interpreter: {err}") from None
                    # Buffers passed for memrefs are results too (the stores).
                    memrefs = [
                        i
                        for i, t in enumerate(func.function_type.inputs.data)
                        if isinstance(t, MemRefType)
                    ]
                    expected = (*expected, *(mem_before[i] for i in memrefs))
                    actual = (*actual, *(mem_after[i] for i in memrefs))
                    _check(path, pipeline, func, args, expected, actual, flagged)
                    done += 1
            except Skip as why:
                report.skipped[name] = str(why)
                continue
            if done:
                report.validated += 1
                report.inputs += done
    return report


def _copy(a: Any) -> Any:
    return a.copy() if isinstance(a, np.ndarray) else a


def _check(
    path: Path,
    pipeline: str,
    func: FuncOp,
    args: list[Any],
    expected: tuple[Any, ...],
    actual: tuple[Any, ...],
    flagged: bool,
) -> None:
    depth = rounding_depth(func)
    for k, (x, y) in enumerate(zip(expected, actual, strict=True)):
        ok = (
            flagged_tolerance(x, y, depth, uses_flags(func, NO_NANS))
            if flagged
            else identical(x, y)
        )
        if not ok:
            raise AssertionError(
                f"{path.relative_to(ROOT)} -p '{pipeline}': @{func.sym_name.data} result #{k} "
                f"changed{' beyond the flagged bound' if flagged else ''}\n"
                f"arguments: {args!r}\nbefore: {x!r}\nafter:  {y!r}"
            )

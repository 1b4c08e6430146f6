"""convert-matrix-to-affine end to end: JIT-compiled matrix ops against NumPy.

Each test builds one module with many functions (one per op and shape) that
load their operands from column-major arrays, apply the op and store the
result, compiles it once through `mx-lower-to-llvm` and compares every result
bit for bit with a reference computed here with NumPy/ml_dtypes scalars and
exact `Fraction` arithmetic (never with mx code). `MX_LONG_TESTS=1` adds
shapes.
"""

from collections.abc import Callable, Sequence
from fractions import Fraction
from typing import Any

import ml_dtypes
import numpy as np
import pytest

from mx.jit import compile_module
from tests.reference.element_types import ELEMENT_DTYPES
from tests.sampling import LONG

PIPELINE = "mx-lower-to-llvm"
Array = np.ndarray[Any, Any]

DTYPES: dict[str, Any] = {t: dtype.type for t, dtype in ELEMENT_DTYPES.items()}
FLOATS = ("f16", "bf16", "f32", "f64")
INTS = ("i8", "i16", "i32", "i64")
SHAPES = [(1, 1), (2, 3), (4, 4), (3, 5)] + (
    [(1, 7), (8, 1), (9, 13), (16, 16)] if LONG else []
)


def _matrix(t: str, r: int, c: int) -> str:
    return f"!matrix.matrix<{r}x{c}x{t}>"


def _mem(t: str, n: int) -> str:
    return f"memref<{n}x{t}>"


def _load(name: str, arg: str, t: str, r: int, c: int) -> str:
    return (
        f"    %{name} = matrix.column_major_load %{arg}[0] : {_mem(t, r * c)} -> "
        f"{_matrix(t, r, c)}\n"
    )


def _store(name: str, out: str, t: str, r: int, c: int) -> str:
    return (
        f"    matrix.column_major_store %{name}, %{out}[0] : {_matrix(t, r, c)}, "
        f"{_mem(t, r * c)}\n"
    )


def _function(name: str, params: Sequence[str], body: str) -> str:
    return f"func.func @{name}({', '.join(params)}) {{\n{body}    return\n}}\n"


def elementwise(
    name: str, op: str, t: str, r: int, c: int, arity: int, suffix: str = ""
) -> str:
    """`out = op(a, b, ...)` on column-major arrays."""
    args = "abc"[:arity]
    params = [f"%{a}_mem: {_mem(t, r * c)}" for a in args] + [f"%out: {_mem(t, r * c)}"]
    body = "".join(_load(a, f"{a}_mem", t, r, c) for a in args)
    operands = ", ".join(f"%{a}" for a in args)
    body += f"    %res = matrix.{op} {operands}{suffix} : {_matrix(t, r, c)}\n"
    body += _store("res", "out", t, r, c)
    return _function(name, params, body)


def column_major(m: Array) -> Array:
    return np.ascontiguousarray(m.flatten(order="F"))


def from_column_major(flat: Array, r: int, c: int) -> Array:
    return flat.reshape((c, r)).T


def random_matrix(rng: np.random.Generator, t: str, r: int, c: int) -> Array:
    dtype = DTYPES[t]
    if t in INTS:
        info = np.iinfo(dtype)
        return rng.integers(info.min, info.max, size=(r, c), endpoint=True, dtype=dtype)
    values = rng.standard_normal((r, c)) * 4.0
    return values.astype(np.float32).astype(dtype)


def same_bits(actual: Array, expected: Array) -> bool:
    a = np.asarray(actual)
    e = np.asarray(expected).astype(a.dtype)
    return a.tobytes() == e.tobytes()


def round_exact(x: Fraction, t: str) -> Any:
    """`x` rounded to nearest-even in type `t` (finite, in range)."""
    dtype = DTYPES[t]
    with np.errstate(over="ignore"):
        candidate = dtype(float(x))
    if not np.isfinite(candidate):
        return candidate  # far out of range: float(x) is within one f64 ulp
    best = candidate
    for neighbour in (
        np.nextafter(candidate, dtype(np.inf))
        if t != "bf16"
        else _bf16_step(candidate, 1),
        np.nextafter(candidate, dtype(-np.inf))
        if t != "bf16"
        else _bf16_step(candidate, -1),
    ):
        d_best = abs(Fraction(float(best)) - x)
        d_new = abs(Fraction(float(neighbour)) - x)
        even = (
            int(np.array(neighbour, dtype).view(f"u{np.dtype(dtype).itemsize}")) % 2
            == 0
        )
        if d_new < d_best or (d_new == d_best and even):
            best = neighbour
    return dtype(best)


def _bf16_step(x: Any, direction: int) -> Any:
    bits = np.array(x, ml_dtypes.bfloat16).view(np.uint16).astype(np.int32)
    sign = -1 if bits & 0x8000 else 1
    if bits & 0x7FFF == 0:
        return ml_dtypes.bfloat16(direction * 2.0**-133)
    bits = bits + direction * sign
    return np.array(bits, np.uint16).view(ml_dtypes.bfloat16)[()]


# ---------------------------------------------------------------------------
# References (NumPy scalars round once per operation in their own type)
# ---------------------------------------------------------------------------


def trunc_div(a: Array, b: Array, unsigned: bool) -> Array:
    out = np.empty_like(a)
    for index in np.ndindex(a.shape):
        x, y = int(a[index]), int(b[index])
        if unsigned:
            bits = a.dtype.itemsize * 8
            x, y = x % (1 << bits), y % (1 << bits)
            q = x // y
        else:
            q = abs(x) // abs(y) * (1 if (x < 0) == (y < 0) else -1)
        out[index] = np.array(q).astype(np.uint64).astype(a.dtype)
    return out


def fma_reference(a: Array, b: Array, c: Array, t: str) -> Array:
    out = np.empty_like(a)
    for index in np.ndindex(a.shape):
        exact = Fraction(float(a[index])) * Fraction(float(b[index])) + Fraction(
            float(c[index])
        )
        out[index] = round_exact(exact, t)
    return out


def matmul_reference(
    a: Array, b: Array, t: str, contract: bool, acc: Array | None = None
) -> Array:
    """acc = a[r,0]*b[0,c]; acc = acc + a[r,k]*b[k,c] (k = 1..K-1), then + acc.

    With `contract`, each step is one FMA; f16/bf16 products run it in f32
    (every product of two such values is exact there) and round once to `t`
    at the result, the accumulator added in f32 first."""
    dtype = DTYPES[t]
    step_type = "f32" if contract and t in ("f16", "bf16") else t
    rows, depth = a.shape
    cols = b.shape[1]
    out = np.empty((rows, cols), dtype)
    with np.errstate(over="ignore"):
        for i in range(rows):
            for j in range(cols):
                if not contract:
                    s = a[i, 0] * b[0, j]
                    for k in range(1, depth):
                        s = dtype(s + dtype(a[i, k] * b[k, j]))
                    out[i, j] = s if acc is None else s + acc[i, j]
                    continue
                s = round_exact(
                    Fraction(float(a[i, 0])) * Fraction(float(b[0, j])), step_type
                )
                for k in range(1, depth):
                    s = round_exact(
                        Fraction(float(a[i, k])) * Fraction(float(b[k, j]))
                        + Fraction(float(s)),
                        step_type,
                    )
                if acc is not None:
                    s = round_exact(
                        Fraction(float(s)) + Fraction(float(acc[i, j])), step_type
                    )
                out[i, j] = round_exact(Fraction(float(s)), t)
    return out


# ---------------------------------------------------------------------------
# Tests
# ---------------------------------------------------------------------------

BINARY: dict[str, Callable[[Array, Array], Array]] = {
    "add": lambda a, b: a + b,
    "sub": lambda a, b: a - b,
    "mul": lambda a, b: a * b,
}


def _run_all(
    source: str, cases: Sequence[tuple[str, list[Array], Array, int, int]]
) -> None:
    module = compile_module(source, PIPELINE)
    failures: list[str] = []
    for name, inputs, expected, r, c in cases:
        out = np.zeros(r * c, expected.dtype)
        module[name](*(column_major(x) for x in inputs), out)
        actual = from_column_major(out, r, c)
        if not same_bits(actual, expected):
            failures.append(f"{name}:\nexpected\n{expected}\ngot\n{actual}")
    assert not failures, "\n".join(failures)


@pytest.mark.parametrize("t", list(DTYPES))
def test_elementwise(t: str) -> None:
    rng = np.random.default_rng(1)
    source = ""
    cases: list[tuple[str, list[Array], Array, int, int]] = []
    with np.errstate(all="ignore"):
        for r, c in SHAPES:
            a, b = random_matrix(rng, t, r, c), random_matrix(rng, t, r, c)
            for op, ref in BINARY.items():
                name = f"{op}_{r}x{c}"
                source += elementwise(name, op, t, r, c, 2)
                cases.append((name, [a, b], ref(a, b), r, c))
            if t in FLOATS:
                name = f"div_{r}x{c}"
                source += elementwise(name, "div", t, r, c, 2)
                cases.append((name, [a, b], a / b, r, c))
                name = f"neg_{r}x{c}"
                source += elementwise(name, "neg", t, r, c, 1)
                cases.append((name, [a], -a, r, c))
                name = f"fma_{r}x{c}"
                z = random_matrix(rng, t, r, c)
                source += elementwise(name, "fma", t, r, c, 3)
                cases.append((name, [a, b, z], fma_reference(a, b, z, t), r, c))
            else:
                divisor = np.where((b == 0) | (b == -1), 3, b).astype(b.dtype)
                name = f"div_{r}x{c}"
                source += elementwise(name, "div", t, r, c, 2)
                cases.append((name, [a, divisor], trunc_div(a, divisor, False), r, c))
                name = f"udiv_{r}x{c}"
                source += elementwise(name, "div", t, r, c, 2, " {unsigned}")
                cases.append((name, [a, divisor], trunc_div(a, divisor, True), r, c))
    _run_all(source, cases)


@pytest.mark.parametrize("t", list(DTYPES))
def test_matmul(t: str) -> None:
    rng = np.random.default_rng(2)
    source = ""
    cases: list[tuple[str, list[Array], Array, int, int]] = []
    shapes = [(1, 1, 1), (2, 3, 4), (4, 4, 4), (3, 5, 2)]
    flags = ["", " fastmath<contract>"] if t in FLOATS else [""]
    for m, k, n in shapes:
        a, b = random_matrix(rng, t, m, k), random_matrix(rng, t, k, n)
        acc = random_matrix(rng, t, m, n)
        for flag in flags:
            contract = bool(flag)
            tag = f"{m}x{k}x{n}{'_c' if contract else ''}"
            ma, mb, mc = _matrix(t, m, k), _matrix(t, k, n), _matrix(t, m, n)
            params = [
                f"%a_mem: {_mem(t, m * k)}",
                f"%b_mem: {_mem(t, k * n)}",
                f"%out: {_mem(t, m * n)}",
            ]
            body = _load("a", "a_mem", t, m, k) + _load("b", "b_mem", t, k, n)
            body += f"    %res = matrix.matmul %a, %b{flag} : {ma}, {mb} -> {mc}\n"
            source += _function(
                f"matmul_{tag}", params, body + _store("res", "out", t, m, n)
            )
            cases.append(
                (f"matmul_{tag}", [a, b], matmul_reference(a, b, t, contract), m, n)
            )
            params.insert(2, f"%c_mem: {_mem(t, m * n)}")
            body = body.replace(
                f"    %res = matrix.matmul %a, %b{flag} : {ma}, {mb} -> {mc}\n", ""
            ) + _load("c", "c_mem", t, m, n)
            body += (
                f"    %res = matrix.matmul_add %a, %b, %c{flag} : {ma}, {mb}, {mc}"
                f" -> {mc}\n"
            )
            source += _function(
                f"matmul_add_{tag}", params, body + _store("res", "out", t, m, n)
            )
            cases.append(
                (
                    f"matmul_add_{tag}",
                    [a, b, acc],
                    matmul_reference(a, b, t, contract, acc),
                    m,
                    n,
                )
            )
    with np.errstate(all="ignore"):
        _run_all(source, cases)


def _cast_reference(a: Array, source: str, target: str, unsigned: bool) -> Array:
    dtype = DTYPES[target]
    out = np.empty(a.shape, dtype)
    for index in np.ndindex(a.shape):
        x = a[index]
        if source in INTS:
            value = int(x)
            if unsigned:
                value %= 1 << (np.dtype(DTYPES[source]).itemsize * 8)
            if target in INTS:
                bits = np.dtype(dtype).itemsize * 8
                out[index] = np.array(value % (1 << bits), np.uint64).astype(dtype)
            else:
                out[index] = round_exact(Fraction(value), target)
        elif target in INTS:
            out[index] = dtype(int(float(x)))  # C truncates toward zero
        else:
            out[index] = round_exact(Fraction(float(x)), target)
    return out


def _cast_input(
    rng: np.random.Generator, source: str, target: str, r: int, c: int
) -> Array:
    """Values the conversion is defined on (in range of `target`)."""
    if source in INTS:
        return random_matrix(rng, source, r, c)
    values = rng.standard_normal((r, c)) * 50.0
    if target in INTS:
        limit = min(float(np.iinfo(DTYPES[target]).max), 60000.0)
        values = np.clip(values, -limit, limit)
    return values.astype(DTYPES[source])


@pytest.mark.parametrize("source", list(DTYPES))
def test_cast(source: str) -> None:
    rng = np.random.default_rng(3)
    r, c = 3, 4
    text = ""
    cases: list[tuple[str, list[Array], Array, int, int]] = []
    for target in DTYPES:
        if target == source:
            continue
        flags = ["", " {unsigned}"] if source in INTS or target in INTS else [""]
        for flag in flags:
            unsigned = bool(flag)
            if unsigned and source not in INTS:
                continue  # fptoui: in-range negative inputs are undefined
            name = f"cast_{target}{'_u' if unsigned else ''}"
            a = _cast_input(rng, source, target, r, c)
            params = [f"%a_mem: {_mem(source, r * c)}", f"%out: {_mem(target, r * c)}"]
            body = _load("a", "a_mem", source, r, c)
            body += (
                f"    %res = matrix.cast %a{flag} : {_matrix(source, r, c)} to "
                f"{_matrix(target, r, c)}\n"
            )
            text += _function(name, params, body + _store("res", "out", target, r, c))
            cases.append(
                (name, [a], _cast_reference(a, source, target, unsigned), r, c)
            )
    _run_all(text, cases)


@pytest.mark.parametrize("t", [*DTYPES, "i4", "i6"])
def test_transpose_extract_insert(t: str) -> None:
    """transpose, extract and insert (static and dynamic positions), also on
    the sub-byte containers (whose negative inputs have their bytes' high bits
    set: loads ignore them, stores write them as zero)."""
    rng = np.random.default_rng(4)
    numpy_t = {"i4": "i8", "i6": "i8"}.get(t, t)
    bits = {"i4": 4, "i6": 6}.get(t)

    def stored(m: Array) -> Array:
        return m & ((1 << bits) - 1) if bits is not None else m

    text = ""
    cases: list[tuple[str, list[Array], Array, int, int]] = []
    for r, c in SHAPES:
        a = random_matrix(rng, numpy_t, r, c)
        if t in ("i4", "i6"):
            bits = int(t[1:])
            a = (a.astype(np.int64) % (1 << bits) - (1 << (bits - 1))).astype(np.int8)
        params = [f"%a_mem: {_mem(t, r * c)}", f"%out: {_mem(t, r * c)}"]
        body = _load("a", "a_mem", t, r, c)
        body += f"    %res = matrix.transpose %a : {_matrix(t, r, c)} -> {_matrix(t, c, r)}\n"
        text += _function(
            f"transpose_{r}x{c}", params, body + _store("res", "out", t, c, r)
        )
        cases.append((f"transpose_{r}x{c}", [a], stored(a.T), c, r))
        # Move element (r-1, 0) to (0, c-1), one index static, one dynamic.
        body = _load("a", "a_mem", t, r, c)
        body += f"    %i = arith.constant {r - 1} : index\n"
        body += f"    %e = matrix.extract %a[%i, 0] : {_matrix(t, r, c)}\n"
        body += f"    %j = arith.constant {c - 1} : index\n"
        body += f"    %res = matrix.insert %e, %a[0, %j] : {_matrix(t, r, c)}\n"
        text += _function(f"move_{r}x{c}", params, body + _store("res", "out", t, r, c))
        expected = a.copy()
        expected[0, c - 1] = a[r - 1, 0]
        cases.append((f"move_{r}x{c}", [a], stored(expected), r, c))
    _run_all(text, cases)


@pytest.mark.parametrize("t", ["f32", "bf16", "i16"])
def test_strided_loads_and_stores(t: str) -> None:
    """Offsets, strides and both layouts; only the addressed elements are
    written (the padding keeps its sentinel)."""
    rng = np.random.default_rng(5)
    dtype = DTYPES[t]
    layouts = [
        ("column_major", "column_major", 1, 5, 2, 7),
        ("row_major", "column_major", 3, 6, 0, 4),
        ("column_major", "row_major", 0, 3, 5, 9),
        ("row_major", "row_major", 2, 4, 1, 4),
    ]
    module_text = ""
    r, c = 3, 4
    for n, (load, store, load_off, load_stride, store_off, store_stride) in enumerate(
        layouts
    ):
        for dynamic in (False, True):
            name = f"copy{n}{'_dyn' if dynamic else ''}"
            params = ["%src: memref<64x" + t + ">", "%dst: memref<64x" + t + ">"]
            body = ""
            if dynamic:
                params += ["%lo: index", "%ls: index", "%so: index", "%ss: index"]
                lo, ls, so, ss = "%lo", "%ls", "%so", "%ss"
            else:
                lo, ls, so, ss = load_off, load_stride, store_off, store_stride
            body += (
                f"    %m = matrix.{load}_load %src[{lo}] stride {ls} : memref<64x{t}> -> "
                f"{_matrix(t, r, c)}\n"
            )
            body += (
                f"    %n = matrix.neg %m : {_matrix(t, r, c)}\n"
                if t != "i16"
                else (f"    %n = matrix.add %m, %m : {_matrix(t, r, c)}\n")
            )
            body += (
                f"    matrix.{store}_store %n, %dst[{so}] stride {ss} : "
                f"{_matrix(t, r, c)}, memref<64x{t}>\n"
            )
            module_text += _function(name, params, body)
    module = compile_module(module_text, PIPELINE)
    for n, (load, store, load_off, load_stride, store_off, store_stride) in enumerate(
        layouts
    ):
        src = random_matrix(rng, t, 1, 64).reshape(64)
        m = np.empty((r, c), dtype)
        for i in range(r):
            for j in range(c):
                p = (
                    j * load_stride + i
                    if load == "column_major"
                    else i * load_stride + j
                )
                m[i, j] = src[load_off + p]
        with np.errstate(over="ignore"):
            result = -m if t != "i16" else m + m
        expected = np.full(64, 7, dtype)
        for i in range(r):
            for j in range(c):
                p = (
                    j * store_stride + i
                    if store == "column_major"
                    else i * store_stride + j
                )
                expected[store_off + p] = result[i, j]
        for dynamic in (False, True):
            dst = np.full(64, 7, dtype)
            extra = [load_off, load_stride, store_off, store_stride] if dynamic else []
            module[f"copy{n}{'_dyn' if dynamic else ''}"](src, dst, *extra)
            assert same_bits(dst, expected), (n, dynamic, dst, expected)


def test_vectors_splats_and_constants() -> None:
    """matvec (with and without bias), outer_product, scalar splats, constants."""
    t = "f32"
    rng = np.random.default_rng(6)
    m = random_matrix(rng, t, 3, 4)
    x = random_matrix(rng, t, 1, 4).reshape(4)
    bias = random_matrix(rng, t, 1, 3).reshape(3)
    source = f"""
func.func @matvec(%m_mem: memref<12xf32>, %x: vector<4xf32>) -> vector<3xf32> {{
{_load("m", "m_mem", t, 3, 4)}    %y = matrix.matvec %m, %x : {_matrix(t, 3, 4)}, vector<4xf32> -> vector<3xf32>
    return %y : vector<3xf32>
}}
func.func @matvec_bias(%m_mem: memref<12xf32>, %x: vector<4xf32>, %b: vector<3xf32>) -> vector<3xf32> {{
{_load("m", "m_mem", t, 3, 4)}    %y = matrix.matvec %m, %x, %b : {_matrix(t, 3, 4)}, vector<4xf32>, vector<3xf32> -> vector<3xf32>
    return %y : vector<3xf32>
}}
func.func @outer(%u: vector<3xf32>, %v: vector<4xf32>, %out: memref<12xf32>) {{
    %m = matrix.outer_product %u, %v : vector<3xf32>, vector<4xf32> -> {_matrix(t, 3, 4)}
{_store("m", "out", t, 3, 4)}    return
}}
func.func @scaled(%m_mem: memref<12xf32>, %s: f32, %out: memref<12xf32>) {{
{_load("m", "m_mem", t, 3, 4)}    %k = matrix.splat %s : {_matrix(t, 3, 4)}
    %d = matrix.div %m, %k : {_matrix(t, 3, 4)}
    %e = matrix.sub %k, %d : {_matrix(t, 3, 4)}
{_store("e", "out", t, 3, 4)}    return
}}
func.func @constant(%out: memref<6xf32>) {{
    %k = matrix.constant dense<[[1.0, 2.0, 3.0], [4.0, 5.0, -0.0]]> : {_matrix(t, 2, 3)}
    %z = matrix.constant dense<0.5> : {_matrix(t, 2, 3)}
    %s = matrix.add %k, %z : {_matrix(t, 2, 3)}
{_store("s", "out", t, 2, 3)}    return
}}
"""
    module = compile_module(source, PIPELINE)
    expected_y = np.array(
        [
            matmul_reference(m[i : i + 1], x.reshape(4, 1), t, False)[0, 0]
            for i in range(3)
        ]
    )
    assert same_bits(module.matvec(column_major(m), x), expected_y)
    assert same_bits(module.matvec_bias(column_major(m), x, bias), expected_y + bias)
    out = np.zeros(12, np.float32)
    module.outer(bias, x, out)
    assert same_bits(from_column_major(out, 3, 4), np.outer(bias, x))
    s = np.float32(1.5)
    module.scaled(column_major(m), s, out)
    assert same_bits(from_column_major(out, 3, 4), s - m / s)
    out6 = np.zeros(6, np.float32)
    module.constant(out6)
    expected_k = np.array([[1.0, 2.0, 3.0], [4.0, 5.0, -0.0]], np.float32) + np.float32(
        0.5
    )
    assert same_bits(from_column_major(out6, 2, 3), expected_k)


def test_functions_and_control_flow() -> None:
    """Matrix function arguments/results, func.call, scf.for iter_args,
    scf.if and scf.while results (including a swap through iter_args)."""
    t = "f32"
    mt = _matrix(t, 2, 2)
    source = f"""
func.func @twice(%a: {mt}) -> ({mt}, f32) {{
    %s = matrix.add %a, %a : {mt}
    %e = matrix.extract %a[0, 1] : {mt}
    return %s, %e : {mt}, f32
}}
func.func @calls(%a_mem: memref<4xf32>, %out: memref<4xf32>) -> f32 {{
{_load("a", "a_mem", t, 2, 2)}    %r, %e = func.call @twice(%a) : ({mt}) -> ({mt}, f32)
    %t = matrix.transpose %r : {mt} -> {mt}
{_store("t", "out", t, 2, 2)}    return %e : f32
}}
func.func @loop(%a_mem: memref<4xf32>, %b_mem: memref<4xf32>, %n: index, %out: memref<4xf32>) {{
{_load("a", "a_mem", t, 2, 2)}{_load("b", "b_mem", t, 2, 2)}    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %x, %y = scf.for %i = %c0 to %n step %c1 iter_args(%p = %a, %q = %b) -> ({mt}, {mt}) {{
      %s = matrix.matmul %p, %q : {mt}, {mt} -> {mt}
      %tq = matrix.transpose %q : {mt} -> {mt}
      scf.yield %tq, %s : {mt}, {mt}
    }}
    %r = matrix.sub %x, %y : {mt}
{_store("r", "out", t, 2, 2)}    return
}}
func.func @branch(%a_mem: memref<4xf32>, %flag: i1, %out: memref<4xf32>) {{
{_load("a", "a_mem", t, 2, 2)}    %r = scf.if %flag -> ({mt}) {{
      %n = matrix.neg %a : {mt}
      scf.yield %n : {mt}
    }} else {{
      %tr = matrix.transpose %a : {mt} -> {mt}
      scf.yield %tr : {mt}
    }}
{_store("r", "out", t, 2, 2)}    return
}}
func.func @halve_until(%a_mem: memref<4xf32>, %limit: f32, %out: memref<4xf32>) {{
{_load("a", "a_mem", t, 2, 2)}    %r = scf.while (%m = %a) : ({mt}) -> {mt} {{
      %e = matrix.extract %m[0, 0] : {mt}
      %go = arith.cmpf ogt, %e, %limit : f32
      scf.condition(%go) %m : {mt}
    }} do {{
    ^bb0(%m2: {mt}):
      %h = arith.constant 0.5 : f32
      %k = matrix.splat %h : {mt}
      %n = matrix.mul %m2, %k : {mt}
      scf.yield %n : {mt}
    }}
{_store("r", "out", t, 2, 2)}    return
}}
"""
    module = compile_module(source, PIPELINE)
    a = np.array([[1.0, 2.0], [3.0, 4.0]], np.float32)
    b = np.array([[0.5, -1.0], [2.0, 0.25]], np.float32)
    out = np.zeros(4, np.float32)
    assert module.calls(column_major(a), out) == np.float32(2.0)
    assert same_bits(from_column_major(out, 2, 2), (a + a).T)
    for n in range(4):
        p, q = a, b
        for _ in range(n):
            p, q = q.T, matmul_reference(p, q, t, False)
        module.loop(column_major(a), column_major(b), n, out)
        assert same_bits(from_column_major(out, 2, 2), p - q), n
    for flag in (True, False):
        module.branch(column_major(a), flag, out)
        assert same_bits(from_column_major(out, 2, 2), -a if flag else a.T)
    module.halve_until(column_major(a), np.float32(0.1), out)
    assert same_bits(from_column_major(out, 2, 2), a / 16)

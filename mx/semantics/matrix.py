"""Reference numerics of the `matrix` dialect (docs/matrix-dialect.md) on NumPy arrays.

A matrix is a 2-D NumPy array whose dtype is its element type: `np.float16`,
`ml_dtypes.bfloat16`, `np.float32`, `np.float64`, `np.int8` ... `np.int64`
(signless integers are held in the signed dtype; `unsigned` flags reinterpret
them), and `np.uint8` holding the low bits for the `i4`/`i6` containers. A
vector is a 1-D array. Every function returns a new array (nothing mutates a
matrix) except `store`, which writes into its memory argument.

Each rounding step rounds to the element type, as docs/matrix-dialect.md requires. These
functions are the *strict* semantics: `fastmath` flags (`contract`, `reassoc`)
allow compiled code to round differently, so compiled results are compared
with these within a bound; the reference itself always uses the strict order.

Undefined behaviour (integer division by zero or INT_MIN / -1, float -> int of
NaN or out of range, an index, offset or stride out of range) raises
`UndefinedBehaviorError` instead of producing a value. The interpreter and the
constant folders both use these functions.
"""

from __future__ import annotations

from collections.abc import Sequence
from fractions import Fraction
from typing import Any

import numpy as np
import numpy.typing as npt
from xdsl.dialects.builtin import (
    BFloat16Type,
    Float16Type,
    Float32Type,
    Float64Type,
    IntegerType,
)
from xdsl.ir import Attribute, Operation

from mx.semantics.bfloat16 import bf16_dtype, is_bf16
from mx.semantics.nan_bits import nan_bits

Array = npt.NDArray[Any]


class UndefinedBehaviorError(Exception):
    """The program has undefined behaviour here; the reference gives no value.

    `op` is set by the interpreter to the operation that hit it (None when the
    functions are called directly).
    """

    def __init__(self, message: str, op: Operation | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.op = op


# ---------------------------------------------------------------------------
# Element types
# ---------------------------------------------------------------------------


def element_dtype(element_type: Attribute) -> np.dtype[Any]:
    """The NumPy dtype holding elements of a matrix element type."""
    match element_type:
        case Float16Type():
            return np.dtype(np.float16)
        case BFloat16Type():
            return bf16_dtype()
        case Float32Type():
            return np.dtype(np.float32)
        case Float64Type():
            return np.dtype(np.float64)
        case IntegerType() if element_type.width.data in (4, 6):
            return np.dtype(np.uint8)
        case IntegerType() if element_type.width.data in (8, 16, 32, 64):
            return np.dtype(f"int{element_type.width.data}")
        case _:
            raise ValueError(f"no NumPy dtype for element type '{element_type}'")


def container_bits(element_type: Attribute) -> int | None:
    """4 or 6 for the `i4`/`i6` bit containers, None for arithmetic types."""
    if isinstance(element_type, IntegerType) and element_type.width.data in (4, 6):
        return element_type.width.data
    return None


def is_float_dtype(dtype: npt.DTypeLike) -> bool:
    dtype = np.dtype(dtype)
    return is_bf16(dtype) or np.issubdtype(dtype, np.floating)


def _unsigned_dtype(dtype: np.dtype[Any]) -> np.dtype[Any]:
    return np.dtype(f"uint{dtype.itemsize * 8}")


def _float_format(dtype: np.dtype[Any]) -> tuple[int, int, int]:
    """(precision incl. the implicit bit, emin, emax) of a float dtype."""
    if is_bf16(dtype):
        import ml_dtypes  # loaded already: `dtype` is one of its types

        info = ml_dtypes.finfo(dtype)
    else:
        info = np.finfo(dtype)
    return int(info.nmant) + 1, int(info.minexp), int(info.maxexp) - 1


def scalar(value: int | float, dtype: npt.DTypeLike) -> Any:
    """`value` as a NumPy scalar of `dtype`; integers wrap (two's complement).

    Floats must already be representable in `dtype` (values of that type)."""
    dtype = np.dtype(dtype)
    if is_float_dtype(dtype):
        if value != value and dtype.itemsize < 8:
            # Exactly (a conversion would quiet a signalling NaN).
            precision, _, _ = _float_format(dtype)
            bits = nan_bits(float(value), precision - 1, dtype.itemsize * 8)
            return np.array(bits, dtype=_unsigned_dtype(dtype)).view(dtype)[()]
        return np.array(value, dtype=np.float64).astype(dtype)[()]
    bits = dtype.itemsize * 8
    wrapped = int(value) % (1 << bits)
    return np.array(wrapped, dtype=_unsigned_dtype(dtype)).view(dtype)[()]


# ---------------------------------------------------------------------------
# Correct rounding
# ---------------------------------------------------------------------------


def round_rational(value: Fraction, dtype: npt.DTypeLike) -> float:
    """`value` rounded to nearest-even in float `dtype` (overflow gives inf).

    Returned as a Python float, which holds every value of the supported types
    exactly. Exact rational arithmetic: one rounding, whatever the magnitude."""
    precision, emin, emax = _float_format(np.dtype(dtype))
    if value == 0:
        return 0.0
    negative = value < 0
    magnitude = -value if negative else value
    n, d = magnitude.numerator, magnitude.denominator
    exponent = n.bit_length() - d.bit_length()
    if Fraction(2) ** exponent > magnitude:
        exponent -= 1
    quantum_exponent = max(exponent, emin) - precision + 1
    scaled = magnitude / Fraction(2) ** quantum_exponent
    significand, remainder = divmod(scaled.numerator, scaled.denominator)
    twice = 2 * remainder
    if twice > scaled.denominator or (
        twice == scaled.denominator and significand % 2 == 1
    ):
        significand += 1
    rounded = Fraction(significand) * Fraction(2) ** quantum_exponent
    result = float("inf") if rounded >= Fraction(2) ** (emax + 1) else float(rounded)
    return -result if negative else result


def _round_to_odd_f32(x: npt.NDArray[np.float64]) -> npt.NDArray[np.float32]:
    """f64 -> f32 rounding to odd: exact values stay, others take the neighbour
    with an odd last bit, so one more rounding to a narrower type (bf16) is
    correct (24 >= 8 + 2 bits)."""
    with np.errstate(over="ignore", invalid="ignore"):
        nearest = x.astype(np.float32)
        inexact = np.isfinite(x) & (nearest.astype(np.float64) != x)
        even = (nearest.view(np.uint32) & 1) == 0
        other = np.nextafter(
            nearest, np.where(x > nearest, np.float32(np.inf), np.float32(-np.inf))
        )
    return np.where(inexact & even, other, nearest)


def round_f64(x: npt.NDArray[np.float64], dtype: npt.DTypeLike) -> Array:
    """Round float64 values once to float `dtype` (nearest-even).

    NumPy rounds f64 -> f32/f16 directly; ml_dtypes rounds f64 -> bf16 through
    f32 (double rounding), so bf16 goes through a round-to-odd f32."""
    dtype = np.dtype(dtype)
    with np.errstate(over="ignore", invalid="ignore"):
        if is_bf16(dtype):
            return _round_to_odd_f32(x).astype(dtype)
        return x.astype(dtype)


def _round_to_odd_f64(high: Array, low: Array) -> npt.NDArray[np.float64]:
    """high + low (high = fl(high + low), exact error low) rounded to odd in f64."""
    inexact = np.isfinite(high) & (low != 0)
    even = (high.view(np.uint64) & 1) == 0
    with np.errstate(invalid="ignore"):
        other = np.nextafter(high, np.where(low > 0, np.inf, -np.inf))
    return np.where(inexact & even, other, high)


# ---------------------------------------------------------------------------
# Elementwise arithmetic
# ---------------------------------------------------------------------------


def _same_dtype(*arrays: Array) -> np.dtype[Any]:
    dtype = arrays[0].dtype
    for a in arrays[1:]:
        if a.dtype != dtype:
            raise TypeError(f"operand dtypes differ: {dtype} and {a.dtype}")
    return dtype


def add(a: Array, b: Array) -> Array:
    """Elementwise a + b, rounded to the element type; integers wrap."""
    _same_dtype(a, b)
    with np.errstate(all="ignore"):
        return a + b


def sub(a: Array, b: Array) -> Array:
    """Elementwise a - b, rounded to the element type; integers wrap."""
    _same_dtype(a, b)
    with np.errstate(all="ignore"):
        return a - b


def mul(a: Array, b: Array) -> Array:
    """Elementwise (Hadamard) product, rounded to the element type; integers wrap."""
    _same_dtype(a, b)
    with np.errstate(all="ignore"):
        return a * b


def div(a: Array, b: Array, *, unsigned: bool = False) -> Array:
    """Elementwise quotient. Floats: IEEE division. Integers: C division,
    truncating toward zero (signed) or on the unsigned reinterpretation;
    division by zero and INT_MIN / -1 are undefined behaviour."""
    dtype = _same_dtype(a, b)
    if is_float_dtype(dtype):
        with np.errstate(all="ignore"):
            return a / b
    if np.any(b == 0):
        raise UndefinedBehaviorError("integer division by zero")
    if unsigned:
        u = _unsigned_dtype(dtype)
        return (a.view(u) // b.view(u)).view(dtype)
    int_min = np.iinfo(dtype).min
    if np.any((a == int_min) & (b == -1)):
        raise UndefinedBehaviorError(
            f"signed integer division overflow ({int_min} / -1)"
        )
    # NumPy floors; C truncates toward zero, one more for inexact negatives.
    round_up = (a % b != 0) & ((a < 0) != (b < 0))
    return (a // b + round_up.astype(dtype)).astype(dtype)


def neg(a: Array) -> Array:
    """Elementwise negation (exact; flips the sign of zeros and NaNs)."""
    return -a


def fma(a: Array, b: Array, c: Array) -> Array:
    """Elementwise a*b + c with a single rounding to the (float) element type."""
    dtype = _same_dtype(a, b, c)
    if not is_float_dtype(dtype):
        raise TypeError("fma is defined on float elements only")
    if dtype == np.float64:
        return _fma_exact(a, b, c)
    # For f16/bf16/f32 the product is exact in f64 and TwoSum gives the exact
    # error of the sum, so rounding to odd in f64 then once to the element type
    # is correct (53 >= 24 + 2 bits).
    x, y, z = (v.astype(np.float64) for v in (a, b, c))
    with np.errstate(all="ignore"):
        p = x * y
        s = p + z
        bv = s - p
        err = (p - (s - bv)) + (z - bv)
    return round_f64(_round_to_odd_f64(s, err), dtype)


def _fma_exact(a: Array, b: Array, c: Array) -> Array:
    dtype = a.dtype
    out = np.empty(a.shape, dtype=dtype)
    for index in np.ndindex(a.shape):
        x, y, z = float(a[index]), float(b[index]), float(c[index])
        if not all(np.isfinite(v) for v in (x, y, z)):
            out[index] = x * y + z  # inf/NaN results do not depend on rounding
            continue
        exact = Fraction(x) * Fraction(y) + Fraction(z)
        # An exact zero takes IEEE's sign rule, which f64 arithmetic applies.
        out[index] = x * y + z if exact == 0 else round_rational(exact, dtype)
    return out


# ---------------------------------------------------------------------------
# Products
# ---------------------------------------------------------------------------


def widen(a: Array, dtype: npt.DTypeLike, *, unsigned: bool = False) -> Array:
    """A factor of a mixed-precision contraction widened exactly to the
    result's `dtype`: integers sign-extended (zero-extended if `unsigned`),
    floats converted (every value of the narrower format is one of `dtype`)."""
    target = np.dtype(dtype)
    if a.dtype == target:
        return a
    if is_float_dtype(a.dtype) != is_float_dtype(target) or (
        a.dtype.itemsize >= target.itemsize
    ):
        raise TypeError(f"{a.dtype} does not widen exactly to {target}")
    return cast(a, target, unsigned=unsigned)


def matmul(a: Array, b: Array) -> Array:
    """Matrix product in docs/matrix-dialect.md's order: acc = A[r][0]*B[0][c], then
    acc = acc + A[r][k]*B[k][c] for k = 1..K-1, each step rounded."""
    _same_dtype(a, b)
    if a.ndim != 2 or b.ndim != 2 or a.shape[1] != b.shape[0]:
        raise ValueError(f"matmul of shapes {a.shape} and {b.shape}")
    with np.errstate(all="ignore"):
        acc = a[:, 0:1] * b[0:1, :]
        for k in range(1, a.shape[1]):
            acc = acc + a[:, k : k + 1] * b[k : k + 1, :]
    return acc


def matmul_add(a: Array, b: Array, c: Array) -> Array:
    """matmul(a, b) + c, rounded as add(matmul(a, b), c)."""
    return add(matmul(a, b), c)


def matvec(m: Array, x: Array, bias: Array | None = None) -> Array:
    """m·x with x as a one-column matrix (matmul's order), plus an optional bias."""
    y = matmul(m, x.reshape(-1, 1)).reshape(-1)
    return y if bias is None else add(y, bias)


def outer_product(u: Array, v: Array) -> Array:
    """m[r][c] = u[r] * v[c], rounded to the element type."""
    return mul(u.reshape(-1, 1), v.reshape(1, -1))


def transpose(a: Array) -> Array:
    return a.T.copy()


# ---------------------------------------------------------------------------
# Conversion
# ---------------------------------------------------------------------------


def cast(a: Array, dtype: npt.DTypeLike, *, unsigned: bool = False) -> Array:
    """Elementwise C conversion to `dtype`.

    `unsigned` makes integer sources zero-extended / unsigned and integer
    targets unsigned (the result keeps the signless bits). int -> int wraps;
    int -> float and float -> float round to nearest-even once; float -> int
    truncates toward zero, and NaN or a value out of the target's range is
    undefined behaviour."""
    target = np.dtype(dtype)
    source = a.dtype
    if not is_float_dtype(source):
        ints = a.view(_unsigned_dtype(source)) if unsigned else a
        if not is_float_dtype(target):
            return ints.astype(target)  # modular (two's complement)
        return _int_to_float(ints, target)
    if is_float_dtype(target):
        if target == np.float64 or source.itemsize < 4 <= target.itemsize:
            return a.astype(target)  # exact widening
        return round_f64(a.astype(np.float64), target)
    return _float_to_int(a, target, unsigned)


def _int_to_float(ints: Array, target: np.dtype[Any]) -> Array:
    exact_in_f64 = np.abs(ints.astype(np.float64)) <= 2.0**53
    if np.all(exact_in_f64):
        return round_f64(ints.astype(np.float64), target)
    out = np.empty(ints.shape, dtype=target)
    for index in np.ndindex(ints.shape):
        out[index] = round_rational(Fraction(int(ints[index])), target)
    return out


def _float_to_int(a: Array, target: np.dtype[Any], unsigned: bool) -> Array:
    bits = target.itemsize * 8
    low, high = (0, 2**bits) if unsigned else (-(2 ** (bits - 1)), 2 ** (bits - 1))
    x = np.trunc(a.astype(np.float64))
    bad = np.isnan(x) | (x < low) | (x >= high)
    if np.any(bad):
        value = float(a[np.nonzero(bad)][0])
        kind = "unsigned " if unsigned else ""
        raise UndefinedBehaviorError(
            f"conversion of {value} to a {bits}-bit {kind}integer is out of range"
        )
    as_unsigned = x.astype(_unsigned_dtype(target)) if unsigned else x.astype(target)
    return as_unsigned.view(target) if unsigned else as_unsigned


# ---------------------------------------------------------------------------
# Construction and element access
# ---------------------------------------------------------------------------


def splat(value: int | float, shape: tuple[int, int], dtype: npt.DTypeLike) -> Array:
    """A matrix of `shape` with every element equal to `value`."""
    return np.full(shape, scalar(value, dtype), dtype=dtype)


def constant(
    row_major: Sequence[int | float],
    shape: tuple[int, int],
    dtype: npt.DTypeLike,
    bits: int | None = None,
) -> Array:
    """A matrix from its elements listed row by row (0 first).

    For an `i4`/`i6` container (`bits`), only the low bits are kept."""
    dtype = np.dtype(dtype)
    values = [scalar(v, dtype) for v in row_major]
    m = np.array(values, dtype=dtype).reshape(shape)
    return m & ((1 << bits) - 1) if bits is not None else m


def row_major_values(m: Array, bits: int | None = None) -> list[int | float]:
    """A matrix's elements row by row as Python numbers (`constant`'s inverse).

    Container elements (`bits`) are returned sign-extended, as xDSL's
    IntegerAttr normalizes them."""
    if is_float_dtype(m.dtype):
        return [float(v) for v in m.reshape(-1)]
    ints = [int(v) for v in m.reshape(-1)]
    if bits is not None:
        sign = 1 << (bits - 1)
        ints = [(v & (2 * sign - 1)) - ((v & sign) << 1) for v in ints]
    return list[int | float](ints)


def _check_index(what: str, index: int, bound: int) -> None:
    if not 0 <= index < bound:
        raise UndefinedBehaviorError(f"{what} {index} is outside [0, {bound})")


def extract(m: Array, row: int, col: int) -> Any:
    """The element at (row, col) as a NumPy scalar; out of range is UB."""
    _check_index("row index", row, m.shape[0])
    _check_index("column index", col, m.shape[1])
    return m[row, col]


def insert(m: Array, value: int | float, row: int, col: int) -> Array:
    """A copy of m with (row, col) set to value; out of range is UB."""
    _check_index("row index", row, m.shape[0])
    _check_index("column index", col, m.shape[1])
    out = m.copy()
    out[row, col] = scalar(value, m.dtype)
    return out


# ---------------------------------------------------------------------------
# Loads and stores
# ---------------------------------------------------------------------------


def _positions(
    memory_size: int,
    shape: tuple[int, int],
    offset: int,
    stride: int,
    column_major: bool,
) -> npt.NDArray[np.int64]:
    """The memory index of every element (r, c), checking the access is defined."""
    rows, cols = shape
    leading = rows if column_major else cols
    if offset < 0:
        raise UndefinedBehaviorError(f"offset {offset} is negative")
    if stride < leading:
        what = "rows" if column_major else "columns"
        raise UndefinedBehaviorError(
            f"stride {stride} is less than the number of {what} ({leading})"
        )
    # The largest position, in Python integers: offsets and strides near 2^63
    # must not wrap around in int64 arithmetic and pass the check.
    last = offset + (
        (cols - 1) * stride + rows - 1
        if column_major
        else (rows - 1) * stride + cols - 1
    )
    if last >= memory_size:
        raise UndefinedBehaviorError(
            f"access past the end of the memory: element at index {last}, "
            f"but it has {memory_size} elements"
        )
    r = np.arange(rows, dtype=np.int64).reshape(-1, 1)
    c = np.arange(cols, dtype=np.int64).reshape(1, -1)
    return offset + (c * stride + r if column_major else r * stride + c)


def _stream_bits(
    memory: Array,
    shape: tuple[int, int],
    offset: int,
    stride: int,
    column_major: bool,
    bits: int,
) -> npt.NDArray[np.int64]:
    """Packed storage: the bit-stream positions of the `bits` bits of every
    element (r, c), least significant first (shape R x C x bits)."""
    elements = 8 * memory.size // bits  # elements that end inside the memory
    positions = _positions(elements, shape, offset, stride, column_major)
    return positions[..., np.newaxis] * bits + np.arange(bits)


def load(
    memory: Array,
    shape: tuple[int, int],
    offset: int,
    stride: int,
    *,
    column_major: bool,
    bits: int | None = None,
    packed: bool = False,
) -> Array:
    """Gather a matrix from a 1-D array: element (r, c) at
    `offset + c*stride + r` (column-major) or `offset + r*stride + c`.
    For an `i4`/`i6` container (`bits`) the high bits of each byte are ignored;
    `packed`: `memory` is bytes read as a little-endian bit stream in which
    element n takes bits [bits*n, bits*n + bits)."""
    if packed:
        assert bits is not None
        stream = np.unpackbits(memory.view(np.uint8), bitorder="little")
        at = _stream_bits(memory, shape, offset, stride, column_major, bits)
        weights = np.left_shift(1, np.arange(bits))
        return (stream[at] * weights).sum(axis=-1).astype(np.uint8)
    m = memory[_positions(memory.size, shape, offset, stride, column_major)]
    return m & ((1 << bits) - 1) if bits is not None else m


def store(
    m: Array,
    memory: Array,
    offset: int,
    stride: int,
    *,
    column_major: bool,
    bits: int | None = None,
    packed: bool = False,
) -> None:
    """Write the R*C addressed elements of `memory` (in place); the padding
    between columns/rows is untouched. Containers are written zero-extended;
    `packed` (see `load`) writes only the elements' bits of the stream."""
    if packed:
        assert bits is not None
        stream = np.unpackbits(memory.view(np.uint8), bitorder="little")
        at = _stream_bits(memory, m.shape, offset, stride, column_major, bits)
        stream[at] = (m[..., np.newaxis] >> np.arange(bits)) & 1
        memory.view(np.uint8)[:] = np.packbits(stream, bitorder="little")
        return
    positions = _positions(memory.size, m.shape, offset, stride, column_major)
    memory[positions] = m & ((1 << bits) - 1) if bits is not None else m

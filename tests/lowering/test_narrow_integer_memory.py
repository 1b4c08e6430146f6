"""The memory rule of the `i4`/`i6` containers through the JIT: in memory each
takes one byte, value in the low bits, as C's `uint8_t` — loads ignore the
byte's high bits, stores write them as zero — and the bytes next to an access
are never touched.

Every input byte has high bits set and every output buffer starts as sentinel
bytes (high bits set too), so a load that keeps the high bits, a store that
keeps or invents them, or an access of the wrong width (LLVM packs `<8 x i4>`
into 4 bytes) changes some byte. Matrix programs are compared bit for bit
with the interpreter; the `affine`/`memref`/`vector` accesses, which the
interpreter cannot run on sub-byte memrefs, with the rule itself written in
NumPy (`byte & mask`).
"""

from typing import Any

import numpy as np
import numpy.typing as npt
import pytest
from xdsl.parser import Parser

from mx.frontend import mx_context
from mx.interpreters import run_function
from mx.jit import compile_module

Array = npt.NDArray[Any]
SENTINEL = 0xA5
CONTAINERS = {"i4": 4, "i6": 6}


def _parse(source: str) -> Any:
    return Parser(mx_context(), source).parse_module()


def _noisy_bytes(rng: np.random.Generator, count: int) -> Array:
    """Random bytes, each with its top bit set (above the i4/i6 bits)."""
    return (rng.integers(0, 256, count) | 0x80).astype(np.uint8)


def _sentinels(count: int) -> Array:
    return np.full(count, SENTINEL, np.uint8)


def _jit_bytes(array: Array) -> Array:
    """The JIT takes `int8` arrays for i4/i6 memrefs: the same bytes."""
    return array.view(np.int8)


def _matrix(t: str, r: int, c: int) -> str:
    return f"!matrix.matrix<{r}x{c}x{t}>"


# (load layout, load stride, store layout, store stride) for a 3x4 matrix
# loaded at offset 1 and its 4x3 transpose stored at offset 2: every stride
# leaves padding between columns/rows that must keep its sentinel.
LAYOUTS = [
    ("column_major", 4, "column_major", 5),
    ("column_major", 5, "row_major", 4),
    ("row_major", 6, "column_major", 6),
    ("row_major", 5, "row_major", 5),
]


def _matrix_source(t: str, load: str, ls: int, store: str, ss: int) -> str:
    a, at = _matrix(t, 3, 4), _matrix(t, 4, 3)
    mem = f"memref<40x{t}>"
    return f"""
func.func @roundtrip(%src: {mem}, %dst: {mem}, %i: index, %j: index) -> {t} {{
  %m = matrix.{load}_load %src[1] stride {ls} : {mem} -> {a}
  %t = matrix.transpose %m : {a} -> {at}
  %e = matrix.extract %m[%i, %j] : {a}
  %n = matrix.insert %e, %t[3, 0] : {at}
  matrix.{store}_store %n, %dst[2] stride {ss} : {at}, {mem}
  func.return %e : {t}
}}
"""


@pytest.mark.parametrize("t", CONTAINERS)
@pytest.mark.parametrize("layout", LAYOUTS, ids=lambda x: f"{x[0]}{x[1]}")
def test_matrix_loads_and_stores_match_the_interpreter(
    t: str, layout: tuple[str, int, str, int]
) -> None:
    """Matrix loads, stores (both layouts, strided), transpose (through a
    stack buffer), extract and insert agree with the interpreter byte for
    byte, sentinels included; the extracted element is returned as the
    container's bits (zero-extended, as a `uint8_t`)."""
    source = _matrix_source(t, *layout)
    module = compile_module(source)
    reference = _parse(source)
    rng = np.random.default_rng(CONTAINERS[t])
    mask = (1 << CONTAINERS[t]) - 1
    for i, j in ((0, 0), (2, 3), (1, 2)):
        src = _noisy_bytes(rng, 40)
        expected = _sentinels(40)
        (element,) = run_function(reference, "roundtrip", src.copy(), expected, i, j)
        actual = _sentinels(40)
        result = module.roundtrip(_jit_bytes(src), _jit_bytes(actual), i, j)
        assert actual.tobytes() == expected.tobytes()
        assert (expected != SENTINEL).sum() == 12  # all 12 elements were stored
        assert int(result) == element & mask


def _paths_source(t: str) -> str:
    return f"""
func.func @paths(%src: memref<16x{t}>, %dst: memref<48x{t}>, %grid: memref<3x4x{t}>, %i: index) {{
  affine.for %k = 0 to 4 {{
    %x = affine.load %src[%k] : memref<16x{t}>
    affine.store %x, %dst[%k * 2 + 1] : memref<48x{t}>
  }}
  %c12 = arith.constant 12 : index
  %c20 = arith.constant 20 : index
  %y = memref.load %src[%c12] : memref<16x{t}>
  memref.store %y, %dst[%c20] : memref<48x{t}>
  %v = vector.load %src[%i] : memref<16x{t}>, vector<8x{t}>
  %c25 = arith.constant 25 : index
  vector.store %v, %dst[%c25] : memref<48x{t}>, vector<8x{t}>
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %g = memref.load %grid[%c2, %c1] : memref<3x4x{t}>
  affine.store %g, %grid[1, 3] : memref<3x4x{t}>
  %w = vector.load %grid[%c1, %c1] : memref<3x4x{t}>, vector<2x{t}>
  vector.store %w, %dst[%c12] : memref<48x{t}>, vector<2x{t}>
  %buffer = memref.alloca() : memref<2x8x{t}>
  %c0 = arith.constant 0 : index
  vector.store %v, %buffer[%c1, %c0] : memref<2x8x{t}>, vector<8x{t}>
  %z = affine.load %buffer[1, 5] : memref<2x8x{t}>
  memref.store %z, %dst[%c1] : memref<48x{t}>
  %c40 = arith.constant 40 : index
  %u = vector.load %buffer[%c1, %c0] : memref<2x8x{t}>, vector<8x{t}>
  vector.store %u, %dst[%c40] : memref<48x{t}>, vector<8x{t}>
  func.return
}}
"""


@pytest.mark.parametrize("t", CONTAINERS)
def test_affine_memref_and_vector_accesses_follow_the_rule(t: str) -> None:
    """affine.load/store, memref.load/store and vector.load/store on 1-D and
    2-D memrefs and a stack buffer read `byte & mask` and write exactly the
    addressed bytes, high bits zero."""
    module = compile_module(_paths_source(t))
    mask = (1 << CONTAINERS[t]) - 1
    rng = np.random.default_rng(10 + CONTAINERS[t])
    for i in (0, 3, 8):
        src, grid = _noisy_bytes(rng, 16), _noisy_bytes(rng, 12)
        dst = _sentinels(48)
        expected_dst, expected_grid = dst.copy(), grid.copy()
        expected_dst[1:9:2] = src[:4] & mask
        expected_dst[20] = src[12] & mask
        expected_dst[25:33] = src[i : i + 8] & mask
        expected_grid[1 * 4 + 3] = grid[2 * 4 + 1] & mask
        expected_dst[12:14] = expected_grid[5:7] & mask
        expected_dst[1] = src[i + 5] & mask
        expected_dst[40:48] = src[i : i + 8] & mask
        module.paths(_jit_bytes(src), _jit_bytes(dst), _jit_bytes(grid), i)
        assert dst.tobytes() == expected_dst.tobytes(), i
        assert grid.tobytes() == expected_grid.tobytes(), i


@pytest.mark.parametrize("t", CONTAINERS)
def test_scalars_and_vectors_cross_calls_as_bytes(t: str) -> None:
    """By value, a container is a `uint8_t`: every byte value is accepted,
    its high bits ignored, and results come back with zero high bits
    (exhaustively over the 256 bytes; the interpreter agrees on the bits)."""
    source = f"""
func.func @identity(%x: {t}) -> {t} {{
  func.return %x : {t}
}}
func.func @through_call(%x: {t}) -> i8 {{
  %y = func.call @identity(%x) : ({t}) -> {t}
  %w = arith.extui %y : {t} to i8
  func.return %w : i8
}}
func.func @vector_identity(%v: vector<8x{t}>, %out: memref<8x{t}>) -> vector<8x{t}> {{
  %c0 = arith.constant 0 : index
  vector.store %v, %out[%c0] : memref<8x{t}>, vector<8x{t}>
  func.return %v : vector<8x{t}>
}}
"""
    module = compile_module(source)
    reference = _parse(source)
    mask = (1 << CONTAINERS[t]) - 1
    for byte in range(-128, 128):
        expected = byte & mask
        assert module.identity(byte) == expected, byte
        assert module.through_call(byte) == expected, byte
        (interpreted,) = run_function(reference, "identity", byte)
        assert interpreted & mask == expected, byte
    rng = np.random.default_rng(20 + CONTAINERS[t])
    v = _noisy_bytes(rng, 8)
    out = _sentinels(8)
    result = module.vector_identity(_jit_bytes(v), _jit_bytes(out))
    assert result.view(np.uint8).tobytes() == (v & mask).tobytes()
    assert out.tobytes() == (v & mask).tobytes()


def test_globals_hold_the_zero_extended_bits() -> None:
    source = """
"memref.global"() <{sym_name = "table", sym_visibility = "private", type = memref<4xi4>, initial_value = dense<[-1, 7, -8, 1]> : tensor<4xi4>, constant}> : () -> ()
func.func @copy(%dst: memref<6xi4>) {
  %g = memref.get_global @table : memref<4xi4>
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %v = vector.load %g[%c0] : memref<4xi4>, vector<4xi4>
  vector.store %v, %dst[%c1] : memref<6xi4>, vector<4xi4>
  func.return
}
"""
    dst = _sentinels(6)
    compile_module(source).copy(_jit_bytes(dst))
    assert list(dst) == [SENTINEL, 0xF, 0x7, 0x8, 0x1, SENTINEL]


def test_bool_vectors_take_a_byte_per_element() -> None:
    """i1 follows the same rule: `vector<8xi1>` is 8 bytes in memory, as a
    `memref<8xi1>` (NumPy bools) holds it, not LLVM's packed byte."""
    source = """
func.func @copy(%src: memref<8xi1>, %dst: memref<10xi1>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %v = vector.load %src[%c0] : memref<8xi1>, vector<8xi1>
  vector.store %v, %dst[%c1] : memref<10xi1>, vector<8xi1>
  func.return
}
"""
    src = np.array([1, 0, 1, 1, 0, 0, 1, 0], np.bool_)
    dst = np.zeros(10, np.bool_)
    compile_module(source).copy(src, dst)
    assert list(dst) == [False, *src, False]

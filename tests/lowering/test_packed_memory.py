"""Packed `i4`/`i6` loads and stores (`matrix.*_load/store ... packed`) through
the JIT and the interpreter, against a byte-level reference of this file.

The reference reads the memory as one Python integer (`int.from_bytes`,
little-endian), so that element n is `stream >> (w*n) & mask` and a store
replaces exactly those bits: a formulation that shares nothing with the
interpreter (NumPy bit arrays) or the lowering (byte/shift arithmetic).
Every byte of every memory starts random (sentinels), destination memories
sit inside a larger array whose bytes past the memref's end must survive,
and whole memories are compared, so a store touching one bit too many, or
a load reading the wrong bits, fails.
"""

from typing import Any

import numpy as np
import numpy.typing as npt
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from xdsl.parser import Parser

from mx.frontend import mx_context
from mx.interpreters import run_function
from mx.jit import compile_module

Array = npt.NDArray[np.uint8]
TAIL = 5
"""Sentinel bytes after the end of every destination memref."""


def _position(r: int, c: int, off: int, stride: int, column_major: bool) -> int:
    return off + (c * stride + r if column_major else r * stride + c)


def reference_load(
    memory: bytes,
    shape: tuple[int, int],
    off: int,
    stride: int,
    column_major: bool,
    width: int,
) -> list[list[int]]:
    stream = int.from_bytes(memory, "little")
    mask = (1 << width) - 1
    rows, cols = shape
    return [
        [
            stream >> (width * _position(r, c, off, stride, column_major)) & mask
            for c in range(cols)
        ]
        for r in range(rows)
    ]


def reference_store(
    memory: bytes,
    m: list[list[int]],
    off: int,
    stride: int,
    column_major: bool,
    width: int,
) -> bytes:
    stream = int.from_bytes(memory, "little")
    mask = (1 << width) - 1
    for r, row in enumerate(m):
        for c, value in enumerate(row):
            at = width * _position(r, c, off, stride, column_major)
            stream = stream & ~(mask << at) | (value & mask) << at
    return stream.to_bytes(len(memory), "little")


def bytes_needed(
    shape: tuple[int, int], off: int, stride: int, column_major: bool, width: int
) -> int:
    rows, cols = shape
    last = _position(rows - 1, cols - 1, off, stride, column_major)
    return (width * (last + 1) + 7) // 8


def _parse(source: str) -> Any:
    return Parser(mx_context(), source).parse_module()


def _layout(column_major: bool) -> str:
    return "column_major" if column_major else "row_major"


def _source(
    shape: tuple[int, int],
    width: int,
    load_column_major: bool,
    store_column_major: bool,
    static: tuple[int, int, int, int] | None,
) -> str:
    """@copy loads a packed matrix from %src at [%lo] stride %ls and stores
    it packed into %dst at [%so] stride %ss (literals when `static` is
    given), returning it; the layouts may differ."""
    t = f"!matrix.matrix<{shape[0]}x{shape[1]}xi{width}>"
    lo, ls, so, ss = ("%lo", "%ls", "%so", "%ss") if static is None else static
    return f"""
func.func @copy(%src: memref<?xi8>, %dst: memref<?xi8>, %lo: index, %ls: index, %so: index, %ss: index) -> {t} {{
  %m = matrix.{_layout(load_column_major)}_load %src[{lo}] stride {ls} packed : memref<?xi8> -> {t}
  matrix.{_layout(store_column_major)}_store %m, %dst[{so}] stride {ss} packed : {t}, memref<?xi8>
  func.return %m : {t}
}}
"""


def check_copy(
    rng: np.random.Generator,
    shape: tuple[int, int],
    width: int,
    load_column_major: bool,
    store_column_major: bool,
    layout: tuple[int, int, int, int],
    static: bool,
) -> None:
    """JIT and interpreter against the reference, on random bytes."""
    lo, ls, so, ss = layout
    source = _source(
        shape, width, load_column_major, store_column_major, layout if static else None
    )
    src = rng.integers(0, 256, bytes_needed(shape, lo, ls, load_column_major, width))
    src = src.astype(np.uint8)
    size = bytes_needed(shape, so, ss, store_column_major, width)
    dst = rng.integers(0, 256, size + TAIL).astype(np.uint8)

    expected = reference_load(src.tobytes(), shape, lo, ls, load_column_major, width)
    expected_dst = (
        reference_store(
            dst[:size].tobytes(), expected, so, ss, store_column_major, width
        )
        + dst[size:].tobytes()
    )

    jit_dst = dst.copy()
    result = compile_module(source).copy(src.copy(), jit_dst[:size], *layout)
    assert np.asarray(result).tolist() == expected
    assert jit_dst.tobytes() == expected_dst

    interpreted_dst = dst[:size].copy()
    (interpreted,) = run_function(
        _parse(source), "copy", src.copy(), interpreted_dst, *layout
    )
    assert np.asarray(interpreted).tolist() == expected
    assert interpreted_dst.tobytes() == expected_dst[:size]


# Odd and even offsets (an odd i4 offset starts in a high nibble; i6 offsets
# start at each of the four bit positions of a 3-byte group), strides with
# padding of 0..3 elements.
FIXED = [
    ((3, 5), 4, True, False, (1, 3, 0, 5)),
    ((3, 5), 4, False, True, (3, 7, 2, 4)),
    ((4, 4), 4, True, True, (0, 4, 5, 5)),
    ((2, 7), 6, True, False, (1, 2, 3, 8)),
    ((5, 3), 6, False, True, (2, 5, 1, 6)),
    ((4, 4), 6, False, False, (3, 4, 0, 7)),
    ((1, 9), 6, True, True, (5, 1, 6, 3)),
    # i4 with even literal offsets and strides moves whole bytes in vectors:
    # blocks of 64, 8 and 1 elements (33 rows), a transposing copy in tiles.
    ((33, 3), 4, True, True, (0, 34, 2, 36)),
    ((6, 10), 4, True, True, (2, 6, 4, 8)),
    ((8, 8), 4, False, True, (0, 8, 2, 10)),
    ((16, 4), 4, True, False, (4, 16, 0, 4)),
]


@pytest.mark.parametrize("static", [True, False], ids=["literal", "dynamic"])
@pytest.mark.parametrize("case", FIXED, ids=str)
def test_packed_copy(
    case: tuple[tuple[int, int], int, bool, bool, tuple[int, int, int, int]],
    static: bool,
) -> None:
    check_copy(np.random.default_rng(len(str(case))), *case, static)


@settings(
    max_examples=30,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)
@given(
    shape=st.sampled_from([(1, 1), (2, 3), (3, 2), (4, 8), (8, 5)]),
    width=st.sampled_from([4, 6]),
    load_column_major=st.booleans(),
    store_column_major=st.booleans(),
    offsets=st.tuples(st.integers(0, 11), st.integers(0, 11)),
    padding=st.tuples(st.integers(0, 5), st.integers(0, 5)),
    seed=st.integers(0, 2**32 - 1),
)
def test_packed_copy_property(
    shape: tuple[int, int],
    width: int,
    load_column_major: bool,
    store_column_major: bool,
    offsets: tuple[int, int],
    padding: tuple[int, int],
    seed: int,
) -> None:
    """Any shape, offset and stride (dynamic: one compiled module per shape,
    width and layouts)."""
    rows, cols = shape
    leading = [rows if cm else cols for cm in (load_column_major, store_column_major)]
    layout = (
        offsets[0],
        leading[0] + padding[0],
        offsets[1],
        leading[1] + padding[1],
    )
    check_copy(
        np.random.default_rng(seed),
        shape,
        width,
        load_column_major,
        store_column_major,
        layout,
        static=False,
    )


def test_reference_layout_examples() -> None:
    """The reference itself on the layout's defining examples: i4 element 2k
    is the low nibble of byte k, 2k+1 its high nibble; four i6 elements fill
    three bytes, least significant bit first."""
    nibbles = reference_load(bytes([0x21, 0x43]), (1, 4), 0, 4, False, 4)
    assert nibbles == [[1, 2, 3, 4]]
    sixes = reference_load(
        bytes([0b11_000001, 0b0011_0000, 0b000100_00]), (4, 1), 0, 4, True, 6
    )
    assert sixes == [[1], [0b000011], [0b000011], [0b000100]]
    assert reference_store(bytes([0xFF, 0xFF]), [[0]], 1, 1, True, 6) == bytes(
        [0b00111111, 0b11110000]
    )

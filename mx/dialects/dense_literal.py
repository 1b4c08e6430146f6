"""The elements of `dense<...>` literals, read and printed bit-exactly as MLIR does.

xDSL 0.75 reads a hexadecimal element of a float literal (`0x7fc00000`) as
the integer 4290772992 converted to float, although its printer writes NaN and
infinities in exactly that form, so printed IR did not re-parse to the same
values; it also raises on a float above its type's range (`struct` refuses to
pack 70000.0 as f16) and on an integer outside its type's range. MLIR reads a
hexadecimal element of a float type as the element's bit pattern, rounds a
decimal above the range to infinity, and reports a range error at the element.

Elements are converted straight to the attribute's bytes, so NaN payloads and
signalling NaNs survive (a round trip through Python floats would quiet them).
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence

from xdsl.dialects.builtin import (
    AnyFloat,
    DenseIntOrFPElementsAttr,
    IndexType,
    IntegerType,
    Signedness,
)
from xdsl.parser import AttrParser
from xdsl.printer import Printer
from xdsl.utils.mlir_lexer import MLIRTokenKind

from mx.semantics.nan_bits import FRACTION_BITS
from mx.xdsl_compat.parser import TensorLiteralElement as Element
from mx.xdsl_compat.parser import at_token

ScalarType = AnyFloat | IntegerType | IndexType


def _is_hex(element: Element) -> bool:
    return element.span.text.lstrip("-")[:2] in ("0x", "0X")


NEGATIVE_HEX_FLOAT = "hexadecimal float literal should not have a leading minus"
"""MLIR's error for `-0x...` of a float type (a bit pattern takes no sign)."""


def index_range_error(value: int) -> str | None:
    """MLIR's error for an `index` literal outside 64 signed bits, or None."""
    if -(1 << 63) <= value < 1 << 63:
        return None
    return f"integer value {value} is out of range for type index"


def element_bytes(parser: AttrParser, element: Element, type: ScalarType) -> bytes:
    """The stored bytes (little-endian) of one literal element of `type`."""
    if isinstance(type, AnyFloat):
        if _is_hex(element) and isinstance(element.value, int):
            if element.is_negative:
                parser.raise_error(NEGATIVE_HEX_FLOAT, at_position=element.span)
            if element.value.bit_length() > type.bitwidth:
                parser.raise_error(
                    f"hexadecimal float constant out of range for type {type}",
                    at_position=element.span,
                )
            return element.value.to_bytes(type.compile_time_size, "little")
        # Above the type's range rounds to infinity, as arith.constant does.
        return type.pack((type.round(element.to_float(parser)),))
    if isinstance(type, IndexType):
        value = element.to_int(parser, allow_booleans=False)
        if (error := index_range_error(value)) is not None:
            parser.raise_error(error, at_position=element.span)
        return type.pack((value,))
    value = element.to_int(
        parser, type.signedness.data != Signedness.UNSIGNED, type.width.data == 1
    )
    try:
        return type.pack((type.get_normalized_value(value),))
    except ValueError as err:
        parser.raise_error(str(err), at_position=element.span)


def literal_bytes(
    parser: AttrParser, elements: Sequence[Element], type: ScalarType
) -> bytes:
    """The stored bytes of a literal's elements, in order."""
    return b"".join(element_bytes(parser, e, type) for e in elements)


def parse_optional_hex_string(
    parser: AttrParser, type: ScalarType, count: int, expand_splat: bool = True
) -> bytes | None:
    """The raw data of a `dense<"0x...">` literal of `count` elements of `type`
    (one element's bytes are a splat, repeated `count` times unless not
    `expand_splat`), or None if the literal is not a string."""
    if not at_token(parser, MLIRTokenKind.STRING_LIT):
        return None
    start = parser.pos
    text = parser.parse_str_literal()
    if text[:2] not in ("0x", "0X"):
        parser.raise_error(
            "expected a hexadecimal string '0x...' in a dense literal",
            start,
            parser.pos,
        )
    try:
        data = bytes.fromhex(text[2:])
    except ValueError:
        parser.raise_error(
            "invalid hexadecimal string in a dense literal", start, parser.pos
        )
    size = type.compile_time_size
    if len(data) == size:
        return data * count if expand_splat else data
    if len(data) != size * count:
        parser.raise_error(
            f"hexadecimal dense literal of {len(data)} bytes does not hold "
            f"{count} elements of {type} ({size * count} bytes)",
            start,
            parser.pos,
        )
    return data


def is_splat_literal(attr: DenseIntOrFPElementsAttr) -> bool:
    """True if every element has the same bits (0.0 and -0.0 differ): a
    literal stored as its one element (large splats are, so that any size is a
    valid constant, as in MLIR) or written out with equal elements."""
    data = attr.data.data
    size = attr.get_element_type().compile_time_size
    return data == data[:size] * (len(data) // size)


# -- printing ------------------------------------------------------------------


def _exponent_all_ones(bits: int, type: AnyFloat) -> bool:
    """True for NaN and the infinities (all exponent bits set)."""
    fraction_bits = FRACTION_BITS[type.name]
    exponent_mask = ((1 << (type.bitwidth - 1 - fraction_bits)) - 1) << fraction_bits
    return bits & exponent_mask == exponent_mask


def element_bits(attr: DenseIntOrFPElementsAttr) -> Iterator[int]:
    """Each element's stored bits, unsigned."""
    size = attr.get_element_type().compile_time_size
    data = attr.data.data
    for offset in range(0, len(data), size):
        yield int.from_bytes(data[offset : offset + size], "little")


def print_float_bits(printer: Printer, bits: int, type: AnyFloat) -> None:
    """A float element so that it reads back as the same bits: NaN and the
    infinities as their hexadecimal bit pattern, other values in decimal."""
    if _exponent_all_ones(bits, type):
        printer.print_string(f"0x{bits:0{type.bitwidth // 4}x}")
    else:
        raw = bits.to_bytes(type.compile_time_size, "little")
        printer.print_float(type.unpack(raw, 1)[0], type)

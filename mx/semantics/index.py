"""The `index` type's integer semantics (64 bits, two's complement)."""


def wrap_index(value: int) -> int:
    """`value` as the 64-bit two's complement `index` arithmetic gives it (folds
    compute index constants exactly; the index type is 64 bits wide)."""
    return (value + 2**63) % 2**64 - 2**63

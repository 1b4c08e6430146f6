"""The CI sample of a parametrized test marked `ci_sample(n)`
(tests/conftest.py): `n` of its cases, chosen so that every value that
several cases share of every parameter (each field of a tuple parameter on
its own: a format, a layout, a spelling) still runs at least once, and the
same on every run. `MX_LONG_TESTS=1` runs every case (docs/long-runs.md)."""

import dataclasses
import os
import zlib
from collections import Counter
from collections.abc import Hashable, Mapping, Sequence
from typing import TypeVar

LONG = os.environ.get("MX_LONG_TESTS") == "1"
"""`MX_LONG_TESTS=1`: every case, and the larger random samples."""

Facet = tuple[str, int, str]
"""A parameter's name, the field of a tuple parameter (-1: the whole value)
and the field's value, printed."""


def facets(params: Mapping[str, object]) -> set[Facet]:
    """What one case takes: each parameter's value, a tuple's or a
    dataclass's field by field."""
    found: set[Facet] = set()
    for name, value in params.items():
        if dataclasses.is_dataclass(value) and not isinstance(value, type):
            value = dataclasses.astuple(value)
        if isinstance(value, tuple):
            found.update((name, i, repr(v)) for i, v in enumerate(value))
        else:
            found.add((name, -1, repr(value)))
    return found


K = TypeVar("K", bound=Hashable)


def ci_sample(cases: Sequence[tuple[K, Mapping[str, object]]], n: int) -> set[K]:
    """The keys of the cases kept of `cases` (key, parameters): in a fixed
    order (a hash of each key), first every case that takes a shared facet
    no case kept so far takes, then the next in that order up to `n` in all
    (more than `n` where fewer do not take every shared facet). A facet of
    one case alone names that case, not a kind of case: it is not kept for
    itself."""
    order = sorted(cases, key=lambda case: zlib.crc32(repr(case[0]).encode()))
    taken = Counter(f for _, params in cases for f in facets(params))
    kept: list[K] = []
    seen: set[Facet] = set()
    for key, params in order:
        new = {f for f in facets(params) if taken[f] > 1} - seen
        if new:
            kept.append(key)
            seen |= new
    rest = [key for key, _ in order if key not in kept]
    return {*kept, *rest[: max(0, n - len(kept))]}

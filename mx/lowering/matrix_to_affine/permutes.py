"""How many f32 lanes one variable permute of the target picks from: the
f4e2m1fn kernels decode by looking codes up in a table
(`decoded_matvec.py`), which LLVM turns into permutes only where the table
fits one.

AVX-512's `vpermps` picks from 16 lanes, so the 16 values of f4e2m1fn are one
table; AVX2's picks from 8, and LLVM decodes a 16-entry table lane by lane
there (a store and a load per lane: 10-40 s of LLVM for one kernel, slow code
after it). With 8 lanes, the kernel looks up the 8 magnitudes and sets the
sign bit itself. Under `mx-opt` the target is an AVX-512 one (Sapphire
Rapids: `DEFAULT_PERMUTE_LANES`), as for the caches (`caches.py`); the JIT
compiles for the host (`for_target_permutes`).
"""

from collections.abc import Generator
from contextlib import contextmanager
from contextvars import ContextVar

DEFAULT_PERMUTE_LANES = 16
"""AVX-512's (`mx-opt`)."""

_lanes: ContextVar[int] = ContextVar("permute_lanes", default=DEFAULT_PERMUTE_LANES)


def permute_lanes() -> int:
    """The permute width of the target being compiled for."""
    return _lanes.get()


@contextmanager
def for_target_permutes(lanes: int) -> Generator[None]:
    """Compile for a target whose permutes pick from `lanes` f32 lanes."""
    token = _lanes.set(lanes)
    try:
        yield
    finally:
        _lanes.reset(token)


def permute_lanes_of(features: str) -> int:
    """The permute width of an x86 CPU with LLVM's `features` (`+avx2,...`):
    16 with AVX-512F, 8 with AVX2, else 4 (SSE's shuffles)."""
    enabled = set(features.split(","))
    if "+avx512f" in enabled:
        return 16
    return 8 if "+avx2" in enabled else 4

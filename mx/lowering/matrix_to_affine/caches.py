"""The cache sizes the cache-blocked products are blocked for (blocked.py),
and the L1's ways, by which the row-major decode matvec chooses how many rows
it streams at once (decoded_matvec.py).

`convert-matrix-to-affine`'s `l1-bytes`, `l2-bytes` and `l3-bytes` default to
0: the target CPU's (`TargetCpu.caches`). Under `mx-opt` the target's are
`DEFAULT_CACHES`, so that its output does not depend on the machine it runs
on; the JIT compiles for the host (`host_caches`), whose sizes Linux lists
under /sys/devices/system/cpu/cpu0/cache.
"""

from dataclasses import dataclass
from functools import cache
from pathlib import Path


@dataclass(frozen=True)
class Caches:
    """Bytes of one core's L1 data cache and L2, and of the L3; the L1's ways."""

    l1_bytes: int
    l2_bytes: int
    l3_bytes: int
    l1_ways: int = 12
    """Lines of one L1 set: rows a multiple of `l1_bytes / l1_ways` apart
    (4 KiB on Intel's and AMD's recent cores) share one set."""


DEFAULT_CACHES = Caches(48 * 1024, 2 * 1024 * 1024, 32 * 1024 * 1024, 12)
"""An Intel Sapphire/Emerald Rapids core's (`mx-opt`, and hosts whose sizes
cannot be read)."""

_SYSFS = Path("/sys/devices/system/cpu/cpu0/cache")


def _size_bytes(text: str) -> int:
    """sysfs' `32K`, `1024K`, `32M` (or plain bytes) in bytes."""
    text = text.strip()
    scale = {"K": 1024, "M": 1024 * 1024, "G": 1024 * 1024 * 1024}.get(text[-1:], 1)
    return int(text.rstrip("KMG")) * scale


def read_caches(root: Path) -> Caches:
    """The data caches of levels 1 to 3 listed under `root` (sysfs' layout:
    index*/level, type, size, ways_of_associativity); a level or the L1's
    ways not listed keep DEFAULT_CACHES'."""
    sizes: dict[int, int] = {}
    ways = DEFAULT_CACHES.l1_ways
    for index in sorted(root.glob("index*")):
        try:
            level = int((index / "level").read_text())
            kind = (index / "type").read_text().strip()
            size = _size_bytes((index / "size").read_text())
        except (OSError, ValueError):
            continue
        if kind in ("Data", "Unified") and size > 0 and level not in sizes:
            sizes[level] = size
            if level == 1:
                ways = _l1_ways(index, ways)
    default = DEFAULT_CACHES
    return Caches(
        sizes.get(1, default.l1_bytes),
        sizes.get(2, default.l2_bytes),
        sizes.get(3, default.l3_bytes),
        ways,
    )


def _l1_ways(index: Path, default: int) -> int:
    """The ways listed in sysfs' `index` directory, else `default`."""
    try:
        ways = int((index / "ways_of_associativity").read_text())
    except (OSError, ValueError):
        return default
    return ways if ways > 0 else default


@cache
def host_caches() -> Caches:
    """The caches of the machine this process runs on (read once)."""
    return read_caches(_SYSFS)

"""The number of threads compiled code runs on (docs/python-api.md#threads).

mx runs its parallel loops on OpenMP's threads (libgomp, GCC's runtime,
loaded into the JIT's process; see `parallel_for.py`). The count lives in a C
`int` that the JIT's code reads at every parallel loop (the symbol
`mx_num_threads`), so a change applies to the next call of every compiled
function, compiled before or after. It is one setting for the process, as
`threadpoolctl`'s limits are: `num_threads` sets it for a `with` block.
"""

import ctypes
import ctypes.util
import os
import warnings
from collections.abc import Generator
from contextlib import contextmanager
from functools import cache

from mx.errors import ArgumentError
from mx.runtime.parallel_for import PIN_SYMBOL, THREAD_COUNT_SYMBOL

ENVIRONMENT_VARIABLE = "MX_NUM_THREADS"


def available_cpus() -> int:
    """The CPUs this process may run on (its affinity mask)."""
    return len(os.sched_getaffinity(0))


def _checked(n: object) -> int:
    if isinstance(n, bool) or not isinstance(n, int) or n < 1:
        raise ArgumentError(
            f"error: the number of threads must be an int >= 1, got {n!r}"
        )
    return n


def _from_environment() -> int:
    """MX_NUM_THREADS if set to a valid count, else every available CPU (a
    bad value is reported by a warning: it must not make `import mx` fail)."""
    text = os.environ.get(ENVIRONMENT_VARIABLE)
    if text is None or not text.strip():
        return available_cpus()
    try:
        return _checked(int(text))
    except (ValueError, ArgumentError):
        warnings.warn(
            f"{ENVIRONMENT_VARIABLE}={text!r} is not an int >= 1; "
            f"mx uses the {available_cpus()} available CPUs",
            RuntimeWarning,
            stacklevel=2,
        )
        return available_cpus()


_count = ctypes.c_int(_from_environment())
"""Read by compiled code through the symbol `mx_num_threads`."""


_forked_from_openmp = False
"""This process was forked from one that had loaded OpenMP's runtime: its
threads are gone, and libgomp would wait for them forever."""


def _after_fork_in_child() -> None:
    global _forked_from_openmp
    if load_runtime.cache_info().currsize:
        _forked_from_openmp = True
        _count.value = 1


os.register_at_fork(after_in_child=_after_fork_in_child)


def set_num_threads(n: int) -> None:
    """Run compiled code on `n` threads (an int >= 1) from the next call on.
    Results are bitwise identical for every `n`. In a process forked after
    the parent compiled code, compiled code stays on one thread (OpenMP does
    not survive a fork; a warning says so)."""
    n = _checked(n)
    if _forked_from_openmp and n > 1:
        warnings.warn(
            "mx: this process was forked after OpenMP's threads were started; "
            "compiled code runs on 1 thread (use multiprocessing's 'spawn' or "
            "'forkserver' start method for more)",
            RuntimeWarning,
            stacklevel=2,
        )
        return
    _count.value = n


def get_num_threads() -> int:
    """The number of threads compiled code runs on: `set_num_threads`'s
    value, else `MX_NUM_THREADS` as read at import, else every CPU available
    to the process."""
    return _count.value


@contextmanager
def num_threads(n: int) -> Generator[None]:
    """`with num_threads(n):` runs the block's calls on `n` threads, then
    restores the previous count (for the whole process, not just the
    calling thread)."""
    previous = get_num_threads()
    set_num_threads(n)  # checks n
    try:
        yield
    finally:
        _count.value = previous


PLACEMENT_VARIABLES = ("OMP_PROC_BIND", "OMP_PLACES", "GOMP_CPU_AFFINITY")
"""OpenMP's own thread placement: if any is set, mx leaves placement to it."""

_pin = ctypes.c_int(0)
"""Read by compiled code through the symbol `mx_pin_threads`: nonzero, each
parallel region pins its worker threads off the calling thread's CPU
(`parallel_for.py`)."""


SPIN_COUNT = "10000"
"""GOMP_SPINCOUNT unless the user chose a wait policy: libgomp's threads spin
this many times (some microseconds) before sleeping, instead of 300,000.
The default spin is fastest on an idle machine and very slow on a busy one
(a spinning thread holds the core the thread it waits for needs: batches
ran 5-50x slower on 2 threads than on 1 under a load of 14 on 2 CPUs)."""


def _shorter_spinning() -> None:
    """Sets GOMP_SPINCOUNT before libgomp reads it (when it is loaded), unless
    the user set it or OMP_WAIT_POLICY, or libgomp is loaded already."""
    if "GOMP_SPINCOUNT" in os.environ or "OMP_WAIT_POLICY" in os.environ:
        return
    with open("/proc/self/maps") as maps:
        if "libgomp" in maps.read():
            return
    os.environ["GOMP_SPINCOUNT"] = SPIN_COUNT


@cache
def load_runtime() -> bool:
    """Makes libgomp's symbols and `mx_num_threads` visible to the JIT's code
    (once per process); False if libgomp is not installed (parallel loops
    then run on the calling thread)."""
    import llvmlite.binding as binding  # only once something is compiled

    binding.add_symbol(THREAD_COUNT_SYMBOL, ctypes.addressof(_count))
    _pin.value = not any(name in os.environ for name in PLACEMENT_VARIABLES)
    binding.add_symbol(PIN_SYMBOL, ctypes.addressof(_pin))
    _shorter_spinning()
    for name in ("libgomp.so.1", ctypes.util.find_library("gomp")):
        if name is None:
            continue
        try:
            # Never unmapped: at exit LLVM closes the libraries it loaded
            # while OpenMP's threads may still be spinning in libgomp's code
            # (a SIGSEGV at exit under OMP_WAIT_POLICY=active).
            ctypes.CDLL(name, mode=os.RTLD_NOW | os.RTLD_GLOBAL | os.RTLD_NODELETE)
            binding.load_library_permanently(name)
        except (OSError, RuntimeError):
            continue
        return True
    return False


BATCH_PARALLEL_MIN_BYTES = 1 << 20
"""A batch whose calls read and write at least this many bytes in all runs
on every thread; smaller ones on the calling thread. Measured by
bench/threads.py's sweep on a quiet 2-core Zen 4 (bench/results/threads.md):
2 threads won from 4096 4x4 f32 a@b+c calls (1 MiB: 1.44x), not at 2048
(1.06x)."""


def parallel_min_count(bytes_per_call: int) -> int:
    """The smallest batch of calls of `bytes_per_call` bytes each that runs
    on every thread."""
    return max(2, -(-BATCH_PARALLEL_MIN_BYTES // max(1, bytes_per_call)))

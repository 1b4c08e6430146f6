"""The JIT's runtime: what a call of a compiled function needs, and the
compile cache. Importing it loads NumPy only; `mx.jit_compile` builds
these objects, `mx.jit_modules` fills the cache, `mx.jit` is the API.

The call path: each function gets two native entries (`mx/jit_wrappers.py`),
a CPython builtin that checks the usual arguments (arrays of the right dtype,
shape and order, numbers, `out=` arrays) and calls the function in one step,
and a batch loop. Calls try the first (`_fast_call`); anything else (a
batch, a conversion, an error) goes through `JitFunction._call`, which checks
and explains, then runs the batch loop (`_run_batch`).

Matrix layouts without copies: each combination of C/F orders of the matrix
arguments and results is compiled once, when first called
(`mx.jit_compile` makes the matrices cross the boundary as their
transposes where the order differs from the ABI's).

The cache: compiled modules are kept per (text, pipeline), least recently
used first out beyond `cache_limit()` bytes (`_cache`, `_trim_cache`). A
function keeps its module's machine code alive (`mx.jit_machine_code.NativeCode`),
which is freed when the last function using it goes.

`JitFunction.precision_report` runs `mx.precision`, a layer above: the API
module `mx.jit` installs it (`set_precision_reporter`).
"""

from __future__ import annotations

import itertools
import os
import sys
import threading
from collections import OrderedDict
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, Literal, NamedTuple, Protocol, cast

import numpy as np

from mx.errors import ArgumentError, MXError, UnknownFunctionError

if TYPE_CHECKING:
    from mx.jit_compile import Entry
    from mx.jit_machine_code import NativeCode
    from mx.jit_signature import Param, Result, Where
    from mx.precision import PrecisionReport

DEFAULT_PIPELINE = "mx-lower-to-llvm"

Order = Literal["C", "F"]


def core_order(array: np.ndarray[Any, Any]) -> Order | None:
    """The memory order of the last two dimensions (one matrix), if contiguous."""
    if array.size == 0:
        return "C"  # nothing is read or written
    rows, cols = array.shape[-2:]
    row_stride, col_stride = array.strides[-2:]
    size = array.itemsize
    if (cols == 1 or col_stride == size) and (rows == 1 or row_stride == cols * size):
        return "C"
    if (rows == 1 or row_stride == size) and (cols == 1 or col_stride == rows * size):
        return "F"
    return None


Layouts = tuple[Order, ...]
"""The memory order of each matrix parameter, then of each matrix result."""


class PrecisionReporter(Protocol):
    """What `JitFunction.precision_report` runs (`mx.precision.jit_report`)."""

    def __call__(
        self, function: JitFunction, /, *args: object, **options: Any
    ) -> PrecisionReport: ...


_precision_reporter: PrecisionReporter | None = None


def set_precision_reporter(reporter: PrecisionReporter) -> None:
    """Installs what `JitFunction.precision_report` runs: the report lives in
    a layer above the JIT, since it compiles its own kernels with it."""
    global _precision_reporter
    _precision_reporter = reporter


class JitFunction:
    """A compiled function. Call it with one argument per parameter of the
    source function; it returns None, the one result, or a tuple of the
    results in the function's order.

    - A `!matrix.matrix<RxCxT>` parameter takes an (R, C) array of T's dtype,
      C- or F-ordered: it is read in place, never copied nor written. A matrix
      result comes back as a new C-ordered (R, C) array.
    - Batches (NumPy gufunc semantics): a matrix parameter also takes an
      (..., R, C) array, a scalar parameter an array of values, a vector
      parameter an (..., N) array; the leading dimensions broadcast as in
      `np.matmul`, the function runs once per element of the broadcast batch
      shape (in native code) and each result gets the batch's leading
      dimensions. Memref arguments are passed unchanged to every call.
    - `out=`: an array (one result) or a tuple of arrays (one per result)
      receiving the results in place, of the exact result dtype and
      (batch..., R, C) shape; matrices may be C- or F-ordered. Returned.
    - A memref parameter takes a C-contiguous array of its element dtype
      with at least as many elements as a static shape has; a memref the
      function may write must be a writable array.
    - A vector parameter takes an (N,) array; a scalar parameter a Python or
      NumPy number (NumPy scalars must have the parameter's exact dtype).
    - i8/i6/i4 containers also accept uint8 and ml_dtypes' float arrays of
      their width (FP8/FP6/FP4 data), one element per byte.
    - A dynamically sized memref's array must reach every element the
      function accesses at a static position in its entry block.

    Bad arguments raise `mx.errors.ArgumentError` (an `MXError`, also a
    `TypeError` and a `ValueError`) located at the function's definition.
    Calls from several threads at once are safe.
    """

    source: str = ""
    """The MLIR text the function was compiled from."""
    pipeline: str = DEFAULT_PIPELINE
    """The pipeline it was compiled with."""
    remarks: tuple[str, ...] = ()
    """The kernel each contraction of the function got (C-ordered
    matrices), as `mx-lower-to-llvm{remarks}` reports it: located
    `remark: '<op>' op kernel: ...` lines."""

    def __init__(
        self,
        name: str,
        params: Sequence[Param],
        results: Sequence[Result],
        entry: Entry,
        compile_variant: Callable[[Layouts], Entry],
    ):
        self.name = name
        self.params = tuple(params)
        self.results = tuple(results)
        self.native_code = entry.code
        """The compiled module's code, alive while this function is."""
        self._matrix_params = [i for i, p in enumerate(params) if p.kind == "matrix"]
        self._variants: dict[Layouts, Entry] = {self._default_layouts(): entry}
        self._layouts_table = entry.layouts
        self._compile_variant = compile_variant
        self._lock = threading.Lock()

    def native_codes(self) -> list[NativeCode]:
        """The machine code of each combination of matrix orders compiled."""
        return [entry.code for entry in list(self._variants.values())]

    def _default_layouts(self) -> Layouts:
        count = len(self._matrix_params) + sum(r.kind == "matrix" for r in self.results)
        return ("C",) * count

    def __call__(self, *args: object, out: object = None) -> Any:
        return self._call(args, out)

    def precision_report(self, *args: object, **options: Any) -> PrecisionReport:
        """Runs the function once on `args` beside an f64 shadow execution and
        reports what each conversion and low-precision op did to the values
        (`target_sqnr_db=` adds recommended formats): docs/precision-report.md."""
        if _precision_reporter is None:
            raise MXError("error: precision reports need `import mx.jit`")
        return _precision_reporter(self, *args, **options)

    def _variant(self, layouts: Layouts) -> Entry:
        entry = self._variants.get(layouts)
        if entry is not None:
            return entry
        with self._lock:
            entry = self._variants.get(layouts)
            if entry is None:
                entry = self._compile_variant(layouts)
                self._variants[layouts] = entry
                self._enable_fast_calls(layouts, entry)
                with _CACHE_LOCK:  # the module grew
                    _trim_cache()
            return entry

    def _enable_fast_calls(self, layouts: Layouts, entry: Entry) -> None:
        """Let the fast entry call `entry` for these orders of the matrix
        arguments and results."""
        table = self._layouts_table
        if table is not None:
            table[sum(1 << b for b, o in enumerate(layouts) if o == "F")] = entry.kernel

    def batched_arguments(
        self, args: Sequence[object]
    ) -> tuple[list[np.ndarray[Any, Any]], tuple[int, ...]]:
        """`args` checked against the parameters (an ArgumentError located
        at the function otherwise), as arrays, and the shape of their batch
        (memref arguments are not batched)."""
        where = self.params[0].where if self.params else None
        if len(args) != len(self.params):
            message = (
                f"@{self.name} takes {len(self.params)} arguments, got {len(args)}"
            )
            raise where.error(message) if where else ArgumentError(message)
        arrays = [p.normalize(a) for p, a in zip(self.params, args, strict=True)]
        batched = [
            (p, a)
            for p, a in zip(self.params, arrays, strict=True)
            if p.kind != "memref"
        ]
        batch = _broadcast([a.shape[: a.ndim - len(p.core)] for p, a in batched])
        if batch is None:
            shapes = ", ".join(str(a.shape) for _, a in batched)
            message = f"@{self.name}: the batch shapes of the arguments {shapes} do not broadcast"
            raise where.error(message) if where else ArgumentError(message)
        return arrays, batch

    def _call(self, args: Sequence[object], out: object) -> Any:
        """The general path: checks everything, handles batches, Fortran
        order and out=."""
        where = self.params[0].where if self.params else None
        arrays, batch = self.batched_arguments(args)
        outs = self._outputs(out, batch, arrays, where)
        layouts: Layouts = tuple(
            cast(Order, core_order(a))
            for a in [arrays[i] for i in self._matrix_params]
            + [o for o, r in zip(outs, self.results, strict=True) if r.kind == "matrix"]
        )
        entry = self._variant(layouts)
        strides = [
            (0,) * len(batch)
            if p.kind == "memref"
            else _batch_strides(a, a.ndim - len(p.core), len(batch))
            for p, a in zip(self.params, arrays, strict=True)
        ] + [o.strides[: len(batch)] for o in outs]
        _run_batch(entry.batch, [*arrays, *outs], batch, strides)
        if out is not None:
            return out
        values = [o if o.ndim else o[()] for o in outs]
        if not values:
            return None
        return values[0] if len(values) == 1 else tuple(values)

    def _outputs(
        self,
        out: object,
        batch: tuple[int, ...],
        arrays: Sequence[np.ndarray[Any, Any]],
        where: Where | None,
    ) -> list[np.ndarray[Any, Any]]:
        shapes = [batch + r.core for r in self.results]
        if out is None:
            return [
                np.empty(s, r.dtype) for s, r in zip(shapes, self.results, strict=True)
            ]

        def error(message: str) -> ArgumentError:
            text = f"@{self.name}: out= {message}"
            return where.error(text) if where else ArgumentError(text)

        given = out if isinstance(out, tuple) else (out,)
        if len(given) != len(self.results):
            raise error(f"needs {len(self.results)} arrays, got {len(given)}")
        outs: list[np.ndarray[Any, Any]] = []
        for j, (o, shape, r) in enumerate(
            zip(given, shapes, self.results, strict=True)
        ):
            dtype = r.dtype
            if not isinstance(o, np.ndarray):
                raise error(f"result #{j}: expected an array, got {type(o).__name__}")
            array = cast(np.ndarray[Any, Any], o)
            if array.dtype != dtype or array.shape != shape:
                raise error(
                    f"result #{j}: expected a {shape} array of {dtype}, "
                    f"got {array.shape} {array.dtype}"
                )
            if not array.flags.writeable:
                raise error(f"result #{j}: the array is read-only")
            contiguous = (
                core_order(array) is not None
                if r.kind == "matrix"
                else array.ndim == len(batch) or array.strides[-1] == array.itemsize
            )
            if not contiguous or not array.flags.aligned:
                raise error(f"result #{j}: each value must be contiguous and aligned")
            if any(np.may_share_memory(array, a) for a in (*arrays, *outs)):
                raise error(f"result #{j}: the array overlaps an argument or result")
            outs.append(array)
        return outs


def _broadcast(shapes: Sequence[tuple[int, ...]]) -> tuple[int, ...] | None:
    """The broadcast of batch shapes as in `np.broadcast_shapes` (None if they
    do not broadcast), without its cost of microseconds per call."""
    ndim = max((len(s) for s in shapes), default=0)
    out = [1] * ndim
    for shape in shapes:
        for i, n in enumerate(shape, ndim - len(shape)):
            if n == 1 or n == out[i]:
                continue
            if out[i] != 1:
                return None
            out[i] = n
    return tuple(out)


def _batch_strides(
    array: np.ndarray[Any, Any], batch_ndim: int, ndim: int
) -> tuple[int, ...]:
    """The byte strides of `array`'s `batch_ndim` leading dimensions once
    broadcast to `ndim` batch dimensions: 0 where it repeats."""
    own = tuple(
        0 if n == 1 else stride
        for n, stride in zip(
            array.shape[:batch_ndim], array.strides[:batch_ndim], strict=True
        )
    )
    return (0,) * (ndim - batch_ndim) + own


def _run_batch(
    batch_entry: Callable[..., int],
    operands: list[np.ndarray[Any, Any]],
    shape: tuple[int, ...],
    strides: list[tuple[int, ...]],
) -> None:
    """Call `batch_entry` for every index of `shape`: one native loop over
    the merged batch dimensions (dimensions merge where every operand's
    strides allow), a Python loop over the rest."""
    dims = list(shape)
    steps = [list(s) for s in strides]
    d = len(dims) - 1
    while d > 0:
        if all(s[d - 1] == s[d] * dims[d] for s in steps):
            dims[d - 1] *= dims[d]
            del dims[d]
            for s in steps:
                s[d - 1] = s[d]
                del s[d]
        d -= 1
    if any(n == 0 for n in dims):
        return
    inner = [dims[-1] if dims else 1, *(s[-1] if s else 0 for s in steps)]
    if len(dims) <= 1:  # the common case, without the outer loop's cost
        batch_entry(*operands, np.array(inner + [0] * len(steps), np.int64))
        return
    for index in itertools.product(*map(range, dims[:-1])):
        offsets = [
            sum(i * stride for i, stride in zip(index, s, strict=False)) for s in steps
        ]
        batch_entry(*operands, np.array([*inner, *offsets], np.int64))


def make_function(
    name: str,
    params: Sequence[Param],
    results: Sequence[Result],
    entry: Entry,
    compile_variant: Callable[[Layouts], Entry],
) -> JitFunction:
    """A `JitFunction`; with a fast entry, of a class of its own whose
    `__call__` tries it first (`_fast_call`)."""
    function = JitFunction(name, params, results, entry, compile_variant)
    if entry.fast is not None:
        function.__class__ = type(
            "JitFunction",
            (JitFunction,),
            {
                "__call__": _fast_call(function, entry.fast),
                "__doc__": JitFunction.__doc__,
            },
        )
    return function


def _fast_call(function: JitFunction, fast: Callable[..., Any]) -> Callable[..., Any]:
    """A `__call__` for `function` that tries the fast entry first: it
    returns the results it allocates, or writes the `out=` arrays; anything
    it does not handle (`NotImplemented`) takes the general path."""
    source = (
        "def __call__(self, *args, out=None):\n"
        "    if out is None:\n"
        "        results = fast(args)\n"
        "        if results is not NotImplemented:\n"
        "            return results\n"
        "    elif fast(args, out) is not NotImplemented:\n"
        "        return out\n"
        "    return self._call(args, out)\n"
    )
    scope: dict[str, Any] = {"fast": fast}
    exec(source, scope)  # a call specialized to this signature
    return scope["__call__"]


class CompiledModule:
    """The functions of a JIT-compiled module, by name (`m.f` or `m["f"]`)."""

    def __init__(
        self, llvm_ir: str, functions: dict[str, JitFunction], source_bytes: int
    ):
        self.llvm_ir = llvm_ir
        self.functions = functions
        self._source_bytes = source_bytes

    @property
    def nbytes(self) -> int:
        """The bytes the module holds: the machine code of its functions in
        every combination of matrix orders compiled so far, with their
        execution engines, its LLVM IR and its source text."""
        codes = {c for f in self.functions.values() for c in f.native_codes()}
        return len(self.llvm_ir) + self._source_bytes + sum(c.size for c in codes)

    def __getitem__(self, name: str) -> JitFunction:
        function = self.functions.get(name)
        if function is None:
            raise self._unknown(name)
        return function

    def __getattr__(self, name: str) -> JitFunction:
        if name.startswith("__"):
            raise AttributeError(name)
        return self[name]

    def _unknown(self, name: str) -> UnknownFunctionError:
        from mx.diagnostics import did_you_mean

        names = sorted(self.functions)
        listed = ", ".join(f"@{n}" for n in names) if names else "none"
        hint = did_you_mean(name, names)
        return UnknownFunctionError(
            f"error: no function @{name} in the module{hint} (its functions: {listed})"
        )


def _cache_limit_from_environment() -> int:
    text = os.environ.get("MX_JIT_CACHE_BYTES")
    if text is None:
        return 32 << 20
    try:
        limit = int(text)
    except ValueError:
        limit = -1
    if limit < 0:
        raise ArgumentError(
            f"error: MX_JIT_CACHE_BYTES must be a number of bytes >= 0, got {text!r}"
        )
    return limit


class CacheInfo(NamedTuple):
    """The state of the compile cache (`cache_info()`)."""

    modules: int
    """Compiled modules in the cache."""
    nbytes: int
    """Bytes they hold (see `CompiledModule.nbytes`)."""
    limit: int
    """The most bytes the cache keeps (`set_cache_limit`)."""
    engines: int
    """Execution engines alive, in the cache or not: a function you hold keeps
    its module's machine code alive after the cache dropped the module."""


_CACHE_LOCK = threading.Lock()
_cache: OrderedDict[tuple[str, str], CompiledModule] = OrderedDict()
_cache_limit = _cache_limit_from_environment()


def cache_limit() -> int:
    """The most bytes of compiled modules the cache keeps (see
    `set_cache_limit`)."""
    return _cache_limit


def set_cache_limit(nbytes: int) -> int:
    """Keeps at most `nbytes` of compiled modules in the cache (machine code,
    LLVM IR and source text, see `CompiledModule.nbytes`), dropping the least
    recently used first; 0 disables the cache. Returns the previous limit.
    The default is 32 MiB, or the environment variable `MX_JIT_CACHE_BYTES`
    read at import. A module the cache drops stays usable while you hold it
    or one of its functions; its machine code is freed when the last goes."""
    global _cache_limit
    if nbytes < 0:
        raise ArgumentError(f"error: the cache limit must be >= 0 bytes, got {nbytes}")
    with _CACHE_LOCK:
        previous, _cache_limit = _cache_limit, nbytes
        _trim_cache()
    return previous


def cache_info() -> CacheInfo:
    """The cache's modules, their bytes, its limit, and the engines alive."""
    with _CACHE_LOCK:
        nbytes = sum(m.nbytes for m in _cache.values())
        modules = len(_cache)
    compiler = sys.modules.get("mx.jit_machine_code")  # no engines before it is
    engines = 0 if compiler is None else compiler.engines_alive()
    return CacheInfo(modules, nbytes, _cache_limit, engines)


def _trim_cache() -> None:
    """Drops the least recently used modules beyond the limit (the lock is
    held). Sizes are summed anew: a module grows when a function of it
    compiles for a new combination of matrix orders."""
    total = sum(m.nbytes for m in _cache.values())
    while total > _cache_limit:
        _, dropped = _cache.popitem(last=False)
        total -= dropped.nbytes


def cached(key: tuple[str, str]) -> CompiledModule | None:
    """The module compiled for (text, pipeline), if the cache holds it (then
    it is the most recently used)."""
    with _CACHE_LOCK:
        hit = _cache.get(key)
        if hit is not None:
            _cache.move_to_end(key)
        return hit


def keep(key: tuple[str, str], compiled: CompiledModule) -> CompiledModule:
    """Caches `compiled` for (text, pipeline) and returns the cached module:
    the one another thread kept first for the same key, if any."""
    with _CACHE_LOCK:
        compiled = _cache.setdefault(key, compiled)
        _cache.move_to_end(key)
        _trim_cache()
    return compiled

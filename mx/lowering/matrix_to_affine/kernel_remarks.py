"""Which kernel `convert-matrix-to-affine` gave each contraction, and why
not a faster one: one located remark per `matrix.matvec`, `matmul` and
`matmul_add`,

    file:line:col: remark: 'matrix.matvec' op kernel: element by element; not fused block-scaled vector: the weights are not decoded from a matrix load

The kernel of a contraction that `outline-contractions` moved into a
function of its own is reported at each call of that function: in the
calling function, at the call (the user's op).

The lowering records them in its state (`LoweringState.kernels`);
`matrix-lowering-remarks` prints them, and `recording()` hands those of every
lowering run inside it to a caller (the JIT's `JitFunction.remarks`).
docs/passes.md lists the kernels and the reasons.
"""

from collections.abc import Generator, Mapping, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, replace

from xdsl.dialects import func
from xdsl.dialects.builtin import FileLineColLoc, ModuleOp
from xdsl.ir import Operation

from mx.lowering.walk import walk

OUTLINED = "mx.outlined"
"""The unit attribute of a function holding one outlined contraction
(`outline-contractions`): its kernel remarks are reported at its calls."""

FUSED_BLOCK_SCALED = "fused block-scaled vector"
"""FP4/FP8 weights with block scales decoded in registers (decoded_matvec.py)."""
FUSED_DECODE = "fused decode vector"
"""FP4/FP8 weights (times a per-tensor scale) decoded in registers."""
FUSED_REASSOCIATED = "fused reassociated vector"
"""FP4/FP8 row-major weights decoded in registers and summed along K, under
`reassoc` (reassociated_matvec.py)."""
REASSOCIATED_VECTOR = "reassociated vector"
"""Row-major float weights (f16/bf16 widened, or f32/f64) summed along K,
under `reassoc` (reassociated_matvec.py)."""
CACHE_BLOCKED = "cache-blocked vector"
"""Packed panels, blocked for the caches (blocked.py)."""
VECTORIZED = "vectorized"
"""Register-blocked vector products (products.py)."""
ELEMENT_BY_ELEMENT = "element by element"
"""Scalar dot products reading each (decoded) element where it is needed."""
SCALAR = "scalar"
"""Scalar loop nests."""

VERSIONED = "packed offset and stride checked even at run time, else element by element"
"""The note of a fused kernel that reads packed weights of index offsets."""

UNREADABLE_PACKED = (
    "packed elements not readable as vectors (an odd offset or stride, or i6)"
)
"""Why a contraction reads packed elements one at a time."""


HALF_SUMS = "sums rounded to f16/bf16 at every step"
"""Why a large product with an f16/bf16 result misses the packed kernel."""


@dataclass(frozen=True)
class KernelRemark:
    """The kernel of one contraction; `reason`: why not `fastest`."""

    function: str
    location: str
    """`file:line:col` (or empty when the op has none)."""
    op_name: str
    kernel: str
    fastest: str | None = None
    reason: str | None = None
    note: str | None = None

    @staticmethod
    def of(
        op: Operation,
        kernel: str,
        fastest: str | None = None,
        reason: str | None = None,
        note: str | None = None,
    ) -> "KernelRemark":
        return KernelRemark(
            _function_name(op), _location(op), op.name, kernel, fastest, reason, note
        )

    @property
    def message(self) -> str:
        """`kernel: K[ (note)][; not F: reason]`."""
        text = f"kernel: {self.kernel}"
        if self.note:
            text += f" ({self.note})"
        if self.reason:
            text += f"; not {self.fastest}: {self.reason}"
        return text

    def __str__(self) -> str:
        where = f"{self.location}: " if self.location else ""
        return f"{where}remark: '{self.op_name}' op {self.message}"


CallSites = Mapping[str, Sequence[tuple[str, str]]]


def outlined_call_sites(module: ModuleOp) -> dict[str, list[tuple[str, str]]]:
    """For each function marked `OUTLINED`, the calling function and the
    location of each of its calls in `module`."""
    outlined = {
        op.sym_name.data
        for op in module.ops
        if isinstance(op, func.FuncOp) and OUTLINED in op.attributes
    }
    sites: dict[str, list[tuple[str, str]]] = {}
    if outlined:
        for op in walk(module):
            if isinstance(op, func.CallOp) and (
                (callee := op.callee.string_value()) in outlined
            ):
                sites.setdefault(callee, []).append((_function_name(op), _location(op)))
    return sites


def at_call_sites(
    remarks: Sequence[KernelRemark], sites: CallSites
) -> list[KernelRemark]:
    """`remarks` with each remark of an outlined function replaced by one
    per call of it (`outlined_call_sites`), named and located there."""
    placed: list[KernelRemark] = []
    for remark in remarks:
        if remark.function not in sites:
            placed.append(remark)
            continue
        for function, location in sites[remark.function]:
            placed.append(replace(remark, function=function, location=location))
    return placed


def _function_name(op: Operation) -> str:
    """The name of the function around `op` ("" if none)."""
    function = op.parent_op()
    while function is not None and not isinstance(function, func.FuncOp):
        function = function.parent_op()
    return "" if function is None else function.sym_name.data


def _location(op: Operation) -> str:
    """`file:line:col` of `op` or of its nearest located ancestor ("" if none)."""
    located: Operation | None = op
    while located is not None:
        loc = located.location
        if isinstance(loc, FileLineColLoc):
            return f"{loc.filename.data}:{loc.line.data}:{loc.column.data}"
        located = located.parent_op()
    return ""


_recorded: ContextVar[list[KernelRemark] | None] = ContextVar(
    "kernel_remarks", default=None
)


@contextmanager
def recording() -> Generator[list[KernelRemark]]:
    """The kernel remarks of every `convert-matrix-to-affine` run inside
    (an enclosing `recording()` gets them too: a caller sees the lowering
    of a JIT variant compiled during its call)."""
    remarks: list[KernelRemark] = []
    token = _recorded.set(remarks)
    try:
        yield remarks
    finally:
        _recorded.reset(token)
        record(remarks)


def record(remarks: list[KernelRemark]) -> None:
    """Hand a lowering's remarks to the enclosing `recording()`, if any."""
    if (sink := _recorded.get()) is not None:
        sink.extend(remarks)

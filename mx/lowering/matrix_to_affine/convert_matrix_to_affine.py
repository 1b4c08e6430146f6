"""`convert-matrix-to-affine`: matrix values -> memref buffers + affine loop nests.

Buffer layout and allocation: `matrix_to_affine/buffers.py` (column-major
`memref<CxRxT>`, stack up to 64 KiB, heap above, rejected above 4 GiB;
buffers whose lifetimes do not overlap are shared, and at most `stack-bytes`
per function stay on the stack).
Fusion: `matrix_to_affine/fusion.py` (elementwise chains and views emit no
buffer; their elements are computed inside the consumer's loop nest).
Vectors (`matrix_to_affine/vectors.py`, option `vector-bits`, default 512):
elementwise nests and copies of every arithmetic element type (f16, bf16,
f32, f64, i8..i64) work on vector blocks along the contiguous dimension
(transposing copies on square tiles in registers), and products are
register-blocked (`matrix_to_affine/products.py`); i4/i6 containers, and
`vector-bits=0`, keep scalar loop nests. Products whose operands
take at least `blocked-min-bytes` (default 96 KiB) are cache-blocked and
packed (`matrix_to_affine/blocked.py`), with block sizes derived from the
`l1-bytes`/`l2-bytes`/`l3-bytes` options (default: the target CPU's caches,
`TargetCpu.caches`: the host's in the JIT, one core of an Intel Sapphire
Rapids for mx-opt: 48 KiB, 2 MiB, and 32 MiB of L3).

Functions: a matrix argument becomes a `memref<CxRxT>` argument (the caller's
column-major buffer, never written by the callee; with `layout=row-major` a
`memref<RxCxT>` row-major buffer, see `matrix_to_affine/abi.py`); each matrix result becomes
an out-parameter `memref<CxRxT>` appended after the arguments, in result order,
written by `func.return`; the other results stay results. After
`convert-to-llvm` every such memref is one bare `ptr`, so
`func.func @f(%a: !matrix.matrix<2x3xf32>) -> !matrix.matrix<3x2xf32>` is
callable from C as `void f(const float *a, float *out)` with `a` and `out`
column-major and `out` not aliasing any argument. `func.call` passes operand
buffers and fresh result buffers.

Control flow: a matrix carried by `scf.for`, `scf.while` or returned by
`scf.if` lives in one buffer allocated before the op; terminators copy into
it (through a temporary when the copy reads a buffer it overwrites). Every
buffer is allocated at function entry, so loops reuse their buffers.

The ops are rewritten in program order (definitions before uses, a region's
owner before the region): the patterns (one module per job: `materialize.py`,
`matmul.py`, `matvec.py`, `element_access.py`, `functions.py`,
`control_flow.py`) are applied by the pass in a single forward walk, sharing
one `LoweringState` (`state.py`).
"""

from collections.abc import Iterator, Sequence
from dataclasses import dataclass, replace
from typing import ClassVar

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp, UnrealizedConversionCastOp
from xdsl.ir import Block, Operation, Region
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import (
    GreedyRewritePatternApplier,
    PatternRewriter,
    RewritePattern,
)
from xdsl.rewriter import Rewriter

from mx.diagnostics import OpDiagnostic
from mx.lowering.matrix_to_affine.abi import LAYOUTS
from mx.lowering.matrix_to_affine.blocked import Blocking
from mx.lowering.matrix_to_affine.buffers import DEFAULT_STACK_BYTES
from mx.lowering.matrix_to_affine.caches import Caches
from mx.lowering.matrix_to_affine.carriers import block_slots
from mx.lowering.matrix_to_affine.control_flow import (
    LowerCarriedTerminator,
    LowerCarryingOp,
    carry,
)
from mx.lowering.matrix_to_affine.element_access import (
    LowerExtract,
    LowerInsert,
    LowerStore,
)
from mx.lowering.matrix_to_affine.functions import (
    LowerCall,
    LowerFuncSignature,
    LowerReturn,
)
from mx.lowering.matrix_to_affine.fusion import FusionPlan
from mx.lowering.matrix_to_affine.kernel_remarks import (
    at_call_sites,
    outlined_call_sites,
    record,
)
from mx.lowering.matrix_to_affine.legality import check_lowerable
from mx.lowering.matrix_to_affine.materialize import (
    LowerScaledConvertTo,
    MaterializeConstant,
    MaterializeElementwise,
)
from mx.lowering.matrix_to_affine.matmul import LowerMatmul
from mx.lowering.matrix_to_affine.matvec import LowerMatvec
from mx.lowering.matrix_to_affine.state import LoweringState, is_matrix
from mx.lowering.matrix_to_affine.target_cpu import (
    BYTE_SHUFFLES,
    for_target_cpu,
    target_cpu,
)
from mx.lowering.walk import walk
from mx.passes.options import check_option_choices


def _patterns(state: LoweringState) -> list[RewritePattern]:
    return [
        LowerFuncSignature(state),
        LowerReturn(state),
        LowerCall(state),
        LowerCarryingOp(state),
        LowerCarriedTerminator(state),
        MaterializeConstant(state),
        MaterializeElementwise(state),
        LowerScaledConvertTo(state),
        LowerMatmul(state),
        LowerMatvec(state),
        LowerExtract(state),
        LowerInsert(state),
        LowerStore(state),
    ]


def _blocks_in_order(region: Region) -> list[Block]:
    """The blocks of `region` in reverse post-order of its branches (each
    after the blocks that dominate it), then the unreachable ones."""
    blocks = list(region.blocks)
    if len(blocks) < 2:
        return blocks

    def successors(block: Block) -> Iterator[Block]:
        return iter(block.last_op.successors if block.last_op is not None else ())

    seen = {blocks[0]}
    post: list[Block] = []
    stack = [(blocks[0], successors(blocks[0]))]
    while stack:
        block, pending = stack[-1]
        following = next((b for b in pending if b not in seen), None)
        if following is None:
            post.append(block)
            stack.pop()
        else:
            seen.add(following)
            stack.append((following, successors(following)))
    return post[::-1] + [b for b in blocks if b not in seen]


def _program_order(top: Operation) -> list[Operation]:
    """The ops nested in `top`, each before the ops of its regions, and the
    definitions of a block's arguments and values before their uses."""
    order: list[Operation] = []
    stack = [top]
    while stack:
        op = stack.pop()
        if op is not top:
            order.append(op)
        nested = [
            inner
            for region in op.regions
            for block in _blocks_in_order(region)
            for inner in block.ops
        ]
        stack.extend(reversed(nested))
    return order


def _erase_fused(module: ModuleOp, state: LoweringState) -> None:
    """Erase the fused ops and the buffer casts once nothing uses them; a
    matrix value still in use is one no pattern could lower."""
    for op in reversed(list(walk(module))):
        matrix_cast = isinstance(op, UnrealizedConversionCastOp) and any(
            is_matrix(r) for r in op.results
        )
        if (op in state.plan.fused or matrix_cast) and all(
            not r.uses for r in op.results
        ):
            Rewriter.erase_op(op)
    # Every value is a result or a block argument, defined before its uses in
    # this order: the first op defining a matrix value is the first to have
    # a matrix operand or result.
    for op in walk(module):
        defined = [a for r in op.regions for b in r.blocks for a in b.args]
        if any(is_matrix(v) for v in (*op.results, *defined)):
            raise OpDiagnostic(
                op, f"'{op.name}' with a matrix operand or result cannot be lowered"
            )


VECTOR_BITS = (0, 64, 128, 256, 512, 1024, 2048)
"""The values of `vector-bits`: 0 (scalar loop nests only) or a vector
register width."""

DEFAULT_VECTOR_BITS = 512
"""`vector-bits` unless an option says otherwise: AVX-512's."""

VECTOR_REGISTERS = (0, 16, 32)
"""The values of `vector-registers`: 0 (the target's) or a register count."""

WEIGHT_STREAMS = (0, 1, 2, 4, 8)
"""The values of `weight-streams`: 0 (the target's) or rows at once."""

L1_WAYS = (0, 2, 4, 8, 12, 16, 24, 32)
"""The values of `l1-ways`: 0 (the target's) or an L1's associativity."""

PANELS = ("target", "1x16", "4x6", "2x6")
"""The values of `panel`: the target's, or a micro-kernel's panel."""


@dataclass(frozen=True)
class ConvertMatrixToAffinePass(ModulePass):
    """Lowers the matrix dialect to memref buffers and affine loop nests."""

    name = "convert-matrix-to-affine"

    vector_bits: int = DEFAULT_VECTOR_BITS
    """Bits of the target's vector registers (512: AVX-512); elementwise
    nests, copies and products of f16/bf16/f32/f64/i8..i64 matrices work on
    vectors of that many bits (0: scalar loop nests only). The JIT lowers
    with at most the host's (256 on an AVX2 CPU: `target_cpu.py`)."""

    vector_registers: int = 0
    """How many vector registers the target has (16: AVX2, SSE, NEON; 32:
    AVX-512); the products' kernels keep their sums in them
    (`matrix_to_affine/target_cpu.py`'s `TargetCpu.vector_registers`). 0: the
    target's (the host's in the JIT; 32 under mx-opt)."""

    l1_bytes: int = 0
    """Bytes of the L1 data cache of one core (0: the target's, see
    `matrix_to_affine/target_cpu.py`'s `TargetCpu.caches`: the host's in the
    JIT, 48 KiB for mx-opt). This and the next two options shape the
    cache-blocked products (`matrix_to_affine/blocked.py`): a panel of packed
    A (MR x KC) and one of packed B (KC x NR) take at most 3/4 of L1. With
    `l1-ways` it also gives the L1's sets (`l1_ways`)."""

    l2_bytes: int = 0
    """Bytes of one core's L2 (0: the target's; 2 MiB for mx-opt): the MC x
    NC block of the result and a KC x NC block of packed B take half."""

    l3_bytes: int = 0
    """Bytes of L3 one core may use (0: the target's; 32 MiB for mx-opt):
    the MC rows of A (all of the depth) take half."""

    l1_ways: int = 0
    """Ways of the L1 data cache (0: the target's: the host's in the JIT, 12
    for mx-opt). The row-major decode matvec streams one tile of rows at a
    time where its lines of a step fit in the L1 set they share and two
    tiles' do not (`matrix_to_affine/decoded_matvec.py`). It changes no
    result bit, only speed."""

    blocked_min_bytes: int = 96 * 1024
    """Products (matmul, matmul_add) whose operands and result take at least
    this many bytes are cache-blocked and packed; smaller ones keep the
    register-blocked kernel. 96 KiB: on a Sapphire Rapids core the blocked
    product is the faster one from f32 96x96 and f64 64x64 up, the
    register-blocked one up to f32 64x64 and f64 48x48."""

    parallel_min_work: int = 1 << 18
    """Cache-blocked products (matmul, matmul_add, matvec) of at least this
    many multiply-adds run their blocks on threads: their block loop is
    marked `mx.parallel` for `outline-parallel-loops` (0: never). 2^18 (64^3)
    is where bench/threads.py's sweep measured 2 threads winning (see
    docs/python-api.md#threads)."""

    stack_bytes: int = DEFAULT_STACK_BYTES
    """Most bytes of buffers one function keeps on the stack; beyond it the
    largest buffers go to the heap (`matrix_to_affine/buffers.py`)."""

    layout: str = "column-major"
    """How matrix arguments and results are laid out at function boundaries:
    `column-major` (Clang's) or `row-major` (NumPy's, C arrays')."""

    byte_shuffles: int = 0
    """Bytes of the x86 shuffle intrinsics that look packed f4e2m1fn codes up
    in the reassociated decode kernels (`matrix_to_affine/target_cpu.py`):
    byte shuffles (`llvm.x86.*.pshuf.b`: 16, 32 for AVX2); 64 for AVX-512BW,
    whose f32 permute takes 16 lanes of codes (in every decode kernel, with
    no mask); 0: the target's (the host's in the JIT; none under mx-opt:
    LLVM IR for any target)."""

    weight_streams: int = 0
    """Rows of float weights the reassociated matvec reads at once (streams
    from memory; `TargetCpu.weight_streams`). 0: the target's (the host's in
    the JIT: 1 on AMD Zen 4 and later, else 4; 4 under mx-opt). It changes no result
    bit, only speed."""

    panel: str = "target"
    """The cache-blocked products' micro-kernel panel, vectors of rows of A
    by columns of B (`matrix_to_affine/blocked.py`'s `PANEL_SHAPES`): `4x6`
    (Intel cores with AVX-512: each broadcast of B feeds 4 multiplies),
    `1x16` (AMD Zen with AVX-512: each broadcast folds into one multiply's
    memory operand), `2x6` (16 vector registers), or `target`: the target's
    (the host's in the JIT; `1x16` under mx-opt). It changes no result bit,
    only speed."""

    option_choices: ClassVar[dict[str, Sequence[object]]] = {
        "vector_bits": VECTOR_BITS,
        "layout": LAYOUTS,
        "byte_shuffles": BYTE_SHUFFLES,
        "vector_registers": VECTOR_REGISTERS,
        "weight_streams": WEIGHT_STREAMS,
        "l1_ways": L1_WAYS,
        "panel": PANELS,
    }

    def __post_init__(self) -> None:
        check_option_choices(self)

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        self.lower(op)

    def lower(self, op: ModuleOp) -> LoweringState:
        """Lowers `op` in place; returns what the lowering shared, for
        `matrix-lowering-remarks`."""
        cpu = target_cpu()
        if self.byte_shuffles:
            cpu = replace(cpu, byte_shuffle=self.byte_shuffles)
        if self.vector_registers:
            cpu = replace(cpu, vector_registers=self.vector_registers)
        if self.weight_streams:
            cpu = replace(cpu, weight_streams=self.weight_streams)
        if self.panel != "target":
            cpu = replace(cpu, panel=self.panel)
        caches = cpu.caches
        cpu = replace(
            cpu,
            caches=Caches(
                self.l1_bytes or caches.l1_bytes,
                self.l2_bytes or caches.l2_bytes,
                self.l3_bytes or caches.l3_bytes,
                self.l1_ways or caches.l1_ways,
            ),
        )
        vector_bits = self.vector_bits
        if cpu.vector_bits:
            vector_bits = min(vector_bits, cpu.vector_bits)
        with for_target_cpu(cpu):
            return self._lower(op, vector_bits)

    def _lower(self, op: ModuleOp, vector_bits: int) -> LoweringState:
        check_lowerable(op)
        call_sites = outlined_call_sites(op)
        plan = FusionPlan()
        plan.analyze(op)
        caches = target_cpu().caches
        blocking = Blocking(
            caches.l1_bytes,
            caches.l2_bytes,
            caches.l3_bytes,
            self.blocked_min_bytes,
            self.parallel_min_work,
        )
        state = LoweringState(plan, vector_bits, blocking, self.layout == "row-major")
        order = _program_order(op)
        for child in order:
            for region in child.regions:
                for block in list(region.blocks)[1:]:
                    if slots := block_slots(block):
                        assert block.first_op is not None
                        carry(state, slots, block.first_op)
        applier = GreedyRewritePatternApplier(_patterns(state))
        for child in order:
            if child.parent is None:
                continue
            applier.match_and_rewrite(child, PatternRewriter(child))
        _erase_fused(op, state)
        state.allocator.finish(self.stack_bytes)
        state.kernels[:] = at_call_sites(state.kernels, call_sites)
        record(state.kernels)
        return state

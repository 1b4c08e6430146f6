"""`outline-parallel-loops`: the loops marked `mx.parallel` run on threads.

A lowering marks an `affine.for` from 0 to N (step 1, no loop-carried values)
with the unit attribute `mx.parallel` when its iterations are independent:
no iteration reads or writes what another writes, and the buffers its body
allocates (`memref.alloc` in the body's block, freed there) are scratch that
each iteration writes before reading. This pass rewrites each marked loop

    affine.for %i = 0 to N { body } {mx.parallel}

into a function running iterations [lo, hi) of it, with the body's scratch
buffers allocated once,

    func.func private @f__parallel_0(%lo: index, %hi: index, %v...) {
      %scratch = memref.alloc() ...
      affine.for %i = %lo to %hi { body }
      memref.dealloc %scratch ...
    }

and the loop into a call `func.call @_mx_parallel_for_f__parallel_0(N, %v...)`
of a function declared here, which `-t llvm` defines: it splits [0, N) into
one contiguous chunk per thread of OpenMP's team (`mx/runtime/parallel_for.py`).
The captured `%v...` are the values the body uses from outside (constants
are copied into the function instead). Splitting the iterations never
changes a result: each computes what it computes in the single loop.

A parallel loop over blocks whose body makes passes over its block,

    affine.for %b = 0 to N {
      (passes) affine.for %i = (%b * S) to min(%b * S + S, L) {mx.parallel_block} ...
    } {mx.parallel}

where `%b` is used only as both bounds of such block loops, is outlined for
a range of blocks at once: `@F(%lo, %hi, ...)` runs the body once, each block
loop from `%lo * S` to `min(%hi * S, L)`. A thread then makes each pass over
all the blocks it runs (one sweep of a column-major matrix's columns, over the
thread's rows), not each block's passes in turn.
"""

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import affine, arith, func, memref
from xdsl.dialects.builtin import (
    AffineMapAttr,
    IndexType,
    IntegerAttr,
    ModuleOp,
    UnitAttr,
)
from xdsl.ir import Attribute, Block, Operation, Region, SSAValue
from xdsl.ir.affine import AffineMap
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import (
    PatternRewriter,
    PatternRewriteWalker,
    RewritePattern,
    op_type_rewrite_pattern,
)
from xdsl.rewriter import InsertPoint, Rewriter

from mx.runtime.parallel_for import PREFIX

PARALLEL = "mx.parallel"
"""The unit attribute of an `affine.for` whose iterations may run in parallel."""


PARALLEL_BLOCK = "mx.parallel_block"
"""The unit attribute of an `affine.for` over one block of a parallel loop's
blocks (module docs)."""


def mark_parallel(body: Block) -> None:
    """Marks the affine.for whose body is `body` as parallel (module docs)."""
    loop = body.parent_op()
    assert isinstance(loop, affine.ForOp)
    loop.attributes[PARALLEL] = UnitAttr()


def mark_parallel_block(body: Block) -> None:
    """Marks the affine.for whose body is `body` as running over one block of
    the parallel loop whose induction variable gives both its bounds."""
    loop = body.parent_op()
    assert isinstance(loop, affine.ForOp)
    loop.attributes[PARALLEL_BLOCK] = UnitAttr()


def _block_step(loop: Operation, block: SSAValue) -> int | None:
    """S if `loop` is a block loop (module docs) of `block`: from `block * S`
    to min(`block * S + S`, ...), else None."""
    if not isinstance(loop, affine.ForOp) or PARALLEL_BLOCK not in loop.attributes:
        return None
    bounds = (list(loop.lowerBoundOperands), list(loop.upperBoundOperands))
    if bounds != ([block], [block]):
        return None
    lower, upper = loop.lowerBoundMap.data, loop.upperBoundMap.data
    if lower.num_dims != 1 or lower.num_symbols or len(lower.results) != 1:
        return None
    if lower.eval([0], []) != (0,) or upper.num_dims != 1 or upper.num_symbols:
        return None
    step = lower.eval([1], [])[0]
    first = AffineMap(1, 0, (upper.results[0],))
    if step <= 0 or lower.eval([2], []) != (2 * step,):
        return None
    if first.eval([0], []) != (step,) or first.eval([1], []) != (2 * step,):
        return None
    return step


def _block_loops(loop: affine.ForOp) -> list[affine.ForOp] | None:
    """The block loops of `loop`'s induction variable if it has no other use."""
    block = loop.body.block.args[0]
    found: list[affine.ForOp] = []
    for use in block.uses:
        user = use.operation
        if _block_step(user, block) is None:
            return None
        assert isinstance(user, affine.ForOp)
        if user not in found:
            found.append(user)
    return found or None


def _range_of_blocks(loops: list[affine.ForOp], lo: SSAValue, hi: SSAValue) -> None:
    """Each block loop made to run from `lo * S` to min(`hi * S`, ...)."""
    for inner in loops:
        upper = inner.upperBoundMap.data
        lower = inner.lowerBoundMap.data
        ranged = AffineMap(1, 0, (lower.results[0], *upper.results[1:]))
        inner.upperBoundMap = AffineMapAttr(ranged)
        inner.operands = [lo, hi, *inner.operands[2:]]


def _trip_count(loop: affine.ForOp) -> int | None:
    """N for a loop from 0 to N by 1 carrying nothing, else None."""
    lower = loop.lowerBoundMap.data
    upper = loop.upperBoundMap.data
    if (
        loop.inits
        or loop.step.value.data != 1
        or lower.num_dims + lower.num_symbols
        or upper.num_dims + upper.num_symbols
        or lower.eval([], []) != (0,)
        or len(upper.results) != 1
    ):
        return None
    return upper.eval([], [])[0]


def _defined_in(value: SSAValue, loop: Operation) -> bool:
    owner = value.owner
    if isinstance(owner, Block):
        parent = owner.parent_op()
        return parent is not None and loop.is_ancestor(parent)
    return loop.is_ancestor(owner)


def _captures(loop: Operation) -> tuple[list[SSAValue], list[arith.ConstantOp]]:
    """The values defined outside `loop` that its body uses, in order of first
    use: the constants apart."""
    values: list[SSAValue] = []
    constants: list[arith.ConstantOp] = []
    seen: set[SSAValue] = set()
    for op in loop.walk():
        for value in op.operands:
            if value in seen or _defined_in(value, loop):
                continue
            seen.add(value)
            if isinstance(value.owner, arith.ConstantOp):
                constants.append(value.owner)
            else:
                values.append(value)
    return values, constants


def fresh_function_name(module: ModuleOp, stem: str) -> str:
    """`stem_K` for the least K naming no function of `module`."""
    taken = {op.sym_name.data for op in module.ops if isinstance(op, func.FuncOp)}
    k = 0
    while f"{stem}_{k}" in taken:
        k += 1
    return f"{stem}_{k}"


class OutlineParallelLoop(RewritePattern):
    """`affine.for %i = 0 to N {body} {mx.parallel}` -> a call of the
    trampoline `@_mx_parallel_for_F(N, captured...)` (declared), with
    `@F(%lo, %hi, captured...)` running `affine.for %i = %lo to %hi {body}`,
    the body's scratch allocations hoisted out of the loop; or, for a loop
    over blocks (module docs), the body once over blocks [%lo, %hi)."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: affine.ForOp, rewriter: PatternRewriter, /):
        if PARALLEL not in op.attributes:
            return
        function = op.parent_op()
        while function is not None and not isinstance(function, func.FuncOp):
            function = function.parent_op()
        count = _trip_count(op)
        module = function.parent_op() if function is not None else None
        if function is None or count is None or not isinstance(module, ModuleOp):
            del op.attributes[PARALLEL]  # not a loop this pass can outline
            rewriter.has_done_action = True
            return
        values, constants = _captures(op)
        types: list[Attribute] = [IndexType(), IndexType(), *(v.type for v in values)]
        entry = Block(arg_types=types)
        lo, hi = entry.args[0], entry.args[1]
        lo.name_hint, hi.name_hint = "lo", "hi"
        copies: dict[SSAValue, SSAValue] = dict(
            zip(values, entry.args[2:], strict=True)
        )
        for constant in constants:
            copy = constant.clone()
            entry.add_op(copy)
            copies[constant.result] = copy.result
        for value, copy in copies.items():
            value.replace_uses_with_if(copy, lambda use: op.is_ancestor(use.operation))
        if (block_loops := _block_loops(op)) is not None:
            # The body once, over blocks [lo, hi).
            _range_of_blocks(block_loops, lo, hi)
            for inner in list(op.body.block.ops):
                if not isinstance(inner, affine.YieldOp):
                    inner.detach()
                    entry.add_op(inner)
        else:
            identity = AffineMapAttr(AffineMap.identity(1))
            chunk = affine.ForOp.from_region(
                [lo], [hi], [], [], identity, identity, op.detach_region(op.body)
            )
            entry.add_op(chunk)
            body = chunk.body.block
            for scratch in [o for o in body.ops if isinstance(o, memref.AllocOp)]:
                scratch.detach()
                entry.insert_op_before(scratch, chunk)
            for free in [o for o in body.ops if isinstance(o, memref.DeallocOp)]:
                free.detach()
                entry.add_op(free)
        entry.add_op(func.ReturnOp())
        name = fresh_function_name(module, f"{function.sym_name.data}__parallel")
        outlined = func.FuncOp(name, (types, []), Region(entry), "private")
        trampoline = func.FuncOp.external(PREFIX + name, types[1:], [])
        Rewriter.insert_op([outlined, trampoline], InsertPoint.after(function))
        trip = arith.ConstantOp(IntegerAttr(count, IndexType()))
        call = func.CallOp(PREFIX + name, [trip.result, *values], [])
        rewriter.replace(op, [trip, call], [])


@dataclass(frozen=True)
class OutlineParallelLoopsPass(ModulePass):
    """Moves the loops marked `mx.parallel` into functions run on threads."""

    name = "outline-parallel-loops"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        PatternRewriteWalker(
            OutlineParallelLoop(), apply_recursively=False
        ).rewrite_module(op)

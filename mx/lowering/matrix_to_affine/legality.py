"""What `convert-matrix-to-affine` can lower, checked before it changes anything.

An op may carry matrices (operands, results, arguments of its regions'
blocks) only if the lowering knows what it does with them: the matrix and
arbfp ops, `func`, `arith.select`, the control flow whose edges `carriers.py`
describes. Anything else is reported at the op, with nothing rewritten yet.
A memref or vector of matrices is refused too: a matrix is a value, not a
memory element type. And a matrix used before its definition in the same
block (IR that does not verify, e.g. `%m = matrix.add %m, %m`) is reported
instead of being followed around its cycle.
"""

from typing import cast

from xdsl.dialects import affine, arith, func, scf
from xdsl.dialects.builtin import MemRefType, ModuleOp, VectorType
from xdsl.ir import Attribute, Block, Operation, SSAValue

from mx.diagnostics import OpDiagnostic
from mx.dialects import arbfp
from mx.dialects.matrix import MatrixOp, MatrixType
from mx.lowering.matrix_to_affine.carriers import region_slots, successor_operands
from mx.lowering.walk import walk

_VALUE_OPS = (
    MatrixOp,
    arbfp.ConvertFromOp,
    arbfp.ConvertToOp,
    arbfp.ScaledConvertFromOp,
    arbfp.ScaledConvertToOp,
    arith.SelectOp,
    func.FuncOp,
    func.CallOp,
    func.ReturnOp,
    scf.YieldOp,
    scf.ConditionOp,
    affine.YieldOp,
)
"""Ops whose matrix operands and results the patterns lower directly."""


def _contains_matrix(t: Attribute) -> bool:
    """True for a memref or vector of matrices (also nested)."""
    container = False
    while isinstance(t, MemRefType | VectorType):
        t = cast(Attribute, t.get_element_type())  # pyright: ignore[reportUnknownMemberType]
        container = True
    return container and isinstance(t, MatrixType)


def _carries_matrix(op: Operation) -> bool:
    values: list[SSAValue] = [*op.operands, *op.results]
    values += [a for r in op.regions if r.first_block for a in r.first_block.args]
    return any(isinstance(v.type, MatrixType) for v in values)


def _lowerable(op: Operation) -> bool:
    if isinstance(op, _VALUE_OPS):
        return True
    if op.regions:
        return region_slots(op) is not None
    if op.successors:
        return successor_operands(op) is not None
    return False


def _check_order(block: Block) -> None:
    position = {op: i for i, op in enumerate(block.ops)}
    for i, op in enumerate(block.ops):
        for operand in op.operands:
            owner = operand.owner
            if (
                isinstance(operand.type, MatrixType)
                and isinstance(owner, Operation)
                and position.get(owner, -1) >= i
            ):
                raise OpDiagnostic(
                    op, f"operand of '{op.name}' is used before its definition"
                )


def check_lowerable(module: ModuleOp) -> None:
    """Raise a located diagnostic at the first op the lowering cannot handle."""
    for op in walk(module):
        types = [v.type for v in (*op.operands, *op.results)]
        types += [a.type for r in op.regions for b in r.blocks for a in b.args]
        if isinstance(op, func.FuncOp):
            types += op.function_type.outputs
        if any(_contains_matrix(t) for t in types):
            raise OpDiagnostic(
                op,
                f"'{op.name}' uses a memref or vector of matrices, which cannot be "
                "lowered: a matrix is a value, not a memory element type",
            )
        if _carries_matrix(op) and not _lowerable(op):
            raise OpDiagnostic(
                op, f"'{op.name}' with a matrix operand or result cannot be lowered"
            )
        for region in op.regions:
            for block in region.blocks:
                _check_order(block)

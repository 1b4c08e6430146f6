"""Look-up tables of decoded values as constant module globals."""

import numpy as np
from xdsl.dialects import arith, memref
from xdsl.dialects.builtin import (
    DenseIntOrFPElementsAttr,
    IndexType,
    MemRefType,
    ModuleOp,
    StringAttr,
    TensorType,
    UnitAttr,
    f32,
    i32,
)
from xdsl.ir import Operation, SSAValue

from mx.lowering.matrix_to_affine.elements import Emitter
from mx.semantics.arbfp import FloatFormat, decode_scalar


def _module(op: Operation) -> ModuleOp:
    """The module `op` is in."""
    parent = op.parent_op()
    while parent is not None and not isinstance(parent, ModuleOp):
        parent = parent.parent_op()
    assert parent is not None, "a table needs the ops to be in a module"
    return parent


def value_table(e: Emitter, fmt: FloatFormat, user: Operation) -> SSAValue:
    """A `memref<2^bits x i32>` of the f32 bits of every encoding of `fmt`
    (exact: the formats of 8 bits or fewer are f32 values; NaN encodings
    are f32's default quiet NaN): a private constant global of the module
    `user` is in, made once per module and format. Bits rather than floats:
    the table prints and parses the same in every MLIR (NaN and subnormal
    literals)."""
    module = _module(user)
    name = f"__mx_{fmt.keyword}_f32_bits"
    count = 1 << fmt.bits
    type_ = MemRefType(i32, [count])
    if not any(
        isinstance(op, memref.GlobalOp) and op.sym_name.data == name
        for op in module.ops
    ):
        values = np.array([decode_scalar(fmt, c) for c in range(count)], np.float32)
        bits = [int(b) for b in values.view(np.int32)]
        table = memref.GlobalOp.get(
            StringAttr(name),
            type_,
            DenseIntOrFPElementsAttr.from_list(TensorType(i32, [count]), bits),
            constant=UnitAttr(),
            alignment=64,
        )
        body = module.body.block
        if body.first_op is None:
            body.add_op(table)
        else:
            body.insert_op_before(table, body.first_op)
    return e.emit(memref.GetGlobalOp(name, type_))


def look_up(e: Emitter, table: SSAValue, code: SSAValue) -> SSAValue:
    """The f32 of an encoding (an integer of 8 bits or fewer, unsigned) in
    `value_table`'s `table`."""
    wide = e.emit(arith.ExtUIOp(code, i32))
    index = e.emit(arith.IndexCastOp(wide, IndexType()))
    bits = e.emit(memref.LoadOp.get(table, [index]))
    return e.emit(arith.BitcastOp(bits, f32))

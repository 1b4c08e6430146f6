"""The op builders of `mx.lowering.build` and `mx.lowering.llvm.build` make
the ops xDSL's constructors make: same class, operands, result types,
properties and attributes (and the same printed form)."""

import io
from collections.abc import Callable

import pytest
from xdsl.dialects import affine, arith, llvm, memref, test, vector
from xdsl.dialects.builtin import (
    AffineMapAttr,
    DenseArrayBase,
    DenseIntOrFPElementsAttr,
    IndexType,
    IntegerAttr,
    MemRefType,
    UnrealizedConversionCastOp,
    VectorType,
    f32,
    i1,
    i32,
    i64,
)
from xdsl.ir import Block, Operation, Region
from xdsl.ir.affine import AffineMap
from xdsl.printer import Printer

from mx.lowering import build
from mx.lowering.llvm import build as llvm_build

_block = Block(
    arg_types=[
        i64,
        i64,
        VectorType(f32, [4]),
        VectorType(f32, [4]),
        MemRefType(f32, [4, 4]),
        IndexType(),
        IndexType(),
        f32,
        VectorType(i64, [2]),
    ]
)
X, Y, U, V, M, IDX_I, IDX_J, S, W = _block.args
MAP = AffineMapAttr(AffineMap.identity(2))
MASK = DenseArrayBase.from_list(i32, [0, 4, 1, 5])
FAST = arith.FastMathFlagsAttr("fast")
SPLAT = DenseIntOrFPElementsAttr.from_list(VectorType(i32, [4]), [7])


def _loop_body() -> Region:
    """A loop body carrying one vector: `affine.yield` of the carried value."""
    block = Block(arg_types=[IndexType(), U.type])
    block.add_op(affine.YieldOp.get(block.args[1]))
    return Region(block)


CASES: dict[str, tuple[Callable[[], Operation], Callable[[], Operation]]] = {
    "index_constant": (
        lambda: build.index_constant(-3),
        lambda: arith.ConstantOp(IntegerAttr(-3, IndexType())),
    ),
    "constant splat": (
        lambda: build.constant(SPLAT),
        lambda: arith.ConstantOp(SPLAT),
    ),
    "addf": (lambda: build.binary(arith.AddfOp, U, V), lambda: arith.AddfOp(U, V)),
    "mulf fast": (
        lambda: build.binary(arith.MulfOp, U, V, FAST),
        lambda: arith.MulfOp(U, V, FAST),
    ),
    "addi": (
        lambda: build.binary(arith.AddiOp, IDX_I, IDX_J),
        lambda: arith.AddiOp(IDX_I, IDX_J),
    ),
    "divsi": (lambda: build.binary(arith.DivSIOp, X, Y), lambda: arith.DivSIOp(X, Y)),
    "vector.load": (
        lambda: build.vector_load(M, [IDX_I, IDX_J], VectorType(f32, [4])),
        lambda: vector.LoadOp(M, [IDX_I, IDX_J], VectorType(f32, [4])),
    ),
    "vector.store": (
        lambda: build.vector_store(U, M, [IDX_I, IDX_J]),
        lambda: vector.StoreOp(U, M, [IDX_I, IDX_J]),
    ),
    "vector.broadcast": (
        lambda: build.broadcast(S, VectorType(f32, [4])),
        lambda: vector.BroadcastOp(S, VectorType(f32, [4])),
    ),
    "affine.load": (
        lambda: build.affine_load(M, [IDX_I, IDX_J], MAP),
        lambda: affine.LoadOp(M, [IDX_I, IDX_J], MAP),
    ),
    "affine.store": (
        lambda: build.affine_store(S, M, [IDX_I, IDX_J], MAP),
        lambda: affine.StoreOp(S, M, [IDX_I, IDX_J], MAP),
    ),
    "memref.alloca": (
        lambda: build.stack_buffer(MemRefType(f32, [4, 4]), IntegerAttr(64, 64)),
        lambda: memref.AllocaOp.build(
            operands=[[], []],
            result_types=[MemRefType(f32, [4, 4])],
            properties={"alignment": IntegerAttr(64, 64)},
        ),
    ),
    "affine.for": (
        lambda: build.affine_for(0, 4, [U], _loop_body()),
        lambda: affine.ForOp.from_region([], [], [U], [U.type], 0, 4, _loop_body()),
    ),
    "cast": (
        lambda: build.cast(IDX_I, i64),
        lambda: UnrealizedConversionCastOp.get([IDX_I], [i64]),
    ),
    "icmp": (
        lambda: llvm_build.icmp(X, Y, "slt"),
        lambda: llvm.ICmpOp(X, Y, IntegerAttr(2, 64)),
    ),
    "icmp vector": (
        lambda: llvm_build.icmp(W, W, "eq"),
        lambda: llvm.ICmpOp(W, W, IntegerAttr(0, 64)),
    ),
    "llvm.add": (
        lambda: llvm_build.integer_binary(llvm.AddOp, X, Y),
        lambda: llvm.AddOp(X, Y),
    ),
    "llvm.mul nsw": (
        lambda: llvm_build.integer_binary(
            llvm.MulOp, X, Y, llvm.OverflowAttr([llvm.OverflowFlag.NO_SIGNED_WRAP])
        ),
        lambda: llvm.MulOp(
            X, Y, overflow=llvm.OverflowAttr([llvm.OverflowFlag.NO_SIGNED_WRAP])
        ),
    ),
    "llvm.mlir.constant": (
        lambda: llvm_build.constant(IntegerAttr(7, i64), i64),
        lambda: llvm.ConstantOp(IntegerAttr(7, i64), i64),
    ),
    "llvm.mlir.undef": (
        lambda: llvm_build.undef(VectorType(f32, [4])),
        lambda: llvm.UndefOp(VectorType(f32, [4])),
    ),
    "llvm.insertelement": (
        lambda: llvm_build.insert_element(U, S, X),
        lambda: llvm.InsertElementOp(U, S, X),
    ),
    "llvm.shufflevector": (
        lambda: llvm_build.shuffle_vector(U, V, MASK, VectorType(f32, [4])),
        lambda: llvm.ShuffleVectorOp(U, V, MASK, VectorType(f32, [4])),
    ),
    "llvm.fadd": (
        lambda: llvm_build.fastmath_op(
            llvm.FAddOp, [U, V], U.type, llvm.FastMathAttr("fast")
        ),
        lambda: llvm.FAddOp(U, V, llvm.FastMathAttr("fast")),
    ),
    "llvm.alloca": (
        lambda: llvm_build.alloca(X, f32, 64),
        lambda: llvm.AllocaOp(X, f32, 64),
    ),
}


@pytest.mark.parametrize("name", CASES)
def test_builder_makes_the_constructors_op(name: str) -> None:
    built, constructed = (make() for make in CASES[name])
    assert type(built) is type(constructed)
    assert list(built.operands) == list(constructed.operands)
    assert list(built.result_types) == list(constructed.result_types)
    assert built.properties == constructed.properties
    assert built.attributes == constructed.attributes
    assert str(built) == str(constructed)
    built.verify()


def test_branch_builders_build_the_ops_xdsl_constructors_build() -> None:
    # The same ops, operand segments included, for every count of successor
    # operands (printed generically: the successors' operands by segment).
    def generic(op: llvm.BrOp | llvm.CondBrOp) -> str:
        out = io.StringIO()
        Printer(stream=out, print_generic_format=True).print_op(op)
        return out.getvalue()

    values = test.TestOp(result_types=[i1, i64, i64, i64])
    flag, *args = values.results
    then, other = Block(arg_types=[i64] * 3), Block(arg_types=[i64] * 3)
    for n in range(4):
        assert generic(llvm_build.branch(then, args[:n])) == generic(
            llvm.BrOp(then, *args[:n])
        )
        for m in range(4):
            built = llvm_build.cond_branch(flag, then, args[:n], other, args[:m])
            expected = llvm.CondBrOp(flag, then, args[:n], other, args[:m])
            assert generic(built) == generic(expected)
            assert built.then_arguments == expected.then_arguments
            assert built.else_arguments == expected.else_arguments

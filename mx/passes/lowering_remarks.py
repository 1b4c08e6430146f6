"""`matrix-lowering-remarks`: what the lowered code of each function will do.

The analogue of LowerMatrixIntrinsics' `matrix-lowered` remark: per
`func.func`, the scalar work the lowering (`convert-matrix-to-affine`) emits
for the matrix ops, so a user can see what a transform bought:

- `loads` / `stores`: elements read and written by the matrix loads/stores;
- `multiplies`, `adds`, `fmas`, `divides`: scalar arithmetic (sub counts as an
  add, neg is free of rounding and not counted). Products follow docs/matrix-dialect.md's
  order: an RxK·KxC matmul does R·C·K multiplies and R·C·(K-1) adds; with
  `contract` each multiply that feeds an add becomes an fma (R·C multiplies,
  R·C·(K-1) fmas). `matmul_add` and a biased `matvec` add one more add per
  result element (an fma under `contract`);

The next counts are what the lowering actually emits: the pass lowers a copy
of the module with `convert-matrix-to-affine` (its `vector-bits` and
`stack-bytes` options are this pass's) and counts

- `transposes`: copies that read a matrix with swapped indices (a transposed
  operand copied so that its columns can be read as vectors, a transpose
  written to a result, a store or a carried buffer);
- `temporaries`: buffers filled with a copy of a value that exists elsewhere
  (such operand copies, packed blocks of cache-blocked products, copies made
  by an `insert` that cannot update its matrix in place);
- `stack_bytes` and `heap_buffers`: the function's buffers once those with
  disjoint lifetimes are shared.

The counts go to stderr (`remark: @f: lowered with ...`), and with
`annotate=true` also onto the function as a `matrix.lowered` dictionary.
After them, one located remark per contraction names the kernel the
lowering gave it and, if it is not the fastest for that contraction, why
(`matrix_to_affine/kernel_remarks.py`):

    f.mlir:4:8: remark: 'matrix.matvec' op kernel: vectorized; not fused block-scaled vector: rows not a multiple of 32

The pass does not change the IR otherwise.
"""

from __future__ import annotations

import sys
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from typing import ClassVar

from xdsl.context import Context
from xdsl.dialects import builtin, func, memref
from xdsl.dialects.builtin import (
    DictionaryAttr,
    IntegerAttr,
    MemRefType,
    VectorType,
    i64,
)
from xdsl.dialects.utils.fast_math import FastMathFlag
from xdsl.ir import Attribute, Operation
from xdsl.passes import ModulePass

from mx.dialects.matrix import (
    AddOp,
    DivOp,
    FmaOp,
    LoadOp,
    MatmulAddOp,
    MatmulOp,
    MatrixOp,
    MatrixType,
    MatvecOp,
    MulOp,
    OuterProductOp,
    StoreOp,
    SubOp,
)
from mx.lowering.matrix_to_affine.buffers import memref_bytes
from mx.lowering.matrix_to_affine.convert_matrix_to_affine import (
    VECTOR_BITS,
    ConvertMatrixToAffinePass,
)
from mx.passes.options import check_option_choices

KEYS = (
    "loads",
    "stores",
    "multiplies",
    "adds",
    "fmas",
    "divides",
    "transposes",
    "temporaries",
    "stack_bytes",
    "heap_buffers",
)


def _elements(t: Attribute) -> int:
    assert isinstance(t, MatrixType)
    return t.num_elements


def _contracts(op: MatrixOp) -> bool:
    return FastMathFlag.ALLOW_CONTRACT in op.fastmath_flags().data


def _product_counts(
    op: MatrixOp, outputs: int, k: int, accumulates: bool
) -> Counter[str]:
    products = outputs * k
    sums = outputs * (k - 1) + (outputs if accumulates else 0)
    if _contracts(op):
        return Counter(multiplies=products - sums, fmas=sums)
    return Counter(multiplies=products, adds=sums)


def op_counts(op: Operation) -> Counter[str]:
    """The scalar work the lowering of one op performs."""
    match op:
        case LoadOp():
            return Counter(loads=_elements(op.result.type))
        case StoreOp():
            return Counter(stores=_elements(op.value.type))
        case AddOp() | SubOp():
            return Counter(adds=_elements(op.result.type))
        case MulOp():
            return Counter(multiplies=_elements(op.result.type))
        case DivOp():
            return Counter(divides=_elements(op.result.type))
        case FmaOp():
            return Counter(fmas=_elements(op.result.type))
        case OuterProductOp():
            return Counter(multiplies=_elements(op.result.type))
        case MatmulOp() | MatmulAddOp():
            a = op.lhs.type
            assert isinstance(a, MatrixType)
            return _product_counts(
                op, _elements(op.result.type), a.cols, isinstance(op, MatmulAddOp)
            )
        case MatvecOp():
            m = op.matrix.type
            assert isinstance(m, MatrixType) and isinstance(op.result.type, VectorType)
            return _product_counts(op, m.rows, m.cols, op.bias is not None)
        case _:
            return Counter()


def buffer_counts(lowered: func.FuncOp) -> Counter[str]:
    """Stack bytes and heap buffers a lowered function allocates."""
    total: Counter[str] = Counter()
    for op in lowered.walk():
        if isinstance(op, memref.AllocaOp):
            t = op.memref.type
            assert isinstance(t, MemRefType)
            total["stack_bytes"] += memref_bytes(t)
        elif isinstance(op, memref.AllocOp):
            total["heap_buffers"] += 1
    return total


def function_counts(f: func.FuncOp, emitted: Counter[str]) -> dict[str, int]:
    """The counts of `f`, given what the lowering `emitted` for it."""
    total = emitted.copy()
    for op in f.walk():
        total.update(op_counts(op))
    return {key: total[key] for key in KEYS}


@dataclass(frozen=True)
class MatrixLoweringRemarksPass(ModulePass):
    """Reports per function the work of the lowered matrix code (module docstring)."""

    name = "matrix-lowering-remarks"

    annotate: bool = False
    """Also attach the counts to each function as a `matrix.lowered` attribute."""

    vector_bits: int = ConvertMatrixToAffinePass.vector_bits
    """`convert-matrix-to-affine`'s option of that name."""

    stack_bytes: int = ConvertMatrixToAffinePass.stack_bytes
    """`convert-matrix-to-affine`'s option of that name."""

    option_choices: ClassVar[dict[str, Sequence[object]]] = {"vector_bits": VECTOR_BITS}

    def __post_init__(self) -> None:
        check_option_choices(self)

    def apply(self, ctx: Context, op: builtin.ModuleOp) -> None:
        lowered = op.clone()
        state = ConvertMatrixToAffinePass(
            vector_bits=self.vector_bits, stack_bytes=self.stack_bytes
        ).lower(lowered)
        functions = [f for f in op.walk() if isinstance(f, func.FuncOp)]
        lowered_functions = [f for f in lowered.walk() if isinstance(f, func.FuncOp)]
        for f, g in zip(functions, lowered_functions, strict=True):
            counts = function_counts(
                f, state.emitted.get(g, Counter()) + buffer_counts(g)
            )
            text = ", ".join(f"{v} {k}" for k, v in counts.items())
            print(f"remark: @{f.sym_name.data}: lowered with {text}", file=sys.stderr)
            for kernel in state.kernels:
                if kernel.function == g.sym_name.data:
                    print(kernel, file=sys.stderr)
            if self.annotate:
                f.attributes["matrix.lowered"] = DictionaryAttr(
                    {k: IntegerAttr(v, i64) for k, v in counts.items()}
                )

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
- `transposes`: transposes that are materialized (copied), with the
  definition of `mx.passes.fold_transposes.is_materialized`.

The counts go to stderr (`remark: @f: lowered with ...`), and with
`annotate=true` also onto the function as a `matrix.lowered` dictionary.
The pass does not change the IR otherwise.
"""

from __future__ import annotations

import sys
from collections import Counter
from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import builtin, func
from xdsl.dialects.builtin import DictionaryAttr, IntegerAttr, VectorType, i64
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
    TransposeOp,
)
from mx.passes.fold_transposes import is_materialized

KEYS = ("loads", "stores", "multiplies", "adds", "fmas", "divides", "transposes")


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
        case TransposeOp() if is_materialized(op):
            return Counter(transposes=1)
        case _:
            return Counter()


def function_counts(f: func.FuncOp) -> dict[str, int]:
    total: Counter[str] = Counter()
    for op in f.walk():
        total.update(op_counts(op))
    return {key: total[key] for key in KEYS}


@dataclass(frozen=True)
class MatrixLoweringRemarksPass(ModulePass):
    """Reports per function the work of the lowered matrix code (module docstring)."""

    name = "matrix-lowering-remarks"

    annotate: bool = False
    """Also attach the counts to each function as a `matrix.lowered` attribute."""

    def apply(self, ctx: Context, op: builtin.ModuleOp) -> None:
        for f in op.walk():
            if not isinstance(f, func.FuncOp):
                continue
            counts = function_counts(f)
            text = ", ".join(f"{v} {k}" for k, v in counts.items())
            print(f"remark: @{f.sym_name.data}: lowered with {text}", file=sys.stderr)
            if self.annotate:
                f.attributes["matrix.lowered"] = DictionaryAttr(
                    {k: IntegerAttr(v, i64) for k, v in counts.items()}
                )

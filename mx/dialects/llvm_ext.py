"""LLVM-dialect operations that xDSL 0.75's `llvm` dialect lacks.

They carry MLIR's own names and syntax (`llvm.extractelement`, `llvm.fptosi`,
`llvm.fptoui`, `llvm.uitofp`), so the printed IR reads exactly as MLIR's and
these classes could be moved into `xdsl.dialects.llvm` unchanged.
"""

from typing import ClassVar

from xdsl.dialects.builtin import (
    AnyFloatConstr,
    IntegerType,
    SignlessIntegerConstraint,
    VectorType,
)
from xdsl.dialects.llvm import GenericCastOp
from xdsl.ir import Attribute, Dialect, Operation, SSAValue
from xdsl.irdl import (
    AnyAttr,
    IRDLOperation,
    VarConstraint,
    irdl_op_definition,
    operand_def,
    result_def,
    traits_def,
)
from xdsl.traits import NoMemoryEffect
from xdsl.utils.exceptions import VerifyException


@irdl_op_definition
class ExtractElementOp(IRDLOperation):
    """Extracts one element of a 1-D vector at a dynamic index."""

    name = "llvm.extractelement"

    ELEMENT: ClassVar = VarConstraint("ELEMENT", AnyAttr())

    vector = operand_def(VectorType.constr(ELEMENT))
    position = operand_def(SignlessIntegerConstraint)
    res = result_def(ELEMENT)

    traits = traits_def(NoMemoryEffect())

    assembly_format = (
        "$vector `[` $position `:` type($position) `]` attr-dict `:` type($vector)"
    )

    def __init__(self, vector: SSAValue | Operation, position: SSAValue | Operation):
        vector_type = SSAValue.get(vector).type
        assert isinstance(vector_type, VectorType)
        super().__init__(
            operands=[vector, position], result_types=[vector_type.element_type]
        )

    def verify_(self) -> None:
        assert isinstance(self.vector.type, VectorType)
        if self.vector.type.get_num_dims() != 1:
            raise VerifyException("llvm.extractelement expects a 1-D vector")


def _element(type_: Attribute) -> Attribute:
    return type_.element_type if isinstance(type_, VectorType) else type_


class _FloatToIntOp(GenericCastOp):
    def verify_(self) -> None:
        if not AnyFloatConstr.verifies(_element(self.arg.type)):
            raise VerifyException(f"{self.name} expects a float operand")
        if not isinstance(_element(self.result.type), IntegerType):
            raise VerifyException(f"{self.name} expects an integer result")


class _IntToFloatOp(GenericCastOp):
    def verify_(self) -> None:
        if not isinstance(_element(self.arg.type), IntegerType):
            raise VerifyException(f"{self.name} expects an integer operand")
        if not AnyFloatConstr.verifies(_element(self.result.type)):
            raise VerifyException(f"{self.name} expects a float result")


@irdl_op_definition
class FPToSIOp(_FloatToIntOp):
    """Float to signed integer, rounding toward zero."""

    name = "llvm.fptosi"


@irdl_op_definition
class FPToUIOp(_FloatToIntOp):
    """Float to unsigned integer, rounding toward zero."""

    name = "llvm.fptoui"


@irdl_op_definition
class UIToFPOp(_IntToFloatOp):
    """Unsigned integer to float, rounding to nearest even."""

    name = "llvm.uitofp"


LLVMExt = Dialect("llvm_ext", [ExtractElementOp, FPToSIOp, FPToUIOp, UIToFPOp])

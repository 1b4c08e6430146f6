"""`llvm`-dialect module -> LLVM IR text (LLVM 16+, opaque pointers).

Symbol names are spelled by `llvm_symbol` (quoted and escaped unless they are
plain identifiers). Block arguments become `phi` nodes, `llvm.mlir.constant`/`undef`/`zero`/
`addressof` become inline constants, intrinsic ops become calls to the
mangled intrinsic with a `declare`. Floats print in LLVM's exact hex forms
(`0x` double bits, `0xH` half, `0xR` bfloat), so nothing is rounded twice.
"""

import contextlib
import json
import os
import platform
import re
import struct
import subprocess
import sys
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cache
from importlib.metadata import version
from pathlib import Path
from typing import IO, ClassVar

from xdsl.context import Context
from xdsl.dialects import llvm
from xdsl.dialects.builtin import (
    BFloat16Type,
    DenseIntOrFPElementsAttr,
    Float16Type,
    Float32Type,
    Float64Type,
    Float80Type,
    Float128Type,
    FloatAttr,
    IntegerAttr,
    IntegerType,
    ModuleOp,
    VectorType,
)
from xdsl.ir import Attribute, Block, Operation, SSAValue
from xdsl.utils.exceptions import DiagnosticException
from xdsl.utils.target import Target

from mx.compile_memos import forget_with_compiles
from mx.dialects import llvm_ext
from mx.runtime.parallel_for import define_trampolines

# ---------------------------------------------------------------- names

_PLAIN_NAME = re.compile(r"[-a-zA-Z$._][-a-zA-Z$._0-9]*")


def function_attributes(branches: bool) -> str:
    """What follows a function's parameters in its `define`: a function that
    branches (one with a loop) aligns its stack to 64 bytes. LLVM realigns a
    frame for a 512-bit spill slot only if it knows before register
    allocation (a 64-byte-aligned alloca); otherwise it spills to 16-byte
    slots, where a zmm spill or reload straddles two cache lines. From DRAM,
    2048 x 4096 MXFP4, one thread: the threaded row-major kernel's outlined
    loop 121 -> 108 ps a weight, row-major matrix arguments 118 -> 104; other
    decode kernels, the GEMM and a 4x4 call unchanged. Straight-line
    functions keep their frames."""
    return " alignstack(64)" if branches else ""


def llvm_symbol(name: str) -> str:
    """A global's name as LLVM IR writes it: `@name` if it is a plain
    identifier, else `@"..."` with `"`, `\\`, control and non-ASCII bytes
    (UTF-8) escaped as `\\XX`, as LLVM's own printer does."""
    if _PLAIN_NAME.fullmatch(name):
        return f"@{name}"
    escaped = "".join(
        f"\\{byte:02X}"
        if byte < 0x20 or byte >= 0x7F or chr(byte) in '"\\'
        else chr(byte)
        for byte in name.encode()
    )
    return f'@"{escaped}"'


# ---------------------------------------------------------------- types


_type_strs: dict[int, tuple[Attribute, str]] = {}
"""`type_str` by the `id` of the type, with the type (kept alive, so that its
id is not reused): a lowered module spells a few type objects thousands of
times."""
forget_with_compiles(_type_strs.clear)


def type_str(type_: Attribute) -> str:
    """The LLVM IR spelling of a type."""
    known = _type_strs.get(id(type_))
    if known is not None:
        return known[1]
    spelled = _spell_type(type_)
    if len(_type_strs) >= 4096:  # a bound on what a long-lived process keeps
        _type_strs.clear()
    _type_strs[id(type_)] = (type_, spelled)
    return spelled


def _spell_type(type_: Attribute) -> str:
    match type_:
        case IntegerType():
            return f"i{type_.width.data}"
        case Float16Type():
            return "half"
        case BFloat16Type():
            return "bfloat"
        case Float32Type():
            return "float"
        case Float64Type():
            return "double"
        case Float80Type():
            return "x86_fp80"
        case Float128Type():
            return "fp128"
        case VectorType():
            (lanes,) = type_.get_shape()
            return f"<{lanes} x {type_str(type_.element_type)}>"
        case llvm.LLVMPointerType():
            return "ptr"
        case llvm.LLVMVoidType():
            return "void"
        case llvm.LLVMArrayType():
            return f"[{type_.size.data} x {type_str(type_.type)}]"
        case llvm.LLVMStructType():
            return "{ " + ", ".join(type_str(t) for t in type_.types) + " }"
        case _:
            raise DiagnosticException(f"no LLVM IR type for {type_}")


def _mangle(type_: Attribute) -> str:
    """Overloaded-intrinsic suffix of a type (`f32`, `v4f32`, `bf16`, `p0`)."""
    match type_:
        case VectorType():
            return f"v{type_.get_shape()[0]}{_mangle(type_.element_type)}"
        case llvm.LLVMPointerType():
            return "p0"
        case BFloat16Type():
            return "bf16"
        case Float16Type() | Float32Type() | Float64Type():
            return f"f{type_.bitwidth}"
        case _:
            return type_str(type_)


# ------------------------------------------------------------ constants


def float_literal(value: float, type_: Attribute) -> str:
    """A float constant in LLVM's exact hexadecimal notation. NaN payloads
    and signalling NaNs are kept: with mx's xDSL fixes (`mx.xdsl_compat`) the
    float types' conversions are exact."""
    if isinstance(type_, Float16Type | BFloat16Type):
        bits = int.from_bytes(type_.pack((value,)), "little")
        return f"0x{'H' if isinstance(type_, Float16Type) else 'R'}{bits:04X}"
    if isinstance(type_, Float32Type):
        # A float constant is written as the double of the same value.
        value = type_.round(value)
    return "0x{:016X}".format(struct.unpack("<Q", struct.pack("<d", value))[0])


def scalar_literal(value: int | float, type_: Attribute) -> str:
    if isinstance(type_, IntegerType):
        width = type_.width.data
        if width == 1:
            return "true" if int(value) & 1 else "false"
        ivalue = int(value) & ((1 << width) - 1)
        return str(ivalue - (1 << width) if ivalue >> (width - 1) else ivalue)
    return float_literal(float(value), type_)


def constant_literal(attr: Attribute, type_: Attribute) -> str:
    """The LLVM IR constant (without its type) for an attribute value."""
    if isinstance(attr, IntegerAttr):
        return scalar_literal(attr.value.data, type_)
    if isinstance(attr, FloatAttr):
        return float_literal(attr.value.data, type_)
    if isinstance(attr, DenseIntOrFPElementsAttr):
        element = attr.get_element_type()
        values: Sequence[int | float] = list(attr.get_values())
        if isinstance(type_, VectorType):
            count = type_.get_shape()[0]
            open_, close = "<", ">"
        else:
            assert isinstance(type_, llvm.LLVMArrayType)
            count = type_.size.data
            open_, close = "[", "]"
        if len(values) == 1:
            values = list(values) * count
        items = ", ".join(
            f"{type_str(element)} {scalar_literal(v, element)}" for v in values
        )
        return f"{open_}{items}{close}"
    raise DiagnosticException(f"no LLVM IR constant for {attr}")


# ----------------------------------------------------------- intrinsics

# Intrinsics overloaded on their result type (`llvm.smax.i32`).
_RESULT_OVERLOADED = frozenset(
    [
        "smin",
        "smax",
        "umin",
        "umax",
        "abs",
        "ctlz",
        "cttz",
        "ctpop",
        "trunc",
        "round",
        "roundeven",
        "rint",
        "nearbyint",
        "fabs",
        "ceil",
        "floor",
        "sqrt",
        "exp",
        "exp2",
        "log",
        "log2",
        "log10",
        "sin",
        "cos",
        "pow",
        "maxnum",
        "minnum",
        "copysign",
        "fma",
    ]
)


def intrinsic_name(
    base: str, args: Sequence[Attribute], result: Attribute | None
) -> str:
    """The mangled name of an overloaded intrinsic call."""
    short = base.removeprefix("llvm.")
    if short in _RESULT_OVERLOADED and result is not None:
        return f"{base}.{_mangle(result)}"
    if short == "powi" and result is not None:
        return f"{base}.{_mangle(result)}.{_mangle(args[1])}"
    if short == "prefetch":
        return f"{base}.p0"
    if short in ("memcpy", "memmove"):
        return f"{base}.p0.p0.{_mangle(args[2])}"
    if short.startswith("vector.reduce."):
        return f"{base}.{_mangle(args[-1])}"
    return base


# ------------------------------------------------------------- printer

_FASTMATH_ORDER = ("reassoc", "nnan", "ninf", "nsz", "arcp", "contract", "afn")

BINARY_INSTRUCTIONS: dict[type[Operation], str] = {
    llvm.AddOp: "add", llvm.SubOp: "sub", llvm.MulOp: "mul", llvm.UDivOp: "udiv",
    llvm.SDivOp: "sdiv", llvm.URemOp: "urem", llvm.SRemOp: "srem",
    llvm.AndOp: "and", llvm.OrOp: "or", llvm.XOrOp: "xor", llvm.ShlOp: "shl",
    llvm.LShrOp: "lshr", llvm.AShrOp: "ashr", llvm.FAddOp: "fadd",
    llvm.FSubOp: "fsub", llvm.FMulOp: "fmul", llvm.FDivOp: "fdiv",
    llvm.FRemOp: "frem",
}  # fmt: skip
CAST_INSTRUCTIONS: dict[type[Operation], str] = {
    llvm.TruncOp: "trunc", llvm.ZExtOp: "zext", llvm.SExtOp: "sext",
    llvm.FPExtOp: "fpext", llvm.FPTruncOp: "fptrunc", llvm.SIToFPOp: "sitofp",
    llvm.BitcastOp: "bitcast", llvm_ext.UIToFPOp: "uitofp",
    llvm_ext.FPToSIOp: "fptosi", llvm_ext.FPToUIOp: "fptoui",
    llvm.PtrToIntOp: "ptrtoint",
}  # fmt: skip
_NO_INTRINSIC_OVERLOAD = ("llvm.intr.stacksave", "llvm.intr.stackrestore")


def declaration(name: str, args: Sequence[Attribute], result: Attribute | None) -> str:
    """`declare` of the function `name` (an intrinsic, say) of these types."""
    ret = type_str(result) if result is not None else "void"
    return f"declare {ret} {llvm_symbol(name)}({', '.join(type_str(a) for a in args)})"


def fastmath_text(flags: Iterable[object]) -> str:
    """The fastmath flags of an instruction as LLVM IR writes them (`fast `
    for all of them, else each followed by a space; "" for none)."""
    names = {str(flag) for flag in flags}
    if len(names) == len(_FASTMATH_ORDER):
        return "fast "
    return "".join(f"{f} " for f in _FASTMATH_ORDER if f in names)


def _fastmath(op: Operation) -> str:
    flags = op.properties.get("fastmathFlags")
    if not isinstance(flags, llvm.FastMathAttr):
        return ""
    return fastmath_text(flags.data)


@dataclass
class _FunctionPrinter:
    module: "_ModulePrinter"
    names: dict[SSAValue, str] = field(default_factory=dict[SSAValue, str])
    blocks: dict[Block, str] = field(default_factory=dict[Block, str])
    lines: list[str] = field(default_factory=list[str])
    counter: int = 0

    def fresh(self, value: SSAValue) -> str:
        # Named (not numbered) values: LLVM needs no particular order for them.
        name = f"%v{self.counter}"
        self.counter += 1
        self.names[value] = name
        return name

    def val(self, value: SSAValue) -> str:
        return self.names[value]

    def typed(self, value: SSAValue) -> str:
        return f"{type_str(value.type)} {self.val(value)}"

    def emit(self, op: llvm.FuncOp) -> list[str]:
        ftype = op.function_type
        params = list(ftype.inputs)
        result = type_str(ftype.output)
        linkage = op.linkage.linkage.data
        prefix = "" if linkage == "external" else f"{linkage} "
        name = op.sym_name.data
        if not op.body.blocks:
            args = ", ".join(type_str(t) for t in params)
            return [f"declare {result} {llvm_symbol(name)}({args})"]
        blocks = list(op.body.blocks)
        for index, block in enumerate(blocks):
            self.blocks[block] = f"bb{index}"
        args = ", ".join(f"{type_str(a.type)} {self.fresh(a)}" for a in blocks[0].args)
        # Constants and phis need names before their (possibly later) uses.
        for block in blocks[1:]:
            for arg in block.args:
                self.fresh(arg)
        for block in blocks:
            for inner in block.ops:
                self.name_results(inner)
        attributes = function_attributes(len(blocks) > 1)
        self.lines.append(
            f"define {prefix}{result} {llvm_symbol(name)}({args}){attributes} {{"
        )
        incoming = self.phi_sources(blocks)
        for block in blocks:
            self.lines.append(f"{self.blocks[block]}:")
            for arg in block.args if block is not blocks[0] else ():
                sources = ", ".join(
                    f"[ {self.val(v)}, %{self.blocks[pred]} ]"
                    for pred, v in incoming[arg]
                )
                self.lines.append(
                    f"  {self.val(arg)} = phi {type_str(arg.type)} {sources}"
                )
            for inner in block.ops:
                text = self.instruction(inner)
                if text is not None:
                    self.lines.append(f"  {text}")
        self.lines.append("}")
        return self.lines

    def name_results(self, op: Operation) -> None:
        match op:
            case llvm.ConstantOp():
                self.names[op.result] = constant_literal(op.value, op.result.type)
            case llvm.UndefOp():
                self.names[op.res] = "undef"
            case llvm.ZeroOp():
                self.names[op.res] = (
                    "zeroinitializer"
                    if not isinstance(op.res.type, llvm.LLVMPointerType)
                    else "null"
                )
            case llvm.AddressOfOp():
                self.names[op.result] = llvm_symbol(op.global_name.string_value())
            case _:
                for result in op.results:
                    self.fresh(result)

    def phi_sources(
        self, blocks: list[Block]
    ) -> dict[SSAValue, list[tuple[Block, SSAValue]]]:
        incoming: dict[SSAValue, list[tuple[Block, SSAValue]]] = {
            arg: [] for block in blocks for arg in block.args
        }
        for block in blocks:
            term = block.last_op
            edges: list[tuple[Block, Sequence[SSAValue]]] = []
            if isinstance(term, llvm.BrOp):
                edges = [(term.successor, term.arguments)]
            elif isinstance(term, llvm.CondBrOp):
                if term.then_block is term.else_block and term.then_block.args:
                    raise DiagnosticException(
                        "llvm.cond_br to one block with arguments has no phi form"
                    )
                edges = [
                    (term.then_block, term.then_arguments),
                    (term.else_block, term.else_arguments),
                ]
            for target, values in edges:
                for arg, value in zip(target.args, values, strict=False):
                    incoming[arg].append((block, value))
        return incoming

    def call(
        self,
        op: Operation,
        callee: str,
        args: Iterable[SSAValue],
        result: Attribute | None,
    ) -> str:
        arg_list = list(args)
        ret = type_str(result) if result is not None else "void"
        text = f"call {_fastmath(op)}{ret} {llvm_symbol(callee)}({', '.join(self.typed(a) for a in arg_list)})"
        if result is not None:
            return f"{self.val(op.results[0])} = {text}"
        return text

    def intrinsic(self, op: Operation, base: str) -> str:
        args = list(op.operands)
        result = op.results[0].type if op.results else None
        name = intrinsic_name(base, [a.type for a in args], result)
        self.module.declare(name, [a.type for a in args], result)
        return self.call(op, name.removeprefix("@"), args, result)

    def instruction(self, op: Operation) -> str | None:
        if isinstance(
            op, llvm.ConstantOp | llvm.UndefOp | llvm.ZeroOp | llvm.AddressOfOp
        ):
            return None
        res = f"{self.val(op.results[0])} = " if op.results else ""
        fm = _fastmath(op)
        match op:
            case _ if type(op) in BINARY_INSTRUCTIONS:
                lhs, rhs = op.operands
                flags = ""
                if isinstance(op, llvm.ArithmeticBinOpOverflow) and op.overflowFlags:
                    value = op.overflowFlags.value.data
                    flags = ("nuw " if value & 2 else "") + (
                        "nsw " if value & 1 else ""
                    )
                if isinstance(op, llvm.ArithmeticBinOpExact) and op.is_exact:
                    flags = "exact "
                return f"{res}{BINARY_INSTRUCTIONS[type(op)]} {flags}{fm}{self.typed(lhs)}, {self.val(rhs)}"
            case _ if type(op) in CAST_INSTRUCTIONS:
                (arg,) = op.operands
                return f"{res}{CAST_INSTRUCTIONS[type(op)]} {self.typed(arg)} to {type_str(op.results[0].type)}"
            case llvm.FNegOp():
                return f"{res}fneg {fm}{self.typed(op.arg)}"
            case llvm.ICmpOp():
                flag = llvm.ICmpPredicateFlag.from_int(op.predicate.value.data)
                return f"{res}icmp {flag} {self.typed(op.lhs)}, {self.val(op.rhs)}"
            case llvm.FCmpOp():
                flag = str(
                    llvm.FCmpPredicateFlag.from_int(op.predicate.value.data)
                ).strip("_")
                return f"{res}fcmp {fm}{flag} {self.typed(op.lhs)}, {self.val(op.rhs)}"
            case llvm.SelectOp():
                return f"{res}select {fm}{self.typed(op.cond)}, {self.typed(op.lhs)}, {self.typed(op.rhs)}"
            case llvm.LoadOp():
                align = f", align {op.alignment.value.data}" if op.alignment else ""
                return f"{res}load {type_str(op.dereferenced_value.type)}, {self.typed(op.ptr)}{align}"
            case llvm.StoreOp():
                align = f", align {op.alignment.value.data}" if op.alignment else ""
                return f"store {self.typed(op.value)}, {self.typed(op.ptr)}{align}"
            case llvm.GEPOp():
                ssa = iter(op.ssa_indices)
                indices = [
                    self.typed(next(ssa)) if i == llvm.GEP_USE_SSA_VAL else f"i32 {i}"
                    for i in op.rawConstantIndices.iter_values()
                ]
                inbounds = "inbounds " if op.inbounds else ""
                return f"{res}getelementptr {inbounds}{type_str(op.elem_type)}, {self.typed(op.ptr)}, {', '.join(indices)}"
            case llvm.AllocaOp():
                align = f", align {op.alignment.value.data}" if op.alignment else ""
                return f"{res}alloca {type_str(op.elem_type)}, {self.typed(op.size)}{align}"
            case llvm.InsertElementOp():
                return f"{res}insertelement {self.typed(op.vector)}, {self.typed(op.value)}, {self.typed(op.index)}"
            case llvm_ext.ExtractElementOp():
                return f"{res}extractelement {self.typed(op.vector)}, {self.typed(op.position)}"
            case llvm.ShuffleVectorOp():
                mask = ", ".join(
                    "i32 undef" if m == -1 else f"i32 {m}"
                    for m in op.mask.iter_values()
                )
                lanes = len(tuple(op.mask.iter_values()))
                return f"{res}shufflevector {self.typed(op.v1)}, {self.typed(op.v2)}, <{lanes} x i32> <{mask}>"
            case llvm.ExtractValueOp():
                pos = ", ".join(str(p) for p in op.position.iter_values())
                return f"{res}extractvalue {self.typed(op.container)}, {pos}"
            case llvm.InsertValueOp():
                pos = ", ".join(str(p) for p in op.position.iter_values())
                return f"{res}insertvalue {self.typed(op.container)}, {self.typed(op.value)}, {pos}"
            case llvm.CallOp():
                if op.callee is None:
                    raise DiagnosticException("indirect llvm.call is not supported")
                result = op.returned.type if op.returned is not None else None
                return self.call(op, op.callee.string_value(), op.args, result)
            case llvm.CallIntrinsicOp():
                return self.intrinsic(op, op.intrin.data)
            case llvm.BrOp():
                return f"br label %{self.blocks[op.successor]}"
            case llvm.CondBrOp():
                return f"br {self.typed(op.cond)}, label %{self.blocks[op.then_block]}, label %{self.blocks[op.else_block]}"
            case llvm.ReturnOp():
                return f"ret {self.typed(op.arg)}" if op.arg is not None else "ret void"
            case llvm.UnreachableOp():
                return "unreachable"
            case _ if (
                op.name.startswith("llvm.intr.")
                and op.name not in _NO_INTRINSIC_OVERLOAD
            ):
                return self.intrinsic(op, "llvm." + op.name.removeprefix("llvm.intr."))
            case _:
                raise DiagnosticException(f"-t llvm: cannot translate '{op.name}'")


@dataclass
class _ModulePrinter:
    declarations: dict[str, str] = field(default_factory=dict[str, str])

    def declare(
        self, name: str, args: Sequence[Attribute], result: Attribute | None
    ) -> None:
        self.declarations[name] = declaration(name, args, result)

    def top_level(self, op: Operation) -> list[str]:
        match op:
            case llvm.FuncOp():
                return ["", *_FunctionPrinter(self).emit(op)]
            case llvm.GlobalOp():
                return [self.global_(op)]
            case _:
                raise DiagnosticException(
                    f"-t llvm: cannot translate top-level '{op.name}'"
                )

    @staticmethod
    def global_(op: llvm.GlobalOp) -> str:
        linkage = op.linkage.linkage.data
        kind = "constant" if op.constant is not None else "global"
        type_ = type_str(op.global_type)
        align = f", align {op.alignment.value.data}" if op.alignment is not None else ""
        name = llvm_symbol(op.sym_name.data)
        if op.value is None:
            if linkage == "external":
                return f"{name} = external {kind} {type_}{align}"
            return f"{name} = {linkage} {kind} {type_} zeroinitializer{align}"
        init = constant_literal(op.value, op.global_type)
        prefix = "" if linkage == "external" else f"{linkage} "
        return f"{name} = {prefix}{kind} {type_} {init}{align}"


def ask_llvm() -> tuple[str, str]:
    """The host's target triple and data layout, from llvmlite's LLVM (which
    this loads: ~44 MB of memory)."""
    import llvmlite.binding as binding

    binding.initialize_native_target()
    binding.initialize_native_asmprinter()
    triple = binding.get_process_triple()
    machine = binding.Target.from_triple(triple).create_target_machine()
    return triple, str(machine.target_data)


def _host_target_cache() -> Path:
    """Where the host's triple and layout are kept: the user's cache
    directory, one file per machine kind and llvmlite version (what they
    depend on)."""
    root = os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache")
    kind = f"{platform.system()}-{platform.machine()}-llvmlite-{version('llvmlite')}"
    return Path(root) / "mx" / f"host-target-{kind}.json"


@cache
def host_target() -> tuple[str, str]:
    """The host's target triple and data layout, as llvmlite's LLVM gives
    them. A process that has not loaded LLVM (mx-opt) reads them from the
    cache (`_host_target_cache`), asking LLVM in a subprocess the first time,
    so that `-t llvm` does not hold LLVM's memory; the JIT asks directly."""
    if "llvmlite.binding" in sys.modules:
        return ask_llvm()
    path = _host_target_cache()
    with contextlib.suppress(OSError, ValueError):
        triple, layout = json.loads(path.read_text())
        return str(triple), str(layout)
    asked = subprocess.run(
        [sys.executable, "-c", _ASK_LLVM], capture_output=True, text=True
    )
    if asked.returncode != 0:
        return ask_llvm()
    triple, layout = json.loads(asked.stdout)
    with contextlib.suppress(OSError):
        path.parent.mkdir(parents=True, exist_ok=True)
        partial = path.with_suffix(f".{os.getpid()}.tmp")
        partial.write_text(asked.stdout)
        partial.replace(path)  # atomic: a concurrent reader sees all or nothing
    return str(triple), str(layout)


_ASK_LLVM = (
    "import json\n"
    "from mx.targets.llvm_ir import ask_llvm\n"
    "print(json.dumps(ask_llvm()))"
)


@dataclass
class LLVMIRWriter:
    """The LLVM IR text of a module, given whole or as the successive modules
    of its lowered functions (so that each can be dropped once translated).

    The lowering declares the external functions it calls (`malloc`, ...) at
    the start of its module, the latest first: the declarations leading a
    module that are new go before everything added so far, the rest of its
    ops after it; so adding a module's functions one module each gives the
    text of the whole module."""

    printer: _ModulePrinter = field(default_factory=_ModulePrinter)
    external: list[str] = field(default_factory=list[str])
    """The leading declarations, each with its blank line, latest first."""
    symbols: set[str] = field(default_factory=set[str])
    """The names of the top-level symbols added so far."""
    body: list[str] = field(default_factory=list[str])
    """The text of the other top-level ops, a chunk each."""

    def add(self, module: ModuleOp) -> None:
        """Adds the top-level ops of `module`; a name that an earlier module
        defined or declared (a module verifies its own) may only be declared
        again, as the lowering does in each module that calls `malloc`."""
        leading: list[str] = []
        ops = list(module.ops)
        while ops and isinstance(ops[0], llvm.FuncOp) and not ops[0].body.blocks:
            op = ops.pop(0)
            assert isinstance(op, llvm.FuncOp)
            if op.sym_name.data not in self.symbols:
                self.symbols.add(op.sym_name.data)
                leading.append("\n".join(self.printer.top_level(op)))
        self.external[:0] = leading
        for op in ops:
            if isinstance(op, llvm.FuncOp | llvm.GlobalOp):
                self._define(op.sym_name.data)
            self.body.append("\n".join(self.printer.top_level(op)))

    def add_functions(
        self, functions: Sequence[tuple[str, str]], declarations: Mapping[str, str]
    ) -> None:
        """Adds function definitions written elsewhere (`(name, text)` each)
        and the intrinsic declarations they need (`name: declare ...`)."""
        for name, text in functions:
            self._define(name)
            self.body.append("\n" + text)
        self.printer.declarations.update(declarations)

    def _define(self, name: str) -> None:
        """Records the definition of the symbol `name`, defined once only."""
        if name in self.symbols:
            raise DiagnosticException(f"-t llvm: {llvm_symbol(name)} is defined twice")
        self.symbols.add(name)

    def text(self, triple: str | None = None, data_layout: str | None = None) -> str:
        """The whole text (host triple and layout by default: `host_target`)."""
        if triple is None or data_layout is None:
            host_triple, host_layout = host_target()
            triple, data_layout = triple or host_triple, data_layout or host_layout
        header = [
            f'target datalayout = "{data_layout}"',
            f'target triple = "{triple}"',
            "",
        ]
        text = (
            "\n".join(
                header
                + self.external
                + self.body
                + [""]
                + list(self.printer.declarations.values())
            )
            + "\n"
        )
        # The loops outline-parallel-loops moved out call trampolines it declared.
        return define_trampolines(text)


def module_to_llvm_ir(
    module: ModuleOp, triple: str | None = None, data_layout: str | None = None
) -> str:
    """LLVM IR text of an `llvm`-dialect module (host triple and layout by default)."""
    writer = LLVMIRWriter()
    writer.add(module)
    return writer.text(triple, data_layout)


@dataclass(frozen=True)
class LLVMIRTarget(Target):
    """`-t llvm`: LLVM IR text; `triple` and `data_layout` default to the host."""

    name: ClassVar[str] = "llvm"

    triple: str = ""
    data_layout: str = ""

    def emit(self, ctx: Context, module: ModuleOp, output: IO[str]) -> None:
        output.write(
            module_to_llvm_ir(module, self.triple or None, self.data_layout or None)
        )

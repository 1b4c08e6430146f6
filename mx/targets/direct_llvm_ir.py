"""Affine-level functions -> LLVM IR text, without the `llvm` dialect.

`mx-lower-to-llvm` ends with `convert-to-llvm`, which builds, rewrites and
verifies ~17 `llvm` ops per input op for the LLVM IR printer to walk: most of
the time `-t llvm` takes. This translation writes the LLVM IR of the IR that
the steps before `convert-to-llvm` leave (affine loops, `memref`/`vector`
loads and stores, `arith`/`math`/`vector` arithmetic, calls) directly, one
instruction per op as `convert-to-llvm` lowers it: the same instructions,
flags, alignments and addresses (constant indices folded as
`element_pointer` folds them), so the two texts differ only in value and
block names and in the order of the blocks.

It covers what matrices of `f16`, `f32`, `f64` and byte-wide integers lower
to. A module with anything else (bf16; f16 <-> f64 conversions and f16 fma,
which `convert-to-llvm` expands to round once; `i1`/`i4`/`i6` values in
memory; conditionals, branches, heap buffers, globals, strided memrefs, ...)
raises `NotCovered` and is lowered by `convert-to-llvm` instead, which
handles (or diagnoses) every op. `tests/targets/test_direct_llvm_ir.py` runs both
on the same programs and compares their texts.
"""

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TypeAlias, cast

from xdsl.dialects import affine, arith, func, llvm, math, memref, scf, vector
from xdsl.dialects.builtin import (
    DYNAMIC_INDEX,
    DenseIntOrFPElementsAttr,
    Float16Type,
    Float32Type,
    Float64Type,
    FloatAttr,
    IndexType,
    IntegerAttr,
    IntegerType,
    MemRefType,
    ModuleOp,
    Signedness,
    VectorType,
    f16,
    f64,
    i64,
)
from xdsl.ir import Attribute, Block, Operation, SSAValue
from xdsl.ir.affine import AffineBinaryOpKind, AffineMap

from mx.dialects.memref_ext import is_row_major
from mx.lowering.llvm.affine import evaluate_affine_expr
from mx.lowering.llvm.arith import (
    ARITH_PATTERNS,
    FCMP_PREDICATES,
    ICMP_PREDICATES,
    CastLowering,
    FloatBinaryLowering,
    FloatIntrinsicLowering,
    IntegerBinaryLowering,
    IntegerIntrinsicLowering,
)
from mx.lowering.llvm.func import is_private
from mx.lowering.llvm.math import (
    MATH_PATTERNS,
    CallIntrinsicLowering,
    IntrinsicOpLowering,
)
from mx.lowering.llvm.memref import store_size
from mx.lowering.llvm.types import convert_type, memory_type
from mx.semantics.index import wrap_index
from mx.targets.llvm_ir import (
    BINARY_INSTRUCTIONS,
    CAST_INSTRUCTIONS,
    constant_literal,
    declaration,
    fastmath_text,
    float_literal,
    function_attributes,
    intrinsic_name,
    llvm_symbol,
    scalar_literal,
    type_str,
)


class NotCovered(Exception):
    """An op or type that the direct translation leaves to `convert-to-llvm`."""


Index: TypeAlias = str | int
"""An `i64` operand: the name of a value, or a constant."""

_INTEGER_WIDTHS = frozenset((1, 8, 16, 32, 64))
"""Widths whose values this translation handles (in registers; `i1` never
goes to memory here, where it takes a byte)."""


def _scalar_ok(type_: Attribute, in_memory: bool) -> bool:
    if isinstance(type_, Float16Type | Float32Type | Float64Type | IndexType):
        return True
    if not isinstance(type_, IntegerType):
        return False
    width = type_.width.data
    return type_.signedness.data == Signedness.SIGNLESS and (
        (width in _INTEGER_WIDTHS and not (in_memory and width == 1))
        or _container(width)
    )


def _container(width: int) -> bool:
    """True for the i4/i6-style integers held one a byte (or in the next
    whole integer) in memory (`memory_type`)."""
    return 1 < width < 64 and width % 8 != 0


def _value_type(type_: Attribute, in_memory: bool = False) -> str:
    """The LLVM IR type of a scalar or 1-D vector value of `type_` (as it is
    held in memory: its `memory_type`)."""
    if isinstance(type_, VectorType):
        if type_.get_num_dims() != 1 or any(type_.get_scalable_dims()):
            raise NotCovered(f"vector type {type_}")
        element = type_.element_type
    else:
        element = type_
    if not _scalar_ok(element, in_memory):
        raise NotCovered(f"type {type_}")
    return type_str(memory_type(type_) if in_memory else convert_type(type_))


def _memref_type(value: SSAValue) -> MemRefType:
    """The type of a memref that lowers to a bare pointer of whole bytes."""
    type_ = value.type
    if (
        not isinstance(type_, MemRefType)
        or not is_row_major(type_)
        or DYNAMIC_INDEX in type_.get_shape()[1:]
        or not _scalar_ok(type_.element_type, in_memory=True)
    ):
        raise NotCovered(f"memref type {type_}")
    return type_


def _boundary_type(type_: Attribute) -> str:
    """The LLVM IR type of a function argument or result of `type_`."""
    if isinstance(type_, MemRefType):
        return "ptr"
    if memory_type(type_) != convert_type(type_):
        raise NotCovered(f"an argument or result of {type_}")
    return _value_type(type_, in_memory=True)


_RAW_MIN, _RAW_MAX = -(2**31), 2**31 - 1
"""The constant GEP indices `convert-to-llvm` writes as `i32` (its
`llvm.getelementptr` holds them as raw i32 values; -2^31 marks an SSA index)."""

OpTable: TypeAlias = dict[type[Operation], str]


def _instruction_tables() -> tuple[OpTable, OpTable, OpTable, OpTable]:
    """The instruction (integer binary, float binary, cast) or intrinsic that
    `convert-to-llvm` lowers each `arith`/`math` op to one to one, read from
    its patterns, so that both routes write the same."""
    integer_binary: OpTable = {}
    float_binary: OpTable = {}
    casts: OpTable = {
        vector.BitcastOp: "bitcast",
        **{t: CAST_INSTRUCTIONS[t] for t in (llvm.TruncOp, llvm.ZExtOp, llvm.SExtOp)},
    }
    intrinsics: OpTable = {}
    for pattern in ARITH_PATTERNS + MATH_PATTERNS:
        match pattern:
            case IntegerBinaryLowering(source=source, target=target):
                integer_binary[source] = BINARY_INSTRUCTIONS[target]
            case FloatBinaryLowering(source=source, target=target):
                float_binary[source] = BINARY_INSTRUCTIONS[target]
            case CastLowering(source=source, target=target):
                casts[source] = CAST_INSTRUCTIONS[target]
            case IntegerIntrinsicLowering(source=source, intrinsic=intrinsic) | (
                CallIntrinsicLowering(
                    source=source, intrinsic=intrinsic, poison_flag=False
                )
            ):
                intrinsics[source] = intrinsic
            case FloatIntrinsicLowering(source=source, target=target) | (
                IntrinsicOpLowering(source=source, target=target)
            ):
                intrinsics[source] = "llvm." + target.name.removeprefix("llvm.intr.")
            case _:
                pass
    return integer_binary, float_binary, casts, intrinsics


_INTEGER_BINARY, _FLOAT_BINARY, _CASTS, _INTRINSICS = _instruction_tables()


def _fastmath(op: Operation) -> str:
    flags = op.properties.get("fastmath")
    return (
        fastmath_text(flags.data) if isinstance(flags, arith.FastMathFlagsAttr) else ""
    )


def _overflow(op: Operation) -> str:
    flags = op.properties.get("overflowFlags")
    if not isinstance(flags, arith.IntegerOverflowAttr):
        return ""
    names = {str(flag) for flag in flags.data}
    return ("nuw " if "nuw" in names else "") + ("nsw " if "nsw" in names else "")


def _array_type(dims: Sequence[int], element: str) -> str:
    for size in reversed(dims):
        element = f"[{size} x {element}]"
    return element


@dataclass
class _FunctionWriter:
    """The LLVM IR of one `func.func`, written op by op."""

    declarations: dict[str, str]
    """Intrinsic declarations by name (shared by the module's functions)."""
    names: dict[SSAValue, str] = field(default_factory=dict[SSAValue, str])
    """Each value's operand text: `%vN`, or a constant's literal."""
    constants: dict[SSAValue, int] = field(default_factory=dict[SSAValue, int])
    """The integer and index constants (they fold into addresses)."""
    lines: list[str] = field(default_factory=list[str])
    values: int = 0
    blocks: int = 0
    block: str = ""
    """The label of the block being written."""

    # ------------------------------------------------------------ values

    def fresh(self) -> str:
        self.values += 1
        return f"%v{self.values - 1}"

    def label(self) -> str:
        self.blocks += 1
        return f"bb{self.blocks - 1}"

    def define(self, value: SSAValue, text: str) -> None:
        """Emits `%name = text` for `value` (checking its type)."""
        _value_type(value.type)
        name = self.fresh()
        self.names[value] = name
        self.lines.append(f"  {name} = {text}")

    def operand(self, value: SSAValue) -> str:
        name = self.names.get(value)
        if name is None:  # not in dominance order: left to convert-to-llvm
            raise NotCovered(
                f"a use of {value.name_hint or 'a value'} before its definition"
            )
        return name

    def typed(self, value: SSAValue) -> str:
        return f"{_value_type(value.type)} {self.operand(value)}"

    def index(self, value: SSAValue) -> Index:
        known = self.constants.get(value)
        return known if known is not None else self.operand(value)

    def intrinsic(self, op: Operation, base: str, args: Sequence[SSAValue]) -> None:
        (result,) = op.results
        types = [a.type for a in args]
        converted = [convert_type(t) for t in types]
        name = intrinsic_name(base, converted, convert_type(result.type))
        result_type = _value_type(result.type)
        self.declarations[name] = declaration(
            name, converted, convert_type(result.type)
        )
        operands = ", ".join(self.typed(a) for a in args)
        self.define(
            result,
            f"call {_fastmath(op)}{result_type} {llvm_symbol(name)}({operands})",
        )

    # ----------------------------------------------------------- function

    def function(self, op: func.FuncOp) -> list[str]:
        inputs, outputs = op.function_type.inputs.data, op.function_type.outputs.data
        if not op.body.blocks or len(op.body.blocks) != 1 or len(outputs) > 1:
            raise NotCovered("a declaration, several blocks or several results")
        result = _boundary_type(outputs[0]) if outputs else "void"
        params = [_boundary_type(t) for t in inputs]
        entry = op.body.block
        args: list[str] = []
        for arg, type_ in zip(entry.args, params, strict=True):
            self.names[arg] = self.fresh()
            args.append(f"{type_} {self.names[arg]}")
        linkage = "internal " if is_private(op) else ""
        header = len(self.lines)
        self.block = self.label()
        self.lines.append(f"{self.block}:")
        self.ops(entry)
        self.lines.append("}")
        self.lines.insert(
            header,
            f"define {linkage}{result} {llvm_symbol(op.sym_name.data)}"
            f"({', '.join(args)}){function_attributes(self.blocks > 1)} {{",
        )
        return self.lines

    def ops(self, block: Block) -> None:
        """Writes the ops of `block` up to a loop's yield (see `loop`)."""
        for op in block.ops:
            if isinstance(op, affine.YieldOp | scf.YieldOp):
                return
            translate = _TRANSLATIONS.get(type(op))
            if translate is None:
                raise NotCovered(f"'{op.name}'")
            translate(self, op)

    # ------------------------------------------------------------- loops

    def loop(
        self,
        lower: Index,
        upper: Index,
        step: Index,
        inits: Sequence[SSAValue],
        body: Block,
        results: Sequence[SSAValue],
    ) -> None:
        """A header block with the induction variable and carried values as
        phis, `iv < upper` to the body or the end; the body's end adds
        `step` and branches back (as `convert-to-llvm` lowers loops)."""
        initial = [self.operand(v) for v in inits]
        entry = self.block
        header, first, end = self.label(), self.label(), self.label()
        self.lines.append(f"  br label %{header}")
        self.lines.append(f"{header}:")
        iv, *carried = body.args
        iv_type = _value_type(iv.type)
        for arg in body.args:
            self.names[arg] = self.fresh()
        phis = len(self.lines)
        self.lines.extend([""] * len(body.args))  # known once the body is written
        condition = self.fresh()
        self.lines.append(
            f"  {condition} = icmp slt {iv_type} {self.names[iv]}, {upper}"
        )
        self.lines.append(f"  br i1 {condition}, label %{first}, label %{end}")
        self.lines.append(f"{first}:")
        self.block = first
        self.ops(body)
        terminator = body.last_op
        assert isinstance(terminator, affine.YieldOp | scf.YieldOp)
        stepped = self.fresh()
        self.lines.append(f"  {stepped} = add {iv_type} {self.names[iv]}, {step}")
        yielded = [self.operand(v) for v in terminator.operands]
        self.lines.append(f"  br label %{header}")
        latch = self.block
        for i, (arg, start, again) in enumerate(
            zip(body.args, [lower, *initial], [stepped, *yielded], strict=True)
        ):
            type_ = iv_type if arg is iv else _value_type(arg.type)
            self.lines[phis + i] = (
                f"  {self.names[arg]} = phi {type_} "
                f"[ {start}, %{entry} ], [ {again}, %{latch} ]"
            )
        self.lines.append(f"{end}:")
        self.block = end
        for result, arg in zip(results, carried, strict=True):
            self.names[result] = self.names[arg]

    def affine_for(self, op: affine.ForOp) -> None:
        """Both bound maps, then their max (lower) and min (upper), in
        `convert-to-llvm`'s order."""
        lower = self.affine_map(op.lowerBoundMap.data, op.lowerBoundOperands)
        upper = self.affine_map(op.upperBoundMap.data, op.upperBoundOperands)
        self.loop(
            self.reduce(lower, "llvm.smax"),
            self.reduce(upper, "llvm.smin"),
            op.step.value.data,
            op.inits,
            op.body.block,
            op.results,
        )

    def scf_for(self, op: scf.ForOp) -> None:
        self.loop(
            self.operand(op.lb),
            self.operand(op.ub),
            self.operand(op.step),
            op.iter_args,
            op.body.block,
            op.results,
        )

    # ---------------------------------------------------- affine indices

    def affine_map(self, map_: AffineMap, operands: Sequence[SSAValue]) -> list[Index]:
        values: list[Index] = []
        for value in operands:
            known = self.constants.get(value)
            values.append(
                wrap_index(known) if known is not None else self.operand(value)
            )
        dims, symbols = values[: map_.num_dims], values[map_.num_dims :]
        return [
            evaluate_affine_expr(e, dims, symbols, self.affine_binary)
            for e in map_.results
        ]

    def affine_binary(self, kind: AffineBinaryOpKind, lhs: Index, rhs: Index) -> Index:
        """`lhs kind rhs` where it is not folded (`evaluate_affine_expr`)."""
        instruction = {AffineBinaryOpKind.Add: "add", AffineBinaryOpKind.Mul: "mul"}
        if kind not in instruction:
            raise NotCovered("a rounding division in an affine map")
        name = self.fresh()
        self.lines.append(f"  {name} = {instruction[kind]} i64 {lhs}, {rhs}")
        return name

    def reduce(self, values: list[Index], intrinsic: str) -> Index:
        """The signed max (`llvm.smax`) or min (`llvm.smin`) of `values`."""
        if all(isinstance(v, int) for v in values):
            pick = min if intrinsic == "llvm.smin" else max
            return pick(cast(list[int], values))
        if len(values) == 1:
            return values[0]
        name = intrinsic_name(intrinsic, [i64, i64], i64)
        self.declarations[name] = declaration(name, [i64, i64], i64)
        result = values[0]
        for value in values[1:]:
            combined = self.fresh()
            self.lines.append(
                f"  {combined} = call i64 {llvm_symbol(name)}(i64 {result}, i64 {value})"
            )
            result = combined
        return result

    def affine_result(self, op: Operation, value: Index) -> None:
        (result,) = op.results
        if isinstance(value, int):
            self.constants[result] = value
            self.names[result] = str(value)
        else:
            self.names[result] = value

    def affine_apply(self, op: affine.ApplyOp) -> None:
        (value,) = self.affine_map(op.map.data, op.mapOperands)
        self.affine_result(op, value)

    def affine_min(self, op: affine.MinOp) -> None:
        self.affine_result(
            op, self.reduce(self.affine_map(op.map.data, op.arguments), "llvm.smin")
        )

    # ------------------------------------------------------------ memory

    def element_pointer(self, base: SSAValue, indices: Sequence[Index]) -> str:
        """A pointer to `base[indices]`, row-major: one GEP over the array
        type of the trailing dimensions, constants folded to one offset."""
        type_ = _memref_type(base)
        pointer = self.operand(base)
        if not indices:
            return pointer
        shape = type_.get_shape()
        element = _value_type(type_.element_type, in_memory=True)
        if all(isinstance(i, int) for i in indices):
            offset = 0
            for index, size in zip(cast(list[int], indices), shape, strict=True):
                offset = wrap_index(offset * size + index)
            if not offset:
                return pointer
            source, indices = element, [offset]
        else:
            source = _array_type(shape[1:], element)
        spelled = ", ".join(
            f"i32 {i}"
            if isinstance(i, int) and _RAW_MIN < i <= _RAW_MAX
            else f"i64 {i}"
            for i in indices
        )
        name = self.fresh()
        self.lines.append(
            f"  {name} = getelementptr inbounds {source}, ptr {pointer}, {spelled}"
        )
        return name

    def load(self, result: SSAValue, pointer: str, aligned: bool) -> None:
        """A load of the memory type, truncated to the value's if they
        differ (as `convert-to-llvm` loads an `i4`)."""
        memory = _value_type(result.type, in_memory=True)
        type_ = _value_type(result.type)
        align = f", align {store_size(self._element(result.type))}" if aligned else ""
        load = f"load {memory}, ptr {pointer}{align}"
        if memory == type_:
            self.define(result, load)
            return
        loaded = self.fresh()
        self.lines.append(f"  {loaded} = {load}")
        self.define(result, f"trunc {memory} {loaded} to {type_}")

    def store(self, value: SSAValue, pointer: str, aligned: bool) -> None:
        """A store of the memory type, the value zero-extended to it if
        they differ."""
        memory = _value_type(value.type, in_memory=True)
        type_ = _value_type(value.type)
        align = f", align {store_size(self._element(value.type))}" if aligned else ""
        stored = self.operand(value)
        if memory != type_:
            stored, wide = self.fresh(), stored
            self.lines.append(f"  {stored} = zext {type_} {wide} to {memory}")
        self.lines.append(f"  store {memory} {stored}, ptr {pointer}{align}")

    @staticmethod
    def _element(type_: Attribute) -> Attribute:
        return type_.element_type if isinstance(type_, VectorType) else type_

    def affine_load(self, op: affine.LoadOp) -> None:
        indices = self.affine_map(op.map.data, op.indices)
        self.load(op.result, self.element_pointer(op.memref, indices), False)

    def affine_store(self, op: affine.StoreOp) -> None:
        indices = self.affine_map(op.map.data, op.indices)
        self.store(op.value, self.element_pointer(op.memref, indices), False)

    def memref_load(self, op: memref.LoadOp) -> None:
        indices = [self.index(i) for i in op.indices]
        self.load(op.res, self.element_pointer(op.memref, indices), False)

    def memref_store(self, op: memref.StoreOp) -> None:
        indices = [self.index(i) for i in op.indices]
        self.store(op.value, self.element_pointer(op.memref, indices), False)

    def vector_load(self, op: vector.LoadOp) -> None:
        indices = [self.index(i) for i in op.indices]
        self.load(op.result, self.element_pointer(op.base, indices), True)

    def vector_store(self, op: vector.StoreOp) -> None:
        indices = [self.index(i) for i in op.indices]
        self.store(op.vector, self.element_pointer(op.base, indices), True)

    def alloca(self, op: memref.AllocaOp) -> None:
        type_ = _memref_type(op.memref)
        if op.dynamic_sizes:
            raise NotCovered("a dynamically sized alloca")
        count = 1
        for size in type_.get_shape():
            count *= size
        element = _value_type(type_.element_type, in_memory=True)
        alignment = op.alignment.value.data if op.alignment is not None else 16
        name = self.fresh()
        self.names[op.memref] = name
        self.lines.append(
            f"  {name} = alloca {element}, i64 {count}, align {alignment}"
        )

    def memref_cast(self, op: memref.CastOp) -> None:
        _memref_type(op.dest)
        self.names[op.dest] = self.operand(op.source)

    def aligned_address(self, op: memref.ExtractAlignedPointerAsIndexOp) -> None:
        """The memref's (bare) pointer as an integer."""
        _memref_type(op.source)
        self.define(op.results[0], f"ptrtoint ptr {self.operand(op.source)} to i64")

    # -------------------------------------------------------- arithmetic

    def constant(self, op: arith.ConstantOp) -> None:
        type_ = convert_type(op.result.type)
        _value_type(op.result.type)
        value = op.value
        if isinstance(value, IntegerAttr):
            data = value.value.data
            if isinstance(value.type, IndexType):
                data = wrap_index(data)
            self.constants[op.result] = data
            self.names[op.result] = scalar_literal(data, type_)
        elif isinstance(value, FloatAttr):
            self.names[op.result] = float_literal(value.value.data, type_)
        elif isinstance(value, DenseIntOrFPElementsAttr):
            if type_ != value.type:  # index elements, as i64
                assert isinstance(type_, VectorType)
                value = DenseIntOrFPElementsAttr.from_list(
                    type_, [int(cast(int, v)) for v in value.get_values()]
                )
            self.names[op.result] = constant_literal(value, type_)
        else:
            raise NotCovered(f"constant {value}")

    def integer_binary(self, op: Operation) -> None:
        lhs, rhs = op.operands
        text = _INTEGER_BINARY[type(op)]
        self.define(
            op.results[0],
            f"{text} {_overflow(op)}{self.typed(lhs)}, {self.operand(rhs)}",
        )

    def float_binary(self, op: Operation) -> None:
        lhs, rhs = op.operands
        text = _FLOAT_BINARY[type(op)]
        self.define(
            op.results[0],
            f"{text} {_fastmath(op)}{self.typed(lhs)}, {self.operand(rhs)}",
        )

    def negf(self, op: arith.NegfOp) -> None:
        self.define(op.result, f"fneg {_fastmath(op)}{self.typed(op.operand)}")

    def cmpi(self, op: arith.CmpiOp) -> None:
        predicate = ICMP_PREDICATES[op.predicate.value.data]
        self.define(
            op.result, f"icmp {predicate} {self.typed(op.lhs)}, {self.operand(op.rhs)}"
        )

    def cmpf(self, op: arith.CmpfOp) -> None:
        if isinstance(op.lhs.type, VectorType):
            raise NotCovered("a vector cmpf")
        predicate = FCMP_PREDICATES[op.predicate.value.data]
        self.define(
            op.result,
            f"fcmp {_fastmath(op)}{predicate} {self.typed(op.lhs)}, "
            f"{self.operand(op.rhs)}",
        )

    def select(self, op: arith.SelectOp) -> None:
        if isinstance(op.cond.type, VectorType):
            raise NotCovered("a select of vector conditions")
        self.define(
            op.result,
            f"select {self.typed(op.cond)}, {self.typed(op.lhs)}, {self.typed(op.rhs)}",
        )

    def cast(self, op: Operation) -> None:
        (operand,) = op.operands
        (result,) = op.results
        widths = {self._element(operand.type), self._element(result.type)}
        if isinstance(op, arith.TruncFOp | arith.ExtFOp) and widths == {f16, f64}:
            raise NotCovered("f16 <-> f64, which convert-to-llvm expands exactly")
        target = _value_type(result.type)
        self.define(result, f"{_CASTS[type(op)]} {self.typed(operand)} to {target}")

    def index_cast(self, op: arith.IndexCastOp) -> None:
        source = self._width(op.input.type)
        target = self._width(op.result.type)
        if source == target:
            self.names[op.result] = self.operand(op.input)
            return
        instruction = "sext" if source < target else "trunc"
        self.define(
            op.result,
            f"{instruction} {self.typed(op.input)} to {_value_type(op.result.type)}",
        )

    @staticmethod
    def _width(type_: Attribute) -> int:
        element = convert_type(_FunctionWriter._element(type_))
        assert isinstance(element, IntegerType)
        return element.width.data

    def intrinsic_call(self, op: Operation) -> None:
        if isinstance(op, math.FmaOp):
            self._single_rounding_fma(op)
        self.intrinsic(op, _INTRINSICS[type(op)], op.operands)

    def _single_rounding_fma(self, op: Operation) -> None:
        if isinstance(self._element(op.results[0].type), Float16Type):
            raise NotCovered("an f16 fma, which convert-to-llvm rounds once")

    # ------------------------------------------------------------ vectors

    def broadcast(self, op: vector.BroadcastOp) -> None:
        type_ = _value_type(op.vector.type)
        if op.source.type == op.vector.type:
            self.names[op.vector] = self.operand(op.source)
            return
        if isinstance(op.source.type, VectorType):
            raise NotCovered("a broadcast of a vector")
        lane0 = self.fresh()
        self.lines.append(
            f"  {lane0} = insertelement {type_} undef, {self.typed(op.source)}, i32 0"
        )
        (lanes,) = op.vector.type.get_shape()
        mask = ", ".join(["i32 0"] * lanes)
        self.define(
            op.vector,
            f"shufflevector {type_} {lane0}, {type_} undef, <{lanes} x i32> <{mask}>",
        )

    def shuffle(self, op: vector.ShuffleOp) -> None:
        lanes = tuple(op.mask.iter_values())
        mask = ", ".join("i32 undef" if m == -1 else f"i32 {m}" for m in lanes)
        self.define(
            op.result,
            f"shufflevector {self.typed(op.v1)}, {self.typed(op.v2)}, "
            f"<{len(lanes)} x i32> <{mask}>",
        )

    def position(
        self, static: Sequence[int], dynamic: Sequence[SSAValue], vector_type: Attribute
    ) -> str:
        _value_type(vector_type)
        if len(static) != 1:
            raise NotCovered("a position in a vector of several dimensions")
        if static[0] == DYNAMIC_INDEX:
            return f"i64 {self.operand(dynamic[0])}"
        return f"i64 {static[0]}"

    def extract(self, op: vector.ExtractOp) -> None:
        position = self.position(
            tuple(op.static_position.iter_values()), op.dynamic_position, op.vector.type
        )
        self.define(op.result, f"extractelement {self.typed(op.vector)}, {position}")

    def insert(self, op: vector.InsertOp) -> None:
        position = self.position(
            tuple(op.static_position.iter_values()), op.dynamic_position, op.dest.type
        )
        self.define(
            op.result,
            f"insertelement {self.typed(op.dest)}, {self.typed(op.source)}, {position}",
        )

    def vector_fma(self, op: vector.FMAOp) -> None:
        self._single_rounding_fma(op)
        self.intrinsic(op, "llvm.fma", [op.lhs, op.rhs, op.acc])

    # ----------------------------------------------------------- calls

    def call(self, op: func.CallOp) -> None:
        if len(op.res) > 1:
            raise NotCovered("a call with several results")
        args = ", ".join(
            f"{_boundary_type(a.type)} {self.operand(a)}" for a in op.arguments
        )
        callee = llvm_symbol(op.callee.string_value())
        if not op.res:
            self.lines.append(f"  call void {callee}({args})")
            return
        (result,) = op.res
        self.define(result, f"call {_boundary_type(result.type)} {callee}({args})")

    def return_(self, op: func.ReturnOp) -> None:
        if not op.arguments:
            self.lines.append("  ret void")
            return
        (value,) = op.arguments
        self.lines.append(f"  ret {_boundary_type(value.type)} {self.operand(value)}")


_TRANSLATIONS: dict[type[Operation], Callable[[_FunctionWriter, Operation], None]] = {
    affine.ForOp: _FunctionWriter.affine_for,
    scf.ForOp: _FunctionWriter.scf_for,
    affine.ApplyOp: _FunctionWriter.affine_apply,
    affine.MinOp: _FunctionWriter.affine_min,
    affine.LoadOp: _FunctionWriter.affine_load,
    affine.StoreOp: _FunctionWriter.affine_store,
    memref.LoadOp: _FunctionWriter.memref_load,
    memref.StoreOp: _FunctionWriter.memref_store,
    memref.AllocaOp: _FunctionWriter.alloca,
    memref.CastOp: _FunctionWriter.memref_cast,
    memref.ExtractAlignedPointerAsIndexOp: _FunctionWriter.aligned_address,
    vector.LoadOp: _FunctionWriter.vector_load,
    vector.StoreOp: _FunctionWriter.vector_store,
    vector.BroadcastOp: _FunctionWriter.broadcast,
    vector.ShuffleOp: _FunctionWriter.shuffle,
    vector.ExtractOp: _FunctionWriter.extract,
    vector.InsertOp: _FunctionWriter.insert,
    vector.FMAOp: _FunctionWriter.vector_fma,
    arith.ConstantOp: _FunctionWriter.constant,
    arith.NegfOp: _FunctionWriter.negf,
    arith.CmpiOp: _FunctionWriter.cmpi,
    arith.CmpfOp: _FunctionWriter.cmpf,
    arith.SelectOp: _FunctionWriter.select,
    arith.IndexCastOp: _FunctionWriter.index_cast,
    func.CallOp: _FunctionWriter.call,
    func.ReturnOp: _FunctionWriter.return_,
    **{t: _FunctionWriter.integer_binary for t in _INTEGER_BINARY},
    **{t: _FunctionWriter.float_binary for t in _FLOAT_BINARY},
    **{t: _FunctionWriter.intrinsic_call for t in _INTRINSICS},
    **{t: _FunctionWriter.cast for t in _CASTS},
}  # pyright: ignore[reportAssignmentType]
"""How each covered op is written (by its exact class)."""


@dataclass
class DirectTranslation:
    """The LLVM IR of a module's functions: `(name, text)` of each, in order
    (a definition, or the `declare` of a body-less one),
    and the intrinsics they call (`name: declare ...`)."""

    functions: list[tuple[str, str]]
    declarations: dict[str, str]


def _declaration(op: func.FuncOp) -> str:
    """`declare` of a body-less function, in its boundary types."""
    inputs, outputs = op.function_type.inputs.data, op.function_type.outputs.data
    if len(outputs) > 1:
        raise NotCovered("a declaration with several results")
    result = _boundary_type(outputs[0]) if outputs else "void"
    params = ", ".join(_boundary_type(t) for t in inputs)
    return f"declare {result} {llvm_symbol(op.sym_name.data)}({params})"


def translate_module(module: ModuleOp) -> DirectTranslation:
    """The LLVM IR of an affine-level `module` (what `mx-lower-to-llvm` leaves
    before `convert-to-llvm`); `NotCovered` if any of it is outside what
    this translation writes."""
    if module.attributes or module.properties:
        raise NotCovered("module attributes")
    declarations: dict[str, str] = {}
    functions: list[tuple[str, str]] = []
    for op in module.ops:
        if not isinstance(op, func.FuncOp):
            raise NotCovered(f"top-level '{op.name}'")
        if not op.body.blocks:  # (e.g. the trampolines of outline-parallel-loops)
            functions.append((op.sym_name.data, _declaration(op)))
            continue
        lines = _FunctionWriter(declarations).function(op)
        functions.append((op.sym_name.data, "\n".join(lines)))
    return DirectTranslation(functions, declarations)

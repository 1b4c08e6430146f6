"""The native entry points the JIT generates around each compiled function
(LLVM IR text, compiled in the same module as the function).

- `fast_entry`: a CPython `METH_FASTCALL` function `(self, args, nargs)` that
  checks each argument object in place — an exact `ndarray` of an accepted
  dtype, with the expected dimensions and flags; a `float`, an `int` in range
  or a NumPy scalar of the exact type — loads it and calls the function.
  Given the arguments alone, it allocates the results (C-ordered arrays
  through NumPy's C API, `numpy_api`; NumPy scalars for scalar results) and
  returns them (None, the one result, or a tuple). Given one `out=` array per
  result after the arguments, it checks them as it checks arguments, and for
  overlaps with the arguments and each other, writes them and returns None.
  Matrix and vector arguments may have leading dimensions: of size 1 (a batch
  of one, which broadcasts), or, for a C-contiguous array, the batch's (equal
  for every such argument); allocated results get the batch's, `out=` arrays
  must have them. A batch of several calls runs `batch_entry`'s loop (all
  values C-ordered). A
  matrix argument or `out=` array may be C- or F-ordered: the entry then
  calls, through a table indexed by the bit mask of the F-ordered ones, the
  function compiled for those orders (`layouts`), once the general path has
  compiled it. It returns `NotImplemented` when an argument is anything else:
  the caller then takes the general path, which explains what is wrong or
  handles what is merely unusual (strided or F-ordered batches, a new
  combination of orders,
  conversions).
  The checks read NumPy's array struct (`mx.jit_object_layout`).
- `batch_entry`: a `METH_FASTCALL` function taking one array per operand
  (parameters, then results) and an int64 control array `[count, stride_0..,
  offset_0..]`; it calls the function `count` times, operand k of call i at
  `data(array_k) + offset_k + i * stride_k` (a stride of 0 broadcasts), with
  the GIL released; a large batch runs on OpenMP's threads, each a contiguous
  run of the calls (`mx.runtime.parallel_for`). Scalars and vectors are
  loaded from there, results stored there, matrices and memrefs passed as
  that pointer. The caller has checked
  everything: this entry only reads each array's data pointer natively,
  which costs far less than asking NumPy for it from Python.

Values are loaded and stored in the types of the lowered function's
signature, where integers of other widths than 8/16/32/64 bits already take
the next wider container (`convert-to-llvm`'s memory types: one element per
byte, NumPy's layout, not LLVM's packed vectors).
"""

import ctypes
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np

from mx.jit_object_layout import (
    ARRAY_DATA,
    ARRAY_DESCR,
    ARRAY_DIMS,
    ARRAY_FLAGS,
    ARRAY_ND,
    C_CONTIGUOUS,
    F_CONTIGUOUS,
    OB_TYPE,
    SCALAR_VALUE,
    TUPLE_ITEMS,
    TUPLE_SIZE,
    NumPyAPI,
    numpy_api,
)
from mx.runtime.parallel_for import parallel_for, suffixed
from mx.targets.llvm_ir import type_str

Kind = Literal["matrix", "memref", "vector", "scalar"]

@dataclass(frozen=True)
class Operand:
    """A parameter or result as the native entries see it."""

    kind: Kind
    value_type: Any
    """The lowered LLVM type of a scalar or vector value (None for arrays)."""
    # Checks of the fast entry (parameters only).
    descrs: tuple[int, ...] = ()
    """Addresses of the accepted dtype objects (arrays, vectors)."""
    dims: tuple[int, ...] = ()
    """Exact dimensions (matrix, vector)."""
    min_size: int = 0
    """Elements a memref's array must have at least."""
    flags: int = 0
    """Flags the array must have."""
    layout_bit: int = -1
    """A matrix whose order selects the compiled function: its bit in the
    table's index (set for F order); -1 if it must be C-ordered."""
    scalar_types: tuple[int, ...] = ()
    """Addresses of the exact Python/NumPy scalar types accepted."""
    from_python: Literal["float", "int", "bool", ""] = ""
    """Which Python scalar is converted natively."""
    int_range: tuple[int, int] = (0, 0)
    """Accepted Python int values [low, high) for an integer parameter."""
    itemsize: int = 0
    """Bytes of an element of its array (arrays)."""


def _api(name: str) -> int:
    return ctypes.cast(getattr(ctypes.pythonapi, name), ctypes.c_void_p).value or 0


def _const_ptr(address: int) -> str:
    return f"inttoptr (i64 {address} to ptr)"


class _Writer:
    """Numbered SSA names and lines of one LLVM function."""

    def __init__(self) -> None:
        self.lines: list[str] = []
        self.count = 0

    def fresh(self, prefix: str = "v") -> str:
        self.count += 1
        return f"%{prefix}{self.count}"

    def emit(self, text: str) -> str:
        name = self.fresh()
        self.lines.append(f"  {name} = {text}")
        return name

    def raw(self, text: str) -> None:
        self.lines.append(text)

    def local(self, type_: str) -> str:
        """A stack slot, allocated in the entry block (where LLVM promotes
        slots to registers)."""
        name = self.fresh("slot")
        self.lines.insert(self.lines.index("entry:") + 1, f"  {name} = alloca {type_}")
        return name

    def field(self, obj: str, offset: int, type_: str) -> str:
        address = self.emit(f"getelementptr i8, ptr {obj}, i64 {offset}")
        return self.emit(f"load {type_}, ptr {address}, align 1")

    def check(self, condition: str, fail: str = "fail") -> None:
        """Continue only if `condition` holds."""
        ok = self.fresh("ok").lstrip("%")
        self.raw(f"  br i1 {condition}, label %{ok}, label %{fail}")
        self.raw(f"{ok}:")


def _store_result(w: _Writer, operand: Operand, value: str, address: str) -> None:
    w.raw(f"  store {type_str(operand.value_type)} {value}, ptr {address}, align 1")


def _call_and_store(
    w: _Writer,
    callee: str,
    signature: tuple[str, Sequence[str]],
    values: Sequence[str],
    results: Sequence[Operand],
    result_addresses: Sequence[str],
    attributes: str = "",
) -> None:
    """Call `callee` with `values` (the matrix results' pointers included)
    and store its non-matrix results at their addresses."""
    return_type, param_types = signature
    args = ", ".join(f"{t} {v}" for t, v in zip(param_types, values, strict=True))
    call = f"call {return_type} {callee}({args}){attributes}"
    scalars = [
        (r, a)
        for r, a in zip(results, result_addresses, strict=True)
        if r.kind in ("scalar", "vector")
    ]
    if not scalars:
        w.raw(f"  {call}")
        return
    returned = w.emit(call)
    if len(scalars) == 1:
        _store_result(w, scalars[0][0], returned, scalars[0][1])
        return
    for j, (r, address) in enumerate(scalars):
        value = w.emit(f"extractvalue {return_type} {returned}, {j}")
        _store_result(w, r, value, address)


@dataclass(frozen=True)
class _Array:
    """An array argument or result that passed its checks."""

    data: str
    """Its data pointer."""
    end: str
    """The end of its data."""
    leading: str
    """Its count of leading (batch) dimensions (i32)."""
    dims: str = ""
    """Its dimensions (matrices and vectors)."""
    count: str = "1"
    """The product of its leading dimensions (i64): 1 for one value."""


def _check_array(
    w: _Writer, obj: str, p: Operand, layout_bits: list[str], batch: bool
) -> _Array:
    """Checks of an array argument or result. A matrix with a layout bit may
    be C- or F-ordered: its bit goes into `layout_bits`. With `batch`, a
    matrix or vector may have leading dimensions: all of size 1, or any, if
    the whole array is C-contiguous (values `core bytes` apart)."""
    w.check(
        w.emit(
            f"icmp eq ptr {w.field(obj, OB_TYPE, 'ptr')}, {_const_ptr(id(np.ndarray))}"
        )
    )
    descr = w.field(obj, ARRAY_DESCR, "ptr")
    matches = [w.emit(f"icmp eq ptr {descr}, {_const_ptr(d)}") for d in p.descrs]
    any_match = matches[0]
    for m in matches[1:]:
        any_match = w.emit(f"or i1 {any_match}, {m}")
    w.check(any_match)
    flags = w.field(obj, ARRAY_FLAGS, "i32")
    required = p.flags & ~C_CONTIGUOUS if p.layout_bit >= 0 else p.flags
    masked = w.emit(f"and i32 {flags}, {required}")
    w.check(w.emit(f"icmp eq i32 {masked}, {required}"))
    if p.layout_bit >= 0:
        order = w.emit(f"and i32 {flags}, {C_CONTIGUOUS | F_CONTIGUOUS}")
        w.check(w.emit(f"icmp ne i32 {order}, 0"))
        c_order = w.emit(f"and i32 {flags}, {C_CONTIGUOUS}")
        is_f = w.emit(f"icmp eq i32 {c_order}, 0")
        bit = w.emit(f"zext i1 {is_f} to i64")
        layout_bits.append(w.emit(f"shl i64 {bit}, {p.layout_bit}"))
    nd = w.field(obj, ARRAY_ND, "i32")
    dims = w.field(obj, ARRAY_DIMS, "ptr")
    data = w.field(obj, ARRAY_DATA, "ptr")
    leading = "0"
    if p.kind == "memref":
        # One dimension, or two (as many arrays are): at least min_size elements.
        is1 = w.emit(f"icmp eq i32 {nd}, 1")
        is2 = w.emit(f"icmp eq i32 {nd}, 2")
        w.check(w.emit(f"or i1 {is1}, {is2}"))
        d0 = w.emit(f"load i64, ptr {dims}, align 1")
        # With nd == 1 this reads strides[0] (NumPy allocates both together).
        d1_address = w.emit(f"getelementptr i64, ptr {dims}, i64 1")
        d1 = w.emit(f"load i64, ptr {d1_address}, align 1")
        factor = w.emit(f"select i1 {is2}, i64 {d1}, i64 1")
        size = w.emit(f"mul i64 {d0}, {factor}")
        w.check(w.emit(f"icmp sge i64 {size}, {p.min_size}"))
        nbytes = w.emit(f"mul i64 {size}, {p.itemsize}")
        return _Array(data, w.emit(f"getelementptr i8, ptr {data}, i64 {nbytes}"), "0")
    count = "1"
    if batch:
        leading = w.emit(f"sub i32 {nd}, {len(p.dims)}")
        w.check(w.emit(f"icmp sge i32 {leading}, 0"))
        count = _product(w, dims, leading)
        one = w.emit(f"icmp eq i64 {count}, 1")
        c_order = w.emit(f"and i32 {flags}, {C_CONTIGUOUS}")
        w.check(w.emit(f"or i1 {one}, {w.emit(f'icmp ne i32 {c_order}, 0')}"))
    else:
        w.check(w.emit(f"icmp eq i32 {nd}, {len(p.dims)}"))
    for j, extent in enumerate(p.dims):
        index = w.emit(f"add i32 {leading}, {j}")
        address = w.emit(f"getelementptr i64, ptr {dims}, i32 {index}")
        d = w.emit(f"load i64, ptr {address}, align 1")
        w.check(w.emit(f"icmp eq i64 {d}, {extent}"))
    nbytes = w.emit(f"mul i64 {count}, {_core_bytes(p)}")
    end = w.emit(f"getelementptr i8, ptr {data}, i64 {nbytes}")
    return _Array(data, end, leading, dims, count)


def _core_bytes(p: Operand) -> int:
    """Bytes of one value of a matrix or vector operand."""
    return math.prod(p.dims) * p.itemsize


def _product(w: _Writer, dims: str, count: str) -> str:
    """The product of the first `count` i64s at `dims` (i64)."""
    accumulator = w.local("i64")
    w.raw(f"  store i64 1, ptr {accumulator}")

    def multiply(index: str) -> None:
        d = _dim(w, dims, index)
        so_far = w.emit(f"load i64, ptr {accumulator}")
        w.raw(f"  store i64 {w.emit(f'mul i64 {so_far}, {d}')}, ptr {accumulator}")

    _for_dims(w, count, multiply)
    return w.emit(f"load i64, ptr {accumulator}")


def _for_dims(w: _Writer, count: str, visit: Callable[[str], str | None]) -> None:
    """A loop over the dimension indices [0, `count`) (i32): `visit(index)`
    emits the body; an i1 it returns must hold, or the entry fails."""
    before, head, body, done = (
        w.fresh(n).lstrip("%") for n in ("pre", "head", "one", "ones")
    )
    i, following = w.fresh("i"), w.fresh("i")
    w.raw(f"  br label %{before}")
    w.raw(f"{before}:")
    w.raw(f"  br label %{head}")
    w.raw(f"{head}:")
    w.raw(f"  {i} = phi i32 [0, %{before}], [{following}, %{body}]")
    more = w.emit(f"icmp slt i32 {i}, {count}")
    w.raw(f"  br i1 {more}, label %{body}, label %{done}")
    w.raw(f"{body}:")
    holds = visit(i)
    w.raw(f"  {following} = add i32 {i}, 1")
    if holds is None:
        w.raw(f"  br label %{head}")
    else:
        w.raw(f"  br i1 {holds}, label %{head}, label %fail")
    w.raw(f"{done}:")


def _check_apart(w: _Writer, a: _Array, b: _Array) -> None:
    """Continue only if the data of `a` and `b` do not overlap."""
    a_first = w.emit(f"icmp ule ptr {a.end}, {b.data}")
    b_first = w.emit(f"icmp ule ptr {b.end}, {a.data}")
    w.check(w.emit(f"or i1 {a_first}, {b_first}"))


def _check_scalar(w: _Writer, obj: str, p: Operand, index: int) -> str:
    """Checks of a scalar argument; its value (as the lowered type)."""
    t = type_str(p.value_type)
    obj_type = w.field(obj, OB_TYPE, "ptr")
    python = f"py{index}"
    numpy = f"np{index}"
    done = f"scalar{index}"
    incoming: list[tuple[str, str]] = []
    is_numpy = w.emit(
        f"icmp eq ptr {obj_type}, {_const_ptr(p.scalar_types[0])}"
        if p.scalar_types
        else "icmp eq i1 0, 1"
    )
    w.raw(f"  br i1 {is_numpy}, label %{numpy}, label %{python}")
    w.raw(f"{numpy}:")
    value = w.field(obj, SCALAR_VALUE, t)
    incoming.append((value, numpy))
    w.raw(f"  br label %{done}")
    w.raw(f"{python}:")
    if p.from_python == "float":
        w.check(w.emit(f"icmp eq ptr {obj_type}, {_const_ptr(id(float))}"))
        double = w.field(obj, SCALAR_VALUE, "double")
        value = double if t == "double" else w.emit(f"fptrunc double {double} to {t}")
    elif p.from_python == "bool":
        w.check(w.emit(f"icmp eq ptr {obj_type}, {_const_ptr(id(bool))}"))
        value = w.emit(f"icmp eq ptr {obj}, {_const_ptr(id(True))}")
        if t != "i1":
            value = w.emit(f"zext i1 {value} to {t}")
    elif p.from_python == "int":
        w.check(w.emit(f"icmp eq ptr {obj_type}, {_const_ptr(id(int))}"))
        overflow = w.local("i32")  # (an alloca elsewhere moves the stack pointer)
        as_long = _const_ptr(_api("PyLong_AsLongLongAndOverflow"))
        number = w.emit(f"call i64 {as_long}(ptr {obj}, ptr {overflow})")
        w.check(w.emit(f"icmp eq i32 {w.emit(f'load i32, ptr {overflow}')}, 0"))
        low, high = p.int_range
        # (inclusive bounds: the end of a 64-bit range is no i64 literal)
        w.check(w.emit(f"icmp sge i64 {number}, {low}"))
        w.check(w.emit(f"icmp sle i64 {number}, {high - 1}"))
        value = number if t == "i64" else w.emit(f"trunc i64 {number} to {t}")
    else:
        w.raw("  br label %fail")
        w.raw(f"{done}:")
        return w.emit(f"phi {t} [{incoming[0][0]}, %{incoming[0][1]}]")
    label = w.fresh("from_python").lstrip("%")
    w.raw(f"  br label %{label}")
    w.raw(f"{label}:")
    w.raw(f"  br label %{done}")
    w.raw(f"{done}:")
    pairs = ", ".join(f"[{v}, %{b}]" for v, b in [*incoming, (value, label)])
    return w.emit(f"phi {t} {pairs}")


def fast_entry(
    name: str,
    callee: str,
    signature: tuple[str, Sequence[str]],
    params: Sequence[Operand],
    results: Sequence[Operand],
    layouts: int,
    batch: tuple[str, int],
) -> str:
    """The METH_FASTCALL entry `name`: the tuple of the arguments, then
    either nothing (the entry allocates the results and returns them) or the
    `out=` array (a tuple of one per result, but for one result), which it
    writes (it returns None); `NotImplemented` if it does not handle the call
    (see the module docs). `layouts` is the address of the table of
    functions by order of the matrices with a layout bit (entry 0, all
    C-ordered, is `callee` itself; a null entry is not compiled yet).
    `batch`: the name of `batch_entry` for `callee` in the same module and
    its `parallel_min_count`, whose loop runs batches of C-ordered values."""
    api = numpy_api()
    assert api is not None
    w = _Writer()
    not_implemented = _const_ptr(id(NotImplemented))
    incref, decref = (_const_ptr(_api(f)) for f in ("Py_IncRef", "Py_DecRef"))
    # Not optimized (optnone: LLVM's -O0 code generation): its ~150 blocks of
    # checks were ~60% of the compile time of a small kernel, and unoptimized
    # they cost ~0.015 µs a call (docs/python-api.md#the-abi-underneath).
    w.raw(f"define ptr {name}(ptr %self, ptr %args, i64 %nargs) optnone noinline {{")
    w.raw("entry:")
    shape = _BatchShape.start(w)
    w.raw("  %result_orders = alloca i64")
    w.raw("  store i64 0, ptr %result_orders")
    w.raw(f"  %dims = alloca [{_MAX_DIMS} x i64]")
    for j, r in enumerate(results):
        w.raw(f"  %result{j} = alloca ptr")
        w.raw(f"  store ptr null, ptr %result{j}")
        w.raw(f"  %address{j} = alloca ptr")
        if r.kind == "scalar":
            w.raw(f"  %scalar_result{j} = alloca {type_str(r.value_type)}")
    if any(
        o.kind == "scalar" and type_str(o.value_type) == "bfloat"
        for o in (*params, *results)
    ):
        # A bf16 scalar crossing this entry's phis and stores is widened to
        # f32 and narrowed back by LLVM, with the CPU's bf16 instruction where
        # it has one (which flushes subnormals): such calls take the general
        # path, which passes bf16 scalars through memory untouched.
        w.check("false", "unhandled")
    # (arguments) or (arguments, out): the caller's tuples, as they are.
    allocate = w.emit("icmp eq i64 %nargs, 1")
    w.check(w.emit(f"or i1 {allocate}, {w.emit('icmp eq i64 %nargs, 2')}"))
    items = _tuple_items(w, w.emit("load ptr, ptr %args"), len(params))
    # Vectors are loaded only once every check has passed, in the block of
    # the call: LLVM cannot carry an odd-length bf16 vector across blocks
    # ("Do not know how to soft promote this operator's operand").
    values: list[str] = []
    vector_data: list[tuple[int, Operand, str]] = []
    layout_bits: list[str] = []
    arrays: list[_Array] = []
    for i, p in enumerate(params):
        slot = w.emit(f"getelementptr ptr, ptr {items}, i64 {i}")
        obj = w.emit(f"load ptr, ptr {slot}")
        if p.kind == "scalar":
            values.append(_check_scalar(w, obj, p, i))
            continue
        array = _check_array(w, obj, p, layout_bits, batch=p.kind != "memref")
        arrays.append(array)
        if p.kind != "memref":
            shape.join(w, array)
        if p.kind == "vector":
            vector_data.append((len(values), p, array.data))
        values.append(array.data)
    leading = shape.leading(w, "%dims")
    given, allocation, checked = (
        w.fresh(n).lstrip("%") for n in ("given", "allocation", "checked")
    )
    w.raw(f"  br i1 {allocate}, label %{allocation}, label %{given}")
    w.raw(f"{given}:")
    result_bits: list[str] = []
    out_slot = w.emit("getelementptr ptr, ptr %args, i64 1")
    if len(results) == 1:  # the array itself, else a tuple of them
        outs = out_slot
    else:
        outs = _tuple_items(w, w.emit(f"load ptr, ptr {out_slot}"), len(results))
    for j, r in enumerate(results):
        slot = w.emit(f"getelementptr ptr, ptr {outs}, i64 {j}")
        out = _check_array(w, w.emit(f"load ptr, ptr {slot}"), r, result_bits, True)
        w.check(w.emit(f"icmp eq i32 {out.leading}, {leading}"))

        def equal(index: str, out: _Array = out) -> str:
            return w.emit(
                f"icmp eq i64 {_dim(w, out.dims, index)}, {_dim(w, '%dims', index)}"
            )

        _for_dims(w, leading, equal)
        for other in arrays:
            _check_apart(w, out, other)
        arrays.append(out)
        w.raw(f"  store ptr {out.data}, ptr %address{j}")
    w.raw(f"  store i64 {_or_all(w, result_bits)}, ptr %result_orders")
    w.raw(f"  br label %{checked}")
    w.raw(f"{allocation}:")
    _allocate_results(w, api, results, leading, incref)
    w.raw(f"  br label %{checked}")
    w.raw(f"{checked}:")
    if result_bits:  # allocated results are C-ordered: 0
        layout_bits.append(w.emit("load i64, ptr %result_orders"))
    if layout_bits:
        mask = _or_all(w, layout_bits)
        slot = w.emit(f"getelementptr ptr, ptr {_const_ptr(layouts)}, i64 {mask}")
        compiled = w.emit(f"load ptr, ptr {slot}")
        default = w.emit(f"icmp eq i64 {mask}, 0")
        callee = w.emit(f"select i1 {default}, ptr {callee}, ptr {compiled}")
        w.check(w.emit(f"icmp ne ptr {callee}, null"), "unhandled")
    addresses = [w.emit(f"load ptr, ptr %address{j}") for j in range(len(results))]
    called = w.fresh("called").lstrip("%")
    one, several = w.fresh("one").lstrip("%"), w.fresh("several").lstrip("%")
    count = w.emit(f"load i64, ptr {shape.count}")
    w.raw(
        f"  br i1 {w.emit(f'icmp eq i64 {count}, 1')}, label %{one}, label %{several}"
    )
    w.raw(f"{several}:")
    if layout_bits:  # the loop calls the all-C-ordered function
        w.check(w.emit(f"icmp eq i64 {_or_all(w, layout_bits)}, 0"), "unhandled")
    operands = _batch_operands(w, params, values, arrays, results, addresses)
    _run_loop(w, *batch, count, operands)
    w.raw(f"  br label %{called}")
    w.raw(f"{one}:")
    for index, p, data in vector_data:
        values[index] = w.emit(f"load {type_str(p.value_type)}, ptr {data}, align 1")
    matrix_outs = [
        a for r, a in zip(results, addresses, strict=True) if r.kind == "matrix"
    ]
    _call_and_store(w, callee, signature, [*values, *matrix_outs], results, addresses)
    w.raw(f"  br label %{called}")
    w.raw(f"{called}:")
    done = w.fresh("done").lstrip("%")
    w.raw(f"  br i1 {allocate}, label %{done}, label %return_none")
    w.raw(f"{done}:")
    objects: list[str] = []
    for j, r in enumerate(results):
        if r.kind == "scalar":  # a NumPy scalar (a batch of one is refused)
            scalar = _const_ptr(api.scalar)
            made = w.emit(
                f"call ptr {scalar}(ptr %scalar_result{j}, ptr {_const_ptr(r.descrs[0])}, ptr null)"
            )
            w.raw(f"  store ptr {made}, ptr %result{j}")
            w.check(w.emit(f"icmp ne ptr {made}, null"), "no_memory")
            objects.append(made)
        else:
            objects.append(w.emit(f"load ptr, ptr %result{j}"))
    if not objects:
        w.raw("  br label %return_none")
    elif len(objects) == 1:
        w.raw(f"  ret ptr {objects[0]}")
    else:
        pack = _const_ptr(_api("PyTuple_Pack"))
        items = ", ".join(f"ptr {o}" for o in objects)
        packed = w.emit(f"call ptr (i64, ...) {pack}(i64 {len(objects)}, {items})")
        for o in objects:  # the tuple holds them now
            w.raw(f"  call void {decref}(ptr {o})")
        w.raw(f"  ret ptr {packed}")
    w.raw("return_none:")
    none = _const_ptr(id(None))
    w.raw(f"  call void {incref}(ptr {none})")
    w.raw(f"  ret ptr {none}")
    w.raw("no_memory:")  # NumPy has set the exception
    for j in range(len(results)):
        w.raw(f"  %freed{j} = load ptr, ptr %result{j}")
        w.raw(f"  call void {decref}(ptr %freed{j})")
    w.raw("  ret ptr null")
    w.raw("fail:")
    w.raw("  br label %unhandled")
    w.raw("unhandled:")
    for j in range(len(results)):  # results allocated before a later check
        w.raw(f"  %unused{j} = load ptr, ptr %result{j}")
        w.raw(f"  call void {decref}(ptr %unused{j})")
    w.raw(f"  call void {incref}(ptr {not_implemented})")
    w.raw(f"  ret ptr {not_implemented}")
    w.raw("}")
    return "\n".join(w.lines)


def _batch_operands(
    w: _Writer,
    params: Sequence[Operand],
    values: Sequence[str],
    arrays: Sequence[_Array],
    results: Sequence[Operand],
    addresses: Sequence[str],
) -> tuple[str, str]:
    """The base pointers and byte strides of the operands of a batch, as
    the batch loop takes them: scalars from a stack slot and memrefs every
    call the same (stride 0), matrices and vectors one value apart or
    broadcast (stride 0), results one value apart."""
    n = len(params) + len(results)
    bases, strides = w.local(f"[{n} x ptr]"), w.local(f"[{n} x i64]")
    param_arrays = iter(arrays)
    operands: list[tuple[str, str]] = []
    for p, value in zip(params, values, strict=True):
        if p.kind == "scalar":
            slot = w.local(type_str(p.value_type))
            w.raw(f"  store {type_str(p.value_type)} {value}, ptr {slot}")
            operands.append((slot, "0"))
            continue
        array = next(param_arrays)
        if p.kind == "memref":
            operands.append((array.data, "0"))
            continue
        single = w.emit(f"icmp eq i64 {array.count}, 1")
        stride = w.emit(f"select i1 {single}, i64 0, i64 {_core_bytes(p)}")
        operands.append((array.data, stride))
    operands += [
        (a, str(_core_bytes(r))) for r, a in zip(results, addresses, strict=True)
    ]
    for k, (base, stride) in enumerate(operands):
        base_slot = w.emit(f"getelementptr ptr, ptr {bases}, i64 {k}")
        w.raw(f"  store ptr {base}, ptr {base_slot}")
        stride_slot = w.emit(f"getelementptr i64, ptr {strides}, i64 {k}")
        w.raw(f"  store i64 {stride}, ptr {stride_slot}")
    return bases, strides


def _loop_symbols(batch_name: str) -> tuple[str, str]:
    """The batch loop of `batch_entry` `batch_name`, and its trampoline onto
    the threads."""
    return suffixed(batch_name, ".body"), suffixed(batch_name, ".parallel")


def _run_loop(
    w: _Writer,
    batch_name: str,
    parallel_min_count: int,
    count: str,
    operands: tuple[str, str],
) -> None:
    """Calls the batch loop of `batch_name` over `count` calls with the GIL
    released: on the threads from `parallel_min_count` calls (0: never)."""
    body, trampoline = _loop_symbols(batch_name)
    bases, strides = operands
    save = _const_ptr(_api("PyEval_SaveThread"))
    restore = _const_ptr(_api("PyEval_RestoreThread"))
    thread = w.emit(f"call ptr {save}()")
    serial, ran = w.fresh("serial").lstrip("%"), w.fresh("ran").lstrip("%")
    if parallel_min_count > 0:
        parallel = w.fresh("parallel").lstrip("%")
        large = w.emit(f"icmp sge i64 {count}, {parallel_min_count}")
        w.raw(f"  br i1 {large}, label %{parallel}, label %{serial}")
        w.raw(f"{parallel}:")
        w.raw(f"  call void {trampoline}(i64 {count}, ptr {bases}, ptr {strides})")
        w.raw(f"  br label %{ran}")
    else:
        w.raw(f"  br label %{serial}")
    w.raw(f"{serial}:")
    w.raw(f"  call void {body}(i64 0, i64 {count}, ptr {bases}, ptr {strides})")
    w.raw(f"  br label %{ran}")
    w.raw(f"{ran}:")
    w.raw(f"  call void {restore}(ptr {thread})")


def _tuple_items(w: _Writer, obj: str, count: int) -> str:
    """Continue only if `obj` is a tuple of `count` items; its items."""
    w.check(
        w.emit(f"icmp eq ptr {w.field(obj, OB_TYPE, 'ptr')}, {_const_ptr(id(tuple))}")
    )
    w.check(w.emit(f"icmp eq i64 {w.field(obj, TUPLE_SIZE, 'i64')}, {count}"))
    return w.emit(f"getelementptr i8, ptr {obj}, i64 {TUPLE_ITEMS}")


_MAX_DIMS = 66
"""Dimensions of a result array: NumPy's most (64) and room for a matrix's."""


def _allocate_results(
    w: _Writer,
    api: NumPyAPI,
    results: Sequence[Operand],
    batch: str,
    incref: str,
) -> None:
    """New C-ordered arrays for the results, each with the `batch` leading
    dimensions already in `%dims` (`%result<j>`, their data in
    `%address<j>`); a scalar result is computed into `%scalar_result<j>`
    (and refused in a batch)."""
    if any(r.kind == "scalar" for r in results):
        w.check(w.emit(f"icmp eq i32 {batch}, 0"), "unhandled")
    arrays = [(j, r) for j, r in enumerate(results) if r.kind != "scalar"]
    new = _const_ptr(api.new_from_descr)
    array_type = _const_ptr(api.array_type)
    for j, r in enumerate(results):
        if r.kind == "scalar":
            w.raw(f"  store ptr %scalar_result{j}, ptr %address{j}")
    for j, r in arrays:
        for k, extent in enumerate(r.dims):
            index = w.emit(f"add i32 {batch}, {k}")
            address = w.emit(f"getelementptr i64, ptr %dims, i32 {index}")
            w.raw(f"  store i64 {extent}, ptr {address}")
        nd = w.emit(f"add i32 {batch}, {len(r.dims)}")
        descr = _const_ptr(r.descrs[0])
        w.raw(f"  call void {incref}(ptr {descr})")  # the call steals it
        made = w.emit(
            f"call ptr {new}(ptr {array_type}, ptr {descr}, i32 {nd}, ptr %dims, "
            "ptr null, ptr null, i32 0, ptr null)"
        )
        w.raw(f"  store ptr {made}, ptr %result{j}")
        w.check(w.emit(f"icmp ne ptr {made}, null"), "no_memory")
        w.raw(f"  store ptr {w.field(made, ARRAY_DATA, 'ptr')}, ptr %address{j}")


def _dim(w: _Writer, dims: str, index: str) -> str:
    """Dimension `index` (i32) of the i64s at `dims`."""
    address = w.emit(f"getelementptr i64, ptr {dims}, i32 {index}")
    return w.emit(f"load i64, ptr {address}, align 1")


@dataclass(frozen=True)
class _BatchShape:
    """Stack slots of the batch the arguments agree on so far: the count of
    calls (1: one call), the count and dimensions of the leading dimensions
    of the arguments holding several values (all equal), and the most
    leading dimensions of size 1 of the others (they broadcast)."""

    count: str
    nd: str
    dims: str
    ones: str

    @staticmethod
    def start(w: _Writer) -> "_BatchShape":
        shape = _BatchShape(
            w.local("i64"), w.local("i32"), w.local("ptr"), w.local("i32")
        )
        w.raw(f"  store i64 1, ptr {shape.count}")
        w.raw(f"  store i32 0, ptr {shape.nd}")
        w.raw(f"  store ptr null, ptr {shape.dims}")
        w.raw(f"  store i32 0, ptr {shape.ones}")
        return shape

    def join(self, w: _Writer, array: _Array) -> None:
        """Continue only if `array`'s leading dimensions broadcast with the
        batch so far: all of size 1, or the batch's own (the first array
        with several values sets them)."""
        ones, many, first, same, joined = (
            w.fresh(n).lstrip("%") for n in ("ones", "many", "first", "same", "joined")
        )
        single = w.emit(f"icmp eq i64 {array.count}, 1")
        w.raw(f"  br i1 {single}, label %{ones}, label %{many}")
        w.raw(f"{many}:")
        seen = w.emit(f"load i64, ptr {self.count}")
        w.raw(
            f"  br i1 {w.emit(f'icmp eq i64 {seen}, 1')}, label %{first}, label %{same}"
        )
        w.raw(f"{first}:")
        w.raw(f"  store i64 {array.count}, ptr {self.count}")
        w.raw(f"  store i32 {array.leading}, ptr {self.nd}")
        w.raw(f"  store ptr {array.dims}, ptr {self.dims}")
        w.raw(f"  br label %{joined}")
        w.raw(f"{same}:")
        w.check(
            w.emit(f"icmp eq i32 {array.leading}, {w.emit(f'load i32, ptr {self.nd}')}")
        )
        batch_dims = w.emit(f"load ptr, ptr {self.dims}")

        def equal(index: str) -> str:
            own = _dim(w, array.dims, index)
            return w.emit(f"icmp eq i64 {own}, {_dim(w, batch_dims, index)}")

        _for_dims(w, array.leading, equal)
        w.raw(f"  br label %{joined}")
        w.raw(f"{ones}:")
        so_far = w.emit(f"load i32, ptr {self.ones}")
        more = w.emit(f"icmp sgt i32 {array.leading}, {so_far}")
        most = w.emit(f"select i1 {more}, i32 {array.leading}, i32 {so_far}")
        w.raw(f"  store i32 {most}, ptr {self.ones}")
        w.raw(f"  br label %{joined}")
        w.raw(f"{joined}:")

    def leading(self, w: _Writer, dims: str) -> str:
        """Writes the leading dimensions of the results into `dims`: the
        batch's, or as many 1s as the most of any argument; their count
        (i32). Continue only if the arguments of size 1 have no more leading
        dimensions than the batch."""
        slot = w.local("i32")
        copy, fill, shaped = (
            w.fresh(n).lstrip("%") for n in ("copy", "fill", "shaped")
        )
        ones = w.emit(f"load i32, ptr {self.ones}")
        batched = w.emit(f"icmp ne i64 {w.emit(f'load i64, ptr {self.count}')}, 1")
        w.raw(f"  br i1 {batched}, label %{copy}, label %{fill}")

        def write(count: str, value: Callable[[str], str]) -> None:
            """`count` leading dimensions, `value(index)` each."""

            def store(index: str) -> None:
                target = w.emit(f"getelementptr i64, ptr {dims}, i32 {index}")
                w.raw(f"  store i64 {value(index)}, ptr {target}")

            _for_dims(w, count, store)
            w.raw(f"  store i32 {count}, ptr {slot}")
            w.raw(f"  br label %{shaped}")

        w.raw(f"{copy}:")
        nd = w.emit(f"load i32, ptr {self.nd}")
        w.check(w.emit(f"icmp sle i32 {ones}, {nd}"))
        source = w.emit(f"load ptr, ptr {self.dims}")
        write(nd, lambda index: _dim(w, source, index))
        w.raw(f"{fill}:")
        write(ones, lambda _: "1")
        w.raw(f"{shaped}:")
        return w.emit(f"load i32, ptr {slot}")


def _or_all(w: _Writer, values: Sequence[str]) -> str:
    """The bitwise or of i64 `values` (0 if none)."""
    result = values[0] if values else "0"
    for value in values[1:]:
        result = w.emit(f"or i64 {result}, {value}")
    return result


def batch_entry(
    name: str,
    callee: str,
    signature: tuple[str, Sequence[str]],
    params: Sequence[Operand],
    results: Sequence[Operand],
    parallel_min_count: int = 0,
    inline: bool = True,
) -> str:
    """The METH_FASTCALL batch loop `name` (see the module docs). A batch of
    at least `parallel_min_count` calls (0: never) runs on `mx`'s threads
    (`mx.runtime.parallel_for`): each thread a contiguous chunk of the
    calls, the same calls a single thread makes. Without `inline`, the loop
    calls `callee` (`noinline`) instead of letting LLVM inline it."""
    w = _Writer()
    operands = [*params, *results]
    n = len(operands)
    from_long = _const_ptr(_api("PyLong_FromLong"))
    body, trampoline = _loop_symbols(name)
    w.raw(f"define ptr {name}(ptr %self, ptr %args, i64 %nargs) {{")
    w.raw("entry:")
    control_slot = w.emit(f"getelementptr ptr, ptr %args, i64 {n}")
    control = w.field(w.emit(f"load ptr, ptr {control_slot}"), ARRAY_DATA, "ptr")
    w.raw(f"  %count = load i64, ptr {control}")
    w.raw(f"  %bases = alloca ptr, i64 {n}")
    w.raw(f"  %strides = getelementptr i8, ptr {control}, i64 8")
    for k in range(n):
        slot = w.emit(f"getelementptr ptr, ptr %args, i64 {k}")
        data = w.field(w.emit(f"load ptr, ptr {slot}"), ARRAY_DATA, "ptr")
        offset = w.field(control, 8 * (1 + n + k), "i64")
        base = w.emit(f"getelementptr i8, ptr {data}, i64 {offset}")
        base_slot = w.emit(f"getelementptr ptr, ptr %bases, i64 {k}")
        w.raw(f"  store ptr {base}, ptr {base_slot}")
    _run_loop(w, name, parallel_min_count, "%count", ("%bases", "%strides"))
    w.raw(f"  %done = call ptr {from_long}(i64 0)")
    w.raw("  ret ptr %done")
    w.raw("}")
    entry = "\n".join(w.lines)
    loop = _batch_body(body, callee, signature, params, results, inline)
    if parallel_min_count <= 0:
        return entry + "\n\n" + loop
    return "\n\n".join([entry, loop, parallel_for(trampoline, body, ["ptr", "ptr"])])


def _batch_body(
    name: str,
    callee: str,
    signature: tuple[str, Sequence[str]],
    params: Sequence[Operand],
    results: Sequence[Operand],
    inline: bool,
) -> str:
    """`void name(i64 lo, i64 hi, ptr bases, ptr strides)`: calls lo..hi-1
    of the batch, operand k of call i at `bases[k] + i * strides[k]`
    (`noinline` calls without `inline`)."""
    w = _Writer()
    operands = [*params, *results]
    # noinline: optimized once, not again inside each of its two callers
    # (half of the rest of a small kernel's compile time).
    w.raw(
        f"define internal void {name}(i64 %lo, i64 %hi, ptr %bases, ptr %strides)"
        " noinline {"
    )
    w.raw("entry:")
    bases: list[str] = []
    strides: list[str] = []
    for k in range(len(operands)):
        base_slot = w.emit(f"getelementptr ptr, ptr %bases, i64 {k}")
        bases.append(w.emit(f"load ptr, ptr {base_slot}"))
        stride_slot = w.emit(f"getelementptr i64, ptr %strides, i64 {k}")
        strides.append(w.emit(f"load i64, ptr {stride_slot}"))
    w.raw("  %empty = icmp sge i64 %lo, %hi")
    w.raw("  br i1 %empty, label %exit, label %loop")
    w.raw("loop:")
    w.raw("  %i = phi i64 [%lo, %entry], [%next, %loop]")
    pointers: list[str] = []
    for k in range(len(operands)):
        offset = w.emit(f"mul i64 %i, {strides[k]}")
        pointers.append(w.emit(f"getelementptr i8, ptr {bases[k]}, i64 {offset}"))
    values: list[str] = []
    for p, pointer in zip(params, pointers, strict=False):
        if p.kind in ("scalar", "vector"):
            values.append(
                w.emit(f"load {type_str(p.value_type)}, ptr {pointer}, align 1")
            )
        else:
            values.append(pointer)
    addresses = pointers[len(params) :]
    matrix_outs = [
        a for r, a in zip(results, addresses, strict=True) if r.kind == "matrix"
    ]
    _call_and_store(
        w,
        callee,
        signature,
        [*values, *matrix_outs],
        results,
        addresses,
        "" if inline else " noinline",
    )
    w.raw("  %next = add i64 %i, 1")
    w.raw("  %more = icmp slt i64 %next, %hi")
    w.raw("  br i1 %more, label %loop, label %exit")
    w.raw("exit:")
    w.raw("  ret void")
    w.raw("}")
    return "\n".join(w.lines)

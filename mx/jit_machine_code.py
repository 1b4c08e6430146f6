"""The JIT's LLVM: LLVM IR -> machine code in memory for the host CPU
(`machine_code`, -O3), callable from Python as builtin functions
(`builtin_function`). Each module's machine code lives in an execution
engine of its own (`NativeCode`), freed when the last function using it
goes; every use of LLVM holds one lock (`_llvm`). Used by `mx.jit_compile`.
"""

import ctypes
import threading
import weakref
from collections.abc import Callable, Generator, Sequence
from contextlib import contextmanager, suppress
from dataclasses import replace
from functools import cache

import llvmlite.binding as binding
from llvmlite.binding.newpassmanagers import NewPassManager

from mx.errors import CompileError
from mx.lowering.matrix_to_affine.caches import host_caches
from mx.lowering.matrix_to_affine.target_cpu import TargetCpu, cpu_of
from mx.targets.compile_guard import compile_in_child
from mx.targets.llvm_ir import host_target

_ENGINE_BYTES = 64 * 1024
"""Memory an execution engine holds beside its machine code (its target
machine and sections; measured: ~57 KB on x86-64), for the cache's sizes."""

_LLVM_LOCK = threading.RLock()
"""Held for every use of LLVM: compiling, and freeing machine code. LLVM's
global context is not thread-safe, and llvmlite releases the GIL in its calls,
so a garbage collection in one thread may free an engine while another
thread compiles."""

_unused_engines: list[binding.ExecutionEngine] = []
_engines_alive = 0


@contextmanager
def _llvm() -> Generator[None]:
    """Holds `_LLVM_LOCK`; frees the engines left unused meanwhile."""
    with _LLVM_LOCK:
        try:
            yield
        finally:
            _free_unused_engines()


def _free_unused_engines() -> None:
    """Frees the engines whose code nothing uses any more, if no other thread
    is using LLVM (else it does, at the end of its work)."""
    global _engines_alive
    if not _LLVM_LOCK.acquire(blocking=False):
        return
    try:
        while _unused_engines:
            _unused_engines.pop().close()
            _engines_alive -= 1
    finally:
        _LLVM_LOCK.release()


def engines_alive() -> int:
    """Execution engines not freed yet."""
    return _engines_alive


def _release_engine(engine: binding.ExecutionEngine) -> None:
    _unused_engines.append(engine)
    _free_unused_engines()


class NativeCode:
    """A module's machine code, in an execution engine of its own: freed
    when the last function (or entry) using it goes."""

    def __init__(
        self,
        engine: binding.ExecutionEngine,
        size: int,
        addresses: dict[str, int],
        speed: int,
    ):
        global _engines_alive
        self.engine = engine
        self.size = size
        """Bytes it holds: its machine code and its engine (`_ENGINE_BYTES`)."""
        self.addresses = addresses
        """The address of each symbol asked for."""
        self.speed = speed
        """The optimization level LLVM compiled it at (`SPEED_LEVELS`)."""
        _engines_alive += 1
        # At exit, the engines die with the process (no LLVM teardown races).
        weakref.finalize(self, _release_engine, engine).atexit = False


def machine_code(
    llvm_ir: str, symbols: Sequence[str], symbol_origin: Callable[[str], str]
) -> NativeCode:
    """Compiles `llvm_ir` at -O3 for the host CPU and loads it. Only the
    object code is kept: the engine is created from it, not from the IR
    module (which would stay in memory, ~15 times the size of the code).
    `symbol_origin` names the source function of an LLVM symbol, for the
    error if LLVM would abort."""
    with _llvm():
        # In a child (`compile_in_child`), forked while this thread holds the
        # LLVM lock: no other thread is inside LLVM, so the child's copy of
        # its state is consistent. LLVM aborts the process on some modules (a
        # type a CPU cannot legalize, an optimizer bug: `SPEED_LEVELS`); the
        # child's object code is loaded here, so LLVM compiles the module
        # once.
        tagged = compile_in_child(
            llvm_ir, _host()[1], _emit_object, symbol_origin, _emit_object_after_abort
        )
        speed, obj = tagged[0], tagged[1:]
        install_runtime_symbols()
        engine = binding.create_mcjit_compiler(
            binding.parse_assembly(""), _target_machine()
        )
        engine.add_object_file(binding.ObjectFileRef.from_data(obj))
        engine.finalize_object()
        addresses = {s: engine.get_function_address(s) for s in symbols}
    return NativeCode(engine, len(obj) + _ENGINE_BYTES, addresses, speed)


_BF16_TRUNCATION = """
define <8 x i16> @__truncsfbf2(float %x) {
  %bits = bitcast float %x to i32
  %magnitude = and i32 %bits, 2147483647
  %nan = icmp ugt i32 %magnitude, 2139095040
  %odd = and i32 %bits, 65536
  %half = lshr i32 %odd, 16
  %bias = add i32 %half, 32767
  %rounded = add i32 %bits, %bias
  %high = lshr i32 %bits, 16
  %low = and i32 %bits, 65535
  %payload_low = icmp ne i32 %low, 0
  %quiet = select i1 %payload_low, i32 64, i32 0
  %kept = or i32 %high, %quiet
  %nearest = lshr i32 %rounded, 16
  %result = select i1 %nan, i32 %kept, i32 %nearest
  %narrow = trunc i32 %result to i16
  %vector = insertelement <8 x i16> zeroinitializer, i16 %narrow, i64 0
  ret <8 x i16> %vector
}
"""
"""f32 -> bf16 (round to nearest even) in the libcall's register convention
(in and out in xmm0). LLVM calls it where a CPU has no bf16 instruction: it
holds a `bfloat` loaded, passed or splatted as an f32 and narrows it back
(so the values it sees are exact bf16s, which this returns bit for bit,
NaN payloads included). LLVM's runtime library has it, but neither libgcc
12 nor the Python process does, and MCJIT called address 0 (a crash on Zen 1,
Zen 2/3 and Intel CPUs before Cooper Lake)."""

RUNTIME_LIBCALLS: dict[str, str] = {"__truncsfbf2": _BF16_TRUNCATION}
"""The libcalls LLVM may emit that the process lacks, each with the LLVM IR
defining it for the JIT."""


@cache
def install_runtime_symbols() -> binding.ExecutionEngine:
    """Defines `RUNTIME_LIBCALLS` for every engine created after it (once:
    an engine of its own, kept for the life of the process). Loads GCC's runtime library
    too, for the f16 libcalls of CPUs without F16C (`__extendhfsf2`,
    `__truncsfhf2`: libgcc_s since GCC 12)."""
    with suppress(RuntimeError):  # (no libgcc_s: only F16C-less CPUs miss it)
        binding.load_library_permanently("libgcc_s.so.1")
    engine = binding.create_mcjit_compiler(
        binding.parse_assembly("".join(RUNTIME_LIBCALLS.values())), _target_machine()
    )
    engine.finalize_object()
    for name in RUNTIME_LIBCALLS:
        binding.add_symbol(name, engine.get_function_address(name))
    return engine


SPEED_LEVELS = (3, 2)
"""The optimization levels the JIT tries in turn: -O2 where -O3 leaves the
module invalid. LLVM 22's -O3 (llvmlite 0.50) did so on a packed MXFP4
matvec with `index` offsets in a loop over layers: after loop unswitching
and the sinking of a table permute into the loop's exit, a shuffle used
another's result before its definition, and instruction selection aborted
the process ("Already set a value for this node!"). LLVM 16's -O3 leaves
the same module valid."""


def _emit_object(llvm_ir: str) -> bytes:
    """What the JIT asks of LLVM for `llvm_ir`: parsing, verification,
    optimization (-O3, else -O2: `SPEED_LEVELS`) and the object code for the
    host CPU (run in the compile guard's child)."""
    return _emit_object_at(llvm_ir, SPEED_LEVELS)


def _emit_object_after_abort(llvm_ir: str) -> bytes:
    """`_emit_object` at the levels after the first: for a module whose
    compilation at -O3 aborted LLVM."""
    return _emit_object_at(llvm_ir, SPEED_LEVELS[1:])


def _emit_object_at(llvm_ir: str, speeds: Sequence[int]) -> bytes:
    """The object code of `llvm_ir` optimized at the first of `speeds` that
    leaves it valid, after a byte holding that level (the child sends both
    through one pipe; `NativeCode.speed`). The module is parsed into an LLVM
    context of its own, disposed after it: LLVM's global context keeps the
    constants and distinct metadata of every module parsed into it for the
    life of the process (~0.5 KB for a few distinct constants). Raises
    `CompileError` if no level leaves the module valid."""
    for speed in speeds:
        context = binding.create_context()
        try:
            module = binding.parse_assembly(llvm_ir, context=context)
            try:
                obj = _optimized_object(module, speed)
            finally:
                module.close()
        finally:
            context.close()
        if obj is not None:
            return bytes([speed]) + obj
    levels = " and ".join(f"-O{speed}" for speed in speeds)
    raise CompileError(
        [
            f"error: LLVM's optimizer left the module invalid at {levels}; "
            "please report it with the module"
        ]
    )


def _optimized_object(module: binding.ModuleRef, speed: int) -> bytes | None:
    """The object code of `module` for the host CPU, verified and optimized
    at -O`speed`; None if the optimized module does not verify (code
    generation would abort on it)."""
    module.verify()
    machine = _target_machine()
    tuning = binding.create_pipeline_tuning_options(speed_level=speed)
    # llvmlite 0.50's pass builder never deletes the instrumentation callbacks
    # it creates, nor what each run registers in them: ~2.1 KB of native memory
    # per compile (docs/xdsl-upstream.md#llvmlite). A builder shared by compiles
    # is no way out: each run registers callbacks into it pointing at objects
    # that die with the run, and the next run would call them.
    builder = binding.create_pass_builder(machine, tuning)
    passes = builder.getModulePassManager()
    passes.run(module, builder)
    # llvmlite 0.50's ModulePassManager never frees itself (its `_dispose`
    # is shadowed by ObjectRef's in its bases' order), leaking the passes'
    # state: ~120 KB per compile.
    NewPassManager._dispose(passes)  # pyright: ignore[reportPrivateUsage]
    passes.detach()
    try:
        module.verify()
    except RuntimeError:
        return None
    return machine.emit_object(module)


@cache
def _host() -> tuple[str, str, str]:
    # `host_target` may come from a cache without loading LLVM's targets;
    # every target machine below needs them (idempotent calls).
    binding.initialize_native_target()
    binding.initialize_native_asmprinter()
    triple, _ = host_target()
    return (
        triple,
        binding.get_host_cpu_name(),
        binding.get_host_cpu_features().flatten(),
    )


def host_cpu() -> TargetCpu:
    """The host CPU, as the kernels are shaped for it, with its caches."""
    _, cpu, features = _host()
    return replace(cpu_of(features, cpu), caches=host_caches())


def _target_machine() -> binding.TargetMachine:
    """A new target machine for the host CPU (an execution engine owns and
    frees the one it is created with). With a generic CPU, half conversions
    would become libcalls that MCJIT cannot resolve."""
    triple, cpu, features = _host()
    return binding.Target.from_triple(triple).create_target_machine(
        cpu=cpu, features=features, opt=3, codemodel="jitdefault"
    )


class _MethodDef(ctypes.Structure):
    _fields_ = [
        ("ml_name", ctypes.c_char_p),
        ("ml_meth", ctypes.c_void_p),
        ("ml_flags", ctypes.c_int),
        ("ml_doc", ctypes.c_char_p),
    ]


_METH_FASTCALL = 0x80


def builtin_function(name: str, address: int) -> Callable[..., int]:
    """A Python builtin function calling the METH_FASTCALL entry at `address`.
    Its `self` (which the entry ignores) is its own `PyMethodDef`, which must
    live as long as it does: the garbage collector reads the definition of
    every builtin it visits, also after the machine code has been freed."""
    new = ctypes.pythonapi.PyCFunction_NewEx
    new.restype = ctypes.py_object
    new.argtypes = [ctypes.c_void_p, ctypes.py_object, ctypes.c_void_p]
    definition = _MethodDef(name.encode(), address, _METH_FASTCALL, None)
    return new(ctypes.addressof(definition), definition, None)

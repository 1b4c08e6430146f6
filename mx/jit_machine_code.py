"""The JIT's LLVM: LLVM IR -> machine code in memory for the host CPU
(`machine_code`, -O3), callable from Python as builtin functions
(`builtin_function`). Each module's machine code lives in an execution
engine of its own (`NativeCode`), freed when the last function using it
goes; every use of LLVM holds one lock (`_llvm`). Used by `mx.jit_compile`.
"""

import ctypes
import re
import threading
import weakref
from collections.abc import Callable, Generator, Sequence
from contextlib import contextmanager
from functools import cache

import llvmlite.binding as binding
from llvmlite.binding.newpassmanagers import NewPassManager

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
        self, engine: binding.ExecutionEngine, size: int, addresses: dict[str, int]
    ):
        global _engines_alive
        self.engine = engine
        self.size = size
        """Bytes it holds: its machine code and its engine (`_ENGINE_BYTES`)."""
        self.addresses = addresses
        """The address of each symbol asked for."""
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
        if _NARROW_FLOAT_VECTOR.search(llvm_ir):
            # Forked while this thread holds the LLVM lock: no other thread is
            # inside LLVM, so the child's copy of its state is consistent. The
            # child's object code is loaded here: LLVM compiles the module once.
            obj = compile_in_child(llvm_ir, _host()[1], _emit_object, symbol_origin)
        else:
            obj = _emit_object(llvm_ir)
        engine = binding.create_mcjit_compiler(
            binding.parse_assembly(""), _target_machine()
        )
        engine.add_object_file(binding.ObjectFileRef.from_data(obj))
        engine.finalize_object()
        addresses = {s: engine.get_function_address(s) for s in symbols}
    return NativeCode(engine, len(obj) + _ENGINE_BYTES, addresses)


def _emit_object(llvm_ir: str) -> bytes:
    """What the JIT asks of LLVM for `llvm_ir`: parsing, verification,
    optimization (-O3) and the object code for the host CPU. Callers hold
    the LLVM lock, or are the compile guard's child. The module is parsed
    into an LLVM context of its own, disposed after it: LLVM's global context
    keeps the constants and distinct metadata of every module parsed into it
    for the life of the process (~0.5 KB for a few distinct constants)."""
    context = binding.create_context()
    try:
        module = binding.parse_assembly(llvm_ir, context=context)
        try:
            return _optimized_object(module)
        finally:
            module.close()
    finally:
        context.close()


def _optimized_object(module: binding.ModuleRef) -> bytes:
    """The object code of `module` for the host CPU, verified and optimized
    at -O3."""
    module.verify()
    machine = _target_machine()
    tuning = binding.create_pipeline_tuning_options(speed_level=3)
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
    return machine.emit_object(module)


_NARROW_FLOAT_VECTOR = re.compile(r" x (half|bfloat)>")
"""An f16 or bf16 vector type in LLVM IR: LLVM legalizes these per CPU, so a
module with one is compiled in a child process (`compile_in_child`)."""


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

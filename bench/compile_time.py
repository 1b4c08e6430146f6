"""Compile time: `mx-opt -p mx-lower-to-llvm -t llvm` vs. `xdsl-opt` parse+print of one module.

usage: python -m bench.compile_time [--funcs N] [--chains] [--growth] [--parse] [--out DIR] [--write FILE]
The module has N functions of 23 ops each (loads, elementwise ops, matmul, transposes,
stores; ≥ 10k ops by default); with `--chains`, N functions of a chain of 196 dependent
4×4 adds/transposes/muls (200 ops each; 48 functions by default: 9 600 ops). Measures the
CPU time and peak memory of the two commands as processes; in-process (imports excluded),
parse+print against each step of mx-opt's lowering, and a pyinstrument profile of the
lowering (DIR/compile_profile.txt); and the cold in-process JIT of a 4×4 kernel. With
`--growth`, only the processes, at ¼, ½, 1 and 2 times the size; with `--parse`, only
`mx-opt FILE` (parse, verify, print) against `xdsl-opt FILE`, at ½, 1 and 2 times
2000 functions (3 MB); with `--decode`, only the JIT compile of each of bench.decode's
4-layer 4096×4096 weight matvecs, strict and with `fastmath<fast>`. Results:
bench/COMPILE_TIME.md.
"""

from __future__ import annotations

import argparse
import gc
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from bench.build import mx_opt

FUNC = """func.func @f{i}(%a: memref<?xf32>, %b: memref<?xf32>, %c: memref<?xf32>, %s: f32) {{
  %x = matrix.column_major_load %a[{o0}] : memref<?xf32> -> !matrix.matrix<4x4xf32>
  %y = matrix.column_major_load %b[{o0}] stride 5 : memref<?xf32> -> !matrix.matrix<4x4xf32>
  %z = matrix.column_major_load %c[{o0}] : memref<?xf32> -> !matrix.matrix<4x4xf32>
  %sp = matrix.splat %s : !matrix.matrix<4x4xf32>
  %0 = matrix.add %x, %y : !matrix.matrix<4x4xf32>
  %1 = matrix.mul %0, %sp : !matrix.matrix<4x4xf32>
  %2 = matrix.sub %1, %z : !matrix.matrix<4x4xf32>
  %3 = matrix.transpose %2 : !matrix.matrix<4x4xf32> -> !matrix.matrix<4x4xf32>
  %4 = matrix.matmul %3, %x : !matrix.matrix<4x4xf32>, !matrix.matrix<4x4xf32> -> !matrix.matrix<4x4xf32>
  %5 = matrix.add %4, %z : !matrix.matrix<4x4xf32>
  %6 = matrix.neg %5 : !matrix.matrix<4x4xf32>
  %7 = matrix.mul %6, %y : !matrix.matrix<4x4xf32>
  %8 = matrix.matmul_add %7, %y, %x : !matrix.matrix<4x4xf32>, !matrix.matrix<4x4xf32>, !matrix.matrix<4x4xf32> -> !matrix.matrix<4x4xf32>
  %9 = matrix.transpose %8 : !matrix.matrix<4x4xf32> -> !matrix.matrix<4x4xf32>
  %10 = matrix.add %9, %sp : !matrix.matrix<4x4xf32>
  %11 = matrix.sub %10, %0 : !matrix.matrix<4x4xf32>
  %12 = matrix.mul %11, %11 : !matrix.matrix<4x4xf32>
  %13 = matrix.add %12, %3 : !matrix.matrix<4x4xf32>
  %e = matrix.extract %13[1, 2] : !matrix.matrix<4x4xf32>
  %14 = matrix.insert %e, %13[3, 0] : !matrix.matrix<4x4xf32>
  matrix.column_major_store %14, %c[{o0}] : !matrix.matrix<4x4xf32>, memref<?xf32>
  func.return
}}
"""
OPS_PER_FUNC = 23  # the 21 lines of ops above, func.func and func.return


CHAIN = 196
"""Matrix ops in the chain of one `--chains` function (200 ops with the load, the
store, func.func and func.return)."""
M = "!matrix.matrix<4x4xf32>"


def module_text(funcs: int) -> str:
    return (
        "builtin.module {\n"
        + "".join(FUNC.format(i=i, o0=16 * i) for i in range(funcs))
        + "}\n"
    )


def chains_text(funcs: int) -> str:
    """`funcs` functions, each a chain of `CHAIN` dependent 4×4 adds, transposes
    and muls between a load and a store."""
    out = ["builtin.module {"]
    for i in range(funcs):
        out += [
            f"func.func @c{i}(%a: memref<16xf32>, %b: memref<16xf32>) {{",
            f"  %m0 = matrix.column_major_load %a[0] : memref<16xf32> -> {M}",
        ]
        for k in range(CHAIN):
            op = ("add", "transpose", "mul")[k % 3]
            if op == "transpose":
                out.append(f"  %m{k + 1} = matrix.transpose %m{k} : {M} -> {M}")
            else:
                out.append(f"  %m{k + 1} = matrix.{op} %m{k}, %m0 : {M}")
        out += [
            f"  matrix.column_major_store %m{CHAIN}, %b[0] : {M}, memref<16xf32>",
            "  func.return",
            "}",
        ]
    return "\n".join([*out, "}", ""])


def _run(cmd: list[str]) -> tuple[float, float]:
    """CPU time (user + system, s) and peak resident memory (MB) of one run of `cmd`."""
    with tempfile.TemporaryFile() as err:
        proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=err)
        _, status, usage = os.wait4(proc.pid, 0)
        if os.waitstatus_to_exitcode(status) != 0:
            err.seek(0)
            raise RuntimeError(f"{' '.join(cmd)}: {err.read()[-2000:].decode()}")
    return usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024


def _proc_time(cmd: list[str]) -> tuple[float, float]:
    """CPU time (user + system) and peak memory of `cmd`: the medians of 3 runs, or
    one run when that took over 20 s. CPU rather than wall time, since the machine
    may be shared."""
    runs: list[tuple[float, float]] = []
    while len(runs) < 3 and (not runs or runs[0][0] < 20):
        runs.append(_run(cmd))
    return statistics.median(t for t, _ in runs), statistics.median(m for _, m in runs)


def _processes(text: str, ops: int) -> tuple[str, float]:
    """xdsl-opt parse+print and `mx-opt -p mx-lower-to-llvm -t llvm` of `text`
    (`ops` ops) as processes: a report line and mx-opt's CPU time."""
    with tempfile.TemporaryDirectory() as tmp:
        src = Path(tmp) / "big.mlir"
        src.write_text(text)
        xdsl_opt = str(Path(sys.executable).parent / "xdsl-opt")
        t_x, _ = _proc_time([xdsl_opt, str(src), "-o", str(Path(tmp) / "x.mlir")])
        t_m, rss = _proc_time(
            [
                *mx_opt(),
                "-p",
                "mx-lower-to-llvm",
                "-t",
                "llvm",
                str(src),
                "-o",
                str(Path(tmp) / "m.ll"),
            ]
        )
    return (
        f"{ops} ops, CPU time: xdsl-opt parse+print {t_x:.2f} s, mx-opt -p mx-lower-to-llvm -t llvm {t_m:.2f} s, ratio {t_m / t_x:.1f}× (target ≤ 5×, stretch 3×); mx-opt peak memory {rss:.0f} MB, {1024 * rss / ops:.1f} KB per op (target ≤ 10)",
        t_m,
    )


def growth(funcs: int, chains: bool) -> dict[str, str]:
    """The processes at ¼, ½, 1 and 2 times `funcs` functions: CPU time and
    memory per op should not grow with the size."""
    notes: dict[str, str] = {}
    for n in (funcs // 4, funcs // 2, funcs, 2 * funcs):
        ops = n * (CHAIN + 4 if chains else OPS_PER_FUNC)
        line, t_m = _processes(chains_text(n) if chains else module_text(n), ops)
        notes[f"compile time, {ops} ops"] = (
            f"{line}; {1e6 * t_m / ops:.0f} µs of CPU per op"
        )
    return notes


def parse_growth(funcs: int) -> dict[str, str]:
    """Parse+print of modules of ½, 1 and 2 times `funcs` functions (≈ 3 MB
    per 2000): `mx-opt FILE` (located parsing, verification, printing)
    against stock `xdsl-opt FILE`, as processes."""
    notes: dict[str, str] = {}
    xdsl_opt = str(Path(sys.executable).parent / "xdsl-opt")
    for n in (funcs // 2, funcs, 2 * funcs):
        text = module_text(n)
        with tempfile.TemporaryDirectory() as tmp:
            src = Path(tmp) / "big.mlir"
            src.write_text(text)
            t_x, _ = _proc_time([xdsl_opt, str(src), "-o", os.devnull])
            t_m, _ = _proc_time([*mx_opt(), str(src), "-o", os.devnull])
        notes[f"parse+print, {len(text) / 1e6:.1f} MB"] = (
            f"CPU time: xdsl-opt {t_x:.2f} s, mx-opt {t_m:.2f} s, ratio "
            f"{t_m / t_x:.2f}× (target ≤ 3×); mx-opt {1e6 * t_m / len(text):.2f} µs per byte"
        )
    return notes


def measure(out: Path, funcs: int = 450, chains: bool = False) -> dict[str, str]:
    """Runs the measurement; returns report notes."""
    text = chains_text(funcs) if chains else module_text(funcs)
    ops = funcs * (CHAIN + 4 if chains else OPS_PER_FUNC)
    notes: dict[str, str] = {}
    try:
        line, _ = _processes(text, ops)
    except RuntimeError as e:
        return {
            "compile time": f"mx-opt failed on the {ops}-op module: {str(e).splitlines()[-1]}"
        }
    notes["compile time (processes)"] = line

    notes.update(_in_process(text, funcs, out, chains))
    notes.update(jit_cold())
    return notes


def _in_process(text: str, funcs: int, out: Path, chains: bool) -> dict[str, str]:
    """CPU time in this process (imports excluded): xDSL parse+print against mx-opt's
    steps (parse, verify, each pass of mx-lower-to-llvm, verify, LLVM IR), then a
    pyinstrument profile of the lowering of a fifth of the module."""
    import io

    from xdsl.dialects.builtin import ModuleOp
    from xdsl.parser import Parser
    from xdsl.printer import Printer
    from xdsl.universe import Universe

    from mx.frontend import mx_context as ctx
    from mx.passes.mx_lower_to_llvm import PIPELINE, STRUCTURED_STEPS
    from mx.targets.direct_llvm_ir import translate_module
    from mx.targets.llvm_ir import LLVMIRWriter, module_to_llvm_ir
    from mx.tools.mx_opt import GC_THRESHOLDS

    multiverse = Universe.get_multiverse()

    t0 = time.process_time()
    m = Parser(ctx(), text).parse_module()
    Printer(stream=io.StringIO()).print_op(m)
    t_pp = time.process_time() - t0
    del m

    steps: dict[str, float] = {}
    """CPU seconds by step of the direct route (repeated passes add up)."""
    dialect_route: dict[str, float] = {}
    """CPU seconds of the `llvm`-dialect route from the same affine-level IR."""

    def lower(source: str, timed: bool) -> None:
        def step(
            name: str, run: Callable[[], object], into: dict[str, float] = steps
        ) -> object:
            t = time.process_time()
            result = run()
            if timed:
                into[name] = into.get(name, 0.0) + time.process_time() - t
            return result

        def translate() -> str:
            translation = translate_module(module)
            writer = LLVMIRWriter()
            writer.add_functions(translation.functions, translation.declarations)
            return writer.text()

        c = ctx()
        parsed = step("parse", lambda: Parser(c, source).parse_module())
        assert isinstance(parsed, ModuleOp)
        module: ModuleOp = parsed
        step("verify", module.verify)
        for name in STRUCTURED_STEPS:
            step(
                name, lambda name=name: multiverse.all_passes[name]()().apply(c, module)
            )
        step("direct LLVM IR", translate)
        for name in PIPELINE[len(STRUCTURED_STEPS) :]:
            step(
                name,
                lambda name=name: multiverse.all_passes[name]()().apply(c, module),
                dialect_route,
            )
        step("verify", module.verify, dialect_route)
        step("LLVM IR printer", lambda: module_to_llvm_ir(module), dialect_route)

    thresholds = gc.get_threshold()
    gc.set_threshold(*GC_THRESHOLDS)  # as mx-opt does
    try:
        lower(text, timed=True)
    finally:
        gc.set_threshold(*thresholds)
    total = sum(steps.values())
    breakdown = ", ".join(
        f"{name} {t:.2f} s ({100 * t / total:.0f}%)"
        for name, t in sorted(steps.items(), key=lambda kv: -kv[1])
    )
    translated = steps["direct LLVM IR"]
    replaced = sum(dialect_route.values())
    route = ", ".join(f"{name} {t:.2f} s" for name, t in dialect_route.items())
    notes = {
        "compile time (in process, imports excluded, CPU time)": f"xDSL parse+print {t_pp:.2f} s; mx-opt's steps {total:.2f} s, ratio {total / t_pp:.1f}×",
        "compile time by step": breakdown,
        "compile time, llvm-dialect route": f"from the same affine-level IR: {route}; {replaced:.2f} s in all, against {translated:.2f} s translated directly ({total - translated + replaced:.2f} s, {(total - translated + replaced) / t_pp:.1f}× by that route)",
    }
    try:
        from pyinstrument import Profiler  # pyright: ignore[reportMissingImports]
    except ImportError:  # pyinstrument comes with the optional `bench` extra
        return notes
    part = (chains_text if chains else module_text)(max(1, funcs // 5))
    prof = Profiler(interval=0.002)
    prof.start()
    lower(part, timed=False)
    prof.stop()
    # Paths relative to the repository, as the profile's other lines give them.
    root = f"{Path(__file__).resolve().parent.parent}/"
    (out / "compile_profile.txt").write_text(
        prof.output_text(unicode=False, color=False).replace(root, "")
    )
    notes["compile profile"] = (
        f"pyinstrument profile of lowering {max(1, funcs // 5)} of the functions: "
        "compile_profile.txt"
    )
    return notes


JIT_KERNEL = """func.func @k(%a: !matrix.matrix<4x4xf32>, %b: !matrix.matrix<4x4xf32>, %c: !matrix.matrix<4x4xf32>) -> !matrix.matrix<4x4xf32> {
  %p = matrix.matmul %a, %b : !matrix.matrix<4x4xf32>, !matrix.matrix<4x4xf32> -> !matrix.matrix<4x4xf32>
  %s = matrix.add %p, %c : !matrix.matrix<4x4xf32>
  func.return %s : !matrix.matrix<4x4xf32>
}
"""

_JIT_COLD = f"""
import time
import numpy as np
from xdsl.universe import Universe
from mx.jit import compile_module
for factory in Universe.get_multiverse().all_passes.values():
    factory()  # imports the pass modules: imports are not the JIT's time
t0, c0 = time.perf_counter(), time.process_time()
k = compile_module({JIT_KERNEL!r})["k"]
t1, c1 = time.perf_counter(), time.process_time()
a = np.arange(16, dtype=np.float32).reshape(4, 4)
assert np.array_equal(k(a, a, a), a @ a + a)
print(t1 - t0, c1 - c0)
"""


def jit_cold() -> dict[str, str]:
    """A fresh process's first `mx.jit.compile_module` of a 4×4 matmul+add kernel
    (mx-lower-to-llvm, LLVM -O3, MCJIT), imports excluded: the best of 3 processes."""
    runs = [
        tuple(
            float(x)
            for x in subprocess.run(
                [sys.executable, "-c", _JIT_COLD],
                capture_output=True,
                text=True,
                check=True,
            ).stdout.split()
        )
        for _ in range(3)
    ]
    wall, cpu = min(runs)
    return {
        "JIT, cold, 4×4 kernel": f"{wall:.3f} s wall, {cpu:.3f} s CPU (target < 0.2 s)"
    }


def decode_compiles() -> dict[str, str]:
    """Wall seconds of `compile_text` (mx's passes, LLVM -O3, loading) of
    each format's 4-layer decode source of bench.decode (`index` offsets in
    an `scf.for`), each a text not compiled before."""
    from bench import decode
    from mx.jit_compile import compile_text

    times: dict[str, str] = {}
    for fmt in decode.FORMATS:
        case = decode.Case(fmt, 4096, 4096)
        for flags in ("", "fast"):
            text = decode.source(case, flags) + f"\n// {time.time()}\n"
            start = time.perf_counter()
            compile_text(text, "mx-lower-to-llvm")
            seconds = time.perf_counter() - start
            times[f"JIT, {fmt.name} decode, {flags or 'strict'}"] = f"{seconds:.2f} s"
    return times


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--funcs", type=int, help="450 by default, 48 with --chains")
    ap.add_argument("--chains", action="store_true", help="the module of 4×4 chains")
    ap.add_argument(
        "--growth", action="store_true", help="only the processes, at 4 sizes"
    )
    ap.add_argument(
        "--parse",
        action="store_true",
        help="only parse+print against xdsl-opt, at 3 sizes (2000 functions: 3 MB)",
    )
    ap.add_argument(
        "--decode", action="store_true", help="only the JIT of the decode kernels"
    )
    ap.add_argument(
        "--out", type=Path, default=Path(__file__).resolve().parent / "results"
    )
    ap.add_argument(
        "--write", type=Path, help="only write the generated module to this file"
    )
    args = ap.parse_args()
    funcs = args.funcs or (48 if args.chains else 450)
    if args.parse:
        for k, v in parse_growth(args.funcs or 2000).items():
            print(f"{k}: {v}", flush=True)
        return
    if args.decode:
        for k, v in decode_compiles().items():
            print(f"{k}: {v}", flush=True)
        return
    if args.write:
        args.write.write_text((chains_text if args.chains else module_text)(funcs))
        return
    args.out.mkdir(parents=True, exist_ok=True)
    if args.growth:
        notes = growth(funcs, args.chains)
    else:
        notes = measure(args.out, funcs, args.chains)
    for k, v in notes.items():
        print(f"{k}: {v}", flush=True)


if __name__ == "__main__":
    main()

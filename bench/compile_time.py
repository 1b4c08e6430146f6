"""Compile time: `mx-opt -p mx-lower-to-llvm -t llvm` vs. `xdsl-opt` parse+print of one module.

usage: python -m bench.compile_time [--funcs N] [--out DIR]
The module has N functions of 23 ops each (loads, elementwise ops, matmul, transposes,
stores; ≥ 10k ops by default). Measures the CPU time of the two commands as processes and,
in-process (imports excluded), parse+print against parse+lower+LLVM IR, the latter under
pyinstrument, whose profile goes to DIR/compile_profile.txt.
"""

from __future__ import annotations

import argparse
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

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


def module_text(funcs: int) -> str:
    return (
        "builtin.module {\n"
        + "".join(FUNC.format(i=i, o0=16 * i) for i in range(funcs))
        + "}\n"
    )


def _proc_time(cmd: list[str]) -> float:
    """CPU time (user + system) of `cmd`: the median of 3 runs, or one run when that took
    over 20 s. CPU rather than wall time, since the machine may be shared."""
    times: list[float] = []
    while len(times) < 3 and (not times or times[0] < 20):
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        r = subprocess.run(cmd, capture_output=True, text=True)
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        times.append(
            after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime
        )
        if r.returncode != 0:
            raise RuntimeError(f"{' '.join(cmd)}: {r.stderr[-2000:]}")
    return statistics.median(times)


def measure(out: Path, funcs: int = 450) -> dict[str, str]:
    """Runs the measurement; returns report notes."""
    text = module_text(funcs)
    notes: dict[str, str] = {}
    with tempfile.TemporaryDirectory() as tmp:
        src = Path(tmp) / "big.mlir"
        src.write_text(text)
        xdsl_opt = str(Path(sys.executable).parent / "xdsl-opt")
        t_x = _proc_time([xdsl_opt, str(src), "-o", str(Path(tmp) / "x.mlir")])
        try:
            t_m = _proc_time(
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
        except RuntimeError as e:
            return {
                "compile time": f"mx-opt failed on the {funcs * OPS_PER_FUNC}-op module: {str(e).splitlines()[-1]}"
            }
    notes["compile time (processes)"] = (
        f"{funcs * OPS_PER_FUNC} ops, CPU time: xdsl-opt parse+print {t_x:.2f} s, mx-opt -p mx-lower-to-llvm -t llvm {t_m:.2f} s, ratio {t_m / t_x:.1f}× (target ≤ 3×)"
    )
    notes.update(_in_process(text, funcs, out))
    return notes


def _in_process(text: str, funcs: int, out: Path) -> dict[str, str]:
    import io

    from xdsl.context import Context
    from xdsl.parser import Parser
    from xdsl.passes import PassPipeline
    from xdsl.printer import Printer
    from xdsl.universe import Universe

    from mx.lowering.llvm_ir import module_to_llvm_ir

    multiverse = Universe.get_multiverse()

    def ctx() -> Context:
        c = Context()
        for name, factory in multiverse.all_dialects.items():
            c.register_dialect(name, factory)
        return c

    def parse_print() -> None:
        m = Parser(ctx(), text).parse_module()
        Printer(stream=io.StringIO()).print_op(m)

    def lower() -> None:
        c = ctx()
        m = Parser(c, text).parse_module()
        PassPipeline.parse_spec(multiverse.all_passes, "mx-lower-to-llvm").apply(c, m)
        module_to_llvm_ir(m)

    t0 = time.process_time()
    parse_print()
    t_pp = time.process_time() - t0
    prof: Any = None
    try:
        from pyinstrument import Profiler  # pyright: ignore[reportMissingImports]

        prof = Profiler(interval=0.005)
    except ImportError:  # pyinstrument comes with the optional `bench` extra
        pass
    if prof:
        prof.start()
    t0 = time.process_time()
    lower()
    t_low = time.process_time() - t0
    what = "parse+mx-lower-to-llvm+LLVM IR"
    if prof:
        prof.stop()
        (out / "compile_profile.txt").write_text(
            prof.output_text(unicode=False, color=False)
        )
        what += " (under pyinstrument; profile in compile_profile.txt)"
    return {
        "compile time (in process, imports excluded, CPU time)": f"parse+print {t_pp:.2f} s, {what} {t_low:.2f} s, ratio {t_low / t_pp:.1f}×"
    }


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--funcs", type=int, default=450)
    ap.add_argument(
        "--out", type=Path, default=Path(__file__).resolve().parent / "results"
    )
    args = ap.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    for k, v in measure(args.out, args.funcs).items():
        print(f"{k}: {v}")


if __name__ == "__main__":
    main()

"""The JIT's compile guard: machine-code time of a module with f16/bf16
vectors, compiled in the guard's child whose object code is loaded (now)
against compiled in the child and again in the parent (before).

usage: python -m bench.compile_guard [--rounds N]
Lowers each kernel to LLVM IR once, then times, alternating in one process,
the guard's child alone (`compile_in_child`, what the JIT does now), the child
followed by the parent's own compilation (what it did before), and LLVM in
the process without a child (`_emit_object`): wall-clock medians, the child
included. Results: docs/low-precision.md.
"""

from __future__ import annotations

import argparse
import statistics
import time
from collections.abc import Callable

from mx.jit import lower_to_llvm_ir
from mx.jit_machine_code import (
    _emit_object,  # pyright: ignore[reportPrivateUsage]
    _host,  # pyright: ignore[reportPrivateUsage]
    _llvm,  # pyright: ignore[reportPrivateUsage]
)
from mx.targets.compile_guard import compile_in_child

KERNELS = {
    f"{t} 16x16 matmul": f"""
func.func @k(%a: !matrix.matrix<16x16x{t}>, %b: !matrix.matrix<16x16x{t}>) -> !matrix.matrix<16x16x{t}> {{
  %c = matrix.matmul %a, %b : !matrix.matrix<16x16x{t}>, !matrix.matrix<16x16x{t}> -> !matrix.matrix<16x16x{t}>
  func.return %c : !matrix.matrix<16x16x{t}>
}}"""
    for t in ("f16", "bf16")
}


def main() -> None:
    parser = argparse.ArgumentParser(description="the compile guard's cost")
    parser.add_argument("--rounds", type=int, default=7)
    rounds = parser.parse_args().rounds
    cpu = _host()[1]

    def in_child(ir: str) -> None:
        compile_in_child(ir, cpu, _emit_object)

    def in_child_and_parent(ir: str) -> None:
        compile_in_child(ir, cpu, _emit_object)
        _emit_object(ir)

    def in_parent(ir: str) -> None:
        _emit_object(ir)

    ways: dict[str, Callable[[str], None]] = {
        "child only (now)": in_child,
        "child + parent (before)": in_child_and_parent,
        "no guard": in_parent,
    }
    for kernel, source in KERNELS.items():
        ir, _, _ = lower_to_llvm_ir(source)
        times: dict[str, list[float]] = {way: [] for way in ways}
        with _llvm():
            for _ in range(rounds):
                for way, compile_ in ways.items():
                    start = time.perf_counter()
                    compile_(ir)
                    times[way].append(time.perf_counter() - start)
        medians = {way: statistics.median(t) for way, t in times.items()}
        print(
            f"{kernel}: "
            + ", ".join(f"{way} {1000 * m:.0f} ms" for way, m in medians.items())
        )


if __name__ == "__main__":
    main()

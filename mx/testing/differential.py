"""Compile a `Program` with clang-16 (C) and mx (`mx-opt -p mx-lower-to-llvm -t llvm`),
link both into one C driver, run them on the same random inputs and compare.

Verdicts:
- `ok`: clang and mx agree — bit for bit on floats without contraction
  (+0 == -0, any NaN == any NaN), exactly on integers and on the untouched
  padding bytes between stored columns; with contraction (`-ffp-contract=fast`
  against `fastmath<contract>`), float outputs within the bound of
  `contract_tolerance`.
- `mx-wrong` / `clang-wrong` / `both-wrong`: they disagree, and the NumPy
  reference (one rounding per C operation, an independent implementation)
  sides with one of them, or with neither.
- `reference-disagrees`: clang and mx agree but the reference does not (a bug
  in the reference or a shared one; never silently passed).
- `mx-rejected` (exit 1: a diagnostic for a valid program), `mx-crashed`
  (exit 2 or a traceback), `clang-error`, `run-error`.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import multiprocessing
import os
import random
import shutil
import subprocess
import sys
import tempfile
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from mx.testing.matrix_programs import (
    C_TYPE,
    ELEMENT_OF,
    FLOAT_MAX,
    NP_TYPE,
    Array,
    Generator,
    Program,
    minimize,
    random_inputs,
)
from mx.testing.progress import Progress

CLANG = "clang-16"
C_FLAGS = ["-O2", "-march=native", "-fenable-matrix"]
F16_FLAGS = ["-Xclang", "-ffloat16-excess-precision=none"]
RUN_TIMEOUT = 10.0


@dataclass
class Outcome:
    verdict: str
    detail: str = ""
    sets: int = 0
    coverage: set[str] = field(default_factory=set[str])

    @property
    def is_bug(self) -> bool:
        """Anything but agreement; `clang-wrong` too (reported, pinned as a
        regression), though it does not make the run fail."""
        return self.verdict != "ok"


def clang_path() -> str:
    path = shutil.which(CLANG)
    if path is None:
        raise RuntimeError(f"{CLANG} is not installed (.ci/run installs it)")
    return path


def lower_to_llvm(mlir: str, workdir: Path) -> tuple[int, str, str]:
    """Run `mx-opt -p mx-lower-to-llvm -t llvm` in-process: (status, LLVM IR, stderr)."""
    from mx.tools.mx_opt import main

    src = workdir / "kernel.mlir"
    out = workdir / "mx-output.ll"
    src.write_text(mlir)
    err = io.StringIO()
    with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
        status = main(
            [str(src), "-p", "mx-lower-to-llvm", "-t", "llvm", "-o", str(out)]
        )
    text = out.read_text() if out.exists() else ""
    return status, text, err.getvalue()


def driver_source(p: Program) -> str:
    """A C main that reads input sets from argv[1] and, for each, writes the
    output buffers of c_kernel and then of mx_kernel to stdout."""
    ins = [(f"in{i}", e, n) for i, (e, n) in enumerate(p.inputs)]
    outs = [(f"out{i}", e, n) for i, (e, n) in enumerate(p.output_lengths())]
    scal = [(f"s{i}", e) for i, e in enumerate(p.scalar_args)]
    args = ", ".join(
        [n for n, _, _ in ins + outs]
        + [n for n, _ in scal]
        + [f"{v}L" for v in p.index_args]
    )
    lines = [
        "#include <stdio.h>",
        "#include <stdlib.h>",
        "#include <string.h>",
        p.c_prototype("c_kernel") + ";",
        p.c_prototype("mx_kernel") + ";",
    ]
    lines += [f"static {C_TYPE[e]} {n}[{size}];" for n, e, size in ins + outs]
    lines += [f"static {C_TYPE[e]} {n};" for n, e in scal]
    lines += [
        "int main(int argc, char **argv) {",
        '  FILE *f = fopen(argv[1], "rb");',
        "  int sets = atoi(argv[2]);",
        "  if (!f) return 3;",
        "  for (int k = 0; k < sets; k++) {",
    ]
    lines += [
        f"    if (fread(&{n}, sizeof {n}, 1, f) != 1) return 4;" for n, _, _ in ins
    ]
    lines += [f"    if (fread(&{n}, sizeof {n}, 1, f) != 1) return 4;" for n, _ in scal]
    for kernel in ("c_kernel", "mx_kernel"):
        lines += [f"    memset({n}, 0xA5, sizeof {n});" for n, _, _ in outs]
        lines.append(f"    {kernel}({args});")
        lines += [f"    fwrite({n}, sizeof {n}, 1, stdout);" for n, _, _ in outs]
    lines += ["  }", "  return 0;", "}"]
    return "\n".join(lines) + "\n"


def same(a: Array, b: Array) -> Array:
    """Elementwise: equal, with +0 == -0 and NaN == NaN for floats."""
    if a.dtype.kind == "f":
        return (a == b) | (np.isnan(a) & np.isnan(b))
    return a == b


def _split(p: Program, data: bytes, sets: int) -> list[tuple[list[Array], list[Array]]]:
    lens = p.output_lengths()
    sizes = [n * np.dtype(NP_TYPE[e]).itemsize for e, n in lens]
    per_set = 2 * sum(sizes)
    if len(data) != per_set * sets:
        raise ValueError(f"driver wrote {len(data)} bytes, expected {per_set * sets}")
    result: list[tuple[list[Array], list[Array]]] = []
    pos = 0
    for _ in range(sets):
        pair: list[list[Array]] = []
        for _kernel in range(2):
            bufs: list[Array] = []
            for (e, _), size in zip(lens, sizes, strict=True):
                bufs.append(np.frombuffer(data[pos : pos + size], dtype=NP_TYPE[e]))
                pos += size
            pair.append(bufs)
        result.append((pair[0], pair[1]))
    return result


def _lowest_float(p: Program) -> str:
    elems = {s.type.elem for s in p.stmts} | {e for e, _ in p.inputs}
    for e in ("f16", "f32", "f64"):
        if e in elems:
            return e
    return "f64"


def contract_tolerance(p: Program, mags: list[Array]) -> list[Array]:
    """Allowed |clang - mx| per output element under contraction.

    Each float result is a sum of products computed with at most n roundings
    on any path (n = `Program.rounding_depth`), so each of clang and mx is
    within gamma_n * m of the exact value, where m is the same program evaluated
    on |inputs| with every subtraction turned into an addition, and
    gamma_n = n*u/(1 - n*u) with u the unit roundoff of the least precise float
    type in the program. Hence |clang - mx| <= 2*gamma_n*m, plus n times the
    smallest subnormal for underflow. Elements whose m is not finite, or
    reaches the type's overflow threshold, are not compared."""
    low = _lowest_float(p)
    u = float(np.finfo(NP_TYPE[low]).eps) / 2
    tiny = float(np.finfo(NP_TYPE[low]).smallest_subnormal)
    n = p.rounding_depth()
    gamma = n * u / max(1e-300, 1 - n * u)
    return [2 * gamma * m + n * tiny for m in mags]


def _agrees(
    p: Program, x: list[Array], y: list[Array], mags: list[Array] | None
) -> tuple[bool, str]:
    """Whether two sets of output buffers agree: exactly (`same`), or under
    contraction within `contract_tolerance` where the bound is usable."""
    for i, (a, b) in enumerate(zip(x, y, strict=True)):
        ok = same(a, b)
        if mags is not None and a.dtype.kind == "f":
            tol = contract_tolerance(p, [mags[i]])[0]
            limit = FLOAT_MAX[ELEMENT_OF[a.dtype.type]]
            skip = ~np.isfinite(tol) | (mags[i] >= limit / 2)
            with np.errstate(all="ignore"):
                close = np.abs(a.astype(np.float64) - b.astype(np.float64)) <= tol
            ok = ok | skip | close
        if not ok.all():
            k = int(np.argmin(ok))
            return False, f"out{i}[{k}]: {a[k]!r} vs {b[k]!r}"
    return True, ""


def compare(
    p: Program,
    c_out: list[Array],
    mx_out: list[Array],
    ref: list[Array],
    mags: list[Array] | None,
) -> tuple[str, str]:
    """(verdict, detail) for one input set; the reference arbitrates."""
    agree, detail = _agrees(p, c_out, mx_out, mags)
    c_ref, c_detail = _agrees(p, c_out, ref, mags)
    m_ref, _ = _agrees(p, mx_out, ref, mags)
    if agree:
        if c_ref:
            return "ok", ""
        return "reference-disagrees", f"clang/mx vs reference: {c_detail}"
    detail = f"clang vs mx: {detail}"
    if m_ref:
        return "clang-wrong", detail
    if c_ref:
        return "mx-wrong", detail
    return "both-wrong", detail


def run_program(
    p: Program,
    seed: int,
    sets: int = 3,
    keep: Path | None = None,
    self_check: bool = False,
) -> Outcome:
    """Compile, run and compare `p` on `sets` random input sets drawn from `seed`.

    `self_check` replaces mx by clang -O0 (no mx involved): it checks the
    generator, driver and reference against clang alone."""
    clang = clang_path()
    with tempfile.TemporaryDirectory(prefix="mxdiff") as tmp:
        work = keep or Path(tmp)
        work.mkdir(parents=True, exist_ok=True)
        outcome = _run_in(p, seed, sets, work, clang, self_check)
        outcome.coverage = p.ops_covered()
        return outcome


def _clang(clang: str, args: list[str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run([clang, *args], capture_output=True, text=True, timeout=120)


def _run_in(
    p: Program, seed: int, sets: int, work: Path, clang: str, self_check: bool
) -> Outcome:
    (work / "kernel.c").write_text(p.c_source("c_kernel"))
    (work / "driver.c").write_text(driver_source(p))
    (work / "program.json").write_text(p.to_json())
    if self_check:
        # The harness checking itself: clang -O0 stands in for mx.
        (work / "mx.c").write_text(p.c_source("mx_kernel"))
        flags = ["-O0", "-march=native", "-fenable-matrix", *F16_FLAGS]
        r = _clang(
            clang,
            [
                *flags,
                "-S",
                "-emit-llvm",
                _in(work, "mx.c"),
                "-o",
                _in(work, "kernel.ll"),
            ],
        )
        if r.returncode != 0:
            return Outcome("clang-error", r.stderr.strip()[-2000:])
    else:
        status, ll, err = lower_to_llvm(p.mlir_source("mx_kernel"), work)
        if status != 0 or "Traceback" in err:
            verdict = (
                "mx-rejected"
                if status == 1 and "Traceback" not in err
                else "mx-crashed"
            )
            return Outcome(verdict, err.strip()[-2000:])
        (work / "kernel.ll").write_text(ll)
    contract = ["-ffp-contract=fast" if p.contract else "-ffp-contract=off"]
    steps = [
        [*C_FLAGS, *contract, *F16_FLAGS, "-c", "kernel.c", "-o", "kernel.o"],
        # Our IR is compiled without contraction: its own flags decide.
        [*C_FLAGS, "-ffp-contract=off", "-c", "kernel.ll", "-o", "mx.o"],
        [*C_FLAGS, "driver.c", "kernel.o", "mx.o", "-o", "prog"],
    ]
    for step in steps:
        r = _clang(clang, [_in(work, a) for a in step])
        if r.returncode != 0:
            which = "mx-llvm-ir-invalid" if "kernel.ll" in step else "clang-error"
            return Outcome(which, r.stderr.strip()[-2000:])
    rng = np.random.default_rng(seed)
    data = bytearray()
    all_inputs: list[tuple[list[Array], list[Array]]] = []
    for _ in range(sets):
        ins, scal = random_inputs(p, rng)
        all_inputs.append((ins, scal))
        for a in ins + scal:
            data += a.tobytes()
    (work / "inputs.bin").write_bytes(bytes(data))
    try:
        r2 = subprocess.run(
            [str(work / "prog"), str(work / "inputs.bin"), str(sets)],
            capture_output=True,
            timeout=RUN_TIMEOUT,
        )
    except subprocess.TimeoutExpired:
        return Outcome("run-error", "timeout")
    if r2.returncode != 0:
        return Outcome(
            "run-error", f"exit {r2.returncode}: {r2.stderr.decode(errors='replace')}"
        )
    results = _split(p, r2.stdout, sets)
    for k, ((ins, scal), (c_out, mx_out)) in enumerate(
        zip(all_inputs, results, strict=True)
    ):
        ref = p.evaluate(ins, scal)
        mags = p.evaluate(ins, scal, magnitude=True) if p.contract else None
        verdict, detail = compare(p, c_out, mx_out, ref, mags)
        if verdict != "ok":
            return Outcome(verdict, f"input set {k}: {detail}", sets)
    return Outcome("ok", "", sets)


def _in(work: Path, arg: str) -> str:
    """File arguments of the clang steps live in the work directory."""
    return (
        str(work / arg) if arg.endswith((".c", ".o", ".ll")) or arg == "prog" else arg
    )


# -- batch runs and regressions ----------------------------------------------


def program_for_seed(
    seed: int,
    contract_every: int = 4,
    allow_clang_bugs: bool = False,
    main_elem: str = "",
) -> Program:
    """The generated program of a seed; every `contract_every`-th one uses
    contraction. `main_elem` fixes the element type the program starts from
    (see `Generator.main_elem`)."""
    contract = contract_every > 0 and seed % contract_every == contract_every - 1
    return Generator(
        random.Random(seed),
        contract=contract,
        allow_clang_bugs=allow_clang_bugs,
        main_elem=main_elem,
    ).program()


@dataclass(frozen=True)
class Job:
    seed: int
    sets: int
    contract_every: int
    allow_clang_bugs: bool
    self_check: bool
    main_elem: str

    def __call__(self) -> tuple[int, Outcome]:
        p = program_for_seed(
            self.seed, self.contract_every, self.allow_clang_bugs, self.main_elem
        )
        return self.seed, run_program(
            p, self.seed, self.sets, self_check=self.self_check
        )


def _call(job: Job) -> tuple[int, Outcome]:
    return job()


def save_regression(
    directory: Path, name: str, p: Program, seed: int, outcome: Outcome
) -> Path:
    """Write a (minimized) failing program as a regression test input."""
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / f"{name}.json"
    record = {
        "seed": seed,
        "found": f"{outcome.verdict}: {outcome.detail}",
        "expect": "clang-wrong" if outcome.verdict == "clang-wrong" else "ok",
        "c": p.c_source("c_kernel").splitlines(),
        "mlir": p.mlir_source("mx_kernel").splitlines(),
        "program": json.loads(p.to_json()),
    }
    path.write_text(json.dumps(record, indent=1) + "\n")
    return path


def load_regression(path: Path) -> tuple[Program, int, str]:
    """(program, seed, expected verdict) of a regression file."""
    record = json.loads(path.read_text())
    return (
        Program.from_json(json.dumps(record["program"])),
        record["seed"],
        record["expect"],
    )


def minimize_failure(
    p: Program, seed: int, verdict: str, sets: int, self_check: bool
) -> Program:
    """The smallest variant of `p` found that still gets `verdict`."""

    def fails(q: Program) -> bool:
        return run_program(q, seed, sets, self_check=self_check).verdict == verdict

    return minimize(p, fails)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m mx.testing.differential",
        description="differential testing of mx against clang-16 on random matrix programs",
    )
    parser.add_argument("--count", type=int, default=100, help="number of programs")
    parser.add_argument("--seed", type=int, default=0, help="first seed")
    parser.add_argument(
        "--sets", type=int, default=3, help="random input sets per program"
    )
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    parser.add_argument(
        "--contract-every",
        type=int,
        default=4,
        help="every N-th program uses contraction (0: none)",
    )
    parser.add_argument(
        "--allow-clang-bugs",
        action="store_true",
        help="also generate clang-16's known miscompile/crash patterns",
    )
    parser.add_argument(
        "--main-element",
        choices=sorted(NP_TYPE),
        default="",
        help="start every program from matrices of this element type (default: random)",
    )
    parser.add_argument(
        "--self-check",
        action="store_true",
        help="clang -O0 instead of mx: checks the harness itself",
    )
    parser.add_argument(
        "--save",
        type=Path,
        help="minimize every failure and save it as a regression test in this directory",
    )
    args = parser.parse_args(argv)
    jobs = [
        Job(
            seed,
            args.sets,
            args.contract_every,
            args.allow_clang_bugs,
            args.self_check,
            args.main_element,
        )
        for seed in range(args.seed, args.seed + args.count)
    ]
    verdicts: Counter[str] = Counter()
    coverage: Counter[str] = Counter()
    failures: list[tuple[int, Outcome]] = []
    progress = Progress("differential", args.count, "programs")
    progress.update(0, 0)
    with multiprocessing.Pool(args.jobs) as pool:
        for done, (seed, outcome) in enumerate(pool.imap_unordered(_call, jobs), 1):
            verdicts[outcome.verdict] += 1
            coverage.update(outcome.coverage)
            if outcome.is_bug:
                failures.append((seed, outcome))
                print(
                    f"seed {seed}: {outcome.verdict}: {outcome.detail[:500]}",
                    flush=True,
                )
            progress.update(done, len(failures))
    print(f"programs: {args.count}, input sets each: {args.sets}")
    print("verdicts: " + ", ".join(f"{k} {v}" for k, v in sorted(verdicts.items())))
    print(
        "ops covered (programs): "
        + ", ".join(f"{k} {v}" for k, v in sorted(coverage.items()))
    )
    if args.save:
        for seed, outcome in sorted(failures, key=lambda f: f[0]):
            p = program_for_seed(
                seed, args.contract_every, args.allow_clang_bugs, args.main_element
            )
            small = minimize_failure(
                p, seed, outcome.verdict, args.sets, args.self_check
            )
            final = run_program(small, seed, args.sets, self_check=args.self_check)
            path = save_regression(args.save, f"seed{seed}", small, seed, final)
            print(f"seed {seed}: minimized to {len(small.stmts)} statements: {path}")
    return 0 if all(o.verdict == "clang-wrong" for _, o in failures) else 1


if __name__ == "__main__":
    sys.exit(main())

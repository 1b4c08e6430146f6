"""Writes the kernel sources and builds the harness and a shared library of every kernel.

Generated sources go to bench/kernels/ (committed, so they can be read without running
anything); objects, the `.ll` files mx emits, the harness and libbench.so go to a build folder.
mx's kernels are lowered one file each with `mx-opt -p mx-lower-to-llvm -t llvm` (with the
host's vector options: `bench.machine.lowering_for_host`); a kernel whose
lowering fails is left out and the reason is kept, so the rest still builds.
"""

from __future__ import annotations

import fcntl
import hashlib
import os
import shutil
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

from bench.kernels import (
    C_BUILDS,
    FP8_FAMILIES,
    NOVEC,
    Kernel,
    all_kernels,
    c_impls,
    c_sources,
    mlir_sources,
    mx_diag_impls,
    mx_impls,
    symbol,
)
from bench.machine import lowering_for_host

BENCH = Path(__file__).resolve().parent
KERNELS_DIR = BENCH / "kernels"
CLANG = os.environ.get("MX_BENCH_CLANG", "clang-16")
COPTS = ["-O3", "-march=native", "-fPIC"]
SIZES = {"float": 4, "double": 8, "uint8_t": 1, "uint16_t": 2}


def clang() -> str | None:
    return shutil.which(CLANG)


def mx_opt() -> list[str]:
    """The mx-opt command of this environment (the console script beside this Python)."""
    script = Path(sys.executable).parent / "mx-opt"
    return (
        [str(script)] if script.exists() else [sys.executable, "-m", "mx.tools.mx_opt"]
    )


@dataclass
class Build:
    """What got built: the library, the harness, and which mx kernels lowered."""

    out: Path
    lib: Path
    harness: Path
    mx_ok: set[str] = field(
        default_factory=set[str]
    )  # symbols of mx kernels that built
    mx_errors: dict[str, str] = field(
        default_factory=dict[str, str]
    )  # symbol -> first error line


def write_sources(ks: list[Kernel], folder: Path = KERNELS_DIR) -> None:
    (folder / "mx").mkdir(parents=True, exist_ok=True)
    for name, text in c_sources(ks).items():
        _write_if_changed(folder / name, text)
    for name, text in mlir_sources(ks).items():
        _write_if_changed(folder / "mx" / name, text)


def _write_if_changed(path: Path, text: str) -> None:
    if not path.exists() or path.read_text() != text:
        path.write_text(text)


def _run(cmd: list[str], timeout: float = 600) -> subprocess.CompletedProcess[str]:
    return subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)


def _check(cmd: list[str]) -> None:
    r = _run(cmd)
    if r.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)} failed:\n{r.stderr[-4000:]}")


def _stamp(inputs: list[str], files: list[Path]) -> str:
    """A digest of a build step: its command line and the contents of its input files."""
    h = hashlib.sha256("\0".join(inputs).encode())
    for f in files:
        h.update(f.read_bytes())
    return h.hexdigest()


def _up_to_date(obj: Path, stamp: str) -> bool:
    """True if `obj` was built by a step with this stamp (so a re-run skips it)."""
    s = obj.with_suffix(".stamp")
    return obj.exists() and s.exists() and s.read_text() == stamp


def _mx_sources() -> list[Path]:
    """mx's Python sources: a change to any of them may change the code mx-opt emits."""
    import mx

    return sorted(Path(mx.__file__).parent.rglob("*.py"))


def _compile_c(cmd: list[str]) -> None:
    """Runs one `clang -c SRC -o OBJ` command unless its object is up to date."""
    obj, src = Path(cmd[-1]), Path(cmd[-3])
    stamp = _stamp(cmd, [src])
    if not _up_to_date(obj, stamp):
        _check(cmd)
        obj.with_suffix(".stamp").write_text(stamp)


def _lower_mx(
    mlir: Path, ll: Path, obj: Path, cc: str, mx_stamp: str, novec_sym: str | None
) -> str | None:
    """Lowers and compiles one mx kernel; returns None, or the reason it did not build."""
    stamp = _stamp([mx_stamp, cc, *COPTS, str(novec_sym), lowering_for_host()], [mlir])
    if _up_to_date(obj, stamp):
        return None
    # a failure is remembered too, until mx or the kernel changes
    fail = obj.with_suffix(".fail")
    if fail.exists() and fail.read_text().startswith(stamp):
        return fail.read_text().split("\n", 1)[1]
    err = _lower_mx_uncached(mlir, ll, obj, cc, novec_sym)
    if err is None:
        obj.with_suffix(".stamp").write_text(stamp)
        fail.unlink(missing_ok=True)
    else:
        fail.write_text(f"{stamp}\n{err}")
    return err


def _lower_mx_uncached(
    mlir: Path, ll: Path, obj: Path, cc: str, novec_sym: str | None
) -> str | None:
    try:
        r = _run(
            [
                *mx_opt(),
                "-p",
                lowering_for_host(),
                "-t",
                "llvm",
                str(mlir),
                "-o",
                str(ll),
            ],
            timeout=300,
        )
    except subprocess.TimeoutExpired:
        return "mx-opt timed out"
    if r.returncode != 0:
        lines = [x for x in (r.stderr or r.stdout).splitlines() if x.strip()]
        return "mx-opt: " + (lines[-1] if lines else f"exit {r.returncode}")
    r = _run([cc, *COPTS, "-Wno-override-module", "-c", str(ll), "-o", str(obj)])
    if r.returncode != 0:
        return "clang on mx's .ll: " + (r.stderr.strip().splitlines() or ["?"])[0]
    if novec_sym:  # the diagnostic build: same IR, loop vectorizer off
        sym = ll.stem
        nv_ll = ll.with_name(f"{novec_sym}.ll")
        nv_ll.write_text(ll.read_text().replace(f"@{sym}(", f"@{novec_sym}("))
        r = _run(
            [
                cc,
                *COPTS,
                "-fno-vectorize",
                "-Wno-override-module",
                "-c",
                str(nv_ll),
                "-o",
                str(obj.with_name(f"{novec_sym}.o")),
            ]
        )
        if r.returncode != 0:
            return (
                "clang -fno-vectorize on mx's .ll: "
                + (r.stderr.strip().splitlines() or ["?"])[0]
            )
    return None


def _table_c(ks: list[Kernel], mx_ok: set[str]) -> str:
    out = ['#include "harness.h"', ""]
    entries: list[str] = []
    for k in ks:
        bufs = k.bufs()
        nb = len(bufs)
        impls = list(c_impls(k)) + [
            m for m in (*mx_impls(k), *mx_diag_impls(k)) if symbol(m, k) in mx_ok
        ]
        impl_entries: list[str] = []
        for impl in impls:
            sym = symbol(impl, k)
            params = ([k.ctype] if k.has_scalar else []) + ["void *"] * nb + ["int64_t"]
            args = (
                ([f"({k.ctype})s"] if k.has_scalar else [])
                + [f"b[{i}]" for i in range(nb)]
                + ["n"]
            )
            out.append(f"void {sym}({', '.join(params)});")
            out.append(
                f"static void t_{sym}(void **b, int64_t n, double s) {{ (void)s; {sym}({', '.join(args)}); }}"
            )
            impl_entries.append(f'{{"{impl}", t_{sym}, {0 if impl == "copy" else 1}}}')
        buf_entries = ", ".join(
            f"{{{SIZES[b.ctype]}, {b.elems}, {b.fill}, {b.cmp}}}" for b in bufs
        )
        entries.append(
            f'  {{"{k.name}", {k.batch}, {k.per_call_ops}, {k.tolerance!r}, {nb}, {{{buf_entries}}}, {len(impls)}, {{{", ".join(impl_entries)}}}}}'
        )
    out += [
        "",
        "const struct bench_kernel bench_kernels[] = {",
        ",\n".join(entries),
        "};",
    ]
    out.append(f"const int bench_nkernels = {len(ks)};")
    return "\n".join(out) + "\n"


def build(ks: list[Kernel], out: Path, with_mx: bool = True) -> Build:
    """Builds libbench.so and the harness for `ks` in `out`; mx kernels when `with_mx`.

    Holds a lock for the whole build: pytest-xdist workers (and a benchmark run) share
    bench/kernels/ and the build folders."""
    cc = clang()
    if cc is None:
        raise RuntimeError(f"{CLANG} not found (apt-get install clang-16)")
    out.mkdir(parents=True, exist_ok=True)
    with open(BENCH / "kernels" / ".build.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        return _build(ks, out, with_mx, cc)


def _build(ks: list[Kernel], out: Path, with_mx: bool, cc: str) -> Build:
    write_sources(all_kernels())  # the committed sources always hold every kernel
    res = Build(out, out / "libbench.so", out / "harness")
    jobs: list[tuple[str, list[str]]] = []
    for impl, (src, flags) in C_BUILDS.items():
        if impl == "fp8" and not any(k.family in FP8_FAMILIES for k in ks):
            continue
        obj = out / f"{impl}.o"
        jobs.append(
            (impl, [cc, *COPTS, *flags, "-c", str(KERNELS_DIR / src), "-o", str(obj)])
        )
    objs = [out / f"{impl}.o" for impl, _ in jobs]
    mx_jobs: list[tuple[str, Path, Path, str | None]] = []
    if with_mx:
        for k in ks:
            for impl in mx_impls(k):
                sym = symbol(impl, k)
                novec = symbol(impl + NOVEC, k) if mx_diag_impls(k) else None
                mx_jobs.append((sym, out / f"{sym}.ll", out / f"{sym}.o", novec))
    mx_stamp = _stamp([], _mx_sources()) if mx_jobs else ""
    with ThreadPoolExecutor(max_workers=os.cpu_count() or 2) as pool:
        c_futs = [pool.submit(_compile_c, cmd) for _, cmd in jobs]
        mx_futs = {
            sym: pool.submit(
                _lower_mx,
                KERNELS_DIR / "mx" / f"{sym}.mlir",
                ll,
                obj,
                cc,
                mx_stamp,
                novec,
            )
            for sym, ll, obj, novec in mx_jobs
        }
        for f in c_futs:
            f.result()
        for sym, f in mx_futs.items():
            err = f.result()
            if err is None:
                res.mx_ok.add(sym)
            else:
                res.mx_errors[sym] = err
    for sym, _, obj, novec in mx_jobs:
        if sym in res.mx_ok:
            objs.append(obj)
            if novec:
                res.mx_ok.add(novec)
                objs.append(out / f"{novec}.o")
    table = out / "table.c"
    table.write_text(_table_c(ks, res.mx_ok))
    _check([cc, *COPTS, "-shared", "-o", str(res.lib), *map(str, objs)])
    _check(
        [
            cc,
            *COPTS,
            f"-I{BENCH}",
            str(BENCH / "harness.c"),
            str(table),
            *map(str, objs),
            "-lm",
            "-o",
            str(res.harness),
        ]
    )
    return res

"""Fuzzing the `mx-opt` driver.

Valid inputs (every `tests/filecheck/**/*.mlir` chunk, plus random programs of
`mx.testing.matrix_programs` and `mx.testing.matrix_dags`) are mutated — token
deletion, duplication, substitution and swaps, wrong types, wrong and huge
shapes and integers, deep nesting, invalid UTF-8, empty and enormous files —
and run through `mx-opt` with every pipeline of mx's pass registry. Any Python
traceback, hang (> `TIMEOUT` s of CPU time), exit status other than 0/1 or
`internal error` is a bug, and so is printed MLIR that does not read back
(`run_case`). Some `matrix_dags` programs (matrices carried by
`arith.select`, `scf.if`, `affine.for` and `cf` branches, long dependent
chains) also run unmutated: valid input, so anything but exit status 0 is a
bug; the run reports which ops and structures they covered.

Runs are in-process (`mx.tools.mx_opt.main(argv)`, output captured, a CPU-time
timer (SIGPROF) for hangs); `check_subprocess` runs the real console script for a sample.

    python -m mx.testing.fuzz --count 5000 [--seed N] [--save tests/fuzz_regressions]
"""

from __future__ import annotations

import argparse
import contextlib
import hashlib
import io
import os
import random
import re
import signal
import subprocess
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from types import FrameType

from mx.testing.matrix_dags import ProgramGenerator
from mx.testing.matrix_programs import Generator
from mx.testing.progress import Progress
from mx.testing.stock_xdsl import stock_parse_error

TIMEOUT = 30.0
"""Seconds of CPU time (wall time on a shared machine can be several times more).
Catches hangs and superlinear blowups (500 chained adds once took 108 s through
mx-lower-to-llvm); the linear lowering of the generator's 2000-op chains takes ~12 s."""
ROOT = Path(__file__).resolve().parents[2]
CORPUS_DIRS = [ROOT / "tests" / "filecheck"]

TOKEN = re.compile(
    r"""\s+|//[^\n]*|"(?:[^"\\\n]|\\.)*"|[%^@#!]?[\w.$-]+|->|::|[^\s\w]"""
)
TYPES = (
    "f32", "f64", "f16", "bf16", "i1", "i4", "i6", "i7", "i8", "i32", "i64", "index",
    "vector<4xf32>", "tensor<2x2xf32>", "memref<?xf32>", "memref<4x4xf32>",
    "!matrix.matrix<2x2xf32>", "!matrix.matrix<0x3xf32>", "!matrix.matrix<4x4xi1>",
    "!matrix.matrix<2x2x!matrix.matrix<2x2xf32>>", "f8E4M3FN", "none", "complex<f32>",
)  # fmt: skip
NUMBERS = (
    "0", "1", "-1", "2", "3", "5", "16", "1048575", "1048576", "2147483648",
    "9223372036854775807", "9223372036854775808", "-9223372036854775809",
    "99999999999999999999999999", "0x7fffffff", "1.5", "nan", "-0.0", "1e400",
)  # fmt: skip
SPLICE = (
    "(", ")", "{", "}", "[", "]", "<", ">", ",", ":", "=", "->", "%0", "%a", "^bb0",
    "func.func", "matrix.add", "matrix.matmul", "matrix.extract", "matrix.transpose",
    "matrix.cast", "matrix.splat", "matrix.constant", "matrix.column_major_load",
    "dense<[[1.0]]>", "dense<0.0>", "fastmath<contract>", "fastmath<fast>", "{unsigned}",
    "stride", "loc(unknown)", "\"", "#", "@", "!", "arith.constant", "scf.for", "scf.if",
)  # fmt: skip


def matrix_passes() -> list[str]:
    """mx's registered passes, each run with its default options."""
    from mx.universe import ALL_PASSES

    return sorted(ALL_PASSES)


def pipelines() -> list[list[str]]:
    """mx-opt argument lists: no pass, xDSL's canonicalize and cse (which our
    ops plug into), each mx pass, and the full lowering to LLVM IR."""
    result: list[list[str]] = [[], ["-p", "canonicalize"], ["-p", "cse"]]
    result += [["-p", name] for name in matrix_passes()]
    result += [["-p", "mx-lower-to-llvm", "-t", "llvm"], ["-p", "canonicalize,cse,dce"]]
    return result


def corpus() -> list[str]:
    """Valid and invalid seed inputs: every chunk of the FileCheck tests."""
    chunks: list[str] = []
    for directory in CORPUS_DIRS:
        for path in sorted(directory.rglob("*.mlir")):
            if "Output" in path.parts:
                continue
            text = path.read_text(errors="replace")
            chunks.extend(
                c for c in re.split(r"^// -----.*$", text, flags=re.M) if c.strip()
            )
    return chunks


# -- mutations -----------------------------------------------------------------


def _tokens(text: str) -> list[str]:
    return TOKEN.findall(text)


def _significant(tokens: list[str]) -> list[int]:
    return [
        i for i, t in enumerate(tokens) if not t.isspace() and not t.startswith("//")
    ]


def mutate(text: str, rng: random.Random) -> bytes:
    """One random mutation of `text` (several for `stack`)."""
    kind = rng.choice(MUTATIONS)
    return kind(text, rng)


def _token_edit(text: str, rng: random.Random) -> bytes:
    toks = _tokens(text)
    sig = _significant(toks)
    if not sig:
        return text.encode()
    for _ in range(rng.randint(1, 3)):
        i = rng.choice(sig)
        op = rng.randrange(4)
        if op == 0:
            toks[i] = ""
        elif op == 1:
            toks[i] = toks[i] + " " + toks[i]
        elif op == 2:
            toks[i] = (
                toks[rng.choice(sig)] if rng.random() < 0.5 else rng.choice(SPLICE)
            )
        else:
            j = rng.choice(sig)
            toks[i], toks[j] = toks[j], toks[i]
    return "".join(toks).encode()


def _wrong_type(text: str, rng: random.Random) -> bytes:
    types = list(re.finditer(r"\b(?:f16|bf16|f32|f64|i\d+|index)\b", text))
    if not types:
        return _token_edit(text, rng)
    m = rng.choice(types)
    return (text[: m.start()] + rng.choice(TYPES) + text[m.end() :]).encode()


def _wrong_shape(text: str, rng: random.Random) -> bytes:
    shapes = list(re.finditer(r"(\d+)x(\d+)x", text))
    if not shapes:
        return _wrong_number(text, rng)
    m = rng.choice(shapes)
    dims = [rng.choice(NUMBERS[:10]) for _ in range(2)]
    if rng.random() < 0.2:
        dims.append(rng.choice(NUMBERS[:6]))  # a third dimension
    return (text[: m.start()] + "x".join(dims) + "x" + text[m.end() :]).encode()


def _wrong_number(text: str, rng: random.Random) -> bytes:
    nums = list(re.finditer(r"(?<![\w%#^@.])-?\d+(?:\.\d+)?(?:e[+-]?\d+)?\b", text))
    if not nums:
        return _token_edit(text, rng)
    m = rng.choice(nums)
    return (text[: m.start()] + rng.choice(NUMBERS) + text[m.end() :]).encode()


def _invalid_utf8(text: str, rng: random.Random) -> bytes:
    data = text.encode()
    pos = rng.randrange(len(data) + 1)
    junk = rng.choice(
        [b"\xff", b"\xc3", b"\xe2\x82", b"\xed\xa0\x80", b"\x00", b"\xf4\x90\x80\x80"]
    )
    return data[:pos] + junk + data[pos:]


def _deep_nesting(text: str, rng: random.Random) -> bytes:
    depth = rng.choice([200, 1000, 5000, 20000])
    kind = rng.randrange(4)
    if kind == 0:  # nested regions
        inner = '"test.op"() ({\n' * depth + "}) : () -> ()\n" * depth
        return inner.encode()
    if kind == 1:  # nested brackets in a dense literal
        return (
            "%c = matrix.constant dense<" + "[" * depth + "1.0" + "]" * depth
            + "> : !matrix.matrix<2x2xf32>\n"
        ).encode()  # fmt: skip
    if kind == 2:  # nested types
        return (
            "func.func @f(%a: "
            + "!matrix.matrix<2x2x" * depth
            + "f32"
            + ">" * depth
            + ")\n"
        ).encode()
    return ("(" * depth + text).encode()


def _size_extremes(text: str, rng: random.Random) -> bytes:
    kind = rng.randrange(4)
    if kind == 0:
        return b""
    if kind == 1:
        return rng.choice([b"\n", b"   ", b"// only a comment\n", b"\xef\xbb\xbf"])
    if kind == 2:
        return (text * rng.choice([20, 50])).encode()  # duplicated symbols, big input
    # One long function. xDSL parses ~2000 ops/s, so sizes that stay well
    # under TIMEOUT: a hang, not Python's speed, is the bug looked for.
    n = rng.choice([500, 2000])
    body = "".join(
        f"  %v{i + 1} = matrix.add %v{i}, %v{i} : !matrix.matrix<4x4xf32>\n"
        for i in range(n)
    )
    return (
        "func.func @big(%v0: !matrix.matrix<4x4xf32>) -> !matrix.matrix<4x4xf32> {\n"
        + body
        + f"  func.return %v{n} : !matrix.matrix<4x4xf32>\n}}\n"
    ).encode()


SPECIAL_FLOATS = (
    "0x7fc00000", "0x7f800000", "0xff800000", "0x7fa00001", "0x7c00", "0xfc01",
    "0x7ff8000000000000", "0xfff0000000000000", "0x7f80", "0x0", "0x1", "0x80000000",
    "-0x7fc00000", "0x17c00", "0x1ffffffff", "nan", "inf", "-inf", "1e400", "-1e400",
    "70000.0", "-65520.0", "3.4028236e38", "1e-50", "-0.0", '"0x0000C07F"', '"0x00"',
)  # fmt: skip
"""Float literals at and beyond the edges: NaN/inf bit patterns (quiet,
signalling, per type), hex literals too wide or negative, words MLIR does not
accept, decimals above a type's range, raw-data strings."""


def _special_float(text: str, rng: random.Random) -> bytes:
    """A float literal replaced by a special value (NaN, inf, hex, out of range)."""
    floats = list(
        re.finditer(r"(?<![\w%#^@.])-?\d+\.\d*(?:e[+-]?\d+)?|0x[0-9a-fA-F]+", text)
    )
    if not floats:
        return _wrong_number(text, rng)
    for _ in range(rng.randint(1, 3)):
        m = rng.choice(floats)
        text = text[: m.start()] + rng.choice(SPECIAL_FLOATS) + text[m.end() :]
        floats = [f for f in floats if f.end() <= m.start()] or floats[:1]
    return text.encode()


_MEMREF = re.compile(r"memref<((?:\?|\d+)(?:x(?:\?|\d+))*)x([a-z]\w*)>")


def _memref_layout(text: str, rng: random.Random) -> bytes:
    """One memref type, wherever it occurs, given a strided layout: its
    row-major strides (the same memory), other strides, or an offset (which
    mx's lowering and interpreter must refuse, never address as contiguous)."""
    types = sorted({m.group(0) for m in _MEMREF.finditer(text)})
    if not types:
        return _wrong_type(text, rng)
    old = rng.choice(types)
    m = _MEMREF.fullmatch(old)
    assert m is not None
    strides: list[str] = []
    size: int | None = 1
    for dim in reversed(m.group(1).split("x")):
        strides.append("?" if size is None else str(size))
        size = None if dim == "?" or size is None else size * int(dim)
    strides.reverse()
    offset = ""
    choice = rng.random()
    if choice < 0.3:
        strides[rng.randrange(len(strides))] = str(rng.choice([0, 2, 3, 1 << 40]))
    elif choice < 0.6:
        offset = f", offset: {rng.choice([1, 7, '?'])}"
    layout = f"strided<[{', '.join(strides)}]{offset}>"
    return text.replace(old, f"memref<{m.group(1)}x{m.group(2)}, {layout}>").encode()


_DEFINITION = re.compile(r"^[ \t]*%[\w.$-]+(?::\d+)?(?:, %[\w.$-]+)* = .*$", re.M)


def _break_dominance(text: str, rng: random.Random) -> bytes:
    """An op defining values moved after a later line (often after a use, or
    into or out of a nested region), or a use renamed to a value defined later."""
    lines = text.split("\n")
    defining = [i for i, line in enumerate(lines) if _DEFINITION.match(line)]
    if not defining:
        return _token_edit(text, rng)
    i = rng.choice(defining)
    if rng.random() < 0.7 and i + 1 < len(lines):
        j = rng.randrange(i + 1, len(lines))
        line = lines.pop(i)
        lines.insert(j, line)
        return "\n".join(lines).encode()
    # The first use of the first value defined after line i, moved up to line i.
    later = [k for k in defining if k > i]
    if not later:
        return _token_edit(text, rng)
    name = lines[rng.choice(later)].split("=")[0].split(",")[0].strip().split(":")[0]
    used = re.findall(r"%[\w.$-]+", lines[i].split("=", 1)[1])
    if not used:
        return _token_edit(text, rng)
    lines[i] = lines[i].replace(rng.choice(used), name, 1)
    return "\n".join(lines).encode()


def _duplicate_label(text: str, rng: random.Random) -> bytes:
    """A block label defined twice, or referenced before its duplicate."""
    labels = list(re.finditer(r"^\s*(\^[\w.$-]+)(?:\([^)]*\))?:", text, re.M))
    if labels:
        m = rng.choice(labels)
        name = m.group(1)
        lines = text.split("\n")
        at = rng.randrange(len(lines) + 1)
        lines.insert(at, f"{name}:\n  cf.br {name}")
        return "\n".join(lines).encode()
    return (
        "func.func @labels() {\n  cf.br ^bb1\n^bb1:\n  cf.br ^bb1\n"
        "^bb1:\n  func.return\n}\n" + text
    ).encode()


def _deep_valid(text: str, rng: random.Random) -> bytes:
    """Valid matrix code at the bottom of many nested regions."""
    depth = rng.choice([100, 500, 1000])
    t = "!matrix.matrix<2x2xf32>"
    # Without results: nested `scf.if`s yielding matrices lower in time
    # quadratic in the depth (500 levels: > 30 s), a known limitation.
    return (
        f"func.func @deep(%c: i1, %m: {t}) {{\n"
        + "  scf.if %c {\n" * depth
        + f"  %x = matrix.add %m, %m : {t}\n"
        + "  }\n" * depth
        + "  func.return\n}\n"
    ).encode()


_ACCESS = re.compile(
    r"(matrix\.(?:column|row)_major_(?:load|store)\b[^\n:]*?)( packed)?( :)"
)


def _toggle_packed(text: str, rng: random.Random) -> bytes:
    """`packed` added to or removed from a matrix load or store, and often
    every i4/i6/f32 memref made a memref of bytes: valid packed accesses and
    each packed verifier rule (element types, byte bounds)."""
    accesses = list(_ACCESS.finditer(text))
    if not accesses:
        return _wrong_type(text, rng)
    keyword = "" if rng.choice(accesses).group(2) else " packed"
    chosen = accesses if rng.random() < 0.5 else [rng.choice(accesses)]
    for m in reversed(chosen):
        text = text[: m.start()] + m.group(1) + keyword + m.group(3) + text[m.end() :]
    if rng.random() < 0.6:
        text = re.sub(r"(memref<(?:\?|\d+)x)(?:i4|i6|f32)>", r"\1i8>", text)
    return text.encode()


def _stack(text: str, rng: random.Random) -> bytes:
    for _ in range(rng.randint(2, 4)):
        text = rng.choice(MUTATIONS[:-4])(text, rng).decode(errors="replace")
    return text.encode()


MUTATIONS: list[Callable[[str, random.Random], bytes]] = [
    _token_edit,
    _token_edit,
    _token_edit,
    _wrong_type,
    _wrong_shape,
    _wrong_number,
    _wrong_number,
    _special_float,
    _toggle_packed,
    _break_dominance,
    _duplicate_label,
    _stack,
    _invalid_utf8,
    _deep_nesting,
    _deep_valid,
    _size_extremes,
    _memref_layout,
]


def generated_program(rng: random.Random) -> str:
    """A valid random matrix program (the differential tests' generator)."""
    return Generator(rng).program().mlir_source("f")


def carrying_program(rng: random.Random) -> tuple[str, Counter[str]]:
    """A valid random program of `matrix_dags` (control flow carrying
    matrices, long chains) and what it covers."""
    generator = ProgramGenerator(rng.randrange(2**32))
    module, _ = generator.build()
    return str(module), generator.covered


# -- running -------------------------------------------------------------------


class _Timeout(BaseException):
    """Raised by SIGPROF; a BaseException so mx-opt's handler cannot swallow it."""


@dataclass(frozen=True)
class Result:
    status: int | str
    """Exit status, or 'timeout', or 'no-reparse' (see `run_case`)."""
    stderr: str
    seconds: float
    output: str = ""
    """What mx-opt printed (in-process runs)."""

    @property
    def is_bug(self) -> bool:
        return (
            self.status not in (0, 1)
            or "Traceback" in self.stderr
            or "internal error" in self.stderr
        )

    def signature(self) -> str:
        """What identifies the bug: the exception and the innermost frame."""
        if self.status == "timeout":
            return "timeout"
        if self.status == REPARSE:
            message = re.search(r"error: (.*)", self.stderr)
            return f"{REPARSE}:{message.group(1) if message else '?'}"
        kind = re.search(r"internal error: (\w+)", self.stderr)
        frames = re.findall(r'File "([^"]+)", line (\d+), in (\w+)', self.stderr)
        where = f"{Path(frames[-1][0]).name}:{frames[-1][2]}" if frames else ""
        return f"{self.status}:{kind.group(1) if kind else '?'}:{where}"


def _on_alarm(signum: int, frame: FrameType | None) -> None:
    raise _Timeout()


def run_in_process(data: bytes, args: list[str], timeout: float = TIMEOUT) -> Result:
    """`mx-opt <input> <args>` in this process."""
    from mx.tools.mx_opt import main

    with tempfile.NamedTemporaryFile(suffix=".mlir", delete=False) as f:
        f.write(data)
        path = f.name
    err, out = io.StringIO(), io.StringIO()
    start = time.perf_counter()
    old = signal.signal(signal.SIGPROF, _on_alarm)
    signal.setitimer(signal.ITIMER_PROF, timeout)
    status: int | str
    try:
        with contextlib.redirect_stderr(err), contextlib.redirect_stdout(out):
            try:
                status = main([path, *args])
            except SystemExit as exit_:
                status = exit_.code if isinstance(exit_.code, int) else 1
    except _Timeout:
        status = "timeout"
    finally:
        signal.setitimer(signal.ITIMER_PROF, 0)
        signal.signal(signal.SIGPROF, old)
        os.unlink(path)
    return Result(status, err.getvalue(), time.perf_counter() - start, out.getvalue())


REPARSE = "no-reparse"


STOCK_REPARSE_CHARS = 200_000
"""Outputs up to this size are also read by stock xDSL's parser (~1 s per
1000 ops)."""


def run_case(data: bytes, args: list[str]) -> Result:
    """`run_in_process`, and for a run that printed MLIR (exit status 0, no
    `-t`), its output read back by `mx-opt`: every module mx-opt prints must
    parse and verify again (a folded NaN printed as bits that read back as an
    integer, an index fold beyond 64 bits were such bugs), and parse in stock
    `xdsl-opt` (`memref.prefetch` once did not). A module that does not is
    reported as status `REPARSE`, with the error."""
    result = run_in_process(data, args)
    if result.status != 0 or "-t" in args or not result.output.strip():
        return result
    again = run_in_process(result.output.encode(), [])
    if again.status != 0:
        return Result(REPARSE, again.stderr, result.seconds + again.seconds)
    if len(result.output) <= STOCK_REPARSE_CHARS and (
        error := stock_parse_error(result.output)
    ):
        return Result(REPARSE, f"error: stock xDSL: {error}", result.seconds)
    return result


def run_subprocess(data: bytes, args: list[str], timeout: float = TIMEOUT) -> Result:
    """The real `mx-opt` console script, input on stdin."""
    start = time.perf_counter()
    try:
        r = subprocess.run(
            [_console_script(), *args],
            input=data,
            capture_output=True,
            timeout=timeout,
        )
    except subprocess.TimeoutExpired:
        return Result("timeout", "", time.perf_counter() - start)
    # A signal (negative status) is a crash too.
    return Result(
        r.returncode, r.stderr.decode(errors="replace"), time.perf_counter() - start
    )


# -- campaigns -----------------------------------------------------------------


@dataclass(frozen=True)
class Case:
    data: bytes
    args: list[str]
    mutation: str
    """The mutation applied, or `valid` for an unmutated valid program."""
    covered: Counter[str] = field(default_factory=Counter[str])
    """Ops and structures of a valid program."""

    def failed(self, result: Result) -> bool:
        """A bug, or valid input refused."""
        return result.is_bug or (self.mutation == "valid" and result.status != 0)


VALID_SHARE = 0.15
"""Share of cases that are unmutated valid programs of `matrix_dags`."""


def cases(seed: int, count: int) -> Iterator[Case]:
    """`count` fuzz cases: a mutated seed input, or a valid program, with one
    pipeline each, the pipelines taken in turn so that a sample covers all of
    them."""
    rng = random.Random(seed)
    seeds = corpus()
    pipes = pipelines()
    for k in range(count):
        pipe = pipes[k % len(pipes)]
        choice = rng.random()
        if choice < VALID_SHARE:
            text, covered = carrying_program(rng)
            # convert-to-llvm alone takes lowered code, not matrices.
            whole = ["-p", "mx-lower-to-llvm", "-t", "llvm"]
            valid_pipe = whole if pipe == ["-p", "convert-to-llvm"] else pipe
            yield Case(text.encode(), valid_pipe, "valid", covered)
            continue
        if choice < 0.3:
            base = carrying_program(rng)[0]
        elif choice < 0.45:
            base = generated_program(rng)
        else:
            base = rng.choice(seeds)
        kind = rng.choice(MUTATIONS)
        yield Case(kind(base, rng), pipe, kind.__name__.strip("_"))


def minimize(data: bytes, args: list[str], signature: str) -> bytes:
    """Delta debugging over lines, then tokens, keeping the bug signature."""

    def still(candidate: bytes) -> bool:
        r = run_case(candidate, args)
        return r.is_bug and r.signature() == signature

    for split in (_lines, _byte_tokens):
        parts = split(data)
        chunk = max(1, len(parts) // 2)
        while chunk >= 1:
            i = 0
            while i < len(parts):
                candidate = parts[:i] + parts[i + chunk :]
                if candidate != parts and still(b"".join(candidate)):
                    parts = candidate
                else:
                    i += chunk
            chunk //= 2
        data = b"".join(parts)
    return data


def _lines(data: bytes) -> list[bytes]:
    return data.splitlines(keepends=True)


def _byte_tokens(data: bytes) -> list[bytes]:
    return re.findall(rb"\s+|[\w.%!#@^$-]+|[^\s\w]", data)


HEADER = b"// fuzz-args: "


VALID_MARK = b"// fuzz-valid\n"
"""Second line of a saved valid program that was refused: it must pass."""


def save_regression(
    directory: Path, data: bytes, args: list[str], valid: bool = False
) -> Path:
    """Keep a crashing input; its first line records the mx-opt arguments."""
    directory.mkdir(parents=True, exist_ok=True)
    digest = hashlib.sha1(data + " ".join(args).encode()).hexdigest()[:12]
    path = directory / f"crash_{digest}.mlir"
    mark = VALID_MARK if valid else b""
    path.write_bytes(HEADER + " ".join(args).encode() + b"\n" + mark + data)
    return path


def regression_args(path: Path) -> tuple[bytes, list[str]]:
    """(input, mx-opt arguments) of a saved regression file."""
    data = path.read_bytes()
    first, _, _ = data.partition(b"\n")
    args = first[len(HEADER) :].decode().split() if first.startswith(HEADER) else []
    return data, args


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m mx.testing.fuzz", description=__doc__
    )
    parser.add_argument("--count", type=int, default=1000)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument(
        "--save", type=Path, help="minimize and save crashing inputs here"
    )
    args = parser.parse_args(argv)
    kinds: Counter[str] = Counter()
    covered: Counter[str] = Counter()
    statuses: Counter[str] = Counter()
    bugs: dict[str, tuple[Case, Result]] = {}
    start = time.perf_counter()
    progress = Progress("fuzz", args.count, "inputs")
    progress.update(0, 0)
    for index, case in enumerate(cases(args.seed, args.count), 1):
        result = run_case(case.data, case.args)
        kinds[case.mutation] += 1
        covered.update(case.covered)
        statuses[str(result.status)] += 1
        signature = _signature(case, result)
        if case.failed(result) and signature not in bugs:
            bugs[signature] = (case, result)
            print(
                f"BUG {signature} with {' '.join(case.args) or '(no pass)'}",
                flush=True,
            )
        progress.update(index, len(bugs))
    print(f"inputs: {args.count} in {time.perf_counter() - start:.0f} s")
    print(
        "mutations covered: " + ", ".join(f"{k} {v}" for k, v in sorted(kinds.items()))
    )
    print(
        "valid programs covered: "
        + ", ".join(f"{k} {v}" for k, v in sorted(covered.items()))
    )
    print("pipelines: " + "; ".join(" ".join(p) or "(none)" for p in pipelines()))
    print(
        "exit statuses: " + ", ".join(f"{k} {v}" for k, v in sorted(statuses.items()))
    )
    print(f"distinct bugs: {len(bugs)}")
    for signature, (case, result) in bugs.items():
        print(f"--- {signature}\n{result.stderr[-1500:]}")
        if args.save:
            # A valid program refused stays whole: deleting parts breaks it.
            small = (
                case.data
                if case.mutation == "valid"
                else minimize(case.data, case.args, signature)
            )
            saved = save_regression(
                args.save, small, case.args, case.mutation == "valid"
            )
            print(f"saved {saved}")
    return 1 if bugs else 0


def _signature(case: Case, result: Result) -> str:
    """The bug signature, or for valid input refused, its message."""
    if result.is_bug or not case.failed(result):
        return result.signature()
    message = re.search(r"error: (.*)", result.stderr)
    return f"valid input refused: {message.group(1) if message else result.stderr[:80]}"


if __name__ == "__main__":
    sys.exit(main())


def _console_script() -> str:
    """The installed `mx-opt` next to this interpreter."""
    return str(Path(sys.executable).with_name("mx-opt"))

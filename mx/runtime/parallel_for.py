"""LLVM IR that runs the iterations of a loop on OpenMP's threads.

A loop body is a function `void body(i64 lo, i64 hi, args...)` that runs the
iterations [lo, hi), each independent of the others (they write disjoint
memory). `parallel_for` defines `void NAME(i64 n, args...)`: it runs
iterations [0, n) through libgomp's `GOMP_parallel` (GCC's entry point,
also exported by LLVM's libomp), each thread taking one contiguous chunk of
the iterations, or calls `body(0, n, args...)` itself when

- no OpenMP runtime is linked: `GOMP_parallel` and the thread queries are
  `extern_weak`, null when absent, so code linked without `-fopenmp` runs on
  one thread;
- the thread count asked for is 1, or there is a single iteration.

The thread count is read from the `i32` global `mx_num_threads` (also weak:
the Python API defines it, see `mx/runtime/threads.py`); 0, or no such
global, lets OpenMP choose (`OMP_NUM_THREADS`, else every CPU). A call made
from inside a parallel region runs on its caller's thread (OpenMP's nested
regions are inactive by default), so a batch loop on every thread does not
also split each call.

Splitting never changes a result: a chunk of iterations computes exactly
what the same iterations compute in one loop.
"""

import re
from collections.abc import Sequence

PREFIX = "_mx_parallel_for_"
"""The trampoline of body `f` is `_mx_parallel_for_f`."""

THREAD_COUNT_SYMBOL = "mx_num_threads"

DECLARATIONS: dict[str, str] = {
    THREAD_COUNT_SYMBOL: f"@{THREAD_COUNT_SYMBOL} = extern_weak global i32",
    "GOMP_parallel": "declare extern_weak void @GOMP_parallel(ptr, ptr, i32, i32)",
    "omp_get_thread_num": "declare extern_weak i32 @omp_get_thread_num()",
    "omp_get_num_threads": "declare extern_weak i32 @omp_get_num_threads()",
}
"""What a module with `parallel_for`s declares once."""


def suffixed(symbol: str, suffix: str) -> str:
    """The LLVM symbol `symbol` (`@name` or `@"name"`) with `suffix` appended."""
    if symbol.endswith('"'):
        return symbol[:-1] + suffix + '"'
    return symbol + suffix


def parallel_for(name: str, body: str, arg_types: Sequence[str]) -> str:
    """The definitions of trampoline `name` (`void name(i64 n, args...)`,
    internal) and of its thread function, running `body` (symbols with their
    `@`) over [0, n) as the module docs say. `arg_types`: the LLVM types of
    the arguments after the iteration bounds."""
    context_type = "{ " + ", ".join(["i64", *arg_types]) + " }"
    params = ", ".join(f"{t} %a{i}" for i, t in enumerate(arg_types))
    args = "".join(f", {t} %a{i}" for i, t in enumerate(arg_types))
    thread_function = suffixed(name, ".thread")
    stores = [
        f"  %slot{i} = getelementptr {context_type}, ptr %context, i32 0, i32 {i + 1}\n"
        f"  store {t} %a{i}, ptr %slot{i}"
        for i, t in enumerate(arg_types)
    ]
    loads = [
        f"  %slot{i} = getelementptr {context_type}, ptr %context, i32 0, i32 {i + 1}\n"
        f"  %a{i} = load {t}, ptr %slot{i}"
        for i, t in enumerate(arg_types)
    ]
    count = f"@{THREAD_COUNT_SYMBOL}"
    trampoline = f"""define internal void {name}(i64 %n{", " + params if params else ""}) {{
entry:
  %defined = icmp ne ptr {count}, null
  br i1 %defined, label %read, label %decide
read:
  %asked = load i32, ptr {count}
  br label %decide
decide:
  %threads = phi i32 [0, %entry], [%asked, %read]
  %one_thread = icmp eq i32 %threads, 1
  %one_iteration = icmp slt i64 %n, 2
  %no_runtime = icmp eq ptr @GOMP_parallel, null
  %either = or i1 %one_thread, %one_iteration
  %serial = or i1 %either, %no_runtime
  br i1 %serial, label %alone, label %parallel
alone:
  call void {body}(i64 0, i64 %n{args})
  ret void
parallel:
  %context = alloca {context_type}
  %count_slot = getelementptr {context_type}, ptr %context, i32 0, i32 0
  store i64 %n, ptr %count_slot
{chr(10).join(stores)}
  %wide = zext i32 %threads to i64
  %fewer = icmp ult i64 %n, %wide
  %narrow = trunc i64 %n to i32
  %team = select i1 %fewer, i32 %narrow, i32 %threads
  call void @GOMP_parallel(ptr {thread_function}, ptr %context, i32 %team, i32 0)
  ret void
}}

define internal void {thread_function}(ptr %context) {{
entry:
  %count_slot = getelementptr {context_type}, ptr %context, i32 0, i32 0
  %n = load i64, ptr %count_slot
{chr(10).join(loads)}
  %thread32 = call i32 @omp_get_thread_num()
  %threads32 = call i32 @omp_get_num_threads()
  %thread = zext i32 %thread32 to i64
  %threads = zext i32 %threads32 to i64
  ; n = q * threads + r: the first r threads take q + 1 iterations, the rest q.
  %q = udiv i64 %n, %threads
  %r = urem i64 %n, %threads
  %extra = icmp ult i64 %thread, %r
  %before_extra = select i1 %extra, i64 %thread, i64 %r
  %start = mul i64 %q, %thread
  %lo = add i64 %start, %before_extra
  %one_more = zext i1 %extra to i64
  %size = add i64 %q, %one_more
  %hi = add i64 %lo, %size
  call void {body}(i64 %lo, i64 %hi{args})
  ret void
}}"""
    return trampoline


def missing_declarations(text: str) -> list[str]:
    """The `DECLARATIONS` that the LLVM IR `text` lacks (each is needed once
    per module; unused ones cost nothing)."""
    return [
        line
        for name, line in DECLARATIONS.items()
        if not re.search(rf"^(declare [^\n]*@{name}\(|@{name} = )", text, re.MULTILINE)
    ]


_TRAMPOLINE_DECLARATION = re.compile(
    rf'^declare void @(?P<quote>"?){PREFIX}(?P<body>[^"(]+)(?P=quote)\((?P<args>[^)]*)\)$',
    re.MULTILINE,
)


def define_trampolines(text: str) -> str:
    """The LLVM IR module `text` with each declared trampoline
    `_mx_parallel_for_F(i64, args...)` (as `outline-parallel-loops` leaves
    them) defined by `parallel_for`, running function F."""

    def definition(match: re.Match[str]) -> str:
        quote, body = match["quote"], match["body"]
        arg_types = [t.strip() for t in match["args"].split(",")][1:]
        return parallel_for(
            f"@{quote}{PREFIX}{body}{quote}", f"@{quote}{body}{quote}", arg_types
        )

    defined = _TRAMPOLINE_DECLARATION.sub(definition, text)
    if defined == text:
        return text
    return defined + "".join(line + "\n" for line in missing_declarations(defined))

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

When the `i32` global `mx_pin_threads` (weak too) is nonzero, each region
places its threads: every worker restricts itself to the calling thread's
CPUs less the one the calling thread is on (when that leaves a CPU for each
worker), and the calling thread yields once before its chunk. Unpinned, a
sleeping worker woken by a call may be queued on the calling thread's CPU
and run only after the calling thread's chunk (2 threads as slow as 1;
bench/results/threads.md, session 28). Pinned, it wakes on a CPU of its own;
if the calling thread has moved onto that CPU since, the yield lets the
worker run at once and move off. The calling thread is never pinned, so
Python's threads keep their affinity.

Splitting never changes a result: a chunk of iterations computes exactly
what the same iterations compute in one loop.
"""

import re
from collections.abc import Sequence

PREFIX = "_mx_parallel_for_"
"""The trampoline of body `f` is `_mx_parallel_for_f`."""

THREAD_COUNT_SYMBOL = "mx_num_threads"

PIN_SYMBOL = "mx_pin_threads"

WORKER_CPUS = "_mx_worker_cpus"
"""`ptr WORKER_CPUS(ptr set, i32 team)`: fills the 128-byte `cpu_set_t` `set`
with the calling thread's CPUs less its current one and returns it, or
returns null when the workers of a team of `team` (0: OpenMP's default)
stay unpinned (pinning off, no such libc functions, a call from inside a
parallel region, or fewer CPUs left than workers)."""

_WORKER_CPUS_DEFINITION = f"""define internal ptr @{WORKER_CPUS}(ptr %set, i32 %team) {{
entry:
  %asked = icmp ne ptr @{PIN_SYMBOL}, null
  %have_cpu = icmp ne ptr @sched_getcpu, null
  %have_get = icmp ne ptr @sched_getaffinity, null
  %have_set = icmp ne ptr @sched_setaffinity, null
  %have_yield = icmp ne ptr @sched_yield, null
  %have_nesting = icmp ne ptr @omp_in_parallel, null
  %openmp = and i1 %asked, %have_nesting
  %queries = and i1 %have_cpu, %have_get
  %moves = and i1 %have_set, %have_yield
  %libc = and i1 %queries, %moves
  %possible = and i1 %openmp, %libc
  br i1 %possible, label %read, label %unpinned
read:
  %pin = load i32, ptr @{PIN_SYMBOL}
  %pinning = icmp ne i32 %pin, 0
  br i1 %pinning, label %nesting, label %unpinned
nesting:
  ; A call from inside a parallel region runs on its caller's thread alone.
  %in_parallel = call i32 @omp_in_parallel()
  %outermost = icmp eq i32 %in_parallel, 0
  br i1 %outermost, label %query, label %unpinned
query:
  %status = call i32 @sched_getaffinity(i32 0, i64 128, ptr %set)
  %cpu = call i32 @sched_getcpu()
  %got = icmp eq i32 %status, 0
  %in_set = icmp ult i32 %cpu, 1024
  %known = and i1 %got, %in_set
  br i1 %known, label %exclude, label %unpinned
exclude:
  %word_index = lshr i32 %cpu, 6
  %bit_index = and i32 %cpu, 63
  %word_slot = getelementptr i64, ptr %set, i32 %word_index
  %word = load i64, ptr %word_slot
  %bit_shift = zext i32 %bit_index to i64
  %bit = shl i64 1, %bit_shift
  %others_mask = xor i64 %bit, -1
  %others_word = and i64 %word, %others_mask
  store i64 %others_word, ptr %word_slot
  %words = load <16 x i64>, ptr %set, align 8
  %counts = call <16 x i64> @llvm.ctpop.v16i64(<16 x i64> %words)
  %others = call i64 @llvm.vector.reduce.add.v16i64(<16 x i64> %counts)
  %default_team = icmp eq i32 %team, 0
  br i1 %default_team, label %ask_openmp, label %count
ask_openmp:
  %openmp_team = call i32 @omp_get_max_threads()
  br label %count
count:
  %size = phi i32 [%team, %exclude], [%openmp_team, %ask_openmp]
  %team64 = zext i32 %size to i64
  %workers = sub i64 %team64, 1
  %enough = icmp uge i64 %others, %workers
  %result = select i1 %enough, ptr %set, ptr null
  ret ptr %result
unpinned:
  ret ptr null
}}"""

DECLARATIONS: dict[str, str] = {
    THREAD_COUNT_SYMBOL: f"@{THREAD_COUNT_SYMBOL} = extern_weak global i32",
    PIN_SYMBOL: f"@{PIN_SYMBOL} = extern_weak global i32",
    "GOMP_parallel": "declare extern_weak void @GOMP_parallel(ptr, ptr, i32, i32)",
    "omp_get_thread_num": "declare extern_weak i32 @omp_get_thread_num()",
    "omp_get_num_threads": "declare extern_weak i32 @omp_get_num_threads()",
    "omp_get_max_threads": "declare extern_weak i32 @omp_get_max_threads()",
    "omp_in_parallel": "declare extern_weak i32 @omp_in_parallel()",
    "sched_getcpu": "declare extern_weak i32 @sched_getcpu()",
    "sched_getaffinity": "declare extern_weak i32 @sched_getaffinity(i32, i64, ptr)",
    "sched_setaffinity": "declare extern_weak i32 @sched_setaffinity(i32, i64, ptr)",
    "sched_yield": "declare extern_weak i32 @sched_yield()",
    "llvm.ctpop.v16i64": "declare <16 x i64> @llvm.ctpop.v16i64(<16 x i64>)",
    "llvm.vector.reduce.add.v16i64": (
        "declare i64 @llvm.vector.reduce.add.v16i64(<16 x i64>)"
    ),
    WORKER_CPUS: _WORKER_CPUS_DEFINITION,
}
"""What a module with `parallel_for`s declares (or defines) once."""


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
    context_type = "{ " + ", ".join(["i64", "ptr", *arg_types]) + " }"
    params = ", ".join(f"{t} %a{i}" for i, t in enumerate(arg_types))
    args = "".join(f", {t} %a{i}" for i, t in enumerate(arg_types))
    thread_function = suffixed(name, ".thread")
    stores = [
        f"  %slot{i} = getelementptr {context_type}, ptr %context, i32 0, i32 {i + 2}\n"
        f"  store {t} %a{i}, ptr %slot{i}"
        for i, t in enumerate(arg_types)
    ]
    loads = [
        f"  %slot{i} = getelementptr {context_type}, ptr %context, i32 0, i32 {i + 2}\n"
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
  %cpus = alloca [16 x i64], align 8
  %worker_cpus = call ptr @{WORKER_CPUS}(ptr %cpus, i32 %team)
  %cpus_slot = getelementptr {context_type}, ptr %context, i32 0, i32 1
  store ptr %worker_cpus, ptr %cpus_slot
  call void @GOMP_parallel(ptr {thread_function}, ptr %context, i32 %team, i32 0)
  ret void
}}

define internal void {thread_function}(ptr %context) {{
entry:
  %count_slot = getelementptr {context_type}, ptr %context, i32 0, i32 0
  %n = load i64, ptr %count_slot
{chr(10).join(loads)}
  %cpus_slot = getelementptr {context_type}, ptr %context, i32 0, i32 1
  %cpus = load ptr, ptr %cpus_slot
  %thread32 = call i32 @omp_get_thread_num()
  %threads32 = call i32 @omp_get_num_threads()
  %worker = icmp ne i32 %thread32, 0
  %pinned = icmp ne ptr %cpus, null
  ; (a team of one, e.g. under OMP_THREAD_LIMIT=1: nothing to place)
  %team = icmp ugt i32 %threads32, 1
  %placed = and i1 %pinned, %team
  br i1 %placed, label %place, label %work
place:
  br i1 %worker, label %pin_worker, label %yield
pin_worker:
  %pinned_status = call i32 @sched_setaffinity(i32 0, i64 128, ptr %cpus)
  br label %work
yield:
  ; A worker pinned at the last call to the CPU this thread is on now was
  ; woken here, queued behind this thread: let it run, and move off.
  %yield_status = call i32 @sched_yield()
  br label %work
work:
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
        if not re.search(
            rf"^((declare|define) [^\n]*@{re.escape(name)}\(|@{re.escape(name)} = )",
            text,
            re.MULTILINE,
        )
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

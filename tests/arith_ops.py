"""The `arith` binary ops the differential and sweep tests generate, and the
op sweep's cases (every `arith`/`math` op on every element type)."""

INTEGER_BINARIES = [
    "addi",
    "subi",
    "muli",
    "divsi",
    "divui",
    "remsi",
    "remui",
    "ceildivsi",
    "ceildivui",
    "floordivsi",
    "shli",
    "shrsi",
    "shrui",
    "andi",
    "ori",
    "xori",
    "maxsi",
    "minsi",
    "maxui",
    "minui",
]
FLOAT_BINARIES = [
    "addf",
    "subf",
    "mulf",
    "divf",
    "maximumf",
    "minimumf",
    "maxnumf",
    "minnumf",
]

SWEEP_INTEGERS = ["i1", "i4", "i8", "i16", "i32", "i64", "index"]
SWEEP_FLOATS = ["f16", "bf16", "f32", "f64"]
FLOAT_UNARIES = [
    "math.sqrt",
    "math.rsqrt",
    "math.exp",
    "math.exp2",
    "math.log",
    "math.log2",
    "math.log10",
    "math.absf",
    "math.floor",
    "math.ceil",
    "math.round",
    "math.roundeven",
    "math.trunc",
    "math.sin",
    "math.cos",
    "math.tanh",
    "arith.negf",
]
INTEGER_UNARIES = ["math.absi", "math.ctpop", "math.ctlz", "math.cttz"]


def sweep_cases() -> list[tuple[str, str]]:
    """(function body line, type) of every case; `%a`, `%b` are operands."""
    cases: list[tuple[str, str]] = []
    for t in [*SWEEP_INTEGERS, *(f"vector<4x{t}>" for t in SWEEP_INTEGERS)]:
        cases += [(f"%c = arith.{op} %a, %b : {t}", t) for op in INTEGER_BINARIES]
        cases += [(f"%c = {op} %a : {t}", t) for op in INTEGER_UNARIES]
    for t in [*SWEEP_FLOATS, *(f"vector<4x{t}>" for t in SWEEP_FLOATS)]:
        cases += [(f"%c = arith.{op} %a, %b : {t}", t) for op in FLOAT_BINARIES]
        cases += [(f"%c = {op} %a : {t}", t) for op in FLOAT_UNARIES]
        cases += [
            (f"%c = math.fma %a, %b, %a : {t}", t),
            (f"%c = math.powf %a, %b : {t}", t),
        ]
    return cases


def sweep_function(name: str, line: str, type_: str) -> str:
    """The function `@name` of one sweep case."""
    return (
        f"func.func @{name}(%a: {type_}, %b: {type_}) -> {type_} {{\n"
        f"  {line}\n  func.return %c : {type_}\n}}\n"
    )

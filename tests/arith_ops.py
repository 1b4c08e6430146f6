"""The `arith` binary ops the differential and sweep tests generate."""

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

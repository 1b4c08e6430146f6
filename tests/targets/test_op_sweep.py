"""Every `arith` and `math` op on every element type, scalar and vector, through
`mx-opt -p mx-lower-to-llvm -t llvm`: LLVM IR that `llvm-as-16` accepts, or a
refusal located at the op's source line (exit status 1) — never an internal
error.

Found when written: `ceildivui`/`ceildivsi`/`floordivsi` on i1 (a zext from
i1 to i1), `maximumf`/`minimumf` on vectors (scalar-typed comparisons),
`absi`/`ctpop`/`ctlz` on `index` (an unlocated leftover cast), `exp2`/`log2`/
`log10` refused. The one known refusal: `math.tanh` (no LLVM intrinsic).
"""

import re
import subprocess

from mx.testing.fuzz import run_in_process
from tests.arith_ops import sweep_cases, sweep_function
from tests.system_tools import required_tool

LOCATED = re.compile(r"^\S+\.mlir:2:3: error: ", re.M)
"""A diagnostic at the op (line 2, column 3 of each case's function)."""


def test_every_arith_and_math_op_lowers_or_is_refused_at_its_line() -> None:
    lowered: list[str] = []
    problems: list[str] = []
    refused: list[str] = []
    for index, (line, type_) in enumerate(sweep_cases()):
        source = sweep_function(f"f{index}", line, type_)
        result = run_in_process(
            source.encode(), ["-p", "mx-lower-to-llvm", "-t", "llvm"]
        )
        if result.status == 0:
            lowered.append(source)
        elif result.status == 1 and LOCATED.search(
            result.stderr.replace("<stdin>", "sweep.mlir")
        ):
            refused.append(line)
        else:
            problems.append(f"{line}: status {result.status}\n{result.stderr[-600:]}")
    assert not problems, "\n".join(problems[:10])
    # Only the known refusals.
    assert all("math.tanh" in line for line in refused), refused
    # All that lowered, as one module, is valid LLVM IR.
    whole = run_in_process(
        "".join(lowered).encode(), ["-p", "mx-lower-to-llvm", "-t", "llvm"]
    )
    assert whole.status == 0, whole.stderr[-2000:]
    check = subprocess.run(
        [required_tool("llvm-as-16"), "-o", "/dev/null", "-"],
        input=whole.output, capture_output=True, text=True, check=False,
    )  # fmt: skip
    assert check.returncode == 0, check.stderr[:2000]
    assert len(lowered) > 400

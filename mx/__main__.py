"""`python -m mx`: the version and how to use mx's tools."""

import sys

from mx import __version__

USAGE = f"""mx {__version__}: fixed-size matrices as SSA values and FP8/FP6/FP4 formats, on xDSL

commands:
  mx-opt FILE -p PASSES [-t llvm] [-o OUT]   transform MLIR (mx-opt --help, --list-passes)
  mx-run FILE [--entry NAME] [--arg VALUE]   run a function with the reference interpreter
  xdsl-opt, xdsl-run                         see mx's dialects, passes and interpreter too

from Python:
  from mx.jit import jit                     compile a function, call it with NumPy arrays

documentation: docs/index.md in the source tree
"""


def main() -> int:
    sys.stdout.write(USAGE)
    return 0


if __name__ == "__main__":
    sys.exit(main())

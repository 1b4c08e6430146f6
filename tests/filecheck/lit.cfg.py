"""lit configuration for mx's FileCheck tests (run by `pytest` through tests/test_lit.py)."""

import os
import sys

import lit.formats
from lit.TestingConfig import TestingConfig

config: TestingConfig = globals()["config"]  # injected by lit

config.name = "mx"
config.test_format = lit.formats.ShTest(execute_external=False)
config.suffixes = {".mlir"}
config.excludes = {"Inputs"}
config.test_source_root = os.path.dirname(__file__)

# The tools come from the Python environment that runs lit (the project venv),
# not from whatever `mx-opt` or `filecheck` happens to be first on PATH.
bin_dir = os.path.dirname(sys.executable)
config.environment["PATH"] = os.pathsep.join([bin_dir, os.environ.get("PATH", "")])
for tool in ("mx-opt", "mx-run", "filecheck"):
    # Only whole words: not inside paths or longer names such as `mx-opt-foo`.
    config.substitutions.append(
        (rf"(?<![\w/.-]){tool}(?![\w/.-])", os.path.join(bin_dir, tool))
    )

# A worktree run with PYTHONPATH pointing at its sources tests those sources,
# not the copy the venv has installed.
if "PYTHONPATH" in os.environ:
    config.environment["PYTHONPATH"] = os.environ["PYTHONPATH"]

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
# A checkout run with PYTHONPATH (a git worktree sharing another's venv) tests
# its own `mx`, not the one the venv installed.
if "PYTHONPATH" in os.environ:
    config.environment["PYTHONPATH"] = os.environ["PYTHONPATH"]
# tests/test_lit.py serves the tools from one process that imported them
# (tests/tool_server.py): each RUN line's tool is then a client of a few
# milliseconds instead of a Python start-up of up to a second.
server = os.environ.get("MX_LIT_TOOL_SERVER")
client = os.path.join(os.path.dirname(os.path.dirname(__file__)), "tool_server.py")
for tool in ("mx-opt", "mx-run", "filecheck"):
    command = (
        f"{sys.executable} -S -E {client} run {server} {tool}"
        if server
        else os.path.join(bin_dir, tool)
    )
    # Only whole words: not inside paths or longer names such as `mx-opt-foo`.
    config.substitutions.append((rf"(?<![\w/.-]){tool}(?![\w/.-])", command))
# Tools and `python` import mx from PYTHONPATH when it is set (a source tree
# other than the installed one).
if "PYTHONPATH" in os.environ:
    config.environment["PYTHONPATH"] = os.environ["PYTHONPATH"]

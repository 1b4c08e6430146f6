"""The exit-status convention shared by mx's command-line tools (and their
argument parser, whose usage errors are bad input: status 1).

0: success; 1: bad input, reported by the tool itself as a located
diagnostic; 2: an unexpected exception, i.e. a bug in mx, reported as
`<tool>: internal error` with its traceback, so fuzzing can tell them apart.
"""

import argparse
import os
import sys
import traceback
from collections.abc import Callable
from typing import NoReturn


def run_tool(tool: str, body: Callable[[], int]) -> int:
    """Run `body` (which returns 0 or 1) and turn what escapes it into a status."""
    try:
        return body()
    except BrokenPipeError:
        # The reader went away (`mx-opt ... | head`): not a bug, nothing left to say.
        # Point stdout at devnull so the interpreter's final flush stays quiet.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0
    except Exception as err:
        print(f"{tool}: internal error: {type(err).__name__}: {err}", file=sys.stderr)
        traceback.print_exc()
        return 2


class ArgumentParser(argparse.ArgumentParser):
    """Usage errors are bad input: exit status 1 (argparse's 2 means internal error here)."""

    def error(self, message: str) -> NoReturn:
        self.print_usage(sys.stderr)
        self.exit(1, f"{self.prog}: error: {message}\n")

"""Progress lines of the long-running testing tools, on stderr (their report
on stdout stays as it was): a first line at once, then at most one every
`interval` seconds, and the last one when everything is done."""

import sys
import time
from collections.abc import Callable
from typing import IO


class Progress:
    """`<what>: <done>/<total> <unit>, <failures> failures, <t> s, ~<left> s left`."""

    def __init__(
        self,
        what: str,
        total: int,
        unit: str,
        interval: float = 10.0,
        stream: IO[str] | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.what = what
        self.total = total
        self.unit = unit
        self.interval = interval
        self.stream = stream
        self.clock = clock
        self.start = clock()
        self.last: float | None = None

    def update(self, done: int, failures: int) -> None:
        """Reports `done` items so far, if it is time to (see the module docs)."""
        now = self.clock()
        due = self.last is None or now - self.last >= self.interval
        if not due and done < self.total:
            return
        self.last = now
        elapsed = now - self.start
        left = f", ~{elapsed / done * (self.total - done):.0f} s left" if done else ""
        print(
            f"{self.what}: {done}/{self.total} {self.unit}, {failures} failures, "
            f"{elapsed:.0f} s{left}",
            file=self.stream or sys.stderr,
            flush=True,
        )

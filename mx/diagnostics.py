"""Located diagnostics that passes can raise.

xDSL's `PassFailedException` carries only a message. A pass that rejects its
input (e.g. a matrix too large to lower) raises `OpDiagnostic` instead, so that
`mx-opt` reports the error at the offending op's source line and
`--verify-diagnostics` can match it with `// expected-error@+1 {{...}}`.
"""

from xdsl.ir import Operation
from xdsl.utils.exceptions import PassFailedException


class OpDiagnostic(PassFailedException):
    """A pass error about `op`, reported at `op`'s location."""

    def __init__(self, op: Operation, message: str) -> None:
        super().__init__(message)
        self.op = op
        self.message = message

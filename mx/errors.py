"""The exceptions mx's Python API raises for bad input.

Every one derives from `MXError`, so `except mx.MXError` catches any bad
input, whatever stage found it. Each also derives from the built-in exception
Python code would expect there (`TypeError`/`ValueError` for a bad argument,
`AttributeError`/`KeyError` for an unknown function), so existing handlers keep
working. The message is what `mx-opt` prints: `<string>:line:col: error: ...`,
the source line and a caret under the column, when the error has a place in the
source.
"""


class MXError(Exception):
    """Base class of every error mx's Python API raises for bad input."""


class CompileError(MXError):
    """The source does not parse or verify, a pass rejects it, or the pipeline
    names an unknown pass or option. `diagnostics` holds one rendered
    diagnostic per entry (the message joins them with newlines)."""

    def __init__(self, diagnostics: list[str]) -> None:
        super().__init__("\n".join(diagnostics))
        self.diagnostics = diagnostics


class ArgumentError(MXError, TypeError, ValueError):
    """A call's arguments do not match the compiled function's parameters
    (count, dtype, shape, memory order, writability, size or batch shape)."""


class UnknownFunctionError(MXError, AttributeError, KeyError):
    """A compiled module has no function of that name; the message lists the
    functions it has."""

    def __str__(self) -> str:
        # KeyError's str() would quote the message.
        return str(self.args[0])

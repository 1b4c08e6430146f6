"""Workarounds for xDSL 0.75 bugs that mx's command-line tools must not inherit."""

import re

from xdsl.utils.mlir_lexer import MLIRLexer

# xDSL lexes string literals with `"(?:[^"...]+|escape)*"`: the nested `+`/`*`
# backtracks exponentially when the closing quote is missing, so an unterminated
# string followed by a long line hangs the parser (found by mx's fuzzer). With
# one character per repetition every input position has a single way to match,
# and the regex accepts exactly the same strings in linear time.
_STRING_LITERAL = re.compile(r'"(?:[^"\\\n\v\f]|\\(?:["nt\\]|[0-9A-Fa-f]{2}))*"')


def apply_xdsl_fixes() -> None:
    """Patch the xDSL classes in this process (idempotent)."""
    MLIRLexer._unescaped_characters_regex = _STRING_LITERAL  # pyright: ignore[reportAttributeAccessIssue]

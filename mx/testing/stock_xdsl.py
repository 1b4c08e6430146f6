"""Reading mx's output as stock `xdsl-opt` reads it: xDSL's own `Parser` in a
context of the multiverse's dialects (mx's included, through its
`xdsl.universe` entry point), without mx's parser or its fixes of xDSL.

Everything mx prints must parse so (docs/tools.md); the fuzzer
(`mx.testing.fuzz`) and tests/dialects/test_stock_reparse.py check it."""

from functools import cache

from xdsl.context import Context
from xdsl.parser import Parser
from xdsl.universe import Universe
from xdsl.utils.exceptions import ParseError


@cache
def stock_context() -> Context:
    """The context `xdsl-opt` builds: every dialect of the multiverse."""
    ctx = Context()
    for name, factory in Universe.get_multiverse().all_dialects.items():
        ctx.register_dialect(name, factory)
    return ctx


def stock_parse_error(text: str) -> str | None:
    """Why stock xDSL cannot parse `text`, or None if it can. Input nested
    beyond Python's recursion limit for xDSL's recursive parser counts as
    parsed (xDSL's limit, not a fault of the text)."""
    try:
        Parser(stock_context(), text, "<output>").parse_module()
    except ParseError as err:
        return str(err)
    except RecursionError:
        return None
    return None

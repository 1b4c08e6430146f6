"""Hints ("did you mean: ...?") for misspelt names of ops, types and attributes.

A name is `dialect.rest`: the candidates are the names of its dialect, or,
if no dialect of that name is registered, of the registered dialects whose
names are close to it (`matrx.splat` → `matrix.splat`) or begin it
(`matrixsplat`). Only those dialects are loaded, so a hint costs little more
than the error it completes.
"""

import difflib
from typing import Literal

from xdsl.context import Context
from xdsl.ir import TypeAttribute

from mx.diagnostics import did_you_mean


def unregistered_name_hint(
    ctx: Context, name: str, kind: Literal["op", "type", "attribute"]
) -> str:
    """`; did you mean: ...?` for the unregistered `name`, or ''."""
    dialect = name.partition(".")[0]
    known = list(ctx.registered_dialect_names)
    dialects = (
        [dialect]
        if dialect in known
        else difflib.get_close_matches(dialect, known, n=3, cutoff=0.6)
        or [d for d in known if name.startswith(d)]  # the dot left out
    )
    names: list[str] = []
    for loaded in filter(None, map(ctx.get_optional_dialect, dialects)):
        if kind == "op":
            names += [op.name for op in loaded.operations]
        else:
            names += [
                attr.name
                for attr in loaded.attributes
                if issubclass(attr, TypeAttribute) == (kind == "type")
            ]
    # Names share their dialect's prefix: only a near miss is worth naming.
    return did_you_mean(name, names, cutoff=0.8)

"""A name one edit away from a registered op or type of mx's dialects (a
letter dropped, doubled or swapped, in the op's name or its dialect's) is
reported with that name among the suggestions."""

import random

import pytest

from mx.dialects.arbfp import Arbfp
from mx.dialects.matrix import Matrix
from mx.frontend import FrontendError, parse_and_verify

OPS = sorted(op.name for dialect in (Matrix, Arbfp) for op in dialect.operations)


def _misspellings(name: str, rnd: random.Random) -> list[str]:
    i = rnd.randrange(1, len(name) - 1)
    j = rnd.randrange(1, len(name) - 2)
    return [
        name[:i] + name[i + 1 :],  # dropped
        name[:i] + name[i] + name[i:],  # doubled
        name[:j] + name[j + 1] + name[j] + name[j + 2 :],  # swapped
    ]


def _error(text: str) -> str:
    with pytest.raises(FrontendError) as err:
        parse_and_verify(text)
    return str(err.value)


@pytest.mark.parametrize("name", OPS)
def test_misspelt_op_suggests_it(name: str) -> None:
    rnd = random.Random(name)
    for wrong in _misspellings(name, rnd):
        if wrong == name or wrong in OPS:
            continue
        message = _error(f'"{wrong}"() : () -> ()')
        assert f"Operation {wrong} is not registered; did you mean:" in message
        assert name in message.split("did you mean:")[1], message


@pytest.mark.parametrize("wrong", ["matrix.matirx", "matrixx.matrix", "matrx.matrix"])
def test_misspelt_type_suggests_it(wrong: str) -> None:
    message = _error(f"func.func @f(%a: !{wrong}<2x2xf32>) {{\n  func.return\n}}")
    assert f"<string>:1:18: error: '{wrong}' is not registered; did you mean:" in (
        message
    )
    assert "matrix.matrix" in message.split("did you mean:")[1]

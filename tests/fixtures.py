"""Types of the fixtures of tests/conftest.py, for the tests' annotations."""

from collections.abc import Callable

from mx.lowering.matrix_to_affine.permutes import Permutes

JitHost = Callable[[Permutes], None]
"""The `jit_host` fixture: lower as on a host with these permutes."""

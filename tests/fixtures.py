"""Types of the fixtures of tests/conftest.py, for the tests' annotations."""

from collections.abc import Callable

from mx.lowering.matrix_to_affine.target_cpu import TargetCpu

JitHost = Callable[[TargetCpu], None]
"""The `jit_host` fixture: lower as on a host with this CPU."""

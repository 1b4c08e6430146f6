"""Pipelines the tests compile with: mx-lower-to-llvm's steps with options
of `convert-matrix-to-affine`."""

from mx.passes.mx_lower_to_llvm import PIPELINE


def lowering_with(affine_options: str) -> str:
    """mx-lower-to-llvm's steps, `convert-matrix-to-affine{affine_options}`."""
    step = "convert-matrix-to-affine"
    return ",".join(f"{p}{{{affine_options}}}" if p == step else p for p in PIPELINE)


THREADED = lowering_with("parallel-min-work=1")
"""Every product on threads."""

"""Helpers of `convert-matrix-to-affine`: buffers, fusion plan, element emission."""

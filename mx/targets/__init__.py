"""Targets of `mx-opt -t`: translations of the `llvm` dialect out of MLIR."""

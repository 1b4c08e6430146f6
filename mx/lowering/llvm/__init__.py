"""Patterns of the `convert-to-llvm` pass, one module per source dialect."""

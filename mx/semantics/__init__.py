"""Numerical semantics of mx's ops in NumPy, shared by the interpreter and the folders."""

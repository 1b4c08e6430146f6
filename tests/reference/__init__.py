"""Exact references for mx's tests; they share no code with the implementation."""

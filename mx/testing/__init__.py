"""Robustness tooling: random program generators, differential testing, fuzzing."""

"""Canonicalization patterns and folders plugged into xDSL's `canonicalize`."""

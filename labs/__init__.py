"""LAB·0.1 and GATE 00: predict each op's latency, measure it with JAX, score, record.

This package's ``__init__`` imports nothing; jax and numpy are imported only inside the modules that
time things, and only when a function that needs them runs. Every prediction goes through
``generator.model.costs`` and ``generator.model.roofline``.

Details: docs/internals-labs.md.
"""

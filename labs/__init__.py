"""LAB·0.1 and GATE 00: predict each op's latency, measure it with JAX, score, record.

Import cost: this package's ``__init__`` imports nothing. jax and numpy are
imported only inside the modules that time things (``labs.measure.ops`` builders,
``labs.measure.timing``, ``labs.measure.profile``, ``labs.measure.calibrate``, ``labs.measure.device``,
``labs.runner``) and only when a function that needs them runs, so
``labs.records.folder``, ``labs.gate.verdict`` and ``labs.report`` work without jax.

Every prediction goes through ``generator.model.costs`` and ``generator.model.roofline``;
nothing in this package restates an op's FLOP or byte formula.
"""

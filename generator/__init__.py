"""Rudrite Kernels generator: the roofline model and the problem generator.

Pure Python: importing this package never imports jax or numpy. Its parts, data flowing one way
(``model <- problems <- export``, ``model <- explain``):
- ``model``: the chip catalogue (``chips.yaml``), op costs, rooflines, links, collectives, the
  transformer step and the memory hierarchy;
- ``problems``: drill specs, families of skills, seeded fair draws, answers, classic mistakes;
- ``explain``: the reasons a measured time misses its prediction, and the judge of a derivation;
- ``export``: Anki, CSV and JSON;
- ``io``: the file policy, YAML, the start-up cache and other plumbing;
- ``errors``: ``DrillError``, the one error a user's input raises.
"""

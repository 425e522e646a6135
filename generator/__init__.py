"""Rudrite Kernels generator: the roofline model and the problem generator.

Pure Python: importing this package never imports jax or numpy. Its parts are ``model``,
``problems``, ``explain``, ``export``, ``io`` and ``errors``, data flowing one way.
Details: docs/internals.md.
"""

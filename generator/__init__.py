"""Rudrite Kernels generator: the roofline model and the problem generator.

Pure Python: importing this package never imports jax or numpy.

Public objects:
- ``catalogue.load()`` / ``catalogue.get(name)``: the chip catalogue (``chips.yaml``).
- ``costs``: FLOPs and bytes of each op (one function per op).
- ``roofline.estimate(chip, cost)``: T_math, T_comms, floor, verdict.
- ``generate``: skills, draws and problem sets over the families ``families`` finds.
"""

__all__ = ["catalogue", "costs", "roofline", "units"]

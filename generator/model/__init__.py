"""The model: chips and their figures, op costs, rooflines, links and collectives, a transformer step,
a memory hierarchy. Pure Python; it imports nothing of the project but ``generator.errors`` and
``generator.io``, and reads only its own YAML (``chips.yaml``, ``models.yaml``)."""

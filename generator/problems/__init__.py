"""The problem generator: drill specs, families of skills, seeded fair draws, answers and the classic
mistakes, all computed by ``generator.model``."""

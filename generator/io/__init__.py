"""Plumbing: the file policy (``safeio``), YAML parsing, the start-up cache, terminal-safe text, lock
owners and the project's links."""

"""Safe YAML reading, shared by the catalogue and the drill specs.

Data only: the safe loader builds plain dicts, lists and scalars and never
constructs Python objects, so a YAML file can not run code.
"""

from __future__ import annotations

from typing import IO, Any

import yaml

_SafeLoader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


def safe_load(stream: str | IO[str]) -> Any:
    """Parse one YAML document with the (C, when available) safe loader."""
    loader = _SafeLoader(stream)
    try:
        return loader.get_single_data()
    finally:
        loader.dispose()

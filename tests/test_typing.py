"""The type checker's settings (``[tool.mypy]``, run by ``.ci/run``): strict on ``generator/``, with the
modules not yet strict named explicitly, and every ``# type: ignore`` in a strict module saying why."""

from __future__ import annotations

import re
import sys
from pathlib import Path

from tests.conftest import REPO

if sys.version_info >= (3, 11):
    import tomllib
else:  # Python 3.10: mypy (a test dependency) brings tomli there
    import tomli as tomllib

IGNORE = re.compile(r"#\s*type:\s*ignore(?P<codes>\[[a-z, -]+\])?(?P<rest>.*)$")


def mypy_settings() -> dict:
    return tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["mypy"]


def generator_modules() -> dict[str, Path]:
    out = {}
    for path in sorted((REPO / "generator").rglob("*.py")):
        parts = list(path.relative_to(REPO).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        out[".".join(parts)] = path
    return out


def relaxed(module: str, patterns: list[str]) -> bool:
    return any(module == p or (p.endswith(".*") and (module + ".").startswith(p[:-1])) for p in patterns)


def test_generator_is_checked_strictly():
    settings = mypy_settings()
    assert settings["strict"] is True and settings["files"] == ["generator"]


def test_the_not_yet_strict_lists_name_real_modules():
    modules = generator_modules()
    for override in mypy_settings()["overrides"]:
        if override["module"] == ["genanki"]:
            continue
        for pattern in override["module"]:
            assert pattern.startswith("generator.")
            assert any(relaxed(m, [pattern]) for m in modules), f"no module matches {pattern}"


def test_every_type_ignore_in_a_strict_module_names_its_code_and_says_why():
    patterns = [p for o in mypy_settings()["overrides"] if o.get("ignore_errors") or o.get("disallow_untyped_defs")
                is False for p in o["module"]]  # the not-yet-strict lists
    strict = {m: path for m, path in generator_modules().items() if not relaxed(m, patterns)}
    assert "generator.units" in strict and "generator.safeio" in strict
    bare = []
    for module, path in strict.items():
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            found = IGNORE.search(line)
            if found and not (found["codes"] and re.match(r"\s+#\s*\S", found["rest"])):
                bare.append(f"{path.relative_to(REPO)}:{number}: {line.strip()}")
    assert bare == [], "a `# type: ignore[code]` is followed by `  # why`"


def test_the_ignore_pattern_tells_a_reason_from_none():
    with_reason = IGNORE.search("x = f()  # type: ignore[arg-type]  # f is untyped upstream")
    assert with_reason["codes"] and re.match(r"\s+#\s*\S", with_reason["rest"])
    for bare in ("x = f()  # type: ignore", "x = f()  # type: ignore[arg-type]"):
        found = IGNORE.search(bare)
        assert not (found["codes"] and re.match(r"\s+#\s*\S", found["rest"]))

"""The type checker's settings (``[tool.mypy]``, run by ``.ci/run``): strict on ``generator/`` with no module
exempt (a module let off strict's rules must be named in ``NOT_YET_STRICT`` below, which only shrinks), and every
``# type: ignore`` in any Python file of the repository naming its error code and saying why."""

from __future__ import annotations

import io
import os
import re
import sys
import tokenize
from pathlib import Path

from tests.conftest import REPO

if sys.version_info >= (3, 11):
    import tomllib
else:  # Python 3.10: the test extra installs tomli there
    import tomli as tomllib

IGNORE = re.compile(r"#\s*type:\s*ignore(?P<codes>\[[a-z, -]+\])?(?P<rest>.*)$")
# Modules a [[tool.mypy.overrides]] block may still let off strict's rules. Empty: every generator module is
# strict. Take a name off when its module passes; never add one (a new module is written strict).
NOT_YET_STRICT: frozenset[str] = frozenset()
# The one override that is not a relaxation of our code: a third-party package without type hints.
UNTYPED_THIRD_PARTY = {"module": ["genanki"], "ignore_missing_imports": True}
# Not the project's sources: virtual environments, caches, build output.
SKIPPED_DIRS = {"__pycache__", "build", "dist", "site-out", "node_modules"}


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


def python_files(root: Path = REPO) -> list[Path]:
    """Every ``.py`` file of the repository: generator, drills, labs, tests, bench, docs ..., not venvs or caches
    (those folders are not entered at all: a ``.venv`` holds tens of thousands of files)."""
    found = []
    for folder, dirs, files in os.walk(root):
        dirs[:] = [d for d in dirs if not (d.startswith(".") or d in SKIPPED_DIRS or d.endswith(".egg-info"))]
        found += [Path(folder, name) for name in files if name.endswith(".py")]
    return sorted(found)


def bare_ignores(path: Path, root: Path = REPO) -> list[str]:
    """``file:line: comment`` for each ``# type: ignore`` comment (not a string that mentions one) that lacks
    an error code or a ``  # why`` after it."""
    out = []
    source = path.read_text(encoding="utf-8")
    for token in tokenize.generate_tokens(io.StringIO(source).readline):
        if token.type != tokenize.COMMENT:
            continue
        found = IGNORE.search(token.string)
        if found and not (found["codes"] and re.match(r"\s+#\s*\S", found["rest"])):
            out.append(f"{path.relative_to(root)}:{token.start[0]}: {token.string}")
    return out


def relaxed(module: str, patterns: list[str]) -> bool:
    return any(module == p or (p.endswith(".*") and (module + ".").startswith(p[:-1])) for p in patterns)


def test_generator_is_checked_strictly():
    settings = mypy_settings()
    assert settings["strict"] is True and settings["files"] == ["generator"]
    assert settings["python_version"] == "3.10"  # the floor pyproject's requires-python names


def test_no_module_is_exempt_beyond_the_not_yet_strict_list():
    """Every override but the untyped third-party one relaxes only modules still in ``NOT_YET_STRICT``, and
    none silences type errors (``ignore_errors``) at all."""
    for override in mypy_settings().get("overrides", []):
        assert "ignore_errors" not in override, f"{override['module']}: type errors must fail, not be ignored"
        if override == UNTYPED_THIRD_PARTY:
            continue
        assert set(override["module"]) <= NOT_YET_STRICT, (
            f"{sorted(set(override['module']) - NOT_YET_STRICT)} let off strict mode: annotate them instead")


def test_the_not_yet_strict_list_names_real_modules():
    modules = generator_modules()
    assert "generator.answers" in modules and "generator.families.base" in modules
    for pattern in NOT_YET_STRICT:
        assert pattern.startswith("generator.")
        assert any(relaxed(m, [pattern]) for m in modules), f"no module matches {pattern}"


def test_every_python_file_is_walked():
    files = {p.relative_to(REPO).as_posix() for p in python_files()}
    for wanted in ("generator/answers.py", "drills/quiz.py", "labs/__init__.py", "tests/test_hostile.py",
                   "tests/test_typing.py"):
        assert wanted in files
    assert not any(f.startswith(".") or "/." in f for f in files)  # no virtual environment's site-packages
    assert any(f.startswith("bench/") for f in files)


def test_every_type_ignore_in_the_repository_names_its_code_and_says_why():
    bare = [line for path in python_files() for line in bare_ignores(path)]
    assert bare == [], "a `# type: ignore[code]` is followed by `  # why`:\n" + "\n".join(bare)


def test_the_ignore_pattern_tells_a_reason_from_none(tmp_path):
    with_reason = IGNORE.search("x = f()  # type: ignore[arg-type]  # f is untyped upstream")
    assert with_reason["codes"] and re.match(r"\s+#\s*\S", with_reason["rest"])
    for bare in ("x = f()  # type: ignore", "x = f()  # type: ignore[arg-type]"):
        found = IGNORE.search(bare)
        assert not (found["codes"] and re.match(r"\s+#\s*\S", found["rest"]))
    # read as comments: a string that only mentions an ignore is not one
    sample = tmp_path / "sample.py"
    sample.write_text('s = "# type: ignore"\nx = f()  # type: ignore[arg-type]\ny = g()  # type: ignore[misc]  # why\n',
                      encoding="utf-8")
    assert [line.split(":")[1] for line in bare_ignores(sample, tmp_path)] == ["2"]

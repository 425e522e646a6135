"""The type checker's settings (``[tool.mypy]``, run by the fast set here): strict on ``generator/``, ``drills/`` and
``labs/``, with the modules not yet strict in one ``ignore_errors`` override that names exactly ``NOT_YET_STRICT``
below (a list that only shrinks), and every ``# type: ignore`` in any Python file of the repository naming its
error code and saying why."""

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
PACKAGES = ("generator", "drills", "labs")
# The modules an ``ignore_errors`` override would let off: none. Never add one (a new module is written strict).
# Every module passes ``mypy`` with pyproject's settings (strict), as ``test_the_type_checker_passes`` checks in
# the fast set.
NOT_YET_STRICT: frozenset[str] = frozenset()
# The one override that is not a relaxation of our code: a third-party package without type hints.
UNTYPED_THIRD_PARTY = {"module": ["genanki"], "ignore_missing_imports": True}
# Not the project's sources: virtual environments, caches, build output.
SKIPPED_DIRS = {"__pycache__", "build", "dist", "site-out", "node_modules"}


def mypy_settings() -> dict:
    return tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["mypy"]


def project_modules() -> dict[str, Path]:
    out = {}
    for package in PACKAGES:
        for path in sorted((REPO / package).rglob("*.py")):
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


def test_the_whole_package_is_checked_strictly():
    settings = mypy_settings()
    assert settings["strict"] is True and settings["files"] == list(PACKAGES)
    assert settings["python_version"] == "3.10"  # the floor pyproject's requires-python names


def test_the_only_exemption_is_the_not_yet_strict_list():
    """Two overrides at most: the untyped third-party one, and one ``ignore_errors`` block that names exactly
    ``NOT_YET_STRICT`` (so the list in this file and the type checker's agree, and no other module, nor any
    other relaxation of strict's rules, slips in)."""
    overrides = mypy_settings().get("overrides", [])
    ours = [o for o in overrides if o != UNTYPED_THIRD_PARTY]
    if not NOT_YET_STRICT:
        assert ours == []
        return
    assert len(ours) == 1, f"one override lets modules off, not {len(ours)}: {ours}"
    assert ours[0] == {"module": sorted(NOT_YET_STRICT), "ignore_errors": True}, (
        "pyproject's not-yet-strict override must be exactly NOT_YET_STRICT, sorted, with ignore_errors only")


def test_the_not_yet_strict_list_names_real_modules_and_no_generator_one():
    modules = project_modules()
    assert "generator.model.answers" in modules and "generator.problems.families.base" in modules and "drills.site.data" in modules
    for name in NOT_YET_STRICT:
        assert name in modules, f"{name} is not a module: take it off NOT_YET_STRICT"
        assert not name.startswith("generator."), f"{name}: generator/ is strict throughout"


def test_the_type_checker_passes():
    """``mypy`` with pyproject's settings, in the fast set (so in CI's README command): every module not in
    NOT_YET_STRICT is strict."""
    # mypy and the stubs strict needs (types-PyYAML, types-Pygments) are in the test extra. A child process in
    # the repository root: pyproject's ``files`` are relative to it, and the cache stays out of the way.
    import subprocess

    from tests.conftest import bound

    proc = subprocess.run([sys.executable, "-m", "mypy", "--cache-dir", os.devnull], cwd=REPO, text=True,
                          capture_output=True, timeout=bound(600))
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_every_python_file_is_walked():
    files = {p.relative_to(REPO).as_posix() for p in python_files()}
    for wanted in ("generator/model/answers.py", "drills/quiz/session.py", "labs/__init__.py", "tests/test_hostile.py",
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

"""The test extras: ``[test]`` holds what the fast set imports, ``[slow]`` the slow set's own tools, and a test
that imports one of those tools is marked slow (or its whole module is), so ``pip install -e '.[test]'`` is
enough for ``pytest``. (Fixtures and helpers are not checked here; the fast set run in a venv with ``[test]``
alone is what proves them.)"""

from __future__ import annotations

import ast
import re
from pathlib import Path

from tests.conftest import REPO, SLOW_MODULE

# The slow extra's packages (distribution name) and the module a test imports for each (None: nothing to import).
SLOW_TOOLS = {"anki": "anki", "pexpect": "pexpect", "nbclient": "nbclient", "nbformat": "nbformat",
              "ipykernel": "ipykernel", "playwright": "playwright", "xprof": "xprof"}
SLOW_MODULES = {m for m in SLOW_TOOLS.values() if m}


def extra(name: str) -> list[str]:
    """The requirement strings of ``[project.optional-dependencies]`` ``name`` (tomllib needs Python 3.11)."""
    text = (REPO / "pyproject.toml").read_text(encoding="utf-8")
    block = text.split(f"\n{name} = [\n", 1)[1].split("\n]", 1)[0]
    return re.findall(r'^\s*"([^"]+)"', block, flags=re.M)


def names(requirements: list[str]) -> set[str]:
    return {re.split(r"[<>=!~;\[ ]", r, maxsplit=1)[0] for r in requirements}


def test_the_slow_tools_are_in_the_slow_extra_only():
    test, slow = extra("test"), extra("slow")
    assert names(slow) - {"rudrite-kernels"} == set(SLOW_TOOLS)
    assert "rudrite-kernels[test]" in slow  # the slow set runs the fast set's tools too
    assert not names(test) & set(SLOW_TOOLS), names(test) & set(SLOW_TOOLS)
    assert {"pytest", "hypothesis", "pytest-xdist"} <= names(test)
    # the fast set runs mypy strict (tests/test_typing.py), which needs these stubs
    assert {"mypy", "types-PyYAML", "types-Pygments"} <= names(test)


def _imported(node: ast.AST) -> set[str]:
    """Top-level module names imported anywhere under ``node``."""
    found = set()
    for n in ast.walk(node):
        if isinstance(n, ast.Import):
            found |= {a.name.split(".")[0] for a in n.names}
        elif isinstance(n, ast.ImportFrom) and n.module and not n.level:
            found.add(n.module.split(".")[0])
    return found


def _marked_slow(fn: ast.FunctionDef) -> bool:
    return any("mark.slow" in ast.unparse(d) for d in fn.decorator_list)


def slow_imports_outside_the_slow_set(root: Path) -> list[str]:
    """``path: what`` for each test module that imports a slow tool at its top level without being marked slow
    as a whole, and each test function outside such a module that imports one without ``@pytest.mark.slow``."""
    problems = []
    for path in sorted(root.rglob("test_*.py")):
        source = path.read_text(encoding="utf-8")
        if SLOW_MODULE.search(source):
            continue
        tree = ast.parse(source)
        helpers = {n.module for n in tree.body if isinstance(n, ast.ImportFrom) and n.module
                   and n.module.startswith("tests.")}
        top = set()
        for stmt in tree.body:
            if not isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                top |= _imported(stmt)
        for helper in helpers:  # a helper module imported at the top level counts as the module's own import
            helper_path = REPO.joinpath(*helper.split(".")).with_suffix(".py")
            if helper_path.is_file():
                top |= {m for m in _imported(ast.parse(helper_path.read_text(encoding="utf-8")))
                        if m in SLOW_MODULES}
        rel = path.relative_to(root)
        problems += [f"{rel}: imports {m} at the top level" for m in sorted(top & SLOW_MODULES)]
        for fn in ast.walk(tree):
            if isinstance(fn, ast.FunctionDef) and fn.name.startswith("test_") and not _marked_slow(fn):
                problems += [f"{rel}::{fn.name}: imports {m}" for m in sorted(_imported(fn) & SLOW_MODULES)]
    return problems


def test_a_test_that_imports_a_slow_tool_is_in_the_slow_set():
    assert slow_imports_outside_the_slow_set(REPO / "tests") == []


def test_the_check_finds_an_unmarked_import(tmp_path):
    (tmp_path / "test_top.py").write_text("import pexpect\n\ndef test_a():\n    pass\n")
    (tmp_path / "test_inner.py").write_text("import pytest\n\n@pytest.mark.slow\ndef test_ok():\n    import anki\n\n"
                                            "def test_bad():\n    from playwright.sync_api import sync_playwright\n")
    (tmp_path / "test_whole.py").write_text("import pytest\nimport anki\n\npytestmark = pytest.mark.slow\n")
    assert slow_imports_outside_the_slow_set(tmp_path) == ["test_inner.py::test_bad: imports playwright",
                                                           "test_top.py: imports pexpect at the top level"]

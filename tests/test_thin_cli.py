"""A thin CLI, read from the source: each function in ``drills/cmd_*.py`` and ``drills/cli.py`` is at most
``MAX_LINES`` lines, its docstring (the command's --help text) not counted, so a command parses its options
and hands the work to ``generator/`` or ``labs/``.

``NOT_YET_THIN`` names the functions still over the limit, with their length today; it only shrinks: a
function on it may not grow, and one that fits comes off it.
"""

from __future__ import annotations

import ast
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
MAX_LINES = 40
NOT_YET_THIN: dict[str, int] = {}  # "module:function" -> its length today (docstring not counted)


def body_lines(fn: ast.FunctionDef) -> int:
    """The function's lines from its ``def`` to its end, less its docstring's."""
    total = fn.end_lineno - fn.lineno + 1
    first = fn.body[0]
    if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant) and isinstance(first.value.value, str):
        total -= first.end_lineno - first.lineno + 1
    return total


def command_functions(root: Path = REPO) -> dict[str, int]:
    out = {}
    for path in sorted([*(root / "drills").glob("cmd_*.py"), root / "drills" / "cli.py"]):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                out[f"{path.relative_to(root).as_posix()}:{node.name}"] = body_lines(node)
    return out


def test_no_command_function_is_over_the_limit():
    long = {name: n for name, n in command_functions().items() if n > MAX_LINES}
    grown = {name: n for name, n in long.items() if n > NOT_YET_THIN.get(name, MAX_LINES)}
    assert not grown, f"over {MAX_LINES} lines (docstring not counted), or longer than listed: {grown}"


def test_the_not_yet_thin_list_only_names_functions_still_over_the_limit():
    found = command_functions()
    fits = {name for name in NOT_YET_THIN if found.get(name, 0) <= MAX_LINES}
    assert not fits, f"these fit now (or are gone): take them off NOT_YET_THIN: {sorted(fits)}"


def test_the_count_leaves_out_the_docstring_only():
    tree = ast.parse('def f():\n    """one\n    two"""\n    return 1\n')
    assert body_lines(tree.body[0]) == 2

"""The layout's promise, read from the source: no import cycle, data flows ``drills -> labs -> generator``,
and a module over 400 lines says why it is one job.

Every ``import`` in a module counts, function-level and ``TYPE_CHECKING`` ones included: a
function-level import that closes a circle is still a circle (it only moves the failure to run time).
"""

from __future__ import annotations

import ast
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
PACKAGES = ("generator", "drills", "labs")
LAYER = {"generator": 0, "labs": 1, "drills": 2}  # a module may import its own layer or a lower one


def modules(root: Path = REPO) -> dict[str, Path]:
    out = {}
    for package in PACKAGES:
        for path in sorted((root / package).rglob("*.py")):
            name = ".".join(path.relative_to(root).with_suffix("").parts)
            out[name.removesuffix(".__init__")] = path
    return out


def imports(path: Path, known: set[str]) -> set[str]:
    """The project modules ``path`` imports anywhere in its body (``from a.b import c`` counts as
    ``a.b``, and as ``a.b.c`` when that is a module)."""
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
        if isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names = [node.module, *(f"{node.module}.{a.name}" for a in node.names)]
        else:
            continue
        found |= {n for n in names if n in known}
    return found


def graph(root: Path = REPO) -> dict[str, set[str]]:
    mods = modules(root)
    return {m: imports(p, set(mods)) - {m} for m, p in mods.items()}


def cycles(g: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components with more than one module (Tarjan, iterative), each sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    out = []
    for start in sorted(g):
        if start in index:
            continue
        work = [(start, iter(sorted(g[start])))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on_stack.add(start)
        while work:
            v, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(g[child]))))
                elif child in on_stack:
                    low[v] = min(low[v], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[v])
            if low[v] == index[v]:
                component = []
                while True:
                    w = stack.pop()
                    on_stack.discard(w)
                    component.append(w)
                    if w == v:
                        break
                if len(component) > 1:
                    out.append(sorted(component))
    return out


def test_the_finder_sees_a_function_level_cycle(tmp_path):
    """The check itself can fail: a circle closed inside a function is found."""
    pkg = tmp_path / "generator"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "a.py").write_text("from generator import b\n")
    (pkg / "b.py").write_text("def f():\n    from generator.a import x\n")
    (pkg / "c.py").write_text("import generator.b\n")
    for other in ("drills", "labs"):
        (tmp_path / other).mkdir()
    assert cycles(graph(tmp_path)) == [["generator.a", "generator.b"]]


def test_no_import_cycle_in_generator_drills_labs():
    found = cycles(graph())
    assert not found, "import cycles (function-level imports count): " + "; ".join(" <-> ".join(c) for c in found)


def test_data_flows_one_way():
    """generator imports neither labs nor drills; labs does not import drills."""
    upward = sorted(f"{m} -> {t}" for m, targets in graph().items() for t in targets
                    if LAYER[t.split(".")[0]] > LAYER[m.split(".")[0]])
    assert not upward, "imports against the layout's direction: " + ", ".join(upward)


MAX_LINES = 400


def test_a_module_over_400_lines_says_why_it_is_one_job():
    unexplained = []
    for path in sorted(p for package in PACKAGES for p in (REPO / package).rglob("*.py")):
        name = path.relative_to(REPO).as_posix()
        text = path.read_text(encoding="utf-8")
        if text.count("\n") <= MAX_LINES:
            continue
        doc = ast.get_docstring(ast.parse(text)) or ""
        if "over 400 lines" not in doc.lower():
            unexplained.append(f"{name} ({text.count(chr(10))} lines)")
    assert not unexplained, "say in the docstring why it is one job ('over 400 lines: ...'): " + ", ".join(unexplained)


def test_no_module_outside_tests_imports_from_tests():
    """Shared helpers that a benchmark or the package needs live outside tests/ (tests may import them)."""
    import ast

    root = Path(__file__).resolve().parents[1]
    offenders = []
    for path in [*root.glob("bench/*.py"), *root.glob("generator/**/*.py"), *root.glob("drills/**/*.py"),
                 *root.glob("labs/**/*.py")]:
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            names = [a.name for a in node.names] if isinstance(node, ast.Import) else \
                [node.module or ""] if isinstance(node, ast.ImportFrom) else []
            offenders += [f"{path.relative_to(root)}: {n}" for n in names if n == "tests" or n.startswith("tests.")]
    assert offenders == []

"""The layout's promise, read from the source: no import cycle, data flows ``drills -> labs -> generator``,
and the parts of each package import in one direction (model and io below problems, explain and export).

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


# Each part of a package and the parts it may import (besides itself): data flows one way,
# model <- problems <- export, model <- explain, and in labs records <- measure <- gate <- the pipeline.
GENERATOR_BASE = ("generator", "generator.errors", "generator.io")
PART_IMPORTS: dict[str, tuple[str, ...]] = {
    "generator.io": ("generator", "generator.errors"),
    "generator.model": GENERATOR_BASE,
    "generator.explain": (*GENERATOR_BASE, "generator.model"),
    "generator.problems": (*GENERATOR_BASE, "generator.model", "generator.explain"),
    "generator.export": (*GENERATOR_BASE, "generator.model", "generator.problems"),
    "labs.records": ("generator", "labs"),
    "labs.measure": ("generator", "labs", "labs.records"),
    "labs.gate": ("generator", "labs", "labs.records", "labs.measure"),
}


def part_of(module: str) -> str:
    """The part a module belongs to: ``generator.model``, ``labs.records``, ... ; a module at the top of
    labs/ is the lab's pipeline (``labs.pipeline``); a package's own ``__init__`` is the package."""
    for part in sorted(PART_IMPORTS, key=len, reverse=True):
        if module == part or module.startswith(part + "."):
            return part
    top = module.split(".")[0]
    return "labs.pipeline" if top == "labs" and module != "labs" else (module if module == top else top)


def part_violations(g: dict[str, set[str]]) -> list[str]:
    out = []
    for module, targets in sorted(g.items()):
        mine = part_of(module)
        if mine not in PART_IMPORTS:
            continue
        allowed = {mine, *PART_IMPORTS[mine]}
        for target in sorted(targets):
            theirs = part_of(target)
            if theirs in allowed or (mine.startswith("labs.") and target.split(".")[0] == "generator"):
                continue
            out.append(f"{module} -> {target}")
    return out


def test_each_part_imports_only_the_parts_below_it():
    assert not part_violations(graph()), part_violations(graph())


def test_the_part_rule_can_fail():
    assert part_violations({"generator.explain.judge": {"generator.problems.answers"},
                            "labs.records.folder": {"labs.measure.ops", "labs.session", "labs"},
                            "generator.model.costs": {"generator.errors"}}) == [
        "generator.explain.judge -> generator.problems.answers", "labs.records.folder -> labs.measure.ops",
        "labs.records.folder -> labs.session"]


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


def function_level_imports(root: Path = REPO) -> list[tuple[str, str, bool]]:
    """(module, what it imports, whether the line or the one above carries a comment) for each import
    inside a function of generator/, drills/, labs/ and bench/. ``from a import b, c`` is ``a:b,c``."""
    out = []
    for package in (*PACKAGES, "bench"):
        for path in sorted((root / package).rglob("*.py")):
            text = path.read_text(encoding="utf-8")
            lines = text.split("\n")
            module = ".".join(path.relative_to(root).with_suffix("").parts).removesuffix(".__init__")
            stack = [(ast.parse(text, str(path)), False)]
            while stack:
                node, inside = stack.pop()
                for child in ast.iter_child_nodes(node):
                    if inside and isinstance(child, ast.Import | ast.ImportFrom):
                        names = ",".join(a.name for a in child.names)
                        what = f"{child.module}:{names}" if isinstance(child, ast.ImportFrom) else names
                        above = lines[child.lineno - 2].strip() if child.lineno > 1 else ""
                        out.append((module, what, "#" in lines[child.lineno - 1] or above.startswith("#")))
                    stack.append((child, inside or isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef
                                                                      | ast.Lambda)))
    return sorted(out)


def test_the_function_level_import_finder_sees_one(tmp_path):
    """The check itself can fail: an import inside a function is found, with or without its reason."""
    for package in (*PACKAGES, "bench"):
        (tmp_path / package).mkdir()
    (tmp_path / "generator" / "a.py").write_text("import os\n\ndef f():\n    import json  # start-up\n"
                                                 "    from generator import b\n")
    assert function_level_imports(tmp_path) == [("generator.a", "generator:b", False), ("generator.a", "json", True)]


def test_each_function_level_import_says_why_and_the_list_only_shrinks():
    """A function-level import defers a cost (start-up time, an optional dependency such as jax): each
    carries a one-line comment saying which, and each is listed in ``FUNCTION_LEVEL_IMPORTS``. A new
    one must justify itself by joining the list; one moved to module level leaves it."""
    found = function_level_imports()
    silent = [f"{m}: {w}" for m, w, reason in found if not reason]
    assert not silent, "function-level imports without a reason comment: " + ", ".join(silent)
    listed = sorted(FUNCTION_LEVEL_IMPORTS)
    have = sorted((m, w) for m, w, _ in found)
    new = [f"{m}: {w}" for m, w in have if have.count((m, w)) > listed.count((m, w))]
    gone = [f"{m}: {w}" for m, w in listed if listed.count((m, w)) > have.count((m, w))]
    assert not new, "new function-level imports (import at module level, or list one with its reason): " + ", ".join(
        sorted(set(new)))
    assert not gone, "listed function-level imports that are gone (take them off the list): " + ", ".join(
        sorted(set(gone)))


def test_the_misconception_catalogue_imports_no_family():
    """The families price their own wrong answers and import the catalogue; never the other way round."""
    g = graph()
    assert not {t for t in g["generator.problems.misconceptions"] if t.startswith("generator.problems.families")}


# Every import inside a function, by module and what it imports (``function_level_imports``): a list
# that only shrinks. Each carries its reason on its line or the line above.
FUNCTION_LEVEL_IMPORTS: tuple[tuple[str, str], ...] = (
    ('bench.bench_hierarchy', 'generator.model:hierarchy'),
    ('bench.bench_hierarchy_predictions', 'make_cpu_records:make_record'),
    ('bench.bench_lab_cpu', 'click.testing:CliRunner'),
    ('bench.bench_lab_cpu', 'drills.cli:cli'),
    ('bench.bench_lab_cpu', 'jax'),
    ('bench.bench_lab_cpu', 'labs.records:evidence'),
    ('bench.bench_lab_cpu', 'labs:runner'),
    ('bench.bench_store', 'drills.store.repository:SCHEMA_VERSION'),
    ('bench.bench_store', 'drills.store.repository:Store,iso'),
    ('bench.bench_store', 'drills.store:schema'),
    ('bench.bench_store', 'fsrs:Card,Rating,Scheduler'),
    ('bench.bench_store', 'generator.problems:generate'),
    ('bench.probe_elementwise', 'generator.model:costs'),
    ('bench.probe_elementwise', 'jax'),
    ('bench.probe_elementwise', 'jax.numpy'),
    ('bench.probe_elementwise', 'labs.measure:timing'),
    ('drills.cli', 'generator.io.safeio:SafeIOError'),
    ('drills.cli', 'generator.io.safeio:SafeIOError,display_path'),
    ('drills.cli', 'importlib.util'),
    ('drills.cmd_lab', 'drills.store.repository:Store'),
    ('drills.cmd_lab', 'drills:progress'),
    ('drills.cmd_lab', 'jax'),
    ('drills.quiz.terminal', 'readline'),
    ('drills.store.files', 'platformdirs'),
    ('generator.io.project_urls', 'importlib:metadata'),
    ('generator.io.startcache', 'platformdirs'),
    ('generator.model.catalogue', 'difflib'),
    ('generator.model.catalogue', 'generator.io.yamlio:safe_load'),
    ('generator.model.transformer', 'generator.io.yamlio:safe_load'),
    ('generator.problems.specs', 'yaml'),
    ('generator.problems.specs', 'yaml'),
    ('labs.collectives.run', 'jax'),
    ('labs.collectives.run', 'jax'),
    ('labs.collectives.run', 'jax'),
    ('labs.collectives.run', 'jax'),
    ('labs.collectives.run', 'jax'),
    ('labs.collectives.run', 'jax'),
    ('labs.collectives.run', 'jax'),
    ('labs.collectives.run', 'jax.experimental.shard_map:shard_map'),
    ('labs.collectives.run', 'jax.numpy'),
    ('labs.collectives.run', 'jax.numpy'),
    ('labs.collectives.run', 'jax.sharding:Mesh,NamedSharding,PartitionSpec'),
    ('labs.collectives.run', 'labs.measure.device:detect'),
    ('labs.collectives.run', 'numpy'),
    ('labs.inputs', 'yaml'),
    ('labs.measure.calibrate', 'jax'),
    ('labs.measure.calibrate', 'jax.numpy'),
    ('labs.measure.calls', 'jax'),
    ('labs.measure.calls', 'jax'),
    ('labs.measure.device', 'jax'),
    ('labs.measure.device', 'jaxlib'),
    ('labs.measure.hierarchy', 'jax'),
    ('labs.measure.hierarchy', 'jax.numpy'),
    ('labs.measure.hierarchy', 'jax:lax'),
    ('labs.measure.ops', 'jax'),
    ('labs.measure.ops', 'jax'),
    ('labs.measure.ops', 'jax.numpy'),
    ('labs.measure.ops', 'jax.numpy'),
    ('labs.measure.ops', 'jax.numpy'),
    ('labs.measure.profile', 'jax'),
    ('labs.measure.profile', 'jax'),
    ('labs.measure.profile', 'jax'),
    ('labs.measure.profile', 'jax'),
    ('labs.measure.profile', 'jax'),
    ('labs.measure.timing', 'jax'),
    ('labs.measure.timing', 'jax.numpy'),
    ('labs.plot', 'matplotlib'),
    ('labs.plot', 'matplotlib.pyplot'),
    ('labs.records.folder', 'platformdirs'),
    ('labs.session', 'labs.measure.device:detect'),
    ('labs.session', 'labs.measure:profile'),
    ('labs.session', 'labs:plot'),
    ('labs.session', 'labs:plot'),
    ('labs.session', 'matplotlib'),
)

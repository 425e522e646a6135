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
    assert not {t for t in g["generator.misconceptions"] if t.startswith("generator.families")}


# Every import inside a function, by module and what it imports (``function_level_imports``): a list
# that only shrinks. Each carries its reason on its line or the line above.
FUNCTION_LEVEL_IMPORTS: tuple[tuple[str, str], ...] = (
    ('bench.bench_hierarchy', 'generator:hierarchy'),
    ('bench.bench_hierarchy_predictions', 'make_cpu_records:make_record'),
    ('bench.bench_lab_cpu', 'click.testing:CliRunner'),
    ('bench.bench_lab_cpu', 'drills.cli:cli'),
    ('bench.bench_lab_cpu', 'jax'),
    ('bench.bench_lab_cpu', 'labs:evidence,runner'),
    ('bench.bench_store', 'drills.store:SCHEMA_VERSION'),
    ('bench.bench_store', 'drills.store:Store,iso'),
    ('bench.bench_store', 'drills:store_schema'),
    ('bench.bench_store', 'fsrs:Card,Rating,Scheduler'),
    ('bench.bench_store', 'generator:generate'),
    ('bench.probe_elementwise', 'generator:costs'),
    ('bench.probe_elementwise', 'jax'),
    ('bench.probe_elementwise', 'jax.numpy'),
    ('bench.probe_elementwise', 'labs:timing'),
    ('drills.can_you_needs', 'generator.families.ops:with_article'),
    ('drills.cli', 'generator.safeio:SafeIOError'),
    ('drills.cli', 'generator.safeio:SafeIOError,display_path'),
    ('drills.cli', 'importlib.util'),
    ('drills.cmd_check', 'drills:assess'),
    ('drills.cmd_check', 'generator.export.variants:card_unit'),
    ('drills.cmd_check', 'generator.misconceptions:CATALOGUE'),
    ('drills.cmd_check', 'generator:generate'),
    ('drills.cmd_core', 'generator:collectives'),
    ('drills.cmd_generate', 'click.core:ParameterSource'),
    ('drills.cmd_generate', 'drills:assess'),
    ('drills.cmd_generate', 'generator.export.variants:CardRules'),
    ('drills.cmd_generate', 'generator.export.variants:DEFAULT_VARIANTS'),
    ('drills.cmd_generate', 'generator.export:anki'),
    ('drills.cmd_generate', 'generator.export:course_deck,shares'),
    ('drills.cmd_generate', 'generator.export:tabular,write_text'),
    ('drills.cmd_generate', 'generator:generate'),
    ('drills.cmd_generate', 'generator:generate'),
    ('drills.cmd_generate', 'generator:generate'),
    ('drills.cmd_hierarchy', 'generator:catalogue'),
    ('drills.cmd_hierarchy', 'generator:hierarchy'),
    ('drills.cmd_hierarchy', 'generator:hierarchy'),
    ('drills.cmd_hierarchy', 'labs.device:detect'),
    ('drills.cmd_hierarchy', 'labs:hierarchy'),
    ('drills.cmd_hierarchy', 'labs:ops'),
    ('drills.cmd_lab', 'drills.cmd_pod:collectives_lab'),
    ('drills.cmd_lab', 'drills.progress_bar:Bar,Steps'),
    ('drills.cmd_lab', 'drills.progress_bar:Bar,Steps'),
    ('drills.cmd_lab', 'drills.store:Store'),
    ('drills.cmd_lab', 'drills:progress'),
    ('drills.cmd_lab', 'generator.answers:AnswerError,parse_number'),
    ('drills.cmd_lab', 'generator.miss_reasons:BY_ID'),
    ('drills.cmd_lab', 'generator.units:seconds'),
    ('drills.cmd_lab', 'jax'),
    ('drills.cmd_lab', 'labs.runner:LearnerPrediction'),
    ('drills.cmd_lab', 'labs:gate'),
    ('drills.cmd_lab', 'labs:inputs,ops'),
    ('drills.cmd_lab', 'labs:inputs,session'),
    ('drills.cmd_lab', 'labs:ops,session'),
    ('drills.cmd_lab', 'labs:profile'),
    ('drills.cmd_lab', 'labs:runner'),
    ('drills.cmd_lab', 'labs:runner'),
    ('drills.cmd_lab', 'labs:runner,session'),
    ('drills.cmd_lab', 'labs:runner,session'),
    ('drills.cmd_lab', 'labs:session'),
    ('drills.cmd_lab', 'labs:verify'),
    ('drills.cmd_lab', 'labs:xprof_logdir'),
    ('drills.cmd_pod', 'generator.answers:AnswerError,parse_duration_seconds'),
    ('drills.cmd_pod', 'generator.answers:AnswerError,parse_number'),
    ('drills.cmd_pod', 'labs.record_types:RecordError'),
    ('drills.cmd_pod', 'labs:collectives'),
    ('drills.cmd_pod', 'labs:collectives_record'),
    ('drills.cmd_pod', 'labs:collectives_run'),
    ('drills.cmd_pod', 'labs:records'),
    ('drills.cmd_quiz', 'drills.quiz:QuizOptions,Session,select_skills'),
    ('drills.cmd_quiz', 'drills.quiz_io:QuizIO'),
    ('drills.cmd_quiz', 'drills.stats:compute_stats,summary_lines'),
    ('drills.cmd_quiz', 'drills.store_clock:behind_warning,parse_iso'),
    ('drills.cmd_quiz', 'drills.store_files:bad_file'),
    ('drills.cmd_quiz', 'drills.store_files:bad_file'),
    ('drills.cmd_quiz', 'generator.units:json_ready'),
    ('drills.cmd_quiz', 'generator:generate'),
    ('drills.cmd_reasons', 'generator.miss_reasons.quantities:COUNTS,FLOOR,LABELS'),
    ('drills.cmd_reasons', 'generator.miss_reasons:REASON_QUANTITIES,REASONS'),
    ('drills.cmd_site', 'drills.site.build:SiteError,build'),
    ('drills.cmd_site', 'drills.site.serve:make_server'),
    ('drills.cmd_site', 'labs'),
    ('drills.cmd_site', 'labs:records'),
    ('drills.progress', 'drills.stats:compute_stats'),
    ('drills.progress', 'generator.generate:CAN_YOU'),
    ('drills.progress', 'generator.units:fmt'),
    ('drills.progress', 'generator:generate'),
    ('drills.progress', 'generator:miss_reasons'),
    ('drills.progress', 'generator:miss_reasons'),
    ('drills.progress', 'labs.calibration_bias:prediction_bias'),
    ('drills.progress', 'labs:records'),
    ('drills.progress', 'labs:records'),
    ('drills.progress', 'labs:records'),
    ('drills.quiz', 'drills:assess'),
    ('drills.quiz', 'generator:families'),
    ('drills.quiz_io', 'generator.units:json_ready'),
    ('drills.quiz_io', 'readline'),
    ('drills.site.sections', 'drills:progress'),
    ('drills.site.sections', 'generator.generate:registry'),
    ('drills.site.sections', 'generator:families'),
    ('drills.site.sections', 'labs:calibration_bias'),
    ('drills.site.sections', 'labs:records'),
    ('drills.store', 'drills.store_clock:store_time'),
    ('drills.store_files', 'platformdirs'),
    ('drills.store_lock', 'generator.lockinfo:lock_holder'),
    ('generator.catalogue', 'difflib'),
    ('generator.catalogue', 'generator.safeio:read_text_bounded'),
    ('generator.catalogue', 'generator.yamlio:safe_load'),
    ('generator.catalogue', 'generator:roofline'),
    ('generator.catalogue', 'generator:startcache'),
    ('generator.collectives', 'generator.roofline:Ceilings'),
    ('generator.collectives', 'generator.units:sci,seconds'),
    ('generator.export.anki', 'generator.generate:unseeded_id'),
    ('generator.export.variants', 'generator.generate:answer_key'),
    ('generator.families', 'generator:specs'),
    ('generator.families', 'generator:specs,startcache'),
    ('generator.families', 'generator:startcache'),
    ('generator.families', 'generator:startcache'),
    ('generator.families', 'generator:startcache'),
    ('generator.families', 'importlib.machinery:PathFinder'),
    ('generator.families.interconnect', 'generator:collectives'),
    ('generator.generate', 'generator.families:mistakes'),
    ('generator.generate', 'generator.units:fmt'),
    ('generator.miss_reasons.reading', 'generator.answers:AnswerError,NeedsUnitError,WrongDimensionError,parse_duration_seconds'),
    ('generator.miss_reasons.reading', 'generator.answers:AnswerError,parse_unit'),
    ('generator.miss_reasons.reasons', 'generator.problem:Answer,Problem'),
    ('generator.miss_reasons.reasons', 'generator:catalogue'),
    ('generator.project_urls', 'importlib:metadata'),
    ('generator.specs', 'generator.units:normalize_dtype'),
    ('generator.specs', 'yaml'),
    ('generator.specs', 'yaml'),
    ('generator.startcache', 'platformdirs'),
    ('generator.transformer', 'generator.yamlio:safe_load'),
    ('generator.transformer', 'generator:safeio'),
    ('labs.calibrate', 'jax'),
    ('labs.calibrate', 'jax.numpy'),
    ('labs.collectives', 'labs.inputs:InputError,parse_prediction,read_mapping'),
    ('labs.collectives_run', 'jax'),
    ('labs.collectives_run', 'jax'),
    ('labs.collectives_run', 'jax'),
    ('labs.collectives_run', 'jax'),
    ('labs.collectives_run', 'jax'),
    ('labs.collectives_run', 'jax'),
    ('labs.collectives_run', 'jax'),
    ('labs.collectives_run', 'jax.experimental.shard_map:shard_map'),
    ('labs.collectives_run', 'jax.numpy'),
    ('labs.collectives_run', 'jax.numpy'),
    ('labs.collectives_run', 'jax.sharding:Mesh,NamedSharding,PartitionSpec'),
    ('labs.collectives_run', 'labs.device:detect'),
    ('labs.collectives_run', 'labs:collectives_record'),
    ('labs.collectives_run', 'labs:measure'),
    ('labs.collectives_run', 'labs:measure'),
    ('labs.collectives_run', 'numpy'),
    ('labs.consistency', 'generator.hierarchy:Hierarchy,HierarchyError'),
    ('labs.consistency', 'labs.ops:OPS'),
    ('labs.consistency', 'labs.ops:OPS'),
    ('labs.consistency', 'labs.ops:OPS'),
    ('labs.consistency', 'labs.ops:OPS'),
    ('labs.consistency', 'labs.records:SCHEMA_VERSION'),
    ('labs.consistency', 'labs:evidence'),
    ('labs.consistency', 'labs:verify'),
    ('labs.consistency', 'labs:verify'),
    ('labs.device', 'jax'),
    ('labs.device', 'jaxlib'),
    ('labs.evidence', 'generator.units:fmt'),
    ('labs.evidence', 'generator.units:fmt'),
    ('labs.evidence', 'generator.units:fmt'),
    ('labs.evidence', 'generator.units:fmt'),
    ('labs.evidence', 'generator:catalogue'),
    ('labs.evidence', 'generator:hierarchy'),
    ('labs.evidence', 'labs:calibrate'),
    ('labs.evidence', 'labs:calibrate'),
    ('labs.evidence', 'labs:hierarchy'),
    ('labs.evidence', 'labs:measure'),
    ('labs.evidence', 'labs:ops'),
    ('labs.evidence', 'labs:ops'),
    ('labs.evidence', 'labs:ops'),
    ('labs.evidence', 'labs:ops'),
    ('labs.explain', 'generator.units:fmt'),
    ('labs.gate', 'generator:miss_reasons'),
    ('labs.gate', 'generator:miss_reasons'),
    ('labs.gate', 'labs.inputs:InputError,parse_prediction'),
    ('labs.gate', 'labs.measure:NOISY_SPREAD,noise_reasons,quantile'),
    ('labs.gate', 'labs:consistency'),
    ('labs.hierarchy', 'jax'),
    ('labs.hierarchy', 'jax.numpy'),
    ('labs.hierarchy', 'jax:lax'),
    ('labs.inputs', 'generator.answers:AnswerError,NeedsUnitError,parse_duration_seconds'),
    ('labs.inputs', 'generator.miss_reasons:BY_ID,CorrectedError,corrected_from_sentence,parse_corrected'),
    ('labs.inputs', 'yaml'),
    ('labs.measure', 'jax'),
    ('labs.measure', 'jax'),
    ('labs.ops', 'jax'),
    ('labs.ops', 'jax'),
    ('labs.ops', 'jax.numpy'),
    ('labs.ops', 'jax.numpy'),
    ('labs.ops', 'jax.numpy'),
    ('labs.plot', 'matplotlib'),
    ('labs.plot', 'matplotlib.pyplot'),
    ('labs.profile', 'generator:safeio'),
    ('labs.profile', 'generator:safeio'),
    ('labs.profile', 'generator:safeio'),
    ('labs.profile', 'jax'),
    ('labs.profile', 'jax'),
    ('labs.profile', 'jax'),
    ('labs.profile', 'jax'),
    ('labs.profile', 'jax'),
    ('labs.profile', 'labs:hloproto'),
    ('labs.profile', 'labs:xplane'),
    ('labs.records', 'generator.lockinfo:lock_holder'),
    ('labs.records', 'generator:catalogue'),
    ('labs.records', 'labs.evidence:op_evidence'),
    ('labs.records', 'platformdirs'),
    ('labs.report', 'labs:explain'),
    ('labs.runner', 'labs:evidence'),
    ('labs.runner', 'labs:evidence'),
    ('labs.runner', 'labs:evidence,timing'),
    ('labs.runner', 'labs:explain'),
    ('labs.runner', 'labs:explain'),
    ('labs.runner', 'labs:explain'),
    ('labs.runner', 'labs:explain'),
    ('labs.runner', 'labs:explain'),
    ('labs.runner', 'labs:explain'),
    ('labs.runner', 'labs:explain'),
    ('labs.runner', 'labs:measure'),
    ('labs.session', 'generator.units:seconds'),
    ('labs.session', 'labs.device:detect'),
    ('labs.session', 'labs:plot'),
    ('labs.session', 'labs:plot'),
    ('labs.session', 'labs:profile'),
    ('labs.session', 'matplotlib'),
    ('labs.timing', 'jax'),
    ('labs.timing', 'jax.numpy'),
    ('labs.verify', 'labs.measure:summarize_device'),
)

"""One error type: every exception class the project defines for its user derives from ``DrillError``.

The classes are found in the source (every ``class`` statement in ``generator/``, ``drills/`` and ``labs/``,
nested ones included), then looked up in their imported module, so a new exception class can not be
missed: it derives from ``DrillError`` or it is named in ``INTERNAL`` with the reason it never reaches
the user.
"""

from __future__ import annotations

import ast
import importlib
import io

import pytest

from generator.errors import DrillError
from tests.conftest import REPO

PACKAGES = ("generator", "drills", "labs")

# Exceptions that are signals between two parts of the code, never shown to the user as they are.
INTERNAL = {
    # The quiz's loop ends on it when the learner types q: caught at once, never printed.
    "drills.quiz.session._Quit": "control flow inside the quiz loop",
    # stdin ended or sent an endless line: the quiz loop catches both and ends the session cleanly.
    "drills.quiz.terminal.EndOfInput": "the quiz loop's end-of-input signal",
    "drills.quiz.terminal.InputTooLong": "the quiz loop's over-long-line signal",
    # Carries a failed stdout write (command, OSError) past click to ``cli.main``, which prints its own
    # line (or nothing, for a closed pipe) and exits 141 or 1: it is never printed as an error itself.
    "drills.cli.OutputError": "carries a failed stdout write to cli.main",
}


def module_name(path) -> str:
    return ".".join(path.relative_to(REPO).with_suffix("").parts).removesuffix(".__init__")


def defined_classes() -> list[str]:
    """``module.Class`` (``module.Outer.Inner`` for nested ones) for each top-level or nested class
    statement of the three packages (classes inside functions are reached by no caller)."""
    found = []
    for package in PACKAGES:
        for path in sorted((REPO / package).rglob("*.py")):
            tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
            pending = [(node, module_name(path)) for node in tree.body]
            while pending:
                node, prefix = pending.pop()
                if isinstance(node, ast.ClassDef):
                    found.append(f"{prefix}.{node.name}")
                    pending += [(child, f"{prefix}.{node.name}") for child in node.body]
    return sorted(found)


def resolve(qualified: str) -> object:
    parts = qualified.split(".")
    for cut in range(len(parts) - 1, 0, -1):
        try:
            obj: object = importlib.import_module(".".join(parts[:cut]))
        except ModuleNotFoundError:
            continue
        for name in parts[cut:]:
            obj = getattr(obj, name)
        return obj
    raise LookupError(qualified)


@pytest.fixture(scope="module")
def exception_classes() -> dict[str, type[BaseException]]:
    out = {}
    for qualified in defined_classes():
        cls = resolve(qualified)
        if isinstance(cls, type) and issubclass(cls, BaseException):
            out[qualified] = cls
    return out


def test_the_walk_finds_the_project_exceptions(exception_classes):
    # A few from each package: a walk that lost a folder, nested classes or a module would fail here.
    for wanted in ("generator.model.answers.NeedsUnitError", "generator.io.safeio.RefusedTarget",
                   "drills.store.files.StoreError", "drills.quiz.session._Quit", "labs.records.folder.FolderLocked",
                   "labs.session.NeedPredictions"):
        assert wanted in exception_classes
    assert len(exception_classes) >= 35


def test_every_user_facing_exception_derives_from_drill_error(exception_classes):
    outside = sorted(name for name, cls in exception_classes.items()
                     if not issubclass(cls, DrillError) and name not in INTERNAL)
    assert outside == [], f"derive these from generator.errors.DrillError (or justify them in INTERNAL): {outside}"


def test_the_internal_list_names_real_internal_exceptions(exception_classes):
    for name in INTERNAL:
        assert name in exception_classes, f"{name} is no longer defined: take it off INTERNAL"
        assert not issubclass(exception_classes[name], DrillError), f"{name} is a DrillError: take it off INTERNAL"


def test_older_bases_are_kept_for_callers_that_catch_them():
    from drills.store.files import StoreError
    from generator.model.answers import AnswerError
    from generator.problems.families import FamilyPackageError
    from generator.io.safeio import SafeIOError
    from labs.records.folder import FolderLocked

    assert issubclass(AnswerError, ValueError) and issubclass(FolderLocked, OSError)
    assert issubclass(SafeIOError, OSError) and issubclass(FamilyPackageError, ImportError)
    assert issubclass(StoreError, DrillError)
    refused = SafeIOError("can not write /x: read-only")
    assert str(refused) == "can not write /x: read-only" and refused.exit_code == 1


def test_the_two_export_errors_are_told_apart(exception_classes):
    names = [name.rsplit(".", 1)[1] for name in exception_classes]
    assert names.count("ExportError") == 1


def test_drill_error_shows_one_line_with_its_exit_code():
    error = DrillError("the record is\nnot readable:  bad  json", exit_code=2)
    assert error.exit_code == 2 and error.message == "the record is\nnot readable:  bad  json"
    assert error.format_message() == "the record is not readable: bad json"
    shown = io.StringIO()
    error.show(shown)
    assert shown.getvalue() == "drill: error: the record is not readable: bad json\n"
    assert DrillError("x").exit_code == 1


def test_a_subclass_message_reads_as_before():
    from generator.model.answers import NeedsUnitError
    from generator.problems.generate import UnknownFamilyError

    unknown = UnknownFamilyError("nope")
    assert str(unknown).startswith("unknown family 'nope'") and unknown.message == str(unknown)
    assert NeedsUnitError("4.2", (0, 0, 1)).format_message().startswith("add a unit: 4.2 what?")

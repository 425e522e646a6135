"""Every command, given one bad input, says one line on stderr and ends non-zero, never with a traceback;
every ``DrillError`` that reaches ``drills.cli.main`` is shown there the one way (one line, its exit code)."""

from __future__ import annotations

import pytest

from drills import cli as drill_cli
from generator.errors import DrillError
from tests.conftest import invoke_drill


def bad_inputs(tmp_path) -> dict[str, tuple[str, ...]]:
    """One bad input for each command of ``drills.cli.COMMANDS``."""
    (tmp_path / "bad.json").write_text("{")
    bad = str(tmp_path / "bad.json")
    return {
        "chips": ("chips", "--columns", "2"),  # takes no such option
        "roofline": ("roofline", "--chip", "v9z", "--op", "matmul", "--shape", "8,8,8"),
        "transformer": ("transformer", "--params", "seven"),
        "deck": ("deck", "-o", str(tmp_path / "deck.txt")),
        "export": ("export", "--format", "nope"),
        "quiz": ("quiz", "--store", bad, "--count", "1"),
        "check": ("check", "--problem-id", "nope@123", "--answer", "1"),
        "misconceptions": ("misconceptions", "--family", "ridge"),  # takes no such option
        "miss-reasons": ("miss-reasons", "--op", "add"),  # takes no such option
        "hierarchy": ("hierarchy", "--chip", "v9z"),
        "stats": ("stats", "--store", bad),
        "store": ("store", "check", "--store", bad),
        "lab": ("lab", "--dtype", "f8"),
        "explain": ("explain", bad),
        "gate": ("gate", "--bench", str(tmp_path / "none")),
        "progress": ("progress", "--tick", "99"),
        "xprof": ("xprof", bad),
        "site": ("site", "-o", bad),
        "pod": ("pod", "--chip", "v9z"),
        "collective": ("collective", "--chip", "v5e", "--bytes", "1e-320"),
        "transfer": ("transfer", "--chip", "v9z", "--slice", "4x4", "--from", "0,0", "--to", "1,1"),
        "anki-import": ("anki-import", bad),  # not an Anki collection
        "fsrs-fit": ("fsrs-fit", "--store", bad),  # not a store
    }


def test_the_table_covers_every_command(tmp_path):
    assert set(bad_inputs(tmp_path)) == set(drill_cli.COMMANDS)


@pytest.mark.parametrize("command", sorted(drill_cli.COMMANDS))
def test_one_bad_input_is_one_line_and_a_non_zero_exit(tmp_path, monkeypatch, command):
    monkeypatch.setenv("DRILL_STORE", str(tmp_path / "store.sqlite3"))
    monkeypatch.setenv("DRILL_RECORDS", str(tmp_path / "records"))
    res = invoke_drill(*bad_inputs(tmp_path)[command])
    assert res.returncode not in (0, None), res.stdout
    assert "Traceback" not in res.stderr
    lines = res.stderr.strip().splitlines()
    assert len(lines) == 1 and ": error: " in lines[0], res.stderr


def test_a_drill_error_from_any_depth_is_shown_in_one_place(monkeypatch):
    """A ``DrillError`` no command caught: one line naming the tool, the message on one line, its exit code."""
    import click

    @click.command()
    def ghost() -> None:
        raise DrillError("the store is\nlocked", exit_code=3)

    monkeypatch.setattr(drill_cli.LazyGroup, "get_command", lambda self, ctx, name: ghost)
    monkeypatch.setattr(drill_cli.LazyGroup, "list_commands", lambda self, ctx: ["ghost"])
    res = invoke_drill("ghost")
    assert res.returncode == 3
    assert res.stderr == "drill: error: the store is locked\n"

"""The progress bar of `drill deck`, `drill export`, `drill lab` and `drill hierarchy` (``drills.progress_bar``):
drawn on stderr with an ETA at a terminal, nothing written when stderr is not one."""

from __future__ import annotations

import io
import json
import os
import pty
import re
import sys
import threading

import pytest
from click.testing import CliRunner

from drills import progress_bar
from drills.cli import cli
from drills.progress_bar import Bar, Steps, eta_text
from generator.problems import generate
from generator.export import tabular

BAR = re.compile(r"\[[#-]+\] \d+/\d+  ETA ")
ETA = re.compile(r"ETA \d+:\d\d")


class Clock:
    """A clock the test moves by hand."""

    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


class TerminalText(io.StringIO):
    """A text stream that says it is a terminal."""

    def isatty(self) -> bool:
        return True


def test_eta_is_the_rate_of_the_timed_steps_times_the_steps_left():
    clock, out = Clock(), TerminalText()
    with Bar("work", 10, stream=out, clock=clock) as bar:
        assert "ETA --:--" in bar.line()  # no step done: not known yet
        clock.now += 6
        bar.advance(3, "step 4")
        assert bar.eta_s() == pytest.approx(14.0)  # 2 s a step, 7 left
        assert bar.line() == "work [#######-----------------] 3/10  ETA 0:14  step 4"
    assert out.getvalue().startswith("\r") and out.getvalue().endswith("\n")


def test_steps_done_before_do_not_count_toward_the_eta():
    clock = Clock()
    bar = Bar("lab", 6, stream=TerminalText(), clock=clock)
    bar.skip(3)  # done earlier: no time here
    assert bar.eta_s() is None
    clock.now += 5
    bar.advance(1)
    assert bar.eta_s() == pytest.approx(10.0)  # 5 s for the one timed step, 2 left


def test_a_stream_that_is_no_terminal_gets_nothing():
    out = io.StringIO()
    with Bar("work", 4, stream=out) as bar:
        bar.show("first")
        bar.advance(4)
    assert out.getvalue() == ""


def test_named_steps_move_the_bar_and_parts_only_name_what_runs():
    clock = Clock()
    bar = Bar("lab", 3, stream=TerminalText(), clock=clock)
    steps = Steps(bar, ["probes", "fixed cost", "hierarchy"])
    steps("probes")
    steps("fixed cost")
    steps("hierarchy")
    steps("copy in L1")  # a part of the hierarchy step
    assert bar.done == 2 and bar.item == "hierarchy: copy in L1"
    steps.finish()
    steps.finish()
    assert bar.done == 3 and not bar.shown


def test_named_steps_without_a_terminal_write_nothing():
    out = io.StringIO()
    bar = Bar("lab", 2, stream=out)
    steps = Steps(bar, ["a", "b"])
    for label in ("a", "part of a", "b"):
        steps(label)
    steps.finish()
    assert out.getvalue() == "" and bar.done == 2  # counted all the same, never drawn


def test_eta_text():
    assert eta_text(None) == "ETA --:--" and eta_text(75.4) == "ETA 1:15" and eta_text(3725) == "ETA 1:02:05"


# --- the commands: CliRunner's stderr is no terminal; a pty's is ----------------------------------

def test_deck_and_export_write_no_bar_when_stderr_is_not_a_terminal(tmp_path):
    runner = CliRunner()
    deck = runner.invoke(cli, ["deck", "--family", "ridge", "--chip", "v5e", "-o", str(tmp_path / "d.apkg")])
    assert deck.exit_code == 0, deck.output
    assert deck.stderr == "" and deck.stdout.startswith("wrote ") and "ETA" not in deck.stdout
    export = runner.invoke(cli, ["export", "--format", "json", "--family", "ridge", "--chip", "v5e"])
    assert export.exit_code == 0 and export.stderr == ""
    problems = generate.generate(["ridge"], ["v5e"], 1, 0)
    assert export.stdout == tabular.render(problems, "json")  # the output is exactly the problems, nothing else
    assert json.loads(export.stdout)


_TERMINAL_SEEN: list[str] = []  # what the terminal of each run got, a failed one's too


def _run_at_a_terminal(monkeypatch, argv: list[str]) -> str:
    """Run the command in-process with stderr on a pty; what the terminal got."""
    master, slave = pty.openpty()
    got: list[bytes] = []

    def drain() -> None:
        while True:
            try:
                chunk = os.read(master, 4096)
            except OSError:  # the slave side closed
                return
            if not chunk:
                return
            got.append(chunk)

    reader = threading.Thread(target=drain, daemon=True)
    reader.start()
    terminal = io.TextIOWrapper(os.fdopen(slave, "wb", buffering=0), encoding="utf-8", write_through=True)
    monkeypatch.setattr(sys, "stderr", terminal)
    try:
        cli.main(args=argv, prog_name="drill", standalone_mode=False)
    finally:
        terminal.close()
        reader.join(timeout=30)
        os.close(master)
        _TERMINAL_SEEN.append(b"".join(got).decode("utf-8", "replace"))
    return _TERMINAL_SEEN[-1]


def test_deck_shows_a_bar_with_an_eta_at_a_terminal(monkeypatch, tmp_path, capsys):
    shown = _run_at_a_terminal(monkeypatch, ["deck", "--family", "ridge", "--chip", "v5e",
                                             "-o", str(tmp_path / "d.apkg")])
    last = shown.replace("\r\n", "\n").split("\r")[-1]
    assert "drill deck [" in shown and BAR.search(shown) and ETA.search(shown), shown
    skills = len(generate.skills(["ridge"], ["v5e"]))
    assert f"{skills + 1}/{skills + 1}" in last  # each skill built (drawn, made, rendered), then written: full
    assert capsys.readouterr().out.startswith("wrote ")  # stdout as before


def test_export_shows_a_bar_with_an_eta_at_a_terminal(monkeypatch, capsys):
    shown = _run_at_a_terminal(monkeypatch, ["export", "--format", "csv", "--family", "ridge", "--chip", "v5e"])
    skills = len(generate.skills(["ridge"], ["v5e"]))
    assert "drill export [" in shown and ETA.search(shown) and f"{skills + 1}/{skills + 1}" in shown, shown
    assert capsys.readouterr().out == tabular.render(generate.generate(["ridge"], ["v5e"], 1, 0), "csv")



def _fake_lab(monkeypatch, probed):
    """``drill lab``'s measuring with ``labs.session.measure_and_save`` replaced by one that reports
    the steps ``labs.runner.run`` reports, the hierarchy's parts included; returns the plan."""
    from types import SimpleNamespace

    from labs import runner, session

    plan = SimpleNamespace(calibrate=True, options=SimpleNamespace(ops=("matmul", "add")))

    def measure_and_save(plan_, learner, read, *, practice, progress, require_all, probed):
        for label in runner.step_labels(plan_):
            progress(label)
            if label == "hierarchy":
                progress("copy in L1")
                progress("matmul square bf16")
        return {"ops": []}, "lab-x.json"
    monkeypatch.setattr(session, "measure_and_save", measure_and_save)
    return plan


@pytest.mark.parametrize("probed", [None, object()])
def test_the_lab_bar_counts_the_hierarchy_and_shows_an_eta(monkeypatch, probed):
    from drills import cmd_lab

    plan = _fake_lab(monkeypatch, probed)
    monkeypatch.setattr(progress_bar, "REDRAW_S", 0.0)  # every step drawn, however fast
    terminal = TerminalText()
    monkeypatch.setattr(sys, "stderr", terminal)
    assert cmd_lab._run_with_progress(plan, None, None, probed) == ({"ops": []}, "lab-x.json")
    shown = terminal.getvalue()
    assert "LAB·0.1 [" in shown and ETA.search(shown) and "hierarchy: copy in L1" in shown
    assert re.search(r"3/6  ETA [^\r]*hierarchy: matmul square bf16", shown)  # the hierarchy is one step
    assert "6/6" in shown.split("\r")[-1] and "[1/" not in shown  # dispatch, 3 probes, 2 ops: full; no log lines


def test_the_lab_writes_no_progress_when_stderr_is_not_a_terminal(monkeypatch):
    from drills import cmd_lab

    plan = _fake_lab(monkeypatch, None)
    piped = io.StringIO()
    monkeypatch.setattr(sys, "stderr", piped)
    assert cmd_lab._run_with_progress(plan, None, None) == ({"ops": []}, "lab-x.json")
    assert piped.getvalue() == ""  # no bar and no step lines: a pipe or a log gets the results only


def test_the_probes_bar_ends_before_the_datasheet_is_shown(monkeypatch):
    from types import SimpleNamespace

    from drills import cmd_lab
    from labs.measure import probes

    def measure_probes(plan, progress=None):
        for label in ("calibrate", "fixed cost", "hierarchy", "copy in L1"):
            progress(label)
        return SimpleNamespace()
    monkeypatch.setattr(probes, "measure_probes", measure_probes)
    monkeypatch.setattr(probes, "datasheet_lines", lambda probed, kind: ["peak: 1 FLOP/s"])
    monkeypatch.setattr(progress_bar, "REDRAW_S", 0.0)
    terminal, said = TerminalText(), []
    monkeypatch.setattr(sys, "stderr", terminal)
    plan = SimpleNamespace(chip=None, calibrate=True, device=SimpleNamespace(device_kind="cpu"))
    cmd_lab._probe_with_progress(plan, lambda text: said.append((text, terminal.getvalue())))
    (intro, before), (line, at_datasheet) = said
    assert intro.startswith("probing") and before == ""  # nothing drawn before the probes start
    assert line == "peak: 1 FLOP/s" and at_datasheet.endswith("\n") and "3/3" in at_datasheet.split("\r")[-1]
    assert "hierarchy: copy in L1" in at_datasheet and ETA.search(at_datasheet)
    assert terminal.getvalue() == at_datasheet  # the line ended once


def test_a_bad_selection_is_refused_before_any_bar_is_drawn(monkeypatch):
    import click

    with pytest.raises(click.UsageError, match="unknown family 'nope'"):
        _run_at_a_terminal(monkeypatch, ["export", "--format", "csv", "--family", "nope"])
    assert "[" not in _TERMINAL_SEEN[-1]


def _fake_hierarchy(monkeypatch):
    """``drill hierarchy`` on a described CPU (L1d, L2, then DRAM) whose probes return numbers at once:
    ``labs.measure.hierarchy.measure_hierarchy`` itself runs and reports its steps."""
    from labs.measure import device as lab_device
    from labs.measure import hierarchy as lab_hierarchy
    from tests.labs import synthetic

    monkeypatch.setattr(lab_device, "detect", lambda: synthetic.device("cpu", "cpu", 16e9, 2**20))
    monkeypatch.setattr(lab_hierarchy, "cpu_cache_levels", lambda: [("L1d", 32 * 2**10), ("L2", 2**20)])
    monkeypatch.setattr(lab_hierarchy, "copy_rate", lambda buffer: (50e9, 0.01, 4))
    monkeypatch.setattr(lab_hierarchy, "rotated_copy_rate",
                        lambda call, total, traces, fresh_output=False: (15e9 if fresh_output else 20e9, 0.02))
    monkeypatch.setattr(lab_hierarchy, "matmul_rate", lambda shape, dtype, traces=None, sets=2: (1e11, 0.01, "device"))
    monkeypatch.setattr(lab_hierarchy, "exp_rate", lambda shape, dtype: (1e9, 0.01))

    def sweep(sizes, progress):  # two plateaus (a cache at 100 GB/s, main memory at 20 GB/s), each point reported
        for w in sizes:
            progress(f"sweep, working set {w // 2**10:,} KiB")
        return [lab_hierarchy.SweepPoint(float(w), 100e9 if w <= 2**20 else 20e9, 0.01) for w in sizes]

    monkeypatch.setattr(lab_hierarchy, "sweep", sweep)
    monkeypatch.setattr(lab_hierarchy, "_op_rates_at", lambda found, dtypes, side, rotated_bytes, kinds, traces, tag,
                        progress: ([], []))


def test_hierarchy_writes_no_progress_when_stderr_is_not_a_terminal(monkeypatch):
    _fake_hierarchy(monkeypatch)
    res = CliRunner().invoke(cli, ["hierarchy", "--size", "128", "--dtype", "f32", "--json"])
    assert res.exit_code == 0, res.output
    assert res.stderr == "" and json.loads(res.stdout)["levels"][-1]["name"] == "DRAM"


def test_hierarchy_shows_a_bar_with_an_eta_at_a_terminal(monkeypatch, capsys):
    _fake_hierarchy(monkeypatch)
    monkeypatch.setattr(progress_bar, "REDRAW_S", 0.0)  # every step drawn, however fast
    monkeypatch.setenv("COLUMNS", "200")  # a wide terminal: the part's name is not cut
    shown = _run_at_a_terminal(monkeypatch, ["hierarchy", "--size", "128", "--dtype", "f32", "--json"])
    last = shown.replace("\r\n", "\n").split("\r")[-1]
    assert "drill hierarchy [" in shown and BAR.search(shown) and ETA.search(shown), shown
    assert "copy in DRAM: copy from DRAM, calls of 256 KiB" in shown  # a level's calls are parts of its step
    assert "6/6" in last  # three levels, two matmul shapes, one exp: the bar ends full
    assert json.loads(capsys.readouterr().out)["levels"][-1]["name"] == "DRAM"  # stdout as before


def test_the_hierarchys_step_labels_are_the_steps_it_reports_in_order(monkeypatch):
    _fake_hierarchy(monkeypatch)
    from labs.measure import device as lab_device
    from labs.measure import hierarchy as lab_hierarchy

    device = lab_device.detect()
    reported: list[str] = []
    lab_hierarchy.measure_hierarchy(device, 128, ("bf16", "f32"), progress=reported.append)
    labels = lab_hierarchy.step_labels(device, ("bf16", "f32"))
    steps = [label for label in reported if label in labels]
    assert steps == labels and len(labels) == 3 + 2 * 2 + 2
    assert any(label.startswith("fresh outputs of") for label in reported)  # a part of DRAM's step

"""Strings from a record reach the terminal only through ``generator.io.termsafe.visible``: a device kind
with escapes can not retitle the terminal, colour it, or erase the "[not counted]" after it."""

from __future__ import annotations

import re

from click.testing import CliRunner

from drills.cli import cli
from generator.io.termsafe import visible, visible_lines
from labs.records import folder as records
from tests.labs import synthetic

HOSTILE = "NVIDIA H200\x1b]0;PWNED\x07\x1b[31mRED\x1b[0m\r\x1b[2K"
CONTROLS = re.compile("[\x00-\x09\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")  # a newline ends a line


def test_visible_shows_every_terminal_control_and_keeps_the_rest():
    assert visible(HOSTILE) == "NVIDIA H200\\x1b]0;PWNED\\x07\\x1b[31mRED\\x1b[0m\\r\\x1b[2K"
    assert visible("a\nb\tc\x7f\x9b\u202eé µs") == "a\\nb\\tc\\x7f\\x9b\\u202eé µs"
    assert visible(3) == "3" and visible_lines(["x\r", "y"]) == ["x\\r", "y"]


def _hostile_bench(tmp_path):
    rec = synthetic.record(tmp_path, {"add": 3.0}, dev=synthetic.device(device_kind=HOSTILE))
    for row in rec["ops"]:
        row["label"] = row["label"] + "\x1b[2J"
    return records.save_run(rec, tmp_path / "bench", "lab-0.1-gpu-test")


def _clean(text: str, shown: bool = True) -> None:
    assert not CONTROLS.search(text), repr(CONTROLS.search(text))
    assert not shown or "\\x1b]0;PWNED\\x07" in text or "\\x1b[2J" in text


def test_gate_shows_a_hostile_device_kind_visibly(tmp_path):
    _hostile_bench(tmp_path)
    res = CliRunner().invoke(cli, ["gate", "--bench", str(tmp_path / "bench")])
    _clean(res.stdout)
    assert "[not counted] NVIDIA H200\\x1b]0;PWNED" in res.stdout


def test_progress_and_explain_show_record_strings_visibly(tmp_path):
    path = _hostile_bench(tmp_path)
    res = CliRunner().invoke(cli, ["progress", "--bench", str(tmp_path / "bench"), "--store",
                                   str(tmp_path / "s.db")])
    assert res.exit_code == 0, res.output
    _clean(res.output)
    why = tmp_path / "why.yaml"
    why.write_text("add: add streams at a third of the HBM bandwidth, 3 x 21 us = 63 us\n")
    res = CliRunner().invoke(cli, ["explain", str(path), "--explanations", str(why)])
    assert res.exit_code == 0, res.output
    _clean(res.output)
    other = _hostile_bench(tmp_path / "second")
    res = CliRunner().invoke(cli, ["explain", str(other), "--show"])
    assert res.exit_code == 0 and "revealed" in res.output, res.output
    _clean(res.output, shown=False)

"""Plain one-line messages for bad command-line values: an over-long or garbled ``--bytes`` is quoted
clipped and terminal-safe, and ``drill deck -o``/``drill export -o`` into a folder that can not be
written is the command's own usage error (exit 2), as a missing folder is."""

from __future__ import annotations

import os

import pytest

from tests.conftest import invoke_drill

BYTES_COMMANDS = [("collective", "--chip", "v5e", "--op", "all_gather", "--axis", "4"),
                  ("transfer", "--chip", "v5e", "--slice", "4x4", "--from", "0,0", "--to", "3,3")]
ESCAPES = "\x1b]0;PWN\x07\x1b[31m\x9b"  # a title change, a colour and a C1 CSI


def _one_line(res, command: str) -> str:
    assert res.returncode == 2 and res.stdout == "", res.stderr
    lines = res.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"drill {command}: error: "), res.stderr
    return lines[0]


@pytest.mark.parametrize("command", BYTES_COMMANDS, ids=lambda c: c[0])
@pytest.mark.parametrize("value", ["9" * 5000, "x" * 5000, ("1e9" + ESCAPES) * 300, "1" + "0" * 60])
def test_a_long_bytes_value_is_quoted_clipped_with_its_length(command, value):
    line = _one_line(invoke_drill(*command, "--bytes", value), command[0])
    assert len(line) < 400, line  # never the whole value back
    assert f"({len(value):,} characters)" in line
    assert not any(c in line for c in "\x1b\x07\x9b")


@pytest.mark.parametrize("command", BYTES_COMMANDS, ids=lambda c: c[0])
def test_a_short_bytes_value_with_escapes_is_shown_escaped_whole(command):
    line = _one_line(invoke_drill(*command, "--bytes", "1" + ESCAPES), command[0])
    assert "--bytes '1\\x1b]0;PWN\\x07" in line and "characters)" not in line
    assert not any(c in line for c in "\x1b\x07\x9b")


@pytest.mark.parametrize("args", [("deck", "-o", "{}/x.apkg"), ("export", "--format", "csv", "-o", "{}/x.csv")],
                         ids=["deck", "export"])
def test_an_output_in_a_folder_that_can_not_be_written_is_a_usage_error(tmp_path, args):
    """As ``drill deck -o /proc/x.apkg``: a scratch folder with no write bit stands in for /proc (the mode
    refuses it even for root); nothing is written there."""
    locked = tmp_path / "locked"
    locked.mkdir()
    locked.chmod(0o555)
    try:
        line = _one_line(invoke_drill(*(a.format(locked) for a in args)), args[0])
        assert f"directory {locked} is not writable" in line
        assert os.listdir(locked) == []
    finally:
        locked.chmod(0o755)


def test_a_fifo_at_the_output_stays_a_refusal_with_exit_1(tmp_path):
    """The file policy's refusal of a file that is there and not ours to replace keeps exit 1."""
    fifo = tmp_path / "x.apkg"
    os.mkfifo(fifo)
    res = invoke_drill("deck", "-o", str(fifo))
    assert res.returncode == 1 and "FIFO" in res.stderr and len(res.stderr.splitlines()) == 1

"""One transfer model: ``drill transfer`` (``collectives.Transfer``) prices a transfer with
``generator.model.links.transfer_seconds``, the formula the interconnect family uses; change it and the
command follows."""

from __future__ import annotations

import json

from click.testing import CliRunner

from drills.cli import cli
from generator.model import collectives, links


def _doubled(monkeypatch):
    real = links.transfer_seconds
    monkeypatch.setattr(links, "transfer_seconds", lambda *a, **k: 2 * real(*a, **k))


def test_collectives_transfer_follows_links(monkeypatch):
    t = collectives.transfer((4, 4), (0, 0), (2, 3), (True, True), 1e9, 4.5e10, 1e-6)
    assert t.t_s == links.transfer_seconds(1e9, t.bytes_per_s, t.hops, 1e-6)
    before = t.t_s
    _doubled(monkeypatch)
    assert t.t_s == 2 * before


def test_drill_transfer_prints_the_links_model(monkeypatch):
    args = ["transfer", "--chip", "v5e", "--slice", "4x4", "--from", "0,0", "--to", "2,3", "--bytes", "1GB", "--json"]
    first = CliRunner().invoke(cli, args)
    assert first.exit_code == 0, first.output
    _doubled(monkeypatch)
    second = CliRunner().invoke(cli, args)
    a, b = json.loads(first.output), json.loads(second.output)
    assert b["t_s"] == 2 * a["t_s"]

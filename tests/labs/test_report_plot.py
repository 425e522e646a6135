"""The printed tables and the roofline plot, from synthetic records (no jax)."""

import pytest

from generator.model import roofline
from labs import plot, report
from tests.labs import synthetic


@pytest.fixture
def rec(tmp_path):
    r = synthetic.record(tmp_path, {"softmax": 3.0}, calibrate=synthetic.calibration(7e14, 4.3e12),
                         ops=("matmul", "skinny_matmul", "add", "softmax", "reduce_sum", "embedding"))
    r["ops"][0]["xla_cost"] = {"flops": 1.4e11, "bytes_accessed": 9e7, "transcendentals": 0.0,
                               "flops_differ": False, "bytes_differ": True}
    return r


def test_score_table_has_a_row_per_op_with_ratios(rec):
    lines = report.score_table(rec)
    assert "measured" in lines[0] and "datasheet" in lines[0] and "calibrated" in lines[0]
    softmax = next(line for line in lines if line.startswith("softmax rows"))
    assert "3.00x" in softmax and softmax.rstrip().endswith("miss")
    assert sum(1 for line in lines if line.rstrip().endswith(("hit", "miss"))) == 6


def test_notes_flag_unexplained_misses_and_xla_differences(rec):
    text = "\n".join(report.full_report(rec))
    assert "miss: softmax rows (3.00x (slower)): UNEXPLAINED" in text
    assert "XLA's own count differs from the hand count for: matmul NxNxN" in text
    assert "5/6 within 2x (learner predictions)" in text
    assert "NVIDIA H200" in text and "dispatch overhead per call: 5 µs" in text


def test_roof_points_are_the_roofline_attainable(rec):
    ceil = roofline.Ceilings("x", 1e15, 4e12, "bf16", "test")
    pts = plot.roof_points(ceil, [1.0, 250.0, 1000.0])
    assert pts == pytest.approx([4e12, 1e15, 1e15])


@pytest.mark.parametrize("suffix", [".png", ".svg"])
def test_plot_writes_a_file(tmp_path, rec, suffix):
    out = plot.plot_record(rec, tmp_path / f"roof{suffix}")
    data = out.read_bytes()
    assert data.startswith(b"\x89PNG") if suffix == ".png" else b"<svg" in data[:2000]


def test_plot_refuses_other_formats(tmp_path):
    with pytest.raises(plot.PlotError, match=".png or .svg"):
        plot.check_path(tmp_path / "roof.jpg")


def test_a_wall_clock_op_gets_a_banner_before_the_tables(tmp_path):
    r = synthetic.record(tmp_path, wall_ops=("add",), noisy_ops=("softmax",))
    lines = report.tables(r)
    text = "\n".join(lines)
    banner = next(i for i, line in enumerate(lines) if line.startswith("WALL CLOCK, NOT DEVICE TIME, for 1 of 5"))
    table = next(i for i, line in enumerate(lines) if line.startswith("op ") and "measured" in line)
    assert banner < table
    assert "elementwise add: trace failed: RuntimeError: test" in text
    assert "NOISY: softmax rows: runs spread 60%" in text
    add = next(line for line in report.score_table(r) if line.startswith("elementwise add"))
    assert add.rstrip().endswith("(wall clock)")
    assert report.wall_banner(synthetic.record(tmp_path)) == []


def test_detail_table_shows_device_quantiles(rec):
    lines = report.detail_table(rec)
    assert "dev p20" in lines[0] and "p80" in lines[0] and "spread" in lines[0]
    assert "quantiles of device time" in lines[-1]


def test_the_plot_includes_the_learners_own_predictions(tmp_path, rec):
    """The lab plot left out the learner's predictions; each is FLOPs / the seconds they wrote."""
    by_label = {p["label"]: p for p in plot.points(rec)}
    for row in rec["ops"]:
        if row["flops"] <= 0:
            assert row["label"] not in by_label
            continue
        mine = row["predictions"]["learner"]["seconds"]
        assert by_label[row["label"]]["learner"] == pytest.approx(row["flops"] / mine)
        assert by_label[row["label"]]["measured"] == pytest.approx(row["flops"] / row["measured"]["measured_s"])
    svg = plot.plot_record(rec, tmp_path / "roof.svg").read_text(encoding="utf-8")
    assert "x: your prediction" in svg and svg.count(", yours ") == len(by_label)
    no_mine = synthetic.record(tmp_path / "b", mine=False)
    assert all(p["learner"] is None for p in plot.points(no_mine))
    assert ", yours " not in plot.plot_record(no_mine, tmp_path / "b.svg").read_text(encoding="utf-8")

"""`drill pod`, `drill collective`, `drill transfer` and `drill roofline --over` through the entry point,
in process (CliRunner)."""

from __future__ import annotations

import json

import pytest

from tests.conftest import invoke_drill


def _json(*args: str) -> dict:
    res = invoke_drill(*args, "--json")
    assert res.returncode == 0, res.stderr
    return json.loads(res.stdout)


def test_pod_v5e_json():
    data = _json("pod", "--chip", "v5e")
    assert {"chips", "hosts", "tensorcores", "peak_flops_per_s", "hbm_bytes", "ici_wraparound"} <= set(data)
    assert (data["chips"], data["hosts"], data["tensorcores"]) == (256, 32, 256)
    assert data["peak_flops_per_s"] == pytest.approx(256 * 1.97e14)
    assert data["ici_wraparound"] == [True, True]


def test_pod_slice_text_shows_the_arithmetic_and_sources():
    res = invoke_drill("pod", "--chip", "v5p", "--slice", "4x4x8")
    assert res.returncode == 0, res.stderr
    out = res.stdout
    assert "chips            = 4 × 4 × 8 = 128" in out
    assert "hosts            = ceil(128 / (2 × 2 × 1 = 4 chips per host)) = 32" in out
    assert "retrieved 2026-07-26" in out and "whole 4x4x4 cubes" in out


def test_collective_json_keys_and_values():
    data = _json("collective", "--chip", "v5e", "--op", "all_reduce", "--bytes", "1 GB", "--axis", "16")
    assert {"t_s", "t_bandwidth_s", "t_latency_s", "hops", "bound", "wrap", "op", "bytes", "axes"} <= set(data)
    assert data["wrap"] == [True] and data["bound"] == "bandwidth"
    assert data["t_bandwidth_s"] == pytest.approx(2 * 1e9 / 9e10)
    assert data["hops"] == 16 and data["t_latency_s"] == pytest.approx(16e-6)


def test_collective_two_axes_and_forced_wrap():
    data = _json("collective", "--chip", "v5e", "--op", "all_gather", "--bytes", "1e9", "--axis", "4",
                 "--axis", "4", "--wrap", "no")
    assert data["wrap"] == [False, False]
    assert data["t_bandwidth_s"] == pytest.approx(1e9 / (2 * 4.5e10 * 4 / 3))


def test_collective_text_names_the_bound():
    res = invoke_drill("collective", "--chip", "v5e", "--op", "all_gather", "--bytes", "64kB", "--axis", "16")
    assert res.returncode == 0, res.stderr
    assert "bound: latency" in res.stdout and "T_latency = hops × per-hop latency = 8 × 1 µs" in res.stdout
    assert "book's worked-problem assumption" in res.stdout


def test_transfer_json_and_text():
    data = _json("transfer", "--chip", "v5e", "--slice", "4x4", "--from", "0,0", "--to", "3,3", "--bytes", "16e6")
    assert data["hops"] == 6 and data["ports"] == 2
    assert data["t_s"] == pytest.approx(6e-6 + 16e6 / 9e10)
    res = invoke_drill("transfer", "--chip", "v5e", "--slice", "4x4", "--from", "0,0", "--to", "3,3", "--bytes", "16e6")
    assert "hops = 3 + 3 = 6" in res.stdout and "2 ports × 4.5e10 B/s" in res.stdout


def test_roofline_over_pcie():
    # a matmul whose weights cross PCIe: the ridge becomes peak / PCIe bandwidth
    data = _json("roofline", "--chip", "v5e", "--op", "matmul", "--shape", "1024,8192,8192", "--over", "pcie")
    assert data["over"] == "pcie" and data["link_bytes_per_s"] == 1.6e10 and data["pcie_bytes_per_s"] == 1.6e10
    assert "hbm_bytes_per_s" not in data  # the link is not HBM
    assert data["ridge_flops_per_byte"] == pytest.approx(1.97e14 / 1.6e10)
    assert data["bound"] == "memory"
    res = invoke_drill("roofline", "--chip", "v5e", "--op", "matmul", "--shape", "1024,8192,8192", "--over", "dcn")
    assert res.returncode == 0 and "DCN" in res.stdout and "HBM" not in res.stdout
    given = _json("roofline", "--chip", "h100", "--op", "dot", "--shape", "4096", "--over", "ici",
                  "--link-bytes-per-s", "4.5e11")
    assert given["link_bytes_per_s"] == 4.5e11


def test_pod_prints_sensible_units_and_cites_each_source_once():
    res = invoke_drill("pod", "--chip", "v5p")
    assert res.returncode == 0 and "(4.11 EFLOP/s)" in res.stdout and "e+03" not in res.stdout
    for out in (res.stdout, invoke_drill("collective", "--chip", "v5e", "--op", "all_gather", "--bytes", "1e9",
                                      "--axis", "16").stdout):
        assert out.count("retrieved 2026-07-26") == len(set(line for line in out.splitlines()
                                                            if "retrieved" in line)) <= 3
        assert "sources:" in out


def test_collective_names_one_axis_as_one_axis():
    out = invoke_drill("collective", "--chip", "v5e", "--op", "all_gather", "--bytes", "1e9", "--axis", "16").stdout
    assert "over one axis of 16 chips" in out and "axes 16" not in out
    two = invoke_drill("collective", "--chip", "v5e", "--op", "all_gather", "--bytes", "1e9", "--axis", "16",
                    "--axis", "8").stdout
    assert "over 2 axes of 16 × 8 chips" in two


def test_v4p_2x2x4_has_no_wraparound():
    data = _json("pod", "--chip", "v4p", "--slice", "2x2x4")
    assert data["ici_wraparound"] == [False, False, False]


@pytest.mark.parametrize("args", [
    ("pod", "--chip", "v5e", "--slice", "3x5"),  # no such slice: refused, not accepted silently
    ("pod", "--chip", "v5p", "--slice", "2x16x16"),
    ("pod", "--chip", "v5e", "--slice", "32x32"),
    ("pod", "--chip", "v5e", "--slice", "4x"),
    ("pod", "--chip", "h100"),
    ("pod", "--chip", "nosuch"),
    ("collective", "--chip", "v5e", "--op", "all_gather", "--bytes", "-5", "--axis", "4"),
    ("collective", "--chip", "v5e", "--op", "all_gather", "--bytes", "1 s", "--axis", "4"),
    ("collective", "--chip", "v5e", "--op", "all_gather", "--bytes", "1e9", "--axis", "1"),
    ("collective", "--chip", "v5e", "--op", "broadcast", "--bytes", "1e9", "--axis", "4"),
    ("collective", "--chip", "v3", "--op", "all_gather", "--bytes", "1e9", "--axis", "4"),
    ("collective", "--chip", "h100", "--op", "all_gather", "--bytes", "1e9", "--axis", "4", "--wrap", "yes"),
    ("transfer", "--chip", "v5e", "--slice", "4x4", "--from", "0,0", "--to", "4,4", "--bytes", "1e6"),
    ("transfer", "--chip", "v5e", "--slice", "4x4", "--from", "1,1", "--to", "1,1", "--bytes", "1e6"),
    ("transfer", "--chip", "v5e", "--slice", "4x4", "--from", "0,0,0", "--to", "1,1", "--bytes", "1e6"),
    ("roofline", "--chip", "h100", "--op", "dot", "--shape", "4096", "--over", "pcie"),
    ("roofline", "--chip", "v5e", "--op", "dot", "--shape", "4096", "--over", "pcie", "--link-bytes-per-s", "0"),
])
def test_bad_input_is_one_line_and_exit_2(args):
    res = invoke_drill(*args)
    assert res.returncode == 2, (res.stdout, res.stderr)
    assert len(res.stderr.strip().splitlines()) == 1 and "Traceback" not in res.stderr


@pytest.mark.parametrize("command", [["collective", "--op", "all_gather", "--axis", "4"],
                                     ["transfer", "--slice", "4x4", "--from", "0,0", "--to", "3,3"]])
@pytest.mark.parametrize("value", ["1e-320", "1e-300", "0.5", "0.5 B", "1e-10 GB"])
def test_a_byte_count_below_one_byte_is_refused_in_one_line(command, value):
    """1e-320 once divided by zero; 1e-300 printed as "1e-288 pB"."""
    res = invoke_drill(command[0], "--chip", "v5e", *command[1:], "--bytes", value)
    assert res.returncode == 2 and "Traceback" not in res.stderr, res.stderr
    lines = res.stderr.strip().splitlines()
    assert len(lines) == 1 and "--bytes must be at least one byte" in lines[0] and "pB" not in res.stdout
    ok = invoke_drill(command[0], "--chip", "v5e", *command[1:], "--bytes", "1")
    assert ok.returncode == 0, ok.stderr


def test_roofline_over_ici_is_one_way_by_default_and_says_so():
    # the book's network roofline: 1.97e14 / 4.5e10 = 4,377 FLOPs/byte on a v5e (D > 8,755 for the 2-chip matmul)
    data = _json("roofline", "--chip", "v5e", "--op", "matmul", "--shape", "1024,8192,8192", "--over", "ici")
    assert data["link_bytes_per_s"] == 4.5e10 and data["ici_direction"] == "one-way"
    assert data["ridge_flops_per_byte"] == pytest.approx(4377.78, abs=0.01)
    text = invoke_drill("roofline", "--chip", "v5e", "--op", "matmul", "--shape", "1024,8192,8192", "--over", "ici")
    assert "ICI convention: one way per link" in text.stdout and "4.5e10 B/s = 4378 FLOPs/byte" in text.stdout
    two = _json("roofline", "--chip", "v5e", "--op", "matmul", "--shape", "1024,8192,8192", "--over", "ici",
                "--bidirectional")
    assert two["link_bytes_per_s"] == 9e10 and two["ici_direction"] == "bidirectional"
    assert two["ridge_flops_per_byte"] == pytest.approx(1.97e14 / 9e10)
    wrong = invoke_drill("roofline", "--chip", "v5e", "--op", "dot", "--shape", "4096", "--over", "pcie",
                         "--bidirectional")
    assert wrong.returncode == 2 and "--bidirectional applies to --over ici only" in wrong.stderr
    assert "Traceback" not in wrong.stderr and len(wrong.stderr.strip().splitlines()) <= 2

"""The real XProf opens what `drill xprof` lays out: queried on 127.0.0.1, its run list has every
op's traces, its trace viewer shows each op's timed calls on the device plane, and its op-profile
tool opens each run (slow)."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest
from click.testing import CliRunner

from drills.cli import cli
from labs import records
from labs.ops import OPS, SEED_OPS
from tests.labs import synthetic

pytestmark = pytest.mark.slow

# xprof's own command, as `drill xprof` prints it (it binds every interface; the test talks to 127.0.0.1).
XPROF = Path(sys.executable).with_name("xprof")


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _get(port: int, path: str):
    with urllib.request.urlopen(f"http://127.0.0.1:{port}{path}", timeout=60) as resp:
        data = resp.read()
    if data[:2] == b"\x1f\x8b":
        import gzip
        data = gzip.decompress(data)
    return json.loads(data)


def test_xprof_lists_the_runs_ops_in_the_trace_viewer_and_op_profile(tmp_path):
    try:
        import xprof  # noqa: F401
    except ImportError:
        if os.environ.get("CI"):
            pytest.fail("CI installs the test extra, xprof included")
        pytest.skip("xprof is not installed (the test extra installs it on Linux x86_64)")
    path = records.save_run(synthetic.record(tmp_path), tmp_path / "bench", "lab-0.1-gpu")
    logdir = tmp_path / "logdir"
    res = CliRunner().invoke(cli, ["xprof", str(path), "--logdir", str(logdir)])
    assert res.exit_code == 0, res.output
    port, grpc = _free_port(), _free_port()
    log = open(tmp_path / "xprof.log", "wb")  # a file, not a pipe: XProf logs every request
    server = subprocess.Popen([str(XPROF), f"--logdir={logdir}", f"--port={port}", f"--grpc_port={grpc}"],
                              stdout=log, stderr=subprocess.STDOUT)
    try:
        deadline = time.monotonic() + 90
        while True:
            try:
                runs = _get(port, "/data/plugin/profile/runs")
                break
            except OSError:
                assert server.poll() is None, (tmp_path / "xprof.log").read_text(errors="replace")[-2000:]
                assert time.monotonic() < deadline, "XProf did not start within 90 s"
                time.sleep(0.5)
        assert {f"{op}-trace-1" for op in SEED_OPS} <= set(runs)
        for op in SEED_OPS:
            run = f"{op}-trace-1"
            tools = _get(port, f"/data/plugin/profile/run_tools?run={run}")
            assert "trace_viewer@" in tools and "op_profile" in tools, tools
            (host,) = _get(port, f"/data/plugin/profile/hosts?run={run}&tag=trace_viewer@")
            trace = _get(port, f"/data/plugin/profile/data?run={run}&tag=trace_viewer@&host={host['hostname']}")
            names = {e.get("name", "") for e in trace["traceEvents"]}
            module = OPS[op].module_name()
            assert any(module in n for n in names), (op, sorted(names)[:20])  # the op's timed calls
            assert any("/device:GPU" in n for e in trace["traceEvents"]
                       for n in [str((e.get("args") or {}).get("name", ""))]), ("the device plane is shown", [e.get("args") for e in trace["traceEvents"] if e.get("ph") == "M"][:10])
            # The op-profile tool opens the run (it names HLO ops only from real device traces, whose
            # XLA metadata these fabricated ones lack; the trace viewer above names the op's module).
            profile = _get(port, f"/data/plugin/profile/data?run={run}&tag=op_profile&host={host['hostname']}")
            assert "byProgram" in profile
    finally:
        server.terminate()
        try:
            server.wait(20)
        except subprocess.TimeoutExpired:
            server.kill()
            server.wait()
        log.close()

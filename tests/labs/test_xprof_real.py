"""The real XProf opens what `drill xprof` lays out, queried on 127.0.0.1 (slow).

Two records are served:

* A record the real CPU lab writes (`drill lab --size 128`, this machine's jax). For every seed op
  and every one of its traces, XProf's

  - run list has the run (``<op>-trace-<k>``), with the trace viewer, graph viewer and op profile;
  - graph viewer holds the op's compiled module (``jit_lab_<op>``, the HLO XLA ran, read from the
    trace's metadata plane), and that module computes the op (a ``dot`` for the matmuls, ``add``,
    ``exponential`` for softmax, ``reduce`` for the sum);
  - trace viewer lists every HLO op of that module's entry computation (its fusions, e.g.
    ``ynn_fusion``, ``wrapped_convert``, ``add_convert_fusion``) once inside each of the lab's
    ``lab-run jit_lab_<op> <call>`` markers, and the span of those ops per marker, first call
    dropped, gives back the record's device time for that trace (``device_trace_medians_s[k-1]``)
    and its runs (in ``device_runs_s``) to the nanosecond: XProf's timings reconcile with the record.

  What is NOT checked on the CPU, and why: XProf's op-profile tool (and hlo_stats, roofline_model,
  overview_page) build their op table from ``OpStats.device_op_metrics_db``, which XProf fills only
  from ``/device:GPU:*`` / ``/device:TPU:*`` planes (xprof/convert/xplane_to_op_stats.cc,
  ``ConvertXSpaceToOpStats``; op_stats_to_op_profile.cc reads only that table). A CPU trace has only
  ``/host:CPU``, whose XLA thunk events (which do carry ``hlo_op``/``hlo_module``) go to the host
  table, and that one only takes TensorFlow ops: framework_op_stats shows a lone IDLE row. So on a
  CPU trace the op profile opens with ``deviceType`` ``CPU_ONLY`` and an empty tree (xprof 2.24).
  The test asserts that it opens and says CPU_ONLY, and that if its tree ever names ops, the
  module's entry ops are among them; it cannot require a non-empty tree without a device plane.

* A fabricated GPU record (tests/labs/synthetic.py): its trace viewer shows the ``/device:GPU``
  plane and the op's module on it, and its op profile opens with ``deviceType`` ``GPU`` (the
  fabricated events lack the kernel details XProf's GPU converter needs, so it names no HLO op:
  adding an ``hlo_op`` stat alone still gives only IDLE, tried with xprof 2.24.2). This is the only check that XProf shows
  a device plane from what `drill xprof` lays out, which no CPU run can give.
"""

from __future__ import annotations

import contextlib
import gzip
import json
import os
import re
import socket
import statistics
import subprocess
import sys
import time
import urllib.parse
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest
from click.testing import CliRunner

from drills.cli import cli
from labs.measure import profile
from labs.records import folder as records
from labs.measure.ops import OPS, SEED_OPS
from tests.conftest import bound, run_drill
from tests.labs import synthetic

pytestmark = pytest.mark.slow

# xprof's own command, as `drill xprof` prints it (it binds every interface; the test talks to 127.0.0.1).
XPROF = Path(sys.executable).with_name("xprof")
START_TIMEOUT_S = bound(90)  # XProf's start-up (imports, gRPC server)
REQUEST_TIMEOUT_S = bound(60)  # one tool's conversion of one small trace
CPU_REPS = 3  # timed calls per trace: 4 markers, the first dropped, as the record does
# An opcode the op's compiled module must hold (anywhere, fused computations included).
OP_OPCODE = {"matmul": "dot", "skinny_matmul": "dot", "add": "add", "softmax": "exponential",
             "reduce_sum": "reduce"}
# Entry instructions that run no code of their own, so no trace event names them.
NO_THUNK_OPCODES = {"parameter", "constant", "tuple", "get-tuple-element", "bitcast"}
TIME_TOLERANCE_S = 2e-9  # XProf's trace viewer writes µs with 3 decimals (ns); float rounding on top


def _xprof_installed() -> None:
    try:
        import xprof  # noqa: F401
    except ImportError:
        if os.environ.get("CI"):
            pytest.fail("CI installs the test extra, xprof included")
        pytest.skip("xprof is not installed (the test extra installs it on Linux x86_64)")


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _get_bytes(port: int, path: str) -> bytes:
    with urllib.request.urlopen(f"http://127.0.0.1:{port}{path}", timeout=REQUEST_TIMEOUT_S) as resp:
        data = resp.read()
    return gzip.decompress(data) if data[:2] == b"\x1f\x8b" else data


def _get(port: int, path: str):
    return json.loads(_get_bytes(port, path))


@contextlib.contextmanager
def _xprof(logdir: Path, log_path: Path) -> Iterator[int]:
    """Serve ``logdir`` with the real XProf; yield its HTTP port once the run list answers. The server
    is stopped and its log closed on the way out, whatever happened."""
    port, grpc = _free_port(), _free_port()
    with open(log_path, "wb") as log:  # a file, not a pipe: XProf logs every request
        server = subprocess.Popen([str(XPROF), f"--logdir={logdir}", f"--port={port}", f"--grpc_port={grpc}"],
                                  stdout=log, stderr=subprocess.STDOUT)
        try:
            deadline = time.monotonic() + START_TIMEOUT_S
            while True:
                try:
                    _get(port, "/data/plugin/profile/runs")
                    break
                except OSError:
                    assert server.poll() is None, log_path.read_text(errors="replace")[-2000:]
                    assert time.monotonic() < deadline, f"XProf did not start within {START_TIMEOUT_S} s"
                    time.sleep(0.5)
            yield port
        finally:
            server.terminate()
            try:
                server.wait(bound(20))
            except subprocess.TimeoutExpired:
                server.kill()
                server.wait()


def _lay_out(record_path: Path, logdir: Path) -> None:
    res = CliRunner().invoke(cli, ["xprof", str(record_path), "--logdir", str(logdir)])
    assert res.exit_code == 0, res.output


def _tree_names(node: dict) -> set[str]:
    names = {str(node.get("name", ""))}
    for child in node.get("children") or []:
        names |= _tree_names(child)
    return names


def _entry_ops(module_text: str) -> set[str]:
    """The names of the entry computation's instructions that run code, from HLO text."""
    entry = module_text[module_text.index("\nENTRY ") + 1:]
    entry = entry[:entry.index("\n}")]
    ops = set()
    for line in entry.splitlines()[1:]:
        found = re.match(r"\s*(?:ROOT\s+)?%?([\w.\-]+)\s*=\s*.*?\s([a-z][\w\-]*)\(", line)
        assert found, line
        if found.group(2) not in NO_THUNK_OPCODES:
            ops.add(found.group(1))
    return ops


def _spans_per_marker_s(events: list[dict], module: str, entry_ops: set[str], run: str) -> list[float]:
    """Seconds from the first of ``entry_ops`` to the end of the last inside each of the lab's markers
    around ``module``'s calls, in call order, from XProf's trace-viewer events (µs); asserts that each
    marker holds each entry op exactly once."""
    prefix = f"{profile.MARKER_PREFIX} {module} "
    markers = sorted((e for e in events if str(e.get("name", "")).startswith(prefix)),
                     key=lambda e: int(e["name"][len(prefix):]))
    assert len(markers) == CPU_REPS + 1, (run, [m["name"] for m in markers])
    hlo_events = [e for e in events if e.get("ph") == "X" and e.get("name") in entry_ops]
    spans_s = []
    for marker in markers:
        start_us, end_us = marker["ts"], marker["ts"] + marker["dur"]
        inside = [e for e in hlo_events if e["ts"] < end_us and e["ts"] + e["dur"] > start_us]
        assert sorted(e["name"] for e in inside) == sorted(entry_ops), (run, marker["name"], inside)
        spans_s.append((max(e["ts"] + e["dur"] for e in inside) - min(e["ts"] for e in inside)) * 1e-6)
    return spans_s


@pytest.fixture(scope="module")
def cpu_record(tmp_path_factory) -> Path:
    """A record (and its traces) from the real CPU lab, predictions given so it is complete."""
    root = tmp_path_factory.mktemp("xprof-cpu")
    preds = root / "p.yaml"
    preds.write_text("".join(f"{op}: 10us\n" for op in SEED_OPS))
    res = run_drill("lab", "--size", "128", "--reps", str(CPU_REPS), "--out", str(root / "bench"), "--json",
                    "--predictions", str(preds), timeout=600)
    assert res.returncode == 0, res.stderr[-2000:]
    return Path(json.loads(res.stdout)["path"])


def test_xprof_lists_a_real_cpu_runs_hlo_ops_with_the_records_times(tmp_path, cpu_record):
    _xprof_installed()
    record = json.loads(cpu_record.read_text())
    rows = {row["op"]: row for row in record["ops"]}
    logdir = tmp_path / "logdir"
    _lay_out(cpu_record, logdir)
    with _xprof(logdir, tmp_path / "xprof.log") as port:
        runs = set(_get(port, "/data/plugin/profile/runs"))
        for op in SEED_OPS:
            module = OPS[op].module_name()
            measured = rows[op]["measured"]
            assert measured["measured_from"] == "device", measured  # the times the traces must give back
            for k in range(1, measured["traces"] + 1):
                run = f"{op}-trace-{k}"
                assert run in runs, (run, sorted(runs))
                q = f"run={urllib.parse.quote(run)}"
                tools = _get(port, f"/data/plugin/profile/run_tools?{q}")
                assert {"trace_viewer@", "graph_viewer", "op_profile"} <= set(tools), tools
                (host,) = _get(port, f"/data/plugin/profile/hosts?{q}&tag=trace_viewer@")
                q += f"&host={urllib.parse.quote(host['hostname'])}"

                # The graph viewer holds the compiled module, and it computes the op.
                modules = _get_bytes(port, f"/data/plugin/profile/module_list?{q}").decode().split(",")
                listed = [m for m in modules if re.sub(r"\(\d*\)$", "", m) == module]  # "jit_lab_add(54)"
                assert len(listed) == 1, (run, modules)
                text = _get_bytes(port, f"/data/plugin/profile/data?{q}&tag=graph_viewer"
                                        f"&module_name={urllib.parse.quote(listed[0])}&type=short_txt").decode()
                assert text.startswith(f"HloModule {module},"), text[:200]
                assert f" {OP_OPCODE[op]}(" in text, (op, text)
                entry_ops = _entry_ops(text)
                assert entry_ops, text

                # The trace viewer lists those ops in each timed call, and their spans are the record's times.
                events = _get(port, f"/data/plugin/profile/data?{q}&tag=trace_viewer@")["traceEvents"]
                spans_s = _spans_per_marker_s(events, module, entry_ops, run)
                timed_s = spans_s[1:]  # the lab drops each trace's first call
                assert statistics.median(timed_s) == pytest.approx(measured["device_trace_medians_s"][k - 1],
                                                                   abs=TIME_TOLERANCE_S), (run, timed_s)
                for seconds in timed_s:
                    assert any(abs(seconds - r) <= TIME_TOLERANCE_S for r in measured["device_runs_s"]), \
                        (run, seconds, measured["device_runs_s"])

                # The op profile opens and knows the trace is CPU-only; it lists no op without a device
                # plane (see the docstring), and any op it does list must include the module's.
                op_profile = _get(port, f"/data/plugin/profile/data?{q}&tag=op_profile")
                assert op_profile.get("deviceType") == "CPU_ONLY", sorted(op_profile)
                assert "byProgram" in op_profile, sorted(op_profile)
                named = set().union(*(_tree_names(tree) for key, tree in op_profile.items()
                                      if key.startswith("by") and isinstance(tree, dict)))
                named -= {"", "by_program", "by_category", "by_provenance"}
                if named:
                    assert entry_ops <= named, (run, entry_ops, sorted(named))


def test_xprof_shows_a_gpu_records_device_plane_and_opens_its_op_profile(tmp_path):
    _xprof_installed()
    path = records.save_run(synthetic.record(tmp_path), tmp_path / "bench", "lab-0.1-gpu")
    logdir = tmp_path / "logdir"
    _lay_out(path, logdir)
    with _xprof(logdir, tmp_path / "xprof.log") as port:
        runs = _get(port, "/data/plugin/profile/runs")
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
            planes = [str((e.get("args") or {}).get("name", "")) for e in trace["traceEvents"] if e.get("ph") == "M"]
            assert any("/device:GPU" in n for n in planes), ("the device plane is shown", planes[:10])
            # The op profile opens the run as a GPU's (the device plane counted); the fabricated events lack
            # the kernel details XProf's GPU converter needs, so it names no HLO op (only IDLE).
            op_profile = _get(port, f"/data/plugin/profile/data?run={run}&tag=op_profile&host={host['hostname']}")
            assert "byProgram" in op_profile and op_profile.get("deviceType") == "GPU", sorted(op_profile)

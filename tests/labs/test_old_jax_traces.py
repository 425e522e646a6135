"""jax 0.4.30 on a CPU (a real trace recorded by the lab on this machine, matmul at N=256, 3 timed runs
+1 dropped): the XLA runtime threads hold only zero-duration instants (ThreadpoolListener::StartRegion
...), which are not device time; the real execution is TfrtCpuExecutable::ExecuteHelper on the calling
thread. Pure Python (labs.measure.xplane): no jax needed."""

import gzip
from pathlib import Path

from labs.measure import profile

TRACE = Path(__file__).with_name("traces") / "jax-0.4.30-cpu-matmul-n256-reps3.xplane.pb.gz"
MODULE = "jit_lab_matmul"


def _unpack(tmp_path: Path) -> Path:
    target = tmp_path / "t" / "plugins" / "profile" / "run" / "host.xplane.pb"
    target.parent.mkdir(parents=True)
    target.write_bytes(gzip.decompress(TRACE.read_bytes()))
    return tmp_path / "t"


def test_the_runtime_threads_hold_only_instants_there(tmp_path):
    space = profile.load(profile.trace_files(_unpack(tmp_path))[-1], reader="xplane")
    runtime = profile.collect_cpu_runtime_events(space)
    assert runtime and all(e.end_ns == e.start_ns for e in runtime)
    assert not profile.collect_events(space)  # no event names its module on this jax


def test_the_real_execution_events_give_device_time(tmp_path):
    folder = _unpack(tmp_path)
    times = profile.module_times(folder, MODULE, expected_runs=4, reader="xplane")
    assert times.uncertain == "" and "ExecuteHelper on the calling thread" in times.grouping
    assert len(times.run_seconds) == 3 and all(1e-5 < s < 0.1 for s in times.run_seconds)
    # each run lies inside its step marker: device time never exceeds the call's own marker
    space = profile.load(profile.trace_files(folder)[-1], reader="xplane")
    markers = profile.collect_markers(space, MODULE)[1:]
    assert all(s <= (m.end_ns - m.start_ns) * 1e-9 for s, m in zip(times.run_seconds, markers))


def test_instants_alone_are_never_taken_as_device_time(tmp_path, monkeypatch):
    monkeypatch.setattr(profile, "collect_cpu_execute_events", lambda space: [])
    times = profile.module_times(_unpack(tmp_path), MODULE, expected_runs=4, reader="xplane")
    assert times.run_seconds == [] and "zero-duration instants" in times.uncertain

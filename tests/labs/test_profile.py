"""Reading device time from trace planes: TPU, GPU and CPU layouts, built as plain objects."""

from types import SimpleNamespace as NS

import pytest

from labs.measure import profile


def ev(name, start, dur, **stats):
    return NS(name=name, start_ns=start, end_ns=start + dur, duration_ns=dur, stats=list(stats.items()))


def line(name, *events):
    return NS(name=name, events=list(events))


def plane(name, *lines):
    return NS(name=name, lines=list(lines))


def space(*planes):
    return NS(planes=list(planes))


def test_tpu_uses_the_xla_modules_line():
    prof = space(
        plane("/host:CPU", line("python", ev("PjitFunction(lab_add)", 0, 999))),
        plane("/device:TPU:0",
              line("XLA Modules", ev("jit_lab_add(42)", 100, 30), ev("jit_lab_add(42)", 200, 20),
                   ev("jit_other(7)", 300, 5)),
              line("XLA Ops", ev("fusion", 100, 29, hlo_module="jit_lab_add"))))
    events = profile.collect_events(prof)
    assert [(e.module, e.end_ns - e.start_ns) for e in events] == [
        ("jit_lab_add", 30), ("jit_lab_add", 20), ("jit_other", 5)]


def marker(module, call, start, dur):
    return ev(profile.marker_name(module, call), start, dur)


def test_gpu_kernels_without_run_ids_group_by_step_markers_with_stray_and_interleaved_events():
    m = "jit_lab_softmax"
    kernels = [ev("k1", 10, 10, hlo_module=m), ev("k2", 22, 5, hlo_module=m),
               ev("other", 30, 40, hlo_module="jit_other"),  # another module interleaved: not ours
               ev("k1", 110, 11, hlo_module=m), ev("k2", 123, 6, hlo_module=m),
               ev("k1", 150, 3, hlo_module=m),  # a stray of our module outside every step marker
               ev("k1", 210, 9, hlo_module=m), ev("k2", 221, 5, hlo_module=m)]
    prof = space(plane("/host:CPU", line("python", marker(m, 0, 0, 40), marker(m, 1, 100, 40),
                                         marker(m, 2, 200, 40)),
                       line("t", ev("Thunk", 0, 5, hlo_module=m))),
                 plane("/device:GPU:0", line("Stream #13", *kernels)))
    events = [e for e in profile.collect_events(prof) if e.module == m]
    assert len(events) == 7  # the host thunk is not device time; the other module is filtered out
    g = profile.group_runs(events, profile.collect_markers(prof, m), expected_runs=3)
    assert g.how == "step markers" and g.uncertain == "" and g.stray == 1
    assert g.spans == pytest.approx([17e-9, 19e-9, 16e-9])
    # Counting events would have put the stray into a run: 7 events do not split into 3 runs at all,
    # and with one event fewer the "split by count" answer would be wrong; markers do not care.


def test_a_marker_without_events_makes_the_grouping_uncertain_not_wrong():
    m = "jit_lab_add"
    events = [profile.Event(m, None, 10, 20), profile.Event(m, None, 210, 220)]
    markers = [profile.Marker(0, 0, 50), profile.Marker(1, 100, 150), profile.Marker(2, 200, 250)]
    g = profile.group_runs(events, markers, expected_runs=3)
    assert g.spans == [] and "1 of 3 step markers hold no event" in g.uncertain
    g = profile.group_runs(events, markers[:2], expected_runs=3)
    assert g.spans == [] and g.uncertain == "2 step markers for 3 calls"


def test_without_markers_or_run_ids_there_is_no_device_time():
    events = [profile.Event("m", None, 0, 5), profile.Event("m", None, 10, 15), profile.Event("m", None, 20, 25)]
    g = profile.group_runs(events, [], expected_runs=3)
    assert g.spans == [] and "no step markers" in g.uncertain
    assert profile.group_runs([], [], expected_runs=3).uncertain == "no event of the module in the trace"


def test_cpu_thunks_group_by_run_id_across_threads_when_markers_are_missing():
    prof = space(plane("/host:CPU",
                       line("worker-1", ev("fusion", 0, 50, hlo_module="jit_lab_add", run_id=1),
                            ev("fusion", 100, 40, hlo_module="jit_lab_add", run_id=2)),
                       line("worker-2", ev("fusion.1", 10, 60, hlo_module="jit_lab_add", run_id=1),
                            ev("ignored", 0, 1))))
    events = profile.collect_events(prof)
    g = profile.group_runs(events, [], expected_runs=2)
    assert g.how == "run_id" and g.spans == pytest.approx([70e-9, 40e-9])  # run 1 spans 0..70
    wrong = profile.group_runs(events, [], expected_runs=3)
    assert wrong.spans == [] and wrong.uncertain == "2 run ids for 3 calls"


def test_module_names_match_clones_but_not_prefixes():
    assert profile._same_module("jit_lab_add", "jit_lab_add")
    assert profile._same_module("jit_lab_add.1", "jit_lab_add")
    assert profile._same_module("jit_lab_add_spmd", "jit_lab_add")
    assert not profile._same_module("jit_lab_skinny_matmul", "jit_lab_matmul")
    assert not profile._same_module("jit_lab_addx", "jit_lab_add")


def test_module_times_without_a_trace_says_so(tmp_path):
    times = profile.module_times(tmp_path, "jit_lab_add", 3)
    assert times.run_seconds == [] and times.uncertain == "no trace file"


def test_xprof_layout_gunzips_each_trace_where_xprof_looks(tmp_path):
    """XProf reads LOGDIR/plugins/profile/RUN/HOST.xplane.pb, uncompressed (it finds no .gz)."""
    from click.testing import CliRunner

    from drills.cli import cli
    from labs.records import folder as records
    from labs.measure import xplane
    from tests.labs import synthetic

    path = records.save_run(synthetic.record(tmp_path), tmp_path / "bench", "lab-0.1-gpu")
    res = CliRunner().invoke(cli, ["xprof", path.name, "--bench", str(path.parent), "--logdir", str(tmp_path / "x")])
    assert res.exit_code == 0, res.output
    files = sorted((tmp_path / "x" / "plugins" / "profile").glob("*/host.xplane.pb"))
    # five ops, their five fixed-cost probes and the calibration's matmul and copy, three traces each
    assert len(files) == 36 and files[0].parent.name == "add-trace-1"
    assert (tmp_path / "x" / "plugins" / "profile" / "fixed_cost-add-trace-1" / "host.xplane.pb").is_file()
    assert any(p.name.startswith("/device:GPU") for p in xplane.parse(files[0].read_bytes()).planes)
    assert res.output.splitlines()[-1] == f"xprof --logdir={tmp_path / 'x'} --port=6006"
    assert "drill xprof" in profile.xprof_hint(tmp_path)


def _saved_with_trace_dir(tmp_path, trace_dir):
    """A saved synthetic record whose ``trace_dir`` is changed to ``trace_dir``."""
    import json

    from labs.records import folder as records
    from tests.labs import synthetic

    path = records.save_run(synthetic.record(tmp_path), tmp_path / "bench", "lab-0.1-gpu")
    data = json.loads(path.read_text())
    data["trace_dir"] = str(trace_dir)
    path.write_text(json.dumps(data))
    return path


def test_xprof_refuses_a_trace_folder_outside_the_records_folder(tmp_path):
    """A record naming a folder elsewhere (``/usr``, another run's) is refused in one line, unread."""
    import shutil

    from click.testing import CliRunner

    from drills.cli import cli

    path = _saved_with_trace_dir(tmp_path, "placeholder")
    outside = tmp_path / "elsewhere"
    shutil.copytree(path.parent / "traces", outside)
    for where in (next(outside.iterdir()), "../elsewhere"):
        data = path.read_text().replace('"placeholder"', f'"{where}"')
        path.with_name("named.json").write_text(data)
        res = CliRunner().invoke(cli, ["xprof", "named.json", "--bench", str(path.parent),
                                       "--logdir", str(tmp_path / "x")])
        assert res.exit_code == 1, res.output
        assert len(res.output.strip().splitlines()) == 1 and "outside" in res.output, res.output
        assert not (tmp_path / "x" / "plugins").exists()


def test_xprof_walks_a_trace_folder_only_so_far(tmp_path, monkeypatch):
    """The walk stops after a bounded number of entries with one line, and never goes deeper than
    a record's layout (a trace-K folder far down is not read)."""
    from click.testing import CliRunner

    from drills.cli import cli

    path = _saved_with_trace_dir(tmp_path, "traces/big")
    big = path.parent / "traces" / "big"
    (big / "a" / "b" / "c" / "d" / "trace-1").mkdir(parents=True)
    for i in range(30):
        (big / f"f{i}").write_text("")
    args = ["xprof", path.name, "--bench", str(path.parent), "--logdir", str(tmp_path / "x")]
    res = CliRunner().invoke(cli, args)
    assert res.exit_code == 2 and "no traces under" in res.output, res.output
    assert profile.trace_folders(big) == []
    monkeypatch.setattr(profile, "XPROF_MAX_ENTRIES", 20)
    res = CliRunner().invoke(cli, args)
    assert res.exit_code == 1, res.output
    assert len(res.output.strip().splitlines()) == 1 and "more than 20 entries" in res.output, res.output


def test_an_accelerator_trace_without_device_events_gives_none_not_host_launch_times():
    prof = space(plane("/host:CPU", line("t", ev("Thunk", 0, 5, hlo_module="jit_lab_add", run_id=1))),
                 plane("/device:GPU:0", line("Stream #7", ev("memcpy", 0, 3))))
    assert profile.collect_events(prof) == []


def test_program_ids_appended_to_module_names_are_dropped():
    prof = space(plane("/device:GPU:0", line("Stream #7", ev("k", 0, 3, hlo_module="jit_lab_add(12)"))))
    assert profile.collect_events(prof)[0].module == "jit_lab_add"


def test_describe_summarizes_a_real_trace_plane_by_plane(tmp_path):
    """A saved CPU trace (jax 0.10.2) laid out as the profiler writes it: one summary per plane, each line
    with its event count and its first events (name, duration, stats as text)."""
    import shutil
    from pathlib import Path

    saved = Path(__file__).parent / "traces" / "jax-0.10.2-cpu-softmax-n256-reps3.xplane.pb.gz"
    run = tmp_path / "plugins" / "profile" / "run"
    run.mkdir(parents=True)
    shutil.copy(saved, run / "host.xplane.pb.gz")
    summary = profile.describe(tmp_path, max_events=2)
    assert summary["trace"] == str(run / "host.xplane.pb.gz")
    planes = summary["planes"]
    assert any(p["plane"].startswith("/host:") for p in planes)
    lines = [line for p in planes for line in p["lines"]]
    assert lines and all(len(line["first"]) == min(2, line["events"]) for line in lines)
    assert any(line["events"] > 2 for line in lines)
    assert profile.describe(tmp_path / "empty") == {"trace": None}

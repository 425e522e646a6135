"""Reading device time from trace planes: TPU, GPU and CPU layouts, built as plain objects."""

from types import SimpleNamespace as NS

import pytest

from labs import profile


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


def test_gpu_kernels_without_run_ids_are_split_by_call_count():
    kernels = [ev("k1", 0, 10, hlo_module="jit_lab_softmax", program_id=3),
               ev("k2", 12, 5, hlo_module="jit_lab_softmax", program_id=3),
               ev("k1", 100, 11, hlo_module="jit_lab_softmax", program_id=3),
               ev("k2", 113, 6, hlo_module="jit_lab_softmax", program_id=3),
               ev("k1", 200, 9, hlo_module="jit_lab_softmax", program_id=3),
               ev("k2", 211, 5, hlo_module="jit_lab_softmax", program_id=3)]
    prof = space(plane("/host:CPU", line("t", ev("Thunk", 0, 5, hlo_module="jit_lab_softmax"))),
                 plane("/device:GPU:0", line("Stream #13", *kernels)))
    events = profile.collect_events(prof)
    assert len(events) == 6  # the host thunk is not device time
    spans, how = profile.group_runs(events, expected_runs=3)
    assert how == "split by count"
    assert spans == pytest.approx([17e-9, 19e-9, 16e-9])


def test_cpu_thunks_group_by_run_id_across_threads():
    prof = space(plane("/host:CPU",
                       line("worker-1", ev("fusion", 0, 50, hlo_module="jit_lab_add", run_id=1),
                            ev("fusion", 100, 40, hlo_module="jit_lab_add", run_id=2)),
                       line("worker-2", ev("fusion.1", 10, 60, hlo_module="jit_lab_add", run_id=1),
                            ev("ignored", 0, 1))))
    events = profile.collect_events(prof)
    spans, how = profile.group_runs(events, expected_runs=None)
    assert how == "run_id" and spans == pytest.approx([70e-9, 40e-9])  # run 1 spans 0..70


def test_too_few_events_give_no_device_time():
    events = [profile.Event("m", None, 0, 5)]
    assert profile.group_runs(events, expected_runs=3) == ([], "1 events for 3 runs")
    assert profile.group_runs([], expected_runs=3) == ([], "no events")


def test_module_names_match_clones_but_not_prefixes():
    assert profile._same_module("jit_lab_add", "jit_lab_add")
    assert profile._same_module("jit_lab_add.1", "jit_lab_add")
    assert profile._same_module("jit_lab_add_spmd", "jit_lab_add")
    assert not profile._same_module("jit_lab_skinny_matmul", "jit_lab_matmul")
    assert not profile._same_module("jit_lab_addx", "jit_lab_add")


def test_module_times_without_a_trace_says_so(tmp_path):
    times = profile.module_times(tmp_path, "jit_lab_add", 3)
    assert times.run_seconds == [] and times.grouping == "no trace file"


def test_xprof_hint_names_the_directory(tmp_path):
    assert str(tmp_path) in profile.xprof_hint(tmp_path) and "xprof --logdir" in profile.xprof_hint(tmp_path)


def test_an_accelerator_trace_without_device_events_gives_none_not_host_launch_times():
    prof = space(plane("/host:CPU", line("t", ev("Thunk", 0, 5, hlo_module="jit_lab_add", run_id=1))),
                 plane("/device:GPU:0", line("Stream #7", ev("memcpy", 0, 3))))
    assert profile.collect_events(prof) == []


def test_program_ids_appended_to_module_names_are_dropped():
    prof = space(plane("/device:GPU:0", line("Stream #7", ev("k", 0, 3, hlo_module="jit_lab_add(12)"))))
    assert profile.collect_events(prof)[0].module == "jit_lab_add"

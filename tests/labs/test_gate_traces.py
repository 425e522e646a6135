"""GATE 00 on synthetic records whose traces lie about what they ran or when: the module in an op's
trace is the one compiled for that op's shapes at N (never a probe's or another op's), and the traces'
times fall inside their measurement's recorded window, in order."""

import shutil

import pytest

from labs.gate import verdict as gate, verify
from labs.records import folder as records
from labs.measure.ops import OPS
from tests.labs import fabricate, synthetic

N, DTYPE = 4096, "bf16"
PROBE_SIZE = 128  # the fixed-cost probes' edge at N=4096 (labs.measure.probes.fixed_cost_edge)


def _row(rec, op):
    (row,) = [r for r in rec["ops"] if r["op"] == op]
    return row


def _rewrite(tmp_path, rec, op, **written):
    """The op's traces written again with the same runs: by default its own module at N inside its
    own window, as the lab writes them; ``written`` changes what they claim (fabricate.write_traces)."""
    m = _row(rec, op)["measured"]
    root = tmp_path / "bench" / m["trace_dir"]
    shutil.rmtree(root)
    options = {"parameters": list(verify.op_parameters(op, N, DTYPE)),
               "window_unix_ns": (m["traced_from_unix_ns"], m["traced_until_unix_ns"]), **written}
    fabricate.write_for_measurement(root, "gpu", OPS[op].module_name(), m["device_runs_s"], m["traces"], **options)


def _row_of(tmp_path, rec, edit=None):
    path = records.save_run(rec, tmp_path / "bench", "lab-0.1-gpu")
    if edit is not None:  # an edit made through drill's own update (the ledger vouches for the new bytes)
        records.update(path, synthetic.json_edit(edit))
    (row,) = gate.evaluate(tmp_path / "bench").rows
    return row


def _why(tmp_path, rec, edit=None):
    row = _row_of(tmp_path, rec, edit)
    assert not row.counted
    return row.why_not


def _trace_lines(why):
    return [w for w in why if w.startswith(("traces:", "trace times:"))]


def test_traces_written_as_the_lab_writes_them_count(tmp_path):
    """The control: each op's module at N, in its own window; the record counts."""
    rec = synthetic.record(tmp_path)
    for op in ("matmul", "add"):
        _rewrite(tmp_path, rec, op)
    row = _row_of(tmp_path, rec)
    assert row.counted and not _trace_lines(row.why_not), row.why_not


# -- the module in an op's trace is the one compiled for its shapes at N -------------------------------

def test_an_ops_trace_of_its_module_compiled_at_the_probes_size_never_counts(tmp_path):
    rec = synthetic.record(tmp_path)
    _rewrite(tmp_path, rec, "matmul", parameters=list(verify.op_parameters("matmul", PROBE_SIZE, DTYPE)))
    why = _why(tmp_path, rec)
    assert any(w.startswith("traces: matmul: cannot re-derive: trace-1: its jit_lab_matmul ran program 7, compiled "
                            "for bf16[128,128], bf16[128,128], not this measurement's bf16[4096,4096], "
                            "bf16[4096,4096]: another measurement's trace") for w in why), why


def test_the_program_the_events_ran_is_judged_when_the_trace_holds_both_sizes(tmp_path):
    """Both executables alive (the op's at N and its probe's): the events name which one ran."""
    rec = synthetic.record(tmp_path)
    at_n, small = (list(verify.op_parameters("matmul", n, DTYPE)) for n in (N, PROBE_SIZE))
    _rewrite(tmp_path, rec, "matmul", parameters=small, program_id=9, extra_modules=[(7, at_n)], ran_program_id=9)
    why = _why(tmp_path, rec)
    assert any("its jit_lab_matmul ran program 9, compiled for bf16[128,128]" in w for w in why), why


def test_the_program_the_events_ran_at_n_counts_beside_its_probes(tmp_path):
    rec = synthetic.record(tmp_path)
    at_n, small = (list(verify.op_parameters("matmul", n, DTYPE)) for n in (N, PROBE_SIZE))
    _rewrite(tmp_path, rec, "matmul", parameters=at_n, program_id=7, extra_modules=[(9, small)])
    row = _row_of(tmp_path, rec)
    assert row.counted and not _trace_lines(row.why_not), row.why_not


def test_events_that_name_no_listed_program_are_judged_by_the_modules_of_that_name(tmp_path):
    rec = synthetic.record(tmp_path)
    _rewrite(tmp_path, rec, "add", parameters=list(verify.op_parameters("add", PROBE_SIZE, DTYPE)), ran_program_id=3)
    why = _why(tmp_path, rec)
    assert any(w.startswith("traces: add: cannot re-derive: trace-1: its jit_lab_add was compiled for "
                            "bf16[128,128], bf16[128,128], not this measurement's") for w in why), why


def _retrace(tmp_path, m: dict, op: str, size: int) -> None:
    """Replace measurement ``m``'s traces with ``op``'s module compiled at ``size``, its times and window kept."""
    root = tmp_path / "bench" / m["trace_dir"]
    shutil.rmtree(root)
    fabricate.write_for_measurement(root, "gpu", OPS[op].module_name(), m["device_runs_s"], m["traces"],
                                    parameters=list(verify.op_parameters(op, size, DTYPE)),
                                    window_unix_ns=(m["traced_from_unix_ns"], m["traced_until_unix_ns"]))


def test_an_ops_trace_of_another_ops_module_never_counts(tmp_path):
    rec = synthetic.record(tmp_path)
    _retrace(tmp_path, _row(rec, "add")["measured"], "matmul", N)
    why = _why(tmp_path, rec)
    assert any(w.startswith("traces: add: cannot re-derive: trace-1: no event of the module in the trace")
               for w in why), why


def test_a_fixed_cost_probe_timed_from_a_trace_at_n_never_counts(tmp_path):
    rec = synthetic.record(tmp_path)
    _retrace(tmp_path, rec["probes"]["fixed_cost_by_op"]["softmax"]["measurement"], "softmax", N)
    why = _why(tmp_path, rec)
    assert any(w.startswith("traces: fixed cost softmax: cannot re-derive: trace-1: its jit_lab_softmax ran "
                            "program 7, compiled for bf16[4096,4096], not this measurement's bf16[128,128]")
               for w in why), why


# -- trace timestamps fall inside the measurement's recorded window, in order ------------------------

def test_traces_taken_outside_their_measurements_window_never_count(tmp_path):
    rec = synthetic.record(tmp_path)
    m = _row(rec, "add")["measured"]
    hour = 3600 * 10**9
    _rewrite(tmp_path, rec, "add", window_unix_ns=(m["traced_from_unix_ns"] + hour, m["traced_until_unix_ns"] + hour))
    why = _why(tmp_path, rec)
    assert any(w.startswith("traces: add: cannot re-derive: trace-1: it was taken at") and
               "outside its measurement's window" in w for w in why), why


def test_traces_out_of_their_order_never_count(tmp_path):
    rec = synthetic.record(tmp_path)
    root = tmp_path / "bench" / _row(rec, "softmax")["measured"]["trace_dir"]
    (root / "trace-1").rename(root / "swap")
    (root / "trace-2").rename(root / "trace-1")
    (root / "swap").rename(root / "trace-2")
    why = _why(tmp_path, rec)
    assert any(w.startswith("traces: softmax: cannot re-derive: trace-2: it began before trace-1 ended") for w in why), why


def test_events_outside_their_traces_own_session_never_count(tmp_path):
    rec = synthetic.record(tmp_path)
    _rewrite(tmp_path, rec, "reduce_sum", session_ns=500_000_000)  # the runs lie 1-3 s into each trace
    why = _why(tmp_path, rec)
    assert any(w.startswith("traces: reduce_sum: cannot re-derive: trace-1:") and
               "event(s) of the module lie outside the trace's own session" in w for w in why), why


def test_a_measurement_with_a_window_but_traces_that_do_not_say_when_never_counts(tmp_path):
    rec = synthetic.record(tmp_path)
    _rewrite(tmp_path, rec, "add", window_unix_ns=None)
    why = _why(tmp_path, rec)
    assert any(w.startswith("traces: add: cannot re-derive: trace-1: the trace does not say when it was taken")
               for w in why), why


def test_two_measurements_traced_at_overlapping_times_never_count(tmp_path):
    """The add's traces taken while the matmul was measured (its window edited to match)."""
    rec = synthetic.record(tmp_path)
    mm = _row(rec, "matmul")["measured"]
    window = (mm["traced_from_unix_ns"], mm["traced_until_unix_ns"])
    _rewrite(tmp_path, rec, "add", window_unix_ns=window)

    def claim(r):
        _row(r, "add")["measured"].update(traced_from_unix_ns=window[0], traced_until_unix_ns=window[1])
    why = _why(tmp_path, rec, claim)
    assert "trace times: the traces of matmul and add were taken at overlapping times: one measurement's traces " \
           "stand in for another's" in why, why
    assert not any(w.startswith("traces: add") for w in why), why  # each trace fits its (edited) window


def test_an_ops_traces_taken_before_the_measurement_began_never_count(tmp_path):
    """The op's traces are its probe's time: before the measurement began (the probes may be)."""
    rec = synthetic.record(tmp_path)
    probe = rec["probes"]["fixed_cost_by_op"]["add"]["measurement"]
    before = (probe["traced_until_unix_ns"] + 10**9, probe["traced_until_unix_ns"] + 100 * 10**9)
    _rewrite(tmp_path, rec, "add", window_unix_ns=before)

    def claim(r):
        _row(r, "add")["measured"].update(traced_from_unix_ns=before[0], traced_until_unix_ns=before[1])
    why = _why(tmp_path, rec, claim)
    assert any(w.startswith("trace times: add: its traces were taken before the measurement began") for w in why), why
    assert not any(w.startswith("trace times: fixed cost") for w in why), why


def test_traces_taken_after_the_record_was_saved_never_count(tmp_path):
    rec = synthetic.record(tmp_path)
    later = synthetic.unix_ns(runner_now()) + 86_400 * 10**9
    window = (later, later + synthetic.SLOT_NS)
    _rewrite(tmp_path, rec, "matmul", window_unix_ns=window)

    def claim(r):
        _row(r, "matmul")["measured"].update(traced_from_unix_ns=window[0], traced_until_unix_ns=window[1])
    why = _why(tmp_path, rec, claim)
    assert any(w.startswith("trace times: matmul: its traces were taken after the record was saved") for w in why), why


def runner_now():
    from labs.runner import utc_now

    return utc_now()


def test_a_record_that_predates_the_window_is_judged_by_its_traces_order_alone(tmp_path):
    """Records written before the lab kept each measurement's window have neither key: they still count."""
    rec = synthetic.record(tmp_path)
    for row in rec["ops"]:
        for key in ("traced_from_unix_ns", "traced_until_unix_ns"):
            del row["measured"][key]
    row = _row_of(tmp_path, rec)
    assert row.counted and not _trace_lines(row.why_not), row.why_not


def test_the_attack_an_op_given_copies_of_its_probes_traces_never_counts(tmp_path):
    """As the relabelling attack did: an op's traces replaced by its fixed-cost probe's (the same XLA
    module, the quietest real trace), copied into the op's own folder and the numbers set to match."""
    rec = synthetic.record(tmp_path)
    probe = rec["probes"]["fixed_cost_by_op"]["matmul"]["measurement"]
    own = tmp_path / "bench" / _row(rec, "matmul")["measured"]["trace_dir"]
    shutil.rmtree(own)
    shutil.copytree(tmp_path / "bench" / probe["trace_dir"], own)

    def borrow(r):
        m = _row(r, "matmul")["measured"]
        m.update({k: v for k, v in probe.items() if k in m and k != "trace_dir"})
    why = _why(tmp_path, rec, borrow)
    assert any(w.startswith("traces: matmul: cannot re-derive: trace-1: its jit_lab_matmul ran program 7, compiled "
                            "for bf16[128,128], bf16[128,128]") for w in why), why
    assert any(w.startswith("trace times: the traces of matmul and fixed cost matmul were taken at overlapping "
                            "times") for w in why), why
    assert any(w.startswith("trace times: matmul: its traces were taken before the measurement began")
               for w in why), why


@pytest.mark.parametrize("op", ["skinny_matmul", "reduce_sum"])
def test_op_parameters_are_the_ops_inputs(op):
    assert verify.op_parameters(op, N, DTYPE) == tuple((d, s) for s, d in OPS[op].inputs(N, DTYPE))
    assert verify.op_parameters(op, 4096.5, DTYPE) is None and verify.op_parameters(op, True, DTYPE) is None

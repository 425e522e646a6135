"""The compiled modules a trace names (labs.measure.hloproto), on the real CPU traces checked in and on
bytes written by hand: each module's name, program id and entry parameter shapes."""

from pathlib import Path

import pytest
from hypothesis import given, strategies as st

from labs.measure import hloproto, profile, xplane
from tests.labs import fabricate

TRACES = Path(__file__).with_name("traces")


def _modules(name: str) -> list[hloproto.CompiledModule]:
    space = xplane.parse(profile.read_trace_bytes(TRACES / name), max_events=profile.TRACE_MAX_FIELDS)
    return hloproto.compiled_modules(space)


@pytest.mark.parametrize("name,module,program_id,shapes", [
    ("jax-0.10.2-cpu-softmax-n256-reps3.xplane.pb.gz", "jit_lab_softmax", 22, "bf16[256,256]"),
    ("jax-0.5.2-cpu-softmax-n256-reps3.xplane.pb.gz", "jit_lab_softmax", 23, "bf16[256,256]"),
    ("jax-0.4.30-cpu-matmul-n256-reps3.xplane.pb.gz", "jit_lab_matmul", 16, "bf16[256,256], bf16[256,256]"),
])
def test_real_traces_name_the_lab_module_with_its_program_id_and_shapes(name, module, program_id, shapes):
    (found,) = [m for m in _modules(name) if m.name == module]
    assert found.program_id == program_id and hloproto.shape_text(found.parameters) == shapes


def test_the_timed_events_name_the_program_of_the_module_the_metadata_holds(tmp_path):
    """jax 0.10.2's CPU thunks carry program_id: the events ran exactly the listed module."""
    folder = tmp_path / "t" / "plugins" / "profile" / "run"
    folder.mkdir(parents=True)
    (folder / "host.xplane.pb.gz").write_bytes((TRACES / "jax-0.10.2-cpu-softmax-n256-reps3.xplane.pb.gz").read_bytes())
    times = profile.module_times(tmp_path / "t", "jit_lab_softmax", 4, reader="xplane")
    assert times.program_ids == (22,)
    assert [(m.program_id, m.parameters) for m in times.compiled] == [(22, (("bf16", (256, 256)),))]
    start, stop = times.session_unix_ns
    assert 0 < stop - start < 10**9 and all(0 <= a <= b <= stop - start for a, b in times.timeline)


dims = st.lists(st.integers(0, 2**40), max_size=4).map(tuple)
shapes = st.lists(st.tuples(st.sampled_from(["bf16", "f32", "int32"]), dims), max_size=4)


@given(shapes, st.integers(0, 2**31))
def test_written_program_shapes_read_back(parameters, program_id):
    proto = fabricate.hlo_proto("jit_x", program_id, parameters)
    assert hloproto.entry_parameters(proto) == tuple(parameters)


@given(st.binary(max_size=200))
def test_any_bytes_read_or_raise_xplane_error_only(data):
    try:
        result = hloproto.entry_parameters(data)
    except xplane.XPlaneError:
        return
    assert result is None or isinstance(result, tuple)


def test_a_proto_without_a_program_shape_has_unknown_parameters():
    assert hloproto.entry_parameters(b"") is None
    assert hloproto.shape_text(None) == "unknown shapes" and hloproto.shape_text(()) == "no parameters"


def test_names_carry_their_program_id():
    assert hloproto.split_program_id("jit_lab_add(42)") == ("jit_lab_add", 42)
    assert hloproto.split_program_id("jit_lab_add") == ("jit_lab_add", None)

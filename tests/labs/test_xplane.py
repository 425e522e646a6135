"""The fallback trace reader on real traces recorded by the lab on this CPU, and on malformed bytes.

tests/labs/traces/ holds two gzipped ``.xplane.pb`` files, each one trace of
``softmax`` at N=256 with 3 timed runs (+1 dropped), step markers included:
- jax-0.10.2-cpu-...: thunk events carry ``hlo_module`` and ``run_id``;
- jax-0.5.2-cpu-...: (jaxlib 0.5.1) no CPU event names its module.
"""

import gzip
import struct
from pathlib import Path

import pytest
from hypothesis import given, settings, strategies as st

from labs.measure import profile, xplane

TRACES = Path(__file__).with_name("traces")
NEW = "jax-0.10.2-cpu-softmax-n256-reps3.xplane.pb.gz"
OLD = "jax-0.5.2-cpu-softmax-n256-reps3.xplane.pb.gz"
MODULE = "jit_lab_softmax"


def unpack(name: str, tmp_path: Path) -> Path:
    """The trace laid out as jax writes it: <dir>/plugins/profile/<run>/<host>.xplane.pb."""
    folder = tmp_path / name
    target = folder / "plugins" / "profile" / "run" / "host.xplane.pb"
    target.parent.mkdir(parents=True)
    target.write_bytes(gzip.decompress((TRACES / name).read_bytes()))
    return folder


def flat(space) -> list[tuple]:
    return [(p.name, l.name, e.name, e.start_ns, e.duration_ns, e.end_ns, sorted(map(repr, e.stats)))
            for p in space.planes for l in p.lines for e in l.events]


@pytest.mark.parametrize("name", [NEW, OLD])
def test_the_fallback_reads_runs_from_real_traces(tmp_path, name):
    times = profile.module_times(unpack(name, tmp_path), MODULE, expected_runs=4, reader="xplane")
    assert times.uncertain == "" and times.grouping.startswith("step markers")
    assert len(times.run_seconds) == 3 and times.dropped_first
    assert all(1e-6 < s < 0.1 for s in times.run_seconds)
    if name == OLD:
        assert "XLA CPU runtime threads" in times.grouping
    # the wrong call count is caught, never papered over
    assert profile.module_times(unpack(name, tmp_path / "again"), MODULE, 5, reader="xplane").uncertain


@pytest.mark.slow
@pytest.mark.parametrize("name", [NEW, OLD])
def test_profiledata_and_the_fallback_give_the_same_events_and_numbers(tmp_path, name):
    import jax

    assert jax.profiler.ProfileData is not None, "the test venv's jax must have ProfileData (>= 0.7.1)"
    folder = unpack(name, tmp_path)
    path = profile.trace_files(folder)[-1]
    ours, theirs = flat(xplane.read_file(path)), flat(jax.profiler.ProfileData.from_file(str(path)))
    assert len(ours) > 50 and ours == theirs
    a = profile.module_times(folder, MODULE, 4, reader="xplane")
    b = profile.module_times(folder, MODULE, 4, reader="profiledata")
    assert a.run_seconds == b.run_seconds and a.grouping == b.grouping and len(a.run_seconds) == 3


# A minimal protobuf writer for hand-made cases the real traces lack.
def _varint(n: int) -> bytes:
    n &= (1 << 64) - 1
    out = bytearray()
    while True:
        byte = n & 0x7F
        n >>= 7
        out.append(byte | (0x80 if n else 0))
        if not n:
            return bytes(out)


def _f(number: int, value) -> bytes:
    if isinstance(value, bytes):
        return _varint(number << 3 | 2) + _varint(len(value)) + value
    if isinstance(value, float):
        return _varint(number << 3 | 1) + struct.pack("<d", value)
    return _varint(number << 3) + _varint(value)


def test_hand_made_plane_with_every_stat_kind_and_a_negative_offset():
    stat_md = lambda i, n: _f(5, _f(1, i) + _f(2, _f(1, i) + _f(2, n.encode())))  # noqa: E731
    event_md = _f(4, _f(1, 7) + _f(2, _f(1, 7) + _f(2, b"fusion")))
    stats = (_f(4, _f(1, 1) + _f(2, 2.5)) + _f(4, _f(1, 2) + _f(4, -3)) + _f(4, _f(1, 3) + _f(5, b"jit_x"))
             + _f(4, _f(1, 4) + _f(7, 1)) + _f(4, _f(1, 99) + _f(3, 1)))
    event = _f(1, 7) + _f(2, -1500) + _f(3, 2999) + stats
    line = _f(2, b"Stream #1") + _f(3, 1_000) + _f(4, event) + _f(9, 5)  # field 9: skipped
    plane = _f(1, 3) + _f(2, b"/device:GPU:0") + _f(3, line) + event_md + b"".join(
        stat_md(i, n) for i, n in [(1, "d"), (2, "i"), (3, "hlo_module"), (4, "ref")])
    space = xplane.parse(_f(1, plane) + _f(4, b"host"))
    (p,) = space.planes
    (e,) = p.lines[0].events
    assert p.name == "/device:GPU:0" and e.name == "fusion"
    assert e.start_ns == 1_000 - 1 and e.duration_ns == 2 and e.end_ns == 1_001  # C++ truncation
    assert e.stats == [("d", 2.5), ("i", -3), ("hlo_module", "jit_x"), ("ref", "d"), (None, None)]


@pytest.mark.parametrize("data, fragment", [
    (b"\x0a\x05ab", "runs past"), (b"\x0a", "truncated varint"), (b"\x0b", "wire type 3"),
    (b"\x0a\x02\x11\x00", "fixed-width"), (b"\x00", "field number 0"),
])
def test_malformed_bytes_raise_one_clear_error(data, fragment):
    with pytest.raises(xplane.XPlaneError, match=fragment):
        xplane.parse(data)


@settings(max_examples=300)
@given(st.binary(max_size=200))
def test_any_bytes_parse_or_raise_xplane_error_only(data):
    try:
        xplane.parse(data)
    except xplane.XPlaneError:
        pass


@settings(max_examples=50)
@given(st.integers(min_value=0, max_value=200_000))
def test_truncating_a_real_trace_never_reads_out_of_bounds(cut):
    data = gzip.decompress((TRACES / NEW).read_bytes())
    try:
        xplane.parse(data[:cut])
    except xplane.XPlaneError:
        pass

"""Fabricated profiler traces: XSpace protobufs written by hand, so synthetic records carry traces
that re-derive every device time (``labs.gate.verify``) on the claimed platform's device planes.

This is also the forgery the gate cannot detect (docs/gate.md, "what the gate cannot detect"): traces
made up to agree with everything a record claims. The wire format is the one ``labs.measure.xplane``
reads (xla/tsl/profiler/protobuf/xplane.proto).
"""

from __future__ import annotations

import gzip
from pathlib import Path

from labs.measure import profile


def _varint(n: int) -> bytes:
    n &= (1 << 64) - 1
    out = bytearray()
    while True:
        b = n & 0x7F
        n >>= 7
        if n:
            out.append(b | 0x80)
        else:
            out.append(b)
            return bytes(out)


def _int(number: int, value: int) -> bytes:
    return _varint(number << 3) + _varint(value)


def _len(number: int, payload: bytes) -> bytes:
    return _varint(number << 3 | 2) + _varint(len(payload)) + payload


def _str(number: int, text: str) -> bytes:
    return _len(number, text.encode("utf-8"))


def _stat_value(value: str | int | bytes) -> bytes:
    """An XStat's value: int64 (field 4), string (5) or bytes (6)."""
    if isinstance(value, bytes):
        return _len(6, value)
    if isinstance(value, int):
        return _int(4, value)
    return _str(5, value)


def _plane(name: str, lines: list[tuple[str, list[tuple[str, int, int, list[tuple[str, str]]]]]],
           stats: list[tuple[str, int | str]] = (), metadata: list[tuple[str, list[tuple[str, bytes]]]] = ()) -> bytes:
    """A plane: lines of events (name, start ns, duration ns, [(stat name, string value)]), the
    plane's own ``stats`` and event ``metadata`` with stats of their own (name, [(stat, value)])."""
    event_ids: dict[str, int] = {}
    stat_ids: dict[str, int] = {}
    body = _str(2, name)
    for line_name, events in lines:
        line = _str(2, line_name) + _int(3, 0)
        for ev_name, start_ns, duration_ns, ev_stats in events:
            eid = event_ids.setdefault(ev_name, len(event_ids) + 1)
            ev = _int(1, eid) + _int(2, start_ns * 1000) + _int(3, duration_ns * 1000)
            for key, value in ev_stats:
                sid = stat_ids.setdefault(key, len(stat_ids) + 1)
                ev += _len(4, _int(1, sid) + _stat_value(value))
            line += _len(4, ev)
        body += _len(3, line)
    for key, value in stats:
        sid = stat_ids.setdefault(key, len(stat_ids) + 1)
        body += _len(6, _int(1, sid) + _stat_value(value))
    described = {}
    for meta_name, meta_stats in metadata:
        eid = event_ids.setdefault(meta_name, len(event_ids) + 1)
        own = b""
        for key, value in meta_stats:
            sid = stat_ids.setdefault(key, len(stat_ids) + 1)
            own += _len(5, _int(1, sid) + _stat_value(value))
        described[meta_name] = own
    for name_, eid in event_ids.items():
        body += _len(4, _int(1, eid) + _len(2, _int(1, eid) + _str(2, name_) + described.get(name_, b"")))
    for name_, sid in stat_ids.items():
        body += _len(5, _int(1, sid) + _len(2, _int(1, sid) + _str(2, name_)))
    return body


# xla_data.proto PrimitiveType numbers of the lab's dtypes.
_ELEMENT_TYPE = {"bf16": 16, "f32": 11, "int32": 4}


def hlo_proto(module: str, program_id: int, parameters: list[tuple[str, tuple[int, ...]]]) -> bytes:
    """A minimal serialized HloProto: the module's name, id and entry parameters (its program shape)."""
    shapes = b"".join(_len(1, _int(2, _ELEMENT_TYPE[d]) + _len(3, b"".join(_varint(n) for n in dims)))
                      for d, dims in parameters)
    return _len(1, _str(1, module) + _len(4, shapes) + _int(5, program_id))


# A trace's session lasts this long (ns): the events of its runs lie inside (see ``xspace``).
SESSION_NS = 20_000_000_000


def xspace(platform: str, module: str, runs_ns: list[int], first_call: int = 0, *,
           parameters: list[tuple[str, tuple[int, ...]]] | None = None, program_id: int = 7,
           session_start_ns: int | None = None, ran_program_id: int | None = None,
           extra_modules: list[tuple[int, list[tuple[str, tuple[int, ...]]]]] = (),
           session_ns: int | None = None) -> bytes:
    """One trace: ``len(runs_ns)`` step markers (the first run is the one the lab drops), each
    around one device event of ``module`` lasting that run. ``parameters``: the module's entry
    shapes, written as the profiler does (a ``/host:metadata`` plane naming ``module(program_id)``
    with its HloProto, the events naming the program id); ``session_start_ns``: when the session
    began (Unix ns; a "Task Environment" plane with its start and stop, ``SESSION_NS`` apart, or
    ``session_ns``). ``ran_program_id``: the program the events name, when not ``program_id``;
    ``extra_modules``: more compiled modules of the same name, (program id, parameters) each."""
    markers, device = [], []
    t = 1_000_000 + 10_000_000 * first_call  # each trace of a measurement at its own times, as real ones are
    ran = program_id if ran_program_id is None else ran_program_id
    program = [("program_id", ran)] if parameters is not None else []
    for k, run in enumerate(runs_ns):
        markers.append((profile.marker_name(module, first_call + k), t, run + 200, []))
        device.append((f"{module}({ran})" if platform == "tpu" else "fusion", t + 100, run,
                       [] if platform == "tpu" else [("hlo_module", module), *program]))
        t += run + 10_000
    host = _plane("/host:CPU", [("python", markers)])
    if platform == "gpu":
        dev = _plane("/device:GPU:0", [("Stream #13", device)])
    elif platform == "tpu":
        dev = _plane("/device:TPU:0", [("XLA Modules", device)])
    else:  # the CPU's XLA thunks run on host threads and carry the module and a run id
        dev = b""
        host = _plane("/host:CPU", [("python", markers),
                                    ("tf_XLACpu", [(n, s, d, [("hlo_module", module), ("run_id", str(i)), *program])
                                                   for i, (n, s, d, _) in enumerate(device)])])
    planes = [host, *([dev] if dev else [])]
    if parameters is not None:
        modules = [(program_id, parameters), *extra_modules]
        planes.insert(0, _plane("/host:metadata", [], metadata=[
            (f"{module}({pid})", [("Hlo Proto", hlo_proto(module, pid, shapes))]) for pid, shapes in modules]))
    if session_start_ns is not None:
        planes.append(_plane("Task Environment", [], stats=[("profile_start_time", session_start_ns),
                                                            ("profile_stop_time",
                                                             session_start_ns + (session_ns or SESSION_NS))]))
    return b"".join(_len(1, p) for p in planes)


def session_starts(window_unix_ns: tuple[int, int], traces: int) -> list[int]:
    """Where ``traces`` sessions of ``SESSION_NS`` start, one after another inside the window."""
    step = (window_unix_ns[1] - window_unix_ns[0]) // max(1, traces)
    if step <= SESSION_NS:
        raise ValueError(f"a window of {window_unix_ns[1] - window_unix_ns[0]} ns holds no {traces} sessions")
    return [window_unix_ns[0] + k * step + 1000 for k in range(traces)]


def write_traces(root: Path, platform: str, module: str, per_trace_ns: list[list[int]], *,
                 parameters: list[tuple[str, tuple[int, ...]]] | None = None, program_id: int = 7,
                 window_unix_ns: tuple[int, int] | None = None, **more) -> None:
    """``root/trace-k/plugins/profile/RUN/host.xplane.pb.gz``, one per trace, each with a dropped
    first run of 1 µs before the given runs; ``parameters``, ``program_id``: the compiled module
    the traces name; ``window_unix_ns``: their sessions lie one after another inside it (``more``:
    ``xspace``'s other options)."""
    starts = session_starts(window_unix_ns, len(per_trace_ns)) if window_unix_ns else [None] * len(per_trace_ns)
    for k, (runs, start) in enumerate(zip(per_trace_ns, starts), start=1):
        folder = Path(root) / f"trace-{k}" / "plugins" / "profile" / "2026_11_29_12_00_00"
        folder.mkdir(parents=True, exist_ok=True)
        data = xspace(platform, module, [1000, *runs], first_call=100 * k, parameters=parameters,
                      program_id=program_id, session_start_ns=start, **more)
        (folder / "host.xplane.pb.gz").write_bytes(gzip.compress(data, mtime=0))


def write_for_measurement(root: Path, platform: str, module: str, runs_s: list[float], traces: int,
                          **written) -> None:
    """Traces that give exactly the sorted ``runs_s`` (integer nanoseconds), dealt across ``traces``
    (``written``: ``write_traces``'s module and time options)."""
    ordered = sorted(runs_s)
    ns = [round(s * 1e9) for s in ordered]
    write_traces(root, platform, module, [ns[k::traces] for k in range(traces)], **written)

"""Fabricated profiler traces: XSpace protobufs written by hand, so synthetic records carry traces
that re-derive every device time (``labs.verify``) on the claimed platform's device planes.

This is also the forgery the gate cannot detect (docs/gate.md, "what the gate cannot detect"): traces
made up to agree with everything a record claims. The wire format is the one ``labs.xplane``
reads (xla/tsl/profiler/protobuf/xplane.proto).
"""

from __future__ import annotations

import gzip
from pathlib import Path

from labs import profile


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


def _plane(name: str, lines: list[tuple[str, list[tuple[str, int, int, list[tuple[str, str]]]]]]) -> bytes:
    """A plane: lines of events (name, start ns, duration ns, [(stat name, string value)])."""
    event_ids: dict[str, int] = {}
    stat_ids: dict[str, int] = {}
    body = _str(2, name)
    for line_name, events in lines:
        line = _str(2, line_name) + _int(3, 0)
        for ev_name, start_ns, duration_ns, stats in events:
            eid = event_ids.setdefault(ev_name, len(event_ids) + 1)
            ev = _int(1, eid) + _int(2, start_ns * 1000) + _int(3, duration_ns * 1000)
            for key, value in stats:
                sid = stat_ids.setdefault(key, len(stat_ids) + 1)
                ev += _len(4, _int(1, sid) + _str(5, value))
            line += _len(4, ev)
        body += _len(3, line)
    for name_, eid in event_ids.items():
        body += _len(4, _int(1, eid) + _len(2, _int(1, eid) + _str(2, name_)))
    for name_, sid in stat_ids.items():
        body += _len(5, _int(1, sid) + _len(2, _int(1, sid) + _str(2, name_)))
    return body


def xspace(platform: str, module: str, runs_ns: list[int], first_call: int = 0) -> bytes:
    """One trace: ``len(runs_ns)`` step markers (the first run is the one the lab drops), each
    around one device event of ``module`` lasting that run."""
    markers, device = [], []
    t = 1_000_000 + 10_000_000 * first_call  # each trace of a measurement at its own times, as real ones are
    for k, run in enumerate(runs_ns):
        markers.append((profile.marker_name(module, first_call + k), t, run + 200, []))
        device.append((module if platform == "tpu" else "fusion", t + 100, run,
                       [] if platform == "tpu" else [("hlo_module", module)]))
        t += run + 10_000
    host = _plane("/host:CPU", [("python", markers)])
    if platform == "gpu":
        dev = _plane("/device:GPU:0", [("Stream #13", device)])
    elif platform == "tpu":
        dev = _plane("/device:TPU:0", [("XLA Modules", device)])
    else:  # the CPU's XLA thunks run on host threads and carry the module and a run id
        dev = b""
        host = _plane("/host:CPU", [("python", markers),
                                    ("tf_XLACpu", [(n, s, d, [("hlo_module", module), ("run_id", str(i))])
                                                   for i, (n, s, d, _) in enumerate(device)])])
    return _len(1, host) + (_len(1, dev) if dev else b"")


def write_traces(root: Path, platform: str, module: str, per_trace_ns: list[list[int]]) -> None:
    """``root/trace-k/plugins/profile/RUN/host.xplane.pb.gz``, one per trace, each with a dropped
    first run of 1 µs before the given runs."""
    for k, runs in enumerate(per_trace_ns, start=1):
        folder = Path(root) / f"trace-{k}" / "plugins" / "profile" / "2026_11_29_12_00_00"
        folder.mkdir(parents=True, exist_ok=True)
        data = xspace(platform, module, [1000, *runs], first_call=100 * k)
        (folder / "host.xplane.pb.gz").write_bytes(gzip.compress(data, mtime=0))


def write_for_measurement(root: Path, platform: str, module: str, runs_s: list[float], traces: int) -> None:
    """Traces that give exactly the sorted ``runs_s`` (integer nanoseconds), dealt across ``traces``."""
    ordered = sorted(runs_s)
    ns = [round(s * 1e9) for s in ordered]
    write_traces(root, platform, module, [ns[k::traces] for k in range(traces)])

"""Device time from a profiler trace, on every jax >= 0.4.30.

Starts and stops the trace, reads it (``jax.profiler.ProfileData`` or ``labs.measure.xplane``), picks
the events that count on each platform and groups them into timed runs (``module_times``); also lays
a record's traces out for XProf (``xprof_layout``).

Details: docs/internals-labs.md.
"""

from __future__ import annotations

import gzip
import os
import re
import sys
import tempfile
import zlib
from collections import defaultdict
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol, TypedDict

from generator.io import safeio
from labs.measure import hloproto, xplane

_DEVICE_PLANE = re.compile(r"^/device:(GPU|TPU)", re.IGNORECASE)

# The host-side step marker around each timed call: "lab-run jit_lab_add 3".
MARKER_PREFIX = "lab-run"


def marker_name(module: str, call: int) -> str:
    return f"{MARKER_PREFIX} {module} {call}"


# A trace as both readers give it (``jax.profiler.ProfileData`` and ``labs.measure.xplane.XSpace``): planes of
# lines of events, each event with a name, its times in nanoseconds and its (key, value) stats.
class TraceEvent(Protocol):
    @property
    def name(self) -> str: ...
    @property
    def start_ns(self) -> float: ...
    @property
    def end_ns(self) -> float: ...
    @property
    def duration_ns(self) -> float: ...
    @property
    def stats(self) -> Iterable[tuple[str | None, object]]: ...


class TraceLine(Protocol):
    @property
    def name(self) -> str: ...
    @property
    def events(self) -> Iterable[TraceEvent]: ...


class TracePlane(Protocol):
    @property
    def name(self) -> str: ...
    @property
    def lines(self) -> Iterable[TraceLine]: ...


class Trace(Protocol):
    @property
    def planes(self) -> Iterable[TracePlane]: ...


def profiler_options() -> Any:
    """Small traces: no Python tracer, host tracer at its lowest useful level (level 1 keeps
    TraceAnnotation markers). None on jax without ``ProfileOptions`` (before 0.6.1): defaults then.
    (``Any``: the options class is looked up by name, since older jax has none.)"""
    import jax  # optional dependency: jax loads only when a lab runs on a device
    make = getattr(jax.profiler, "ProfileOptions", None)
    if make is None:
        return None
    opts = make()
    opts.python_tracer_level = 0
    opts.host_tracer_level = 1
    return opts


# What the profiler's C++ Python hooks log on every start and stop when tensorflow is absent
# (seen with jax 0.6.2 and 0.7.2: 42 lines in one lab run). Not the learner's business.
PROFILER_NOISE = re.compile(r"Can't import tensorflow\.python\.profiler\.trace")
NOISE_MAX_BYTES = 1 << 20


@contextmanager
def quiet_profiler_noise() -> Iterator[None]:
    """Route file descriptor 2 to a scratch file while the profiler starts or stops, then replay
    every line except the TensorFlow import warnings (C++ logs them, so Python's logging cannot)."""
    try:
        sys.stderr.flush()
        saved = os.dup(2)
    except (OSError, ValueError, AttributeError):  # no usable stderr: nothing to keep quiet
        yield
        return
    with tempfile.TemporaryFile() as scratch:
        os.dup2(scratch.fileno(), 2)
        try:
            yield
        finally:
            try:
                sys.stderr.flush()
            except (OSError, ValueError):
                pass
            os.dup2(saved, 2)
            os.close(saved)
            scratch.seek(0)
            text = scratch.read(NOISE_MAX_BYTES).decode("utf-8", "replace")
            kept = "".join(line for line in text.splitlines(keepends=True) if not PROFILER_NOISE.search(line))
            if kept:
                try:
                    os.write(2, kept.encode("utf-8"))
                except OSError:
                    pass


def start_trace(trace_dir: Path) -> None:
    import jax  # optional dependency: jax loads only when a lab runs on a device
    opts = profiler_options()
    with quiet_profiler_noise():
        if opts is None:
            jax.profiler.start_trace(str(trace_dir))
        else:
            jax.profiler.start_trace(str(trace_dir), profiler_options=opts)


def stop_trace() -> None:
    import jax  # optional dependency: jax loads only when a lab runs on a device
    with quiet_profiler_noise():
        jax.profiler.stop_trace()


def reader_name() -> str:
    """Which reader ``load`` uses with this jax."""
    import jax  # optional dependency: jax loads only when a lab runs on a device
    return "jax.profiler.ProfileData" if getattr(jax.profiler, "ProfileData", None) is not None else "labs.measure.xplane"


# Traces are kept beside the record, gzip-compressed (``compress``); reading one is bounded three
# ways. An op's trace is 50-300 kB uncompressed and under 60 kB compressed (CPU and H200 runs,
# jax 0.4.30-0.11) with a few hundred events, so each limit leaves a wide margin for a bigger run.
COMPRESSED_SUFFIX = ".gz"
TRACE_MAX_COMPRESSED_BYTES = 8 * 2**20  # the .gz file as stored
TRACE_MAX_BYTES = 32 * 2**20  # what it inflates to (and a plain .xplane.pb's size)
# The parse work: the XSpace reader (labs.measure.xplane) refuses a trace of more protobuf fields than this
# (real ones hold under 30,000; a 16 KiB gzip of empty events inflates to 8 million).
TRACE_MAX_FIELDS = 200_000


def read_trace_bytes(path: Path) -> bytes:
    """A trace file's XSpace bytes (gunzipped when ``.gz``), bounded; OSError/ValueError (one line)
    when it is too large, not gzip, or truncated."""

    compressed = Path(path).name.endswith(COMPRESSED_SUFFIX)
    limit = TRACE_MAX_COMPRESSED_BYTES if compressed else TRACE_MAX_BYTES
    data = safeio.read_bytes_bounded(path, limit)
    if compressed:
        inflater = zlib.decompressobj(16 + zlib.MAX_WBITS)
        try:
            data = inflater.decompress(data, TRACE_MAX_BYTES)
        except zlib.error as exc:
            raise ValueError(f"{safeio.display_path(path)}: not a gzip-compressed trace ({exc})") from None
        if inflater.unconsumed_tail:
            raise ValueError(f"{safeio.display_path(path)}: the trace inflates beyond "
                             f"{TRACE_MAX_BYTES // 2**20} MiB")
        if not inflater.eof:
            raise ValueError(f"{safeio.display_path(path)}: a truncated gzip stream")
    return data


def load(path: Path, reader: str = "auto") -> Trace:
    """The trace at ``path`` as planes/lines/events: ProfileData when present ("auto"), or
    ``reader="xplane"`` / ``reader="profiledata"`` to choose (``xplane`` needs no jax)."""
    if reader == "auto":
        reader = "profiledata" if reader_name() == "jax.profiler.ProfileData" else "xplane"
    data = read_trace_bytes(Path(path))
    if reader == "profiledata":
        import jax  # optional dependency: jax loads only when a lab runs on a device
        profile: Trace = jax.profiler.ProfileData.from_serialized_xspace(data)
        return profile
    return xplane.parse(data, max_events=TRACE_MAX_FIELDS)


def trace_files(trace_dir: Path) -> list[Path]:
    """Every ``*.xplane.pb`` (or its ``.gz``) under ``trace_dir``, oldest first."""
    found = [*Path(trace_dir).glob("plugins/profile/*/*.xplane.pb"),
             *Path(trace_dir).glob("plugins/profile/*/*.xplane.pb" + COMPRESSED_SUFFIX)]
    return sorted(found, key=lambda p: p.stat().st_mtime)


def compress(trace_dir: Path) -> None:
    """Keep a trace small beside its record: gzip each ``.xplane.pb`` (XProf reads it after
    ``gunzip``) and drop the ``.trace.json.gz`` the profiler also writes (the same events again)."""

    for raw in Path(trace_dir).glob("plugins/profile/*/*.xplane.pb"):
        safeio.write_bytes(raw.with_name(raw.name + COMPRESSED_SUFFIX),
                           gzip.compress(raw.read_bytes(), compresslevel=6, mtime=0))
        raw.unlink()
    for extra in Path(trace_dir).glob("plugins/profile/*/*.trace.json.gz"):
        extra.unlink()


@dataclass
class Event:
    module: str
    run: object
    start_ns: float
    end_ns: float
    program: int | None = None  # the XLA program id the event ran (None: the trace does not say)


@dataclass
class Marker:
    call: int
    start_ns: float
    end_ns: float


@dataclass
class Grouping:
    """Device seconds per run in call order; ``how`` says how runs were told apart;
    ``uncertain`` (non-empty) means the spans must not be used."""

    spans: list[float] = field(default_factory=list)
    how: str = ""
    uncertain: str = ""
    stray: int = 0


@dataclass
class ModuleTimes:
    """Device seconds per run of one module, in execution order, the first run dropped."""

    module: str
    run_seconds: list[float] = field(default_factory=list)
    dropped_first: bool = False
    grouping: str = ""  # how runs were told apart: "step markers", "run_id"
    uncertain: str = ""  # why there is no device time ("" when there is)
    stray: int = 0
    reader: str = ""
    planes: tuple[str, ...] = ()  # the trace's plane names (which device it came from)
    device_lines: tuple[str, ...] = ()  # the line names of its device planes (device streams, not threads)
    timeline: tuple[tuple[float, float], ...] = ()  # (start, end) ns of the module's events, in time order
    program_ids: tuple[int, ...] = ()  # the XLA program ids the module's events ran (when they say)
    compiled: tuple["hloproto.CompiledModule", ...] = ()  # labs.measure.hloproto.CompiledModule: the trace's compiled modules of this name
    # (start, stop) of the profiling session, Unix ns (the "Task Environment" plane; None: not said).
    # The events' times are relative to its start.
    session_unix_ns: tuple[int, int] | None = None


def _stats(event: TraceEvent) -> dict[str | None, object]:
    try:
        return dict(event.stats)
    except Exception:  # a stat of a type the binding cannot convert: ignore the event's stats
        return {}


def collect_events(profile: Trace) -> list[Event]:
    """Events that belong to an XLA module execution, from the planes that hold device work."""
    planes = list(profile.planes)
    device_planes = [p for p in planes if _DEVICE_PLANE.match(p.name)]
    modules_line_events: list[Event] = []
    kernel_events: list[Event] = []
    for plane in device_planes:
        for line in plane.lines:
            is_modules_line = line.name == "XLA Modules"
            for ev in line.events:
                st = _stats(ev)
                if is_modules_line:
                    raw = st.get("hlo_module") or ev.name
                    modules_line_events.append(Event(_module_name(raw), st.get("run_id"), ev.start_ns, ev.end_ns,
                                                     _program_id(st, raw)))
                elif "hlo_module" in st:
                    kernel_events.append(Event(_module_name(st["hlo_module"]), st.get("run_id"),
                                               ev.start_ns, ev.end_ns, _program_id(st, st["hlo_module"])))
    if device_planes:
        # Never fall back to host events on an accelerator: they time launches, not the device.
        return modules_line_events or kernel_events
    host_events: list[Event] = []
    for plane in planes:
        if not plane.name.startswith("/host:"):
            continue
        for line in plane.lines:
            for ev in line.events:
                st = _stats(ev)
                if "hlo_module" in st and "run_id" in st:
                    host_events.append(Event(_module_name(st["hlo_module"]), st["run_id"], ev.start_ns, ev.end_ns,
                                             _program_id(st, st["hlo_module"])))
    return host_events


# Thread names of XLA's CPU runtime ("tf_XLATfrtCpuClient/...", "tf_XLAEigen/...").
_CPU_RUNTIME_LINE = re.compile(r"^tf_XLA")
ANY_MODULE = "*"  # an event known to be XLA work but not labelled with its module


def collect_cpu_runtime_events(profile: Trace) -> list[Event]:
    """Events on XLA's CPU runtime threads, unlabelled (for traces without ``hlo_module`` stats)."""
    found = []
    for plane in profile.planes:
        if not plane.name.startswith("/host:"):
            continue
        for line in plane.lines:
            if _CPU_RUNTIME_LINE.match(line.name):
                found += [Event(ANY_MODULE, None, ev.start_ns, ev.end_ns) for ev in line.events]
    return found


# The CPU client's own execution span. jax 0.4.30 runs a CPU executable inline on the calling
# thread: its XLA runtime threads hold only zero-duration instants (ThreadpoolListener::StartRegion
# ...), and the real work is "TfrtCpuExecutable::ExecuteHelper" (inside "...::Execute"); jax 0.6.2
# runs a tiny one (the fixed-cost probe) inline too, as "PjRtCpuExecutable::ExecuteHelper".
_CPU_EXECUTE_NAMES = ("TfrtCpuExecutable::ExecuteHelper", "PjRtCpuExecutable::ExecuteHelper")


def collect_cpu_execute_events(profile: Trace) -> list[Event]:
    """The CPU client's execution events (any host thread), unlabelled."""
    found = []
    for plane in profile.planes:
        if not plane.name.startswith("/host:"):
            continue
        for line in plane.lines:
            found += [Event(ANY_MODULE, None, ev.start_ns, ev.end_ns) for ev in line.events
                      if ev.name in _CPU_EXECUTE_NAMES]
    return found


def _unlabelled_cpu_events(profile: Trace, markers: list[Marker], expected_runs: int) -> tuple[list[Event], str]:
    """Events for a CPU trace without module labels (jax < 0.6): the XLA runtime threads' timed events
    when they fill every step marker (jax 0.5), else the client's inline execution spans (jax 0.4.30)."""
    runtime = collect_cpu_runtime_events(profile)
    if runtime and not group_runs(runtime, markers, expected_runs).uncertain:
        return runtime, " (XLA CPU runtime threads: this jax labels no CPU event with its module)"
    execute = [e for e in collect_cpu_execute_events(profile) if e.end_ns > e.start_ns]
    if execute:
        return execute, (" (the CPU client's ExecuteHelper on the calling thread: this jax runs the CPU "
                         "executable inline and labels no event with its module)")
    return runtime, ""


def collect_markers(profile: Trace, module: str) -> list[Marker]:
    """The step markers around ``module``'s timed calls (host planes), in call order."""
    prefix = f"{MARKER_PREFIX} {module} "
    found = []
    for plane in profile.planes:
        if not plane.name.startswith("/host:"):
            continue
        for line in plane.lines:
            for ev in line.events:
                name = ev.name
                if name.startswith(prefix) and name[len(prefix):].isdigit():
                    found.append(Marker(int(name[len(prefix):]), ev.start_ns, ev.end_ns))
    return sorted(found, key=lambda m: m.call)


def _module_name(raw: object) -> str:
    """"jit_lab_add(42)" -> "jit_lab_add": some traces append the program id."""
    return re.sub(r"\(\d*\)$", "", str(raw))


def _program_id(stats: dict[str | None, object], raw_module: object) -> int | None:
    """The program id an event names: its ``program_id`` stat, else its module's "(42)" suffix."""
    value = stats.get("program_id")
    if isinstance(value, int) and not isinstance(value, bool):
        return value
    if isinstance(value, str) and value.isdigit():
        return int(value)
    found = re.search(r"\((\d+)\)$", str(raw_module))
    return int(found.group(1)) if found else None


# The profiling session's own start and stop (Unix ns), stats of the "Task Environment" plane.
_SESSION_PLANE, _SESSION_STATS = "Task Environment", ("profile_start_time", "profile_stop_time")


def session_unix_ns(profile: Any) -> tuple[int, int] | None:
    """(start, stop) of the trace's profiling session in Unix ns; None when the trace does not say."""
    for plane in profile.planes:
        if str(plane.name) != _SESSION_PLANE:
            continue
        stats = dict(s for s in getattr(plane, "stats", ()) if isinstance(s, tuple) and len(s) == 2)
        start, stop = (stats.get(k) for k in _SESSION_STATS)
        if isinstance(start, int) and isinstance(stop, int) and not isinstance(start, bool) \
                and not isinstance(stop, bool):
            return start, stop
    return None


def _span_s(events: list[Event]) -> float:
    return (max(e.end_ns for e in events) - min(e.start_ns for e in events)) * 1e-9


def group_by_markers(events: list[Event], markers: list[Marker]) -> Grouping:
    """Each event to the marker its time overlaps most; strays (no overlap) are counted, not used."""
    by_marker: dict[int, list[Event]] = defaultdict(list)
    stray = 0
    for e in events:
        best, overlap = None, 0.0
        for i, m in enumerate(markers):
            o = min(e.end_ns, m.end_ns) - max(e.start_ns, m.start_ns)
            # An instant event (zero duration) inside a marker overlaps it by zero: count it in.
            if o > overlap or (best is None and o == 0 and m.start_ns <= e.start_ns <= m.end_ns):
                best, overlap = i, o
        if best is None:
            stray += 1
        else:
            by_marker[best].append(e)
    empty = [markers[i].call for i in range(len(markers)) if not by_marker.get(i)]
    if empty:
        return Grouping([], "step markers", f"{len(empty)} of {len(markers)} step markers hold no event "
                                            f"of the module (first: call {empty[0]})", stray)
    # A run whose only events are zero-duration instants has no device time: an instant may bound a
    # run's span (jax 0.5's CPU thread picking a call up) but never make one on its own.
    instant_only = [markers[i].call for i in range(len(markers))
                    if all(e.end_ns <= e.start_ns for e in by_marker[i])]
    if instant_only:
        return Grouping([], "step markers", f"{len(instant_only)} of {len(markers)} step markers hold only "
                                            f"zero-duration instant events, which are not device time "
                                            f"(first: call {instant_only[0]})", stray)
    return Grouping([_span_s(by_marker[i]) for i in range(len(markers))], "step markers", "", stray)


def group_by_run_id(events: list[Event], expected_runs: int) -> Grouping:
    by_run: dict[object, list[Event]] = defaultdict(list)
    for e in events:
        by_run[e.run].append(e)
    runs = sorted(by_run.values(), key=lambda evs: min(e.start_ns for e in evs))
    if len(runs) != expected_runs:
        return Grouping([], "run_id", f"{len(runs)} run ids for {expected_runs} calls")
    return Grouping([_span_s(r) for r in runs], "run_id")


def group_runs(events: list[Event], markers: list[Marker], expected_runs: int) -> Grouping:
    """Device seconds per run, by step markers first, else by run id; never by counting events."""
    if not events:
        return Grouping([], "", "no event of the module in the trace")
    if markers:
        if len(markers) != expected_runs:
            return Grouping([], "step markers", f"{len(markers)} step markers for {expected_runs} calls")
        return group_by_markers(events, markers)
    if all(e.run is not None for e in events):
        return group_by_run_id(events, expected_runs)
    return Grouping([], "", "no step markers in the trace and the events carry no run id")


def module_times(trace_dir: Path, module: str, expected_runs: int, reader: str = "auto") -> ModuleTimes:
    """Device time per run of ``module`` from the newest trace under ``trace_dir``."""
    files = trace_files(trace_dir)
    result = ModuleTimes(module)
    if not files:
        result.uncertain = "no trace file"
        return result
    profile = load(files[-1], reader)
    result.reader = type(profile).__module__ + "." + type(profile).__name__
    result.planes = tuple(str(p.name) for p in profile.planes)
    result.device_lines = tuple(str(line.name) for p in profile.planes if _DEVICE_PLANE.match(str(p.name))
                                for line in p.lines)
    labelled = collect_events(profile)
    events = [e for e in labelled if _same_module(e.module, module)]
    markers = collect_markers(profile, module)
    note = ""
    if not labelled and not any(_DEVICE_PLANE.match(p.name) for p in profile.planes):
        # A CPU trace whose events carry no module (jax < 0.6): only step markers can group them.
        events, note = _unlabelled_cpu_events(profile, markers, expected_runs) if markers else ([], "")
    grouping = group_runs(events, markers, expected_runs)
    if events and all(e.end_ns <= e.start_ns for e in events):  # an instant marks a moment, not device time
        grouping.uncertain = "the module's only events are zero-duration instants, which are not device time"
    grouping.how += note
    result.timeline = tuple(sorted((float(e.start_ns), float(e.end_ns)) for e in events))
    result.program_ids = tuple(sorted({e.program for e in events if e.program is not None}))
    result.session_unix_ns = session_unix_ns(profile)
    if hasattr(profile, "planes") and all(hasattr(p, "event_metadata") for p in profile.planes):
        result.compiled = tuple(m for m in hloproto.compiled_modules(profile) if _same_module(m.name, module))
    result.grouping, result.uncertain, result.stray = grouping.how, grouping.uncertain, grouping.stray
    if grouping.uncertain:
        return result
    if len(grouping.spans) > 1:
        result.run_seconds = grouping.spans[1:]
        result.dropped_first = True
    else:
        result.uncertain = "one run only: the first run of a trace is dropped"
    return result


def _same_module(found: str, wanted: str) -> bool:
    # XLA may suffix a module name (".1", "_spmd") when it clones it.
    return found == wanted or found.startswith(wanted + ".") or found.startswith(wanted + "_")


class EventSummary(TypedDict):
    name: str  # the first 80 characters
    duration_ns: float
    stats: dict[str | None, str]  # each value's first 60 characters


class LineSummary(TypedDict):
    line: str
    events: int
    first: list[EventSummary]


class PlaneSummary(TypedDict):
    plane: str
    lines: list[LineSummary]


class _TraceNamed(TypedDict):
    trace: str | None  # the newest trace file, None when there is none


class TraceSummary(_TraceNamed, total=False):
    planes: list[PlaneSummary]  # absent when there is no trace


def describe(trace_dir: Path, max_events: int = 6) -> TraceSummary:
    """A small summary of a trace's planes, lines and stat keys (to debug a new platform). It reads with
    the project's own reader (``labs.measure.xplane``): it looks at every line's first events, metadata planes
    included, and converting some of their stats aborts the process inside jaxlib's ``ProfileData``
    binding on the newest jax (Python 3.12, jaxlib 0.12)."""
    files = trace_files(trace_dir)
    if not files:
        return {"trace": None}
    profile = load(files[-1], reader="xplane")
    planes: list[PlaneSummary] = []
    out: TraceSummary = {"trace": str(files[-1]), "planes": planes}
    for plane in profile.planes:
        lines: list[LineSummary] = []
        for line in plane.lines:
            events = list(line.events)
            lines.append({"line": line.name, "events": len(events),
                          "first": [{"name": e.name[:80], "duration_ns": e.duration_ns,
                                     "stats": {k: str(v)[:60] for k, v in _stats(e).items()}}
                                    for e in events[:max_events]]})
        planes.append({"plane": plane.name, "lines": lines})
    return out


XPROF_MAX_DEPTH = 4  # a record's trace-K folders lie 1 to 3 folders below its trace root
XPROF_MAX_ENTRIES = 20_000  # a record's trace folder holds a few hundred entries


def trace_folders(trace_root: Path) -> list[Path]:
    """The ``trace-*`` folders under ``trace_root``, sorted: a bounded walk that never follows a
    symlink, never looks inside a ``trace-*`` folder, goes at most ``XPROF_MAX_DEPTH`` folders
    deep, and raises ValueError (one line) after ``XPROF_MAX_ENTRIES`` entries."""
    found: list[Path] = []
    seen = 0
    pending = [(Path(trace_root), 1)]
    while pending:
        folder, depth = pending.pop()
        with os.scandir(folder) as entries:
            for entry in entries:
                seen += 1
                if seen > XPROF_MAX_ENTRIES:
                    raise ValueError(f"more than {XPROF_MAX_ENTRIES:,} entries: not a record's trace folder")
                if not entry.is_dir(follow_symlinks=False):
                    continue
                if entry.name.startswith("trace-"):
                    found.append(Path(entry.path))
                elif depth < XPROF_MAX_DEPTH:
                    pending.append((Path(entry.path), depth + 1))
    return sorted(found)


XPROF_HOST = "host"  # the HOST in plugins/profile/RUN/HOST.xplane.pb (any name XProf accepts)


def xprof_layout(trace_root: Path, logdir: Path) -> list[Path]:
    """Lay a record's traces out as XProf reads them: ``logdir/plugins/profile/<op>-trace-<k>/host.xplane.pb``,
    uncompressed (XProf finds no ``.xplane.pb.gz``). Each op's (and probe's) trace is one run
    (``fixed_cost-<op>-trace-<k>`` for an op kind's fixed-cost probe). A path that is there already is
    refused (SafeIOError), never written over: ``labs.measure.xprof_logdir`` chooses the logdir and clears its own.
    Reading is bounded like the gate's (``read_trace_bytes``); returns the files written."""

    written = []
    # An op's traces sit in OP/trace-K; a fixed-cost probe's one level deeper (fixed_cost/OP/trace-K).
    for folder in trace_folders(trace_root):
        files = trace_files(folder)
        if not files:
            continue
        run = "-".join(folder.relative_to(trace_root).parts)
        dest = Path(logdir) / "plugins" / "profile" / run / f"{XPROF_HOST}.xplane.pb"
        dest.parent.mkdir(parents=True, exist_ok=True)
        if dest.exists() or dest.is_symlink():
            raise safeio.SafeIOError(f"{safeio.display_path(dest)} is there already and drill xprof did not write "
                                     "it; refusing to write over it")
        safeio.write_bytes(dest, read_trace_bytes(files[-1]), inside=logdir)
        written.append(dest)
    return written


def xprof_command(logdir: Path, port: int = 6006) -> str:
    """The one command that opens ``logdir`` in XProf (``pip install xprof``), on this machine only."""
    return f"xprof --logdir={logdir} --port={port}"


def xprof_hint(trace_dir: Path) -> str:
    """How to open the traces in XProf: ``drill xprof`` lays them out uncompressed in a folder of its own
    (``labs.measure.xprof_logdir``) and prints the command (on Colab: the notebook's XProf cell does the same)."""
    return ("open the traces in XProf: drill xprof RECORD (lays them out uncompressed in a folder of its own, "
            "reused for the record, and prints the command; pip install xprof)")

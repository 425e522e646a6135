"""`drill gate --verify`: re-derive every measured device time from the traces kept beside the records.

The gate runs the same check on every record before it counts it (``labs.gate.consistency``);
``--verify`` is its verbose report, one line per op (``verify_folder``). Pure Python, no jax.

Details: docs/internals-labs.md.
"""

from __future__ import annotations

import datetime as _dt
import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TypedDict

from generator.io.safeio import display_path
from generator.io.termsafe import visible_lines
from labs.measure import hloproto, profile
from labs.records import folder as records
from labs.measure.hloproto import Shape
from labs.measure.ops import OPS
from labs.records.types import LabRecord, OpRow
from labs.measure.calls import summarize_device

TOLERANCE = 1e-6  # the same integer nanoseconds read twice: only float noise may differ
# Trace folders per measurement: the lab writes labs.measure.calls.TRACES (3). Each trace's parse is
# bounded (labs.measure.profile); this bounds how many are parsed, so a record's reading stays bounded.
MAX_TRACE_FOLDERS = 16


@dataclass
class Check:
    record: str
    op: str
    stored_s: float | None
    derived_s: float | None
    ok: bool
    why: str

    def to_dict(self) -> dict[str, object]:  # standard JSON: a non-finite number becomes null
        return {k: (None if isinstance(v, float) and not math.isfinite(v) else v) for k, v in self.__dict__.items()}


class Skipped(TypedDict):
    """A file the check could not read: its path as shown, and why."""

    path: str
    reason: str


@dataclass
class VerifyReport:
    folder: str
    checks: list[Check] = field(default_factory=list)
    skipped: list[Skipped] = field(default_factory=list)

    @property
    def disagreements(self) -> list[Check]:
        return [c for c in self.checks if not c.ok]

    def to_dict(self) -> dict[str, object]:
        return {"folder": self.folder, "checked": len(self.checks),
                "disagreements": [c.to_dict() for c in self.disagreements],
                "checks": [c.to_dict() for c in self.checks], "skipped": self.skipped}

    def lines(self, skipped: bool = True) -> list[str]:
        """The report; ``skipped`` False leaves out the unreadable files (the CLI says them on stderr)."""
        out = [f"verify: {len(self.checks)} measured time(s) in {self.folder} re-derived from their traces"]
        for c in self.checks:
            out.append(f"  {'ok ' if c.ok else 'DISAGREES'} {Path(c.record).name}: {c.op}: {c.why}")
        for s in self.skipped if skipped else ():
            out.append(f"  [skipped] {s['path']}: {s['reason']}")
        n = len(self.disagreements)
        out.append(f"{n} disagreement(s)" if n else "every measured time agrees with its traces")
        return visible_lines(out)


def _close(a: float, b: float) -> bool:
    return math.isclose(a, b, rel_tol=TOLERANCE, abs_tol=1e-12)


def derive(trace_root: Path, module: str, reps: int, planes: set[str] | None = None,
           lines: set[str] | None = None, *, parameters: tuple[Shape, ...] | None = None,
           window_unix_ns: tuple[int, int] | None = None,
           sessions: list[tuple[int, int]] | None = None) -> tuple[list[list[float]] | None, str]:
    """Per-trace device runs of ``module`` under ``trace_root/trace-*`` (None and why when they cannot be
    read); the plane names of the traces read are added to ``planes``, their device planes' line names
    to ``lines``, their profiling sessions (Unix ns) to ``sessions``. The traces of one measurement are
    each their own: two that are byte-identical, or whose events of the module lie at the same times
    (one trace copied), are refused. Where a trace names its compiled modules, ``module`` in it was
    compiled for ``parameters`` (the measurement's own shapes, not a probe's or another size's).
    Where a trace says when it was taken, its module's events lie inside its session, the traces were
    taken one after another in their order, and inside ``window_unix_ns`` (the measurement's own)."""
    folders = sorted((p for p in trace_root.glob("trace-*") if p.is_dir()), key=_trace_order)
    if not folders:
        return None, f"no traces in {display_path(trace_root)}"
    if len(folders) > MAX_TRACE_FOLDERS:
        return None, (f"{len(folders)} trace folders in {display_path(trace_root)}, more than the "
                      f"{MAX_TRACE_FOLDERS} a lab measurement may keep (none read)")
    per_trace = []
    seen: dict[object, str] = {}  # a trace's bytes digest or timeline -> the folder that had it first
    previous: tuple[str, int] | None = None  # the last trace's folder and session stop (Unix ns)
    for folder in folders:
        try:
            times = profile.module_times(folder, module, expected_runs=reps + 1, reader="xplane")
            files = profile.trace_files(folder)
            digest = records.sha256_bytes(profile.read_trace_bytes(files[-1])) if files else None
        except (OSError, ValueError) as exc:  # one line: too large, not gzip, malformed
            return None, f"{folder.name}: unreadable trace ({str(exc).splitlines()[0] if str(exc) else exc!r})"
        if planes is not None:
            planes.update(times.planes)
        if lines is not None:
            lines.update(times.device_lines)
        if times.uncertain:
            return None, f"{folder.name}: {times.uncertain}"
        for key, what in ((("bytes", digest), "are byte-identical"),
                          (("timeline", times.timeline), "hold the module's events at the same times")):
            if key[1] and key in seen:
                return None, (f"{seen[key]} and {folder.name} {what}: one trace copied, not "
                              f"{len(folders)} measured")
            seen.setdefault(key, folder.name)
        if sessions is not None and times.session_unix_ns is not None:
            sessions.append(times.session_unix_ns)  # judged across measurements even when refused here
        why = compiled_reason(times, module, parameters) or _session_reason(times, previous, window_unix_ns)
        if why:
            return None, f"{folder.name}: {why}"
        if times.session_unix_ns is not None:
            previous = (folder.name, times.session_unix_ns[1])
        per_trace.append(times.run_seconds)
    return per_trace, ""


def _trace_order(folder: Path) -> tuple[int, str]:
    """trace-1, trace-2, ..., trace-10: the order the lab took them in (by number, not by text)."""
    tail = folder.name.removeprefix("trace-")
    return (int(tail) if tail.isdigit() else 1 << 30, folder.name)


def compiled_reason(times: profile.ModuleTimes, module: str, parameters: tuple[Shape, ...] | None) -> str:
    """Why the trace's ``module`` is not the one compiled for ``parameters`` ("" when it is, or when
    the trace names no compiled module of that name: nothing to compare). The program the module's
    events ran is the one judged when they name it; else some module of that name must match."""
    named = [m for m in times.compiled if m.parameters is not None]
    if parameters is None or not named:
        return ""
    want = tuple(parameters)
    ran = [m for m in named if m.program_id in times.program_ids]
    wrong = [m for m in ran if m.parameters != want]
    if wrong:
        return (f"its {module} ran program {wrong[0].program_id}, compiled for "
                f"{hloproto.shape_text(wrong[0].parameters)}, not this measurement's {hloproto.shape_text(want)}: "
                "another measurement's trace")
    if ran or any(m.parameters == want for m in named):
        return ""
    return (f"its {module} was compiled for {hloproto.shape_text(named[0].parameters)}, not this measurement's "
            f"{hloproto.shape_text(want)}: another measurement's trace")


def _session_reason(times: profile.ModuleTimes, previous: tuple[str, int] | None,
                    window_unix_ns: tuple[int, int] | None) -> str:
    """Why the trace's times do not fit: its events outside its own session, a session that begins
    before the previous trace's ended, or one outside the measurement's window ("" when they fit)."""
    session = times.session_unix_ns
    if session is None:
        return "the trace does not say when it was taken, but its measurement does" if window_unix_ns else ""
    start, stop = session
    if stop < start:
        return f"its session stops ({stop} ns) before it starts ({start} ns)"
    outside = [t for t in times.timeline if t[0] < 0 or t[1] > stop - start]
    if outside:
        return (f"{len(outside)} event(s) of the module lie outside the trace's own session "
                f"(0 to {stop - start} ns; first at {outside[0][0]:.0f} ns)")
    if previous is not None and start < previous[1]:
        return f"it began before {previous[0]} ended: the traces were not taken one after another"
    if window_unix_ns is not None and not window_unix_ns[0] <= start <= stop <= window_unix_ns[1]:
        return (f"it was taken at {start}-{stop} Unix ns, outside its measurement's window "
                f"{window_unix_ns[0]}-{window_unix_ns[1]}")
    return ""


def measured_window(m: Mapping[str, object]) -> tuple[int, int] | None:
    """The measurement's own window (Unix ns) as the lab recorded it; None for a record without one."""
    start, stop = m.get("traced_from_unix_ns"), m.get("traced_until_unix_ns")
    if isinstance(start, int) and isinstance(stop, int) and not isinstance(start, bool) \
            and not isinstance(stop, bool):
        return start, stop
    return None


def check_measured(m: Mapping[str, object], module: str, reps: int, folder: Path, planes: set[str] | None = None,
                   lines: set[str] | None = None, *, parameters: tuple[Shape, ...] | None = None,
                   sessions: list[tuple[int, int]] | None = None) -> tuple[str, Path | None, float | None]:
    """(what disagrees, "" when nothing; the trace root; the traces' median) for one stored
    device measurement ``m`` of ``module`` timed ``reps`` runs per trace, in the record folder
    ``folder``, compiled for ``parameters``; the plane names of the traces read are added to ``planes``
    (``derive`` says what else is checked and collected)."""

    stored = m.get("device_median_s")
    where = m.get("trace_dir")
    if not where or not isinstance(where, str):
        return "labelled device time but no trace folder recorded", None, None
    root = Path(where) if Path(where).is_absolute() else Path(folder) / where
    if reps < 1:
        return "cannot re-derive: the record does not say how many runs each trace holds", root, None
    window = measured_window(m)
    if window is not None and window[1] < window[0]:
        return f"its window ends ({window[1]} ns) before it begins ({window[0]} ns)", root, None
    per_trace, why = derive(root, module, reps, planes, lines, parameters=parameters, window_unix_ns=window,
                            sessions=sessions)
    if per_trace is None:
        return f"cannot re-derive: {why}", root, None
    derived = summarize_device(per_trace)
    problems = []
    if not isinstance(stored, (int, float)) or not _close(derived.p50_s, float(stored)):
        problems.append(f"median {stored!r} s stored, {derived.p50_s:g} s in the traces")
    runs = m.get("device_runs_s")
    if runs is not None and (not isinstance(runs, list) or len(runs) != len(derived.runs_s)
                             or not all(_close(float(a), b) for a, b in zip(sorted(runs), derived.runs_s))):
        problems.append(f"the stored runs differ from the {len(derived.runs_s)} in the traces")
    measured = m.get("measured_s")
    if not isinstance(measured, (int, float)) or not _close(float(measured), derived.p50_s):
        problems.append(f"measured {measured!r} s is not the traces' median {derived.p50_s:g} s")
    if problems:
        return "; ".join(problems), root, derived.p50_s
    return "", root, derived.p50_s


def op_parameters(op: str, size: object, dtype: object) -> tuple[Shape, ...] | None:
    """The entry parameters an op's module is compiled for at ``size`` (its inputs: labs.measure.ops);
    None when the size is not a whole number (the record's other rules say so)."""
    if isinstance(size, bool) or not isinstance(size, (int, float)) or not float(size).is_integer() or size < 1:
        return None
    try:
        return tuple((d, tuple(shape)) for shape, d in OPS[op].inputs(int(size), str(dtype)))
    except (KeyError, ValueError):
        return None


def _unix_ns(text: object) -> int | None:
    """An ISO 8601 time with its zone as Unix ns; None when it does not read."""
    try:
        when = _dt.datetime.fromisoformat(str(text))
    except ValueError:
        return None
    if when.tzinfo is None:
        return None
    delta = when - _dt.datetime(1970, 1, 1, tzinfo=_dt.timezone.utc)
    return (delta.days * 86_400 + delta.seconds) * 1_000_000_000 + delta.microseconds * 1000


def time_reasons(spans: dict[str, tuple[int, int]], ops: set[str], record: LabRecord) -> list[str]:
    """``trace times:`` the measurements ran one after another, so their traces' sessions never
    overlap; every trace was taken before the record was first saved, and an op's after the
    measurement began (the probes may come before: they are shown before the predictions are
    asked for). Traces that do not say when they were taken give no span and are not judged here."""
    why = []
    ordered = sorted(spans.items(), key=lambda item: item[1])
    for (a, (_, a_stop)), (b, (b_start, _)) in zip(ordered, ordered[1:]):
        if b_start < a_stop:
            why.append(f"trace times: the traces of {a} and {b} were taken at overlapping times: "
                       "one measurement's traces stand in for another's")
    saved = _unix_ns(record.run.saved_at) if record.run is not None else None
    started = _unix_ns(record.measurement_started_at)
    for name, (start, stop) in ordered:
        if saved is not None and stop > saved:
            why.append(f"trace times: {name}: its traces were taken after the record was saved "
                       f"({record.run.saved_at if record.run else ''}): not this run's")
        if name in ops and started is not None and start < started:
            why.append(f"trace times: {name}: its traces were taken before the measurement began "
                       f"({record.measurement_started_at}): not this op's")
    return why


def check_op(record: LabRecord, row: OpRow, folder: Path, shown: str) -> Check | None:
    m = row.measured
    if m.measured_from != "device":
        return None
    problem, root, derived = check_measured(m.to_dict(), OPS[row.op].module_name(), int(record.reps), folder,
                                            parameters=op_parameters(row.op, record.size, record.dtype))
    stored = m.device_median_s
    if problem:
        return Check(shown, row.op, stored, derived, False, problem)
    return Check(shown, row.op, stored, derived, True,
                 f"{derived:g} s over {len(m.device_runs_s or ())} runs in {m.traces} traces")


def verify_folder(bench_dir: Path | None = None) -> VerifyReport:
    folder = records.default_dir() if bench_dir is None else Path(bench_dir)
    report = VerifyReport(str(folder))
    for loaded in records.scan(folder):
        shown = display_path(loaded.path)
        if loaded.record is None:
            report.skipped.append({"path": shown, "reason": loaded.error or "unreadable"})
            continue
        for row in loaded.record.ops:
            try:
                check = check_op(loaded.record, row, folder, shown)
            except (KeyError, TypeError, ValueError, AttributeError) as exc:
                check = Check(shown, str(row.op), None, None, False, f"cannot re-derive: {exc!r}")
            if check is not None:
                report.checks.append(check)
    return report

"""`drill gate --verify`: re-derive every measured device time from the traces kept beside the records.

The gate runs the same check on every record before it counts it (``labs.consistency``);
``--verify`` is its verbose report, one line per op.

A record is self-reported JSON; its traces (``traces/<record>/<op>/trace-k/...xplane.pb.gz``,
compressed, a few hundred kB per record) are what the profiler wrote. This reads each op's
traces with ``labs.xplane`` (pure Python, no jax), groups the runs exactly as the lab did
(``labs.profile.module_times``), and compares the device runs and their median with what
the record stores. Seconds throughout.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TypedDict

from generator.safeio import display_path
from generator.termsafe import visible_lines
from labs import profile, records
from labs.ops import OPS
from labs.record_types import LabRecord, OpRow

TOLERANCE = 1e-6  # the same integer nanoseconds read twice: only float noise may differ
# Trace folders per measurement: the lab writes labs.measure.TRACES (3). Each trace's parse is
# bounded (labs.profile); this bounds how many are parsed, so a record's reading stays bounded.
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
           lines: set[str] | None = None) -> tuple[list[list[float]] | None, str]:
    """Per-trace device runs of ``module`` under ``trace_root/trace-*`` (None and why when they cannot be
    read); the plane names of the traces read are added to ``planes``, their device planes' line names
    to ``lines``. The traces of one measurement are each their own: two that are byte-identical, or
    whose events of the module lie at the same times (one trace copied), are refused."""
    folders = sorted(p for p in trace_root.glob("trace-*") if p.is_dir())
    if not folders:
        return None, f"no traces in {display_path(trace_root)}"
    if len(folders) > MAX_TRACE_FOLDERS:
        return None, (f"{len(folders)} trace folders in {display_path(trace_root)}, more than the "
                      f"{MAX_TRACE_FOLDERS} a lab measurement may keep (none read)")
    per_trace = []
    seen: dict[object, str] = {}  # a trace's bytes digest or timeline -> the folder that had it first
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
        per_trace.append(times.run_seconds)
    return per_trace, ""


def check_measured(m: Mapping[str, object], module: str, reps: int, folder: Path, planes: set[str] | None = None,
                   lines: set[str] | None = None) -> tuple[str, Path | None, float | None]:
    """(what disagrees, "" when nothing; the trace root; the traces' median) for one stored
    device measurement ``m`` of ``module`` timed ``reps`` runs per trace, in the record folder
    ``folder``; the plane names of the traces read are added to ``planes``."""
    from labs.measure import summarize_device  # start-up: loaded only on the lab path that uses it

    stored = m.get("device_median_s")
    where = m.get("trace_dir")
    if not where or not isinstance(where, str):
        return "labelled device time but no trace folder recorded", None, None
    root = Path(where) if Path(where).is_absolute() else Path(folder) / where
    if reps < 1:
        return "cannot re-derive: the record does not say how many runs each trace holds", root, None
    per_trace, why = derive(root, module, reps, planes, lines)
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


def check_op(record: LabRecord, row: OpRow, folder: Path, shown: str) -> Check | None:
    m = row.measured
    if m.measured_from != "device":
        return None
    problem, root, derived = check_measured(m.to_dict(), OPS[row.op].module_name(), int(record.reps), folder)
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

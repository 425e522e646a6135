"""`drill gate --verify`: re-derive every measured device time from the traces kept beside the records.

A record is self-reported JSON; its traces (``traces/<record>/<op>/trace-k/...xplane.pb.gz``,
compressed, a few hundred kB per record) are what the profiler wrote. This reads each op's
traces with ``labs.xplane`` (pure Python, no jax), groups the runs exactly as the lab did
(``labs.profile.module_times``), and compares the device runs and their median with what
the record stores. Seconds throughout.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from pathlib import Path

from generator.safeio import display_path
from labs import profile, records
from labs.ops import OPS

TOLERANCE = 1e-6  # the same integer nanoseconds read twice: only float noise may differ


@dataclass
class Check:
    record: str
    op: str
    stored_s: float | None
    derived_s: float | None
    ok: bool
    why: str

    def to_dict(self) -> dict:
        return dict(self.__dict__)


@dataclass
class VerifyReport:
    folder: str
    checks: list[Check] = field(default_factory=list)
    skipped: list[dict] = field(default_factory=list)

    @property
    def disagreements(self) -> list[Check]:
        return [c for c in self.checks if not c.ok]

    def to_dict(self) -> dict:
        return {"folder": self.folder, "checked": len(self.checks),
                "disagreements": [c.to_dict() for c in self.disagreements],
                "checks": [c.to_dict() for c in self.checks], "skipped": self.skipped}

    def lines(self) -> list[str]:
        out = [f"verify: {len(self.checks)} measured time(s) in {self.folder} re-derived from their traces"]
        for c in self.checks:
            out.append(f"  {'ok ' if c.ok else 'DISAGREES'} {Path(c.record).name}: {c.op}: {c.why}")
        for s in self.skipped:
            out.append(f"  [skipped] {s['path']}: {s['reason']}")
        n = len(self.disagreements)
        out.append(f"{n} disagreement(s)" if n else "every measured time agrees with its traces")
        return out


def _close(a: float, b: float) -> bool:
    return math.isclose(a, b, rel_tol=TOLERANCE, abs_tol=1e-12)


def derive(trace_root: Path, module: str, reps: int) -> tuple[list[list[float]] | None, str]:
    """Per-trace device runs of ``module`` under ``trace_root/trace-*`` (None and why when they cannot be read)."""
    folders = sorted(p for p in trace_root.glob("trace-*") if p.is_dir())
    if not folders:
        return None, f"no traces in {display_path(trace_root)}"
    per_trace = []
    for folder in folders:
        try:
            times = profile.module_times(folder, module, expected_runs=reps + 1, reader="xplane")
        except (OSError, ValueError) as exc:
            return None, f"{folder.name}: unreadable trace ({exc})"
        if times.uncertain:
            return None, f"{folder.name}: {times.uncertain}"
        per_trace.append(times.run_seconds)
    return per_trace, ""


def check_op(record: dict, row: dict, folder: Path, shown: str) -> Check | None:
    from labs.measure import summarize_device

    m = row["measured"]
    if m.get("measured_from") != "device":
        return None
    stored = m.get("device_median_s")
    where = m.get("trace_dir")
    if not where:
        return Check(shown, row["op"], stored, None, False, "labelled device time but no trace folder recorded")
    root = Path(where) if Path(where).is_absolute() else folder / where
    per_trace, why = derive(root, OPS[row["op"]].module_name(), int(record["reps"]))
    if per_trace is None:
        return Check(shown, row["op"], stored, None, False, f"cannot re-derive: {why}")
    derived = summarize_device(per_trace)
    problems = []
    if stored is None or not _close(derived.p50_s, stored):
        problems.append(f"median {stored!r} s stored, {derived.p50_s:g} s in the traces")
    runs = m.get("device_runs_s")
    if runs is not None and (len(runs) != len(derived.runs_s)
                             or not all(_close(a, b) for a, b in zip(sorted(runs), derived.runs_s))):
        problems.append(f"the {len(runs)} stored runs differ from the {len(derived.runs_s)} in the traces")
    if not _close(float(m["measured_s"]), derived.p50_s):
        problems.append(f"measured {m['measured_s']:g} s is not the traces' median {derived.p50_s:g} s")
    if problems:
        return Check(shown, row["op"], stored, derived.p50_s, False, "; ".join(problems))
    return Check(shown, row["op"], stored, derived.p50_s, True,
                 f"{derived.p50_s:g} s over {len(derived.runs_s)} runs in {len(per_trace)} traces")


def verify_folder(bench_dir: Path | None = None) -> VerifyReport:
    folder = records.default_dir() if bench_dir is None else Path(bench_dir)
    report = VerifyReport(str(folder))
    for loaded in records.scan(folder):
        shown = display_path(loaded.path)
        if loaded.record is None:
            report.skipped.append({"path": shown, "reason": loaded.error})
            continue
        for row in loaded.record["ops"]:
            try:
                check = check_op(loaded.record, row, folder, shown)
            except (KeyError, TypeError, ValueError) as exc:
                check = Check(shown, str(row.get("op")), None, None, False, f"cannot re-derive: {exc!r}")
            if check is not None:
                report.checks.append(check)
    return report

"""Device time from a profiler trace (``jax.profiler.trace`` + ``jax.profiler.ProfileData``).

No TensorBoard is needed to read the trace: ``ProfileData`` walks the XSpace
planes directly. Which events count, per platform:
- TPU: a line named "XLA Modules" on the device plane has one event per
  module execution;
- GPU: kernel events on the device plane carry ``hlo_module`` stats;
- CPU: the XLA thunks run on host threads and carry ``hlo_module`` and ``run_id``.

Events are grouped by module, then by run (``run_id`` when the events carry
it; otherwise the sorted events are split into as many equal runs as calls
were made). A run's device time is its span, first start to last end (on the
CPU one run's thunks overlap across threads). The first run of every module
is dropped: it pays for the profiler's own first touches.
"""

from __future__ import annotations

import re
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path

_DEVICE_PLANE = re.compile(r"^/device:(GPU|TPU)", re.IGNORECASE)


def profiler_options():
    """Small traces: no Python tracer, host tracer at its lowest useful level."""
    import jax
    opts = jax.profiler.ProfileOptions()
    opts.python_tracer_level = 0
    opts.host_tracer_level = 1
    return opts


def trace_files(trace_dir: Path) -> list[Path]:
    """Every ``*.xplane.pb`` under ``trace_dir``, oldest first."""
    return sorted(Path(trace_dir).glob("plugins/profile/*/*.xplane.pb"), key=lambda p: p.stat().st_mtime)


@dataclass
class Event:
    module: str
    run: object
    start_ns: float
    end_ns: float


@dataclass
class ModuleTimes:
    """Device seconds per run of one module, in execution order, the first run dropped."""

    module: str
    run_seconds: list[float] = field(default_factory=list)
    dropped_first: bool = False
    grouping: str = ""  # how runs were told apart: "XLA Modules line", "run_id", "split by count"


def _stats(event) -> dict:
    try:
        return dict(event.stats)
    except Exception:  # a stat of a type the binding cannot convert: ignore the event's stats
        return {}


def collect_events(profile) -> list[Event]:
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
                    module = _module_name(st.get("hlo_module") or ev.name)
                    modules_line_events.append(Event(module, st.get("run_id"), ev.start_ns, ev.end_ns))
                elif "hlo_module" in st:
                    kernel_events.append(Event(_module_name(st["hlo_module"]), st.get("run_id"),
                                               ev.start_ns, ev.end_ns))
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
                    host_events.append(Event(_module_name(st["hlo_module"]), st["run_id"], ev.start_ns, ev.end_ns))
    return host_events


def _module_name(raw: object) -> str:
    """"jit_lab_add(42)" -> "jit_lab_add": some traces append the program id."""
    return re.sub(r"\(\d*\)$", "", str(raw))


def group_runs(events: list[Event], expected_runs: int | None) -> tuple[list[float], str]:
    """Device seconds per run (execution order) and how runs were told apart."""
    if not events:
        return [], "no events"
    if all(e.run is not None for e in events):
        by_run: dict[object, list[Event]] = defaultdict(list)
        for e in events:
            by_run[e.run].append(e)
        runs = sorted(by_run.values(), key=lambda evs: min(e.start_ns for e in evs))
        how = "run_id"
    else:
        ordered = sorted(events, key=lambda e: e.start_ns)
        if expected_runs and len(ordered) % expected_runs == 0:
            per = len(ordered) // expected_runs
            runs = [ordered[i:i + per] for i in range(0, len(ordered), per)]
            how = "split by count"
        elif expected_runs and len(ordered) < expected_runs:
            return [], f"{len(ordered)} events for {expected_runs} runs"
        else:
            runs = [[e] for e in ordered]
            how = "one event per run"
    spans = [(max(e.end_ns for e in r) - min(e.start_ns for e in r)) * 1e-9 for r in runs]
    return spans, how


def module_times(trace_dir: Path, module: str, expected_runs: int | None = None) -> ModuleTimes:
    """Device time per run of ``module`` from the newest trace under ``trace_dir``."""
    import jax

    files = trace_files(trace_dir)
    result = ModuleTimes(module)
    if not files:
        result.grouping = "no trace file"
        return result
    profile = jax.profiler.ProfileData.from_file(str(files[-1]))
    events = [e for e in collect_events(profile) if _same_module(e.module, module)]
    spans, how = group_runs(events, expected_runs)
    result.grouping = how
    if len(spans) > 1:
        result.run_seconds = spans[1:]
        result.dropped_first = True
    return result


def _same_module(found: str, wanted: str) -> bool:
    # XLA may suffix a module name (".1", "_spmd") when it clones it.
    return found == wanted or found.startswith(wanted + ".") or found.startswith(wanted + "_")


def describe(trace_dir: Path, max_events: int = 6) -> dict:
    """A small summary of a trace's planes, lines and stat keys (to debug a new platform)."""
    import jax

    files = trace_files(trace_dir)
    if not files:
        return {"trace": None}
    profile = jax.profiler.ProfileData.from_file(str(files[-1]))
    out = {"trace": str(files[-1]), "planes": []}
    for plane in profile.planes:
        lines = []
        for line in plane.lines:
            events = list(line.events)
            lines.append({"line": line.name, "events": len(events),
                          "first": [{"name": e.name[:80], "duration_ns": e.duration_ns,
                                     "stats": {k: str(v)[:60] for k, v in _stats(e).items()}}
                                    for e in events[:max_events]]})
        out["planes"].append({"plane": plane.name, "lines": lines})
    return out


def xprof_hint(trace_dir: Path) -> str:
    """How to open the trace in XProf / TensorBoard."""
    return (f"open the trace: pip install xprof && xprof --logdir {trace_dir}  "
            f"(or: pip install tensorboard tensorboard-plugin-profile && tensorboard --logdir {trace_dir})")

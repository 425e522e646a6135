"""Collectives-lab records as the lab writes them, without jax: a plan for a stand-in device, and
``labs.measure.calls.Measurement`` objects standing in for the device's timings, through the lab's own
``labs.collectives.lab.assemble`` (the function ``labs.collectives.run.run`` ends with)."""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from pathlib import Path

from generator.model import catalogue
from labs.collectives import lab
from labs.measure import calls as measure, timing

CAT = catalogue.load()
NOW = dt.datetime(2026, 11, 30, 12, 0, tzinfo=dt.timezone.utc)


@dataclass
class FakeDevice:
    platform: str = "tpu"
    device_kind: str = "TPU v5 lite"
    chip: object = None
    device_count: int = 16
    host: str = "h"
    jax_version: str = "0"
    jaxlib_version: str = "0"
    python_version: str = "3"


def v5e(count: int = 16) -> FakeDevice:
    return FakeDevice(chip=CAT.get("v5e"), device_count=count)


def cpu(count: int = 8) -> FakeDevice:
    return FakeDevice(platform="cpu", device_kind="cpu", device_count=count)


def measurement(seconds_: float, trace_dir: Path | None, device: bool = True) -> measure.Measurement:
    """A measurement of ``seconds_`` (device p50), or wall-clock only (``device`` False: no traces)."""
    wall = timing.summarize([seconds_ * f for f in (1.1, 1.2, 1.15, 1.3)])
    if not device:
        return measure.Measurement(wall, None, "", None, "not traced (no trace directory)")
    dev = measure.summarize_device([[seconds_ * f for f in (0.98, 1.0, 1.02)], [seconds_ * f for f in (0.99, 1.01)]])
    return measure.Measurement(wall, dev, "markers", str(trace_dir) if trace_dir else None, "", 2, 0, "xplane")


def record(out_dir: Path, device: FakeDevice | None = None, learner: str = "", device_time: bool = True,
           process_count: int = 1, **options) -> dict:
    """The dict ``run`` would return: every row measured at a time growing with its bytes.
    ``learner``: "" none, "some" two rows, "all" every row (graded on the learner)."""
    plan = lab.make_plan(lab.Options(out_dir=out_dir, **options), device or v5e(), NOW)
    measured = {r.id: measurement(2e-6 + r.bytes / 5e10, plan.trace_dir / r.id if plan.trace_dir else None,
                                  device_time) for r in plan.rows}
    local = measurement(3e-4, None, device_time)
    chosen = {"": [], "some": plan.rows[:2], "all": plan.rows}[learner]
    mine = {r.id: 1.5 * measured[r.id].measured_s for r in chosen}
    return lab.assemble(plan, measured, local, mine, process_count)

"""The probes a miss is explained with, measured on every device (CPU included), each with its spread.

``measure_probes`` runs them: the calibration (``calibration_probes``), each op kind's fixed cost
(``fixed_cost_probes``) and the measured hierarchy; ``compiled_dtype`` reads the converts in an op's
optimized HLO. Units: seconds, bytes, FLOPs, bytes/s, FLOP/s.

Details: docs/internals-labs.md.
"""

from __future__ import annotations

import datetime as _dt
import re
import time
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Protocol

from generator.model import catalogue, hierarchy as model, roofline
from generator.model.hierarchy import Hierarchy
from generator.model.units import fmt
from labs.measure import calibrate as cal, calls as measure, hierarchy as lab_hierarchy, ops as lab_ops

if TYPE_CHECKING:
    from labs.measure.calibrate import Calibration
    from labs.measure.device import DeviceInfo
    from labs.measure.calls import Measurement

StoredPath = Callable[[str | None], str | None]  # a trace path as the record stores it (``Plan.stored_path``)

# The smallest lattice-legal edge: one (8, 128) tile's lane count (generator/model/chips.yaml
# facts.tiling_lattice_32bit); the skinny matmul keeps its 8 rows.
FIXED_COST_EDGE_FACT = "tiling_lattice_32bit"
PROBE_NAMES = ("fixed cost", "copy", "matmul")


# ----------------------------------------------------------------- what the compiled program says

_CONVERT = re.compile(r"=\s*f32\[[^\]]*\][^=]*?\bconvert\(")


def count_converts(hlo_text: str) -> int:
    """Converts to f32 in an optimized HLO module's text (fused computations included)."""
    return sum(1 for line in hlo_text.splitlines() if _CONVERT.search(line))


def compiled_dtype(jitted: Any, args: tuple[Any, ...]) -> dict[str, int | str | None]:
    """{"converts": count or None, "hlo": "optimized" or why not} of a jitted function on ``args``."""
    try:
        text = jitted.lower(*args).compile().as_text()
    except Exception as exc:  # an old or odd backend without HLO text: the verdict falls back to bytes
        return {"converts": None, "hlo": f"unavailable: {type(exc).__name__}"}
    if not isinstance(text, str) or not text:
        return {"converts": None, "hlo": "unavailable: empty text"}
    return {"converts": count_converts(text), "hlo": "optimized"}


# ----------------------------------------------------------------- probes, re-measured once when noisy

TARGET_SPREAD = 0.10  # a probe is re-measured until its spread is at most this ...
PROBE_BUDGET_S = 3.0  # ... or this many seconds of re-measuring are spent


def spread_of(meas: "Measurement") -> float:
    """A measurement's spread (IQR / median): its device runs' when traced, else its wall runs'."""
    return meas.device.spread if meas.device is not None else meas.wall.spread


def remeasured(measure: Callable[[], "Measurement"], budget_s: float = PROBE_BUDGET_S) -> tuple["Measurement", bool]:
    """(the last measurement, whether it was taken more than once): measured again while its spread
    is over TARGET_SPREAD and the budget lasts (the spread left then widens the band its reason is
    judged in; it never vetoes it). The last is kept because its traces are the ones on disk."""

    started = time.monotonic()
    last = measure()
    again = False
    while spread_of(last) > TARGET_SPREAD and time.monotonic() - started < budget_s:
        again = True
        last = measure()
    return last, again


def fixed_cost_edge(size: int, ops: tuple[str, ...] = ()) -> int:
    """The edge the fixed cost is measured at: the lattice's lane count (128), never above the run's N;
    with the skinny matmul among ``ops``, above its rows (its shape needs N > rows)."""

    lanes = int(catalogue.load().facts[FIXED_COST_EDGE_FACT].value[1])
    edge = max(1, min(size, lanes))
    return max(edge, lab_ops.SKINNY_ROWS + 1) if "skinny_matmul" in ops else edge


def fixed_cost_probes(ops: tuple[str, ...], size: int, dtype: str, reps: int,
                      trace_dir: Path | None, device: "DeviceInfo | None" = None
                      ) -> dict[str, tuple["Measurement", bool, int]]:
    """op -> (device time of that op at its smallest lattice-legal size, re-measured?, the edge). With
    ``device``, each probe rotates its inputs through as many sets as the lab's op would at that size
    (``labs.measure.ops.LabOp.rotation``): one hot set reads a small call's cost low (2-3 µs of a 5 µs reduce_sum
    on this project's CPU)."""

    edge = fixed_cost_edge(size, ops)
    out: dict[str, tuple[Measurement, bool, int]] = {}
    for name in ops:
        fn, make_inputs = lab_ops.build(name, edge, dtype)
        count = 1
        if device is not None:
            try:
                count = lab_ops.rotation(lab_ops.OPS[name], edge, dtype, device).sets
            except MemoryError:
                count = 1
        sets = [make_inputs(seed) for seed in range(count)]
        folder = None if trace_dir is None else Path(trace_dir) / name

        def once(fn: Callable[..., Any] = fn, sets: list[tuple[Any, ...]] = sets, folder: Path | None = folder
                 ) -> Measurement:
            return measure.measure_call(lambda i: fn(*sets[i % len(sets)]), lab_ops.OPS[name].module_name(), reps,
                                        folder)

        meas, again = remeasured(once)
        out[name] = (meas, again, edge)
    return out


def calibration_probes(device: "DeviceInfo", dtype: str, reps: int,
                       trace_dir: Path | None) -> tuple["Calibration", bool]:
    """``labs.measure.calibrate.calibrate``, run again while its matmul or copy spread is over TARGET_SPREAD and
    the budget lasts; the last run is kept (its traces are the ones on disk)."""

    started = time.monotonic()
    last = cal.calibrate(device, dtype, reps, trace_dir)
    again = False
    while (max(spread_of(last.matmul), spread_of(last.copy)) > TARGET_SPREAD
           and time.monotonic() - started < PROBE_BUDGET_S):
        again = True
        last = cal.calibrate(device, dtype, reps, trace_dir)
    return last, again


def _probe_dict(meas: "Measurement", stored_path: StoredPath) -> dict[str, Any]:
    d = meas.to_dict()
    d["trace_dir"] = stored_path(d["trace_dir"])
    return d


def probes_dict(fixed: dict[str, tuple["Measurement", bool, int]], calibration: "Calibration",
                stored_path: StoredPath, calibration_remeasured: bool = False,
                hierarchy: Hierarchy | None = None) -> dict[str, Any]:
    """The record's ``probes``: the fixed cost per op kind and the two attained speeds, each with its
    spread and noise verdict (``noisy``: the probes still noisy after one re-measurement).

    An op kind's fixed cost is its smallest call's device time less that call's own roofline floor at
    the fastest speeds the device showed (the calibration's, or a faster measured hierarchy level or
    matmul shape): what a call costs beyond its work, so floor + fixed cost does not count the work
    twice, and a slow big-matmul probe never hides a small matmul's fixed cost."""

    ceilings = calibration.ceilings() if hierarchy is None else hierarchy.fastest(calibration.ceilings())
    by_op: dict[str, dict[str, Any]] = {}
    for name, (meas, again, edge) in fixed.items():
        work_s = roofline.estimate(ceilings, lab_ops.OPS[name].cost(edge, calibration.dtype)).floor_s
        by_op[name] = {"fixed_cost_s": max(0.0, meas.measured_s - work_s), "device_s": meas.measured_s,
                       "work_floor_s": work_s, "measured_from": meas.measured_from, "size": edge,
                       "spread": meas.device.spread if meas.device else meas.wall.spread,
                       "noisy": bool(meas.noisy_why), "noisy_why": list(meas.noisy_why), "remeasured": again,
                       "measurement": _probe_dict(meas, stored_path)}
    noisy: list[str] = []
    if any(v["noisy"] for v in by_op.values()):
        noisy.append("fixed cost")
    if calibration.copy.noisy_why:
        noisy.append("copy")
    if calibration.matmul.noisy_why:
        noisy.append("matmul")
    smallest = min(by_op.values(), key=lambda v: v["fixed_cost_s"]) if by_op else None
    return {"fixed_cost_s": smallest["fixed_cost_s"] if smallest else 0.0,
            "fixed_cost_from": smallest["measured_from"] if smallest else "wall",
            "fixed_cost_by_op": by_op,
            "attained_flops_per_s": calibration.flops_per_s, "attained_bytes_per_s": calibration.bytes_per_s,
            "calibration": calibration.to_dict(stored_path), "calibration_remeasured": calibration_remeasured,
            "noisy": noisy, "hierarchy": hierarchy.to_dict() if hierarchy is not None else None}


class ProbeOptions(Protocol):
    """The options ``measure_probes`` reads (``labs.runner.LabOptions``)."""

    @property
    def dtype(self) -> str: ...
    @property
    def reps(self) -> int: ...
    @property
    def ops(self) -> tuple[str, ...]: ...
    @property
    def size(self) -> int: ...


class ProbePlan(Protocol):
    """What ``measure_probes`` reads of its plan (a ``labs.runner.Plan``; that module imports this one)."""

    @property
    def options(self) -> ProbeOptions: ...
    @property
    def device(self) -> DeviceInfo: ...
    @property
    def calibrate(self) -> bool: ...
    @property
    def trace_dir(self) -> Path | None: ...


@dataclass
class Probed:
    """Every probe of one run: the calibration (matmul and copy), the fixed cost per op kind, when."""

    calibration: "Calibration"
    calibration_remeasured: bool
    fixed: dict[str, tuple[Measurement, bool, int]]  # fixed_cost_probes: op -> (measured, re-measured?, edge)
    measured_at: str
    shown_before_predictions: bool = False
    shown_at: str | None = None  # ISO 8601 UTC, when shown as the device's datasheet (labs.session)
    hierarchy: Hierarchy | None = None  # EX·06 measured on this device (labs.measure.hierarchy)


def measure_probes(plan: ProbePlan, progress: Callable[[str], None] | None = None) -> Probed:
    """The probes of ``plan`` (a ``labs.runner.Plan``): calibration, then the fixed cost per op kind."""

    progress = progress or (lambda label: None)
    o = plan.options
    progress("calibrate" if plan.calibrate else "probes")
    calibration, again = calibration_probes(plan.device, o.dtype, o.reps, plan.trace_dir)
    progress("fixed cost")
    fixed = fixed_cost_probes(o.ops, o.size, o.dtype, min(o.reps, cal.PROBE_MAX_REPS),
                              plan.trace_dir / "fixed_cost" if plan.trace_dir is not None else None, plan.device)
    progress("hierarchy")
    # the calibrated copy is DRAM's figure: the same op-sized rotated calls, measured once (labs.measure.calibrate)
    main_memory = (calibration.bytes_per_s, lab_hierarchy.spread_of(calibration.copy))
    found = lab_hierarchy.measure_hierarchy(plan.device, o.size, tuple(dict.fromkeys((o.dtype, "f32"))), progress,
                                            trace_dir=plan.trace_dir / "hierarchy" if plan.trace_dir is not None else None,
                                            main_memory=main_memory)
    return Probed(calibration, again, fixed, _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"),
                  hierarchy=found)


def datasheet_constants(probed: Probed, stored_path: StoredPath) -> dict[str, Any]:
    """The measured datasheet as the record stores it: the constants predictions were made from."""
    probes = probes_dict(probed.fixed, probed.calibration, stored_path, probed.calibration_remeasured,
                         probed.hierarchy)
    return {"dtype": probed.calibration.dtype, "peak_flops_per_s": probed.calibration.flops_per_s,
            "hbm_bytes_per_s": probed.calibration.bytes_per_s,
            "fixed_cost_by_op_s": {op: v["fixed_cost_s"] for op, v in probes["fixed_cost_by_op"].items()},
            "noisy": probes["noisy"], "measured_at": probed.measured_at,
            "shown_before_predictions": probed.shown_before_predictions}


def datasheet_lines(probed: Probed, device_kind: str) -> list[str]:
    """This device's datasheet, measured just now: what to predict from where the catalogue has none."""

    c = probed.calibration
    lines = [f"This device's datasheet ({device_kind}), measured just now (no catalogue entry):",
             f"  peak {c.dtype} FLOP/s (a {c.matmul_dim}^3 matmul): {fmt(c.flops_per_s, 'FLOP/s')}",
             f"  memory bandwidth (an in-place copy): {fmt(c.bytes_per_s, 'B/s')}"]
    net = datasheet_constants(probed, lambda path: path)["fixed_cost_by_op_s"]
    for op, (meas, _again, edge) in probed.fixed.items():
        article = "an" if op[:1] in "aeiou" else "a"
        lines.append(f"  fixed cost of {article} {op} call (N={edge}, device time beyond its work): {fmt(net[op], 's')}"
                     + (" (noisy)" if meas.noisy_why else ""))
    if probed.hierarchy is not None:
        lines.extend(model.lines(probed.hierarchy))
    lines.append("Predict from these figures: floor = max(FLOPs / peak, bytes / bandwidth), plus the fixed cost "
                 "for a small op.")
    return lines


# ----------------------------------------------------------------- a record's evidence, pure Python

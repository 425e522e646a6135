"""Is a record physically and internally consistent? The rules the gate adds to counting.

Each function returns why-not lines, each starting with the rule it names (``schema:``, ``traces:``,
``datasheet floor:`` ...); ``reasons`` runs them all. The bounds ``FLOOR_SLACK`` and
``PROBE_MIN_FRACTION`` and their sources are in the doc page. Pure Python: no jax.

Details: docs/internals-labs.md.
"""

from __future__ import annotations

import math
import re
from pathlib import Path
from typing import TYPE_CHECKING, Any

from generator.model import catalogue, costs, roofline
from generator.io.safeio import display_path
from labs.records.types import LabRecord, as_record
from labs.measure.ops import OPS
from generator.model.hierarchy import Hierarchy, HierarchyError
from labs.records import evidence
from labs.gate import verify
from labs.records.folder import SCHEMA_VERSION

if TYPE_CHECKING:  # annotations only: the record as JSON, read defensively here
    from labs.records.folder import RecordJSON
    from labs.measure.hloproto import Shape

FLOOR_SLACK = 0.10  # faster than the datasheet floor by more than 10%: impossible on that chip
PROBE_MIN_FRACTION = 0.10  # a probe under a tenth of the datasheet: not that chip (docs/internals-labs.md)
REL = 1e-9  # numbers copied from one another: only float noise may differ
# Line names of host threads (XLA's CPU runtime, the Python thread that runs the lab, thread pools):
# a device plane's lines are its streams ("Stream #13", "XLA Modules", "XLA Ops"), never these.
_HOST_THREAD = re.compile(r"^(tf_|python\d*$|MainThread$|Thread-\d|ThreadPoolExecutor-|pool-)")
_PLANE = {"gpu": re.compile(r"^/device:GPU", re.IGNORECASE), "tpu": re.compile(r"^/device:TPU", re.IGNORECASE)}


def _object(value: object) -> dict[str, Any]:
    """``value`` when it is a JSON object, else an empty one: the record's parts are read defensively."""
    return value if isinstance(value, dict) else {}


def _float(value: Any) -> float:
    """``float(value)`` of an untrusted JSON value: TypeError or ValueError for anything that is not a
    number (or a number's text), which the callers catch."""
    return float(value)


def _close(a: Any, b: Any, rel: float = REL) -> bool:
    try:
        a, b = float(a), float(b)
    except (TypeError, ValueError):
        return False
    return math.isfinite(a) and math.isfinite(b) and math.isclose(a, b, rel_tol=rel, abs_tol=0.0)


def _whole(value: object) -> int | None:
    """An integer the schema accepts (``4096`` or ``4096.0``) as an int; None for anything else.
    A size written as a float must not switch a rule off."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, float) and value.is_integer():
        return int(value)
    return None


def schema_reasons(record: RecordJSON) -> list[str]:
    version = record.get("schema_version")
    if version != SCHEMA_VERSION:
        return [f"schema: version {version} is older than {SCHEMA_VERSION}, the version this tool writes: "
                "shown as history, never counted (its checks are weaker)"]
    return []


def probe_measurements(record: RecordJSON) -> dict[str, tuple[dict[str, Any], str, tuple[Shape, ...] | None]]:
    """The probes' stored measurements: name -> (measurement dict, XLA module name, the entry
    parameters its module is compiled for: None where the record does not say)."""

    probes = _object(record.get("probes"))
    cal = _object(probes.get("calibration"))
    found: dict[str, tuple[dict[str, Any], str, tuple[Shape, ...] | None]] = {}
    # The fixed cost is measured per op kind: the same op at its smallest size, timed under the op's
    # own XLA module name in its own trace folder (labs.measure.probes.fixed_cost_probes).
    by_op = _object(probes.get("fixed_cost_by_op"))
    for op, entry in by_op.items():
        if op in OPS and isinstance(entry, dict) and isinstance(entry.get("measurement"), dict):
            found[f"fixed cost {op}"] = (entry["measurement"], OPS[op].module_name(),
                                         verify.op_parameters(op, entry.get("size"), record.get("dtype")))
    for part, module in (("matmul", "jit_lab_calibrate_matmul"), ("copy", "jit_lab_calibrate_copy")):
        if isinstance(cal.get(part), dict):
            # The calibration matmul is the matmul op's module at its dim (x @ y, both [dim, dim]).
            shapes = verify.op_parameters("matmul", cal[part].get("dim"), record.get("dtype")) if part == "matmul" else None
            found[f"calibration {part}"] = (cal[part], module, shapes)
    return found


def trace_reasons(record: RecordJSON, folder: Path, typed: LabRecord | None = None) -> list[str]:
    """``traces:``, ``device planes:`` and ``trace times:`` for one record in ``folder``."""

    typed = as_record(record) if typed is None else typed
    why: list[str] = []
    planes: set[str] = set()
    lines: set[str] = set()
    cited: dict[Path, str] = {}  # trace folder -> the measurement that cites it
    spans: dict[str, tuple[int, int]] = {}  # measurement -> its traces' first start, last stop (Unix ns)

    where = record.get("trace_dir")
    own = (Path(folder) / where).resolve() if isinstance(where, str) and where else None
    if own is None or own.parent != (Path(folder) / "traces").resolve():
        why.append(f"traces: the record's own trace folder {where!r} is not traces/<name> in its records folder")
        own = None

    def own_traces(name: str, root: Path | None, sessions: list[tuple[int, int]]) -> None:
        # An op and its fixed-cost probe time the same XLA module: one measurement's traces must
        # never stand in for another's (the op's time at N swapped for the probe's small size).
        if sessions:
            spans[name] = (min(s[0] for s in sessions), max(s[1] for s in sessions))
        if root is None:
            return
        key = root.resolve()
        if own is not None and own not in key.parents:
            why.append(f"traces: {name}: its traces ({display_path(root)}) are not under the record's own "
                       f"{where}/: another run's traces")
        if key in cited:
            why.append(f"traces: {cited[key]} and {name} cite the same traces ({root.name}): "
                       "each measurement has its own")
        else:
            cited[key] = name
    for row in typed.ops:
        if row.measured.measured_from != "device" or row.op not in OPS:
            continue
        sessions: list[tuple[int, int]] = []
        check = verify.check_measured(row.measured.to_dict(), OPS[row.op].module_name(), int(typed.reps), folder,
                                      planes, lines, parameters=verify.op_parameters(row.op, typed.size, typed.dtype),
                                      sessions=sessions)
        if check[0]:
            why.append(f"traces: {row.op}: {check[0]}")
        own_traces(row.op, check[1], sessions)
    ops_measured = set(spans)
    for name, (m, module, shapes) in probe_measurements(record).items():
        if m.get("measured_from") != "device":
            why.append(f"traces: {name}: wall clock, not device time")
            continue
        runs, traces = m.get("device_runs"), m.get("traces")
        reps = runs // traces if isinstance(runs, int) and isinstance(traces, int) and traces > 0 else 0
        sessions = []
        check = verify.check_measured(m, module, reps, folder, planes, lines, parameters=shapes, sessions=sessions)
        if check[0]:
            why.append(f"traces: {name}: {check[0]}")
        own_traces(name, check[1], sessions)
    why += verify.time_reasons(spans, ops_measured, typed)
    wanted = _PLANE.get(str(record.get("platform")))
    if wanted is not None:
        # The planes of every trace read above: one parse per trace file.
        if not any(wanted.match(n) for n in planes):
            shown = ", ".join(sorted(planes)[:4]) or "none readable"
            why.append(f"device planes: platform '{record.get('platform')}' but the traces hold no "
                       f"/device:{str(record.get('platform')).upper()} plane (planes: {shown})")
        threads = sorted(n for n in lines if _HOST_THREAD.match(n))
        if threads:
            why.append(f"device planes: the device plane's lines are host threads ({', '.join(threads[:3])}), "
                       "not device streams: a host trace relabelled")
    return why


def evidence_reasons(record: RecordJSON) -> list[str]:
    """``probes:`` and ``evidence:``: the probe numbers agree with their measurements and each op's
    evidence with the probes and the constants."""
    why = []
    probes = record.get("probes")
    if not isinstance(probes, dict):
        return ["probes: the record has no probes (fixed cost, attained speeds)"]
    why += _fixed_cost_reasons(record, probes)
    cal = probes.get("calibration")
    if not isinstance(cal, dict):
        why.append("probes: no calibration measurement behind the attained speeds")
    else:
        mm, cp = cal.get("matmul") or {}, cal.get("copy") or {}
        for key, cal_key, stored, work, m in (
                ("attained_flops_per_s", "peak_flops_per_s", probes.get("attained_flops_per_s"), mm.get("flops"), mm),
                ("attained_bytes_per_s", "hbm_bytes_per_s", probes.get("attained_bytes_per_s"),
                 cp.get("bytes_moved"), cp)):
            try:
                derived = _float(work) / _float(m.get("measured_s"))
            except (TypeError, ValueError, ZeroDivisionError):
                derived = None
            if derived is None or not _close(stored, derived) or not _close(cal.get(cal_key), stored):
                why.append(f"probes: {key} {stored!r} is not what its measurement gives "
                           f"({derived!r}; calibration says {cal.get(cal_key)!r}) (edited?)")
        dim = _whole(mm.get("dim"))
        if dim is None:
            why.append(f"probes: the calibration matmul's dim {mm.get('dim')!r} is not a whole number")
        else:
            expected = costs.cost("matmul", (dim,) * 3, record.get("dtype", "bf16")).flops
            if not _close(expected, mm["flops"]):
                why.append(f"probes: the calibration matmul counts {mm['flops']!r} FLOPs, but "
                           f"{mm['dim']}^3 is {expected:g}")
        name = cal.get("name")
        if name is not None and name != f"{record.get('device_kind')} (calibrated)":
            why.append(f"probes: the calibration was made on '{name}', not '{record.get('device_kind')} (calibrated)'")
    constants = record.get("constants") or {}
    cal_consts = constants.get("calibrated")
    if isinstance(cal_consts, dict) and isinstance(cal, dict):
        for key in ("peak_flops_per_s", "hbm_bytes_per_s"):
            if not _close(cal_consts.get(key), cal.get(key)):
                why.append(f"probes: constants.calibrated.{key} {cal_consts.get(key)!r} is not the probes' "
                           f"{cal.get(key)!r}")
    for row in record["ops"]:
        ev = row.get("evidence")
        if not isinstance(ev, dict):
            why.append(f"evidence: {row['op']}: no evidence object")
            continue
        per_op = (probes.get("fixed_cost_by_op") or {}).get(row["op"]) if isinstance(
            probes.get("fixed_cost_by_op"), dict) else None
        pairs: list[tuple[str, Any]] = [
                 ("fixed_cost_s", per_op.get("fixed_cost_s") if isinstance(per_op, dict) else probes.get("fixed_cost_s")),
                 ("attained_flops_per_s", probes.get("attained_flops_per_s")),
                 ("attained_bytes_per_s", probes.get("attained_bytes_per_s")),
                 ("xla_flops", (row.get("xla_cost") or {}).get("flops")),
                 ("xla_bytes", (row.get("xla_cost") or {}).get("bytes_accessed"))]
        graded = _floor(record, row)
        if graded is not None:
            pairs += [("floor_s", graded[0]), ("peak_flops_per_s", graded[1]), ("peak_bytes_per_s", graded[2])]
        for key, expected in pairs:
            value = ev.get(key)
            if value is None and expected is None:
                continue
            if not _close(value, expected):
                why.append(f"evidence: {row['op']}: evidence.{key} {value!r} is not {expected!r} "
                           "(from the probes and constants; edited?)")
        why += _hierarchy_prediction_reasons(record, probes, row)
    return why


def _hierarchy_prediction_reasons(record: RecordJSON, probes: dict[str, Any], row: dict[str, Any]) -> list[str]:
    """A stored hierarchy prediction is what the record's own probes and hierarchy give."""

    stored = (row.get("predictions") or {}).get("hierarchy")
    if not isinstance(stored, dict):
        return []
    expected = evidence.hierarchy_prediction(probes, str(record.get("dtype")), row)
    if expected is None or not _close(stored.get("seconds"), expected["seconds"], 1e-6):
        return [f"predictions: {row.get('op')}: the hierarchy's prediction {stored.get('seconds')!r} s is not what "
                f"the record's probes and hierarchy give ({expected['seconds'] if expected else None!r} s) (edited?)"]
    return []


def _fixed_cost_reasons(record: RecordJSON, probes: dict[str, Any]) -> list[str]:
    """``probes:`` for the fixed cost per op kind: each op kind's device time is its measurement's,
    its work floor is the roofline at the probes' attained speeds (or the measured hierarchy's faster
    ones) for that op at the probe's size,
    its fixed cost is the time beyond that work, and ``fixed_cost_s`` is the smallest of them."""

    by_op = probes.get("fixed_cost_by_op")
    if not isinstance(by_op, dict) or not by_op:
        return ["probes: no fixed-cost measurement per op kind behind probes.fixed_cost_s"]
    why = []
    try:
        attained = roofline.Ceilings("probes", float(probes["attained_flops_per_s"]),
                                     float(probes["attained_bytes_per_s"]), str(record.get("dtype")), "")
    except (KeyError, TypeError, ValueError):
        attained = None
    if attained is not None and probes.get("hierarchy") is not None:
        try:  # the work is taken at the fastest rates measured (labs.measure.probes.probes_dict)
            attained = Hierarchy.from_dict(probes["hierarchy"]).fastest(attained)
        except HierarchyError as exc:
            why.append(f"probes: the hierarchy cannot be read ({exc}) (edited?)")
    for op, entry in by_op.items():
        if op not in OPS or not isinstance(entry, dict) or not isinstance(entry.get("measurement"), dict):
            why.append(f"probes: fixed cost {op}: no measurement")
            continue
        device_s, work_s = entry.get("device_s"), entry.get("work_floor_s")
        if not _close(device_s, entry["measurement"].get("measured_s")):
            why.append(f"probes: fixed cost {op}: device_s {device_s!r} s is not its measurement's "
                       f"{entry['measurement'].get('measured_s')!r} s (edited?)")
        probe_size = _whole(entry.get("size"))
        if probe_size is None:
            why.append(f"probes: fixed cost {op}: size {entry.get('size')!r} is not a whole number")
        elif attained is not None:
            expected = roofline.estimate(attained, OPS[op].cost(probe_size, str(record.get("dtype")))).floor_s
            if not _close(work_s, expected, 1e-6):
                why.append(f"probes: fixed cost {op}: work_floor_s {work_s!r} s is not the roofline's "
                           f"{expected:g} s at the attained speeds (edited?)")
        try:
            net = max(0.0, _float(device_s) - _float(work_s))
        except (TypeError, ValueError):
            net = None
        if net is None or not _close(entry.get("fixed_cost_s"), net, 1e-6):
            why.append(f"probes: fixed cost {op}: fixed_cost_s {entry.get('fixed_cost_s')!r} s is not its device "
                       f"time less its work ({net!r} s) (edited?)")
    smallest = [e.get("fixed_cost_s") for e in by_op.values() if isinstance(e, dict)]
    try:
        low = min(_float(v) for v in smallest)
    except (TypeError, ValueError):
        low = None
    if low is None or not _close(probes.get("fixed_cost_s"), low):
        why.append(f"probes: fixed_cost_s {probes.get('fixed_cost_s')!r} s is not the smallest op kind's "
                   f"fixed cost ({low!r} s) (edited?)")
    return why


def _floor(record: RecordJSON, row: dict[str, Any]) -> tuple[float, float, float] | None:
    """(floor s, peak FLOP/s, peak bytes/s) the evidence was built on: the datasheet, else the calibration."""
    for kind in ("datasheet", "calibrated"):
        est = (row.get("predictions") or {}).get(kind)
        if est:
            consts = (record.get("constants") or {}).get(kind) or {}
            return (est.get("seconds"), consts.get("peak_flops_per_s") or 0.0, consts.get("hbm_bytes_per_s") or 0.0)
    return None


def physics_reasons(record: RecordJSON, typed: LabRecord | None = None) -> list[str]:
    """``datasheet:``, ``datasheet floor:`` and ``attained:`` against the claimed chip's datasheet
    (the catalogue's numbers, never the record's)."""

    chip = catalogue.load().for_device_kind(str(record.get("device_kind")))
    if chip is None:
        return []
    dtype = str(record.get("dtype"))
    try:
        sheet = roofline.Ceilings.from_chip(chip, dtype)
    except KeyError:
        return [f"datasheet: the {chip.display} has no {dtype} peak in the catalogue"]
    why = []
    stored = (record.get("constants") or {}).get("datasheet")
    if not isinstance(stored, dict):
        why.append(f"datasheet: device_kind '{record.get('device_kind')}' is the catalogued {chip.display}, "
                   "but the record has no datasheet constants (constants.datasheet is null)")
    elif not (_close(stored.get("peak_flops_per_s"), sheet.peak_flops_per_s)
              and _close(stored.get("hbm_bytes_per_s"), sheet.hbm_bytes_per_s)):
        why.append(f"datasheet: the record's constants ({stored.get('peak_flops_per_s')!r} FLOP/s, "
                   f"{stored.get('hbm_bytes_per_s')!r} B/s) are not the {chip.display}'s "
                   f"({sheet.peak_flops_per_s:g} FLOP/s, {sheet.hbm_bytes_per_s:g} B/s)")
    typed = as_record(record) if typed is None else typed
    size = _whole(typed.size)
    if size is None:
        why.append(f"datasheet floor: N={typed.size!r} is not a whole number")
    for row in typed.ops:
        if row.op not in OPS or size is None:
            continue
        floor_s = roofline.estimate(sheet, OPS[row.op].cost(size, dtype)).floor_s
        measured = float(row.measured.measured_s)
        if measured < (1 - FLOOR_SLACK) * floor_s:
            why.append(f"datasheet floor: {row.op} measured {measured:g} s, {100 * measured / floor_s:.0f}% of "
                       f"the {chip.display}'s roofline floor {floor_s:g} s: faster than that chip can run")
    probes = _object(record.get("probes"))
    for key, peak, unit in (("attained_flops_per_s", sheet.peak_flops_per_s, "FLOP/s"),
                            ("attained_bytes_per_s", sheet.hbm_bytes_per_s, "B/s")):
        value = probes.get(key)
        if not isinstance(value, (int, float)) or isinstance(value, bool) or not math.isfinite(value):
            why.append(f"attained: no {key} to compare with the {chip.display}'s datasheet")
            continue
        fraction = value / peak
        if not PROBE_MIN_FRACTION <= fraction <= 1 + FLOOR_SLACK:
            why.append(f"attained: the probe's {value:g} {unit} is {100 * fraction:.3g}% of the {chip.display}'s "
                       f"datasheet {peak:g} {unit} (plausible: {100 * PROBE_MIN_FRACTION:.0f}% to "
                       f"{100 * (1 + FLOOR_SLACK):.0f}%)")
    return why


def reasons(record: LabRecord | RecordJSON, folder: Path) -> list[str]:
    """Every consistency rule the record breaks (empty: it may count). The probe and evidence rules
    read the stored dict defensively (their numbers are checked against each other, not typed
    twice); the rows are read typed."""
    typed = as_record(record)
    data = typed.to_dict() if isinstance(record, LabRecord) else record
    return [*schema_reasons(data), *trace_reasons(data, folder, typed), *evidence_reasons(data),
            *physics_reasons(data, typed)]

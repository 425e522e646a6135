"""The collectives lab's record as typed objects: ``CollectivesRecord.from_dict`` validates,
``to_dict`` gives the dict back, ``report_lines`` reads it.

``parse`` checks a dict against ``collectives.schema.json`` and the types, ``save`` writes it once it
does, and ``load`` reads a saved one back, validated. Pure Python: no jax.

Details: docs/internals-labs.md.
"""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from typing import Any, ClassVar, Literal

from generator.model.units import seconds, si
from labs.records import folder as records
from labs.records import score
from labs.records.types import (CallMeasured, Graded, Part, Ratios, RecordError, VersionedRecord, Within2x,
                               optional)

SCHEMA_PATH = Path(__file__).with_name("collectives.schema.json")
SCHEMA_NAME = "rudrite-kernels/collectives-record"
SCHEMA_VERSION = 1
SUPPORTED_VERSIONS = (1,)  # CollectivesRecord.schema_version's Literal lists the same (a test checks)

CollectivesOp = Literal["all_gather", "all_reduce", "reduce_scatter", "all_to_all", "sharded_matmul"]
LinkBound = Literal["bandwidth", "latency"]


@dataclasses.dataclass(frozen=True, kw_only=True)
class MeshShape(Part):
    """The device mesh: devices per axis, and the axes' names."""
    shape: tuple[int, ...]
    axes: tuple[str, ...]


@dataclasses.dataclass(frozen=True, kw_only=True)
class LinkDatasheet(Part):
    """The catalogue chip's ICI figures (bytes/s), the per-hop latency (s), wraparound per mesh axis."""
    chip: str
    ici_bytes_per_s_one_way: float
    ici_bytes_per_s_bidi: float
    hop_latency_s: float
    wrap: tuple[bool | None, ...]
    sources: tuple[str, ...]


@dataclasses.dataclass(frozen=True, kw_only=True)
class LinkCalibration(Part):
    """The link fitted to this device's own AllGathers (bytes/s, s per hop) and the local matmul (s, FLOP/s)."""
    w_bidi_bytes_per_s: float
    hop_latency_s: float
    fitted_on: tuple[str, ...]
    model: str
    exact_on_fit: bool
    local_matmul_s: float | None
    flops_per_s: float | None


@dataclasses.dataclass(frozen=True, kw_only=True)
class LinkConstants(Part):
    datasheet: LinkDatasheet | None
    datasheet_note: str
    calibrated: LinkCalibration


@dataclasses.dataclass(frozen=True, kw_only=True)
class LinkPrediction(Part):
    """The collective model's time (s): max(bandwidth term, latency term), plus the local matmul
    (``t_math_s``) for the sharded matmul."""
    seconds: float
    bound: LinkBound
    t_bandwidth_s: float
    t_latency_s: float
    hops: int
    wrap: tuple[bool, ...]
    t_math_s: float | None = optional()  # the sharded matmul only


@dataclasses.dataclass(frozen=True, kw_only=True)
class SecondsPrediction(Part):
    """The learner's time (s) for one row."""
    seconds: float


@dataclasses.dataclass(frozen=True, kw_only=True)
class CollectivesPredictions(Part):
    datasheet: LinkPrediction | None
    calibrated: LinkPrediction | None
    learner: SecondsPrediction | None

    def get(self, graded: str) -> LinkPrediction | SecondsPrediction | None:
        """The graded column's prediction (``record.graded``)."""
        return {"datasheet": self.datasheet, "calibrated": self.calibrated, "learner": self.learner}[graded]


@dataclasses.dataclass(frozen=True, kw_only=True)
class CollectivesRow(Part):
    """One collective (or the sharded matmul) at one size: bytes of the full array, the call's
    measurement, the predictions, their ratios and the verdict."""
    id: str
    op: CollectivesOp
    asked_bytes: float
    bytes: int
    shape: tuple[int, ...]
    jax_op: str
    per_device_input_bytes: int
    measured: CallMeasured
    predictions: CollectivesPredictions
    ratios: Ratios
    within_2x: Within2x
    verdict: Literal["hit", "miss"]
    explanation: str | None


@dataclasses.dataclass(frozen=True, kw_only=True)
class CollectivesSummary(Part):
    graded: Graded
    rows: int
    within_2x: int
    misses: tuple[str, ...]
    median_ratio: float | None


@dataclasses.dataclass(frozen=True, kw_only=True)
class CollectivesRecord(VersionedRecord):
    """A collectives-lab record (``labs/collectives/collectives.schema.json``, versions ``SUPPORTED_VERSIONS``)."""
    SCHEMA: ClassVar[str] = SCHEMA_NAME
    VERSIONS: ClassVar[tuple[int, ...]] = SUPPORTED_VERSIONS

    schema: Literal["rudrite-kernels/collectives-record"]
    schema_version: Literal[1]
    lab: str
    date: str
    host: str
    platform: Literal["cpu", "gpu", "tpu"]
    device_kind: str
    device_count: int
    process_count: int
    chip: str | None
    jax_version: str
    jaxlib_version: str
    python_version: str
    mesh: MeshShape
    dtype: Literal["bf16", "f32"]
    reps: int
    constants: LinkConstants
    trace_dir: str | None
    graded: Graded
    counted: bool
    status: Literal["counted", "practice"]
    rows: tuple[CollectivesRow, ...]
    notes: tuple[str, ...]
    summary: CollectivesSummary

    def row(self, row_id: str) -> CollectivesRow | None:
        """The row ``row_id`` (``all_gather@1MB``, ``sharded_matmul``); None when the record lacks it."""
        return next((r for r in self.rows if r.id == row_id), None)


def load_schema() -> dict[str, Any]:
    with open(SCHEMA_PATH, encoding="utf-8") as fh:
        data: dict[str, Any] = json.load(fh)
    return data


def parse(record: Any) -> CollectivesRecord:
    """The typed record of a dict that passes the schema and the types; RecordError naming the
    first problems' field paths."""
    if not isinstance(record, dict) or record.get("schema") != SCHEMA_NAME:
        raise RecordError(f"not a collectives record (schema {SCHEMA_NAME})")
    if record.get("schema_version") not in SUPPORTED_VERSIONS:
        raise RecordError(f"unknown schema version {record.get('schema_version')!r} "
                          f"(this tool reads {', '.join(map(str, SUPPORTED_VERSIONS))})")
    errors = records.schema_errors(record, load_schema())
    if errors:
        more = f" (and {len(errors) - 3} more)" if len(errors) > 3 else ""
        raise RecordError("; ".join(errors[:3]) + more)
    return CollectivesRecord.from_dict(record)  # the types check each field again


def load(path: Path) -> CollectivesRecord:
    """The validated record at ``path`` (read bounded, through ``generator.io.safeio``); RecordError if unusable."""
    record, _ = records.read_json(path)
    return parse(record)


def save(record: dict[str, Any], out_dir: Path, stem: str) -> Path:
    """Validate, then write ``<out_dir>/<stem>.json`` (``records.save_new``: under the records
    folder's lock, atomically through ``generator.io.safeio``, never replacing an existing record:
    the name takes a ``-2`` suffix instead). RecordError naming the problem."""
    parse(record)
    return records.save_new(records.record_text(record), out_dir, stem)


def report_lines(record: CollectivesRecord) -> list[str]:
    """The table a terminal shows: each row's measured time against its predictions."""
    g = record.graded
    cal = record.constants.calibrated
    lines = [f"{record.lab}: {record.device_count} x {record.device_kind} ({record.platform}), "
             f"mesh {'x'.join(map(str, record.mesh.shape))} {tuple(record.mesh.axes)}, {record.dtype}, "
             f"{record.status}",
             f"graded on: {g}; calibrated link: W_bidi {cal.w_bidi_bytes_per_s:.3g} B/s, "
             f"{seconds(cal.hop_latency_s)} per hop (fitted on {', '.join(cal.fitted_on)})",
             f"{'row':<28} {'bytes':>10} {'measured':>10} {'datasheet':>10} {'calibrated':>10} {'learner':>10}  ratio  verdict"]
    for r in record.rows:
        cells = [seconds(p.seconds) if p is not None else "-" for p in (r.predictions.get(k) for k in
                                                                          ("datasheet", "calibrated", "learner"))]
        lines.append(f"{r.id:<28} {si(r.bytes, 'B'):>10} {seconds(r.measured.measured_s):>10} "
                     f"{cells[0]:>10} {cells[1]:>10} {cells[2]:>10}  "
                     f"{score.describe_ratio(r.ratios.get(g)):<6} {r.verdict}")
    for note in record.notes:
        lines.append(f"note: {note}")
    if record.constants.datasheet is None:
        lines.append(f"note: {record.constants.datasheet_note}")
    return lines

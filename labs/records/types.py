"""The lab record as typed objects: ``LabRecord.from_dict`` validates, ``to_dict`` gives the dict back.

Frozen dataclasses whose fields are the JSON keys of ``labs/records/record.schema.json``, with
``to_dict(from_dict(d)) == d`` exactly. Readers (gate, verify, progress, report, ``drill lab``) take
the typed record; the collectives lab's record is built from the same parts. Pure Python: no jax.

Details: docs/internals-labs.md.
"""

from __future__ import annotations

import copy
import dataclasses
import types
import typing
from collections.abc import Mapping
from typing import Any, ClassVar, Literal, TypeVar, Union

from generator.errors import DrillError

P = TypeVar("P", bound="Part")
SCHEMA_NAME = "rudrite-kernels/lab-record"
SUPPORTED_VERSIONS = (1, 2, 3, 4)  # LabRecord.schema_version's Literal lists the same (a test checks)
MAX_ERRORS_SHOWN = 3  # as records.validate: the first few problems, then a count


class RecordError(DrillError, ValueError):
    """A record that does not parse, has an unknown schema, or breaks the schema (``labs.records.folder``
    re-exports it: ``records.RecordError``)."""


def since(version: int) -> Any:
    """A field required from schema ``version`` on (None when an older record lacks it)."""
    return dataclasses.field(default=None, metadata={"since": version})


def optional() -> Any:
    """A field no version requires (None when absent)."""
    return dataclasses.field(default=None)


_PRIVATE = {"_extra", "_keys"}


@dataclasses.dataclass(frozen=True, kw_only=True)
class Part:
    """One JSON object of a record. ``_extra``: keys the types do not declare, kept as stored;
    ``_keys``: the stored key order (empty for an object built in code: declared order)."""

    _extra: Mapping[str, Any] = dataclasses.field(default_factory=dict, repr=False, compare=False)
    _keys: tuple[str, ...] = dataclasses.field(default=(), repr=False, compare=False)

    @classmethod
    def from_dict(cls: type[P], data: Any, path: str = "$", version: int | None = None) -> P:
        """The typed object of ``data``; RecordError naming the field path of each problem
        (``$.ops[2].measured.measured_s: expected number, got str``)."""
        return _checked(cls, data, path, version)

    def to_dict(self) -> dict[str, Any]:
        """The JSON object again: the stored key order, undeclared keys kept (round-trips exactly)."""
        declared = {f.name: f for f in _fields(type(self))}
        if self._keys:
            order: tuple[str, ...] = self._keys
        else:  # built in code: every declared field that is set or required, then the extras
            order = tuple(n for n, f in declared.items() if _required_always(f) or getattr(self, n) is not None)
            order += tuple(k for k in self._extra if k not in declared)
        out: dict[str, Any] = {}
        for key in order:
            if key in declared:
                out[key] = _dump(getattr(self, key))
            else:
                out[key] = copy.deepcopy(self._extra[key])
        return out

    def replace(self: P, **changes: Any) -> P:
        """A copy with ``changes`` (field name -> value); a field the stored object lacked is added
        after its stored keys, so ``to_dict`` writes it."""
        keys = self._keys + tuple(k for k in changes if self._keys and k not in self._keys)
        return dataclasses.replace(self, _keys=keys, **changes)

    def has(self, key: str) -> bool:
        """Whether the stored object holds ``key`` (a None field may be absent or null)."""
        return key in self._keys if self._keys else getattr(self, key, None) is not None or key in self._extra


def _checked(cls: type[P], data: Any, path: str, version: int | None) -> P:
    errors: list[str] = []
    parsed = _parse_part(cls, data, path, version, errors)
    if errors or parsed is None:
        raise RecordError(_joined(errors or [f"{path}: expected object"]))
    return parsed


def _joined(errors: list[str]) -> str:
    more = f" (and {len(errors) - MAX_ERRORS_SHOWN} more)" if len(errors) > MAX_ERRORS_SHOWN else ""
    return "; ".join(errors[:MAX_ERRORS_SHOWN]) + more


_FIELDS: dict[type, tuple[dataclasses.Field[Any], ...]] = {}  # per part type, computed once
_HINTS: dict[type, dict[str, Any]] = {}


def _fields(cls: type) -> tuple[dataclasses.Field[Any], ...]:
    if cls not in _FIELDS:
        _FIELDS[cls] = tuple(f for f in dataclasses.fields(cls) if f.name not in _PRIVATE)
    return _FIELDS[cls]


def _hints(cls: type) -> dict[str, Any]:
    if cls not in _HINTS:
        _HINTS[cls] = typing.get_type_hints(cls)
    return _HINTS[cls]


def _required_always(f: dataclasses.Field[Any]) -> bool:
    return f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING


def required_since(f: dataclasses.Field[Any]) -> int | None:
    """1 for a field every version requires, N for ``since(N)``, None for an optional one."""
    if _required_always(f):
        return 1
    return f.metadata.get("since")


def _parse_part(cls: type[P], data: Any, path: str, version: int | None, errors: list[str]) -> P | None:
    if not isinstance(data, dict):
        errors.append(f"{path}: expected object, got {type(data).__name__}")
        return None
    hints = _hints(cls)
    values: dict[str, Any] = {}
    before = len(errors)
    for f in _fields(cls):
        key_path = f"{path}.{f.name}"
        if f.name in data:
            values[f.name] = _convert(data[f.name], hints[f.name], key_path, version, errors)
        else:
            need = required_since(f)
            if need is not None and (need == 1 or (version is not None and version >= need)):
                errors.append(f"{path}: missing required key '{f.name}'")
    if len(errors) > before:
        return None
    names = {f.name for f in _fields(cls)}
    extra = {k: copy.deepcopy(v) for k, v in data.items() if k not in names}
    return cls(**values, _extra=extra, _keys=tuple(data))


def _json_name(hint: Any) -> str:
    """The JSON Schema type name of a hint (for messages and the schema test)."""
    origin = typing.get_origin(hint)
    if hint is type(None):
        return "null"
    if hint is bool:
        return "boolean"
    if hint is int:
        return "integer"
    if hint is float:
        return "number"
    if hint is str or origin is Literal:
        return "string" if all(isinstance(a, str) for a in typing.get_args(hint) or ("",)) else "integer"
    if origin is tuple:
        return "array"
    if origin in (dict, Mapping) or (isinstance(hint, type) and issubclass(hint, Part)):
        return "object"
    return "any"


def json_types(hint: Any) -> list[str]:
    """Every JSON Schema type a hint allows (``float | None`` -> ["number", "null"])."""
    if _is_union(hint):
        return [_json_name(a) for a in typing.get_args(hint)]
    return [_json_name(hint)]


def _is_union(hint: Any) -> bool:
    return typing.get_origin(hint) in (Union, types.UnionType)


def _matches(value: Any, name: str) -> bool:
    if name == "null":
        return value is None
    if name == "boolean":
        return isinstance(value, bool)
    if name == "integer":  # JSON Schema: 3.0 is an integer; a bool is not
        return (isinstance(value, int) and not isinstance(value, bool)) or (
            isinstance(value, float) and value.is_integer())
    if name == "number":
        return isinstance(value, (int, float)) and not isinstance(value, bool)
    if name == "string":
        return isinstance(value, str)
    if name == "array":
        return isinstance(value, list)
    if name == "object":
        return isinstance(value, dict)
    return True


def _convert(value: Any, hint: Any, path: str, version: int | None, errors: list[str]) -> Any:
    if hint is Any:
        return copy.deepcopy(value)
    if _is_union(hint):
        arms = typing.get_args(hint)
        for arm in arms:
            if _matches(value, _json_name(arm)):
                return _convert(value, arm, path, version, errors)
        errors.append(f"{path}: expected {' or '.join(_json_name(a) for a in arms)}, got {type(value).__name__}")
        return None
    name = _json_name(hint)
    if not _matches(value, name):
        errors.append(f"{path}: expected {name}, got {type(value).__name__}")
        return None
    origin = typing.get_origin(hint)
    if origin is Literal:
        allowed = list(typing.get_args(hint))
        if value not in allowed:
            errors.append(f"{path}: {value!r} is not one of {allowed}")
        return value
    if origin is tuple:
        (item,) = [a for a in typing.get_args(hint) if a is not Ellipsis]
        return tuple(_convert(v, item, f"{path}[{i}]", version, errors) for i, v in enumerate(value))
    if origin in (dict, Mapping):
        _, item = typing.get_args(hint)
        return {k: _convert(v, item, f"{path}.{k}", version, errors) for k, v in value.items()}
    if isinstance(hint, type) and issubclass(hint, Part):
        return _parse_part(hint, value, path, version, errors)
    return value


def _dump(value: Any) -> Any:
    if isinstance(value, Part):
        return value.to_dict()
    if isinstance(value, tuple):
        return [_dump(v) for v in value]
    if isinstance(value, dict):
        return {k: _dump(v) for k, v in value.items()}
    return value


Bound = Literal["compute", "memory"]
MeasuredFrom = Literal["device", "wall"]
Graded = Literal["learner", "datasheet", "calibrated"]


# ----------------------------------------------------------------- the record's parts

@dataclasses.dataclass(frozen=True, kw_only=True)
class Run(Part):
    """The run's entry in the records folder's ledger (``records.save_run``)."""
    ledger: str
    stem: str
    saved_at: str
    number: int | None  # among the device kind's first-run slot; None for practice
    earlier: tuple[str | None, ...]


@dataclasses.dataclass(frozen=True, kw_only=True)
class Probes(Part):
    """The miss reasons' probes: fixed cost (s) and attained speeds (FLOP/s, bytes/s)."""
    fixed_cost_s: float
    fixed_cost_from: MeasuredFrom
    attained_flops_per_s: float
    attained_bytes_per_s: float
    fixed_cost: Mapping[str, Any] | None = optional()  # version 3: one trivial op's measurement
    fixed_cost_by_op: Mapping[str, Any] | None = optional()  # version 4: per op kind
    calibration: Mapping[str, Any] | None = optional()
    calibration_remeasured: bool | None = optional()
    noisy: tuple[str, ...] | None = optional()  # version 4: the probes noisy even re-measured
    hierarchy: Mapping[str, Any] | None = optional()  # generator.model.hierarchy.Hierarchy.to_dict(), measured


@dataclasses.dataclass(frozen=True, kw_only=True)
class LearnerPredictions(Part):
    """When and from where the learner's predictions were read, with their SHA-256."""
    source: str
    read_at: str
    sha256: str
    file_sha256: str | None
    ops: tuple[str, ...]


@dataclasses.dataclass(frozen=True, kw_only=True)
class Source(Part):
    key: str
    title: str
    url: str
    retrieved: str


@dataclasses.dataclass(frozen=True, kw_only=True)
class Datasheet(Part):
    """A catalogued chip's datasheet constants (FLOP/s, bytes/s)."""
    name: str
    peak_flops_per_s: float
    hbm_bytes_per_s: float
    dtype: str
    source: str
    sources: tuple[Source, ...]


@dataclasses.dataclass(frozen=True, kw_only=True)
class Calibrated(Part):
    """Constants measured on the device (FLOP/s, bytes/s), with the two probes' measurements."""
    name: str
    peak_flops_per_s: float
    hbm_bytes_per_s: float
    dtype: str
    source: str
    matmul: Mapping[str, Any]
    copy: Mapping[str, Any]


@dataclasses.dataclass(frozen=True, kw_only=True)
class Constants(Part):
    datasheet: Datasheet | None
    calibrated: Calibrated | None


@dataclasses.dataclass(frozen=True, kw_only=True)
class DeviceMemory(Part):
    """The device's memory and largest cache (bytes), and where each number came from."""
    memory_bytes: float | None
    memory_source: str
    cache_bytes: int | None
    cache_source: str


@dataclasses.dataclass(frozen=True, kw_only=True)
class RooflinePrediction(Part):
    """A roofline prediction (s) from the datasheet or the calibrated constants."""
    seconds: float
    bound: Bound
    t_math_s: float
    t_comms_s: float
    attainable_flops_per_s: float


@dataclasses.dataclass(frozen=True, kw_only=True)
class HierarchyPrediction(RooflinePrediction):
    """The measured hierarchy's prediction (s): the roofline at the op's own measured rates plus the
    fixed cost and fresh-output cost it charges (``labs.records.evidence.hierarchy_prediction``); never graded."""
    fixed_cost_s: float
    fresh_output_s: float | None = optional()


@dataclasses.dataclass(frozen=True, kw_only=True)
class LearnerPrediction(Part):
    seconds: float
    text: str


@dataclasses.dataclass(frozen=True, kw_only=True)
class Predictions(Part):
    datasheet: RooflinePrediction | None
    calibrated: RooflinePrediction | None
    learner: LearnerPrediction | None
    hierarchy: HierarchyPrediction | None = optional()  # absent from records made before the lab kept it

    def get(self, graded: str) -> RooflinePrediction | LearnerPrediction | None:
        """The graded column's prediction (``record.graded``)."""
        return {"datasheet": self.datasheet, "calibrated": self.calibrated, "learner": self.learner}[graded]


@dataclasses.dataclass(frozen=True, kw_only=True)
class CallMeasured(Part):
    """One timed call's measurement (seconds), as ``labs.measure.calls.Measurement.to_dict`` writes it:
    wall clock, device time from the traces, the noise verdict. Both labs' rows hold one (the
    collectives lab's as it is, LAB·0.1's with its buffer rotation: ``Measured``)."""
    wall_median_s: float
    wall_min_s: float
    wall_max_s: float
    wall_spread: float
    wall_samples: int
    device_median_s: float | None
    device_min_s: float | None
    device_runs: int
    device_grouping: str
    trace_dir: str | None
    measured_s: float
    measured_from: MeasuredFrom
    measured_reason: str | None = since(2)
    device_p20_s: float | None = since(2)
    device_p80_s: float | None = since(2)
    device_spread: float | None = since(2)
    device_trace_medians_s: tuple[float, ...] | None = optional()
    device_runs_s: tuple[float, ...] | None = since(3)
    traces: int | None = since(2)
    stray_events: int | None = optional()
    trace_reader: str | None = optional()
    noisy: bool | None = since(2)
    noisy_why: tuple[str, ...] | None = since(2)
    # When its traces were taken (Unix ns, labs.measure.calls.Measurement.window_unix_ns); records
    # written before the lab kept it have neither key.
    traced_from_unix_ns: int | None = optional()
    traced_until_unix_ns: int | None = optional()


@dataclasses.dataclass(frozen=True, kw_only=True)
class Measured(CallMeasured):
    """One LAB·0.1 op's measurement: the call's (seconds), and the input buffer sets rotated
    through (bytes) to defeat the cache."""
    buffer_sets: int
    buffer_set_bytes: int
    cache_bytes: int | None
    defeats_cache: bool


@dataclasses.dataclass(frozen=True, kw_only=True)
class Ratios(Part):
    """Measured / predicted, per prediction column (None: no prediction)."""
    datasheet: float | None
    calibrated: float | None
    learner: float | None

    def get(self, graded: str) -> float | None:
        """The graded column's ratio (``record.graded``)."""
        return {"datasheet": self.datasheet, "calibrated": self.calibrated, "learner": self.learner}[graded]


@dataclasses.dataclass(frozen=True, kw_only=True)
class Within2x(Part):
    datasheet: bool | None
    calibrated: bool | None
    learner: bool | None


@dataclasses.dataclass(frozen=True, kw_only=True)
class OpRatios(Ratios):
    """A LAB·0.1 op's ratios: the shared columns and the measured hierarchy's (never graded)."""
    hierarchy: float | None = optional()  # absent from records made before the lab kept it


@dataclasses.dataclass(frozen=True, kw_only=True)
class OpWithin2x(Within2x):
    hierarchy: bool | None = optional()


@dataclasses.dataclass(frozen=True, kw_only=True)
class Attempt(Part):
    """One explanation given for a miss, and its verdict; ``corrected_s`` in seconds."""
    reasons: tuple[str, ...]
    corrected_s: float | None
    text: str
    verdict: Literal["accepted", "refused"]
    why: str
    at: str


@dataclasses.dataclass(frozen=True, kw_only=True)
class Miss(Part):
    """A miss's explanation: the reasons named, the corrected estimate (s), the judgement."""
    op: str
    reasons: tuple[str, ...]
    text: str
    accepted: bool
    why: str
    corrected_s: float | None = since(4)
    revealed: bool | None = since(4)
    attempts: tuple[Attempt, ...] | None = since(4)
    finding: str | None = optional()  # set when the evidence explains no set of reasons: unexplained-by-evidence


@dataclasses.dataclass(frozen=True, kw_only=True)
class Finding(Part):
    reason_id: str
    supported: bool
    why: str


@dataclasses.dataclass(frozen=True, kw_only=True)
class Evidence(Part):
    """The numbers the miss reasons are decided on (seconds, bytes, FLOPs, FLOP/s, bytes/s)."""
    xla_flops: float | None
    xla_bytes: float | None
    fixed_cost_s: float | None
    attained_bytes_per_s: float | None
    attained_flops_per_s: float | None
    peak_bytes_per_s: float | None = optional()
    peak_flops_per_s: float | None = optional()
    floor_s: float | None = optional()
    bound: Bound | None = optional()
    emulated_dtype: bool | None = optional()
    emulated_from: str | None = optional()
    noisy_probes: tuple[str, ...] | None = optional()
    working_set_bytes: float | None = optional()
    cache_bytes: float | None = optional()
    level: str | None = optional()
    level_bytes_per_s: float | None = optional()
    shape_flops_per_s: float | None = optional()
    f32_shape_flops_per_s: float | None = optional()
    lacking: tuple[str, ...] | None = optional()
    supported_reasons: tuple[str, ...] | None = optional()  # version 3 only (version 4 refuses it)
    findings: tuple[Finding, ...] | None = optional()


@dataclasses.dataclass(frozen=True, kw_only=True)
class XlaCost(Part):
    """XLA's cost analysis of the compiled op (FLOPs, bytes)."""
    flops: float | None
    bytes_accessed: float | None
    transcendentals: float | None
    flops_differ: bool
    bytes_differ: bool


OpName = Literal["matmul", "skinny_matmul", "add", "softmax", "reduce_sum", "embedding"]


@dataclasses.dataclass(frozen=True, kw_only=True)
class OpRow(Part):
    """One op: its model counts (FLOPs, bytes), predictions, measurement, scores and explanation."""
    op: OpName
    label: str
    cost_op: str
    shape: tuple[int, ...]
    dtype: str
    flops: int
    bytes: int
    intensity_flops_per_byte: float
    convention: str
    predictions: Predictions
    measured: Measured
    ratios: OpRatios
    within_2x: OpWithin2x
    verdict: Literal["hit", "miss"]
    explanation: str | None
    xla_cost: XlaCost | None
    compiled: Mapping[str, Any] | None = optional()  # version 4: the optimized HLO's converts
    miss: Miss | None = since(3)
    evidence: Evidence | None = since(3)


@dataclasses.dataclass(frozen=True, kw_only=True)
class Summary(Part):
    graded: Graded
    ops: int
    within_2x: int
    misses: tuple[str, ...]
    unexplained: tuple[str, ...]
    criterion_met: bool


@dataclasses.dataclass(frozen=True, kw_only=True)
class VersionedRecord(Part):
    """A whole record: its ``schema`` name and ``schema_version`` are checked before its fields
    (``SCHEMA``, ``VERSIONS``), and each field is then checked for that version."""
    SCHEMA: ClassVar[str] = ""
    VERSIONS: ClassVar[tuple[int, ...]] = ()

    @classmethod
    def from_dict(cls: type[P], data: Any, path: str = "$", version: int | None = None) -> P:
        """A record of a known schema and version, every field checked for that version."""
        if not isinstance(data, dict):
            raise RecordError("not a JSON object")
        schema, versions = getattr(cls, "SCHEMA"), getattr(cls, "VERSIONS")
        if data.get("schema") != schema:
            raise RecordError(f"unknown schema {data.get('schema')!r} (expected '{schema}')")
        found = data.get("schema_version")
        if not isinstance(found, (int, float)) or isinstance(found, bool) or found not in versions:
            raise RecordError(f"unknown schema version {found!r} "
                              f"(this tool reads {', '.join(map(str, versions))})")
        return _checked(cls, data, path, int(found))


@dataclasses.dataclass(frozen=True, kw_only=True)
class LabRecord(VersionedRecord):
    """A LAB·0.1 record (``labs/records/record.schema.json``, versions ``records.SUPPORTED_VERSIONS``)."""
    SCHEMA: ClassVar[str] = SCHEMA_NAME
    VERSIONS: ClassVar[tuple[int, ...]] = SUPPORTED_VERSIONS

    schema: Literal["rudrite-kernels/lab-record"]
    schema_version: Literal[1, 2, 3, 4]
    lab: str
    date: str
    host: str
    platform: Literal["cpu", "gpu", "tpu"]
    device_kind: str
    chip: str | None
    jax_version: str
    jaxlib_version: str
    python_version: str
    dtype: Literal["bf16", "f32"]
    size: int
    reps: int
    constants: Constants
    device: DeviceMemory
    dispatch_overhead_s: float
    trace_dir: str | None
    graded: Graded
    ops: tuple[OpRow, ...]
    summary: Summary
    device_count: int | None = optional()
    measurement_started_at: str | None = since(2)
    learner_predictions: LearnerPredictions | None = since(2)
    probes: Probes | None = since(3)
    practice: bool | None = since(3)
    run: Run | None = since(3)

    def op(self, name: str) -> OpRow | None:
        """The row of op ``name`` (None when the record lacks it)."""
        return next((row for row in self.ops if row.op == name), None)

    def by_op(self) -> dict[str, OpRow]:
        return {row.op: row for row in self.ops}

    def with_row(self, row: OpRow) -> LabRecord:
        """A copy with ``row`` in place of the row of the same op."""
        return self.replace(ops=tuple(row if r.op == row.op else r for r in self.ops))

    def misses(self) -> list[OpRow]:
        """The op rows whose graded prediction missed by more than 2x."""
        return [row for row in self.ops if row.verdict == "miss"]

    @property
    def started(self) -> str:
        """When the measurement began, else the record's date (older records)."""
        return str(self.measurement_started_at or self.date)


def as_record(record: LabRecord | Mapping[str, Any]) -> LabRecord:
    """A typed record from either form (a dict is validated: RecordError if it does not fit)."""
    return record if isinstance(record, LabRecord) else LabRecord.from_dict(dict(record))


def parts(root: type[Part] | None = None) -> list[type[Part]]:
    """Every part type reachable from ``root`` (default ``LabRecord``; the schema tests walk them)."""
    seen: list[type[Part]] = []

    def visit(hint: Any) -> None:
        for arm in (typing.get_args(hint) if _is_union(hint) or typing.get_origin(hint) is tuple else (hint,)):
            if arm is Ellipsis:
                continue
            if typing.get_origin(arm) is tuple:
                visit(arm)
            elif isinstance(arm, type) and issubclass(arm, Part) and arm not in seen:
                seen.append(arm)
                for f in _fields(arm):
                    visit(_hints(arm)[f.name])
    visit(LabRecord if root is None else root)
    return seen

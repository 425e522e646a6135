"""Lab records: JSON files with a schema version, written by the lab, read by the gate.

Where they live: the learner's own records are in ``default_dir()`` (``$DRILL_RECORDS``,
else ``lab-records`` in the platformdirs user data directory, beside the quiz
store); the course's published records are in the repository's ``bench/``
and are read only when asked for (``--bench bench``).

Validation uses a small checker for the subset of JSON Schema that
``record.schema.json`` uses (type, required, properties, items, enum), so the
lab runs where the ``jsonschema`` package is absent. Pure Python: no jax.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from generator import safeio

if TYPE_CHECKING:
    from generator.miss_reasons import OpEvidence

SCHEMA_PATH = Path(__file__).with_name("record.schema.json")
SCHEMA_NAME = "rudrite-kernels/lab-record"
SCHEMA_VERSION = 4
SUPPORTED_VERSIONS = (1, 2, 3, 4)
RECORD_PREFIX = "lab-0.1"
RECORD_MAX_BYTES = 1024 * 1024  # a record is a few KiB (traces live beside it); 1 MiB is ample
RECORD_MAX_DEPTH = 32  # a record nests about 5 levels deep
# Version 2 adds when the predictions were read and the measurement began, and per op the
# device-time quantiles, the number of traces and the noise verdict.
V2_REQUIRED = ("measurement_started_at", "learner_predictions")
V2_MEASURED_REQUIRED = ("device_p20_s", "device_p80_s", "device_spread", "traces", "measured_reason",
                        "noisy", "noisy_why")
# Version 3 adds the miss reasons' evidence: the probes (fixed cost, attained speeds), per op the
# ``evidence`` object and the ``miss`` judgement, every device run (to recheck the noise flags),
# whether the run is practice, and its entry in the records folder's ledger.
V3_REQUIRED = ("probes", "practice", "run")
V3_OP_REQUIRED = ("evidence", "miss")
V3_MEASURED_REQUIRED = ("device_runs_s",)
# Version 4: an explanation is a corrected estimate (``miss`` also holds ``corrected_s``, ``revealed``
# and every attempt), and the evidence keeps its numbers but not which reasons they support.
V4_MISS_REQUIRED = ("corrected_s", "revealed", "attempts")
LEDGER_NAME = "ledger.jsonl"
LEDGER_MAX_BYTES = 4 * 1024 * 1024  # one short line per run: tens of thousands of runs

RECORDS_ENV = "DRILL_RECORDS"
# The same application name as drills.store.APP_NAME (labs never imports drills; a test checks
# they agree), so the learner's records sit beside their quiz store.
APP_NAME = "rudrite-kernels"
RECORDS_FOLDER = "lab-records"


def default_dir() -> Path:
    """``$DRILL_RECORDS`` if set, else ``lab-records`` in the platformdirs user data directory."""
    env = os.environ.get(RECORDS_ENV, "").strip()
    if env:
        return Path(env).expanduser()
    import platformdirs  # only when no folder was named
    return platformdirs.user_data_path(APP_NAME, appauthor=False) / RECORDS_FOLDER


def predictions_sha256(texts: dict[str, str]) -> str:
    """SHA-256 of the learner's predictions as given (op -> text), in a canonical JSON form."""
    canonical = json.dumps({str(k): str(v) for k, v in texts.items()}, sort_keys=True,
                           ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()


class RecordError(ValueError):
    """A record that does not parse, has an unknown schema, or breaks the schema."""


def load_schema() -> dict:
    with open(SCHEMA_PATH, encoding="utf-8") as fh:
        return json.load(fh)


_TYPES = {
    "object": lambda v: isinstance(v, dict),
    "array": lambda v: isinstance(v, list),
    "string": lambda v: isinstance(v, str),
    "boolean": lambda v: isinstance(v, bool),
    "null": lambda v: v is None,
    "number": lambda v: isinstance(v, (int, float)) and not isinstance(v, bool),
    "integer": lambda v: (isinstance(v, int) and not isinstance(v, bool))
    or (isinstance(v, float) and v.is_integer()),
}


def schema_errors(value: Any, schema: dict, path: str = "$") -> list[str]:
    """Every violation of ``schema`` in ``value``, as "path: problem" strings."""
    errors: list[str] = []
    types = schema.get("type")
    if types is not None:
        names = types if isinstance(types, list) else [types]
        if not any(_TYPES[name](value) for name in names):
            return [f"{path}: expected {' or '.join(names)}, got {type(value).__name__}"]
    if "enum" in schema and value not in schema["enum"]:
        errors.append(f"{path}: {value!r} is not one of {schema['enum']}")
    if isinstance(value, dict):
        for key in schema.get("required", ()):
            if key not in value:
                errors.append(f"{path}: missing required key '{key}'")
        for key, sub in schema.get("properties", {}).items():
            if key in value:
                errors.extend(schema_errors(value[key], sub, f"{path}.{key}"))
    if isinstance(value, list) and "items" in schema:
        for i, item in enumerate(value):
            errors.extend(schema_errors(item, schema["items"], f"{path}[{i}]"))
    return errors


def validate(record: Any) -> None:
    """RecordError naming the first problems when ``record`` is not a valid current record."""
    if not isinstance(record, dict):
        raise RecordError("not a JSON object")
    if record.get("schema") != SCHEMA_NAME:
        raise RecordError(f"unknown schema {record.get('schema')!r} (expected '{SCHEMA_NAME}')")
    if record.get("schema_version") not in SUPPORTED_VERSIONS:
        raise RecordError(f"unknown schema version {record.get('schema_version')!r} "
                          f"(this tool reads {', '.join(map(str, SUPPORTED_VERSIONS))})")
    errors = schema_errors(record, load_schema())
    version = record.get("schema_version")
    if version in (2, 3, 4):
        required = V2_REQUIRED + (V3_REQUIRED if version >= 3 else ())
        measured_required = V2_MEASURED_REQUIRED + (V3_MEASURED_REQUIRED if version >= 3 else ())
        errors += [f"$: missing required key '{k}'" for k in required if k not in record]
        for i, row in enumerate(record.get("ops") or []):
            if not isinstance(row, dict):
                continue
            if version >= 3:
                errors += [f"$.ops[{i}]: missing required key '{k}'" for k in V3_OP_REQUIRED if k not in row]
            if version >= 4:
                miss = row.get("miss")
                if isinstance(miss, dict):
                    errors += [f"$.ops[{i}].miss: missing required key '{k}'" for k in V4_MISS_REQUIRED if k not in miss]
                if isinstance(row.get("evidence"), dict) and "supported_reasons" in row["evidence"]:
                    errors.append(f"$.ops[{i}].evidence: 'supported_reasons' is not stored (judged when answering)")
            measured = row.get("measured")
            if isinstance(measured, dict):
                errors += [f"$.ops[{i}].measured: missing required key '{k}'"
                           for k in measured_required if k not in measured]
    if errors:
        more = f" (and {len(errors) - 3} more)" if len(errors) > 3 else ""
        raise RecordError("; ".join(errors[:3]) + more)


def load(path: Path) -> dict:
    """A validated record from ``path``; RecordError when it cannot be used."""
    try:  # a regular file only, bounded in size, nesting and integer length (generator.safeio)
        record = safeio.read_json_bounded(path, RECORD_MAX_BYTES, RECORD_MAX_DEPTH)
    except safeio.SafeIOError as exc:
        raise RecordError(str(exc)) from None
    validate(record)
    return record


@dataclass(frozen=True)
class Loaded:
    path: Path
    record: dict | None
    error: str | None


def scan(bench_dir: Path) -> list[Loaded]:
    """Every ``lab-*.json`` in ``bench_dir`` (sorted by name), loaded or with its error."""
    bench_dir = Path(bench_dir)
    if not bench_dir.is_dir():
        return []
    found = []
    for path in sorted(bench_dir.glob("lab-*.json")):
        try:
            found.append(Loaded(path, load(path), None))
        except RecordError as exc:
            found.append(Loaded(path, None, str(exc)))
    return found


def slug(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-") or "device"


def record_stem(platform: str, device_kind: str, size: int, stamp: str) -> str:
    """``lab-0.1-gpu-nvidia-h200-n8192-20261129T221500Z``: sorts by device, then size, then time."""
    return f"{RECORD_PREFIX}-{platform}-{slug(device_kind)}-n{size}-{stamp}"


def free_stem(out_dir: Path, stem: str) -> str:
    """``stem``, or ``stem-2``, ``stem-3`` ... : the first with no record and no trace folder yet."""
    out_dir = Path(out_dir)
    candidate, n = stem, 1
    while (out_dir / f"{candidate}.json").exists() or (out_dir / "traces" / candidate).exists():
        n += 1
        candidate = f"{stem}-{n}"
    return candidate


def _free_path(out_dir: Path, stem: str) -> Path:
    path = out_dir / f"{stem}.json"
    n = 1
    while path.exists():
        n += 1
        path = out_dir / f"{stem}-{n}.json"
    return path


def save(record: dict, out_dir: Path, stem: str) -> Path:
    """Validate, then write ``out_dir/<stem>.json`` atomically (never a half-written record).

    An existing record is never replaced: the name takes a ``-2``, ``-3`` ... suffix instead.
    A current-schema record is a new run: it also gets its line in the folder's ledger
    (``save_run``); older records (published ones being copied) are written as they are.
    """
    validate(record)
    if record.get("schema_version") == SCHEMA_VERSION:
        return save_run(record, out_dir, stem)
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    return rewrite(record, _free_path(out_dir, stem))


def read_ledger(folder: Path) -> list[dict]:
    """The records folder's ledger: one JSON object per saved run, oldest first ([] when absent).
    RecordError when it exists but cannot be read (not a regular file, too large)."""
    path = Path(folder) / LEDGER_NAME
    if not path.exists() and not path.is_symlink():
        return []
    try:
        text = safeio.read_text_bounded(path, LEDGER_MAX_BYTES)
    except safeio.SafeIOError as exc:
        raise RecordError(f"ledger: {exc}") from None
    entries = []
    for line in text.splitlines():
        try:
            entry = safeio.loads_bounded(line, 4, str(path))
        except Exception:  # a damaged line: skipped, and the gate says the ledger is damaged
            entry = {"damaged": True}
        entries.append(entry if isinstance(entry, dict) else {"damaged": True})
    return entries


def run_key(record: dict) -> tuple[str, int]:
    """Runs compete for the first-run slot per device kind and N."""
    return str(record.get("device_kind")), int(record.get("size") or 0)


def save_run(record: dict, out_dir: Path, stem: str) -> Path:
    """Save a new run's record and append its line to the folder's ledger (``ledger.jsonl``).

    The ledger counts the runs made with the learner's predictions per device kind and N,
    so a later run stays "not the first" even when the first record is deleted. The
    record's ``run`` says its number among them and the earlier ones' names."""
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    entries = read_ledger(out_dir)
    path = _free_path(out_dir, stem)
    practice = bool(record.get("practice"))
    earlier = [e.get("stem") for e in entries if not e.get("practice")
               and (e.get("device_kind"), e.get("size")) == run_key(record)]
    import datetime as _dt
    saved_at = _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="microseconds")
    record["run"] = {"ledger": LEDGER_NAME, "stem": path.stem, "saved_at": saved_at,
                     "number": None if practice else len(earlier) + 1, "earlier": earlier[-20:]}
    rewrite(record, path)
    line = json.dumps({"stem": path.stem, "device_kind": record.get("device_kind"), "size": record.get("size"),
                       "platform": record.get("platform"), "practice": practice,
                       "started_at": record.get("measurement_started_at"), "saved_at": saved_at,
                       "sha256": (record.get("learner_predictions") or {}).get("sha256")},
                      ensure_ascii=False, separators=(",", ":"))
    ledger = out_dir / LEDGER_NAME
    old = safeio.read_text_bounded(ledger, LEDGER_MAX_BYTES) if ledger.exists() else ""
    try:
        safeio.write_text(ledger, old + ("" if not old or old.endswith("\n") else "\n") + line + "\n")
    except safeio.SafeIOError as exc:
        raise RecordError(f"ledger: {exc}") from None
    return path


def rewrite(record: dict, path: Path) -> Path:
    """Validate, then replace the record at ``path`` atomically (the old one stays whole on failure)."""
    validate(record)
    path = Path(path)
    try:  # only over a regular file or a new path, keeping its mode (generator.safeio)
        safeio.write_text(path, json.dumps(record, indent=2, sort_keys=False) + "\n")
    except safeio.SafeIOError as exc:
        raise RecordError(str(exc)) from None
    return path


def prepare_output(out_dir: Path, stem: str, trace: bool, trace_dir: Path | None = None) -> Path | None:
    """The trace folder for a record named ``stem`` (None without traces: ``trace`` False), after
    proving the record folder and the trace folder writable (RecordError if not)."""
    folder = None
    if trace:
        folder = Path(trace_dir) if trace_dir else Path(out_dir) / "traces" / stem
    check_writable(out_dir)
    if folder is not None:
        check_writable(folder)
    return folder


def check_writable(directory: Path) -> None:
    """Create ``directory`` if needed and prove a file can be written there (RecordError if not)."""
    import stat

    directory = Path(directory)
    try:
        existing = directory
        while not existing.exists() and existing.parent != existing:
            existing = existing.parent  # the nearest folder that exists decides, before anything is created
        if existing.is_dir() and not existing.stat().st_mode & (stat.S_IWUSR | stat.S_IWGRP | stat.S_IWOTH):
            raise RecordError(f"cannot write to {safeio.display_path(directory)}: "
                              f"{safeio.display_path(existing)} is read-only "
                              f"(mode {stat.S_IMODE(existing.stat().st_mode):04o})")
        directory.mkdir(parents=True, exist_ok=True)
        mode = directory.stat().st_mode
        if not mode & (stat.S_IWUSR | stat.S_IWGRP | stat.S_IWOTH):  # read-only by mode: even for root
            raise RecordError(f"cannot write to {safeio.display_path(directory)}: the folder is read-only "
                              f"(mode {stat.S_IMODE(mode):04o})")
        fd, tmp = tempfile.mkstemp(prefix=".probe-", dir=directory)
        os.close(fd)
        os.unlink(tmp)
    except OSError as exc:
        raise RecordError(f"cannot write to {directory}: {exc.strerror or exc}") from None


def op_evidence(record: dict, op: str) -> "OpEvidence":
    """The ``generator.miss_reasons.OpEvidence`` of one op of ``record`` (``labs.evidence.op_evidence``)."""
    from labs.evidence import op_evidence as build

    return build(record, op)

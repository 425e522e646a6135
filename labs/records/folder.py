"""Lab records: JSON files with a schema version, written by the lab, read by the gate.

The records folder (``default_dir()``, or the course's ``bench/`` when asked for) as a small database:
the lock (``folder_lock``), the ledger (``ledger_line``), validation, ``load``, ``save`` and ``update``.
The rules that judge a record live in ``labs.gate``. Pure Python: no jax.

Details: docs/internals-labs.md.
"""

from __future__ import annotations

import contextlib
import datetime as _dt
import fcntl
import hashlib
import json
import os
import re
import stat
import sys
import tempfile
import time
import unicodedata
from dataclasses import dataclass
from pathlib import Path
from collections.abc import Callable, Iterator, Mapping
from typing import TYPE_CHECKING, Any, TypedDict

from generator.io import safeio
from generator.io.termsafe import visible
from labs.records.types import SCHEMA_NAME, SUPPORTED_VERSIONS, LabRecord, RecordError, Run, as_record
from labs.records.evidence import op_evidence as build
from generator.model import catalogue
from generator.io.lockinfo import lock_holder

if TYPE_CHECKING:
    from generator.explain import OpEvidence

SCHEMA_PATH = Path(__file__).with_name("record.schema.json")
SCHEMA_VERSION = 4  # SCHEMA_NAME and SUPPORTED_VERSIONS: labs.records.types (the typed record)
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
# It also holds the ledger line's SHA-256 and identity (``ledger_line``), and the first-run slot
# is per device kind at a counted size.
LEDGER_NAME = "ledger.jsonl"
LOCK_NAME = ".lock"
LOCK_WAIT_S = 30.0  # a save or explain holds the lock for milliseconds; longer means a stuck process
# The seed's N, and the next size where the inputs still fit an accelerator's HBM (the lab's
# make_plan refuses a size that does not fit, so 8192 counts only where it was measured).
COUNTED_SIZES = (4096, 8192)
# What the ledger line and the record must agree on (ledger key -> record key).
LEDGER_FIELDS = (("platform", "platform"), ("device_kind", "device_kind"), ("chip", "chip"),
                 ("size", "size"), ("schema_version", "schema_version"),
                 ("started_at", "measurement_started_at"))
# A lab record as JSON, while it is built, checked against record.schema.json and written (``Any``: the
# schema is its type; ``labs.records.types.LabRecord`` is the typed record it parses into).
RecordJSON = dict[str, Any]
# A ledger line as read back: a JSON object of untrusted values (each is checked where it is used).
LedgerEntry = dict[str, object]


class LedgerLine(TypedDict):
    """A ledger line as ``ledger_line`` writes it: a run's identity and its record's SHA-256."""

    stem: str
    state: str  # "pending", "saved" or "rewritten"
    platform: object
    device_kind: object
    chip: object
    size: object
    schema_version: object
    started_at: object
    practice: bool
    sha256: str | None
    predictions_sha256: object
    refused_attempts: dict[str, int]
    at: str


LEDGER_MAX_BYTES = 4 * 1024 * 1024  # one short line per run: tens of thousands of runs
LEDGER_HEADROOM_BYTES = 64 * 1024  # room proven free before measuring for the lines a run appends

RECORDS_ENV = "DRILL_RECORDS"
# The same application name as drills.store.repository.APP_NAME (labs never imports drills; a test checks
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


def load_schema() -> dict[str, Any]:
    with open(SCHEMA_PATH, encoding="utf-8") as fh:
        schema: dict[str, Any] = json.load(fh)
        return schema


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


def schema_errors(value: Any, schema: Mapping[str, Any], path: str = "$") -> list[str]:
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
    parse(record)


def parse(record: Any) -> LabRecord:
    """The typed record (``labs.records.types.LabRecord``) of a dict that passes the schema, its
    version's required keys and the types; RecordError naming the first problems' field paths."""
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
        ops = record.get("ops")
        for i, row in enumerate(ops if isinstance(ops, list) else []):
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
    return LabRecord.from_dict(record)  # the types check each field again (a test keeps them and the schema in step)


def record_text(record: LabRecord | Mapping[str, Any]) -> str:
    """The bytes a record is stored as (its SHA-256 in the ledger is over exactly these)."""
    data = record.to_dict() if isinstance(record, LabRecord) else record
    return json.dumps(data, indent=2, sort_keys=False) + "\n"


def checked_text(record: LabRecord) -> str:
    """``record_text`` of a record that passes ``validate`` (RecordError naming the first problems)."""
    data = record.to_dict()
    validate(data)
    return record_text(data)


def sha256_bytes(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def load_typed(path: Path) -> tuple[LabRecord, str]:
    """(the typed record at ``path``, SHA-256 of its bytes); RecordError when it cannot be used."""
    record, digest = read_json(path)
    return parse(record), digest


def read_json(path: Path) -> tuple[Any, str]:
    """(the JSON value at ``path``, not yet validated, SHA-256 of its bytes); RecordError naming why
    it cannot be read. Both labs' records are read through here."""
    try:  # a regular file only, bounded in size, nesting and integer length (generator.io.safeio)
        data = safeio.read_bytes_bounded(path, RECORD_MAX_BYTES)
        text = data.decode("utf-8")
        record = safeio.loads_bounded(text, RECORD_MAX_DEPTH, safeio.display_path(path))
    except safeio.SafeIOError as exc:
        raise RecordError(str(exc)) from None
    except UnicodeDecodeError:
        raise RecordError("not UTF-8 text") from None
    except (ValueError, RecursionError) as exc:
        raise RecordError(f"not JSON: {str(exc).splitlines()[0] if str(exc) else type(exc).__name__}") from None
    return record, sha256_bytes(data)


def load(path: Path) -> RecordJSON:
    """A validated record's JSON from ``path``, as stored (tools and tests that read the bytes' fields);
    RecordError when it cannot be used. The lab reads ``load_typed``."""
    record, _ = read_json(path)
    validate(record)
    return dict(record)


@dataclass(frozen=True)
class Loaded:
    """One file of a records folder: its typed record, or why it cannot be read (one line naming
    the field: ``skipped_line``)."""
    path: Path
    record: LabRecord | None
    error: str | None
    sha256: str | None = None  # of the file's bytes, compared with the ledger's


def scan(bench_dir: Path) -> list[Loaded]:
    """Every ``lab-*.json`` in ``bench_dir`` (sorted by name), loaded or with its error: one bad
    file never stops the others being read."""
    bench_dir = Path(bench_dir)
    if not bench_dir.is_dir():
        return []
    found = []
    for path in sorted(bench_dir.glob("lab-*.json")):
        try:
            record, digest = load_typed(path)
            found.append(Loaded(path, record, None, digest))
        except RecordError as exc:
            found.append(Loaded(path, None, str(exc)))
    return found


def skipped_line(path: Path | str, reason: str | None) -> str:
    """The one line a command says on stderr for a file it cannot read: the file, then the field."""
    return visible(f"drill: skipped {safeio.display_path(Path(path)) if isinstance(path, Path) else path}: {reason}")


def slug(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-") or "device"


def record_stem(platform: str, device_kind: str, size: int, stamp: str) -> str:
    """``lab-0.1-gpu-nvidia-h200-n8192-20261129T221500Z``: sorts by device, then size, then time."""
    return f"{RECORD_PREFIX}-{platform}-{slug(device_kind)}-n{size}-{stamp}"


def free_stem(out_dir: Path, stem: str, taken: set[str] | frozenset[str] = frozenset(), traces: bool = True) -> str:
    """``stem``, or ``stem-2``, ``stem-3`` ... : the first with no record, no ledger line (``taken``)
    and (``traces``) no trace folder yet."""
    out_dir = Path(out_dir)
    candidate, n = stem, 1
    while (candidate in taken or os.path.lexists(out_dir / f"{candidate}.json")
           or (traces and os.path.lexists(out_dir / "traces" / candidate))):
        n += 1
        candidate = f"{stem}-{n}"
    return candidate


# ----------------------------------------------------------------- the folder's lock

class FolderLocked(RecordError, OSError):
    """Another process held the records folder's lock past the wait: a one-line error (an
    ``OSError``, so a command that does not catch it still reports it in one line, exit 1)."""


@contextlib.contextmanager
def folder_lock(folder: Path, shared: bool = False, wait_s: float | None = None) -> Iterator[None]:
    """Hold an flock on ``folder/.lock`` (exclusive for a write, ``shared`` for a read) for the block.

    Every save and explain takes it exclusively, so their read-modify-writes of the ledger and
    of a record never interleave. A reader of a folder it cannot write (the course's ``bench/``,
    a read-only copy) reads without the lock. ``FolderLocked`` after ``wait_s`` (default
    ``LOCK_WAIT_S``; never a hang), naming the process that holds it (``generator.io.lockinfo``)."""

    folder = Path(folder)
    path = folder / LOCK_NAME
    try:
        # A reader never creates the lock file (the course's bench/ stays as committed).
        flags = os.O_RDONLY if shared else os.O_RDWR | os.O_CREAT
        fd = os.open(path, flags | os.O_NOFOLLOW | os.O_CLOEXEC | os.O_NONBLOCK, 0o644)
    except OSError as exc:
        if shared:  # no lock file (never written by a save) or unreadable: read as it is
            yield
            return
        if os.path.islink(path):  # O_NOFOLLOW's ELOOP ("Too many levels of symbolic links") names no file
            raise RecordError(_linked_lock(folder, path)) from None
        raise RecordError(f"cannot lock {safeio.display_path(folder)} ({LOCK_NAME}): {exc.strerror or exc}") from None
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise RecordError(_irregular_lock(path))
        wait_s = LOCK_WAIT_S if wait_s is None else wait_s
        deadline = time.monotonic() + wait_s
        while True:
            try:
                fcntl.flock(fd, (fcntl.LOCK_SH if shared else fcntl.LOCK_EX) | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if time.monotonic() > deadline:
                    pid = lock_holder([path])
                    who = f" (PID {pid})" if pid else ""
                    raise FolderLocked(f"{safeio.display_path(folder)} is locked by another drill command{who} "
                                       f"for over {wait_s:g} s ({LOCK_NAME}); nothing was read or changed; "
                                       f"try again when it has finished") from None
                time.sleep(0.01)
        if not shared:
            _sweep_tmp(folder)
        yield
    finally:
        os.close(fd)  # releases the lock


def _linked_lock(folder: Path, path: Path) -> str:
    """The one line for a ``.lock`` that is a symbolic link, naming it (never ELOOP's bare strerror)."""
    return (f"cannot lock {safeio.display_path(folder)}: {safeio.display_path(path)} is a symbolic link; the lock "
            "must be a regular file in the folder (remove the link); nothing was read or changed")


def _irregular_lock(path: Path) -> str:
    """The one line for a ``.lock`` that is a FIFO, a folder or a device."""
    return f"{safeio.display_path(path)} is not a regular file; refusing to use it as a lock"


def check_lock(folder: Path) -> None:
    """RecordError (one line) when ``folder``'s ``.lock`` is a symbolic link or not a regular file: what
    ``folder_lock`` refuses, said before a lab measures anything (a missing lock is made by the save)."""
    path = Path(folder) / LOCK_NAME
    try:
        mode = os.lstat(path).st_mode
    except FileNotFoundError:
        return
    except OSError as exc:
        raise RecordError(f"cannot lock {safeio.display_path(folder)} ({LOCK_NAME}): {exc.strerror or exc}") from None
    if stat.S_ISLNK(mode):
        raise RecordError(_linked_lock(Path(folder), path))
    if not stat.S_ISREG(mode):
        raise RecordError(_irregular_lock(path))


def _sweep_tmp(folder: Path) -> None:
    """Remove the temporary files an interrupted write left (``safeio.atomic_write`` names them
    ``.<target>.<random>.tmp``): under the exclusive lock no write is in progress."""
    for tmp in folder.glob(".*.tmp"):
        if tmp.name.startswith(f".{LEDGER_NAME}.") or (tmp.name.startswith((".lab-", ".collectives-"))
                                                        and ".json." in tmp.name):
            try:
                if stat.S_ISREG(os.lstat(tmp).st_mode):
                    os.unlink(tmp)
            except OSError:
                pass


# ----------------------------------------------------------------- the ledger

def read_ledger(folder: Path) -> list[LedgerEntry]:
    """The records folder's ledger: one JSON object per line, oldest first ([] when absent).
    A line that is not UTF-8 or not a JSON object is a damaged line (``{"damaged": True}``), never
    an error. RecordError when it exists but cannot be read (not a regular file, too large)."""
    return [_ledger_entry(line, folder) for line in _ledger_bytes(folder).splitlines()]


def _ledger_bytes(folder: Path) -> bytes:
    path = Path(folder) / LEDGER_NAME
    if not path.exists() and not path.is_symlink():
        return b""
    try:
        return safeio.read_bytes_bounded(path, LEDGER_MAX_BYTES)
    except safeio.SafeIOError as exc:
        raise RecordError(f"ledger: {exc}") from None


def _ledger_entry(line: bytes, folder: Path) -> LedgerEntry:
    try:
        entry = safeio.loads_bounded(line.decode("utf-8"), 4, str(Path(folder) / LEDGER_NAME))
    except Exception:  # a damaged line (a bad byte, not JSON): skipped, and the gate says the ledger is damaged
        return {"damaged": True}
    return entry if isinstance(entry, dict) else {"damaged": True}


def check_ledger(folder: Path) -> list[LedgerEntry]:
    """Read the ledger as ``save_run`` will (RecordError, one line, if it cannot be), and prove the
    two lines a run appends will fit under ``LEDGER_MAX_BYTES``, and that it is no link (the lines go
    only to the folder's own file): called before anything is measured."""
    check_own_file(Path(folder) / LEDGER_NAME)
    size = len(_ledger_bytes(folder))
    entries = read_ledger(folder)
    if size + LEDGER_HEADROOM_BYTES > LEDGER_MAX_BYTES:
        raise RecordError(f"ledger: {safeio.display_path(Path(folder) / LEDGER_NAME)} holds {size:,} bytes, too "
                          f"near the {LEDGER_MAX_BYTES:,} a ledger may hold to add a run; move it aside "
                          f"(the gate then counts no earlier run from it)")
    return entries


def _append_ledger(folder: Path, entry: LedgerLine) -> None:
    """Append one line to the ledger (call under ``folder_lock``): the whole file is rewritten
    atomically, so a kill leaves the old ledger or the new one, never half a line. Its bytes are
    kept as they are, a damaged line included."""
    line = json.dumps(entry, ensure_ascii=False, separators=(",", ":"), allow_nan=False).encode("utf-8")
    ledger = Path(folder) / LEDGER_NAME
    old = _ledger_bytes(folder)
    try:
        safeio.write_bytes(ledger, old + (b"" if not old or old.endswith(b"\n") else b"\n") + line + b"\n",
                           inside=folder)
    except safeio.SafeIOError as exc:
        raise RecordError(f"ledger: {exc}") from None


def ledger_line(record: LabRecord, stem: str, state: str, sha256: str | None) -> LedgerLine:
    """A ledger line: the run's identity as the record states it, and the record's SHA-256.

    ``state``: "pending" (written before the record), "saved" (after it), "rewritten" (an
    explanation stored under the lock)."""
    return {"stem": stem, "state": state, "platform": record.platform,
            "device_kind": record.device_kind, "chip": record.chip, "size": record.size,
            "schema_version": record.schema_version, "started_at": record.measurement_started_at,
            "practice": bool(record.practice), "sha256": sha256,
            "predictions_sha256": record.learner_predictions.sha256 if record.learner_predictions else None,
            "refused_attempts": refused_attempts(record), "at": _utc_now()}


def _attempts(record: LabRecord) -> dict[str, list[Any]]:
    """op -> its miss's attempts, as stored."""
    return {row.op: [a.to_dict() for a in row.miss.attempts] for row in record.ops
            if row.miss is not None and row.miss.attempts is not None}


def refused_attempts(record: LabRecord) -> dict[str, int]:
    """op -> how many of its miss's attempts were refused (the ledger keeps the count too)."""
    return {op: sum(1 for a in attempts if a.get("verdict") == "refused")
            for op, attempts in _attempts(record).items() if attempts}


def check_attempts_kept(before: LabRecord, after: LabRecord) -> None:
    """RecordError unless every attempt ``before`` holds is still in ``after``, first and in order:
    attempts are append-only (guessing leaves a trail no rewrite erases)."""
    now = _attempts(after)
    for op, old in _attempts(before).items():
        if now.get(op, [])[:len(old)] != old:
            raise RecordError(f"{op}: a change may not drop or rewrite an explanation attempt "
                              f"({len(old)} stored); attempts are append-only")


def _utc_now() -> str:
    return _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="microseconds")


def counted_size(size: object) -> bool:
    return size in COUNTED_SIZES


def run_key(record: LabRecord | Mapping[str, object]) -> str:
    """Runs compete for the one first-run slot per device kind (at a counted size). A record or a
    ledger line: the catalogued chip its ``device_kind`` names, else that name folded (NFKC, case,
    spaces), so "nvidia  h200 " or "NVIDIA H200 NVL" is the same slot as "NVIDIA H200"."""

    kind = str(record.device_kind if isinstance(record, LabRecord) else record.get("device_kind"))
    chip = catalogue.load().for_device_kind(kind)
    if chip is not None:
        return f"chip:{chip.name}"
    return " ".join(unicodedata.normalize("NFKC", kind).casefold().split())


def slot_runs(entries: list[LedgerEntry]) -> list[LedgerEntry]:
    """The ledger's runs that took a first-run slot, once per stem, in ledger order: made with
    the learner's predictions at a counted size (an interrupted run, pending only, included)."""
    seen: set[object] = set()
    runs: list[LedgerEntry] = []
    for e in entries:
        stem = e.get("stem")
        if e.get("damaged") or stem in seen or e.get("practice"):
            continue
        if "state" in e and not counted_size(e.get("size")):
            continue  # version 4 lines: other sizes are practice
        seen.add(stem)
        runs.append(e)
    return runs


def save(record: LabRecord | Mapping[str, Any], out_dir: Path, stem: str) -> Path:
    """Validate, then write ``out_dir/<stem>.json`` atomically (never a half-written record).

    An existing record is never replaced: the name takes a ``-2``, ``-3`` ... suffix instead.
    A current-schema record is a new run: it also gets its lines in the folder's ledger
    (``save_run``); older records (published ones being copied) are written as they are."""
    record = as_record(record)
    if record.schema_version == SCHEMA_VERSION:
        return save_run(record, out_dir, stem)
    checked_text(record)  # before the folder is made (rewrite checks again what it writes)
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    with folder_lock(out_dir):
        return rewrite(record, out_dir / f"{free_stem(out_dir, stem)}.json")


def save_new(text: str, out_dir: Path, stem: str) -> Path:
    """Write ``text`` to ``out_dir/<stem>.json`` under the folder's lock, atomically; an existing
    file is never replaced (the name takes a ``-2``, ``-3`` ... suffix). For records with no
    ledger (the collectives lab's)."""
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    with folder_lock(out_dir):
        path = out_dir / f"{free_stem(out_dir, stem, traces=False)}.json"
        _write_record(path, text)
    return path


def save_run(record: LabRecord | Mapping[str, Any], out_dir: Path, stem: str) -> Path:
    """Save a new run: under the folder's lock, a "pending" ledger line, then the record, then a
    "saved" line with the record's SHA-256.

    A kill between the steps leaves a pending line (the run took its slot: the gate counts it
    as an earlier run) and perhaps a record whose SHA-256 no line confirms (never counted).
    The record's ``run`` says its number among the slot's runs and the earlier ones' names.
    ``stem`` may gain a ``-2`` suffix when another run took it meanwhile.

    A run once measured is never lost to its ledger: when the ledger can not be read or take a
    line (it grew past ``LEDGER_MAX_BYTES`` during the run, say, or became a link), or the folder's lock
    can not be taken (``.lock`` became a link, another command held it past the wait), the record is
    saved all the same, with no ``run`` (no line vouches for it, so the gate never counts it), and
    one line on stderr names the problem (``ledger_problem_line``)."""
    record = as_record(record)
    checked_text(record)  # refused before anything is made or locked
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    problem = ""
    lock = contextlib.ExitStack()
    try:
        lock.enter_context(folder_lock(out_dir))
    except RecordError as exc:  # the lock became a link, or another command holds it: keep the run all the same
        return _save_unlocked(record, out_dir, stem, str(exc))
    with lock:
        try:
            check_own_file(out_dir / LEDGER_NAME)
            entries = read_ledger(out_dir)
        except RecordError as exc:
            entries, problem = [], str(exc)
        # The plan chose ``stem`` and made its trace folder; another run may have taken it since.
        stem = free_stem(out_dir, stem, {str(e.get("stem")) for e in entries}, traces=False)
        path = out_dir / f"{stem}.json"
        practice = bool(record.practice) or not counted_size(record.size)
        earlier = [str(e.get("stem")) for e in slot_runs(entries) if run_key(e) == run_key(record)]
        record = record.replace(run=Run.from_dict({
            "ledger": LEDGER_NAME, "stem": stem, "saved_at": _utc_now(),
            "number": None if practice else len(earlier) + 1, "earlier": earlier[-20:]}, "$.run"))
        text = checked_text(record)
        if not problem:
            try:
                _append_ledger(out_dir, ledger_line(record, stem, "pending", None))
            except RecordError as exc:
                problem = str(exc)
        if problem:
            record = record.replace(run=None)  # no ledger line vouches for this run
            text = checked_text(record)
        _write_record(path, text)
        if not problem:
            try:
                _append_ledger(out_dir, ledger_line(record, stem, "saved", sha256_bytes(text.encode("utf-8"))))
            except RecordError as exc:
                problem = str(exc)
    if problem:
        sys.stderr.write(ledger_problem_line(path, problem) + "\n")
    return path


def _save_unlocked(record: LabRecord, out_dir: Path, stem: str, problem: str) -> Path:
    """A measured run whose folder lock could not be taken at the save: written under a free name with no
    ledger line (``run`` None: the gate never counts it), and the lock's problem said in one line."""
    text = checked_text(record.replace(run=None))
    path = out_dir / f"{free_stem(out_dir, stem, traces=False)}.json"
    _write_record(path, text)
    sys.stderr.write(visible(f"drill: the record is saved as {safeio.display_path(path)}, but the folder's lock "
                             f"could not be taken ({problem}), so no ledger line vouches for it and the gate "
                             "will not count it") + "\n")
    return path


def ledger_problem_line(path: Path, problem: str) -> str:
    """The line ``save_run`` says when the record was saved but its ledger could not vouch for it."""
    ledger = safeio.display_path(Path(path).parent / LEDGER_NAME)
    return visible(f"drill: the record is saved as {safeio.display_path(path)}, but the ledger could not take "
                   f"this run ({problem.removeprefix('ledger: ')}), so the gate will not count it; move {ledger} "
                   "aside before the next run")


def update(path: Path, change: Callable[[LabRecord], LabRecord]) -> LabRecord:
    """Read-modify-write one record under its folder's lock: ``change(record)`` gives the new record
    from the one on disk now (so two explains never lose each other's work), it is written
    atomically, and, when the ledger vouched for the bytes it replaced, a "rewritten" line gives
    the new SHA-256. A record changed outside drill stays unvouched. Returns the new record."""
    path = Path(path)
    check_own_file(path)
    check_own_file(path.parent / LEDGER_NAME)
    with folder_lock(path.parent):
        before_record, before = load_typed(path)
        record = change(before_record)
        check_attempts_kept(before_record, record)
        text = checked_text(record)
        _write_record(path, text)
        if record.schema_version == SCHEMA_VERSION:
            stem = (record.run.stem if record.run else None) or path.stem
            try:
                mine = [e for e in read_ledger(path.parent) if e.get("stem") == stem and e.get("sha256")]
            except RecordError:
                mine = []
            if mine and mine[-1].get("sha256") == before:
                _append_ledger(path.parent, ledger_line(record, stem, "rewritten", sha256_bytes(text.encode("utf-8"))))
    return record


def _write_record(path: Path, text: str) -> None:
    try:  # only a regular file (or a new path) in its folder, never through a link, keeping its mode
        safeio.write_text(path, text, inside=Path(path).parent)
    except safeio.SafeIOError as exc:
        raise RecordError(str(exc)) from None


def check_own_file(path: Path, folder: Path | None = None) -> None:
    """RecordError (one line) when ``path`` (a record, the ledger, a trace folder) in the records
    folder ``folder`` (default: its parent) is a symbolic link or lies under one: the folder's
    files are written only in the folder, under its own lock."""
    try:
        safeio.check_inside(Path(path).parent if folder is None else folder, path)
    except safeio.SafeIOError as exc:
        raise RecordError(str(exc)) from None


def rewrite(record: LabRecord | Mapping[str, Any], path: Path) -> Path:
    """Validate, then replace the record at ``path`` atomically (the old one stays whole on failure).
    No ledger line: a saved run's record is changed with ``update``."""
    record = as_record(record)
    text = checked_text(record)
    path = Path(path)
    check_own_file(path)
    if path.exists() and not path.is_symlink():
        try:
            on_disk: LabRecord | None = load_typed(path)[0]
        except (OSError, RecordError):
            on_disk = None  # an unreadable record holds no attempts to keep
        if on_disk is not None:
            check_attempts_kept(on_disk, record)
    _write_record(path, text)
    return path


def stored_path(out_dir: Path, path: str | Path | None) -> str | None:
    """A path as a record stores it: relative to the records folder when inside it (so a record
    and its traces move together), else absolute. Both labs store their paths so."""
    if path is None:
        return None
    path, out = Path(path).resolve(), Path(out_dir).resolve()
    try:
        return str(path.relative_to(out))
    except ValueError:
        return str(path)


def prepare_output(out_dir: Path, stem: str, trace: bool, trace_dir: Path | None = None) -> Path | None:
    """The trace folder for a record named ``stem`` (None without traces: ``trace`` False), after
    proving the record folder and the trace folder writable (RecordError if not)."""
    folder = None
    if trace:
        folder = Path(trace_dir) if trace_dir else Path(out_dir) / "traces" / stem
        if not trace_dir:  # the folder's own traces/<stem>, never through a link out of it
            check_own_file(folder, Path(out_dir))
    check_writable(out_dir)
    if folder is not None:
        check_writable(folder)
    return folder


def check_writable(directory: Path) -> None:
    """Create ``directory`` if needed and prove a file can be written there (RecordError if not)."""
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


def op_evidence(record: LabRecord | Mapping[str, Any], op: str) -> "OpEvidence":
    """The ``generator.explain.OpEvidence`` of one op of ``record`` (``labs.records.evidence.op_evidence``);
    a record read as JSON is validated first (RecordError)."""

    return build(as_record(record), op)

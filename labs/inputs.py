"""The learner's files: predictions (op -> time with units) and explanations (op -> sentence).

YAML or JSON, read with the safe loader (JSON is YAML). Times are parsed like
quiz answers (``generator.answers.parse_duration_seconds``: "700us", "1.2 ms",
"2*4096**3/9.9e14"), imported only here and only when a file or a prompt
needs it. Every problem raises InputError with one line, before anything runs.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

from generator import safeio
from generator.yamlio import safe_load
from labs import ops as lab_ops
from labs.runner import LearnerPrediction


class InputError(ValueError):
    pass


def read_mapping(path: Path, what: str) -> dict:
    try:  # a regular file only, at most 1 MiB (generator.safeio): a FIFO or /dev/zero never hangs
        data = safe_load(safeio.read_text_bounded(path, 1 << 20))
    except OSError as exc:
        raise InputError(f"cannot read the {what} file {path}: {exc.strerror or exc}") from None
    except Exception as exc:  # yaml.YAMLError and friends: any parse failure is the file's fault
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise InputError(f"the {what} file {path} does not parse: {first}") from None
    if not isinstance(data, dict) or not data:
        raise InputError(f"the {what} file {path} must map op names to values, "
                         f"e.g. 'matmul: 700us' (ops: {', '.join(lab_ops.OPS)})")
    return data


def _op_key(key: object, chosen: tuple[str, ...], what: str) -> str:
    shown = str(key) if len(str(key)) <= 40 else str(key)[:37] + "..."
    try:
        name = lab_ops.normalize_op(str(key))
    except lab_ops.OpError:
        raise InputError(f"{what}: unknown op '{shown}' (ops: {', '.join(lab_ops.OPS)})") from None
    if name not in chosen:
        raise InputError(f"{what}: '{shown}' is not among this run's ops ({', '.join(chosen)})")
    return name


def parse_prediction(text: str) -> float:
    """Seconds from a learner's answer; InputError (one line) when it cannot be read."""
    from generator.answers import AnswerError, parse_duration_seconds

    try:
        value = parse_duration_seconds(str(text))
    except AnswerError as exc:
        raise InputError(f"'{text}': {exc}") from None
    if not value > 0:
        raise InputError(f"'{text}': a predicted time must be positive")
    return value


def predictions_from_mapping(data: dict, chosen: tuple[str, ...], what: str = "predictions") -> dict[str, LearnerPrediction]:
    out = {}
    for key, value in data.items():
        name = _op_key(key, chosen, what)
        if value is None or isinstance(value, (dict, list, bool)):
            raise InputError(f"{what}: {key}: expected a time such as '700us', got {value!r}")
        try:
            out[name] = LearnerPrediction(parse_prediction(str(value)), str(value))
        except InputError as exc:
            raise InputError(f"{what}: {key}: {exc}") from None
    return out


def file_sha256(path: Path) -> str | None:
    """SHA-256 of a predictions file's bytes (None when it cannot be read again)."""
    try:
        with open(path, "rb") as fh:
            return hashlib.sha256(fh.read()).hexdigest()
    except OSError:
        return None


def load_predictions(path: Path, chosen: tuple[str, ...]) -> dict[str, LearnerPrediction]:
    return predictions_from_mapping(read_mapping(path, "predictions"), chosen, f"predictions file {path}")


EXPLANATION_MAX_CHARS = 2000  # one or two sentences; a longer value is a pasted log, not an explanation


def _short(value: object) -> str:
    """A value named in an error message, never expanded past 60 characters."""
    text = repr(value) if not isinstance(value, (dict, list)) else type(value).__name__
    return text if len(text) <= 60 else text[:57] + "..."


def explanations_from_mapping(data: dict, chosen: tuple[str, ...], what: str = "explanations") -> dict:
    """op -> a sentence (reasons read from its words), or op -> {"reasons": [ids], "text": sentence}."""
    from generator.miss_reasons import BY_ID

    out: dict = {}
    for key, value in data.items():
        name = _op_key(key, chosen, what)
        if isinstance(value, dict):
            unknown = set(value) - {"reasons", "text"}
            if unknown:
                raise InputError(f"{what}: {key}: unknown key(s) {', '.join(sorted(map(str, unknown)))[:60]} "
                                 "(expected reasons, text)")
            reasons, text = value.get("reasons") or [], value.get("text") or ""
            if isinstance(reasons, str):
                reasons = [r.strip() for r in reasons.split(",") if r.strip()]
            if not isinstance(reasons, list) or not all(isinstance(r, str) for r in reasons):
                raise InputError(f"{what}: {key}: reasons must be a list of reason ids, got {_short(reasons)}")
            bad = [r for r in reasons if r not in BY_ID]
            if bad:
                raise InputError(f"{what}: {key}: unknown reason '{_short(bad[0])[1:-1]}' "
                                 f"(known: {', '.join(BY_ID)})")
            if not isinstance(text, str):
                raise InputError(f"{what}: {key}: text must be a sentence, got {_short(text)}")
            entry = {"reasons": reasons, "text": " ".join(text.split())}
        elif isinstance(value, str) and value.strip():
            entry = " ".join(value.split())
            text = entry
        else:
            raise InputError(f"{what}: {key}: expected one sentence, got {_short(value)}")
        if len(text) > EXPLANATION_MAX_CHARS:
            raise InputError(f"{what}: {key}: {len(text)} characters; an explanation is a sentence or two "
                             f"(at most {EXPLANATION_MAX_CHARS})")
        out[name] = entry
    return out


def load_explanations(path: Path, chosen: tuple[str, ...]) -> dict[str, str]:
    return explanations_from_mapping(read_mapping(path, "explanations"), chosen, f"explanations file {path}")

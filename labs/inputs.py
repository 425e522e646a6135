"""The learner's files: predictions (op -> time with units) and explanations (op -> sentence).

YAML or JSON, read with the safe loader by ``load_predictions`` and ``load_explanations``. Every
problem raises InputError with one line, before anything runs.

Details: docs/internals-labs.md.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from pathlib import Path
from typing import Any, TypedDict, Union

from generator.io import safeio
from generator.io.yamlio import safe_load
from labs.measure import ops as lab_ops
from labs.records.predictions import InputError as InputError, parse_prediction as parse_prediction  # its errors, re-exported
from labs.runner import LearnerPrediction
from generator.explain import BY_ID, corrected_from_sentence, CorrectedError, parse_corrected


class ExplanationEntry(TypedDict):
    """An explanation given as a mapping: reason ids, the corrected time (seconds) and the sentence."""

    reasons: list[str]
    corrected_s: float | None
    text: str


# An op's explanation: one sentence, or the mapping form.
Explanation = Union[str, ExplanationEntry]


def read_mapping(path: Path, what: str) -> dict[Any, Any]:
    """The YAML mapping in ``path`` (``Any``: a parsed document, checked key by key by its reader)."""
    try:  # a regular file only, at most 1 MiB (generator.io.safeio): a FIFO or /dev/zero never hangs
        data = safe_load(safeio.read_text_bounded(path, 1 << 20))
    except OSError as exc:
        raise InputError(f"cannot read the {what} file {path}: {exc.strerror or exc}") from None
    except Exception as exc:  # yaml.YAMLError and friends: any parse failure is the file's fault
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise InputError(f"the {what} file {path} does not parse: {first}") from None
    if not isinstance(data, dict) or not data:
        raise InputError(f"the {what} file {path} must map op names to values, "
                         f"e.g. 'matmul: 700us' (ops: {', '.join(lab_ops.OPS)})")
    _check_nodes(safeio.read_text_bounded(path, 1 << 20), f"the {what} file {path}")
    return data


_REFUSED_TAGS = {"tag:yaml.org,2002:timestamp": "a date", "tag:yaml.org,2002:bool": "a yes/no (boolean)"}


def _check_nodes(text: str, what: str) -> None:
    """Duplicate keys (naming the line) and YAML dates or booleans where a time or sentence goes:
    the safe loader would keep the last duplicate silently and turn 2024-01-01 into a date."""
    import yaml  # start-up: PyYAML loads only where YAML text is parsed

    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)(text)
    try:
        root = loader.get_single_node()
    finally:
        loader.dispose()
    stack, seen_nodes = [root], set()
    while stack:  # mappings only, each once: aliases are never expanded here
        node = stack.pop()
        if not isinstance(node, yaml.MappingNode) or id(node) in seen_nodes:
            continue
        seen_nodes.add(id(node))
        first: dict[str, int] = {}
        for key, value in node.value:
            name, line = str(key.value), key.start_mark.line + 1
            if name in first:
                raise InputError(f"{what}: line {line}: '{name[:40]}' is given twice (first on line {first[name]})")
            first[name] = line
            if isinstance(value, yaml.ScalarNode) and value.tag in _REFUSED_TAGS:
                raise InputError(f"{what}: line {value.start_mark.line + 1}: {name[:40]}: '{value.value[:40]}' "
                                 f"reads as {_REFUSED_TAGS[value.tag]}, not a time; write a time with a unit "
                                 "(e.g. '700 us')")
            stack.append(value)


def _op_key(key: object, chosen: tuple[str, ...], what: str) -> str:
    shown = str(key) if len(str(key)) <= 40 else str(key)[:37] + "..."
    try:
        name = lab_ops.normalize_op(str(key))
    except lab_ops.OpError:
        raise InputError(f"{what}: unknown op '{shown}' (ops: {', '.join(lab_ops.OPS)})") from None
    if name not in chosen:
        raise InputError(f"{what}: '{shown}' is not among this run's ops ({', '.join(chosen)})")
    return name


def predictions_from_mapping(data: Mapping[Any, Any], chosen: tuple[str, ...],
                             what: str = "predictions") -> dict[str, LearnerPrediction]:
    out: dict[str, LearnerPrediction] = {}
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


def explanations_from_mapping(data: Mapping[Any, Any], chosen: tuple[str, ...],
                              what: str = "explanations") -> dict[str, Explanation]:
    """op -> a sentence (reasons and the corrected time after its last '=' read from it), or
    op -> {"reasons": [ids], "corrected": "59 us", "text": sentence} (``corrected`` stored as
    ``corrected_s``). A corrected time that is not a usable time is an error naming the op."""

    out: dict[str, Explanation] = {}
    for key, value in data.items():
        name = _op_key(key, chosen, what)
        entry: Explanation
        if isinstance(value, dict):
            unknown = set(value) - {"reasons", "corrected", "text"}
            if unknown:
                raise InputError(f"{what}: {key}: unknown key(s) {', '.join(sorted(map(str, unknown)))[:60]} "
                                 "(expected reasons, corrected, text)")
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
            corrected = value.get("corrected")
            if isinstance(corrected, (bool, dict, list)):
                raise InputError(f"{what}: {key}: corrected must be a time with a unit, got {_short(corrected)}")
            try:
                corrected_s = parse_corrected(str(corrected)) if corrected not in (None, "") else None
                if corrected_s is None:
                    corrected_s = corrected_from_sentence(text)
            except CorrectedError as exc:
                raise InputError(f"{what}: {key}: {exc}") from None
            entry = ExplanationEntry(reasons=reasons, corrected_s=corrected_s, text=" ".join(text.split()))
        elif isinstance(value, str) and value.strip():
            entry = " ".join(value.split())
            text = entry
            try:
                corrected_from_sentence(text)
            except CorrectedError as exc:
                raise InputError(f"{what}: {key}: {exc}") from None
        else:
            raise InputError(f"{what}: {key}: expected one sentence, got {_short(value)}")
        if len(text) > EXPLANATION_MAX_CHARS:
            raise InputError(f"{what}: {key}: {len(text)} characters; an explanation is a sentence or two "
                             f"(at most {EXPLANATION_MAX_CHARS})")
        out[name] = entry
    return out


def load_explanations(path: Path, chosen: tuple[str, ...]) -> dict[str, Explanation]:
    return explanations_from_mapping(read_mapping(path, "explanations"), chosen, f"explanations file {path}")

"""Reading an explanation: the reason names before its first ':' and the corrected time after its
last '=' (the working between them is ``derivation``'s).

Only names are read as reasons (ids, or each reason's listed synonyms); no other word of the
sentence adds or denies one. Numbers are read with ``generator.model.answers`` (parsed, never
evaluated).
"""

from __future__ import annotations

import math
import re

from generator.errors import DrillError
from generator.explain.evidence import MAX_SECONDS
from generator.explain.reasons import BY_NAME
from generator.model.answers import AnswerError, NeedsUnitError, WrongDimensionError, parse_duration_seconds, parse_unit
from generator.model.units import fmt

# Words that name no reason: refused however they are dressed (compared after lowercasing and
# dropping punctuation).
SHRUGS: frozenset[str] = frozenset({
    "", "x", "xx", "xxx", "-", "overhead", "overheads", "noise", "noisy", "idk", "i dont know", "dunno",
    "no idea", "not sure", "unknown", "random", "variance", "jitter", "bad luck", "luck", "hardware",
    "it is slow", "its slow", "slow", "fast", "machine", "the machine", "system", "os", "because",
    "reasons", "n/a", "na", "none", "?", "whatever", "measurement error", "error", "timing", "magic",
})
HEDGES = ("i dont know", "i do not know", "dunno", "no idea", "not sure", "maybe", "perhaps", "i guess",
          "who knows", "no clue", "not a clue", "beats me", "cant say", "cannot say", "hard to say", "cant tell",
          "for some reason", "somehow", "it just is", "just because", "who cares", "no reason")


def _normal(text: str) -> str:
    return " ".join(re.sub(r"[^\w/ ]+", " ", text.lower().replace("'", "").replace("’", "")).split())


def is_shrug(text: str) -> bool:
    return _normal(text) in SHRUGS or text.strip() in SHRUGS


# --- the reasons a learner names: ids (or their synonyms), never read from the sentence's words ------------

_EXPLICIT = re.compile(r"\s*reasons?\s*:\s*", re.IGNORECASE)
_NAME_SEP = re.compile(r"\s*(?:,|\+|&|\band\b)\s*", re.IGNORECASE)


def reason_id(name: str) -> str | None:
    """The reason id a name stands for (an id or one of its synonyms, any case, '_' for '-'), or None."""
    return BY_NAME.get(name.strip().lower().replace("_", "-"))


def split_reasons(text: str) -> tuple[list[str], str, list[str]]:
    """(reason ids, the sentence after them, unknown names) of an explanation that names its reasons
    first: "fixed-cost: 21 µs floor + 38 µs per call = 59 µs", "cache-level + fixed-cost: ...",
    "reasons: cache-level, fixed-cost. ...". Without a "reasons:" prefix, a head that is not all reason
    names is no head: nothing is named and the whole text is the sentence."""
    explicit = _EXPLICIT.match(text)
    body = text[explicit.end():] if explicit else text
    stop = re.search(r"[:;.]" if explicit else r":", body)
    if stop is None:
        return [], text.strip(), []
    head, rest = body[:stop.start()], body[stop.end():].strip()
    names = [n for n in _NAME_SEP.split(head.strip()) if n]
    ids = [reason_id(n) for n in names]
    unknown = [n for n, i in zip(names, ids) if i is None]
    if not names or (unknown and not explicit):
        return [], text.strip(), []
    return list(dict.fromkeys(i for i in ids if i)), rest, unknown


WORKING_TOLERANCE = 0.02  # the corrected time equals the working's own arithmetic within 2%


# --- reading a corrected time out of a sentence -----------------------------------------------------------

_QUANTITY = re.compile(r"(?<![\w.])(-?\s*(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]+)?)\s*([A-Za-zµμ]+(?:/[A-Za-z]+)?)?")


class CorrectedError(DrillError, ValueError):
    """A corrected time that cannot be used: one line saying why."""


def check_seconds(value: float, shown: str = "") -> float:
    """``value`` when it is a usable corrected time; CorrectedError (one line) otherwise."""
    what = f"'{shown}'" if shown else fmt(value, "s") if math.isfinite(value) else str(value)
    if not math.isfinite(value):
        raise CorrectedError(f"{what} is not a number of seconds")
    if value <= 0:
        raise CorrectedError(f"{what}: a corrected time must be positive")
    if value > MAX_SECONDS:
        raise CorrectedError(f"{what} is over a day: not the time of one op")
    return value


def parse_corrected(text: str) -> float:
    """Seconds from a corrected time with a unit ("59 us", "21us + 38us"); CorrectedError otherwise:
    a bare number asks for a unit, a rate or a size says it is not a time."""

    text = str(text).strip()
    try:
        value = parse_duration_seconds(text, None)
    except NeedsUnitError:
        raise CorrectedError(f"{text} what? e.g. {text} us, {text} ms or {text} s") from None
    except WrongDimensionError as exc:
        raise CorrectedError(f"'{text}' is not a time ({exc}); a corrected estimate is a time") from None
    except AnswerError as exc:
        raise CorrectedError(f"'{text}': {exc}") from None
    return check_seconds(value, text)


def corrected_from_sentence(text: str) -> float | None:
    """The corrected time in a sentence: the time after its last '=' (or its only time); None when it
    names no time; CorrectedError when the time cannot be used or several stand without an '='."""
    for after in reversed(text.split("=")[1:]):  # the last '=' followed by a time ("N=128 the ..." is none)
        after = after.strip().rstrip(".;,)")
        try:
            return parse_corrected(after)  # the whole of it: "= 21 us + 38 us" or "= 59 µs"
        except CorrectedError:
            pass
        m = _QUANTITY.match(after)
        if not m:
            continue
        if m.group(2) is None:
            return parse_corrected(m.group(1))  # "= 59": what unit? (CorrectedError)

        try:
            parse_unit(m.group(2))
        except (AnswerError, ValueError):
            continue  # "N=128 the fixed cost": a word, not a unit
        return parse_corrected(m.group(0))  # "= 3 GB/s": not a time (CorrectedError)
    times = []
    for m in _QUANTITY.finditer(text):
        try:
            times.append(parse_corrected(m.group(0)))
        except CorrectedError:
            continue
    if not times:
        return None
    if len(times) > 1:
        raise CorrectedError(f"{len(times)} times in the sentence: write the corrected one after '=' "
                             "(e.g. '21 us floor + 38 us per call = 59 us')")
    return times[0]

"""A learner's predicted time, read from the text they typed: seconds, by the one answer grammar
(``generator.model.answers``, imported only when a text is read). A bare number is refused ("70
what?"), never taken as seconds. Records keep the text; the gate reads it again."""

from __future__ import annotations

from generator.errors import DrillError
from generator.model.answers import AnswerError, NeedsUnitError, parse_duration_seconds


class InputError(DrillError, ValueError):
    """A learner's file or typed answer that cannot be used; the message is one line."""


def parse_prediction(text: str) -> float:
    """Seconds from a learner's answer; InputError (one line) when it cannot be read."""

    text = str(text).strip()
    try:
        value = parse_duration_seconds(text, None)  # no unit stated: a bare number is refused
    except NeedsUnitError:
        raise InputError(f"{text} what? e.g. {text} us, {text} ms or {text} s") from None
    except AnswerError as exc:
        raise InputError(f"'{text}': {exc}") from None
    if not value > 0:
        raise InputError(f"'{text}': a predicted time must be positive")
    return value

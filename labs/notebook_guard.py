"""The notebook's rule "predict before you measure": the measure cell asks ``measure_refusal`` first.

Pure Python (no jax). The notebook's measure cell refuses to run until the learner's
predictions for every op are written and read (the predictions cell run after the last
edit), unless the learner sets practice mode: a practice run is measured without any
prediction of theirs (graded on the model), so it is recorded as practice and never counts.
"""

from __future__ import annotations

from labs import inputs
from labs.runner import LearnerPrediction

PRACTICE_HINT = ("or set PRACTICE = True in the parameters cell to measure without them "
                 "(recorded as practice: graded on the model, never counted toward GATE 00)")


def _written(value: object) -> bool:
    return value is not None and str(value).strip() != ""


def measure_refusal(my_predictions: object, learner: dict[str, LearnerPrediction] | None, practice: bool,
                    ops: tuple[str, ...]) -> str | None:
    """Why the measure cell must not measure now (one line), or None when it may.

    ``my_predictions``: the notebook's ``MY_PREDICTIONS`` as it is now; ``learner``: what the
    predictions cell read from it (None when it read nothing); ``practice``: ``PRACTICE``."""
    if practice is True:
        return None
    if not isinstance(my_predictions, dict):
        return f"MY_PREDICTIONS must be a dict of op -> time, got {type(my_predictions).__name__}"
    if not any(_written(v) for v in my_predictions.values()):
        return (f"write your predictions for all {len(ops)} ops in MY_PREDICTIONS ({', '.join(ops)}) and run "
                f"that cell, then this one; {PRACTICE_HINT}")
    try:
        current = inputs.predictions_from_mapping({k: v for k, v in my_predictions.items() if _written(v)}, ops)
    except inputs.InputError as exc:
        return f"{exc}; fix it in MY_PREDICTIONS and run that cell again"
    missing = [op for op in ops if op not in current]
    if missing:
        return f"no prediction yet for {', '.join(missing)}: write it in MY_PREDICTIONS and run that cell; " \
               f"{PRACTICE_HINT}"
    read = {op: p.text for op, p in (learner or {}).items()}
    if read != {op: p.text for op, p in current.items()}:
        return "MY_PREDICTIONS changed since the predictions cell read them: run that cell again, then this one"
    return None

"""The lab's one pipeline, plan -> datasheet -> predict -> measure -> save -> explain, as the notebook
runs it (one cell per step) and as ``drill lab`` and ``drill explain`` call it (``measured_datasheet``,
``measure_and_save``, ``save_explanations``): off the catalogue the probes first, shown as this
device's datasheet; predict (all five, or practice), measure and save at once, "why?" judged
against the evidence, and only then the tables.

    probed = session.measured_datasheet(plan)                          # None on a catalogued chip
    learner, read = session.read_predictions(MY_PREDICTIONS)          # before any op is measured
    record, path = session.measure_and_save(plan, learner, read, practice=PRACTICE, probed=probed)
    print("\\n".join(session.why_questions(record)))                     # the misses, no table yet
    print("\\n".join(session.explain(record, path, MY_EXPLANATIONS)))    # judged; evidence table after

Pure Python except ``measured_datasheet`` and ``measure_and_save`` (they run jax: ``labs.evidence``'s
probes, ``labs.runner.run``).
"""

from __future__ import annotations

from pathlib import Path
from typing import Callable

from labs import evidence, inputs, ops, records, report, runner

PRACTICE_TEXT = "practice run: no predictions of yours, so it never counts toward GATE 00 nor takes your first run"


class NeedPredictions(runner.LabError):
    """Measuring before all five predictions are written (and practice is off)."""


def measured_datasheet(plan: runner.Plan, say: Callable[[str], None] = print,
                       progress: Callable[[str], None] | None = None) -> evidence.Probed | None:
    """Off the catalogue (a CPU, a GPU not in it): run the probes now and ``say`` them as this device's
    datasheet, measured just now (peak FLOP/s of a large matmul, copy bandwidth, fixed cost per op
    kind), the figures to predict from; pass the result to ``measure_and_save`` so the record stores
    them as its ``constants`` and reuses them as its probes. None on a catalogued chip (its
    datasheet is the catalogue's): nothing is measured or said. ``progress`` is told each probe as it
    starts (``labs.evidence.measure_probes``). ``drill lab`` and the notebook."""
    if plan.chip is not None:
        return None
    say("probing this device (its datasheet: matmul FLOP/s, copy bandwidth, fixed cost per op kind) ...")
    probed = evidence.measure_probes(plan, progress)
    for line in evidence.datasheet_lines(probed, plan.device.device_kind):
        say(line)
    probed.shown_at = runner.utc_now()
    return probed


def read_predictions(mapping: dict | None, chosen: tuple[str, ...] = ops.SEED_OPS):
    """(predictions, when they were read) from the notebook's dict; (None, None) when it is empty.
    InputError (one line) for a bad op or time."""
    if not mapping:
        return None, None
    learner = inputs.predictions_from_mapping(mapping, chosen)
    return learner, runner.PredictionsRead("notebook", runner.utc_now())


def already_measured(plan: runner.Plan) -> str | None:
    """Why ``plan`` may not measure again (one line), or None: a plan names one record and its trace
    folder, and a second run would overwrite the traces the first record points at."""
    done = Path(plan.options.out_dir) / f"{plan.stem}.json"
    if not done.exists():
        return None
    return (f"this plan already measured a run ({done.name}): run the cell that makes the plan "
            "(this device's figures) again, then your predictions, then this one")


def measure_and_save(plan: runner.Plan, learner, read, *, practice: bool = False,
                     progress=None, require_all: bool = True, probed=None) -> tuple[dict, Path]:
    """Refuse (NeedPredictions) unless every op has a prediction or ``practice`` is set; then measure
    and save the record before anything is shown (an interrupted notebook keeps it).
    ``require_all=False`` (the CLI): some predictions are kept for teaching, graded on the model.
    ``probed``: the probes already measured and shown as this device's datasheet (``measured_datasheet``),
    reused, never measured again; the record says the predictions came after it when ``read`` is later."""
    missing = [name for name in plan.options.ops if not learner or name not in learner]
    if missing and not practice and require_all:
        raise NeedPredictions(f"write your predictions first (missing: {', '.join(missing)}), "
                              "or set PRACTICE = True for a practice run that never counts")
    again = already_measured(plan)
    if again:
        raise runner.LabError(again)
    if probed is not None:  # predicted against the datasheet only if read after it was shown
        probed.shown_before_predictions = bool(not practice and read is not None and probed.shown_at is not None
                                               and read.read_at > probed.shown_at)
    record = runner.run(plan, None if practice else learner, progress=progress, read=None if practice else read,
                        probed=probed)
    return record, runner.save(plan, record)


def why_questions(record: dict) -> list[str]:
    """One line per miss still unexplained, with the numbers the learner reasons from (no table)."""
    from generator.units import seconds  # start-up: loaded only on the lab path that uses it
    from labs import explain as lab_explain  # start-up: loaded only on the lab path that uses it

    graded = record["graded"]
    whose = "your" if graded == "learner" else f"the {graded}"
    lines = []
    for row in runner.misses(record):
        if runner.accepted(row):
            continue
        predicted = row["predictions"][graded]
        finding = lab_explain.finding(record, row["op"])  # judged again on the record's numbers, never trusted
        if finding:
            lines.append(f"{row['op']}: measured {seconds(row['measured']['measured_s'])}, {whose} prediction "
                         f"{seconds(predicted['seconds'])} = {row['ratios'][graded]:.2f}x: unexplained by the "
                         f"evidence, nothing to ask: {finding}")
            continue
        lines.append(f"{row['op']}: measured {seconds(row['measured']['measured_s'])}, {whose} prediction "
                     f"{seconds(predicted['seconds'])} = {row['ratios'][graded]:.2f}x: why? "
                     "(a reason and your corrected time with a unit: `drill miss-reasons`)")
    if record.get("practice"):
        lines.append(PRACTICE_TEXT)
    return lines


def save_explanations(path: Path, given: dict) -> dict:
    """Judge ``given`` (op -> sentence, or {"reasons", "text"}) on the record as it is on disk, under
    the records folder's lock, and store it (``records.update``): the one explain step the CLI's
    ``drill lab``/``drill explain`` and the notebook share. Returns the record as stored."""
    return records.update(path, lambda rec: runner.explain(rec, given))


def explain(record: dict, path: Path, explanations: dict | None) -> list[str]:
    """Judge ``explanations`` (op -> sentence, or {"reasons", "text"}), rewrite the record, and return
    each judgement; then (the learner has answered) the tables and the evidence for every op."""
    given = inputs.explanations_from_mapping(explanations, tuple(r["op"] for r in record["ops"])) \
        if explanations else {}
    fresh = save_explanations(path, given)
    record.clear()
    record.update(fresh)
    lines = [f"{row['op']}: {row['miss']['why']}" for row in runner.misses(record) if row["op"] in given]
    left = record["summary"]["unexplained"]
    lines.append(f"still unexplained: {', '.join(left)} (try again)" if left else "every miss explained")
    return [*lines, "", *report.tables(record), "", *evidence.table(record), "", *report.note_lines(record)]

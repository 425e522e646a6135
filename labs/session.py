"""The lab's one pipeline, plan -> datasheet -> predict -> measure -> save -> explain, as the notebook
runs it (one cell per step) and as ``drill lab`` and ``drill explain`` call it (``run_lab``,
``measured_datasheet``, ``measure_and_save``, ``save_explanations``). Pure Python except
``measured_datasheet`` and ``measure_and_save`` (they run jax).

Details: docs/internals-labs.md.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from collections.abc import Mapping
from typing import Any, Callable, Protocol

from generator import explain as miss_reasons
from generator.io import safeio
from generator.io.termsafe import visible
from labs.records import evidence, folder as records
from labs import inputs, report, runner
from labs.measure import ops
from labs.measure import probes as lab_probes
from labs import explain as lab_explain
from labs.records.types import LabRecord, OpRow, RecordError
from labs.options import ACCELERATOR_DEFAULT_SIZE, CPU_DEFAULT_SIZE
from generator.model.units import seconds

PRACTICE_TEXT = "practice run: no predictions of yours, so it never counts toward GATE 00 nor takes your first run"


NO_PREDICTIONS_TEXT = ("no predictions of yours: the run is graded on the model's predictions for teaching "
                       "and cannot count toward GATE 00")


class NeedPredictions(runner.LabError):
    """Measuring before all five predictions are written (and practice is off)."""


class LabUsageError(runner.LabError):
    """A bad option, input file or output folder: refused before anything is measured (a usage error)."""


@dataclass(frozen=True)
class LabRequest:
    """What ``drill lab`` was asked: its options as given (``size`` None: the device's default N)."""

    chip: str = "auto"
    ops_text: str = "seed"
    size: int | None = None
    reps: int = 20
    dtype: str = "bf16"
    predictions: Path | None = None
    explanations: Path | None = None
    calibrate: bool = False
    out_dir: Path | None = None
    trace_dir: Path | None = None
    plot: Path | None = None
    as_json: bool = False


@dataclass(frozen=True)
class Prepared:
    """A request made ready to measure: its plan, and the learner's files read."""

    plan: runner.Plan
    learner: dict[str, runner.LearnerPrediction] | None
    read: runner.PredictionsRead | None
    explained: dict[str, inputs.Explanation] | None


@dataclass(frozen=True)
class LabResult:
    """What a lab run left: the record as stored, its path, and the plot written (if any)."""

    plan: runner.Plan
    record: LabRecord
    path: Path
    plot_path: Path | None


Say = Callable[[str], None]
Save = Callable[[str, miss_reasons.Judgement], LabRecord]


class LabUI(Protocol):
    """How a front end (``drill lab``) shows the run and asks the learner; the pipeline is ``run_lab``."""

    interactive: bool  # a learner at a terminal can be asked for predictions and "why?"

    def say(self, text: str) -> None: ...

    def warn(self, text: str) -> None: ...

    def probe(self, plan: runner.Plan) -> lab_probes.Probed | None:
        """``measured_datasheet(plan, ...)`` with the front end's progress shown."""

    def measure(self, plan: runner.Plan, learner: dict[str, runner.LearnerPrediction] | None,
                read: runner.PredictionsRead | None, probed: lab_probes.Probed | None) -> tuple[LabRecord, Path]:
        """``measure_and_save(plan, learner, read, ...)`` with the front end's progress shown."""

    def ask_predictions(self, plan: runner.Plan) -> dict[str, runner.LearnerPrediction]:
        """The learner's predictions, asked now (op -> ``runner.LearnerPrediction``; may be empty)."""

    def ask_why(self, record: LabRecord, pending: list[OpRow], save: Save, path: Path) -> LabRecord:
        """Ask "why?" for each of ``pending``; ``save(op, judgement)`` stores each attempt at once and gives
        the record as stored. Returns the record as last stored."""


def check_targets(out_dir: Path, trace_dir: Path | None, plot: Path | None) -> None:
    """Every write target proven writable, and the ledger read as saving will read it, before anything
    is measured (LabUsageError, one line)."""

    try:
        records.check_writable(out_dir)
        records.check_lock(out_dir)  # saving takes the folder's lock: a linked .lock would lose the run
        ledger = Path(out_dir) / records.LEDGER_NAME
        if ledger.exists() or ledger.is_symlink():
            safeio.check_target(ledger)
            records.check_ledger(out_dir)  # read as save_run will read it, fully
        if trace_dir is not None:
            records.check_writable(trace_dir)
        else:  # the traces go to the folder's own traces/, never through a link out of it
            records.check_own_file(Path(out_dir) / "traces", Path(out_dir))
        if plot is not None:
            safeio.check_target(plot)
    except (RecordError, safeio.SafeIOError) as exc:
        raise LabUsageError(f"nothing measured: {exc}") from None


def _read_inputs(request: LabRequest) -> tuple[tuple[str, ...], dict[str, runner.LearnerPrediction] | None,
                                               runner.PredictionsRead | None, dict[str, inputs.Explanation] | None]:
    """(ops, predictions, when they were read, explanations) from the request's files (LabUsageError)."""
    from labs import plot as lab_plot  # optional dependency: the plot needs matplotlib (the lab extra)

    read = None
    try:
        chosen = ops.parse_ops(request.ops_text)
        if request.plot is not None:
            lab_plot.check_path(request.plot)
        learner = inputs.load_predictions(request.predictions, chosen) if request.predictions else None
        if learner is not None and request.predictions is not None:
            read = runner.PredictionsRead(f"file {request.predictions}", runner.utc_now(),
                                          inputs.file_sha256(request.predictions))
        explained = inputs.load_explanations(request.explanations, chosen) if request.explanations else None
    except (ops.OpError, lab_plot.PlotError, inputs.InputError) as exc:
        raise LabUsageError(str(exc)) from None
    if request.plot is not None:
        try:
            import matplotlib  # noqa: F401
        except ImportError:
            raise LabUsageError("--plot needs matplotlib (the `lab` extra)") from None
    return chosen, learner, read, explained


def prepare(request: LabRequest) -> Prepared:
    """Read the learner's files, detect the device, choose N, prove every target writable and make the
    plan: all before anything is measured (LabUsageError, one line)."""
    from labs.measure.device import detect  # optional dependency: jax loads only when a lab runs on a device

    chosen, learner, read, explained = _read_inputs(request)
    device = detect()
    size = request.size
    if size is None:
        size = CPU_DEFAULT_SIZE if device.platform == "cpu" else ACCELERATOR_DEFAULT_SIZE
    options = runner.LabOptions(chip=request.chip, ops=chosen, size=size, reps=request.reps, dtype=request.dtype,
                                calibrate=request.calibrate, trace_dir=request.trace_dir,
                                out_dir=request.out_dir if request.out_dir is not None else records.default_dir())
    check_targets(options.out_dir, request.trace_dir, request.plot)
    try:
        plan = runner.make_plan(options, device)
    except runner.LabError as exc:
        raise LabUsageError(str(exc)) from None
    return Prepared(plan, learner, read, explained)


def header_lines(plan: runner.Plan) -> list[str]:
    """What the run says first: the device, the datasheet chip, calibration, notes, jax and the folder."""
    from labs.measure import profile  # optional dependency: the trace reader names jax's profiler

    d = plan.device
    lines = [f"device: {d.device_kind} ({d.platform}); datasheet chip: {plan.chip.display if plan.chip else 'none'}; "
             f"calibration: {plan.calibrate_reason or 'off (--calibrate to add it)'}"]
    lines.extend(f"note: {note}" for note in plan.notes)
    lines.append(f"jax {d.jax_version}; device time read with {profile.reader_name()}; records: {plan.options.out_dir}")
    return lines


def judgement_saver(path: Path) -> Save:
    """``save(op, judgement)``: one judged attempt stored in the record on disk, under the folder's lock
    (``records.update``: two explains at once keep each other's attempts)."""
    return lambda op, judgement: records.update(path, lambda rec: runner.record_judgement(rec, op, judgement))


def run_lab(request: LabRequest, ui: LabUI) -> LabResult:
    """``drill lab`` end to end: prepare; off the catalogue the probes, shown as the device's datasheet;
    the predictions (from the file, else asked); measure and save before anything is shown; "why?" for
    each miss (a miss the evidence cannot explain is said to be so and not asked); the plot."""
    prepared = prepare(request)
    plan, learner, read = prepared.plan, prepared.learner, prepared.read
    for line in header_lines(plan):
        ui.say(line)
    probed = ui.probe(plan)
    if learner is None and ui.interactive:
        learner = ui.ask_predictions(plan) or None
        if learner:
            read = runner.PredictionsRead("terminal", runner.utc_now())
    if not learner:
        ui.say(NO_PREDICTIONS_TEXT)
    record, path = ui.measure(plan, learner, read, probed)
    if request.as_json:  # at a terminal the banner heads the tables; the "why?" lines say "wall time" too
        for line in report.wall_banner(record):
            ui.say(line)
    if prepared.explained:
        record = save_explanations(path, prepared.explained)
    for line in finding_lines(record):
        ui.say(line)
    pending = [row for row in record.misses() if not runner.accepted(row)
               and not (row.miss is not None and row.miss.finding)]
    if pending and prepared.explained is None and ui.interactive:
        record = ui.ask_why(record, pending, judgement_saver(path), path)
    return LabResult(plan, record, path, _plot(request, record, path, ui))


def finding_lines(record: LabRecord) -> list[str]:
    """One line per miss the evidence cannot explain: nothing is asked of it."""
    return [f"{row.op}: unexplained by the evidence, nothing to ask: {row.miss.finding}"
            for row in record.misses() if row.miss is not None and row.miss.finding]


def _plot(request: LabRequest, record: LabRecord, path: Path, ui: LabUI) -> Path | None:
    """The roofline plot, if asked; a plot that cannot be written is a warning (the record is saved)."""
    if request.plot is None:
        return None
    from labs import plot as lab_plot  # optional dependency: the plot needs matplotlib (the lab extra)

    try:
        return lab_plot.plot_record(record, request.plot)
    except lab_plot.PlotError as exc:
        ui.warn(f"drill lab: warning: {exc}; the record was saved to {path}")
        return None


def result_lines(result: LabResult) -> list[str]:
    """After the run (the learner has answered): the tables, the evidence for every op, the notes and
    where the record, plot and traces are."""
    record = result.record
    lines = ["", *report.tables(record), "", *evidence.table(record), "", *report.note_lines(record), "",
             f"record: {result.path}"]
    if result.plot_path:
        lines.append(f"plot: {result.plot_path}")
    if result.plan.trace_dir is not None:
        lines += [f"traces: {result.plan.trace_dir}", f"open them in XProf: drill xprof {result.path}"]
    return lines


def measured_datasheet(plan: runner.Plan, say: Callable[[str], None] = print,
                       progress: Callable[[str], None] | None = None) -> lab_probes.Probed | None:
    """Off the catalogue (a CPU, a GPU not in it): run the probes now and ``say`` them as this device's
    datasheet, measured just now (peak FLOP/s of a large matmul, copy bandwidth, fixed cost per op
    kind), the figures to predict from; pass the result to ``measure_and_save`` so the record stores
    them as its ``constants`` and reuses them as its probes. None on a catalogued chip (its
    datasheet is the catalogue's): nothing is measured or said. ``progress`` is told each probe as it
    starts (``labs.measure.probes.measure_probes``). ``drill lab`` and the notebook."""
    if plan.chip is not None:
        return None
    say("probing this device (its datasheet: matmul FLOP/s, copy bandwidth, fixed cost per op kind) ...")
    probed = lab_probes.measure_probes(plan, progress)
    for line in lab_probes.datasheet_lines(probed, plan.device.device_kind):
        say(line)
    probed.shown_at = runner.utc_now()
    return probed


def read_predictions(mapping: Mapping[Any, Any] | None, chosen: tuple[str, ...] = ops.SEED_OPS
                     ) -> tuple[dict[str, runner.LearnerPrediction] | None, runner.PredictionsRead | None]:
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


def measure_and_save(plan: runner.Plan, learner: dict[str, runner.LearnerPrediction] | None,
                     read: runner.PredictionsRead | None, *, practice: bool = False,
                     progress: runner.Progress | None = None, require_all: bool = True,
                     probed: lab_probes.Probed | None = None) -> tuple[LabRecord, Path]:
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
    path = runner.save(plan, record)
    return records.load_typed(path)[0], path


def why_questions(record: LabRecord) -> list[str]:
    """One line per miss still unexplained, with the numbers the learner reasons from (no table)."""

    graded = record.graded
    whose = "your" if graded == "learner" else f"the {graded}"
    lines = []
    for row in record.misses():
        if runner.accepted(row):
            continue
        predicted, ratio = row.predictions.get(graded), row.ratios.get(graded)
        numbers = (f"{row.op}: measured {seconds(row.measured.measured_s)}, {whose} prediction "
                   f"{seconds(predicted.seconds) if predicted else '-'} = "
                   f"{f'{ratio:.2f}x' if ratio is not None else '-'}")
        finding = lab_explain.finding(record, row.op)  # judged again on the record's numbers, never trusted
        if finding:
            lines.append(f"{numbers}: unexplained by the evidence, nothing to ask: {finding}")
            continue
        lines.append(f"{numbers}: why? (a reason and your corrected time with a unit: `drill miss-reasons`)")
    if record.practice:
        lines.append(PRACTICE_TEXT)
    return lines


def save_explanations(path: Path, given: Mapping[str, lab_explain.Given]) -> LabRecord:
    """Judge ``given`` (op -> sentence, or {"reasons", "text"}) on the record as it is on disk, under
    the records folder's lock, and store it (``records.update``): the one explain step the CLI's
    ``drill lab``/``drill explain`` and the notebook share. Returns the record as stored."""
    return records.update(path, lambda rec: runner.explain(rec, given))


def explain(record: LabRecord, path: Path, explanations: Mapping[Any, Any] | None) -> tuple[LabRecord, list[str]]:
    """Judge ``explanations`` (op -> sentence, or {"reasons", "text"}) and rewrite the record: (the record
    as stored, each judgement's line, then, the learner having answered, the tables and the evidence)."""
    given = inputs.explanations_from_mapping(explanations, tuple(r.op for r in record.ops)) \
        if explanations else {}
    record = save_explanations(path, given)
    lines = [f"{row.op}: {row.miss.why}" for row in record.misses() if row.op in given and row.miss]
    left = record.summary.unexplained
    lines.append(f"still unexplained: {', '.join(left)} (try again)" if left else "every miss explained")
    return record, [*lines, "", *report.tables(record), "", *evidence.table(record), "", *report.note_lines(record)]


# ----------------------------------------------------------------- drill explain

@dataclass(frozen=True)
class Misses:
    """A record's misses as ``drill explain`` sees them: what the evidence cannot explain (said, never
    asked) and what is still to explain."""

    findings: dict[str, str]  # op -> why no reason can explain it (judged again on the record's numbers)
    pending: list[OpRow]  # the op rows (``labs.records.types.OpRow``) still unexplained, not revealed, not findings

    def finding_lines(self) -> list[str]:
        return [f"{op}: unexplained by the evidence, nothing to ask: {found}" for op, found in self.findings.items()]


def misses_to_explain(record: LabRecord) -> Misses:
    """The findings and the pending misses of a typed record (``labs.records.types.LabRecord``)."""

    found = {row.op: lab_explain.finding(record, row.op) for row in record.misses()}
    pending = [row for row in record.misses() if not runner.accepted(row)
               and not (row.miss is not None and row.miss.revealed) and not found.get(row.op)]
    return Misses({op: why for op, why in found.items() if why}, pending)


def reveal(path: Path, ops_to_reveal: list[str]) -> list[str]:
    """Give up on ``ops_to_reveal``: under the folder's lock, on the record as it is on disk, mark each
    revealed and return the lines that show which reasons explain it (``runner.reveal``)."""
    shown: list[str] = []

    def reveal_all(rec: LabRecord) -> LabRecord:
        shown.clear()
        for op in ops_to_reveal:
            rec, lines = runner.reveal(rec, op)
            shown.extend(lines)
        return rec
    records.update(path, reveal_all)
    return shown


def explain_from_file(path: Path, given: Mapping[str, lab_explain.Given], pending: list[OpRow]
                      ) -> tuple[LabRecord, list[str]]:
    """Judge and store ``given`` (op -> explanation) for the pending ops only; (the typed record as
    stored, one line per judged op: its verdict, its refused attempts, and after an accepted one every
    set of reasons the numbers support)."""

    wanted = {row.op for row in pending}
    record = save_explanations(path, {op: text for op, text in given.items() if op in wanted})
    by_op = record.by_op()
    lines = []
    for op in (row.op for row in pending):
        row = by_op[op]
        if op not in given or row.miss is None:
            continue
        refused = sum(a.verdict == "refused" for a in row.miss.attempts or ())
        trail = "" if not refused else (f" ({'after ' if row.miss.accepted else ''}{refused} refused "
                                        f"attempt{'s' if refused > 1 else ''}, kept in the record)")
        lines.append(visible(f"{op}: {row.miss.why}{trail}"))
        if row.miss.accepted:
            found = miss_reasons.explanations(records.op_evidence(record, op))
            if found:
                lines.append("    the numbers support: " + "; ".join(" + ".join(c) for c in found))
    return record, lines


def explained_lines(record: LabRecord, path: Path, pending: list[OpRow]) -> list[str]:
    """After the learner has answered: the evidence for every op, and how many misses are explained."""

    left = record.summary.unexplained
    return ["", *(visible(line) for line in evidence.table(record)),
            f"{path}: {len(pending) - len(left)} miss(es) explained"
            + (f"; still unexplained: {', '.join(left)}" if left else "")]

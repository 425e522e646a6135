"""`drill lab`, `drill gate`, `drill progress`: LAB·0.1, GATE 00 and the chapter checklist.

Thin commands: parse options, call ``labs``. jax is imported only inside
``drill lab`` (through ``labs.runner.run``), so ``gate`` and ``progress`` run
without it.

The four verbs (lab, explain, gate, progress) share the record folder, its checks and the prompts
for predictions and explanations; each verb is one function.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Callable, TypeVar

import click

from drills.store.files import StoreError
from generator.io import safeio
from labs.records import folder as records
from labs.options import ACCELERATOR_DEFAULT_SIZE, CPU_DEFAULT_SIZE
from labs.records.types import LabRecord, OpRow, RecordError
from labs.measure import ops, ops as lab_ops, profile, xprof_logdir
from labs.gate import verdict as lab_gate, verify as lab_verify
from labs import inputs, runner, session
from generator.model.units import seconds
from generator.explain import BY_ID, UnknownReasonError
from labs.runner import LearnerPrediction
from drills.progress_bar import Bar, Steps
from drills.cmd_pod import collectives_lab
from generator.model.answers import AnswerError, parse_number

if TYPE_CHECKING:  # annotations only: the lab's modules load only for the command that runs them
    from generator.explain import Judgement
    from labs.measure.probes import Probed
    from labs.runner import Plan, PredictionsRead
    from labs.session import Save

T = TypeVar("T")
Learner = dict[str, "LearnerPrediction"]  # op -> the learner's prediction

# Bounds that keep every count finite and meaningful; what fits the device is checked by the runner.
MAX_LAB_SIZE = 2**20  # N = 1,048,576: one NxN bf16 operand is 2 TiB, beyond any one device's memory
MAX_LAB_REPS = 10_000
JAX_MISSING = "jax is not installed; the lab needs the `lab` extra: pip install 'rudrite-kernels[lab]'"


def _require_jax() -> None:
    try:
        import jax  # noqa: F401
    except ImportError:
        raise click.UsageError(JAX_MISSING) from None


BENCH_HELP = ("Folder of lab records (lab-*.json) to read instead of yours, e.g. the course's published "
              "`bench`. Default: your records ($DRILL_RECORDS, else lab-records in your user data directory).")


def _interactive() -> bool:
    try:
        return sys.stdin is not None and sys.stdin.isatty()
    except (ValueError, OSError):  # a closed stdin
        return False


def _bench_folder(bench_dir: Path | None) -> None:
    """A --bench folder that does not exist is a usage error (never "pending" as if all were well)."""
    if bench_dir is not None and not Path(bench_dir).is_dir():
        what = "is not a folder" if Path(bench_dir).exists() else "does not exist"
        raise click.UsageError(f"--bench {bench_dir} {what}")


def _check_sizes(sizes: str) -> None:
    """--collectives --sizes: each a positive size (the error names --sizes, not --bytes)."""

    for part in (p.strip() for p in sizes.split(",")):
        if not part:
            continue
        try:
            value = parse_number(part, "B", "B")
        except AnswerError as exc:
            raise click.UsageError(f"--sizes '{part}': {exc}") from None
        if not 0 < value < 1e21:
            raise click.UsageError(f"--sizes: each size must be a positive number of bytes below 1e21, got '{part}'")


@click.command()
@click.option("--chip", default="auto", show_default=True,
              help="Chip whose datasheet predicts (see `drill chips`); auto maps JAX's device_kind. "
                   "A CPU or unknown device has no entry: then --calibrate is forced.")
@click.option("--ops", "ops_text", default="seed", show_default=True,
              help="Comma-separated ops: matmul, skinny_matmul, add, softmax, reduce_sum, embedding; "
                   "'seed' is the seed's five (e.g. --ops seed,embedding).")
@click.option("--size", "-n", type=click.IntRange(max=MAX_LAB_SIZE), default=None,
              help="N: matmul NxNxN, skinny matmul 8xNxN, add/softmax/reduce_sum over NxN, embedding N rows of NxN; "
                   f"at most 2^20 = {MAX_LAB_SIZE:,}, and the inputs must fit the device's memory "
                   f"[default: {CPU_DEFAULT_SIZE} on a CPU (under a minute on 2 cores), {ACCELERATOR_DEFAULT_SIZE} "
                   "on a TPU or GPU (a counted size)].")
@click.option("--reps", type=click.IntRange(max=MAX_LAB_REPS), default=20, show_default=True,
              help=f"Timed runs per trace, three traces per op (after compile and warm-up), 1 to {MAX_LAB_REPS:,}; "
                   "p20/p50/p80 and spread are reported.")
@click.option("--dtype", default="bf16", show_default=True, help="Element dtype: bf16 or f32.")
@click.option("--predictions", type=click.Path(dir_okay=False, path_type=Path),
              help="YAML/JSON file: op -> your predicted time with units (e.g. 'matmul: 700us'). "
                   "Without it you are asked at a terminal; otherwise your column is skipped.")
@click.option("--explanations", type=click.Path(dir_okay=False, path_type=Path),
              help="YAML/JSON file: op -> one sentence explaining a miss over 2x. "
                   "Without it you are asked at a terminal; otherwise misses stay unexplained.")
@click.option("--calibrate", is_flag=True,
              help="Also measure the device's own FLOP/s (large matmul) and bytes/s (large copy) and predict from them.")
@click.option("--out", "out_dir", type=click.Path(file_okay=False, path_type=Path), default=None,
              help="Directory for the JSON record [default: $DRILL_RECORDS, else lab-records in your "
                   "user data directory, beside the quiz store].")
@click.option("--trace-dir", type=click.Path(file_okay=False, path_type=Path),
              help="Directory for the profiler traces [default: <out>/traces/<record name>].")
@click.option("--json", "as_json", is_flag=True, help="Print {path, plot, record} as JSON instead of tables.")
@click.option("--plot", type=click.Path(dir_okay=False, path_type=Path),
              help="Write a log-log roofline of the run here (.png or .svg).")
@click.option("--collectives", is_flag=True,
              help="The collectives lab instead: all_gather, psum, psum_scatter, all_to_all and a sharded "
                   "matmul on a mesh of all local devices (uses --chip, --reps, --dtype, --predictions, --out, --json).")
@click.option("--mesh", default="auto", show_default=True, help="--collectives: the mesh, auto (one axis) or AxB.")
@click.option("--sizes", default=None, help="--collectives: full-array bytes per collective [default: 64kB,1MB,16MB; 16kB,256kB,1MB on a CPU].")
def lab(chip: str, ops_text: str, size: int | None, reps: int, dtype: str, predictions: Path | None,
        explanations: Path | None, calibrate: bool, out_dir: Path | None, trace_dir: Path | None, as_json: bool,
        plot: Path | None, collectives: bool = False, mesh: str = "auto", sizes: str | None = None) -> None:
    """LAB·0.1: predict each op's latency, measure it with JAX, score, record.

    Predictions come from the roofline (generator/model/costs.py + generator/model/roofline.py)
    on the chip's datasheet and, with --calibrate, on the device's measured
    speeds; yours come first. Each op is timed with jit (compile and warm-up
    excluded, inputs rotated past the cache, results blocked on) and read
    from three profiler traces (device time; a loud banner if the wall clock
    had to stand in). Ratios are measured / predicted; every miss over
    2x asks for a one-sentence explanation. The record goes to --out
    (default: your records folder, see `drill gate`); `drill gate` judges it.
    """

    try:
        dtype = lab_ops.check_dtype(dtype)
    except lab_ops.OpError as exc:
        raise click.UsageError(str(exc)) from None
    if collectives and sizes is not None:
        _check_sizes(sizes)
    _require_jax()
    if collectives:  # the collectives lab lives in drills/cmd_pod.py and labs/collectives/lab.py
        collectives_lab(chip, mesh, sizes, reps, dtype, predictions, out_dir, trace_dir, as_json)
        return
    request = session.LabRequest(chip, ops_text, size, reps, dtype, predictions, explanations, calibrate, out_dir,
                                 trace_dir, plot, as_json)
    try:
        result = session.run_lab(request, _ClickLabUI(as_json))
    except session.LabUsageError as exc:
        raise click.UsageError(str(exc)) from None
    except RecordError as exc:  # an explanation that could not be stored: the record is as it was
        raise click.ClickException(str(exc)) from None
    if as_json:
        click.echo(json.dumps({"path": str(result.path), "plot": str(result.plot_path) if result.plot_path else None,
                               "record": result.record.to_dict()}, indent=2))
        return
    for line in session.result_lines(result):
        click.echo(line)


class _ClickLabUI:
    """``labs.session.LabUI`` at a terminal: progress bars on stderr (a terminal only), prompts on stdin; with
    --json every line goes to stderr and nothing is asked."""

    def __init__(self, as_json: bool) -> None:
        self.as_json = as_json
        self.interactive = _interactive() and not as_json

    def say(self, text: str) -> None:
        click.echo(text, err=self.as_json)

    def warn(self, text: str) -> None:
        click.echo(text, err=True)

    def probe(self, plan: Plan) -> Probed | None:
        return _probe_with_progress(plan, self.say)

    def measure(self, plan: Plan, learner: Learner | None, read: PredictionsRead | None,
                probed: Probed | None) -> tuple[LabRecord, Path]:
        return _run_with_progress(plan, learner, read, probed)

    def ask_predictions(self, plan: Plan) -> Learner:
        return _ask_predictions(plan)

    def ask_why(self, record: LabRecord, pending: list[OpRow], save: Save, path: Path) -> LabRecord:
        return _ask_explanations(record, pending, lambda op, judgement: _saved(path, lambda: save(op, judgement)), path)


def _probe_with_progress(plan: Plan, say: Callable[[str], None]) -> Probed | None:
    """``labs.session.measured_datasheet`` with a progress bar and an ETA over the probes on a
    terminal; the bar's line ends before the datasheet is said."""

    with Bar("probes", len(runner.probe_labels(plan))) as bar:
        steps = Steps(bar, runner.probe_labels(plan))

        def said(text: str) -> None:
            if steps.pos >= 0:  # the probes ran: their bar ends before the datasheet is shown
                steps.finish()
            say(text)
        probed = session.measured_datasheet(plan, said, progress=steps)
        steps.finish()
    return probed


def _run_with_progress(plan: Plan, learner: Learner | None, read: PredictionsRead | None,
                       probed: Probed | None = None) -> tuple[LabRecord, Path]:
    """Measure and save (``labs.session.measure_and_save``) with a progress bar and an ETA on a
    terminal (``drills.progress_bar``; the probes measured before, ``probed``, count as done);
    elsewhere (a pipe, a log, CI) no progress is written."""

    steps = runner.step_labels(plan)

    def measure(progress: Callable[[str], None]) -> tuple[LabRecord, Path]:
        try:
            return session.measure_and_save(plan, learner, read, practice=not learner, progress=progress,
                                            require_all=False, probed=probed)
        except RecordError as exc:
            raise click.ClickException(f"the record could not be saved: {exc}") from None

    done_before = tuple(runner.probe_labels(plan)) if probed is not None else ()
    with Bar("LAB·0.1", len(steps)) as bar:
        steps_done = Steps(bar, steps, done_before)
        result = measure(steps_done)
        steps_done.finish()
    return result


def _ask_predictions(plan: Plan) -> Learner:
    click.echo("Predict before you measure: your latency for each op (e.g. 700us, 1.2 ms; blank skips).")
    out: Learner = {}
    for name in plan.options.ops:
        op, cost = ops.OPS[name], plan.costs[name]
        shape = "x".join(str(d) for d in cost.shape)
        while True:
            text = click.prompt(f"  {op.label} [{cost.op} {shape}, {cost.dtype}]", default="",
                                show_default=False).strip()
            if not text:
                break
            try:
                out[name] = LearnerPrediction(inputs.parse_prediction(text), text)
                break
            except inputs.InputError as exc:
                click.echo(f"  could not read that: {exc}", err=True)
    return out


def _saved(path: Path, store: Callable[[], T]) -> T:
    """``store()``, a write under the records folder's lock; a record that cannot be written (e.g. a
    read-only one, left as it was) is one line naming it."""
    try:
        return store()
    except RecordError as exc:
        raise click.ClickException(f"{path}: {exc}") from None


def _judgement_saver(path: Path) -> Callable[[str, Judgement], LabRecord]:
    """``save(op, judgement)``: store one judged attempt in the record on disk, under the lock."""

    save = session.judgement_saver(path)
    return lambda op, judgement: _saved(path, lambda: save(op, judgement))


WHY_INTRO = ("Every miss over 2x needs a derivation: name the reasons first (ids from `drill miss-reasons`, "
             "joined by '+'), then your working as arithmetic over this run's quantities with their units, then "
             "'=' and the time it gives, e.g. 'cache-level: 6.29 MB / 108 GB/s = 58 us'. It is accepted when every "
             "number is a quantity of this op's record its reasons may use, the arithmetic gives your time, and "
             "that time is within 1.5x of measured (wider for a noisy probe). Blank skips (explain later: "
             "drill explain; give up: drill explain --show).")


def _ask_explanations(record: LabRecord, missed: list[OpRow],
                      save: Callable[[str, Judgement], LabRecord], path: Path | None = None) -> LabRecord:
    """Ask "why?" for each miss until an explanation is accepted or the learner skips (blank);
    every attempt is judged and stored at once (``save(op, judgement)``, under the folder's lock,
    gives the record as stored). Returns the record as last stored."""

    click.echo("")
    click.echo(WHY_INTRO)
    graded = record.graded
    whose = "your" if graded == "learner" else f"the {graded}"
    try:
        for row in missed:
            ratio = row.ratios.get(graded)
            predicted = row.predictions.get(graded)
            shown = f"{ratio:.2f}x" if ratio is not None else "no ratio"
            measured = row.measured
            question = (f"  {row.label}: measured {seconds(measured.measured_s)} ({measured.measured_from} "
                        f"time), {whose} prediction {seconds(predicted.seconds) if predicted else '-'}: {shown}; why?")
            while True:
                text = click.prompt(question, default="", show_default=False).strip()
                if not text:
                    break
                try:
                    judgement = runner.judge_explanation(record, row.op, text)
                except UnknownReasonError as exc:
                    click.echo(f"    {exc} (known: {', '.join(BY_ID)})")
                    continue
                record = save(row.op, judgement)
                click.echo(f"    {judgement.why}")
                if judgement.accepted:
                    _show_supported(judgement)
                    break
                click.echo("    try again (blank to skip)")
    except click.Abort:
        if path is not None:
            click.echo(f"\nrecord saved: {path} (incomplete until every miss is explained: drill explain)", err=True)
        raise
    return record


def _show_supported(judgement: Judgement) -> None:
    """After an accepted explanation (only then): every set of reasons the record's numbers support."""
    if judgement.supported:
        click.echo("    the numbers support: " + "; ".join(" + ".join(c) for c in judgement.supported))


@click.command()
@click.argument("record_path", metavar="[RECORD]", required=False, type=click.Path(dir_okay=False, path_type=Path))
@click.option("--explanations", type=click.Path(dir_okay=False, path_type=Path),
              help="YAML/JSON file: op -> a sentence whose corrected time follows its last '=', or "
                   "{reasons: [ids], corrected: '59 us', text: sentence}. Without it you are asked at a terminal.")
@click.option("--show", is_flag=True,
              help="Give up: show which reasons explain each unexplained miss and the corrected time they give. "
                   "The misses are marked revealed and never count as explained (GATE 00, Can-you 6).")
@click.option("--bench", "bench_dir", type=click.Path(file_okay=False, path_type=Path), default=None,
              help=BENCH_HELP)
def explain(record_path: Path | None, explanations: Path | None, bench_dir: Path | None, show: bool = False) -> None:
    """Explain the misses of a lab record after the run (e.g. one made on Colab, or a "why?" left blank).

    RECORD is a record's path, or its file name in your records folder (or --bench);
    without it, the newest record there with unexplained misses. Each op whose
    measured / predicted ratio is outside 2x and has no accepted explanation yet
    takes a derivation: the reasons first (ids from `drill miss-reasons`, joined by '+',
    before a ':'), then the working as arithmetic over the record's quantities with their
    units, then '=' and the time it gives, e.g. "cache-level: 6.29 MB / 108 GB/s = 58 us".
    It is accepted when every number is a quantity of this op's record that its reasons
    may use, the working's arithmetic gives that time, and it is within 1.5x of measured
    (wider for a noisy probe) and closer than the prediction; refused otherwise, naming the
    rule that failed (try again). A miss no derivation can explain is said to be so, and not asked. Every
    attempt is kept in the record. The evidence table is shown after you answer. The
    record is rewritten in place, atomically; accepted explanations are kept as they are.
    """

    _bench_folder(bench_dir)
    folder = bench_dir if bench_dir is not None else records.default_dir()
    if record_path is None:
        record_path = _newest_unexplained(folder)
    record_path, record = _load_named(record_path, folder)
    misses = session.misses_to_explain(record)
    for line in misses.finding_lines():
        click.echo(line)
    pending = misses.pending
    if not pending:
        click.echo(f"{record_path}: no unexplained misses")
        return
    if show:
        if explanations is not None:
            raise click.UsageError("--show gives up on the misses; it takes no --explanations")
        for line in _saved(record_path, lambda: session.reveal(record_path, [row.op for row in pending])):
            click.echo(line)
        click.echo(f"{record_path}: {len(pending)} miss(es) revealed; they no longer count as explained")
        return
    if explanations is not None:
        try:
            given = inputs.load_explanations(explanations, tuple(row.op for row in record.ops))
        except inputs.InputError as exc:
            raise click.UsageError(str(exc)) from None
        record, lines = _saved(record_path, lambda: session.explain_from_file(record_path, given, pending))
        for line in lines:
            click.echo(line)
    elif _interactive():
        record = _ask_pending(record, pending, record_path)
    else:
        raise click.UsageError(f"unexplained misses ({', '.join(row.op for row in pending)}): "
                               "give --explanations FILE or run at a terminal")
    for line in session.explained_lines(record, record_path, pending):
        click.echo(line)


def _ask_pending(record: LabRecord, pending: list[OpRow], record_path: Path) -> LabRecord:
    """Ask "why?" at the terminal for each pending miss, each attempt saved under the folder's lock;
    the record as it now is."""
    return _ask_explanations(record, pending, _judgement_saver(record_path), record_path)


def _load_named(record_path: Path, folder: Path) -> tuple[Path, LabRecord]:
    """The record RECORD names (a path, or a file name in the records folder) and its path, typed
    (``labs.records.types.LabRecord``); a record that cannot be read is a usage error naming the file."""
    if not record_path.exists() and not record_path.is_absolute() and (folder / record_path).exists():
        record_path = folder / record_path
    try:
        return record_path, records.load_typed(record_path)[0]
    except RecordError as exc:
        raise click.UsageError(f"{record_path}: {exc}") from None


def _say_skipped(folder: Path | None) -> None:
    """One line on stderr per record in ``folder`` that cannot be read (file and field named); the
    others are still used."""
    for loaded in records.scan(records.default_dir() if folder is None else Path(folder)):
        if loaded.record is None:
            click.echo(records.skipped_line(loaded.path, loaded.error), err=True)


def _newest_unexplained(folder: Path) -> Path:
    _say_skipped(folder)
    found = [(l.record.started, l.path) for l in records.scan(folder) if l.record is not None
             and any(not runner.accepted(row) for row in l.record.misses())]
    if not found:
        raise click.UsageError(f"no record with unexplained misses in {folder}; name one: drill explain RECORD")
    return max(found)[1]


@click.command()
@click.option("--bench", "bench_dir", type=click.Path(file_okay=False, path_type=Path), default=None,
              help=BENCH_HELP)
@click.option("--json", "as_json", is_flag=True,
              help="Print an object whose `status` is pass, fail, practice (records, none counted) or pending "
                   "(none), with its rows, each with `within_2x`, `misses`, `explained`, `verdict` (pass, fail, "
                   "incomplete or ungraded), `counted` and `why_not`.")
@click.option("--verify", is_flag=True,
              help="Re-derive every measured device time from the traces kept beside the records and list "
                   "the disagreements (exit 1 when there are any).")
def gate(bench_dir: Path | None, as_json: bool, verify: bool = False) -> None:
    """GATE 00: latency predictions for five ops within 2x of measured, every miss explained.

    Reads your records (or --bench DIR). A record counts only when your
    predictions for all five ops were read before the measurement began,
    every op is device time and not noisy, it is your first run with
    predictions on that device at that N (the folder's ledger counts runs),
    on a TPU or GPU, and its numbers agree with each other. A counted record
    passes when all five predictions are within 2x and fails otherwise; while
    a miss lacks an accepted explanation the record is incomplete (drill
    explain), and the gate, which it can no longer pass, says FAIL.
    With records but none counted the gate is open (practice); with none,
    pending. Unreadable records are skipped, one line each on stderr naming
    the file and the field.
    """

    _bench_folder(bench_dir)
    if verify:
        _gate_verify(bench_dir, as_json)
        return
    result = lab_gate.evaluate(bench_dir)
    if as_json:
        click.echo(json.dumps(result.to_dict(), indent=2))
        return
    for line in lab_gate.format_lines(result, skipped=False):
        click.echo(line)
    for skip in result.skipped:  # one line each on stderr, naming the file and the field
        click.echo(records.skipped_line(skip["path"], skip["reason"]), err=True)


def _gate_verify(bench_dir: Path | None, as_json: bool) -> None:
    """``drill gate --verify``: every device time re-derived from the kept traces; exit 1 on a disagreement."""

    report = lab_verify.verify_folder(bench_dir)
    if as_json:  # the JSON's "skipped" names each unreadable file and field
        click.echo(json.dumps(report.to_dict(), indent=2))
    else:
        for line in report.lines(skipped=False):
            click.echo(line)
        for skip in report.skipped:
            click.echo(records.skipped_line(skip["path"], skip["reason"]), err=True)
    if report.disagreements:
        sys.exit(1)


STORE_HELP = "Review store (SQLite). Default: $DRILL_STORE, else drill.sqlite3 in your user data directory."


@click.command()
@click.option("--store", "store_path", type=click.Path(dir_okay=False), default=None, help=STORE_HELP)
@click.option("--bench", "bench_dir", type=click.Path(file_okay=False, path_type=Path), default=None,
              help=BENCH_HELP)
@click.option("--tick", "ticks", type=int, multiple=True, metavar="N",
              help="Tick 'Can you' item N by hand (repeatable).")
@click.option("--untick", "unticks", type=int, multiple=True, metavar="N",
              help="Remove your hand tick from item N (a right quiz answer on its card still ticks it).")
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object.")
def progress(store_path: str | None, bench_dir: Path | None, ticks: tuple[int, ...], unticks: tuple[int, ...],
             as_json: bool) -> None:
    """The chapter checklist: the seven "Can you" items, labs done, the streak, GATE 00.

    An item ticks when the skills it describes are mastered (right with no hint on a later
    day than the first right answer, and still recalled), or by hand (--tick N); a skill learned
    today shows as "learned today: recall it on a later day to tick". Labs come from your lab
    records (or --bench DIR); the streak from the quiz store and Anki (drill anki-import); the
    gate as `drill gate` judges it.
    """
    # the quiz's store and its dependencies (fsrs) load only here: the GPU box runs the lab without them
    from drills import progress as lab_progress
    from drills.store.repository import Store  # as above

    try:
        for n in (*ticks, *unticks):
            lab_progress.check_item(n)
    except lab_progress.ProgressError as exc:
        raise click.UsageError(str(exc)) from None
    overlap = set(ticks) & set(unticks)
    if overlap:
        raise click.UsageError(f"item {min(overlap)} is both ticked and unticked")
    _bench_folder(bench_dir)
    try:
        store = Store.open(store_path)
    except StoreError as exc:
        raise click.ClickException(str(exc)) from None
    try:
        for n in ticks:
            store.set_tick(n, True)
        for n in unticks:
            store.set_tick(n, False)
        data = lab_progress.checklist(store, bench_dir)
        _say_skipped(bench_dir)
    except StoreError as exc:
        raise click.ClickException(str(exc)) from None
    finally:
        store.close()
    if as_json:
        click.echo(json.dumps(data, indent=2))
        return
    for line in lab_progress.format_lines(data):
        click.echo(line)


@click.command()
@click.argument("record_path", metavar="[RECORD]", required=False, type=click.Path(dir_okay=False, path_type=Path))
@click.option("--bench", "bench_dir", type=click.Path(file_okay=False, path_type=Path), default=None,
              help=BENCH_HELP)
@click.option("--logdir", type=click.Path(file_okay=False, path_type=Path), default=None,
              help="Where to lay the traces out [default: a new temporary folder].")
@click.option("--port", type=click.IntRange(1, 65535), default=6006, show_default=True, help="XProf's port.")
def xprof(record_path: Path | None, bench_dir: Path | None, logdir: Path | None, port: int) -> None:
    """Open a lab record's traces in XProf: lay them out as XProf reads them
    (LOGDIR/plugins/profile/<op>-trace-<k>/host.xplane.pb, uncompressed) and print the one
    command that serves them (pip install xprof). RECORD is a record's path or its file name in
    your records folder (or --bench); without it, the newest record there. Only a trace folder
    inside the record's own folder is read, and only a few folders deep.
    """

    _bench_folder(bench_dir)
    folder = bench_dir if bench_dir is not None else records.default_dir()
    if record_path is None:
        _say_skipped(folder)
        found = [(l.record.started, l.path) for l in records.scan(folder) if l.record is not None]
        if not found:
            raise click.UsageError(f"no lab record in {folder}; name one: drill xprof RECORD")
        record_path = max(found)[1]
    record_path, record = _load_named(record_path, folder)
    where = record.trace_dir
    if not where:
        raise click.UsageError(f"{record_path}: the record kept no traces")
    root = Path(where) if Path(where).is_absolute() else Path(record_path).parent / where
    home = Path(record_path).parent.resolve()
    if home not in root.resolve().parents:
        raise click.ClickException(f"{record_path.name}: its trace folder {safeio.display_path(root)} is outside "
                                   f"its records folder {safeio.display_path(home)}; refusing to read it")

    try:  # a fresh or empty --logdir, or this record's own earlier layout; else the tool's folder, reused
        layout = xprof_logdir.lay_out(root, record_path.name, logdir)
    except xprof_logdir.XprofFolderError as exc:
        raise click.ClickException(str(exc)) from None
    except (OSError, ValueError) as exc:
        raise click.ClickException(f"cannot lay out the traces: {safeio.display_path(root)}: {exc}") from None
    if not layout.files:
        raise click.UsageError(f"no traces under {safeio.display_path(root)}")
    for line in layout.lines(record_path.name):
        click.echo(line)
    click.echo(profile.xprof_command(layout.logdir, port))

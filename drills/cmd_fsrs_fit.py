"""`drill fsrs-fit`: fit FSRS's parameters to your reviews; keep them only when they predict better."""

from __future__ import annotations

import json
from typing import Any

import click

from drills import fsrs_fit as fitting  # the optimizer: this module loads only when `drill fsrs-fit` runs
from drills.cmd_quiz import STORE_HELP, open_store
from drills.store.files import StoreError


@click.command("fsrs-fit")
@click.option("--store", "store_path", type=click.Path(dir_okay=False), default=None, help=STORE_HELP)
@click.option("--json", "as_json", is_flag=True,
              help="Print one JSON object: reviews, default and fitted {log_loss, rmse_bins} (fitted null when no "
                   "fit), kept, parameters (those the quiz schedules with now).")
def fsrs_fit(store_path: str | None, as_json: bool) -> None:
    """Fit FSRS's parameters to your reviews (the quiz's and Anki's) with fsrs-rs, Anki's own optimizer.

    Each skill's reviews are split in time order: the part before the moment that leaves 80% of all
    reviews before it trains, the rest is held out. On the held-out reviews it prints the log loss
    and RMSE(bins) of FSRS's default parameters and of the fitted ones, and keeps the fitted ones only
    when their log loss is lower: from then on the quiz schedules with them (drill stats says so).
    With too few reviews it says how many more it needs and keeps what is in use."""
    store = open_store(store_path)
    try:
        result = fitting.fit(fitting.histories_of(store.scheduled_history()))
        if result.kept and result.fitted is not None and result.default is not None:
            store.keep_fsrs_parameters(list(result.fitted_parameters or ()), result.reviews,
                                       result.fitted.log_loss, result.default.log_loss)
        in_use = store.fsrs_parameters()
    except StoreError as exc:
        raise click.ClickException(str(exc)) from None
    finally:
        store.close()
    parameters = in_use["parameters"] if in_use else list(fitting.DEFAULT_PARAMETERS)
    data: dict[str, Any] = {
        "reviews": result.reviews,
        "default": result.default.to_dict() if result.default else {"log_loss": None, "rmse_bins": None},
        "fitted": result.fitted.to_dict() if result.fitted else None,
        "kept": result.kept, "parameters": parameters, "held_out": result.held_out,
        "more_needed": result.more_needed}
    if as_json:
        click.echo(json.dumps(data))
        return
    for line in lines(result, in_use):
        click.echo(line)


def lines(result: Any, in_use: dict[str, Any] | None) -> list[str]:
    """What the fit found, for a terminal."""
    out = [f"{result.reviews} review{'s' if result.reviews != 1 else ''}; {result.held_out} held out "
           "(each skill's reviews after the moment that leaves 80% of all before it)"]
    if result.default is not None:
        out.append(f"  default parameters: log loss {result.default.log_loss:.4f}, "
                   f"RMSE(bins) {result.default.rmse_bins:.4f}")
    if result.fitted is not None:
        out.append(f"  fitted parameters:  log loss {result.fitted.log_loss:.4f}, "
                   f"RMSE(bins) {result.fitted.rmse_bins:.4f}")
    if result.more_needed:
        out.append(f"Too few reviews to fit: the optimizer needs {result.more_needed} more review"
                   f"{'s' if result.more_needed != 1 else ''} a day or more after the one before (it has "
                   f"{result.training_items}). Nothing was changed.")
    elif result.kept:
        out.append("Kept: the fitted parameters predict your held-out reviews better; the quiz schedules with them "
                   "from now on.")
    else:
        out.append("Not kept: the fitted parameters do not predict your held-out reviews better than the "
                   + ("defaults" if result.default is not None else "defaults (no held-out review to score)")
                   + "; nothing was changed.")
    out.append("In use: " + (f"parameters fitted to {in_use['reviews']} reviews, kept {in_use['kept_at'][:16]} UTC"
                             if in_use else "FSRS's default parameters"))
    return out

"""`drill anki-import`: the reviews made in Anki into the review store (``drills.anki_import``)."""

from __future__ import annotations

import json
from pathlib import Path

import click

from drills import anki_import as reader
from drills.cmd_quiz import STORE_HELP, open_store
from drills.store.files import StoreError


@click.command("anki-import")
@click.argument("collection", type=click.Path(exists=True, path_type=Path))
@click.option("--store", "store_path", type=click.Path(dir_okay=False), default=None, help=STORE_HELP)
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object: read, imported, already, ignored.")
def anki_import(collection: Path, store_path: str | None, as_json: bool) -> None:
    """Import your Anki reviews of this course's deck: COLLECTION is a profile's collection.anki2
    (or the profile folder) or a .colpkg export. It is read from a private copy, never written,
    also while Anki runs. Ease 2-4 counts as right, 1 as a lapse, at Anki's time; importing twice
    adds nothing (Anki's review ids). They count for streaks, drill stats, mastery and drill fsrs-fit."""
    store = open_store(store_path)
    try:
        result = reader.import_collection(collection, store)
    except (reader.AnkiImportError, StoreError) as exc:
        raise click.ClickException(str(exc)) from None
    finally:
        store.close()
    if as_json:
        click.echo(json.dumps(result.to_dict()))
        return
    click.echo(result.line(str(store.path)))

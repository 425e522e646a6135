"""`drill site`: build the Stage 0 page (static, offline), optionally serve it on 127.0.0.1."""

from __future__ import annotations

import os
import time
from pathlib import Path

import click
from drills.site.serve import make_server
from labs.records import folder as lab_records
from drills.site.build import build, SiteError
import labs


def course_bench() -> Path | None:
    """The course's published records: the ``bench/`` folder beside the installed packages (a clone,
    or an editable install of one), wherever ``drill site`` runs from; None when this installation
    has none (a wheel installed without the repository)."""

    folder = Path(labs.__file__).resolve().parent.parent / "bench"
    return folder if folder.is_dir() else None


def _shown(folder: Path) -> Path:
    """``folder`` relative to the working directory when inside it (``bench``), else as it is."""
    try:
        return folder.resolve().relative_to(Path(os.getcwd()).resolve())
    except (ValueError, OSError):
        return folder


@click.command(name="site")
@click.option("-o", "--out", "out_dir", type=click.Path(path_type=Path), default=Path("site-out"), show_default=True,
              help="Folder to write index.html, site.js and site.css into (created if missing, but never inside "
                   "a folder with no write bit: read-only, for root too).")
@click.option("--bench", "bench_dir", type=click.Path(path_type=Path), default=None,
              help="Folder of the course's published lab records (lab-*.json) the gate section is judged from "
                   "[default: the course's bench/, found beside the installed package, from any folder].")
@click.option("--records", "records_dir", type=click.Path(path_type=Path), default=None,
              help="Your own records folder: ticks the mastery header's lab and gate items and shows your "
                   "calibration (without it, nothing on the page counts as yours but this browser's ticks).")
@click.option("--repo-url", default=None,
              help="The repository's address for the Open-in-Colab link, https://github.com/OWNER/REPO "
                   "[default: Repository under [project.urls] in pyproject.toml].")
@click.option("--serve", is_flag=True, help="After building, serve the folder on http://127.0.0.1:PORT/ until Ctrl-C.")
@click.option("--port", type=click.IntRange(0, 65535), default=8000, show_default=True,
              help="Port for --serve (0: any free port).")
def site(out_dir: Path, bench_dir: Path, records_dir: Path | None, repo_url: str | None, serve: bool, port: int) -> None:
    """Build the Stage 0 course page: playground, memory hierarchy, lab, Can you, gate.

    The page works from file:// with no network: open OUT/index.html. It is built
    from the chip catalogue, labs/stage-0/chapter.md, the notebook's site:show
    cells and the records in --bench; rebuild after any of them changes.
    """

    source = click.get_current_context().get_parameter_source("port")
    if not serve and source is not None and source.name == "COMMANDLINE":
        raise click.UsageError("--port applies to --serve only")
    if bench_dir is None:
        found = course_bench()
        if found is None:
            raise click.UsageError("--bench: this installation has no copy of the course's published records "
                                   "(bench/ beside the package); give --bench DIR, the bench/ folder of a clone "
                                   "of the course repository")
        bench_dir = _shown(found)
    for flag, folder in (("--bench", bench_dir), ("--records", records_dir)):
        if folder is not None and not folder.is_dir():
            raise click.UsageError(f"{flag} '{folder}' " + ("is not a directory" if folder.exists() else "does not exist"))
    started = time.perf_counter()
    try:
        result = build(out_dir, bench_dir, records_dir, repo_url)
    except SiteError as exc:
        raise click.UsageError(str(exc)) from None
    elapsed_s = time.perf_counter() - started
    if records_dir is not None:  # the page leaves an unreadable record of yours out: say which, and why

        for loaded in lab_records.scan(records_dir):
            if loaded.record is None:
                click.echo(lab_records.skipped_line(loaded.path, loaded.error), err=True)
    click.echo(f"wrote {result.out_dir / 'index.html'} (+ site.js, site.css) in {elapsed_s:.2f} s; "
               f"GATE 00 from {bench_dir}: {result.gate_status}")
    if serve:
        _serve(out_dir, port)


def _serve(out_dir: Path, port: int) -> None:
    try:
        server = make_server(out_dir, port)
    except OSError as exc:
        raise click.UsageError(f"cannot serve on 127.0.0.1:{port}: {exc.strerror or exc}") from None
    click.echo(f"serving http://127.0.0.1:{server.server_address[1]}/ (Ctrl-C to stop)")
    try:
        server.serve_forever()
    finally:
        server.server_close()

"""`drill site`: build the Stage 0 page (static, offline), optionally serve it on 127.0.0.1."""

from __future__ import annotations

import time
from pathlib import Path

import click


@click.command(name="site")
@click.option("-o", "--out", "out_dir", type=click.Path(path_type=Path), default=Path("site-out"), show_default=True,
              help="Folder to write index.html, site.js and site.css into (created if missing).")
@click.option("--bench", "bench_dir", type=click.Path(path_type=Path), default=Path("bench"), show_default=True,
              help="Folder of lab records (lab-*.json) the gate is judged from.")
@click.option("--serve", is_flag=True, help="After building, serve the folder on http://127.0.0.1:PORT/ until Ctrl-C.")
@click.option("--port", type=click.IntRange(0, 65535), default=8000, show_default=True,
              help="Port for --serve (0: any free port).")
def site(out_dir: Path, bench_dir: Path, serve: bool, port: int) -> None:
    """Build the Stage 0 course page: playground, memory hierarchy, lab, Can you, gate.

    The page works from file:// with no network: open OUT/index.html. It is built
    from the chip catalogue, labs/stage-0/chapter.md, the notebook's site:show
    cells and the records in --bench; rebuild after any of them changes.
    """
    from drills.site.build import SiteError, build

    source = click.get_current_context().get_parameter_source("port")
    if not serve and source is not None and source.name == "COMMANDLINE":
        raise click.UsageError("--port applies to --serve only")
    if bench_dir.exists() and not bench_dir.is_dir():
        raise click.UsageError(f"--bench '{bench_dir}' is not a directory")
    started = time.perf_counter()
    try:
        result = build(out_dir, bench_dir)
    except SiteError as exc:
        raise click.UsageError(str(exc)) from None
    elapsed_s = time.perf_counter() - started
    click.echo(f"wrote {result.out_dir / 'index.html'} (+ site.js, site.css) in {elapsed_s:.2f} s; "
               f"GATE 00 from {bench_dir}: {result.gate_status}")
    if serve:
        _serve(out_dir, port)


def _serve(out_dir: Path, port: int) -> None:
    import functools
    import http.server

    handler = functools.partial(http.server.SimpleHTTPRequestHandler, directory=str(out_dir))
    try:
        server = http.server.ThreadingHTTPServer(("127.0.0.1", port), handler)
    except OSError as exc:
        raise click.UsageError(f"cannot serve on 127.0.0.1:{port}: {exc.strerror or exc}") from None
    click.echo(f"serving http://127.0.0.1:{server.server_address[1]}/ (Ctrl-C to stop)")
    try:
        server.serve_forever()
    finally:
        server.server_close()

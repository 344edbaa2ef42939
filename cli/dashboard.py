"""`tame-wh dashboard`: a static HTML site over the whole warehouse."""

from __future__ import annotations

from pathlib import Path

import click

from cli.context import AppContext, json_option, pass_app
from cli.output import emit_json, progress
from warehouse.analysis.pages import site_data
from warehouse.html.dashboard import build_dashboard, check_site_folder


@click.command()
@click.option(
    "--out",
    required=True,
    type=click.Path(file_okay=False, path_type=Path),
    help="Folder of the site (created; rebuilt in place, only changed files rewritten).",
)
@click.option(
    "--compare",
    "compare",
    nargs=2,
    multiple=True,
    metavar="RUN_A RUN_B",
    help="Add a comparison page of two runs (paired significance, per-bin deltas); repeatable.",
)
@json_option
@pass_app
def dashboard(
    app: AppContext, out: Path, compare: tuple[tuple[str, str], ...], as_json: bool
) -> None:
    """Build a static dashboard: leaderboards, a page per run and test set, comparisons."""
    with app.reader() as con:
        check_site_folder(out)  # before the data is read
        result = build_dashboard(site_data(con, list(compare)), out, notify=progress)
    if as_json:
        emit_json(result.to_dict())
        return
    click.echo(
        f"dashboard {out}: {result.written} files written, {result.unchanged} unchanged, "
        f"{result.removed} removed ({result.runs} runs, {result.test_sets} test sets, "
        f"{result.comparisons} comparisons)"
    )
    click.echo(f"open {out / 'index.html'}")

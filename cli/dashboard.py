"""`tame-wh dashboard`: a static HTML site over the whole warehouse."""

from __future__ import annotations

from pathlib import Path

import click

from warehouse.cli.context import AppContext, json_option, pass_app
from warehouse.cli.output import emit_json, progress


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
    with app.open("read") as wh:
        result = wh.dashboard(out, compare=compare, notify=progress)
    if as_json:
        emit_json(result.to_dict())
        return
    click.echo(
        f"dashboard {out}: {result.written} files written, {result.unchanged} unchanged, "
        f"{result.removed} removed ({result.runs} runs, {result.test_sets} test sets, "
        f"{result.comparisons} comparisons)"
    )
    click.echo(f"open {out / 'index.html'}")

"""`tame-wh dashboard`: a static HTML site over the whole warehouse."""

from __future__ import annotations

from pathlib import Path

import click

from warehouse.cli.context import AppContext, json_option, pass_app, tag_filter_options
from warehouse.cli.output import emit_json, progress
from warehouse.frontend import RunFilter, parse_tag_filters, parse_tags


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
@tag_filter_options
@json_option
@pass_app
def dashboard(
    app: AppContext,
    out: Path,
    compare: tuple[tuple[str, str], ...],
    tags: tuple[str, ...],
    exclude_tags: tuple[str, ...],
    as_json: bool,
) -> None:
    """Build a static dashboard: leaderboards, a page per run and test set, comparisons."""
    runs = RunFilter(parse_tags(tags), tuple(parse_tag_filters(exclude_tags)))
    with app.open("read") as wh:
        result = wh.dashboard(out, compare=compare, notify=progress, runs=runs)
    if as_json:
        emit_json(result.to_dict())
        return
    click.echo(
        f"dashboard {out}: {result.written} files written, {result.unchanged} unchanged, "
        f"{result.removed} removed ({result.runs} runs, {result.test_sets} test sets, "
        f"{result.comparisons} comparisons)"
    )
    click.echo(f"open {out / 'index.html'}")

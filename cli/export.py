"""`tame-wh export`: stored runs as records other tools read (docs/cli.md)."""

from __future__ import annotations

import sys

import click

from warehouse.cli.context import AppContext, pass_app
from warehouse.cli.output import emit_json, say
from warehouse.frontend import EXPORT_FORMATS


@click.command("export")
@click.argument("runs", nargs=-1)
@click.option(
    "--testset",
    default=None,
    help="Every run of this test set; with RUNS, the runs of those models on it.",
)
@click.option(
    "--format",
    "fmt",
    type=click.Choice(EXPORT_FORMATS),
    default="jsonl",
    show_default=True,
    help="jsonl: one JSON object per record; parquet: a Parquet file (needs --out); tsv: a "
    "header, then one line per record (tabs, newlines and backslashes escaped); lm-eval: "
    "lm-evaluation-harness sample logs, one per run, in the folder --out.",
)
@click.option("--out", "out", default=None, metavar="PATH", help="Write here (default: stdout).")
@click.option("--json", "as_json", is_flag=True, help="With --out: print what was written as JSON.")
@pass_app
def export(
    app: AppContext,
    runs: tuple[str, ...],
    testset: str | None,
    fmt: str,
    out: str | None,
    as_json: bool,
) -> None:
    """Write stored runs as records: one per run and segment, with its text, per-segment
    scores, ingested per-entry metrics and exposure."""
    with app.open("read") as wh:
        result, data = wh.export(runs, testset=testset, format=fmt, path=out)
    if data is not None:
        sys.stdout.buffer.write(data)
        sys.stdout.flush()
        return
    if as_json:
        emit_json(result.to_dict())
        return
    say(f"exported {result.records:,} records of {len(result.run_ids)} run(s) to {result.path}")
    for file in result.files or []:
        say(f"  {file}")

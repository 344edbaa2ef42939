"""`tame-wh runs …`: list evaluated runs."""

from __future__ import annotations

import click

from cli.context import AppContext, json_option, pass_app
from cli.output import emit_json, print_table
from warehouse.analysis.runs import list_runs


@click.group()
def runs() -> None:
    """Evaluated runs."""


@runs.command("list")
@click.option("--testset", default=None, help="Only runs on this test set.")
@click.option("--model-slug", default=None, help="Only runs of this model.")
@json_option
@pass_app
def runs_list(app: AppContext, testset: str | None, model_slug: str | None, as_json: bool) -> None:
    """List runs with corpus BLEU, chrF++, TER and exact match."""
    with app.warehouse() as con:
        items = list_runs(con, testset=testset, model_slug=model_slug)
    if as_json:
        emit_json([r.to_dict() for r in items])
        return
    if not items:
        click.echo("no runs ingested yet")
        return
    columns = [
        "run",
        "model",
        "condition",
        "test set",
        "entries",
        "errors",
        "BLEU",
        "chrF++",
        "TER",
        "exact",
        "created (UTC)",
    ]
    rows = [
        [
            r.run_id,
            r.model_slug,
            r.condition,
            r.test_set,
            r.n_entries,
            r.n_errors,
            round(r.bleu, 2),
            round(r.chrf, 2),
            round(r.ter, 2),
            None if r.exact_match_rate is None else round(r.exact_match_rate, 3),
            r.created_at,
        ]
        for r in items
    ]
    print_table(None, columns, rows)

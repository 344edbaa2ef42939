"""`tame-wh demo`: load the bundled example into a warehouse and say what happened."""

from __future__ import annotations

import click

from cli.context import AppContext, json_option, pass_app
from cli.output import emit_json, say
from warehouse.demo import run_demo


@click.command()
@json_option
@pass_app
def demo(app: AppContext, as_json: bool) -> None:
    """Create (or reuse) a warehouse and load the bundled English-Spanish example and runs."""
    result = run_demo(app.db, lock_timeout=app.lock_timeout, notify=say)
    if as_json:
        emit_json(result.to_dict())
        return
    where = "created" if result.schema.created else "using"
    click.echo(f"{where} warehouse {result.db} (schema version {result.schema.after})")
    for step in result.corpora:
        info = step.corpus
        label = "training corpus" if info.role == "train" else "test set"
        state = {"added": "added", "replaced": "replaced", "unchanged": "already loaded"}[
            step.action
        ]
        click.echo(
            f"  {label:<15} {info.name:<11} {info.n_segments:>4} segments  "
            f"{info.src_lang}->{info.tgt_lang}  id {info.corpus_id}  ({state})"
        )
    for run in result.runs:
        state = {"added": "ingested", "replaced": "replaced", "unchanged": "already ingested"}[
            run.action
        ]
        label = f"{run.model_slug}/{run.condition}" if run.condition else run.model_slug
        s = run.scores
        click.echo(
            f"  run {run.run_id}  {label:<21} BLEU {s['bleu']:6.2f}  chrF++ {s['chrf']:6.2f}  "
            f"TER {s['ter']:6.2f}  ({state})"
        )
    click.echo("next: tame-wh runs list · tame-wh testset show demo-test · tame-wh doctor")

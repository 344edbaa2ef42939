"""`tame-wh demo`: load the bundled example into a warehouse and say what happened."""

from __future__ import annotations

import click

from warehouse import Warehouse
from warehouse.cli.context import AppContext, json_option, pass_app
from warehouse.cli.leaderboard import print_leaderboard
from warehouse.cli.output import emit_json, say
from warehouse.cli.report import print_report


@click.command()
@json_option
@pass_app
def demo(app: AppContext, as_json: bool) -> None:
    """Create (or reuse) a warehouse and load the bundled English-Spanish example and runs."""
    result = Warehouse.demo(app.db, lock_timeout=app.lock_timeout, notify=say)
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
    audit = result.audit
    if audit is not None:
        state = "already audited" if audit.action == "unchanged" else "audited"
        leak = audit.pair_leak.get("0.85")
        click.echo(
            f"  audit {audit.audit_id}  demo-test against demo-train, exact "
            f"({state}); PairLeak@0.85 {leak:.1%}"
        )
    with app.open("read") as wh:
        rows = list(wh.leaderboard())
        doc = wh.report(rows[0]["run_id"])
    click.echo("\nleaderboard")
    print_leaderboard(rows)
    click.echo(f"\nreport of the top run ({rows[0]['run_id']})")
    print_report(doc)
    click.echo(
        '\nnext: tame-wh leaderboard · tame-wh report RUN · tame-wh query "FROM leaderboard"'
    )

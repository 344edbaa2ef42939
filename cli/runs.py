"""`tame-wh runs …`: list, show, tag and delete evaluated runs."""

from __future__ import annotations

import click

from warehouse import RunSummary
from warehouse.cli.context import AppContext, confirm, json_option, pass_app
from warehouse.cli.output import emit_json, print_fields, print_table, say
from warehouse.frontend import format_score, parse_tags

_RUN_HELP = "A run id, a unique id prefix, or a model slug (MODEL or MODEL/CONDITION)."


@click.group()
def runs() -> None:
    """Evaluated runs: list, show, tag, delete."""


def _print_runs(items: list[RunSummary]) -> None:
    """The runs table for people."""
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
        "tags",
    ]
    rows = [
        [
            r.run_id,
            r.model_slug,
            r.condition,
            r.test_set,
            r.n_entries,
            r.n_errors,
            format_score("bleu", r.bleu),
            format_score("chrf_plus_plus", r.chrf),
            format_score("ter", r.ter),
            format_score("exact_match_rate", r.exact_match_rate),
            r.created_at,
            " ".join(f"{k}={v}" for k, v in r.tags.items()),
        ]
        for r in items
    ]
    print_table(None, columns, rows, right=range(4, 10), keep=(0,))


@runs.command("list")
@click.option("--testset", default=None, help="Only runs on this test set.")
@click.option("--model-slug", default=None, help="Only runs of this model.")
@click.option(
    "--tag", "tags", multiple=True, metavar="KEY=VALUE", help="Only runs with this tag (repeat)."
)
@json_option
@pass_app
def runs_list(
    app: AppContext,
    testset: str | None,
    model_slug: str | None,
    tags: tuple[str, ...],
    as_json: bool,
) -> None:
    """List runs with corpus BLEU, chrF++, TER, exact match and tags."""
    wanted = parse_tags(tags)
    with app.open("read") as wh:
        items = wh.runs(testset=testset, model_slug=model_slug, tags=wanted)
    if as_json:
        emit_json([r.to_dict() for r in items])
        return
    if not items:
        click.echo("no runs match" if (testset or model_slug or wanted) else "no runs ingested yet")
        return
    _print_runs(items)


@runs.command("show")
@click.argument("run")
@click.option("--testset", default=None, help="The run of RUN (a model slug) on this test set.")
@json_option
@pass_app
def runs_show(app: AppContext, run: str, testset: str | None, as_json: bool) -> None:
    """Show one run: identity, counts, scores, tags, CI metadata, warnings, signatures.

    RUN is a run id, a unique id prefix, or a model slug (MODEL or MODEL/CONDITION) that names
    exactly one run (on --testset when given).
    """
    with app.open("read") as wh:
        doc = wh.show_run(run, testset=testset)
    if as_json:
        emit_json(doc)
        return
    skip = {"tags", "warnings", "signatures", "ci"}
    # Scores in their metrics' formats (--json keeps full precision).
    print_fields([
        (k, format_score(k, v) if isinstance(v, float) else v)
        for k, v in doc.items()
        if k not in skip
    ])  # fmt: skip
    for key, value in doc["tags"].items():
        click.echo(f"tag {key}={value}")
    ci = doc.get("ci") or {}
    for key, value in ci.items():
        if value is not None:
            click.echo(f"ci {key}: {value}")
    for name, signature in doc["signatures"].items():
        click.echo(f"{name} signature: {signature}")
    for warning in doc["warnings"]:
        say(f"warning: {warning}")


@runs.command("tag")
@click.argument("run")
@click.argument("tags", nargs=-1, metavar="KEY=VALUE...")
@click.option("--remove", multiple=True, metavar="KEY", help="Remove this tag (repeat).")
@json_option
@pass_app
def runs_tag(
    app: AppContext, run: str, tags: tuple[str, ...], remove: tuple[str, ...], as_json: bool
) -> None:
    """Set tags (KEY=VALUE, replacing a key's old value) or remove them with --remove.

    Tags are stored in the `run_tags` table, shown by `runs list` and the leaderboard, and
    filter both with --tag KEY=VALUE.
    """
    if not tags and not remove:
        raise click.UsageError("give KEY=VALUE tags to set or --remove KEY")
    with app.open("write") as wh:
        run_id, now = wh.tag_run(run, parse_tags(tags), remove)
    if as_json:
        emit_json({"run_id": run_id, "tags": now})
        return
    shown = " ".join(f"{k}={v}" for k, v in now.items()) or "(none)"
    click.echo(f"run {run_id} tags: {shown}")


@runs.command("delete")
@click.argument("runs_", nargs=-1, required=True, metavar="RUN...")
@click.option("--dry-run", is_flag=True, help="Say what would be deleted; change nothing.")
@click.option(
    "--yes", is_flag=True, help="On a lake, delete without a prompt (the team's shared history)."
)
@json_option
@pass_app
def runs_delete(
    app: AppContext, runs_: tuple[str, ...], dry_run: bool, yes: bool, as_json: bool
) -> None:
    """Delete runs and everything stored for them (hypotheses, statistics, metrics, intervals,
    sums, tags, warnings), in one transaction; on a lake, after a confirmation."""
    if app.is_lake and not dry_run:
        with app.open("write") as wh:
            plan = wh.delete_runs(runs_, dry_run=True)
        what = f"delete {len(plan.run_ids)} run(s) from the shared lake: {', '.join(plan.run_ids)}"
        if not as_json:
            say(what)
        confirm(what, yes, "delete them?")
    with app.open("write") as wh:
        deletion = wh.delete_runs(runs_, dry_run=dry_run)
    if as_json:
        emit_json(deletion.to_dict())
        return
    verb = "would delete" if dry_run else "deleted"
    rows = ", ".join(f"{n} {table}" for table, n in deletion.rows.items() if n)
    click.echo(f"{verb} {len(deletion.run_ids)} run(s): {', '.join(deletion.run_ids)} ({rows})")

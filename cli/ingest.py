"""`tame-wh ingest`: store evaluated runs (called from CI after every evaluation)."""

from __future__ import annotations

from pathlib import Path

import click

from cli.context import AppContext, bootstrap_options, json_option, pass_app
from cli.output import emit_json, say, status
from warehouse.ingest.runs import (
    IngestResult,
    PreparedRun,
    prepare_from_document,
    prepare_from_files,
    write_runs,
)
from warehouse.stats.resample import bootstrap_settings

_file = click.Path(path_type=Path, dir_okay=False)


def _describe(result: IngestResult) -> str:
    """One line per run for people."""
    s = result.scores
    em = "n/a" if s["exact_match_rate"] is None else f"{s['exact_match_rate']:.3f}"
    verb = {"added": "ingested", "replaced": "replaced", "unchanged": "already ingested"}[
        result.action
    ]
    condition = f"/{result.condition}" if result.condition else ""
    made = " (new test set)" if result.test_set_created else ""
    return (
        f"{verb} run {result.run_id}  {result.model_slug}{condition} on {result.test_set}{made}: "
        f"{result.n_entries} entries, {result.n_errors} errors · BLEU {s['bleu']:.2f} · "
        f"chrF++ {s['chrf']:.2f} · TER {s['ter']:.2f} · exact match {em}"
    )


@click.command()
@click.argument("reports", nargs=-1, type=_file)
@click.option("--testset", default=None, help="Registered test set the --hyp file answers.")
@click.option("--hyp", type=_file, default=None, help="Hypotheses, one per test segment.")
@click.option("--model-slug", default=None, help="Model name (else taken from the run card).")
@click.option("--condition", default=None, help="Condition label, e.g. zero-shot.")
@click.option(
    "--run-card",
    type=_file,
    default=None,
    help="Run card JSON with tokens, cost, latency, dataset, fingerprint, scores.",
)
@click.option("--replace", is_flag=True, help="Overwrite a run that was ingested before.")
@click.option(
    "--lock-timeout",
    type=click.FloatRange(min=0),
    default=None,
    help="Seconds to wait while another process writes the warehouse (default: the global one).",
)
@click.option("--no-ci", is_flag=True, help="Skip the bootstrap confidence intervals.")
@bootstrap_options(
    "--n-bootstrap-ci",
    "Bootstrap resamples for the confidence intervals (default: settings bootstrap.n, 1000).",
    "--ci-alpha",
    "Intervals cover 1 - alpha (default: settings bootstrap.alpha, 0.05).",
    "Bootstrap seed, stored with the intervals (default: settings bootstrap.seed, 12345).",
)
@json_option
@pass_app
def ingest(
    app: AppContext,
    reports: tuple[Path, ...],
    testset: str | None,
    hyp: Path | None,
    model_slug: str | None,
    condition: str | None,
    run_card: Path | None,
    replace: bool,
    lock_timeout: float | None,
    no_ci: bool,
    n_bootstrap_ci: int | None,
    ci_alpha: float | None,
    seed: int | None,
    as_json: bool,
) -> None:
    """Ingest runs: plain files (--testset --hyp) or test-report / run-card JSON files.

    Each JSON file given as an argument is its own run; its entries carry source, expected and
    predicted text, and its test set is created on the fly (shared by content). Everything is
    parsed and scored before the warehouse is opened; all runs are written in one transaction.
    Bootstrap confidence intervals (percentile method) are computed and stored unless --no-ci.
    """
    if lock_timeout is not None:
        app.lock_timeout = lock_timeout
    if reports and (testset or hyp or run_card):
        raise click.UsageError("give JSON reports, or --testset/--hyp/--run-card, not both")
    if not reports and not (testset and hyp):
        raise click.UsageError("give JSON reports, or both --testset and --hyp")
    ci = None
    if not no_ci:
        # Defaults come from the warehouse's settings, when it exists (read-only, released
        # again before scoring).
        with app.existing_warehouse() as con:
            ci = bootstrap_settings(con, n_bootstrap_ci, ci_alpha, seed)
    prepared: list[PreparedRun] = []
    with status("scoring"):
        if reports:
            for path in reports:
                prepared.append(
                    prepare_from_document(path, model_slug=model_slug, condition=condition, ci=ci)
                )
        else:
            assert testset is not None and hyp is not None
            prepared.append(
                prepare_from_files(
                    app.db,
                    testset=testset,
                    hyp_path=hyp,
                    model_slug=model_slug,
                    condition=condition,
                    run_card_path=run_card,
                    lock_timeout=app.lock_timeout,
                    ci=ci,
                )
            )
    with app.warehouse() as con, status("writing"):
        results = write_runs(con, prepared, replace=replace, notify=say)
    if as_json:
        emit_json([r.to_dict() for r in results])
        return
    for result in results:
        click.echo(_describe(result))
        for warning in result.warnings:
            say(f"warning: {result.run_id}: {warning}")

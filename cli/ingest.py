"""`tame-wh ingest`: store evaluated runs (called from CI after every evaluation)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import click

from cli.context import AppContext, bootstrap_options, json_option, pass_app
from cli.output import emit_json, say, status
from warehouse import IngestResult, Warehouse
from warehouse.frontend import TOKENIZERS, IngestRequest, MetricOptions

_file = click.Path(path_type=Path, dir_okay=False)


def _describe(result: IngestResult) -> str:
    """One line per run for people."""
    s = result.scores
    em = "n/a" if s["exact_match_rate"] is None else f"{s['exact_match_rate']:.3f}"
    ter = "n/a" if s["ter"] is None else f"{s['ter']:.2f}"
    verb = {"added": "ingested", "replaced": "replaced", "unchanged": "already ingested"}[
        result.action
    ]
    condition = f"/{result.condition}" if result.condition else ""
    made = " (new test set)" if result.test_set_created else ""
    return (
        f"{verb} run {result.run_id}  {result.model_slug}{condition} on {result.test_set}{made}: "
        f"{result.n_entries} entries, {result.n_errors} errors · BLEU {s['bleu']:.2f} · "
        f"chrF++ {s['chrf']:.2f} · TER {ter} · exact match {em}"
    )


def _metric_options(fn: Callable[..., Any]) -> Callable[..., Any]:
    """--tokenize, --lowercase, --chrf-word-order, --no-ter (sacrebleu's metric options)."""
    options = [
        click.option(
            "--tokenize",
            type=click.Choice(TOKENIZERS),
            default="13a",
            show_default=True,
            help="BLEU tokenizer (ja-mecab/ko-mecab need sacrebleu's [ja]/[ko] extras).",
        ),
        click.option("--lowercase", is_flag=True, help="Lowercase text for BLEU and chrF."),
        click.option(
            "--chrf-word-order",
            type=click.Choice(["0", "2"]),
            default="2",
            show_default=True,
            help="chrF word n-gram order: 2 = chrF++, 0 = chrF.",
        ),
        click.option(
            "--no-ter", is_flag=True, help="Skip TER (its statistics and scores are NULL)."
        ),
    ]
    for option in reversed(options):
        fn = option(fn)
    return fn


@click.command()
@click.argument("reports", nargs=-1, type=_file)
@click.option(
    "--testset",
    default=None,
    help="Registered test set: the one --hyp answers, or the one JSON reports must match.",
)
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
@_metric_options
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
    tokenize: str,
    lowercase: bool,
    chrf_word_order: str,
    no_ter: bool,
    as_json: bool,
) -> None:
    """Ingest runs: plain files (--testset --hyp) or test-report / run-card JSON files.

    Each JSON file given as an argument is its own run; its entries carry source, expected and
    predicted text, and its test set is created on the fly (shared by content) — or, with
    --testset, the entries must match that registered test set (aligned by entry id, else by
    source text). A run already stored is recognised before anything is scored. Everything else
    is scored before the warehouse is opened for writing; all runs are written in one
    transaction. Bootstrap confidence intervals (percentile method) are stored unless --no-ci.
    """
    if lock_timeout is not None:
        app.lock_timeout = lock_timeout
    request = IngestRequest(
        reports=reports,
        testset=testset,
        hyp=hyp,
        model_slug=model_slug,
        condition=condition,
        run_card=run_card,
        options=MetricOptions(tokenize, lowercase, int(chrf_word_order), not no_ter),
        replace=replace,
        intervals=not no_ci,
        n_bootstrap=n_bootstrap_ci,
        alpha=ci_alpha,
        seed=seed,
    )
    results = Warehouse.ingest_batch(
        app.db, request, lock_timeout=app.lock_timeout, notify=say, progress=status
    )
    if as_json:
        emit_json([r.to_dict() for r in results])
        return
    for result in results:
        click.echo(_describe(result))
        for warning in result.warnings:
            say(f"warning: {result.run_id}: {warning}")

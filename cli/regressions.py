"""`tame-wh regressions`: significant drops from each run's predecessor (a CI check)."""

from __future__ import annotations

import click

from cli.context import AppContext, bootstrap_options, json_option, pass_app
from cli.output import ALPHA, emit_json, print_table, say
from warehouse import UsageError


def _num(value: float) -> str:
    """Two decimals for 0-100 scores, four for rates and other metrics."""
    return f"{value:.2f}" if abs(value) > 1.5 else f"{value:.4f}"


@click.command("regressions")
@click.option("--testset", default=None, help="Only runs on this test set.")
@click.option("--model-slug", default=None, help="Only runs of this model.")
@click.option(
    "--latest", is_flag=True, help="Only check each model's newest run against the one before."
)
@click.option(
    "--fail-on-regression", is_flag=True, help="Exit with status 1 when a regression is found."
)
@bootstrap_options(
    "--n-bootstrap",
    "Bootstrap resamples (default: settings bootstrap.n, 1000).",
    "--alpha",
    "Significance level (default: settings bootstrap.alpha, 0.05).",
    "Bootstrap seed (default: settings bootstrap.seed, 12345).",
)
@json_option
@pass_app
def regressions(
    app: AppContext,
    testset: str | None,
    model_slug: str | None,
    latest: bool,
    fail_on_regression: bool,
    n_bootstrap: int | None,
    alpha: float | None,
    seed: int | None,
    as_json: bool,
) -> None:
    """List significant drops of each run against the previous run of the same model.

    Runs of one model, condition and test set are ordered by creation time; each is tested
    against its predecessor with the paired bootstrap sign test on chrF++, BLEU, exact match and
    every shared per-entry metric. Use --latest --fail-on-regression after ingest in CI.
    """
    with app.open("read") as wh:
        report = wh.regressions(
            testset=testset,
            model_slug=model_slug,
            latest=latest,
            n_bootstrap=n_bootstrap,
            alpha=alpha,
            seed=seed,
        )
    settings = report.settings
    for warning in report.warnings:
        say(f"warning: {warning}")
    if as_json:
        emit_json(report.to_dict())
    elif report.nothing_checked:
        click.echo(f"no comparisons: {report.nothing_checked}")
    elif not report.regressions:
        click.echo(
            f"no significant regressions in {len(report.checked)} comparisons "
            f"(n = {settings.n_bootstrap}, {ALPHA} = {settings.alpha:g}, seed = {settings.seed})"
        )
    else:
        print_table(
            f"significant drops (paired bootstrap sign test · n = {settings.n_bootstrap} · "
            f"{ALPHA} = {settings.alpha:g} · seed = {settings.seed})",
            [
                "model",
                "condition",
                "test set",
                "run",
                "previous",
                "metric",
                "before",
                "now",
                "Δ",
                "p-value",
            ],
            [
                [
                    r.step.model_slug,
                    r.step.condition,
                    r.step.test_set,
                    r.step.run_id,
                    r.step.previous_run_id,
                    r.result.metric_name,
                    _num(r.result.system_b_score),
                    _num(r.result.system_a_score),
                    _num(r.result.delta),
                    f"{r.result.p_value:.4f}",
                ]
                for r in report.regressions
            ],
            range(6, 10),
        )
    if report.undetectable and not as_json:
        say(
            f"note: {len(report.undetectable)} drop(s) were not significant and smaller than "
            "the minimum detectable difference: the test set cannot tell differences this small "
            "apart (see `compare --significance`; more segments would)"
        )
    if fail_on_regression and report.regressions:
        click.get_current_context().exit(1)
    if fail_on_regression and report.nothing_checked:
        # A gate that compared nothing must not pass silently.
        raise UsageError(f"--fail-on-regression made no comparison: {report.nothing_checked}")

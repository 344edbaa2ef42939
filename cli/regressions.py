"""`tame-wh regressions`: significant drops from each run's predecessor, or the gate of one run
against a pinned baseline (a CI check)."""

from __future__ import annotations

import click

from warehouse import RegressionReport, UsageError
from warehouse.cli.context import (
    AppContext,
    bootstrap_options,
    chosen_format,
    format_option,
    gate_options,
    json_option,
    pass_app,
)
from warehouse.cli.output import ALPHA, emit_json, print_table, say
from warehouse.frontend import (
    DEFAULT_AGAINST,
    GATE_RULE,
    METHODS,
    format_score,
    label,
    regressions_markdown,
)


@click.command("regressions")
@click.option(
    "--run",
    "gated",
    default=None,
    metavar="RUN",
    help="The gate: judge only this run (id, prefix or model slug) against --against; "
    "exit 1 when it regressed.",
)
@click.option(
    "--against",
    default=None,
    metavar="previous|best|tag:KEY=VALUE|RUN",
    help=f"With --run: the baseline [default: {DEFAULT_AGAINST}, the run of the same model, "
    "condition and test set before it; best: the test set's highest chrF++; tag: the newest "
    "run so tagged].",
)
@click.option(
    "--require-baseline",
    is_flag=True,
    help="With --run: a run with no baseline fails (exit 2) instead of passing with a note.",
)
@click.option(
    "--method",
    type=click.Choice(METHODS),
    default="sign",
    show_default=True,
    help="The paired test (as in `compare --significance`).",
)
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
@gate_options
@format_option
@json_option
@pass_app
def regressions(
    app: AppContext,
    gated: str | None,
    against: str | None,
    require_baseline: bool,
    method: str,
    testset: str | None,
    model_slug: str | None,
    latest: bool,
    fail_on_regression: bool,
    n_bootstrap: int | None,
    alpha: float | None,
    seed: int | None,
    gate_metrics: tuple[str, ...],
    margins: tuple[str, ...],
    gate_correction: str | None,
    output_format: str,
    as_json: bool,
) -> None:
    """List significant drops of each run against the previous run of the same model, or gate
    one run against a pinned baseline.

    Runs of one model, condition and test set are ordered by creation time; each is tested
    against its predecessor with a paired test on chrF++, BLEU, TER, exact match and every
    shared per-entry metric. In CI, gate the run the job ingested: `--run RUN` (exit 0 passed,
    1 regressed, 2 usage; a run with no baseline passes with a note unless --require-baseline).
    """
    fmt = chosen_format(output_format, as_json)
    if gated is None and (
        against is not None or require_baseline or gate_metrics or margins or gate_correction
    ):
        raise UsageError(
            "--against, --require-baseline, --gate-metric, --margin and --gate-correction set "
            "up the gate; add --run RUN"
        )
    if gated is not None and (testset, model_slug, latest) != (None, None, False):
        raise UsageError(
            "--run judges one run; --testset, --model-slug and --latest choose runs to scan"
        )
    with app.open("read") as wh:
        if gated is not None:
            report = wh.gate(
                gated,
                against=against or DEFAULT_AGAINST,
                require_baseline=require_baseline,
                method=method,
                n_bootstrap=n_bootstrap,
                alpha=alpha,
                seed=seed,
                metrics=gate_metrics,
                margins=margins,
                correction=gate_correction,
            )
        else:
            report = wh.regressions(
                testset=testset,
                model_slug=model_slug,
                latest=latest,
                method=method,
                n_bootstrap=n_bootstrap,
                alpha=alpha,
                seed=seed,
            )
    for warning in report.warnings:
        say(f"warning: {warning}")
    if fmt == "json":
        emit_json(report.to_dict())
    elif fmt == "markdown":
        click.echo(regressions_markdown(report), nl=False)
    elif gated is not None:
        print_gate(report)
    else:
        _print_scan(report)
    if report.undetectable and fmt == "table":
        say(
            f"note: {len(report.undetectable)} drop(s) were not significant and smaller than "
            "the minimum detectable difference: the test set cannot tell differences this small "
            "apart (see `compare --significance`; more segments would)"
        )
    if report.within_seed_noise and fmt == "table":
        found = ", ".join(
            f"{r.step.run_id} {label(r.result.metric_name)}" for r in report.within_seed_noise
        )
        say(
            f"note: {len(report.within_seed_noise)} significant drop(s) lie within the seed noise "
            f"of the baseline's replicates ({found}): not regressions (docs/statistics.md, "
            "Replicates)"
        )
    if report.regressions and (fail_on_regression or gated is not None):
        click.get_current_context().exit(1)
    if fail_on_regression and report.nothing_checked and gated is None:
        # A gate that compared nothing must not pass silently.
        raise UsageError(f"--fail-on-regression made no comparison: {report.nothing_checked}")


def _header(report: RegressionReport) -> str:
    """The test and its settings."""
    s = report.settings
    title = "paired bootstrap sign test" if report.method == "sign" else report.method
    return f"{title} · n = {s.n_bootstrap} · {ALPHA} = {s.alpha:g} · seed = {s.seed}"


def print_gate(report: RegressionReport) -> None:
    """The gate's verdict and every metric tested, for people."""
    baseline = report.baseline
    assert baseline is not None
    if not report.checked:
        click.echo(
            f"gate passed: run {report.gated_run} has no baseline (--against {baseline.rule}): "
            f"{baseline.missing}"
        )
        return
    step = report.checked[0]
    verdict = "REGRESSED" if report.regressions else "passed"
    click.echo(
        f"gate {verdict}: run {step.run_id} against {step.previous_run_id} "
        f"(--against {baseline.rule}; {_gate_header(report)})"
    )
    gate = report.verdict
    assert gate is not None
    print_table(
        None,
        ["gated metric", "baseline", "run", "Δ", "margin", "one-sided interval", "level",
         "p (adjusted)", "outcome"],
        [
            [
                label(m.metric_name),
                format_score(m.metric_name, m.baseline_score),
                format_score(m.metric_name, m.candidate_score),
                _signed(m.metric_name, m.delta),
                format_score(m.metric_name, m.margin),
                m.bound_text(),
                f"{m.level:.4g}",
                f"{m.p_value:.4f} ({m.adjusted_p:.4f})",
                _outcome(report, m.metric_name, m.outcome),
            ]
            for m in gate.metrics
        ],
        range(1, 8),
        keep=(0, 3, 5, 8),
    )  # fmt: skip
    say(f"rule: {GATE_RULE}")
    gated = set(gate.policy.metrics)
    info = [r.result for r in report.tested if r.result.metric_name not in gated]
    if info:
        say(
            "not gated (information only, raw p-values): "
            + "; ".join(
                f"{label(r.metric_name)} Δ {_signed(r.metric_name, r.delta)} (p {r.p_value:.4f}"
                + (", improved" if r.winner == "A" else ", dropped" if r.winner == "B" else "")
                + ")"
                for r in info
            )
        )
    if gate.undecided:
        say(
            f"note: {', '.join(label(m) for m in gate.undecided)} stayed within Monte-Carlo "
            f"error of its level after {gate.n_bootstrap:,} resamples (the cap)"
        )


def _signed(metric: str, value: float) -> str:
    """A difference in its metric's format, with its sign."""
    text = format_score(metric, abs(value))
    return ("-" if value < 0 else "+") + text


def _gate_header(report: RegressionReport) -> str:
    """The gate's policy and resampling, in one line."""
    gate = report.verdict
    assert gate is not None
    policy = gate.policy
    return (
        f"one-sided paired bootstrap · {', '.join(label(m) for m in policy.metrics)} gated · "
        f"{policy.correction} correction · {ALPHA} = {policy.alpha:g} · "
        f"n = {gate.n_bootstrap:,} · seed = {gate.seed}"
    )


def _outcome(report: RegressionReport, metric: str, outcome: str) -> str:
    """A gated metric's outcome, with a failure inside the seed noise said as such."""
    if any(r.result.metric_name == metric for r in report.within_seed_noise):
        return "holds: the drop lies within the seed noise of the baseline's replicates"
    return outcome


def _print_scan(report: RegressionReport) -> None:
    """The significant drops of every run checked, for people."""
    settings = report.settings
    if report.nothing_checked:
        click.echo(f"no comparisons: {report.nothing_checked}")
    elif not report.regressions:
        click.echo(
            f"no significant regressions in {len(report.checked)} comparisons "
            f"(n = {settings.n_bootstrap}, {ALPHA} = {settings.alpha:g}, seed = {settings.seed})"
        )
    else:
        print_table(
            f"significant drops ({_header(report)})",
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
                    label(r.result.metric_name),
                    format_score(r.result.metric_name, r.result.system_b_score),
                    format_score(r.result.metric_name, r.result.system_a_score),
                    _signed(r.result.metric_name, r.result.delta),
                    f"{r.result.p_value:.4f}",
                ]
                for r in report.regressions
            ],
            range(6, 10),
            keep=(3, 8, 9),
        )

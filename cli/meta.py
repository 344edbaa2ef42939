"""`tame-wh meta`: which metric agrees with the human judgments, where (docs/human.md)."""

from __future__ import annotations

import click

from warehouse.cli.context import AppContext, bootstrap_options, json_option, pass_app
from warehouse.cli.output import emit_json, print_table, say
from warehouse.frontend import EXPOSURE_BINS, STATISTIC_LABELS, Agreement, label


def _number(value: float | None) -> str:
    return "—" if value is None else f"{value:.3f}"


def _spread(row: Agreement) -> str:
    """A row's interval, or acc*_eq's tie threshold (which has none)."""
    if row.low is not None:
        return f"[{row.low:.3f}, {row.high:.3f}]"
    return f"ε = {row.epsilon:.4g}" if row.epsilon is not None else ""


def _say_degenerate(rows: list[Agreement]) -> None:
    """Name the acc*_eq values no better than calling every pair a tie."""
    flagged = [r for r in rows if r.degenerate]
    if flagged:
        names = ", ".join(
            f"{label(r.metric)} (ε = {r.epsilon:.4g} calls {r.metric_ties or 0:.0%} of pairs ties)"
            for r in flagged
        )
        humans = flagged[0].human_ties or 0.0
        say(
            f"(ties) acc*_eq of {names}: no better than predicting a tie for every pair, whose "
            f"accuracy is the share of pairs humans tie ({humans:.1%}); it does not rank the "
            "metrics"
        )


@click.command()
@click.option("--testset", required=True, help="The test set whose runs were judged.")
@click.option(
    "--human",
    default=None,
    metavar="SET|SCHEME",
    help="The judgment set (name, id, or mqm/esa/da) when the test set has several.",
)
@click.option(
    "--metric",
    "metrics",
    multiple=True,
    help="Only this metric (bleu, chrf_plus_plus, chrf, ter, delta_tm_chrf_plus_plus, or a "
    "per-entry metric); repeat.",
)
@click.option("--train", default=None, help="Bins of the audit against this training corpus.")
@click.option(
    "--bin",
    "bin_name",
    type=click.Choice(EXPOSURE_BINS),
    default=None,
    help="Only this exposure bin's segments (with intervals).",
)
@bootstrap_options(
    "--n-bootstrap",
    "Resamples of the system-level intervals (default: settings bootstrap.n).",
    "--alpha",
    "Intervals cover 1 - alpha (default: settings bootstrap.alpha).",
    "Bootstrap seed (default: settings bootstrap.seed).",
)
@json_option
@pass_app
def meta(
    app: AppContext,
    testset: str,
    human: str | None,
    metrics: tuple[str, ...],
    train: str | None,
    bin_name: str | None,
    n_bootstrap: int | None,
    alpha: float | None,
    seed: int | None,
    as_json: bool,
) -> None:
    """Metric-human agreement: system and segment level, overall and per exposure bin."""
    with app.open("read") as wh:
        report = wh.meta(testset, human=human, metrics=metrics, train=train, bin_name=bin_name,
                         n_bootstrap=n_bootstrap, alpha=alpha, seed=seed)  # fmt: skip
    if as_json:
        emit_json(report.to_dict())
        return
    click.echo(
        f"{report.test_set}: {report.set_name} ({report.scheme.upper()}, set {report.set_id}), "
        f"{report.n_systems} systems, {report.n_segments} segments judged for all; human score "
        f"{report.human}; intervals: {report.bootstrap['n']} resamples of segments, seed "
        f"{report.bootstrap['seed']}"
    )
    bins = list(dict.fromkeys(r.bin for r in report.rows))
    for bin_name in bins:
        rows = [r for r in report.rows if r.bin == bin_name]
        title = "all segments" if bin_name == "all" else f"bin {bin_name} (audit {report.audit_id})"
        print_table(
            title,
            ["metric", "level", "statistic", "value", "interval", "n"],
            [[label(r.metric), r.level, STATISTIC_LABELS[r.statistic],
              _number(r.value) + (" (ties)" if r.degenerate else ""), _spread(r), str(r.n)]
             for r in rows],
            right=(3, 5),
        )  # fmt: skip
        _say_degenerate(rows)
    for ranking in report.rankings:
        where = "" if ranking.bin == "all" else f" (bin {ranking.bin})"
        click.echo(f"verdict{where}: {ranking.verdict}")

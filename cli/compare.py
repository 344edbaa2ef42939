"""`tame-wh compare` and `tame-wh significance`: runs side by side, paired tests of each pair."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import click

from warehouse import Comparison, UsageError, Warehouse
from warehouse.cli.context import (
    AppContext,
    bootstrap_options,
    chosen_format,
    format_option,
    json_option,
    pass_app,
)
from warehouse.cli.output import ALPHA, emit_json, print_table, say
from warehouse.frontend import (
    EXPOSURE_BINS,
    METHODS,
    PairTest,
    comparison_markdown,
    is_report_file,
    label,
    on_percent_scale,
    run_letters,
)
from warehouse.frontend import (
    format_score as _num,
)

_METHOD_TITLES = {
    "sign": "paired bootstrap sign test",
    "paired-bs": "sacrebleu paired bootstrap (paired-bs)",
    "paired-ar": "sacrebleu approximate randomisation (paired-ar)",
}


def _stars(p_value: float, delta: float) -> str:
    """`**` below 0.01, `*` below 0.05; never for a zero difference."""
    if delta == 0:
        return ""
    return "**" if p_value < 0.01 else "*" if p_value < 0.05 else ""


def _print_side_by_side(comparison: Comparison, letters: list[str]) -> None:
    """The metric table: one column per run, then the first run's lead over each other run."""
    first = letters[0]
    columns = ["metric", *letters, *(f"Δ {first}-{x}" for x in letters[1:])]
    rows = [
        [
            label(row.metric),
            *(_num(row.metric, v) for v in row.values),
            *(_num(row.metric, d) for d in row.deltas),
        ]
        for row in comparison.rows
    ]
    print_table(
        f"on {comparison.n_segments} common segments", columns, rows, range(1, len(columns))
    )


def _print_pair(comparison: Comparison, pair: PairTest, a: str, b: str) -> None:
    """The table of one pair (docs/statistics.md), with the test's settings in the header."""
    s = comparison.settings
    assert s is not None and comparison.method is not None
    level = f"{s.confidence_level:.0%}"
    click.echo(
        f"\n{a} vs {b}: {_METHOD_TITLES[comparison.method]} · n = {s.n_bootstrap} · "
        f"{ALPHA} = {s.alpha:g} · seed = {s.seed} · {pair.n_segments} segments"
    )
    rows = [
        [
            label(r.metric_name),
            _num(r.metric_name, r.system_a_score),
            _num(r.metric_name, r.system_b_score),
            _num(r.metric_name, r.delta),
            f"[{_num(r.metric_name, r.ci_lower)}, {_num(r.metric_name, r.ci_upper)}]",
            f"{r.p_value:.4f}",
            _stars(r.p_value, r.delta),
            {"A": a, "B": b}.get(r.winner or "", ""),
        ]
        for r in pair.results
    ]
    columns = ["metric", a, b, "Δ", f"{level} CI of Δ", "p-value", "Sig?", "better"]
    print_table(None, columns, rows, range(1, 6))
    for r in pair.results:
        if (
            comparison.method == "sign"
            and r.significant
            and r.ci_lower is not None
            and r.ci_upper is not None
            and r.ci_lower <= 0 <= r.ci_upper
        ):
            click.echo(
                f"  {label(r.metric_name)}: significant and its interval contains 0: the sign "
                f"test counts one tail against {ALPHA}, the interval leaves {ALPHA}/2 in each "
                "(docs/statistics.md, the sign test)"
            )
        if r.below_mde:
            assert r.mde is not None
            click.echo(
                f"  {label(r.metric_name)}: |Δ| = {_num(r.metric_name, abs(r.delta))} is below "
                f"the minimum detectable difference {_num(r.metric_name, r.mde)} "
                f"({ALPHA} = {s.alpha:g}, 80% power): this test set cannot tell differences "
                "this small apart"
            )


def _run(
    app: AppContext,
    runs: tuple[str, ...],
    *,
    significance: bool,
    n_bootstrap: int | None,
    alpha: float | None,
    seed: int | None,
    method: str,
    output_format: str,
    as_json: bool,
    allow_different_testsets: bool,
    bin_name: str | None = None,
    train: str | None = None,
) -> None:
    """Load the runs, compare them, print."""
    fmt = chosen_format(output_format, as_json)
    if len(runs) < 2:
        raise click.UsageError("give at least two runs (run ids, prefixes or report files)")
    options: dict[str, Any] = {
        "significance": significance,
        "method": method,
        "n_bootstrap": n_bootstrap,
        "alpha": alpha,
        "seed": seed,
        "allow_different_testsets": allow_different_testsets,
        "bin_name": bin_name,
        "train": train,
    }
    if all(is_report_file(r) for r in runs):
        # Report files alone need no warehouse (its settings are read when there is one).
        with app.existing() as found:
            comparison = (found.compare if found else Warehouse.compare_files)(runs, **options)
    else:
        with app.open("read") as wh:
            comparison = wh.compare(runs, **options)
    warnings = comparison.warnings + [
        f"{p.run_a} vs {p.run_b}: {w}" for p in comparison.pairs for w in p.warnings
    ]
    for warning in warnings:
        say(f"warning: {warning}")
    if fmt == "json":
        emit_json(comparison.to_dict())
        return
    if fmt == "markdown":
        click.echo(comparison_markdown(comparison), nl=False)
        return
    letters = run_letters(len(comparison.runs))
    for letter, run in zip(letters, comparison.runs, strict=True):
        click.echo(f"{letter} = {run.label}")
    _print_side_by_side(comparison, letters)
    if comparison.pairs:
        pairs = [(x, y) for i, x in enumerate(letters) for y in letters[i + 1 :]]
        for pair, (a, b) in zip(comparison.pairs, pairs, strict=True):
            _print_pair(comparison, pair, a, b)
        click.echo(
            f"\nSig?: * p < 0.05, ** p < 0.01 · better: significant at {ALPHA}, "
            "by the metric's direction"
        )


_resampling = bootstrap_options(
    "--n-bootstrap",
    "Resamples (default: the warehouse's settings bootstrap.n, 1000); for paired-ar the "
    "randomisation trials and confidence resamples (default: sacrebleu's 10,000).",
    "--alpha",
    "Significance level; intervals cover 1 - alpha (default: settings bootstrap.alpha, 0.05).",
    "Seed of numpy's default_rng for the resamples (default: settings bootstrap.seed, 12345).",
)


def _test_options(command: Callable[..., Any]) -> Callable[..., Any]:
    """--n-bootstrap, --alpha, --seed, --method, --format, --json."""
    for option in reversed(
        [
            _resampling,
            click.option(
                "--method",
                type=click.Choice(METHODS),
                default="sign",
                show_default=True,
                help="sign: paired bootstrap sign test (docs/statistics.md); "
                "paired-bs / paired-ar: sacrebleu's tests.",
            ),
            click.option(
                "--bin",
                "bin_name",
                type=click.Choice(EXPOSURE_BINS),
                default=None,
                help="Only segments in this exposure bin (of the test set's audit).",
            ),
            click.option(
                "--train",
                default=None,
                help="With --bin: the audit against this training corpus (default: the largest).",
            ),
            click.option(
                "--allow-different-testsets",
                is_flag=True,
                help="Compare runs on different test sets, pairing segments by id alone.",
            ),
            format_option,
            json_option,
        ]
    ):
        command = option(command)
    return command


@click.command("compare")
@click.argument("runs", nargs=-1, required=True)
@click.option("--significance", is_flag=True, help="Test every pair of runs.")
@click.option(
    "--replicates",
    is_flag=True,
    help="Compare the replicate groups of two runs (mean ± sd [interval] each, and the "
    "two-level sign test of every metric).",
)
@_test_options
@pass_app
def compare(app: AppContext, runs: tuple[str, ...], replicates: bool, **options: Any) -> None:
    """Compare runs side by side (run ids, unique prefixes, model slugs or test-report files).

    Runs are aligned by segment id. With --significance every pair is tested on the metrics
    both runs have: corpus chrF++, BLEU and TER, exact match and each per-entry metric.
    """
    if replicates:
        _compare_replicates(app, runs, options)
        return
    _run(app, runs, **options)


def _compare_replicates(app: AppContext, runs: tuple[str, ...], options: dict[str, Any]) -> None:
    """`compare RUN_A RUN_B --replicates`: the two runs' replicate groups (`options`: the
    command's other options; every metric is tested, --significance or not)."""
    fmt = chosen_format(options["output_format"], options["as_json"])
    if len(runs) != 2 or any(is_report_file(r) for r in runs):
        raise UsageError("--replicates compares the replicate groups of two stored runs")
    other = (options["allow_different_testsets"], options["bin_name"], options["train"])
    if options["method"] != "sign" or any(other) or fmt == "markdown":
        raise UsageError(
            "--replicates uses the two-level sign test on whole test sets: not with --method, "
            "--allow-different-testsets, --bin, --train or --format markdown"
        )
    with app.open("read") as wh:
        found = wh.compare_replicates(runs[0], runs[1], n_bootstrap=options["n_bootstrap"],
                                      alpha=options["alpha"], seed=options["seed"])  # fmt: skip
    if fmt == "json":
        emit_json(found.to_dict())
        return
    for letter, group in (("A", found.a), ("B", found.b)):
        condition = f"/{group.condition}" if group.condition else ""
        click.echo(
            f"{letter} = {group.model_slug}{condition} on {group.test_set}: {len(group.run_ids)} "
            f"run(s) ({', '.join(r[:8] for r in group.run_ids)})"
        )
    print_table(
        None,
        ["metric", "A", "B", "Δ (A - B)", "p", "better"],
        [[label(t["metric"]), found.a.scores[t["metric"]].text(_digits(t["metric"])),
          found.b.scores[t["metric"]].text(_digits(t["metric"])),
          _num(t["metric"], t["delta"]), f"{t['p_value']:.4f}", t["winner"] or ""]
         for t in found.tests],
        right=(3, 4),
    )  # fmt: skip
    s = found.settings
    say(
        "mean ± sd across replicates [interval counting segment and seed noise]; p: two-level "
        f"sign test, segments and replicates resampled (n = {s.n_bootstrap:,}, {ALPHA} = "
        f"{s.alpha:g}, seed = {s.seed}); better: significant at {ALPHA}, by the metric's "
        "direction"
    )


def _digits(metric: str) -> int:
    """Decimals of a score: two on the 0-100 scale, three otherwise."""
    return 2 if on_percent_scale(metric) else 3


@click.command("significance")
@click.argument("runs", nargs=-1, required=True)
@_test_options
@pass_app
def significance(app: AppContext, runs: tuple[str, ...], **options: Any) -> None:
    """Paired significance tests between runs: `compare --significance`."""
    _run(app, runs, significance=True, **options)

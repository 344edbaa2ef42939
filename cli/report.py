"""`tame-wh report`: everything known about one run."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click

from warehouse.cli.context import AppContext, as_of_option, as_of_value, json_option, pass_app
from warehouse.cli.output import (
    emit_json,
    fmt_number,
    fmt_share,
    print_fields,
    print_lenses,
    print_table,
    say,
)
from warehouse.frontend import MEASURES, binned_side


def _print_quality(doc: dict[str, Any]) -> None:
    """Header line and the quality table: system against the TM baseline."""
    run, q = doc["run"], doc["quality"]
    label = f"{run['model_slug']}/{run['condition']}" if run["condition"] else run["model_slug"]
    click.echo(
        f"run {run['run_id']}  {label}  on {run['test_set']}  "
        f"({run['n_entries']} entries, {run['n_errors']} errors)"
    )
    print_table(
        "quality",
        ["metric", "system", "TM", "delta"],
        [
            [
                "BLEU",
                fmt_number(q["bleu"]),
                fmt_number(q["tm_bleu"]),
                fmt_number(q["delta_tm_bleu"]),
            ],
            [
                "chrF++",
                fmt_number(q["chrf_plus_plus"]),
                fmt_number(q["tm_chrf_plus_plus"]),
                fmt_number(q["delta_tm_chrf_plus_plus"]),
            ],
            ["TER", fmt_number(q["ter"]), "", ""],
            ["exact match", fmt_number(q["exact_match_rate"], 3), "", ""],
            ["length ratio", fmt_number(q["length_ratio"], 3), "", ""],
        ],
    )


def _print_ingested_metrics(doc: dict[str, Any]) -> None:
    """Metrics ingested from the run card or test report."""
    if doc["metrics"]:
        print_table(
            "ingested metrics",
            ["metric", "value", "from"],
            [[m["metric"], fmt_number(m["value"], 4), m["source"]] for m in doc["metrics"]],
        )


def _print_exposure(doc: dict[str, Any]) -> None:
    """Exposure per side, per-bin scores against the TM, GenGap and PairLeak."""
    exposure = doc["exposure"]
    if exposure:
        click.echo(
            f"\nexposure to training corpus {exposure['train_corpus']!r} "
            f"(audit {exposure['audit_id']}, {exposure['mode']}; {exposure['train_rule']})"
        )
        thresholds = list(exposure["sides"][0]["at_or_above"])
        print_table(
            None,
            ["side", "mean", "median", "p95", "max", "exact", *[f">={t}" for t in thresholds]],
            [
                [
                    s["side"],
                    fmt_number(s["mean"], 3),
                    fmt_number(s["median"], 3),
                    fmt_number(s["p95"], 3),
                    fmt_number(s["max"], 3),
                    fmt_share(s["exact_share"]),
                    *(fmt_share(v) for v in s["at_or_above"].values()),
                ]
                for s in exposure["sides"]
            ],
        )
        by = binned_side(exposure["side"])
        print_table(
            f"bins (by {by} exposure)",
            [
                "bin",
                "n",
                "share",
                "mean exp",
                "BLEU",
                "TM BLEU",
                "Δ BLEU",
                "chrF++",
                "TM chrF++",
                "Δ chrF++",
            ],
            [
                [
                    b["bin"],
                    b["n_segments"],
                    fmt_share(b["share"]),
                    fmt_number(b[f"mean_{by}_exposure"], 3),
                    fmt_number(b["bleu"]),
                    fmt_number(b["tm_bleu"]),
                    fmt_number(b["delta_bleu"]),
                    fmt_number(b["chrf_plus_plus"]),
                    fmt_number(b["tm_chrf_plus_plus"]),
                    fmt_number(b["delta_chrf_plus_plus"]),
                ]
                for b in doc["bins"]
            ],
        )
        g = doc["gengap"] or {}
        click.echo(
            f"GenGap (near - far): BLEU {fmt_number(g.get('gengap_bleu'))}, chrF++ "
            f"{fmt_number(g.get('gengap_chrf'))}; TM: BLEU {fmt_number(g.get('tm_gengap_bleu'))}, "
            f"chrF++ {fmt_number(g.get('tm_gengap_chrf'))}"
        )
        _print_gengap_intervals(doc.get("bin_intervals"))
        if exposure["pair_leak"]:
            click.echo(
                "PairLeak: "
                + "  ".join(f"@{t} {fmt_share(v)}" for t, v in exposure["pair_leak"].items())
            )
        print_lenses(exposure.get("lenses"))


def _print_composite(doc: dict[str, Any]) -> None:
    """The composite, its tier and its weighted inputs."""
    c = doc["composite"]
    click.echo(
        f"\ncomposite {fmt_number(c['composite'], 4)} (profile {c['profile']}) -> "
        f"{c['quality_tier']} (provisional label)"
    )
    if c["inputs"]:
        print_table(
            None,
            ["metric", "value (0-1)", "weight", "effective weight"],
            [
                [
                    i["metric"],
                    fmt_number(i["value"], 4),
                    fmt_number(i["weight"]),
                    fmt_number(i["effective_weight"], 4),
                ]
                for i in c["inputs"]
            ],
        )
    if c["missing"]:
        click.echo(f"not available: {', '.join(c['missing'])}")


def _print_intervals(doc: dict[str, Any]) -> None:
    """The stored bootstrap intervals."""
    if doc["intervals"]:
        first = doc["intervals"][0]
        print_table(
            f"bootstrap intervals ({first['n_bootstrap']} resamples, "
            f"{1 - first['alpha']:.0%}, seed {first['seed']})",
            ["metric", "scope", "estimate", "lower", "upper", "n"],
            [
                [
                    i["metric"],
                    i["scope"],
                    fmt_number(i["estimate"], 4),
                    fmt_number(i["ci_lower"], 4),
                    fmt_number(i["ci_upper"], 4),
                    i["n"],
                ]
                for i in doc["intervals"]
            ],
        )


def _print_cost_and_speed(doc: dict[str, Any]) -> None:
    """Tokens, cost, the cost-adjusted score, latency and throughput."""
    cost, speed = doc["cost"], doc["speed"]
    print_fields(
        [
            ("total tokens", fmt_number(cost.get("total_tokens"))),
            ("total cost (USD)", fmt_number(cost.get("total_cost_usd"), 4)),
            ("cost per entry (USD)", fmt_number(cost.get("cost_per_entry_usd"), 6)),
            ("cost per 1k tokens (USD)", fmt_number(cost.get("cost_per_1k_tokens"), 6)),
            ("cost-adjusted score", fmt_number(cost.get("cost_adjusted"), 4)),
            ("elapsed (s)", fmt_number(speed.get("elapsed_seconds"))),
            (
                "latency avg / median / p95 (s)",
                " / ".join(
                    fmt_number(speed.get(k), 3)
                    for k in (
                        "avg_latency_seconds",
                        "median_latency_seconds",
                        "p95_latency_seconds",
                    )
                ),
            ),
            ("tokens per second", fmt_number(speed.get("tokens_per_second"), 1)),
            ("entries per minute", fmt_number(speed.get("entries_per_minute"), 1)),
        ]
    )


def _print_breakdowns(doc: dict[str, Any]) -> None:
    """Scores by difficulty tier and provenance."""
    if doc["breakdowns"]:
        print_table(
            "breakdowns",
            ["by", "value", "n", "BLEU", "chrF++", "TER", "exact"],
            [
                [
                    b["dimension"],
                    b["value"],
                    b["n_segments"],
                    fmt_number(b["bleu"]),
                    fmt_number(b["chrf_plus_plus"]),
                    fmt_number(b["ter"]),
                    fmt_number(b["exact_match_rate"], 3),
                ]
                for b in doc["breakdowns"]
            ],
        )


def _print_signatures_and_warnings(doc: dict[str, Any]) -> None:
    """Metric and exposure signatures, then warnings."""
    for name, signature in doc["signatures"].items():
        click.echo(f"{name} signature: {signature}")
    if doc["exposure"]:
        click.echo(f"exposure signature: {doc['exposure']['signature']}")
    for warning in doc["warnings"]:
        say(f"warning: {warning}")


def print_report(doc: dict[str, Any]) -> None:
    """The human report, section by section."""
    for section in (
        _print_quality,
        _print_human_and_tie_group,
        _print_ingested_metrics,
        _print_exposure,
        _print_composite,
        _print_intervals,
        _print_cost_and_speed,
        _print_breakdowns,
        _print_signatures_and_warnings,
    ):
        section(doc)


_HUMAN_LABELS = {"mqm": "MQM (lower is better)", "esa": "ESA", "da_z": "DA z"}


def _print_human_and_tie_group(doc: dict[str, Any]) -> None:
    """The run's human scores and its stored tie group, when it has them."""
    for key, value in (doc.get("human") or {}).items():
        if value is not None:
            click.echo(f"human {_HUMAN_LABELS.get(key, key)}: {value:.3f}")
    group = doc.get("tie_group")
    if group:
        best, worst = group["rank_range"]
        ranks = str(best) if best == worst else f"{best}-{worst}"
        click.echo(
            f"tie group: cluster {group['cluster']}, ranks {ranks} of {group['n_runs']} runs "
            f"({group['metric']}, {group['method']}, {group['correction']} correction)"
        )


def _interval(pair: list[float] | None) -> str:
    """`[lo, hi]`, or n/a."""
    return "n/a" if pair is None else f"[{pair[0]:.2f}, {pair[1]:.2f}]"


def _print_gengap_intervals(found: dict[str, Any] | None) -> None:
    """GenGap's intervals and whether the system's exceeds the TM's (one line per metric)."""
    if not found:
        return
    level = f"{1 - found['alpha']:.0%}"
    for metric, name in (("bleu", "BLEU"), ("chrf_plus_plus", "chrF++")):
        g = found["gengap"].get(metric)
        if g is None:
            continue
        if g["tm"] is None:  # an audit without a TM baseline
            click.echo(f"  {name} GenGap {level} CI {_interval(g['system'])} (no TM baseline)")
            continue
        verdict = "larger than the TM's" if g["exceeds_tm"] else "not shown larger than the TM's"
        click.echo(
            f"  {name} GenGap {level} CI {_interval(g['system'])}, TM {_interval(g['tm'])}; "
            f"system - TM {_interval(g['difference'])}, p = {g['p_exceeds']:.3f}: {verdict}"
        )


@click.command()
@click.argument("run")
@click.option("--train", default=None, help="Use the audit against this training corpus.")
@click.option(
    "--bin-by",
    type=click.Choice(MEASURES),
    default=None,
    help="Use an audit by this measure (default: Jaccard, then containment, then substring).",
)
@click.option("--testset", default=None, help="The run of RUN (a model slug) on this test set.")
@click.option(
    "--html",
    "html_file",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    help="Write the report as one self-contained HTML file (charts, segment table) instead.",
)
@as_of_option
@json_option
@pass_app
def report(
    app: AppContext,
    run: str,
    train: str | None,
    bin_by: str | None,
    testset: str | None,
    html_file: Path | None,
    as_of: str | None,
    as_json: bool,
) -> None:
    """Report one run (id or unique prefix): quality, exposure, bins, composite, cost, speed."""
    when = as_of_value(as_of)
    if html_file is not None:
        # The page's libraries (altair, the Vega bundle) load only for a page (the handle
        # imports them in `report_html`): a third of a second a terminal report does not need.
        with app.open("read", when) as wh:
            written = wh.report_html(run, html_file, train=train, testset=testset, bin_by=bin_by)
        if as_json:
            emit_json(written.to_dict())
        else:
            state = "written" if written.written else "unchanged"
            click.echo(f"{html_file} ({written.bytes / 1e6:.1f} MB, run {written.run_id}): {state}")
        return
    with app.open("read", when) as wh:
        doc = wh.report(run, train=train, testset=testset, bin_by=bin_by)
    if as_json:
        emit_json(doc)
    else:
        print_report(doc)

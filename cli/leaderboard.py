"""`tame-wh leaderboard`: runs ranked, with tier and a coverage flag."""

from __future__ import annotations

import datetime as dt
from typing import Any

import click

from cli.context import AppContext, as_of_option, as_of_value, json_option, pass_app
from cli.output import emit_json, fmt_number, print_table, say
from warehouse.frontend import SORT_KEYS, TRAIN_RULE, parse_tags


def _with_ci(value: Any, lower: Any, upper: Any, digits: int) -> str:
    """A score followed by its bootstrap interval when the run has one: `86.49 [81.47, 90.37]`."""
    if value is None or lower is None or upper is None:
        return fmt_number(value, digits)
    return f"{value:.{digits}f} [{lower:.{digits}f}, {upper:.{digits}f}]"


@click.command("leaderboard")
@click.option("--testset", default=None, help="Only runs on this test set.")
@click.option(
    "--sort",
    type=click.Choice(list(SORT_KEYS)),
    default="composite",
    show_default=True,
    help="Ranking key (best first; NULLs last).",
)
@click.option("--limit", type=click.IntRange(min=1), default=None, help="Show at most N runs.")
@click.option(
    "--train",
    default=None,
    help="Exposure columns against this training corpus (default: the largest one audited).",
)
@click.option(
    "--tag", "tags", multiple=True, metavar="KEY=VALUE", help="Only runs with this tag (repeat)."
)
@as_of_option
@json_option
@pass_app
def leaderboard_cmd(
    app: AppContext,
    testset: str | None,
    sort: str,
    limit: int | None,
    train: str | None,
    tags: tuple[str, ...],
    as_of: str | None,
    as_json: bool,
) -> None:
    """Rank runs; runs whose available composite metrics differ from the rest are marked.

    Exposure columns (Δ TM BLEU, GenGap) refer to the training corpus shown in the `train`
    column: --train NAME, else each test set's largest audited training corpus.
    """
    with app.open("read", as_of_value(as_of)) as wh:
        rows = list(
            wh.leaderboard(
                testset=testset, sort=sort, limit=limit, train=train, tags=parse_tags(tags)
            )
        )
    if as_json:
        emit_json(
            [
                {k: v.isoformat() if isinstance(v, dt.datetime) else v for k, v in r.items()}
                for r in rows
            ]
        )
        return
    if not rows:
        click.echo("no runs yet")
        return
    print_leaderboard(rows)


def print_leaderboard(rows: list[dict[str, Any]]) -> None:
    """The leaderboard table for people."""
    print_table(
        None,
        [
            "#",
            "run",
            "model",
            "condition",
            "test set",
            "composite",
            "tier",
            "cov",
            "chrF++",
            "BLEU",
            "TER",
            "exact",
            "train",
            "Δ TM BLEU",
            "GenGap BLEU",
            "$/entry",
            "cost-adj",
        ],
        [
            [
                i + 1,
                r["run_id"],
                r["model_slug"],
                r["condition"],
                r["test_set"],
                fmt_number(r["composite_score"], 4),
                r["quality_tier"],
                "≠" if r["coverage_differs"] else "",
                _with_ci(r["chrf_plus_plus"], r["chrf_ci_lower"], r["chrf_ci_upper"], 2),
                fmt_number(r["corpus_bleu"]),
                fmt_number(r["ter"]),
                _with_ci(
                    r["exact_match_rate"], r["exact_match_ci_lower"], r["exact_match_ci_upper"], 3
                ),
                r["train_corpus"],
                fmt_number(r["delta_tm_bleu"]),
                fmt_number(r["gengap_bleu"]),
                fmt_number(r["cost_per_entry_usd"], 5),
                fmt_number(r["cost_adjusted"], 3),
            ]
            for i, r in enumerate(rows)
        ],
        keep=(0, 1),
        # most important first: rank, run, model, composite, tier, chrF++, BLEU, condition, ...
        priority=(0, 1, 2, 5, 6, 8, 9, 3, 4, 10, 11, 13, 7, 12, 14, 15, 16),
    )
    if any(r["train_corpus"] for r in rows):
        say(f"train: {TRAIN_RULE}")
    if any(r["chrf_ci_lower"] is not None for r in rows):
        seeds = sorted({r["ci_seed"] for r in rows if r["ci_seed"] is not None})
        say(
            "[lo, hi]: bootstrap percentile intervals stored at ingest "
            f"(seed {', '.join(map(str, seeds))})"
        )
    if any(r["coverage_differs"] for r in rows):
        say("≠: this run's composite uses a different set of metrics; composites not comparable")

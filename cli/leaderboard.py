"""`tame-wh leaderboard`: runs ranked, with tier and a coverage flag."""

from __future__ import annotations

import datetime as dt
from collections.abc import Sequence
from typing import Any

import click

from warehouse import Board, ClusterRequest, ReplicateGroup, UsageError
from warehouse.cli.context import (
    INT64_MAX,
    AppContext,
    as_of_option,
    as_of_value,
    bootstrap_options,
    chosen_format,
    chosen_options,
    format_option,
    json_option,
    metric_options,
    pass_app,
    tag_filter_options,
)
from warehouse.cli.output import ALPHA, emit_json, fmt_number, print_table, say
from warehouse.frontend import (
    CLUSTER_SORT_KEYS,
    CORRECTIONS,
    EXPOSURE_BINS,
    HUMAN_METRICS,
    MEASURES,
    METHODS,
    SORT_KEYS,
    TRAIN_RULE,
    grouped,
    label,
    leaderboard_markdown,
    parse_tag_filters,
    parse_tags,
    replicates_markdown,
)


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
    default=None,
    help="Ranking key (best first; NULLs last) [default: composite; chrf with --clusters].",
)
@click.option(
    "--limit", type=click.IntRange(min=1, max=INT64_MAX), default=None, help="Show at most N runs."
)
@click.option(
    "--train",
    default=None,
    help="Exposure columns against this training corpus (default: the largest one audited).",
)
@click.option(
    "--bin-by",
    type=click.Choice(MEASURES),
    default=None,
    help="Exposure columns from an audit by this measure (default: Jaccard, then containment, "
    "then substring).",
)
@tag_filter_options
@click.option(
    "--clusters",
    is_flag=True,
    help="Tie groups: test every pair of runs of a test set on the --sort metric and give each "
    "run a cluster and a rank range (docs/statistics.md).",
)
@click.option(
    "--bin",
    "bin_name",
    type=click.Choice(EXPOSURE_BINS),
    default=None,
    help="Rank by chrF++ on this exposure bin, with the bin's chrF++, BLEU, TM and system - TM "
    "scores and GenGap, each with its interval (segments resampled within the bin).",
)
@click.option(
    "--store",
    is_flag=True,
    help="With --clusters: store the tie groups, which the leaderboard's tie_* columns, reports, "
    "the dashboard and sync then show (until the test set's runs change).",
)
@click.option(
    "--replicates",
    is_flag=True,
    help="One row per replicate group (runs repeating one configuration): mean, standard "
    "deviation across replicates and an interval counting segment and seed noise.",
)
@click.option(
    "--method",
    type=click.Choice(METHODS),
    default="paired-bs",
    show_default=True,
    help="With --clusters: the paired test (as in `compare --significance`).",
)
@click.option(
    "--correction",
    type=click.Choice(CORRECTIONS),
    default="holm",
    show_default=True,
    help="With --clusters: multiple-comparison correction of the pairs' p-values.",
)
@bootstrap_options(
    "--n-bootstrap",
    "With --clusters or --replicates: resamples (default: settings bootstrap.n; --clusters "
    "raises it to a count that can reach the corrected threshold; paired-ar: 10,000 trials).",
    "--alpha",
    "With --clusters or --replicates: significance level / 1 - coverage (default: settings "
    "bootstrap.alpha, 0.05).",
    "With --clusters or --replicates: seed of the resamples (default: settings bootstrap.seed, "
    "12345).",
)
@metric_options(select=True)
@click.option(
    "--metric",
    "plugin_metrics",
    multiple=True,
    metavar="NAME",
    help="List the runs a metric plugin scored, with its score, ranked by the first given.",
)
@as_of_option
@format_option
@json_option
@pass_app
def leaderboard_cmd(
    app: AppContext,
    testset: str | None,
    sort: str | None,
    limit: int | None,
    train: str | None,
    bin_by: str | None,
    tags: tuple[str, ...],
    exclude_tags: tuple[str, ...],
    clusters: bool,
    bin_name: str | None,
    store: bool,
    replicates: bool,
    method: str,
    correction: str,
    n_bootstrap: int | None,
    alpha: float | None,
    seed: int | None,
    tokenize: str | None,
    lowercase: bool,
    chrf_word_order: str | None,
    no_ter: bool,
    plugin_metrics: tuple[str, ...],
    as_of: str | None,
    output_format: str,
    as_json: bool,
) -> None:
    """Rank runs; runs whose available composite metrics differ from the rest are marked.

    Exposure columns (Δ TM BLEU, GenGap) refer to the training corpus shown in the `train`
    column: --train NAME, else each test set's largest audited training corpus. The runs are
    listed as ingested; the metric options (--tokenize, …) list instead the runs whose
    statistics were computed under them, as ingested or by `tame-wh rescore`.
    """
    fmt = chosen_format(output_format, as_json)
    options = chosen_options(tokenize, lowercase, chrf_word_order, no_ter)
    if bin_name is not None and (clusters or replicates or sort is not None):
        raise UsageError(
            "--bin ranks by the bin's chrF++; not with --sort, --clusters or --replicates"
        )
    if store and (not clusters or as_of is not None):
        raise UsageError(
            "--store keeps the tie groups --clusters forms; add --clusters (not --as-of)"
        )
    if plugin_metrics and (sort is not None or bin_name is not None):
        raise UsageError("--metric ranks by the plugin metric; not with --sort or --bin")
    if replicates:
        if options is not None or plugin_metrics:
            raise UsageError("--replicates ranks the runs as ingested; drop the metric options")
        if (
            store
            or tags
            or exclude_tags
            or train is not None
            or (sort is not None and not clusters)
        ):
            raise UsageError(
                "--replicates ranks replicate groups by mean chrF++ (with --clusters, by --sort); "
                "it takes --testset, --limit, --clusters, --correction and the resampling "
                "options, not --store, --tag or --train"
            )
        with app.open("read", as_of_value(as_of)) as wh:
            groups = wh.replicates(testset=testset, n_bootstrap=n_bootstrap, alpha=alpha, seed=seed)
            group_boards = (
                wh.replicate_clusters(
                    groups, metric=CLUSTER_SORT_KEYS[_cluster_key(sort)], correction=correction,
                    n_bootstrap=n_bootstrap, alpha=alpha, seed=seed,
                )
                if clusters
                else []
            )  # fmt: skip
        placed = _place_groups(group_boards)
        shown = groups[:limit] if limit is not None else groups
        _print_replicates(shown, fmt, placed)
        for board in group_boards:
            for note in board.notes:
                say(f"note: {note}")
        if group_boards and fmt == "table":
            s = group_boards[0]
            say(
                "cluster: a group significantly beats every group of a later cluster on "
                f"{label(s.metric)} (two-level sign test: segments and replicates resampled, "
                f"{s.correction} correction, {ALPHA} = {s.settings.alpha:g}, seed = "
                f"{s.settings.seed}, n = {_counts(group_boards)})"
            )
        return
    if not clusters and (n_bootstrap, alpha, seed) != (None, None, None):
        raise UsageError(
            "--n-bootstrap, --alpha and --seed set up --clusters or --replicates; add one"
        )
    sort = sort or ("chrf" if clusters else "composite")
    if clusters and plugin_metrics:
        sort = plugin_metrics[0]  # tie groups on the plugin's per-segment scores
    elif clusters and sort not in CLUSTER_SORT_KEYS:
        raise UsageError(
            f"--clusters tests the --sort metric; {sort} has no per-segment form to resample "
            f"(choose one of {', '.join(CLUSTER_SORT_KEYS)})"
        )
    boards: list[Board] = []
    with app.open("write" if store else "read", as_of_value(as_of)) as wh:
        rows = list(
            wh.leaderboard(
                testset=testset,
                sort="composite" if plugin_metrics else sort,  # then ranked by the plugin
                limit=None if clusters else limit,
                train=train,
                bin_by=bin_by,
                tags=parse_tags(tags),
                exclude_tags=parse_tag_filters(exclude_tags),
                bin_name=bin_name,
                options=options,
                plugin_metrics=plugin_metrics,
            )
        )
        if clusters:
            request = ClusterRequest(sort, method, correction, n_bootstrap, alpha, seed)
            boards = wh.clusters([r["run_id"] for r in rows], request)
            if store:
                stored = wh.store_clusters(boards)
                say(f"stored the tie groups of {len(boards)} board(s), {stored} run rows")
    if clusters:
        _place(rows, boards)
        rows = rows[:limit] if limit is not None else rows
        for board in boards:
            for note in board.notes:
                say(f"note: {note}")
    if fmt == "markdown":
        click.echo(leaderboard_markdown(rows, boards, bin_name=bin_name), nl=False)
        return
    if fmt == "json":
        emit_json(
            [
                {k: v.isoformat() if isinstance(v, dt.datetime) else v for k, v in r.items()}
                for r in rows
            ]
        )
        return
    if not rows:
        if options is not None or plugin_metrics:
            click.echo(
                "no run has statistics under these metric options (`tame-wh rescore --all` "
                "with the same options or --metric computes them)"
            )
            return
        click.echo("no runs yet")
        return
    if bin_name is not None:
        print_bin_leaderboard(rows, bin_name)
        return
    print_leaderboard(rows, sort=plugin_metrics[0] if plugin_metrics else sort)
    if boards:
        s = boards[0]
        say(
            "cluster: a run significantly beats every run of a later cluster on "
            f"{label(s.metric)}; ranks: its best and worst possible rank ({s.method}, "
            f"{s.correction} correction, {ALPHA} = {s.settings.alpha:g}, seed = "
            f"{s.settings.seed}, n = {_counts(boards)})"
        )


def _bin_ci(found: dict[str, Any] | None, key: str, ci: str, digits: int = 2) -> str:
    """A bin score with its interval, or n/a."""
    if found is None:
        return "n/a"
    pair = found.get(ci) or (None, None)
    return _with_ci(found.get(key), pair[0], pair[1], digits)


def print_bin_leaderboard(rows: list[dict[str, Any]], bin_name: str) -> None:
    """The runs ranked by chrF++ on one exposure bin, one table per test set."""
    for n, (test_set, runs) in enumerate(grouped(rows, lambda r: r["test_set"]).items()):
        if n:
            click.echo()
        print_table(
            f"test set {test_set}, bin {bin_name} ({len(runs)} run{'s' if len(runs) != 1 else ''})",
            ["#", "run", "model", "condition", "segments", "chrF++", "BLEU", "TM chrF++",
             "Δ TM chrF++", "GenGap chrF++", "train"],
            [[i + 1, r["run_id"], r["model_slug"], r["condition"],
              "" if r["bin"] is None else r["bin"]["n_segments"],
              _bin_ci(r["bin"], "chrf_plus_plus", "chrf_ci"),
              _bin_ci(r["bin"], "bleu", "bleu_ci"),
              fmt_number((r["bin"] or {}).get("tm_chrf_plus_plus")),
              _bin_ci(r["bin"], "delta_tm_chrf_plus_plus", "delta_tm_chrf_ci"),
              _bin_ci(r["bin"], "gengap_chrf", "gengap_chrf_ci"),
              r["train_corpus"] or "no audit"] for i, r in enumerate(runs)],
            keep=(0, 1),
            priority=(0, 1, 2, 5, 8, 9, 4, 6, 7, 3, 10),
        )  # fmt: skip
    say(
        f"bin {bin_name}: scores on the bin's segments of each run's audit ({TRAIN_RULE}); "
        "[lo, hi]: percentile bootstrap, segments resampled within their bin, the warehouse's "
        "settings; runs without an audit or without segments in the bin last"
    )


def _mean_sd_ci(score: Any, digits: int) -> str:
    """A replicate score for people, or n/a."""
    return score.text(digits) if score is not None else "n/a"


def _cluster_key(sort: str | None) -> str:
    """The metric key tie groups of replicate groups use (chrF++ unless --sort names one)."""
    key = sort or "chrf"
    if key not in CLUSTER_SORT_KEYS or key in ("mqm", "esa", "da"):
        raise UsageError(
            f"--clusters with --replicates tests chrf, bleu, ter or exact_match, not {key}"
        )
    return key


def _place_groups(boards: list[Board]) -> dict[str, dict[str, Any]]:
    """Each group's cluster, rank range and the board's settings, by its first run."""
    return {
        rank.run_id: {
            "cluster": rank.cluster,
            "rank_range": [rank.best_rank, rank.worst_rank],
            "clustering": {
                k: v for k, v in board.to_dict().items()
                if k not in ("ranks", "pairs", "test_set", "test_corpus_id")
            },
        }
        for board in boards
        for rank in board.ranks
    }  # fmt: skip


def _print_replicates(
    groups: list[ReplicateGroup], fmt: str, placed: dict[str, dict[str, Any]] | None = None
) -> None:
    """The replicate groups: JSON, Markdown or one table per test set (with each group's
    cluster and rank range when `placed` holds them)."""
    placed = placed or {}
    if fmt == "json":
        emit_json([{**g.to_dict(), **placed.get(g.run_ids[0], {})} for g in groups])
        return
    if fmt == "markdown":
        click.echo(replicates_markdown(groups, placed), nl=False)
        return
    if not groups:
        click.echo("no runs yet")
        return
    by_test_set = grouped(groups, lambda g: g.test_set)
    for n, (test_set, members) in enumerate(by_test_set.items()):
        if n:
            click.echo()
        clustered = bool(placed)
        print_table(
            f"test set {test_set} (replicate groups)",
            [
                "#",
                "model",
                "condition",
                "replicate",
                "n",
                "chrF++",
                "BLEU",
                "exact",
                "runs",
                *(["cluster", "ranks"] if clustered else []),
            ],
            [
                [
                    i + 1,
                    g.model_slug,
                    g.condition,
                    g.label,
                    len(g.run_ids),
                    _mean_sd_ci(g.scores.get("chrf_plus_plus"), 2),
                    _mean_sd_ci(g.scores.get("bleu"), 2),
                    _mean_sd_ci(g.scores.get("exact_match_rate"), 3),
                    ", ".join(r[:8] for r in g.run_ids),
                    *(_group_place(placed.get(g.run_ids[0])) if clustered else []),
                ]
                for i, g in enumerate(members)
            ],
            keep=(0, 1, 9, 10) if clustered else (0, 1),
            priority=(0, 1, *((9, 10) if clustered else ()), 4, 5, 3, 6, 2, 7, 8),
        )
    s = groups[0].settings
    say(
        "mean ± standard deviation across replicates [interval counting segment and seed noise: "
        f"segments and replicates resampled, n = {s.n_bootstrap:,}, {ALPHA} = {s.alpha:g}, "
        f"seed = {s.seed}]"
    )


def _group_place(found: dict[str, Any] | None) -> list[str]:
    """A group's cluster and rank range for people (empty when alone on its test set)."""
    return ["", ""] if found is None else [str(found["cluster"]), _ranks(found)]


def signature_notes(rows: list[dict[str, Any]]) -> list[str]:
    """One line per score marked ≠: the run, the metric and the settings it was computed with."""
    return [
        f"≠ {r['run_id']} ({r['test_set']}): {metric} computed as "
        f"{r['metric_signatures'][metric]}, unlike most runs of its test set; not comparable"
        for r in rows
        for metric in r.get("signature_differs", ())
    ]


def _counts(boards: list[Board]) -> str:
    """The boards' resample counts, each once."""
    return ", ".join(f"{n:,}" for n in sorted({b.settings.n_bootstrap for b in boards}))


def _place(rows: list[dict[str, Any]], boards: list[Board]) -> None:
    """Each row's cluster and rank range (None for a run alone on its test set), and the
    settings that formed them."""
    placed = {(b.test_corpus_id, r.run_id): (b, r) for b in boards for r in b.ranks}
    for row in rows:
        found = placed.get((row["test_corpus_id"], row["run_id"]))
        row["cluster"] = found[1].cluster if found else None
        row["rank_range"] = [found[1].best_rank, found[1].worst_rank] if found else None
        row["clustering"] = (
            {
                key: value
                for key, value in found[0].to_dict().items()
                if key not in ("ranks", "pairs", "test_set", "test_corpus_id")
            }
            if found
            else None
        )


def _ranks(row: dict[str, Any]) -> str:
    """A rank range for people: `3` or `2-5`."""
    best, worst = row["rank_range"] or (None, None)
    if best is None:
        return ""
    return str(best) if best == worst else f"{best}-{worst}"


# The other columns, most important first: model, composite, tier, chrF++, BLEU, condition, ...
_PRIORITY = (2, 4, 5, 7, 8, 3, 9, 10, 12, 6, 11, 13, 14, 15)


def print_leaderboard(rows: list[dict[str, Any]], sort: str | None = None) -> None:
    """The leaderboard for people: one ranked table per test set, in the rows' order (with each
    run's cluster and rank range when the rows carry them); the run, model, condition and the
    column it is sorted by (`sort`, default the composite), and human scores, are never left
    out of a narrow table."""
    by_test_set = grouped(rows, lambda r: r["test_set"])
    for n, (test_set, runs) in enumerate(by_test_set.items()):
        if n:
            click.echo()
        title = f"test set {test_set} ({len(runs)} run{'s' if len(runs) != 1 else ''})"
        _print_board(title, runs, sort or "composite")
    _print_notes(rows)
    _offer_human_sort(rows, sort or "composite")


def _offer_human_sort(rows: list[dict[str, Any]], sort: str) -> None:
    """Name the human score a board could be ranked by, when its runs carry one and it is
    ranked by something else."""
    if sort in HUMAN_METRICS:
        return
    keys = [k for k, c in HUMAN_METRICS.items() if any(r.get(c) is not None for r in rows)]
    if keys:
        options = " or ".join(f"--sort {k}" for k in keys)
        say(f"ranked by {sort}; these runs carry human scores: {options} ranks by people's")


# Human score columns: (header, leaderboard column, digits), shown when a run has one.
_HUMAN = (("MQM", "human_mqm", 3), ("ESA", "human_esa", 2), ("DA z", "human_da_z", 3))


def _chrf_header(rows: list[dict[str, Any]]) -> str:
    """chrF when every run's statistics are chrF's (no word n-grams), else chrF++."""
    signed = [(r.get("metric_signatures") or {}).get("chrf") for r in rows]
    plain = [s for s in signed if s is not None]
    return "chrF" if plain and all("|nw:0|" in s for s in plain) else "chrF++"


# The column of each sort key in the board's table (human scores and plugins are placed after).
_SORT_COLUMN = {"composite": 4, "chrf": 7, "bleu": 8, "ter": 9, "exact_match": 10,
                "cost": 14, "cost_adjusted": 15}  # fmt: skip


def _print_board(title: str, rows: list[dict[str, Any]], sort: str) -> None:
    """The ranked table of the runs of one test set, sorted by `sort`."""
    clustered = any("cluster" in r for r in rows)
    extra = ["cluster", "ranks"] if clustered else []
    human = [h for h in _HUMAN if any(r.get(h[1]) is not None for r in rows)]
    first_human = 16 + len(extra)
    human_at = tuple(range(first_human, first_human + len(human)))
    plugins = list(rows[0].get("plugin_metrics") or {}) if rows else []
    plugin_at = tuple(range(first_human + len(human), first_human + len(human) + len(plugins)))
    print_table(
        title,
        [
            "#",
            "run",
            "model",
            "condition",
            "composite",
            "tier",
            "cov",
            _chrf_header(rows),
            "BLEU",
            "TER",
            "exact",
            "train",
            "Δ TM BLEU",
            "GenGap BLEU",
            "$/entry",
            "cost-adj",
            *extra,
            *(h[0] for h in human),
            *plugins,
        ],
        [
            [
                i + 1,
                r["run_id"],
                r["model_slug"],
                r["condition"],
                fmt_number(r["composite_score"], 4),
                r["quality_tier"],
                "≠" if r["coverage_differs"] else "",
                _with_ci(r["chrf_plus_plus"], r["chrf_ci_lower"], r["chrf_ci_upper"], 2)
                + _other(r, "chrf"),
                fmt_number(r["corpus_bleu"]) + _other(r, "bleu"),
                fmt_number(r["ter"]) + _other(r, "ter"),
                _with_ci(
                    r["exact_match_rate"], r["exact_match_ci_lower"], r["exact_match_ci_upper"], 3
                ),
                r["train_corpus"],
                fmt_number(r["delta_tm_bleu"]),
                fmt_number(r["gengap_bleu"]),
                fmt_number(r["cost_per_entry_usd"], 5),
                fmt_number(r["cost_adjusted"], 3),
                *([r["cluster"], _ranks(r)] if clustered else []),
                *(_with_ci(r[c], r.get(f"{c}_ci_lower"), r.get(f"{c}_ci_upper"), d)
                  for _h, c, d in human),
                *(fmt_number(r["plugin_metrics"][p], 4) + _other(r, p) for p in plugins),
            ]
            for i, r in enumerate(rows)
        ],
        keep=(0, 1, 2, 3, *_sorted_by(sort, human, plugins, human_at, plugin_at), *human_at,
              *((16, 17) if clustered else ())),
        priority=(0, 1, *((16, 17) if clustered else ()), *plugin_at, *_PRIORITY[:5],
                  *human_at, *_PRIORITY[5:]),
    )  # fmt: skip


def _sorted_by(
    sort: str,
    human: Sequence[tuple[str, str, int]],
    plugins: Sequence[str],
    human_at: Sequence[int],
    plugin_at: Sequence[int],
) -> tuple[int, ...]:
    """The table column the board is sorted by (none when it is not one of them)."""
    if sort in _SORT_COLUMN:
        return (_SORT_COLUMN[sort],)
    columns = {**{h[1]: at for h, at in zip(human, human_at, strict=True)},
               **dict(zip(plugins, plugin_at, strict=True))}  # fmt: skip
    found = columns.get(HUMAN_METRICS.get(sort, sort))
    return (found,) if found is not None else ()


def _other(row: dict[str, Any], metric: str) -> str:
    """` ≠` after a score computed under other settings than its test set's other runs."""
    return " ≠" if metric in row.get("signature_differs", ()) else ""


def _print_notes(rows: list[dict[str, Any]]) -> None:
    """What the leaderboard's marks and intervals mean (on stderr)."""
    for note in signature_notes(rows):
        say(note)
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
    bases = {
        (tuple(r.get("composite_metrics") or ()), r.get("profile"))
        for r in rows
        if r.get("composite_score") is not None
    }
    for used, profile in sorted(bases, key=str):
        if used and len(used) < 5:
            say(
                f"composite (profile {profile}): rests on {' and '.join(label(m) for m in used)} "
                "alone, the only metrics of its profile these runs carry; their weights are "
                "renormalised over them (docs/scores.md)"
            )
    if any(r.get(c) is not None for _h, c, _d in _HUMAN for r in rows):
        say(
            "MQM (lower is better), ESA, DA z: human scores of the run's newest judgment set, "
            "[lo, hi] resampling its judged segments (docs/human.md)"
        )

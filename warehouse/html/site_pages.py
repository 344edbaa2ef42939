"""The dashboard's other pages: the index (leaderboards), test sets and comparisons."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from warehouse.analysis.compare import Comparison
from warehouse.analysis.replicates import ReplicateGroup
from warehouse.exposure.config import binned_side
from warehouse.exposure.summary import AuditResult
from warehouse.html.charts import BIN_ORDER, chart_block
from warehouse.html.layout import Assets, page
from warehouse.html.markup import (
    Raw,
    esc,
    fields,
    fmt,
    fmt_interval,
    fmt_share,
    link,
    table,
)
from warehouse.metrics.registry import label, score_digits
from warehouse.store.corpora import CorpusInfo

BOARD_CHART_RUNS = 25  # runs per test set in the composite chart (the table lists them all)


@dataclass(frozen=True)
class ComparePair:
    """A comparison page: its two runs, their labels and the page's address."""

    run_a: str
    run_b: str
    label_a: str
    label_b: str
    href: str


def _tier(tier: str | None) -> Raw:
    """A tier badge."""
    name = tier or "unscored"
    return Raw(f'<span class="tier tier-{esc(name)}">{esc(name)}</span>')


def run_label(row: dict[str, Any]) -> str:
    """`model/condition` of a leaderboard row or run header."""
    return f"{row['model_slug']}/{row['condition']}" if row["condition"] else row["model_slug"]


def _board_table(rows: Sequence[dict[str, Any]], run_href: Callable[[str], str]) -> str:
    """Every run of a test set, best composite first, with intervals, cost and exposure; its
    stored tie groups and human scores when it has them."""
    tied = any(r.get("tie_cluster") is not None for r in rows)
    human = any(r.get("human_mqm") is not None for r in rows)
    columns = [
        "#",
        "run",
        "model/condition",
        "composite [interval]",
        "tier",
        "cost-adjusted",
        "chrF++ [interval]",
        "BLEU",
        "TM BLEU",
        "Δ TM BLEU",
        "GenGap chrF++",
        "GenGap BLEU",
        "PairLeak@0.85",
        "near",
        "far",
        "training corpus",
        *(["cluster", "ranks"] if tied else []),
        *(["MQM"] if human else []),
    ]
    body = []
    for rank, r in enumerate(rows, 1):
        flag = " ≠" if r.get("coverage_differs") else ""
        body.append(
            [
                rank,
                Raw(link(run_href(r["run_id"]), r["run_id"], "mono")),
                run_label(r) + flag,
                fmt_interval(
                    r["composite_score"], r["composite_ci_lower"], r["composite_ci_upper"], 4
                ),
                _tier(r["quality_tier"]),
                fmt(r["cost_adjusted"], 4),
                fmt_interval(r["chrf_plus_plus"], r["chrf_ci_lower"], r["chrf_ci_upper"]),
                fmt(r["corpus_bleu"]),
                fmt(r["tm_bleu"]),
                fmt(r["delta_tm_bleu"]),
                fmt(r["gengap_chrf"]),
                fmt(r["gengap_bleu"]),
                fmt_share(r["pairleak_085"]),
                fmt_share(r["near_share"]),
                fmt_share(r["far_share"]),
                r["train_corpus"] or "no audit",
                *([_tie(r), _ranks(r)] if tied else []),
                *([fmt(r.get("human_mqm"), 3)] if human else []),
            ]
        )
    mqm = (len(columns) - 1,) if human else ()
    return table(columns, body, numeric=(0, 3, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, *mqm))


def _replicate_table(groups: Sequence[ReplicateGroup], run_href: Callable[[str], str]) -> str:
    """A test set's replicate groups: mean ± sd [segment-and-seed interval] per metric."""
    if not groups:
        return ""

    def cell(group: ReplicateGroup, metric: str, digits: int) -> str:
        score = group.scores.get(metric)
        return score.text(digits) if score is not None else "n/a"

    s = groups[0].settings
    rows = [
        [f"{g.model_slug}/{g.condition}" if g.condition else g.model_slug, g.label, len(g.run_ids),
         cell(g, "chrf_plus_plus", 2), cell(g, "bleu", 2), cell(g, "exact_match_rate", 3),
         Raw(" ".join(link(run_href(r), r[:8], "mono") for r in g.run_ids))]
        for g in groups
    ]  # fmt: skip
    return (
        '<h3 class="replicates">Replicate groups</h3><p class="note">Runs repeating one '
        "configuration: mean ± standard deviation across replicates [interval counting segment "
        f"and seed noise; n = {s.n_bootstrap:,}, seed = {s.seed}].</p>"
        + table(["model/condition", "replicate", "runs", "chrF++", "BLEU", "exact match", "ids"],
                rows, numeric=(2,))
    )  # fmt: skip


def _tie(row: dict[str, Any]) -> str:
    """A stored cluster with its metric: `1 (chrF++)`."""
    if row.get("tie_cluster") is None:
        return ""
    return f"{row['tie_cluster']} ({label(row['tie_metric'])})"


def _ranks(row: dict[str, Any]) -> str:
    """A stored rank range: `3` or `2-5`."""
    best, worst = row.get("tie_best_rank"), row.get("tie_worst_rank")
    if best is None:
        return ""
    return str(best) if best == worst else f"{best}-{worst}"


def index_page(
    board: Sequence[dict[str, Any]],
    test_sets: Sequence[CorpusInfo],
    comparisons: Sequence[ComparePair],
    *,
    train_rule: str,
    run_href: Callable[[str], str],
    testset_href: Callable[[CorpusInfo], str],
    models: Sequence[tuple[str, str, int]] = (),
    replicates: Sequence[ReplicateGroup] = (),
) -> str:
    """The index: one leaderboard per test set, then the comparisons asked for and the models
    over time (slug, page, runs)."""
    by_test: dict[str, list[dict[str, Any]]] = {}
    for row in board:
        by_test.setdefault(row["test_corpus_id"], []).append(row)
    parts = [
        f'<p class="note">{len(board)} runs on {len(test_sets)} test sets. Composite with its '
        "bootstrap interval (whiskers), tier, cost-adjusted score and exposure columns; "
        f"{esc(train_rule)}. ≠: the composite uses a different set of metrics than most runs "
        "(not comparable). cluster, ranks: stored tie groups (<code>tame-wh leaderboard "
        "--clusters --store</code>), shown while the test set holds the same runs.</p>"
    ]
    if not board:
        parts.append(
            '<p class="empty" id="no-runs">There are no runs in this warehouse yet. Ingest one '
            "with <code>tame-wh ingest</code> (or load the example with "
            "<code>tame-wh demo</code>) and build the dashboard again.</p>"
        )
    for n, info in enumerate(test_sets):
        rows = by_test.get(info.corpus_id, [])
        heading = f"<h2>{link(testset_href(info), info.name)}</h2>"
        if not rows:
            parts.append(
                f'<section class="testset">{heading}'
                '<p class="empty">No runs on this test set.</p></section>'
            )
            continue
        trains = sorted({r["train_corpus"] for r in rows if r["train_corpus"]})
        exposure = (
            f"exposure columns against training corpus {', '.join(trains)}"
            if trains
            else "no audit: exposure columns are empty"
        )
        chart_rows = [
            {
                "label": f"{run_label(r)} ({r['run_id'][:8]})",
                "rank": rank,
                "composite": r["composite_score"],
                "lower": r["composite_ci_lower"],
                "upper": r["composite_ci_upper"],
                "tier": r["quality_tier"] or "unscored",
            }
            for rank, r in enumerate(rows[:BOARD_CHART_RUNS], 1)
            if r["composite_score"] is not None
        ]
        shown = (
            f"the best {BOARD_CHART_RUNS} of {len(rows)} runs"
            if len(rows) > BOARD_CHART_RUNS
            else f"{len(rows)} runs"
        )
        chart = (
            f'<p class="note">Composite of {esc(shown)}, whiskers: bootstrap interval.</p>'
            + chart_block(f"chart-board-{n}", "board", {"board": chart_rows})
            if chart_rows
            else '<p class="empty">No run has a composite score.</p>'
        )
        groups = [g for g in replicates if g.test_corpus_id == info.corpus_id]
        parts.append(
            f'<section class="testset">{heading}<p class="note">{esc(exposure)}</p>'
            f"{chart}{_board_table(rows, run_href)}{_replicate_table(groups, run_href)}</section>"
        )
    if comparisons:
        items = "".join(
            f"<li>{link(c.href, f'{c.label_a} vs {c.label_b}')}</li>" for c in comparisons
        )
        parts.append(f'<section id="comparisons"><h2>Comparisons</h2><ul>{items}</ul></section>')
    if models:
        items = "".join(f"<li>{link(href, f'{slug} ({n} runs)')}</li>" for slug, href, n in models)
        parts.append(f'<section id="models"><h2>Models over time</h2><ul>{items}</ul></section>')
    return page("tame-wh dashboard", "\n".join(parts), assets=Assets("assets/"))


def _audit_section(
    n: int, audit: AuditResult, created: str, histogram: list[dict[str, Any]]
) -> str:
    """One audit of a test set: summary, warnings, exposure histograms and bins."""
    sides = table(
        ["side", "mean", "median", "p05", "p95", "max", "exact"]
        + [f">= {t}" for t in audit.sides[0]["at_or_above"]],
        [
            [
                s["side"],
                fmt(s["mean"], 3),
                fmt(s["median"], 3),
                fmt(s["p05"], 3),
                fmt(s["p95"], 3),
                fmt(s["max"], 3),
                fmt_share(s["exact_share"]),
                *(fmt_share(v) for v in s["at_or_above"].values()),
            ]
            for s in audit.sides
        ],
        numeric=tuple(range(1, 10)),
    )
    by = binned_side(audit.side)
    bins = table(
        ["bin", "n", "share", f"mean {by} exposure"],
        [
            [b["bin"], b["n_segments"], fmt_share(b["share"]), fmt(b[f"mean_{by}_exposure"], 3)]
            for b in audit.bins
        ],
        numeric=(1, 2, 3),
    )
    warnings = (
        '<ul class="warnings">' + "".join(f"<li>{esc(w)}</li>" for w in audit.warnings) + "</ul>"
        if audit.warnings
        else ""
    )
    info = fields(
        [
            ("audit id", Raw(f'<span class="mono">{esc(audit.audit_id)}</span>')),
            ("training corpus", f"{audit.train_corpus} ({audit.n_train} pairs)"),
            ("mode", audit.mode),
            ("created", created),
            ("signature", Raw(f'<span class="mono">{esc(audit.signature)}</span>')),
        ]
    )
    return (
        f'<section class="audit"><h3>against {esc(audit.train_corpus)} ({esc(audit.mode)})</h3>'
        f"{info}{warnings}"
        + chart_block(f"chart-exposure-{n}", "exposure", {"exposure": histogram})
        + f'<div class="row">{sides}{bins}</div></section>'
    )


def testset_page(
    info: CorpusInfo,
    audits: Sequence[tuple[AuditResult, str]],
    histograms: dict[str, list[dict[str, Any]]],
    runs: Sequence[dict[str, Any]],
    *,
    run_href: Callable[[str], str],
    human_href: str | None = None,
) -> str:
    """A test set: what it holds, its audits with exposure distributions, its runs, and a link
    to its human judgments when it has some."""
    about = fields(
        [
            ("corpus id", Raw(f'<span class="mono">{esc(info.corpus_id)}</span>')),
            ("languages", f"{info.src_lang or '?'} → {info.tgt_lang or '?'}"),
            ("segments", info.n_segments),
            ("references per segment", info.n_refs),
            ("added", info.added_at),
        ]
    )
    if audits:
        audit_html = "".join(
            _audit_section(n, audit, created, histograms.get(audit.audit_id, []))
            for n, (audit, created) in enumerate(audits)
        )
    else:
        audit_html = (
            '<p class="empty" id="no-audit">no audit: this test set was never audited against '
            "a training corpus (run <code>tame-wh audit --train NAME --testset "
            f"{esc(info.name)}</code>).</p>"
        )
    if runs:
        run_html = table(
            ["run", "model/condition", "composite", "tier", "chrF++", "BLEU", "created"],
            [
                [
                    Raw(link(run_href(r["run_id"]), r["run_id"], "mono")),
                    run_label(r),
                    fmt(r["composite_score"], 4),
                    _tier(r["quality_tier"]),
                    fmt(r["chrf_plus_plus"]),
                    fmt(r["corpus_bleu"]),
                    str(r["created_at"]),
                ]
                for r in runs
            ],
            numeric=(2, 4, 5),
        )
    else:
        run_html = '<p class="empty">No runs on this test set.</p>'
    body = (
        f'<section id="about"><h2>Test set</h2>{about}</section>'
        f'<section id="audits"><h2>Audits</h2>{audit_html}</section>'
        f'<section id="runs"><h2>Runs</h2>{run_html}</section>'
    )
    if human_href is not None:
        body += (
            f'<section id="human"><h2>Human judgments</h2><p>'
            f"{link(human_href, 'metric-human agreement, error categories, judged segments')}"
            "</p></section>"
        )
    nav = f"<nav>{link('../index.html', 'dashboard')}</nav>"
    return page(f"test set {info.name}", body, assets=Assets("../assets/"), nav=nav)


def _num(metric: str, value: float | None) -> str:
    """A score: two decimals on the 0-100 scale, four otherwise."""
    return fmt(value, score_digits(metric))


def compare_page(
    pair: ComparePair,
    comparison: Comparison,
    bins_a: Sequence[dict[str, Any]],
    bins_b: Sequence[dict[str, Any]],
    *,
    bins_note: str | None,
    run_href: Callable[[str], str],
) -> str:
    """Two runs: side-by-side scores, the paired significance table and per-bin deltas."""
    runs = fields(
        [
            ("A", Raw(link(run_href(pair.run_a), f"{pair.label_a} ({pair.run_a})"))),
            ("B", Raw(link(run_href(pair.run_b), f"{pair.label_b} ({pair.run_b})"))),
            ("common segments", comparison.n_segments),
        ]
    )
    side = table(
        ["metric", "A", "B", "A - B"],
        [
            [
                label(r.metric),
                _num(r.metric, r.values[0]),
                _num(r.metric, r.values[1]),
                _num(r.metric, r.deltas[0]),
            ]
            for r in comparison.rows
        ],
        numeric=(1, 2, 3),
    )
    settings = comparison.settings
    test = comparison.pairs[0] if comparison.pairs else None
    if test is not None and settings is not None:
        head = (
            f"{comparison.method} test, {settings.n_bootstrap} resamples, alpha "
            f"{settings.alpha}, seed {settings.seed}, n = {test.n_segments}"
        )
        below = [r for r in test.results if r.below_mde and r.mde is not None]
        note = (
            '<p class="note" id="below-mde">'
            + esc(
                "; ".join(f"{label(r.metric_name)}: |Δ| is below the minimum detectable difference "
                          f"{_num(r.metric_name, r.mde)}" for r in below)
                + " (80% power): this test set cannot tell differences this small apart."
            )
            + "</p>"
            if below
            else ""
        )  # fmt: skip
        significance = f'<p class="note">{esc(head)}</p>' + table(
            ["metric", "A", "B", "Δ (A - B)", "interval of Δ", "p-value", "significant", "winner",
             "MDE"],
            [
                [
                    label(r.metric_name),
                    _num(r.metric_name, r.system_a_score),
                    _num(r.metric_name, r.system_b_score),
                    _num(r.metric_name, r.delta),
                    f"[{_num(r.metric_name, r.ci_lower)}, {_num(r.metric_name, r.ci_upper)}]",
                    fmt(r.p_value, 4),
                    "yes" if r.significant else "no",
                    r.winner or "-",
                    "" if r.mde is None else _num(r.metric_name, r.mde),
                ]
                for r in test.results
            ],
            numeric=(1, 2, 3, 5, 8),
            table_id="significance",
        ) + note  # fmt: skip
    else:
        significance = '<p class="empty">No paired test was run.</p>'
    warnings = [*comparison.warnings, *(test.warnings if test else [])]
    warning_html = (
        '<ul class="warnings">' + "".join(f"<li>{esc(w)}</li>" for w in warnings) + "</ul>"
        if warnings
        else ""
    )
    if bins_note is not None:
        bins_html = f'<p class="empty">{esc(bins_note)}</p>'
    else:
        by_bin = {b["bin"]: b for b in bins_b}
        rows, chart_rows = [], []
        for a in sorted(bins_a, key=lambda b: BIN_ORDER.index(b["bin"])):
            b = by_bin.get(a["bin"], {})
            row: list[Any] = [a["bin"], a["n_segments"]]
            for metric, key in (("chrF++", "chrf_plus_plus"), ("BLEU", "bleu")):
                va, vb = a.get(key), b.get(key)
                delta = None if va is None or vb is None else va - vb
                row += [fmt(va), fmt(vb), fmt(delta)]
                chart_rows.append(
                    {
                        "bin": a["bin"],
                        "metric": metric,
                        "a": va,
                        "b": vb,
                        "delta": delta,
                        "n": a["n_segments"],
                    }
                )
            rows.append(row)
        bins_html = chart_block("chart-deltas", "deltas", {"deltas": chart_rows}) + table(
            ["bin", "n", "chrF++ A", "chrF++ B", "Δ chrF++", "BLEU A", "BLEU B", "Δ BLEU"],
            rows,
            numeric=tuple(range(1, 8)),
        )
    body = (
        f'<section id="runs"><h2>Runs</h2>{runs}{warning_html}</section>'
        f'<section id="side-by-side"><h2>Scores on the common segments</h2>{side}</section>'
        f'<section id="paired"><h2>Paired significance</h2>{significance}</section>'
        f'<section id="bin-deltas"><h2>Per-bin deltas (A - B)</h2>{bins_html}</section>'
    )
    nav = f"<nav>{link('../index.html', 'dashboard')}</nav>"
    return page(f"{pair.label_a} vs {pair.label_b}", body, assets=Assets("../assets/"), nav=nav)

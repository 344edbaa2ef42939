"""The dashboard page of one model (docs/html.md): each metric over time with the stored
interval bands, one series per test set and condition, and the regressions marked."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from warehouse.analysis.trends import TREND_STEPS, ModelTrend
from warehouse.html.charts import chart_block
from warehouse.html.layout import Assets, page
from warehouse.html.markup import Raw, esc, fmt, fmt_interval, link, table
from warehouse.metrics.registry import label

# (chart label, leaderboard column, interval columns)
_METRICS = (
    ("chrF++", "chrf_plus_plus", "chrf_ci_lower", "chrf_ci_upper"),
    ("BLEU", "corpus_bleu", "bleu_ci_lower", "bleu_ci_upper"),
    ("composite", "composite_score", "composite_ci_lower", "composite_ci_upper"),
)
_REGRESSION_LABELS = {"chrf_plus_plus": "chrF++", "bleu": "BLEU", "exact_match_rate": "exact match"}


def _series(row: dict[str, Any]) -> str:
    """A run's series: its test set and condition."""
    return f"{row['test_set']} / {row['condition']}" if row["condition"] else row["test_set"]


def _points(trend: ModelTrend) -> list[dict[str, Any]]:
    """The chart's rows: one per run and metric."""
    out = []
    for row in trend.runs:
        regressed = {_REGRESSION_LABELS.get(m, m) for m in trend.regressed.get(row["run_id"], [])}
        for name, column, lower, upper in _METRICS:
            if row[column] is None:
                continue
            out.append({
                "run": row["run_id"], "series": _series(row), "metric": name,
                "created": str(row["created_at"]), "score": row[column], "lower": row[lower],
                "upper": row[upper], "regressed": name in regressed,
            })  # fmt: skip
    return out


def trend_page(trend: ModelTrend, *, run_href: Callable[[str], str]) -> str:
    """The page of one model."""
    chart = chart_block("chart-trend", "trend", {"trend": _points(trend)})
    runs = table(
        ["created", "run", "test set", "condition", "chrF++ [interval]", "BLEU", "composite",
         "regressed on"],
        [[str(r["created_at"])[:19], Raw(link(run_href(r["run_id"]), r["run_id"], "mono")),
          r["test_set"], r["condition"],
          fmt_interval(r["chrf_plus_plus"], r["chrf_ci_lower"], r["chrf_ci_upper"]),
          fmt(r["corpus_bleu"]), fmt(r["composite_score"], 4),
          ", ".join(label(m) for m in trend.regressed.get(r["run_id"], []))]
         for r in reversed(trend.runs)],
        numeric=(5, 6),
        table_id="trend-runs",
    )  # fmt: skip
    note = (
        f'<p class="note">{len(trend.runs)} runs; bands: each run\'s stored bootstrap interval; '
        "▼: a significant drop against the previous run of the same test set and condition (the "
        f"sign test of <code>tame-wh regressions</code>, the newest {TREND_STEPS} steps of each "
        f"series; {trend.tested} tested).</p>"
    )
    body = (
        f'<section id="trend"><h2>{esc(trend.model_slug)} over time</h2>{note}{chart}</section>'
        f'<section id="runs"><h2>Runs, newest first</h2>{runs}</section>'
    )
    nav = f"<nav>{link('../index.html', 'dashboard')}</nav>"
    return page(f"model {trend.model_slug}", body, assets=Assets("../assets/"), nav=nav)

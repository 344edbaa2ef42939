"""What the dashboard's human-judgment page of a test set shows (docs/html.md): metric-human
agreement, error categories per run, and the segments on which the judged systems differ most,
each hypothesis with its annotated error spans."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import duckdb

from warehouse.analysis.meta import MetaReport, metric_human_agreement
from warehouse.stats.resample import BootstrapSettings
from warehouse.store.corpora import CorpusInfo

DRILL_DOWN_SEGMENTS = 30  # segments shown with every system's hypothesis and spans


@dataclass
class HumanPageData:
    """One test set's judgments as the page shows them (its newest judgment set)."""

    set_name: str
    scheme: str
    report: MetaReport | None  # None: fewer judged runs than agreement needs
    note: str | None
    categories: list[dict[str, Any]] = field(default_factory=list)
    segments: list[dict[str, Any]] = field(default_factory=list)


def _newest_set(con: duckdb.DuckDBPyConnection, corpus_id: str) -> tuple[str, str, str] | None:
    row = con.execute(
        "SELECT set_id, name, scheme FROM human_sets WHERE test_corpus_id = ? "
        "ORDER BY added_at DESC, set_id LIMIT 1",
        [corpus_id],
    ).fetchone()
    return (str(row[0]), str(row[1]), str(row[2])) if row else None


def _categories(con: duckdb.DuckDBPyConnection, set_id: str) -> list[dict[str, Any]]:
    cursor = con.execute(
        "SELECT r.model_slug, r.condition, e.run_id, e.category, e.severity, e.n_errors, e.weight, "
        "e.weight_per_segment FROM human_error_categories e JOIN runs r USING (run_id) "
        "WHERE e.set_id = ? ORDER BY r.model_slug, e.run_id, e.weight DESC, e.category",
        [set_id],
    )
    names = [d[0] for d in cursor.description or ()]
    return [dict(zip(names, row, strict=True)) for row in cursor.fetchall()]


def _segments(con: duckdb.DuckDBPyConnection, set_id: str) -> list[dict[str, Any]]:
    """The segments whose judged systems' human scores spread most, in test-set order, each with
    every judged hypothesis, its score and its errors."""
    rows = con.execute(
        "WITH spread AS (SELECT seg_idx, max(score) - min(score) AS spread "
        "FROM human_segment_scores WHERE set_id = ? GROUP BY seg_idx "
        "ORDER BY spread DESC, seg_idx LIMIT ?) "
        "SELECT g.seg_idx, s.seg_key, s.src, s.refs[1], r.model_slug, r.condition, g.run_id, "
        "h.hyp, g.score, g.n_raters FROM spread p JOIN human_segment_scores g "
        "ON g.set_id = ? AND g.seg_idx = p.seg_idx JOIN runs r USING (run_id) "
        "JOIN segments s ON s.corpus_id = r.test_corpus_id AND s.seg_idx = g.seg_idx "
        "JOIN hypotheses h ON h.run_id = g.run_id AND h.seg_idx = g.seg_idx "
        "ORDER BY g.seg_idx, g.score, r.model_slug",
        [set_id, DRILL_DOWN_SEGMENTS, set_id],
    ).fetchall()
    errors: dict[tuple[str, int], list[dict[str, Any]]] = {}
    for run_id, seg_idx, rater, category, severity, start, end, weight in con.execute(
        "SELECT e.run_id, e.seg_idx, e.rater, e.category, e.severity, e.span_start, e.span_end, "
        "e.weight FROM human_error_weights e WHERE e.set_id = ? "
        "AND e.seg_idx IN (SELECT unnest(?)) ORDER BY e.error_idx",
        [set_id, sorted({row[0] for row in rows})],  # the segments chosen above
    ).fetchall():
        errors.setdefault((run_id, seg_idx), []).append(
            {"rater": rater, "category": category, "severity": severity, "start": start,
             "end": end, "weight": weight}
        )  # fmt: skip
    segments: dict[int, dict[str, Any]] = {}
    for seg_idx, key, src, ref, slug, condition, run_id, hyp, score, n_raters in rows:
        segment = segments.setdefault(
            seg_idx, {"seg_idx": seg_idx, "seg_key": key, "source": src, "reference": ref,
                      "systems": []}
        )  # fmt: skip
        segment["systems"].append(
            {"run_id": run_id, "label": f"{slug}/{condition}" if condition else slug, "hyp": hyp,
             "score": score, "n_raters": n_raters, "errors": errors.get((run_id, seg_idx), [])}
        )  # fmt: skip
    return list(segments.values())


def human_page_data(
    con: duckdb.DuckDBPyConnection, info: CorpusInfo, settings: BootstrapSettings
) -> HumanPageData | None:
    """The page of a test set's newest judgment set; None when it has none."""
    newest = _newest_set(con, info.corpus_id)
    if newest is None:
        return None
    set_id, name, scheme = newest
    report: MetaReport | None = None
    note = None
    n_runs = con.execute(
        "SELECT count(DISTINCT run_id) FROM human_judgments WHERE set_id = ?", [set_id]
    ).fetchone()
    if n_runs is not None and n_runs[0] >= 3:
        report = metric_human_agreement(con, info.name, human=set_id, settings=settings)
    else:
        note = "agreement needs judgments of at least 3 runs"
    return HumanPageData(name, scheme, report, note, _categories(con, set_id),
                         _segments(con, set_id))  # fmt: skip

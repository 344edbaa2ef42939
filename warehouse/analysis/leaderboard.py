"""The leaderboard: one row per run from the `leaderboard` view, sorted and flagged for coverage."""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import asdict
from typing import Any

import duckdb
import numpy as np

from warehouse.analysis.bins import runs_bin_intervals
from warehouse.basics import grouped, rows_as_dicts
from warehouse.errors import UsageError
from warehouse.exposure.config import EXPOSURE_BINS, MEASURES
from warehouse.metrics.options import DEFAULT_OPTIONS, MetricOptions
from warehouse.metrics.plugins import signed_direction
from warehouse.metrics.registry import BLEU, CHRF, HUMAN_METRICS, SORT_KEYS
from warehouse.metrics.surface import without_version
from warehouse.stats.resample import bootstrap_settings, percentile_interval, resample_indices
from warehouse.store.corpora import get_corpus

TRAIN_RULE = (
    "exposure columns use each test set's exact audit against its largest audited training "
    "corpus (--train NAME picks another)"
)


def leaderboard(
    con: duckdb.DuckDBPyConnection,
    *,
    testset: str | None = None,
    sort: str = "composite",
    limit: int | None = None,
    train: str | None = None,
    tags: dict[str, str] | None = None,
    bin_name: str | None = None,
    options: MetricOptions | None = None,
    plugin_metrics: Sequence[str] = (),
    bin_by: str | None = None,
    exclude_tags: Sequence[tuple[str, str | None]] = (),
) -> list[dict[str, Any]]:
    """Leaderboard rows, best first by `sort` (NULLs last), each with a `coverage_differs` flag
    (its composite uses other metrics than most runs of its test set) and intervals of its human
    scores (`human_mqm_ci_lower`, …).

    Exposure columns refer to the training corpus named in each row's `train_corpus`: `train`
    when given, else the largest training corpus audited for the row's test set (TRAIN_RULE),
    from an audit by the measure `bin_by` when given (else Jaccard before containment).
    Only runs carrying every tag in `tags` are listed, and none carrying a tag of
    `exclude_tags` (a key with any value when its value is None). With `bin_name`, the runs
    are ranked by chrF++ on that exposure bin instead (`rank_by_bin`), `limit` applied after.
    The runs are those as ingested; with `options`, the runs (as ingested or re-scored) whose
    statistics were computed under those metric options; with `plugin_metrics`, those (under
    `options`, else the default ones) scored by those metric plugins, each row with
    `plugin_metrics` (the mean of each), ranked by the first.
    """
    if sort not in SORT_KEYS:
        raise UsageError(f"--sort: expected one of {', '.join(SORT_KEYS)}, got {sort!r}")
    if limit is not None and limit < 1:
        raise UsageError("--limit must be at least 1")
    if testset is not None:
        get_corpus(con, testset, "test")  # unknown names are usage errors
    if train is not None:
        get_corpus(con, train, "train")
    if bin_by is not None and bin_by not in MEASURES:
        raise UsageError(f"--bin-by: expected one of {', '.join(MEASURES)}, got {bin_by!r}")
    wanted = tags or {}
    column, descending = SORT_KEYS[sort]  # never interpolated from user input
    direction = "DESC" if descending else "ASC"
    chosen = None
    if options is not None or plugin_metrics:
        chosen = scored_under(con, options or DEFAULT_OPTIONS, plugin_metrics)
    cursor = con.execute(
        f"SELECT * FROM leaderboard_by(?, ?) WHERE (? IS NULL OR test_set = ?) "
        f"AND CASE WHEN ? THEN list_contains(?, run_id) ELSE rescored_from IS NULL END "
        f"AND (SELECT count(*) FROM (SELECT unnest(?) AS k, unnest(?) AS v) w "
        f"     WHERE map_extract_value(tags, w.k) = w.v) = ? "
        f"AND NOT EXISTS (SELECT 1 FROM (SELECT unnest(?) AS k, unnest(?) AS v) x "
        f"     WHERE list_contains(map_keys(tags), x.k) "
        f"     AND (x.v IS NULL OR map_extract_value(tags, x.k) = x.v)) "
        f"ORDER BY {column} {direction} NULLS LAST, run_id LIMIT ?",
        [
            train,
            bin_by,
            testset,
            testset,
            chosen is not None,
            chosen or [],
            list(wanted),
            list(wanted.values()),
            len(wanted),
            [k for k, _ in exclude_tags],
            [v for _, v in exclude_tags],
            limit if limit is not None and bin_name is None and not plugin_metrics else 2**62,
        ],
    )
    rows = rows_as_dicts(cursor)
    boards = grouped(rows, lambda r: r["test_corpus_id"])  # runs compare within a test set
    for runs in boards.values():
        usual = Counter(tuple(r["composite_metrics"] or ()) for r in runs).most_common(1)
        common = usual[0][0] if usual else ()
        for row in runs:
            row["coverage_differs"] = tuple(row["composite_metrics"] or ()) != common
    _mark_other_settings(con, rows, boards.values(), plugin_metrics)
    _human_intervals(con, rows)
    if plugin_metrics:
        rows = _by_plugin_metric(con, rows, plugin_metrics)[:limit]
    if bin_name is not None:
        rows = rank_by_bin(con, rows, bin_name)[:limit]
    return rows


def scored_under(
    con: duckdb.DuckDBPyConnection, options: MetricOptions, plugins: Sequence[str] = ()
) -> list[str]:
    """The runs (as ingested or re-scored) whose statistics were computed under `options`
    and that carry every metric of `plugins` (scored by a metric plugin, or ingested from
    their files): one per stored output (a run and its re-scorings), the one with the fewest
    other plugins, the run as ingested first."""
    wanted = None if options == DEFAULT_OPTIONS else asdict(options)
    carrying = {
        run_id
        for run_id, n in con.execute(
            "SELECT run_id, count(DISTINCT metric) FROM run_metric_values "
            "WHERE list_contains(?, metric) GROUP BY run_id",
            [list(plugins)],
        ).fetchall()
        if n == len(set(plugins))
    }
    rows = con.execute(
        "SELECT r.run_id, r.metric_settings, coalesce(s.source_run_id, r.run_id), "
        "s.source_run_id IS NOT NULL FROM runs r LEFT JOIN run_rescores s USING (run_id) "
        "ORDER BY r.run_id"
    ).fetchall()
    best: dict[str, tuple[int, bool, str]] = {}
    for run_id, text, lineage, rescored in rows:
        settings = json.loads(text or "{}")
        signed = settings.get("signatures") or {}
        if settings.get("options") != wanted or (plugins and run_id not in carrying):
            continue
        others = sum(
            1 for m, s in signed.items() if "|plugin-version:" in str(s) and m not in plugins
        )
        rank = (others, bool(rescored), run_id)
        if lineage not in best or rank < best[lineage]:
            best[lineage] = rank
    return sorted(rank[2] for rank in best.values())


def _by_plugin_metric(
    con: duckdb.DuckDBPyConnection, rows: list[dict[str, Any]], names: Sequence[str]
) -> list[dict[str, Any]]:
    """The rows with each plugin metric's run-level value (`plugin_metrics`), ranked by the
    first (in the direction its signature gives; NULLs last)."""
    values: dict[tuple[str, str], float] = {
        (run_id, metric): value
        for run_id, metric, value in con.execute(
            "SELECT run_id, metric, value FROM run_metric_values WHERE list_contains(?, run_id) "
            "AND list_contains(?, metric)",
            [[r["run_id"] for r in rows], list(names)],
        ).fetchall()
    }
    for row in rows:
        row["plugin_metrics"] = {n: values.get((row["run_id"], n)) for n in names}
    first = names[0]
    higher = all(signed_direction((r.get("metric_signatures") or {}).get(first)) for r in rows)
    scored = [r for r in rows if r["plugin_metrics"][first] is not None]
    scored.sort(key=lambda r: (-r["plugin_metrics"][first] if higher
                               else r["plugin_metrics"][first], r["run_id"]))  # fmt: skip
    return scored + [r for r in rows if r["plugin_metrics"][first] is None]


def rank_by_bin(
    con: duckdb.DuckDBPyConnection, rows: list[dict[str, Any]], bin_name: str
) -> list[dict[str, Any]]:
    """The rows re-ranked by chrF++ on one exposure bin of each row's audit (best first; runs
    without an audit or without segments in the bin last), each with a `bin` dict: segments,
    share, the system's, the TM's and system - TM chrF++ and BLEU with their intervals
    (segments resampled within the bin, the warehouse's bootstrap settings), and GenGap with its
    interval (docs/statistics.md, "Intervals per bin")."""
    if bin_name not in EXPOSURE_BINS:
        raise UsageError(f"--bin: expected one of {', '.join(EXPOSURE_BINS)}, got {bin_name!r}")
    audit_of = {r["run_id"]: r["audit_id"] for r in rows if r["audit_id"]}
    settings = bootstrap_settings(con, None, None, None)
    intervals = runs_bin_intervals(con, audit_of, settings) if audit_of else {}
    found = {
        run_id: dict(zip(("n_segments", "share", "chrf", "bleu", "tm_chrf", "tm_bleu", "delta_chrf",
                          "delta_bleu"), values, strict=True))
        for run_id, *values in con.execute(
            "WITH pairs AS (SELECT unnest(?) AS run_id, unnest(?) AS audit_id) "
            "SELECT b.run_id, b.n_segments, b.share, b.chrf_plus_plus, b.bleu, "
            "b.tm_chrf_plus_plus, b.tm_bleu, b.delta_chrf_plus_plus, b.delta_bleu "
            "FROM pairs p JOIN run_bins b USING (run_id, audit_id) WHERE b.bin = ?",
            [list(audit_of), list(audit_of.values()), bin_name],
        ).fetchall()
    }  # fmt: skip
    for row in rows:
        values = found.get(row["run_id"])
        ci = intervals.get(row["run_id"])
        if values is None:
            row["bin"] = None
            continue
        per_bin = ci.bins.get(bin_name, {}) if ci is not None else {}
        gengap = ci.gengap.get(CHRF, {}) if ci is not None else {}
        row["bin"] = {
            "bin": bin_name,
            "audit_id": row["audit_id"],
            "n_segments": values["n_segments"],
            "share": values["share"],
            "chrf_plus_plus": values["chrf"],
            "chrf_ci": _pair(per_bin.get(CHRF, {}).get("system")),
            "bleu": values["bleu"],
            "bleu_ci": _pair(per_bin.get(BLEU, {}).get("system")),
            "tm_chrf_plus_plus": values["tm_chrf"],
            "delta_tm_chrf_plus_plus": values["delta_chrf"],
            "delta_tm_chrf_ci": _pair(per_bin.get(CHRF, {}).get("delta")),
            "gengap_chrf": row["gengap_chrf"],
            "gengap_chrf_ci": _pair(gengap.get("system")),
        }
    ranked = sorted(
        rows,
        key=lambda r: (r["bin"] is None or r["bin"]["chrf_plus_plus"] is None,
                       -(r["bin"] or {}).get("chrf_plus_plus", 0.0) if r["bin"] else 0.0,
                       r["run_id"]),
    )  # fmt: skip
    return ranked


def _pair(interval: tuple[float, float] | None) -> list[float] | None:
    """An interval as a JSON pair."""
    return None if interval is None else [interval[0], interval[1]]


def _human_intervals(con: duckdb.DuckDBPyConnection, rows: list[dict[str, Any]]) -> None:
    """Each human score's percentile bootstrap interval (the run's judged segments resampled, at
    the warehouse's bootstrap settings) as `<column>_ci_lower` / `_ci_upper`."""
    for row in rows:
        for column in HUMAN_METRICS.values():
            row[f"{column}_ci_lower"] = row[f"{column}_ci_upper"] = None
    judged = [
        r["run_id"] for r in rows if any(r.get(c) is not None for c in HUMAN_METRICS.values())
    ]
    if not judged:
        return
    settings = bootstrap_settings(con, None, None, None)
    found = con.execute(
        "SELECT n.run_id, n.scheme, list(CASE WHEN n.scheme = 'da' THEN g.z ELSE g.score END "
        "ORDER BY g.seg_idx) FROM human_newest_sets n "
        "JOIN human_segment_scores g USING (set_id, run_id) "
        "WHERE n.run_id IN (SELECT unnest(?)) GROUP BY ALL",
        [judged],
    ).fetchall()
    by_run = {r["run_id"]: r for r in rows}
    for run_id, scheme, values in found:
        scores = np.array([v for v in values if v is not None], dtype=np.float64)
        if scores.size == 0:
            continue
        draws = scores[resample_indices(scores.size, settings.n_bootstrap, settings.seed)]
        interval = percentile_interval(draws.mean(axis=1), settings.alpha)
        if interval is not None:
            column = HUMAN_METRICS[scheme]
            by_run[run_id][f"{column}_ci_lower"], by_run[run_id][f"{column}_ci_upper"] = interval


# The leaderboard's columns with a signature: the surface metrics' (sacrebleu's) and the COMET
# score's (the model that scored it, declared by the imported file, docs/inputs.md).
SIGNED_COLUMNS = {
    "corpus_bleu": "bleu",
    "chrf_plus_plus": "chrf",
    "ter": "ter",
    "comet_score": "comet_score",
}


def _version_free(signature: str | None) -> str | None:
    """`without_version` of a signature, when there is one."""
    return None if signature is None else without_version(signature)


def _mark_other_settings(
    con: duckdb.DuckDBPyConnection,
    rows: list[dict[str, Any]],
    boards: Iterable[list[dict[str, Any]]],
    plugin_metrics: Sequence[str] = (),
) -> None:
    """Give each row `signature_differs`: the signed metrics (bleu, chrf, ter, comet_score and
    the plugin metrics asked for) it computed under other settings than most runs of its test
    set (chrF instead of chrF++, another tokenizer, lowercasing, another COMET model or plugin
    version, ...; with a tie, every run's), with `metric_signatures`, its signatures of them."""
    found = dict(
        con.execute(
            "SELECT run_id, metric_settings FROM runs WHERE list_contains(?, run_id)",
            [[r["run_id"] for r in rows]],
        ).fetchall()
    )
    for row in rows:
        settings = json.loads(found.get(row["run_id"]) or "{}")
        signatures = settings.get("signatures") or {}
        signed = [*SIGNED_COLUMNS.values(), *plugin_metrics]
        row["metric_signatures"] = {m: signatures.get(m) for m in signed}
        row["signature_differs"] = []
    for runs in boards:
        for metric in [*SIGNED_COLUMNS.values(), *plugin_metrics]:
            seen = [_version_free(r["metric_signatures"][metric]) for r in runs]
            counts = Counter(s for s in seen if s is not None).most_common()
            if len(counts) < 2:
                continue
            # The most common settings, unless tied: then no run's score is the board's.
            usual = counts[0][0] if counts[0][1] > counts[1][1] else None
            for row, signature in zip(runs, seen, strict=True):
                if signature is not None and signature != usual:
                    row["signature_differs"].append(metric)

"""The report of one run: quality, exposure, bins, GenGap, composite, cost, speed, warnings."""

from __future__ import annotations

import json
from typing import Any

import duckdb

from warehouse.analysis.leaderboard import TRAIN_RULE
from warehouse.analysis.runs import resolve_run, run_warnings
from warehouse.basics import rows_as_dicts
from warehouse.exposure.summary import choose_audit, load_audit
from warehouse.store.settings import read_settings

REPORT_FORMAT = 1


def _rows(con: duckdb.DuckDBPyConnection, sql: str, params: list[Any]) -> list[dict[str, Any]]:
    """Query rows as dicts."""
    return rows_as_dicts(con.execute(sql, params))


def _one(con: duckdb.DuckDBPyConnection, sql: str, params: list[Any]) -> dict[str, Any]:
    """The single row of a query, or an empty dict."""
    rows = _rows(con, sql, params)
    return rows[0] if rows else {}


def _run_header(con: duckdb.DuckDBPyConnection, run_id: str, test_set: str) -> dict[str, Any]:
    """The run's identity, CI metadata and error count (metric settings popped by the caller)."""
    run = _one(
        con,
        "SELECT run_id, model_slug, condition, test_corpus_id, created_at, ingested_at, "
        "n_entries, dataset_id, language_pair, fingerprint_hash, ci, metric_settings "
        "FROM runs WHERE run_id = ?",
        [run_id],
    )
    run["ci"] = json.loads(run["ci"]) if run["ci"] else None
    run["test_set"] = test_set
    run["n_errors"] = con.execute(
        "SELECT count(*) FROM hypotheses WHERE run_id = ? AND error IS NOT NULL", [run_id]
    ).fetchone()[0]  # type: ignore[index]
    return run


def _composite(con: duckdb.DuckDBPyConnection, run_id: str, tier: str | None) -> dict[str, Any]:
    """The composite, its profile and tier, and each input with its effective weight."""
    composite = _one(con, "SELECT * FROM run_composite WHERE run_id = ?", [run_id])
    weight_sum = sum(i["weight"] for i in composite.get("inputs") or [])
    inputs = [
        {**i, "effective_weight": i["weight"] / weight_sum} for i in composite.get("inputs") or []
    ]
    return {
        "profile": composite.get("profile"),
        "composite": composite.get("composite"),
        "quality_tier": tier,
        "inputs": inputs,
        "missing": composite.get("metrics_missing") or [],
    }


def _exposure(
    con: duckdb.DuckDBPyConnection, run_id: str, audit_id: str
) -> tuple[dict[str, Any], list[dict[str, Any]], dict[str, Any], list[str]]:
    """The audit's summary, the run's per-bin scores against the TM, GenGap and warnings."""
    audit = load_audit(con, audit_id, action="unchanged")
    exposure = {
        "audit_id": audit_id,
        "train_corpus": audit.train_corpus,
        "signature": audit.signature,
        "mode": audit.mode,
        "sides": audit.sides,
        "pair_leak": audit.pair_leak,
        "train_rule": None,
    }
    warnings = list(audit.warnings)
    bins = _rows(
        con,
        "SELECT bin, n_segments, share, mean_source_exposure, bleu, chrf_plus_plus, tm_bleu, "
        "tm_chrf_plus_plus, delta_bleu, delta_chrf_plus_plus FROM run_bins "
        "WHERE run_id = ? AND audit_id = ? ORDER BY bin_order",
        [run_id, audit_id],
    )
    gengap = _one(
        con,
        "SELECT gengap_bleu, gengap_chrf, tm_gengap_bleu, tm_gengap_chrf FROM run_exposure "
        "WHERE run_id = ? AND audit_id = ?",
        [run_id, audit_id],
    )
    tm_bleu, bleu = bins[0]["tm_bleu"], bins[0]["bleu"]
    limit = read_settings(con).get("warn.tm_bleu_ratio", 0.5)
    if bleu and tm_bleu is not None and tm_bleu >= limit * bleu:
        warnings.append(
            f"TM BLEU {tm_bleu:.2f} is {tm_bleu / bleu:.0%} of system BLEU {bleu:.2f} "
            f"(>= {limit:.0%}): copying the nearest training target does nearly as well"
        )
    return exposure, bins, gengap, warnings


def build_report(
    con: duckdb.DuckDBPyConnection, run_ref: str, *, train: str | None = None
) -> dict[str, Any]:
    """Everything known about one run, as a stable, versioned document."""
    run_id = resolve_run(con, run_ref)
    board = _one(con, "SELECT * FROM leaderboard WHERE run_id = ?", [run_id])
    run = _run_header(con, run_id, board["test_set"])
    settings = json.loads(run.pop("metric_settings") or "{}")
    audit_id = choose_audit(con, run["test_corpus_id"], train)
    exposure: dict[str, Any] | None = None
    bins: list[dict[str, Any]] = []
    gengap: dict[str, Any] | None = None
    if audit_id is not None:
        exposure, bins, gengap, warnings = _exposure(con, run_id, audit_id)
        exposure["train_rule"] = "given (--train)" if train is not None else TRAIN_RULE
    else:
        warnings = [
            "no exposure audit for this test set; run `tame-wh audit --train NAME "
            f"--testset {board['test_set']}` for bins, TM baseline and GenGap"
        ]
    return {
        "format": REPORT_FORMAT,
        "run": run,
        "quality": {
            "bleu": board["corpus_bleu"],
            "chrf_plus_plus": board["chrf_plus_plus"],
            "ter": board["ter"],
            "exact_match_rate": board["exact_match_rate"],
            "length_ratio": board["length_ratio"],
            "tm_bleu": _pick(bins, "tm_bleu"),
            "tm_chrf_plus_plus": _pick(bins, "tm_chrf_plus_plus"),
            "delta_tm_bleu": _pick(bins, "delta_bleu"),
            "delta_tm_chrf_plus_plus": _pick(bins, "delta_chrf_plus_plus"),
        },
        "metrics": _rows(
            con,
            "SELECT metric, value, source FROM run_metric_values WHERE run_id = ? ORDER BY metric",
            [run_id],
        ),
        "exposure": exposure,
        "bins": bins,
        "gengap": gengap,
        "composite": _composite(con, run_id, board["quality_tier"]),
        "cost": _one(con, "SELECT * EXCLUDE (run_id) FROM run_cost WHERE run_id = ?", [run_id]),
        "speed": _one(con, "SELECT * EXCLUDE (run_id) FROM run_speed WHERE run_id = ?", [run_id]),
        "breakdowns": _rows(
            con,
            "SELECT dimension, value, n_segments, bleu, chrf_plus_plus, ter, exact_match_rate "
            "FROM run_breakdowns WHERE run_id = ? ORDER BY dimension, value NULLS LAST",
            [run_id],
        ),
        "intervals": _rows(
            con,
            "SELECT metric, scope, estimate, ci_lower, ci_upper, n, n_bootstrap, alpha, seed "
            "FROM run_intervals WHERE run_id = ? ORDER BY scope, metric",
            [run_id],
        ),
        "warnings": [*run_warnings(con, run_id), *warnings],
        "signatures": settings.get("signatures", {}),
    }


def _pick(bins: list[dict[str, Any]], key: str) -> Any:
    """A value of the `all` bin, or None without an audit."""
    return bins[0][key] if bins else None

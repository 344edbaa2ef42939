"""The report document of a run: quality, exposure, bins, GenGap, composite, cost, speed,
warnings. One implementation serves one run (`build_report`, what `tame-wh report --json`
prints) and many at once (`build_reports`, for the dashboard): the views aggregate over every
run, so many documents are read in one query per view and split by run."""

from __future__ import annotations

import json
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import duckdb

from warehouse.analysis.bins import runs_bin_intervals
from warehouse.analysis.id_tables import id_table, registered
from warehouse.analysis.leaderboard import TRAIN_RULE
from warehouse.analysis.runs import resolve_run
from warehouse.basics import rows_as_dicts
from warehouse.exposure.summary import AuditResult, choose_audit, lens_comparison, load_audit
from warehouse.stats.resample import bootstrap_settings
from warehouse.store.settings import read_settings

REPORT_FORMAT = 1

_BIN_COLUMNS = (
    "bin, n_segments, share, mean_source_exposure, mean_target_exposure, bleu, chrf_plus_plus, "
    "tm_bleu, tm_chrf_plus_plus, delta_bleu, delta_chrf_plus_plus"
)
_RUNS_TABLE = "_tame_report_runs"
_AUDITS_TABLE = "_tame_report_audits"


@dataclass(frozen=True)
class _Selection:
    """The documents' runs in SQL: `runs` (a WHERE clause on run_id) and `bins` (what follows
    `FROM run_bins` to keep each run's rows of its audit), with their parameters."""

    runs: str
    runs_params: list[Any]
    bins: str
    bins_params: list[Any]


def build_report(
    con: duckdb.DuckDBPyConnection,
    run_ref: str,
    *,
    train: str | None = None,
    testset: str | None = None,
    bin_by: str | None = None,
) -> dict[str, Any]:
    """Everything known about one run (named on the test set `testset` when given), as a
    stable, versioned document, with bootstrap intervals of its exposure bins and GenGap; its
    exposure from the audit against `train` and by the measure `bin_by` when given."""
    run_id = resolve_run(con, run_ref, testset)
    board = rows_as_dicts(  # any run, re-scored ones too (the view lists runs as ingested)
        con.execute("SELECT * FROM leaderboard_for(NULL) WHERE run_id = ?", [run_id])
    )
    audit_id = choose_audit(con, board[0]["test_corpus_id"], train, bin_by)
    selection = _Selection(
        "WHERE run_id = ?", [run_id], "WHERE run_id = ? AND audit_id = ?", [run_id, audit_id]
    )
    rule = "given (--train)" if train is not None else TRAIN_RULE
    if bin_by is not None:
        rule += f"; by {bin_by} (--bin-by)"
    audit_of = {run_id: audit_id} if audit_id is not None else {}
    return _documents(con, board, audit_of, selection, rule)[run_id]


def build_reports(
    con: duckdb.DuckDBPyConnection, board: Sequence[dict[str, Any]]
) -> dict[str, dict[str, Any]]:
    """`build_report` without `train` of every run in `board` (leaderboard rows), by run id."""
    if not board:
        return {}
    audits = default_audits(con, [row["test_corpus_id"] for row in board])
    audit_of = {
        row["run_id"]: audits[row["test_corpus_id"]]
        for row in board
        if row["test_corpus_id"] in audits
    }
    selection = _Selection(
        f"WHERE run_id IN (SELECT run_id FROM {_RUNS_TABLE})",
        [],
        f"JOIN {_AUDITS_TABLE} USING (run_id, audit_id)",
        [],
    )
    runs = id_table(run_id=[row["run_id"] for row in board])
    pairs = id_table(run_id=list(audit_of), audit_id=list(audit_of.values()))
    with registered(con, _RUNS_TABLE, runs), registered(con, _AUDITS_TABLE, pairs):
        return _documents(con, board, audit_of, selection, TRAIN_RULE)


def _bin_intervals(
    con: duckdb.DuckDBPyConnection, audit_of: dict[str, str], run_ids: Sequence[str]
) -> dict[str, dict[str, Any] | None]:
    """Each run's bin and GenGap intervals against its audit (None without one), computed on
    demand with the warehouse's bootstrap settings."""
    found = runs_bin_intervals(
        con, {r: audit_of[r] for r in run_ids if r in audit_of}, bootstrap_settings(con)
    )
    return {
        run_id: (intervals.to_dict() if (intervals := found.get(run_id)) is not None else None)
        for run_id in run_ids
    }


def default_audits(
    con: duckdb.DuckDBPyConnection, test_corpus_ids: Sequence[str]
) -> dict[str, str]:
    """The audit each audited test set's exposure figures use without `--train`, by its id."""
    out: dict[str, str] = {}
    for test_corpus_id in dict.fromkeys(test_corpus_ids):
        audit_id = choose_audit(con, test_corpus_id, None)
        if audit_id is not None:
            out[test_corpus_id] = audit_id
    return out


def _grouped(
    con: duckdb.DuckDBPyConnection, sql: str, params: list[Any], key: str = "run_id"
) -> dict[str, list[dict[str, Any]]]:
    """Rows of a query as dicts, grouped by `key` (which is dropped from each row)."""
    out: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for row in rows_as_dicts(con.execute(sql, params)):
        out[row.pop(key)].append(row)
    return out


def _documents(
    con: duckdb.DuckDBPyConnection,
    board: Sequence[dict[str, Any]],
    audit_of: dict[str, str],
    selection: _Selection,
    train_rule: str,
) -> dict[str, dict[str, Any]]:
    """The document of each run of `board` (its leaderboard rows), read with `selection`, with
    exposure from the audit `audit_of` names for it."""
    where, params = selection.runs, selection.runs_params
    heads = _grouped(
        con,
        "SELECT run_id AS key, run_id, model_slug, condition, test_corpus_id, created_at, "
        "ingested_at, n_entries, dataset_id, language_pair, fingerprint_hash, ci, "
        f"metric_settings FROM runs {where}",
        params,
        key="key",
    )
    errors = dict(
        con.execute(
            f"SELECT run_id, count(*) FROM hypotheses {where} AND error IS NOT NULL "
            "GROUP BY run_id",
            params,
        ).fetchall()
    )
    summaries: dict[str, AuditResult] = {
        audit_id: load_audit(con, audit_id, action="unchanged")
        for audit_id in dict.fromkeys(audit_of.values())
    }
    lenses = {audit_id: lens_comparison(con, audit_id) for audit_id in summaries}
    bins = (
        _grouped(
            con,
            f"SELECT run_id, {_BIN_COLUMNS} FROM run_bins {selection.bins} "
            "ORDER BY run_id, bin_order",
            selection.bins_params,
        )
        if audit_of
        else {}
    )
    limit = read_settings(con).get("warn.tm_bleu_ratio", 0.5)
    tables = {
        "metrics": "SELECT run_id, metric, value, source FROM run_metric_values "
        f"{where} ORDER BY run_id, metric",
        "composite": f"SELECT * FROM run_composite {where}",
        "cost": f"SELECT * FROM run_cost {where}",
        "speed": f"SELECT * FROM run_speed {where}",
        "breakdowns": "SELECT run_id, dimension, value, n_segments, bleu, chrf_plus_plus, ter, "
        f"exact_match_rate FROM run_breakdowns {where} "
        "ORDER BY run_id, dimension, value NULLS LAST",
        "intervals": "SELECT run_id, metric, scope, estimate, ci_lower, ci_upper, n, "
        f"n_bootstrap, alpha, seed FROM run_intervals {where} ORDER BY run_id, scope, metric",
        "warnings": f"SELECT run_id, message FROM run_warnings {where} ORDER BY run_id, seq",
    }
    parts = {name: _grouped(con, sql, params) for name, sql in tables.items()}
    intervals = _bin_intervals(con, audit_of, [row["run_id"] for row in board])
    docs = {
        row["run_id"]: _document(
            row,
            heads[row["run_id"]][0],
            errors.get(row["run_id"], 0),
            summaries.get(audit_of.get(row["run_id"], "")),
            bins.get(row["run_id"], []),
            {name: rows.get(row["run_id"], []) for name, rows in parts.items()},
            limit,
            train_rule,
        )
        for row in board
    }
    for run_id, doc in docs.items():
        doc["bin_intervals"] = intervals[run_id]
        if doc["exposure"] is not None:
            doc["exposure"]["lenses"] = lenses[doc["exposure"]["audit_id"]]
    return docs


def gengap(bins: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """GenGap of a run from its bin rows, as the `run_exposure` view defines it."""
    # The score on `near` minus the score on `far`, for the system and the TM; None when either
    # bin is empty.
    by_bin = {b["bin"]: b for b in bins if b["n_segments"] > 0}
    near, far = by_bin.get("near"), by_bin.get("far")

    def gap(key: str) -> float | None:
        if near is None or far is None or near[key] is None or far[key] is None:
            return None
        return float(near[key] - far[key])

    return {
        "gengap_bleu": gap("bleu"),
        "gengap_chrf": gap("chrf_plus_plus"),
        "tm_gengap_bleu": gap("tm_bleu"),
        "tm_gengap_chrf": gap("tm_chrf_plus_plus"),
    }


def _document(
    board: dict[str, Any],
    run: dict[str, Any],
    n_errors: int,
    audit: AuditResult | None,
    bins: list[dict[str, Any]],
    parts: dict[str, list[dict[str, Any]]],
    tm_bleu_ratio: float,
    train_rule: str,
) -> dict[str, Any]:
    """One run's document from its rows."""
    run = dict(run)
    run["ci"] = json.loads(run["ci"]) if run["ci"] else None
    run["test_set"] = board["test_set"]
    run["n_errors"] = n_errors
    settings = json.loads(run.pop("metric_settings") or "{}")
    exposure: dict[str, Any] | None = None
    if audit is not None:
        exposure = {
            "audit_id": audit.audit_id,
            "train_corpus": audit.train_corpus,
            "signature": audit.signature,
            "mode": audit.mode,
            "side": audit.side,
            "sides": audit.sides,
            "pair_leak": audit.pair_leak,
            "train_rule": train_rule,
        }
        warnings = list(audit.warnings)
        tm_bleu, bleu = bins[0]["tm_bleu"], bins[0]["bleu"]
        if bleu and tm_bleu is not None and tm_bleu >= tm_bleu_ratio * bleu:
            warnings.append(
                f"TM BLEU {tm_bleu:.2f} is {tm_bleu / bleu:.0%} of system BLEU {bleu:.2f} "
                f"(>= {tm_bleu_ratio:.0%}): copying the nearest training target does nearly "
                "as well"
            )
    else:
        warnings = [
            "no exposure audit for this test set; run `tame-wh audit --train NAME "
            f"--testset {board['test_set']}` for bins, TM baseline and GenGap"
        ]
    composite = parts["composite"][0] if parts["composite"] else {}
    inputs = composite.get("inputs") or []
    weight_sum = sum(i["weight"] for i in inputs)
    first = bins[0] if bins else {}
    return {
        "format": REPORT_FORMAT,
        "run": run,
        "quality": {
            "bleu": board["corpus_bleu"],
            "chrf_plus_plus": board["chrf_plus_plus"],
            "ter": board["ter"],
            "exact_match_rate": board["exact_match_rate"],
            "length_ratio": board["length_ratio"],
            "tm_bleu": first.get("tm_bleu"),
            "tm_chrf_plus_plus": first.get("tm_chrf_plus_plus"),
            "delta_tm_bleu": first.get("delta_bleu"),
            "delta_tm_chrf_plus_plus": first.get("delta_chrf_plus_plus"),
        },
        "metrics": parts["metrics"],
        "exposure": exposure,
        "bins": bins,
        "gengap": gengap(bins) if audit is not None else None,
        "composite": {
            "profile": composite.get("profile"),
            "composite": composite.get("composite"),
            "quality_tier": board["quality_tier"],
            "inputs": [{**i, "effective_weight": i["weight"] / weight_sum} for i in inputs],
            "missing": composite.get("metrics_missing") or [],
        },
        "cost": parts["cost"][0] if parts["cost"] else {},
        "speed": parts["speed"][0] if parts["speed"] else {},
        "breakdowns": parts["breakdowns"],
        "intervals": parts["intervals"],
        "warnings": [*(w["message"] for w in parts["warnings"]), *warnings],
        "signatures": settings.get("signatures", {}),
        "tie_group": _tie_group(board),
        "human": {
            "mqm": board.get("human_mqm"),
            "esa": board.get("human_esa"),
            "da_z": board.get("human_da_z"),
        },
    }


def _tie_group(board: dict[str, Any]) -> dict[str, Any] | None:
    """The run's stored tie group (`leaderboard --clusters --store`), None when its test set has
    none that still holds exactly its runs."""
    if board.get("tie_cluster") is None:
        return None
    return {
        "metric": board["tie_metric"],
        "method": board["tie_method"],
        "correction": board["tie_correction"],
        "cluster": board["tie_cluster"],
        "rank_range": [board["tie_best_rank"], board["tie_worst_rank"]],
        "n_runs": board["tie_n_runs"],
    }

"""Report documents of many runs at once, equal to `build_report(con, run_id)` for each.

`build_report` asks the views about one run (about half a second on a warehouse of a thousand
runs, whose views aggregate over every run); a dashboard needs every run's document, so this
module asks each view once for all runs and splits the rows by run. Its output is pinned to
`build_report`'s by tests/html/test_documents.py.
"""

from __future__ import annotations

import json
from collections import defaultdict
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Any

import duckdb
import pyarrow as pa

from warehouse.analysis.leaderboard import TRAIN_RULE
from warehouse.analysis.report import REPORT_FORMAT
from warehouse.basics import rows_as_dicts
from warehouse.exposure.summary import AuditResult, load_audit
from warehouse.store.settings import read_settings

_BIN_COLUMNS = (
    "bin, n_segments, share, mean_source_exposure, bleu, chrf_plus_plus, tm_bleu, "
    "tm_chrf_plus_plus, delta_bleu, delta_chrf_plus_plus"
)


def _grouped(
    con: duckdb.DuckDBPyConnection, sql: str, params: list[Any], key: str = "run_id"
) -> dict[str, list[dict[str, Any]]]:
    """Rows of a query as dicts, grouped by `key` (which is dropped from each row)."""
    out: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for row in rows_as_dicts(con.execute(sql, params)):
        out[row.pop(key)].append(row)
    return out


@contextmanager
def registered(con: duckdb.DuckDBPyConnection, name: str, data: pa.Table) -> Iterator[None]:
    """`data` visible to queries on `con` as the table `name` while the block runs (long lists
    of ids are joined this way rather than passed as parameters, which convert value by value)."""
    con.register(name, data)
    try:
        yield
    finally:
        con.unregister(name)


def chosen_audits(con: duckdb.DuckDBPyConnection) -> dict[str, str]:
    """Each audited test set's default audit (`build_report`'s rule without --train): exact
    before fast, then the largest training corpus, then the newest."""
    rows = con.execute(
        "SELECT a.test_corpus_id, a.audit_id FROM audits a "
        "JOIN corpora tr ON tr.corpus_id = a.train_corpus_id "
        "QUALIFY row_number() OVER (PARTITION BY a.test_corpus_id ORDER BY a.mode = 'exact' DESC, "
        "tr.n_segments DESC, a.created_at DESC, a.audit_id) = 1"
    ).fetchall()
    return {test: audit for test, audit in rows}


def report_documents(
    con: duckdb.DuckDBPyConnection, board: Sequence[dict[str, Any]]
) -> dict[str, dict[str, Any]]:
    """The report document of every run in `board` (rows of the `leaderboard` view), by run id."""
    ids = [row["run_id"] for row in board]
    if not ids:
        return {}
    with registered(con, "_tame_html_runs", pa.table({"run_id": pa.array(ids, pa.string())})):
        return _documents(con, board)


def _documents(
    con: duckdb.DuckDBPyConnection, board: Sequence[dict[str, Any]]
) -> dict[str, dict[str, Any]]:
    """`report_documents` with the run ids registered as the table `_tame_html_runs`."""
    where = "WHERE run_id IN (SELECT run_id FROM _tame_html_runs)"
    heads = _grouped(
        con,
        "SELECT run_id AS key, run_id, model_slug, condition, test_corpus_id, created_at, "
        "ingested_at, n_entries, dataset_id, language_pair, fingerprint_hash, ci, "
        f"metric_settings FROM runs {where}",
        [],
        key="key",
    )
    errors = dict(
        con.execute(
            f"SELECT run_id, count(*) FROM hypotheses {where} AND error IS NOT NULL GROUP BY run_id"
        ).fetchall()
    )
    audits = chosen_audits(con)
    summaries: dict[str, AuditResult] = {
        audit_id: load_audit(con, audit_id, action="unchanged") for audit_id in audits.values()
    }
    pairs = [
        (row["run_id"], audits[heads[row["run_id"]][0]["test_corpus_id"]])
        for row in board
        if heads[row["run_id"]][0]["test_corpus_id"] in audits
    ]
    chosen = pa.table(
        {
            "run_id": pa.array([p[0] for p in pairs], pa.string()),
            "audit_id": pa.array([p[1] for p in pairs], pa.string()),
        }
    )
    join = "JOIN _tame_html_audits USING (run_id, audit_id)"
    with registered(con, "_tame_html_audits", chosen):
        bins = _grouped(
            con,
            f"SELECT run_id, {_BIN_COLUMNS} FROM run_bins {join} ORDER BY run_id, bin_order",
            [],
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
    parts = {name: _grouped(con, sql, []) for name, sql in tables.items()}
    audit_of = dict(pairs)
    return {
        row["run_id"]: _document(
            row,
            heads[row["run_id"]][0],
            errors.get(row["run_id"], 0),
            summaries.get(audit_of.get(row["run_id"], "")),
            bins.get(row["run_id"], []),
            {name: rows.get(row["run_id"], []) for name, rows in parts.items()},
            limit,
        )
        for row in board
    }


def gengap(bins: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """GenGap as the `run_exposure` view defines it, from a run's bin rows: the score on `near`
    minus the score on `far`, for the system and the TM; None when either bin is empty."""
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
) -> dict[str, Any]:
    """One run's document from its rows (the same steps as `build_report`)."""
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
            "sides": audit.sides,
            "pair_leak": audit.pair_leak,
            "train_rule": TRAIN_RULE,
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
    }

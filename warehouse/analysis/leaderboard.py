"""The leaderboard: one row per run from the `leaderboard` view, sorted and flagged for coverage."""

from __future__ import annotations

from collections import Counter
from typing import Any

import duckdb

from warehouse.errors import UsageError
from warehouse.store.corpora import get_corpus

# Sort keys users may name → (view column, descending?). Never interpolated from user input.
SORT_KEYS: dict[str, tuple[str, bool]] = {
    "composite": ("composite_score", True),
    "cost_adjusted": ("cost_adjusted", True),
    "chrf": ("chrf_plus_plus", True),
    "bleu": ("corpus_bleu", True),
    "ter": ("ter", False),
    "exact_match": ("exact_match_rate", True),
    "cost": ("cost_per_entry_usd", False),
    "latency": ("avg_latency_seconds", False),
    "gengap_bleu": ("gengap_bleu", False),
    "delta_tm_bleu": ("delta_tm_bleu", True),
    "created": ("created_at", True),
}


def leaderboard(
    con: duckdb.DuckDBPyConnection,
    *,
    testset: str | None = None,
    sort: str = "composite",
    limit: int | None = None,
) -> list[dict[str, Any]]:
    """Leaderboard rows, best first by `sort` (NULLs last), each with a `coverage_differs` flag."""
    if sort not in SORT_KEYS:
        raise UsageError(f"--sort: expected one of {', '.join(SORT_KEYS)}, got {sort!r}")
    if limit is not None and limit < 1:
        raise UsageError("--limit must be at least 1")
    if testset is not None:
        get_corpus(con, testset, "test")  # unknown names are usage errors
    column, descending = SORT_KEYS[sort]
    direction = "DESC" if descending else "ASC"
    cursor = con.execute(
        f"SELECT * FROM leaderboard WHERE ? IS NULL OR test_set = ? "
        f"ORDER BY {column} {direction} NULLS LAST, run_id LIMIT ?",
        [testset, testset, limit if limit is not None else 2**62],
    )
    names = [d[0] for d in cursor.description or []]
    rows = [dict(zip(names, row, strict=True)) for row in cursor.fetchall()]
    usual = Counter(tuple(r["composite_metrics"] or ()) for r in rows).most_common(1)
    common = usual[0][0] if usual else ()
    for row in rows:
        row["coverage_differs"] = tuple(row["composite_metrics"] or ()) != common
    return rows

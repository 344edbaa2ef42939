"""The leaderboard: one row per run from the `leaderboard` view, sorted and flagged for coverage."""

from __future__ import annotations

from collections import Counter
from typing import Any

import duckdb

from warehouse.basics import rows_as_dicts
from warehouse.errors import UsageError
from warehouse.metrics.registry import SORT_KEYS
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
) -> list[dict[str, Any]]:
    """Leaderboard rows, best first by `sort` (NULLs last), each with a `coverage_differs` flag.

    Exposure columns refer to the training corpus named in each row's `train_corpus`: `train`
    when given, else the largest training corpus audited for the row's test set (TRAIN_RULE).
    Only runs carrying every tag in `tags` are listed.
    """
    if sort not in SORT_KEYS:
        raise UsageError(f"--sort: expected one of {', '.join(SORT_KEYS)}, got {sort!r}")
    if limit is not None and limit < 1:
        raise UsageError("--limit must be at least 1")
    if testset is not None:
        get_corpus(con, testset, "test")  # unknown names are usage errors
    if train is not None:
        get_corpus(con, train, "train")
    wanted = tags or {}
    column, descending = SORT_KEYS[sort]  # never interpolated from user input
    direction = "DESC" if descending else "ASC"
    cursor = con.execute(
        f"SELECT * FROM leaderboard_for(?) WHERE (? IS NULL OR test_set = ?) "
        f"AND (SELECT count(*) FROM (SELECT unnest(?) AS k, unnest(?) AS v) w "
        f"     WHERE map_extract_value(tags, w.k) = w.v) = ? "
        f"ORDER BY {column} {direction} NULLS LAST, run_id LIMIT ?",
        [
            train,
            testset,
            testset,
            list(wanted),
            list(wanted.values()),
            len(wanted),
            limit if limit is not None else 2**62,
        ],
    )
    rows = rows_as_dicts(cursor)
    usual = Counter(tuple(r["composite_metrics"] or ()) for r in rows).most_common(1)
    common = usual[0][0] if usual else ()
    for row in rows:
        row["coverage_differs"] = tuple(row["composite_metrics"] or ()) != common
    return rows
